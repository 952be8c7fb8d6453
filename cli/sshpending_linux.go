//go:build linux

package cli

import (
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// unread is how many bytes c's peer has sent that the server has not read yet (SIOCINQ,
// as FIONREAD): a client's key exchange counts as sent the moment it arrives, however late a
// loaded server's handshake goroutine reads it.
func unread(c net.Conn) int64 {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return 0
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return 0
	}
	var n int
	if rc.Control(func(fd uintptr) { n, err = unix.IoctlGetInt(int(fd), unix.SIOCINQ) }) != nil || err != nil {
		return 0
	}
	return int64(n)
}
