package natsweep

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// secrets are the credentials of a NATS URL list (each part's text between "://" and its
// last "@", password and token alike), as Redact finds them, and the forms a parser's
// message may quote them in.
func secrets(urls string) []string {
	var out []string
	for _, p := range strings.Split(urls, ",") {
		start, at, ok := userinfo(p)
		if !ok {
			continue
		}
		info := p[start:at]
		if _, pw, ok := strings.Cut(info, ":"); ok {
			info = pw
		}
		if info == "" {
			continue
		}
		quoted := strconv.Quote(info)
		out = append(out, info, quoted[1:len(quoted)-1])
		if u, err := url.PathUnescape(info); err == nil {
			out = append(out, u)
		}
	}
	return out
}

// checkURLs parses each URL of the list as the NATS client will, and words a failure from
// the redacted URL only: a parser quotes the text it refuses ("parse \"nats://u:p%zz…\"",
// "invalid port \":p\" after host" when a password holds a "/"), which would print the
// password.
func checkURLs(urls string) error {
	for _, p := range strings.Split(urls, ",") {
		p = strings.TrimSpace(p)
		shown := Redact(p)
		if !strings.Contains(p, "://") {
			p, shown = "nats://"+p, "nats://"+shown
		}
		if _, err := url.Parse(p); err == nil {
			continue
		}
		if _, err := url.Parse(shown); err != nil {
			var ue *url.Error
			if errors.As(err, &ue) {
				err = ue.Err // its Op and URL repeat the text: the message names it once
			}
			return fmt.Errorf("nats: URL %s: %v", shown, scrub(err.Error(), p))
		}
		return fmt.Errorf("nats: URL %s: the user or password is not valid in a URL (percent-encode %%, space, /, ?, # and control characters, e.g. %%2F for /)", shown)
	}
	return nil
}

// scrub removes every credential of urls from msg, whatever quoted it: the last line of
// defence for messages of libraries that print what they were given.
func scrub(msg, urls string) string {
	for _, s := range secrets(urls) {
		if s != "" {
			msg = strings.ReplaceAll(msg, s, "xxxxx")
		}
	}
	return msg
}
