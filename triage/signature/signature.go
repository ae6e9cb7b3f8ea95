// Package signature groups failed jobs by cause: the same job class failing
// with the same exception class and the same message once its variable parts
// (ids, emails, uuids, paths, URLs, quoted values) are replaced by
// placeholders.
package signature

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"
	"unicode/utf8"
)

// MaxMessageBytes bounds the part of a message Normalize reads. Messages are
// usually one line; a multi-megabyte one differs in its head anyway.
const MaxMessageBytes = 2048

// step is one rewriting pass of Normalize. Most messages lack what most
// steps look for, so a step runs only when its trigger is in the text:
// need lists characters of which one must occur ("" always runs).
type step struct {
	need string
	run  func(string) string
}

func replace(need, expr, repl string) step {
	re := regexp.MustCompile(expr)
	return step{need, func(s string) string { return re.ReplaceAllString(s, repl) }}
}

func replaceFunc(need, expr string, fn func(string) string) step {
	re := regexp.MustCompile(expr)
	return step{need, func(s string) string { return re.ReplaceAllStringFunc(s, fn) }}
}

const digits = "0123456789"

// steps run in order: wide, structured tokens first, bare numbers last, so
// that the digits inside a uuid or a URL never become separate <n>s.
var steps = []step{
	replace(":", `(?i)\b[a-z][a-z0-9+.-]*://[^\s'"\x60<>()\[\]{}]+`, "<url>"),
	replace("@", `(?i)\b[a-z0-9._%+-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}\b`, "<email>"),
	replace("-", `(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`, "<uuid>"),
	replace("-", `\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?`, "<time>"),
	replace(".", `\b(?:\d{1,3}\.){3}\d{1,3}\b`, "<ip>"),
	// Paths: Unix with two or more segments, or Windows with a drive. The
	// leading group keeps PHP class names (App\Models\Order) out.
	replace("/", `(^|[\s'"(=:\[,])(?:/[\w.@+~-]+){2,}/?`, "${1}<path>"),
	replace("\\", `\b[A-Za-z]:\\(?:[\w.@+~ -]+\\)*[\w.@+~-]+`, "<path>"),
	// A bracketed list of values: ["a", "b"], [1, 2], ['x'].
	replace("[", `\[\s*(?:'[^']*'|"[^"]*"|-?\d[\d.]*|true|false|null)(?:\s*,\s*(?:'[^']*'|"[^"]*"|-?\d[\d.]*|true|false|null))*\s*\]`, "[<list>]"),
	replace("'", `'(?:[^'\\]|\\.)*'`, "'<str>'"),
	replaceFunc(`"`, `"(?:[^"\\]|\\.)*"`, quotedDouble),
	replace("x", `\b0x[0-9a-fA-F]+\b`, "<hex>"),
	replaceFunc(digits, `\b[0-9a-fA-F]{8,}\b`, hexID),
	replaceFunc(digits, `[A-Za-z0-9+/_-]{20,}={0,2}`, randomToken),
	replace(digits, `\b\d+(?:\.\d+)?(?:[eE][+-]?\d+)?\b`, "<n>"),
	// A list of numbers ("1, 2, 3", "1,234") is one value.
	replace(",", `<n>(?:\s*,\s*<n>)+`, "<n>"),
	replace("", `\s+`, " "),
}

// sqlstate codes look like numbers ("SQLSTATE[23000]") but name the error.
var sqlstateRe = regexp.MustCompile(`SQLSTATE\[[0-9A-Z]{5}\]`)

var identifierRe = regexp.MustCompile(`^"(?:\\?[A-Za-z_][A-Za-z0-9_]*(?:[.\\][A-Za-z_][A-Za-z0-9_]*)*|<[a-z]+>)"$`)

// quotedDouble keeps double-quoted SQL identifiers ("orders", "jobs.queue")
// and PHP class names (Class "App\Foo" not found), and replaces any other
// double-quoted value.
func quotedDouble(m string) string {
	if identifierRe.MatchString(m) {
		return m
	}
	return `"<str>"`
}

// hexID replaces hex runs that mix digits and letters (hashes, object ids);
// all-digit runs are left to the number rule, all-letter runs are words.
func hexID(m string) string {
	if strings.ContainsAny(m, "0123456789") && strings.ContainsAny(m, "abcdefABCDEF") {
		return "<hex>"
	}
	return m
}

// randomToken replaces long runs that mix letters and digits (API keys,
// base64, random ids) but not long words or CamelCase class names.
func randomToken(m string) string {
	var letters, digits int
	for _, c := range m {
		switch {
		case c >= '0' && c <= '9':
			digits++
		case (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'):
			letters++
		}
	}
	if digits >= 2 && letters >= 2 {
		return "<token>"
	}
	return m
}

// Normalize replaces the variable parts of an exception message by
// placeholders so that messages differing only in data share a signature:
// "Order 1042 not found" and "Order 77 not found" both become
// "Order <n> not found".
//
// Placeholders: <url>, <email>, <uuid>, <time>, <ip>, <path>, '<str>' and
// "<str>" (quoted values; identifier-like double-quoted SQL names stay),
// [<list>] (bracketed value lists), <hex> (hex ids, hashes), <token> (long
// random strings), <n> (numbers and lists of numbers). PHP class names such
// as [App\Models\Order] and SQLSTATE codes are kept. Whitespace runs become
// one space. Only the first MaxMessageBytes bytes are read.
func Normalize(message string) string {
	// NUL marks the protected codes below, so none may come from the message.
	s := strings.ReplaceAll(clip(message, MaxMessageBytes), "\x00", "")
	var codes []string
	s = sqlstateRe.ReplaceAllStringFunc(s, func(m string) string {
		codes = append(codes, m)
		return "\x00"
	})
	for _, st := range steps {
		if st.need == "" || strings.ContainsAny(s, st.need) {
			s = st.run(s)
		}
	}
	for _, c := range codes {
		s = strings.Replace(s, "\x00", c, 1)
	}
	return strings.TrimSpace(s)
}

func clip(s string, max int) string {
	if len(s) <= max {
		return s
	}
	s = s[:max]
	// Drop a rune the cut split in two (at most UTFMax-1 bytes).
	for i := 0; i < utf8.UTFMax-1 && len(s) > 0; i++ {
		r, size := utf8.DecodeLastRuneInString(s)
		if r != utf8.RuneError || size != 1 {
			break
		}
		s = s[:len(s)-1]
	}
	return s
}

// ID returns the signature id of a failure: the first 10 hex characters of
// SHA-256 over the job class, the exception class and the normalized
// message, joined by NUL bytes. This recipe is a public contract: ids stay
// the same across versions of jobtriage as long as Normalize's output for a
// message does, so they may be stored, linked and compared between runs.
func ID(jobClass, exceptionClass, normalizedMessage string) string {
	h := sha256.New()
	h.Write([]byte(jobClass))
	h.Write([]byte{0})
	h.Write([]byte(exceptionClass))
	h.Write([]byte{0})
	h.Write([]byte(normalizedMessage))
	return hex.EncodeToString(h.Sum(nil))[:10]
}
