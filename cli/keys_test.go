package cli

import (
	"net"
	"strings"
	"testing"
	"time"
)

const testPubKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGc5Pn3Ksk8SAFpB7PfrBpL4fz0w5Ax7UTLOYn4kZ4Ti"

// oneKey parses an authorized_keys line of the test key with these options.
func oneKey(t *testing.T, options string) (*authorizedKey, error) {
	t.Helper()
	ring, err := parseKeyring(strings.NewReader(options+" "+testPubKey+"\n"), "keys")
	if err != nil {
		return nil, err
	}
	for _, ak := range ring {
		return ak, nil
	}
	t.Fatal("no key")
	return nil, nil
}

// Options read as sshd reads them (openssh-portable auth-options.c v1.102, misc.c
// opt_flag/opt_dequote, addr.c addr_pton_cidr): names in any case, no escape but \" in a
// value, a second from= or command= refused, host bits in an address/mask refused.
func TestKeyOptionsAsSSHD(t *testing.T) {
	local := net.ParseIP("127.0.0.1")
	for _, c := range []struct {
		options   string
		noPTY     bool
		fromLocal bool // from= (or none) admits 127.0.0.1
	}{
		{`pty,NO-PTY`, true, true},
		{`No-Pty`, true, true},
		{`RESTRICT`, true, true},
		{`restrict,PTY`, false, true},
		{`pty,restrict`, true, true},
		{`no-pty,pty`, true, true}, // stricter than sshd: no-pty anywhere denies
		{`from="10.0.0.1\x2c127.0.0.1"`, false, false},
		{`from="10.0.0.1\u002c127.0.0.1"`, false, false},
		{`FROM="127.0.0.1"`, false, true},
		{`from="127.0.0.0/8"`, false, true},
		{`from="10.0.0.0/8,!127.0.0.1"`, false, false},
		{`from="::1,127.0.0.*"`, false, true},
		{`from="127.0.0.1/32"`, false, true},
	} {
		ak, err := oneKey(t, c.options)
		if err != nil {
			t.Errorf("%s: %v", c.options, err)
			continue
		}
		if ak.noPTY != c.noPTY {
			t.Errorf("%s: no pty %v, want %v", c.options, ak.noPTY, c.noPTY)
		}
		if _, ok := ak.allows(local, time.Now()); ok != c.fromLocal {
			t.Errorf("%s: admits 127.0.0.1 %v, want %v", c.options, ok, c.fromLocal)
		}
	}
	for options, want := range map[string]string{
		`from="10.0.0.1",from="127.0.0.1"`:  `option from: given twice`,
		`from="127.0.0.1",FROM="127.0.0.1"`: `option from: given twice`,
		`from="127.0.0.1/8"`:                `127.0.0.1/8 has host bits set beyond its /8 mask (did you mean 127.0.0.0/8?)`,
		`from="10.0.0.0/33"`:                `10.0.0.0/33 is not an address/mask-length`,
		`from="10.0.0.1,,127.0.0.1"`:        `an empty entry`,
		`from="!"`:                          `an empty entry`,
		`command="a",command="b"`:           `option command: given twice`,
		`from=127.0.0.1`:                    `want a double-quoted value`,
		`from`:                              `option from: want a double-quoted value`,
		`no-pty="x"`:                        `option no-pty takes no value`,
		`from="10.0.0.1"x`:                  `text after the closing quote`,
	} {
		_, err := oneKey(t, options)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), "keys:1: ") {
			t.Errorf("%s: %v, want keys:1: …%s", options, err, want)
		}
	}
	ak, err := oneKey(t, `expiry-time="29991231",expiry-time="20200101"`)
	if err != nil || ak.expires.Year() != 2020 {
		t.Errorf("two expiry-times: %v %v, want the earlier (sshd's rule)", ak.expires, err)
	}
	ak, err = oneKey(t, `command="say \"hi\" \n"`)
	if err != nil || ak.command != `say "hi" \n` {
		t.Errorf("command with \\\" and \\n: %q %v", ak.command, err)
	}
}
