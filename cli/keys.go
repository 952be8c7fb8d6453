package cli

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"github.com/routerlab/routerlab/internal/readlimit"
	"io"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"time"

	gossh "golang.org/x/crypto/ssh"
)

// keyring is the set of public keys of one authorized_keys-format file, with each key's
// options.
type keyring map[string]*authorizedKey // key.Marshal() as string

// authorizedKey is one line of an authorized_keys file: where it is and the OpenSSH options
// routerlab honours (sshd(8) AUTHORIZED_KEYS FILE FORMAT).
type authorizedKey struct {
	where   string    // file:line, for logs
	from    []string  // from="pattern-list": client addresses allowed (nil: any)
	expires time.Time // expiry-time=: not after this (zero: never)
	noPTY   bool      // no-pty, or restrict without pty: no terminal, so no explorer
	command string    // command=: the key may run only this, which routerlab cannot serve
	// unsupported names an option routerlab does not implement: the key is refused rather
	// than let in without the restriction its owner wrote.
	unsupported string
}

// maxKeyringBytes bounds an authorized_keys file: 16 MiB is some 30,000 keys with options.
const maxKeyringBytes = 16 << 20

// loadKeyring reads an authorized_keys-format file; a line that is not a key is an error
// naming the file and line, so a typo never silently locks someone out (or in).
func loadKeyring(path string) (keyring, error) {
	f, err := readlimit.Open(path, maxKeyringBytes, "an authorized_keys file")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseKeyring(f, path)
}

// parseKeyring parses authorized_keys text: one key a line, blank lines and # comments
// ignored, a leading UTF-8 byte-order mark skipped, options before the key type read (see
// authorizedKey; a malformed option value is an error naming the line).
func parseKeyring(r io.Reader, name string) (keyring, error) {
	keys := keyring{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	line := 1
	for ; sc.Scan(); line++ {
		text := sc.Bytes()
		if line == 1 {
			text = bytes.TrimPrefix(text, []byte("\ufeff"))
		}
		text = bytes.TrimSpace(text)
		if len(text) == 0 || text[0] == '#' {
			continue
		}
		k, _, options, rest, err := gossh.ParseAuthorizedKey(text)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: not a public key: %w", name, line, err)
		}
		if len(bytes.TrimSpace(rest)) > 0 {
			return nil, fmt.Errorf("%s:%d: one key per line, found more after the first", name, line)
		}
		ak, err := parseKeyOptions(options)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		ak.where = fmt.Sprintf("%s:%d", name, line)
		keys[string(k.Marshal())] = ak
	}
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		return nil, fmt.Errorf("%s:%d: a line longer than the 1 MiB limit of an authorized_keys line", name, line)
	} else if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("%s: no keys in the file", name)
	}
	return keys, nil
}

// parseKeyOptions reads a key's options as OpenSSH's sshauthopt_parse does
// (openssh-portable auth-options.c v1.102 and misc.c v1.215, commit 0ef0f5a8): names are
// matched without regard to case; a value is double-quoted and \" is its only escape (no
// \x2c or \n: a backslash before anything else is itself); a second from= or command= is an
// error, as is a from= pattern sshd calls invalid criteria (see fromPatterns). One rule is
// stricter than sshd's: no-pty anywhere on the line denies a terminal (sshd lets a later pty
// undo it). Options that only loosen or restrict forwarding are honoured by routerlab never
// forwarding anything.
func parseKeyOptions(options []string) (*authorizedKey, error) {
	ak := &authorizedKey{}
	sawNoPTY := false
	for _, opt := range options {
		name, val, hasVal := strings.Cut(opt, "=")
		lower := strings.ToLower(name)
		if hasVal {
			v, err := dequoteOption(val)
			if err != nil {
				return nil, fmt.Errorf("option %s: %w", name, err)
			}
			val = v
		}
		valued := lower == "from" || lower == "expiry-time" || lower == "command" || lower == "permitopen" ||
			lower == "permitlisten" || lower == "environment" || lower == "principals" || lower == "tunnel"
		if valued != hasVal {
			if valued {
				return nil, fmt.Errorf("option %s: want a double-quoted value", name)
			}
			return nil, fmt.Errorf("option %s takes no value", name)
		}
		switch lower {
		case "from":
			if ak.from != nil {
				return nil, fmt.Errorf(`option from: given twice (sshd refuses a line with multiple "from" clauses)`)
			}
			pats, err := fromPatterns(val)
			if err != nil {
				return nil, fmt.Errorf("option from=%q: %w", val, err)
			}
			ak.from = pats
		case "expiry-time":
			t, err := parseExpiry(val)
			if err != nil {
				return nil, err
			}
			if ak.expires.IsZero() || t.Before(ak.expires) { // sshd keeps the earliest
				ak.expires = t
			}
		case "restrict":
			ak.noPTY = true
		case "no-pty":
			ak.noPTY, sawNoPTY = true, true
		case "pty":
			ak.noPTY = false
		case "command":
			if ak.command != "" {
				return nil, fmt.Errorf(`option command: given twice (sshd refuses a line with multiple "command" clauses)`)
			}
			ak.command = val
		case "no-port-forwarding", "no-agent-forwarding", "no-x11-forwarding", "no-user-rc", "port-forwarding",
			"agent-forwarding", "x11-forwarding", "user-rc", "permitopen", "permitlisten", "no-touch-required":
		default:
			if ak.unsupported == "" {
				ak.unsupported = name
			}
		}
	}
	if sawNoPTY {
		ak.noPTY = true
	}
	return ak, nil
}

// dequoteOption reads an option value as sshd's opt_dequote: "…" with \" standing for a
// quote and every other character, a backslash included, taken as it is.
func dequoteOption(v string) (string, error) {
	if len(v) < 2 || v[0] != '"' {
		return "", fmt.Errorf("want a double-quoted value, got %s", v)
	}
	var b strings.Builder
	for i := 1; i < len(v); i++ {
		switch {
		case v[i] == '\\' && i+1 < len(v) && v[i+1] == '"':
			b.WriteByte('"')
			i++
		case v[i] == '"':
			if i != len(v)-1 {
				return "", fmt.Errorf("text after the closing quote: %s", v)
			}
			return b.String(), nil
		default:
			b.WriteByte(v[i])
		}
	}
	return "", fmt.Errorf("missing end quote: %s", v)
}

// fromPatterns splits a from= pattern-list and checks each entry as sshd's addr_match_list
// does (openssh-portable addrmatch.c v1.19, addr.c addr_pton_cidr): an empty entry, or an
// address/mask with a bad mask length or host bits set ("127.0.0.1/8"), is invalid, which
// sshd answers by denying the key; routerlab refuses the line so the mistake is seen. An
// entry with "/" that is not an address/mask matches nothing in sshd (it falls back to a
// wildcard an address never contains), so it is refused too.
func fromPatterns(list string) ([]string, error) {
	pats := strings.Split(list, ",")
	for _, p := range pats {
		body := strings.TrimPrefix(p, "!")
		if body == "" {
			return nil, fmt.Errorf("an empty entry")
		}
		if !strings.Contains(body, "/") {
			continue
		}
		prefix, err := netip.ParsePrefix(body)
		if err != nil {
			return nil, fmt.Errorf("%s is not an address/mask-length", body)
		}
		if prefix.Masked().Addr() != prefix.Addr() {
			return nil, fmt.Errorf("%s has host bits set beyond its /%d mask (did you mean %s?)", body, prefix.Bits(), prefix.Masked())
		}
	}
	return pats, nil
}

// parseExpiry reads expiry-time="YYYYMMDD[HHMM[SS]]" in local time, or UTC with a Z suffix,
// as sshd does.
func parseExpiry(s string) (time.Time, error) {
	loc := time.Local
	if t, ok := strings.CutSuffix(s, "Z"); ok {
		s, loc = t, time.UTC
	}
	for _, layout := range []string{"20060102", "200601021504", "20060102150405"} {
		if len(s) == len(layout) {
			if t, err := time.ParseInLocation(layout, s, loc); err == nil {
				return t, nil
			}
		}
	}
	return time.Time{}, fmt.Errorf("option expiry-time: %q is not YYYYMMDD[HHMM[SS]][Z]", s)
}

// allows says whether the key may log in from ip now, and if not, why.
func (ak *authorizedKey) allows(ip net.IP, now time.Time) (string, bool) {
	switch {
	case ak.unsupported != "":
		return "option " + ak.unsupported + " is not supported by routerlab", false
	case !ak.expires.IsZero() && now.After(ak.expires):
		return "key expired at " + ak.expires.Format(time.RFC3339), false
	case ak.from != nil && !matchFrom(ak.from, ip):
		return "from=\"" + strings.Join(ak.from, ",") + "\" does not allow " + ip.String(), false
	}
	return "", true
}

// sessionRefusal says why a session of this key cannot have the explorer, or "".
func (ak *authorizedKey) sessionRefusal() string {
	switch {
	case ak.command != "":
		return fmt.Sprintf("this key may only run the command %q (command= in %s); routerlab serves only its explorer", ak.command, ak.where)
	case ak.noPTY:
		return fmt.Sprintf("this key may not have a terminal (no-pty or restrict in %s); routerlab's explorer needs one", ak.where)
	}
	return ""
}

// matchFrom matches ip against an OpenSSH pattern-list as from= does (checked by
// fromPatterns): addresses with * and ? wildcards or address/mask blocks, each optionally
// negated with !; any negated match refuses, else any plain match allows. Host names are
// not looked up (sshd's UseDNS no, its default).
func matchFrom(patterns []string, ip net.IP) bool {
	addr, _ := netip.AddrFromSlice(ip)
	addr = addr.Unmap()
	allowed := false
	for _, p := range patterns {
		neg := strings.HasPrefix(p, "!")
		p = strings.TrimPrefix(p, "!")
		var hit bool
		if prefix, err := netip.ParsePrefix(p); err == nil {
			hit = prefix.Contains(addr)
		} else if exact, err := netip.ParseAddr(p); err == nil {
			hit = exact.Unmap() == addr
		} else {
			hit = wildcard(p, addr.String())
		}
		if hit && neg {
			return false
		}
		allowed = allowed || hit
	}
	return allowed
}

// wildcard matches s against a pattern of literal characters, * (any run) and ? (one).
func wildcard(p, s string) bool {
	if p == "" {
		return s == ""
	}
	switch p[0] {
	case '*':
		for i := 0; i <= len(s); i++ {
			if wildcard(p[1:], s[i:]) {
				return true
			}
		}
		return false
	case '?':
		return s != "" && wildcard(p[1:], s[1:])
	}
	return s != "" && p[0] == s[0] && wildcard(p[1:], s[1:])
}

func (k keyring) get(key gossh.PublicKey) *authorizedKey {
	if key == nil {
		return nil
	}
	return k[string(key.Marshal())]
}

// role is what an SSH session may do with the server's sweeps.
type role string

const (
	operator role = "operator" // full explorer: starts and cancels server sweeps
	viewer   role = "viewer"   // browses and watches; cannot start or cancel sweeps
)

// access decides who gets in and with which role. With neither keyring (--no-auth) every
// connection is an operator.
type access struct {
	operators, viewers keyring
}

// roleOf returns the role of a key and its line (nil without keyrings), false for an
// unknown key. A key listed as both is a viewer: the narrower grant wins.
func (a access) roleOf(key gossh.PublicKey) (role, *authorizedKey, bool) {
	switch {
	case a.operators == nil && a.viewers == nil:
		return operator, nil, true
	case a.viewers.get(key) != nil:
		return viewer, a.viewers.get(key), true
	case a.operators.get(key) != nil:
		return operator, a.operators.get(key), true
	}
	return "", nil, false
}

// fingerprint is the key's SHA256 fingerprint as ssh-keygen -l prints it.
func fingerprint(key gossh.PublicKey) string {
	if key == nil {
		return "none"
	}
	return gossh.FingerprintSHA256(key)
}

// defaultAuthorizedKeys is ~/.ssh/authorized_keys.
func defaultAuthorizedKeys() string {
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".ssh", "authorized_keys")
}
