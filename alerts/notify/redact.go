package notify

import (
	"encoding/base64"
	"errors"
	"net/url"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/jobtriage/jobtriage/triage/redact"
)

const redacted = "[redacted]"

// RedactURL shows a URL as scheme://host/… so logs say where a request went
// without the token in its path, query or user info.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return "[redacted URL]"
	}
	return u.Scheme + "://" + u.Host + "/…"
}

// newEndpoint checks the URL of notifier (what names it in errors) without
// ever echoing it.
func newEndpoint(notifier, what, raw string) (endpoint, error) {
	what = notifier + ": " + what
	if strings.TrimSpace(raw) == "" {
		return endpoint{}, errors.New(what + " is empty")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return endpoint{}, errors.New(what + " is not a valid URL")
	}
	if u.Scheme != "https" && u.Scheme != "http" {
		return endpoint{}, errors.New(what + " must start with https:// or http://")
	}
	if u.Host == "" {
		return endpoint{}, errors.New(what + " has no host")
	}
	return endpoint{notifier: notifier, url: raw, secrets: urlSecrets(raw, u)}, nil
}

// scrubber removes known secrets from text bound for errors and logs.
type scrubber []string

// urlSecrets lists every form in which a URL's secret parts may show up in
// an error: the whole URL, its path and query, long path segments (Slack's
// token is one), query values and the user info.
func urlSecrets(raw string, u *url.URL) scrubber {
	s := scrubber{raw, u.String(), u.RequestURI(), u.EscapedPath(), u.Path, u.RawQuery}
	for _, seg := range strings.Split(u.Path, "/") {
		if len(seg) >= 8 {
			s = append(s, seg, url.PathEscape(seg))
		}
	}
	for _, vs := range u.Query() {
		s = append(s, vs...)
	}
	if u.User != nil {
		s = append(s, u.User.String(), u.User.Username())
		if p, ok := u.User.Password(); ok {
			s = append(s, p)
			// Go sends user info as "Authorization: Basic base64(user:
			// password)"; a server echoing its request headers shows that.
			s = append(s, basicSecrets(u.User.Username()+":"+p)...)
		}
	}
	return s.with()
}

// basicSecrets are the forms of HTTP Basic credentials "user:password" on
// the wire: the base64 token (standard and URL alphabets, with and without
// padding).
func basicSecrets(userPass string) []string {
	b := []byte(userPass)
	return []string{base64.StdEncoding.EncodeToString(b), base64.RawStdEncoding.EncodeToString(b),
		base64.URLEncoding.EncodeToString(b), base64.RawURLEncoding.EncodeToString(b)}
}

// argSecrets are the secret forms of a command's arguments: each argument,
// and the value of "--flag=value".
func argSecrets(args []string) scrubber {
	var s scrubber
	for _, a := range args {
		s = append(s, a)
		if _, v, ok := strings.Cut(a, "="); ok {
			s = append(s, v)
		}
	}
	return s.with()
}

// with adds secrets and orders the list longest first, so a whole URL is
// replaced before one of its segments could leave the rest behind.
func (s scrubber) with(more ...string) scrubber {
	out := make(scrubber, 0, len(s)+len(more))
	for _, v := range append(append([]string(nil), s...), more...) {
		// Very short strings ("/", "v2") are no secret and would shred text.
		if len(v) >= 4 && v != "/" {
			out = append(out, v)
		}
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// scrub replaces every known secret, then masks by structure what may still
// be one (a URL's user info, password= and token fields; triage/redact's
// rule), so an echo in a form not listed here is caught too.
func (s scrubber) scrub(text string) string {
	for _, secret := range s {
		text = strings.ReplaceAll(text, secret, redacted)
	}
	return redact.Text(text, s...)
}

// scrubbedError keeps the cause for errors.Is/As (timeouts, net errors) but
// prints only the scrubbed message.
type scrubbedError struct {
	msg string
	err error
}

func (e *scrubbedError) Error() string { return e.msg }
func (e *scrubbedError) Unwrap() error { return e.err }

func (s scrubber) wrap(prefix string, err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		ue.URL = RedactURL(ue.URL)
	}
	return &scrubbedError{msg: prefix + ": " + s.scrub(err.Error()), err: err}
}

// clean makes hostile text (job class names, server answers) safe for one
// terminal line: control and bidi-override characters become U+FFFD and the
// text is cut at max runes.
func clean(s string, limit int) string {
	var b strings.Builder
	for i, r := range []rune(s) {
		if i == limit {
			b.WriteString("…")
			break
		}
		if r == utf8.RuneError || unicode.IsControl(r) || isBidiControl(r) {
			r = utf8.RuneError
		}
		b.WriteRune(r)
	}
	return b.String()
}

func isBidiControl(r rune) bool {
	return (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069) || r == 0x200E || r == 0x200F || r == 0x061C
}

// firstLine is the first non-empty line of s, cleaned and cut short.
func firstLine(s string, limit int) string {
	for _, line := range strings.Split(s, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			return clean(line, limit)
		}
	}
	return ""
}
