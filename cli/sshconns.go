package cli

import (
	"net"
	"sync"
	"sync/atomic"
	"time"

	"charm.land/log/v2"
	"charm.land/ssh"
)

// connLimits keeps unauthenticated connections apart from sessions, so a flood of idle
// sockets never locks an authorised user out. An unauthenticated connection takes one of
// maxPre slots, at most perAddr of them per client address; when either is full, the new
// connection takes the place of an unauthenticated one, which is closed: the one that has sent
// the least (victim), from its own address, or from the address holding the most. A flood can only displace itself, and a real
// client, which authenticates in milliseconds, always gets its turn. An authenticated
// connection moves to one of maxSessions session slots; none free refuses it.
type connLimits struct {
	maxPre, perAddr, maxSessions int
	logger                       *log.Logger

	mu       sync.Mutex
	pre      map[string][]*limitedConn // unauthenticated, by client address, oldest first
	npre     int
	sessions int
}

// limitedConn is one connection under the limits; closing it frees its slot.
type limitedConn struct {
	net.Conn
	lim    *connLimits
	ip     string
	opened time.Time
	sent   atomic.Int64 // bytes the client has sent
	state  connState    // guarded by lim.mu
}

// Read counts what the client sent.
func (c *limitedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.sent.Add(int64(n))
	}
	return n, err
}

// victim is the connection of conns (oldest first) to give way: the one that has sent the
// least, the oldest of those, where a connection in its first settleTime counts as having
// sent at least settleBytes (it may not have been read yet). A silent socket goes first; then
// one that sent its version and stalled (about 20 bytes) before a real client, which sends
// its key exchange (about 1 KB) right after its version. A
// churning flood from the client's own address thus displaces itself, where displacing the
// oldest made a real client fail 5 of 10 times (docs/trust.md).
func victim(conns []*limitedConn, now time.Time) *limitedConn {
	sent := func(c *limitedConn) int64 {
		if now.Sub(c.opened) < settleTime {
			return max(c.sent.Load(), settleBytes)
		}
		return c.sent.Load()
	}
	least := conns[0]
	for _, c := range conns[1:] {
		if sent(c) < sent(least) {
			least = c
		}
	}
	return least
}

// settleTime is how long a new connection is credited settleBytes, more than a version line
// (at most 255 bytes, RFC 4253 4.2) and less than any key exchange message: a real client's
// version and key exchange (Go's about 1 KB, OpenSSH's about 1.5 KB) are read well within it.
const (
	settleTime  = 250 * time.Millisecond
	settleBytes = 256
)

type connState int

const (
	connPre connState = iota
	connSession
	connGone
)

type connKey struct{}

func newConnLimits(maxPre, perAddr, maxSessions int, logger *log.Logger) *connLimits {
	return &connLimits{maxPre: maxPre, perAddr: perAddr, maxSessions: maxSessions, logger: logger, pre: map[string][]*limitedConn{}}
}

// listener admits each connection as it is accepted, in the order the clients connected.
// Admitting from the server's per-connection goroutines instead would let connections of a
// flood that were accepted before a real client be admitted after it, in whatever order the
// goroutines run, and push the client out as the oldest silent one before it is read.
func (l *connLimits) listener(inner net.Listener) net.Listener {
	return limitedListener{Listener: inner, lim: l}
}

type limitedListener struct {
	net.Listener
	lim *connLimits
}

func (ll limitedListener) Accept() (net.Conn, error) {
	c, err := ll.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return ll.lim.admit(c), nil
}

// option hands each admitted connection to its session's context (for promote) and installs
// the connection log lines on the server.
func (l *connLimits) option() ssh.Option {
	return func(s *ssh.Server) error {
		s.ConnCallback = func(ctx ssh.Context, c net.Conn) net.Conn {
			if lc, ok := c.(*limitedConn); ok {
				ctx.SetValue(connKey{}, lc)
			}
			return c
		}
		s.ConnectionFailedCallback = func(c net.Conn, err error) {
			l.logger.Warn("handshake failed", "remote", c.RemoteAddr(), "err", err)
		}
		s.ConnectionCloseCallback = func(c net.Conn) {
			l.logger.Info("connection closed", "remote", c.RemoteAddr())
		}
		return nil
	}
}

// admit takes an unauthenticated slot for c, displacing the oldest unauthenticated
// connection when the limits are reached.
func (l *connLimits) admit(c net.Conn) *limitedConn {
	ip := c.RemoteAddr().String()
	if a, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		ip = a.IP.String()
	}
	now := time.Now()
	lc := &limitedConn{Conn: c, lim: l, ip: ip, opened: now}
	l.mu.Lock()
	var drop *limitedConn
	why := ""
	switch {
	case len(l.pre[ip]) >= l.perAddr:
		drop, why = victim(l.pre[ip], now), "unauthenticated connections from this address at the limit"
	case l.npre >= l.maxPre:
		busiest := ""
		for addr, conns := range l.pre {
			if busiest == "" || len(conns) > len(l.pre[busiest]) || (len(conns) == len(l.pre[busiest]) && addr < busiest) {
				busiest = addr
			}
		}
		drop, why = victim(l.pre[busiest], now), "unauthenticated connections at the limit"
	}
	if drop != nil {
		l.dropLocked(drop)
	}
	l.pre[ip] = append(l.pre[ip], lc)
	l.npre++
	l.mu.Unlock()
	l.logger.Info("connection opened", "remote", c.RemoteAddr())
	if drop != nil {
		l.logger.Warn("connection dropped: "+why+"; the one that has sent least gives way", "remote", drop.RemoteAddr(),
			"max_unauthenticated", l.maxPre, "per_address", l.perAddr)
		drop.Conn.Close()
	}
	return lc
}

// dropLocked takes c out of the unauthenticated slots; l.mu is held.
func (l *connLimits) dropLocked(c *limitedConn) {
	conns := l.pre[c.ip]
	for i, x := range conns {
		if x == c {
			conns = append(conns[:i:i], conns[i+1:]...)
			break
		}
	}
	if len(conns) == 0 {
		delete(l.pre, c.ip)
	} else {
		l.pre[c.ip] = conns
	}
	l.npre--
	c.state = connGone
}

// promote moves the connection of ctx to a session slot once it has authenticated; false
// when every session slot is taken (or the connection is gone). Calling it again is a no-op.
func (l *connLimits) promote(ctx ssh.Context) bool {
	lc, ok := ctx.Value(connKey{}).(*limitedConn)
	if !ok {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case lc.state == connSession:
		return true
	case lc.state == connGone || l.sessions >= l.maxSessions:
		return false
	}
	l.dropLocked(lc)
	lc.state = connSession
	l.sessions++
	return true
}

// Close frees the connection's slot, once.
func (c *limitedConn) Close() error {
	l := c.lim
	l.mu.Lock()
	switch c.state {
	case connPre:
		l.dropLocked(c)
	case connSession:
		l.sessions--
		c.state = connGone
	}
	l.mu.Unlock()
	return c.Conn.Close()
}
