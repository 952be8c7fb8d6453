package natsweep

import (
	"strings"
	"testing"
)

// Credentials in a NATS URL are never shown.
func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"nats://alice:s3cretPW@10.0.0.5:4222": "nats://alice:xxxxx@10.0.0.5:4222",
		"nats://t0ken@host:4222":              "nats://xxxxx@host:4222",
		"tls://a:b@h1:4222,nats://c:d@h2":     "tls://a:xxxxx@h1:4222,nats://c:xxxxx@h2",
		"nats://10.0.0.5:4222":                "nats://10.0.0.5:4222",
		"alice:pw@host:4222":                  "alice:xxxxx@host:4222",
		"nats://u:p@ss@host":                  "nats://u:xxxxx@host",
		"builtin:toolagent":                   "builtin:toolagent",
	} {
		if got := Redact(in); got != want || strings.Contains(got, "s3cret") {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

// A URL the parser refuses is named redacted, whatever the parser quotes: a bad escape, a
// space, ":" or "/" in the password, a bad port, a control character, a token.
func TestURLErrorsNeverPrintThePassword(t *testing.T) {
	for _, u := range []string{
		"nats://u:p%zzSECRET@127.0.0.1:4222",
		"nats://u:pa ssSECRET@127.0.0.1:4222",
		"nats://u:p:SECRET@127.0.0.1:1",
		"nats://u:p/SECRET@127.0.0.1:4222",
		"nats://u:p?SECRET@127.0.0.1:4222",
		"nats://u:p#SECRET@127.0.0.1:4222",
		"nats://u:SECRET@127.0.0.1:99999",
		"nats://u:SECRET@127.0.0.1:4x22",
		"nats://u:SE\x01CRET@127.0.0.1:4222",
		"nats://u:SE\x7fCRET@127.0.0.1:4222",
		"nats://SECRET%zz@127.0.0.1:4222",
		"nats://127.0.0.1:1,nats://u:p%zzSECRET@h:4222",
		"u:p%zzSECRET@127.0.0.1:4222",
		"nats://u:SECRET@[::1:4222",
	} {
		_, _, err := Conn{URL: u}.dial("test", t.Logf)
		if err == nil {
			t.Errorf("%q: connected", u)
			continue
		}
		msg := err.Error()
		if strings.Contains(msg, "SECRET") || strings.Contains(msg, "SE\\x01") || strings.Contains(msg, "CRET") || strings.Contains(msg, "p/S") {
			t.Errorf("%q: the error prints the password: %s", u, msg)
		}
		if !strings.Contains(msg, "xxxxx") {
			t.Errorf("%q: the error does not name the redacted URL: %s", u, msg)
		}
	}
}
