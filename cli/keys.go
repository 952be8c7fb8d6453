package cli

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"

	gossh "golang.org/x/crypto/ssh"
)

// keyring is the set of public keys of one authorized_keys-format file.
type keyring map[string]bool // key.Marshal() as string

// loadKeyring reads an authorized_keys-format file; a line that is not a key is an error
// naming the file and line, so a typo never silently locks someone out (or in).
func loadKeyring(path string) (keyring, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseKeyring(f, path)
}

// parseKeyring parses authorized_keys text: one key a line, blank lines and # comments
// ignored, options before the key type accepted (and not enforced).
func parseKeyring(r io.Reader, name string) (keyring, error) {
	keys := keyring{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for line := 1; sc.Scan(); line++ {
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 || text[0] == '#' {
			continue
		}
		k, _, _, rest, err := gossh.ParseAuthorizedKey(text)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: not a public key: %w", name, line, err)
		}
		if len(bytes.TrimSpace(rest)) > 0 {
			return nil, fmt.Errorf("%s:%d: one key per line, found more after the first", name, line)
		}
		keys[string(k.Marshal())] = true
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("%s: no keys in the file", name)
	}
	return keys, nil
}

func (k keyring) has(key gossh.PublicKey) bool { return key != nil && k[string(key.Marshal())] }

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

// roleOf returns the role of a key, false for an unknown key. A key listed as both is a
// viewer: the narrower grant wins.
func (a access) roleOf(key gossh.PublicKey) (role, bool) {
	switch {
	case a.operators == nil && a.viewers == nil:
		return operator, true
	case a.viewers.has(key):
		return viewer, true
	case a.operators.has(key):
		return operator, true
	}
	return "", false
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
