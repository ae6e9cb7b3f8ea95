package signature

import (
	"regexp"
	"strings"
)

// refStep is one rewriting pass of Normalize. Most messages lack what most
// steps look for, so a refStep runs only when its trigger is in the text:
// need lists characters of which one must occur ("" always runs).
type refStep struct {
	need string
	run  func(string) string
}

func refReplace(need, expr, repl string) refStep {
	re := regexp.MustCompile(expr)
	return refStep{need, func(s string) string { return re.ReplaceAllString(s, repl) }}
}

func refReplaceFunc(need, expr string, fn func(string) string) refStep {
	re := regexp.MustCompile(expr)
	return refStep{need, func(s string) string { return re.ReplaceAllStringFunc(s, fn) }}
}

const refDigits = "0123456789"

// steps run in order: wide, structured tokens first, bare numbers last, so
// that the refDigits inside a uuid or a URL never become separate <n>s.
var referenceSteps = []refStep{
	refReplace(":", `(?i)\b[a-z][a-z0-9+.-]*://[^\s'"\x60<>()\[\]{}]+`, "<url>"),
	refReplace("@", `(?i)\b[a-z0-9._%+-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}\b`, "<email>"),
	refReplace("-", `(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`, "<uuid>"),
	refReplace("-", `\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?`, "<time>"),
	refReplace(".", `\b(?:\d{1,3}\.){3}\d{1,3}\b`, "<ip>"),
	// Paths: Unix with two or more segments, or Windows with a drive. The
	// leading group keeps PHP class names (App\Models\Order) out.
	refReplace("/", `(^|[\s'"(=:\[,])(?:/[\w.@+~-]+){2,}/?`, "${1}<path>"),
	refReplace("\\", `\b[A-Za-z]:\\(?:[\w.@+~ -]+\\)*[\w.@+~-]+`, "<path>"),
	// A bracketed list of values: ["a", "b"], [1, 2], ['x'].
	refReplace("[", `\[\s*(?:'[^']*'|"[^"]*"|-?\d[\d.]*|true|false|null)(?:\s*,\s*(?:'[^']*'|"[^"]*"|-?\d[\d.]*|true|false|null))*\s*\]`, "[<list>]"),
	refReplace("'", `'(?:[^'\\]|\\.)*'`, "'<str>'"),
	refReplaceFunc(`"`, `"(?:[^"\\]|\\.)*"`, refQuotedDouble),
	refReplace("x", `\b0x[0-9a-fA-F]+\b`, "<hex>"),
	refReplaceFunc(refDigits, `\b[0-9a-fA-F]{8,}\b`, refHexID),
	refReplaceFunc(refDigits, `[A-Za-z0-9+/_-]{20,}={0,2}`, refRandomToken),
	refReplace(refDigits, `\b\d+(?:\.\d+)?(?:[eE][+-]?\d+)?\b`, "<n>"),
	// A list of numbers ("1, 2, 3", "1,234") is one value.
	refReplace(",", `<n>(?:\s*,\s*<n>)+`, "<n>"),
	refReplace("", `\s+`, " "),
}

// PHP 8.4 names a closure after where it is declared,
// {closure:App\Jobs\X::handle():12}, {closure:/srv/app/routes/console.php:7},
// nested as {closure:{closure:App\Jobs\X::handle():12}:13}, and a queued
// closure after its pseudo-file, which holds its source:
// {closure:laravel-serializable-closure://function () {...}:2}. PHP 8.3 and
// older wrote {closure}; every such name becomes that, so that a failure
// keeps its signature when the app moves to PHP 8.4. The queued closure's
// name runs to the first "}:<line>}"; the others, innermost first, are a
// run without whitespace or braces (but for names already made {closure})
// that ends in ":<line>}".
var (
	refQueuedClosureName = regexp.MustCompile(`\{closure:(?:laravel-serializable-closure|closure)://(?s:.*?)\}:\d+\}`)
	refClosureName       = regexp.MustCompile(`\{closure:(?:[^{}\s]|\{closure\})*:\d+\}`)
)

func refClosureNames(s string) string {
	if !strings.Contains(s, "{closure:") {
		return s
	}
	s = refQueuedClosureName.ReplaceAllString(s, "{closure}")
	for {
		t := refClosureName.ReplaceAllString(s, "{closure}")
		if t == s {
			return s
		}
		s = t
	}
}

// sqlstate codes look like numbers ("SQLSTATE[23000]") but name the error.
var refSQLSTATE = regexp.MustCompile(`SQLSTATE\[[0-9A-Z]{5}\]`)

var refIdentifier = regexp.MustCompile(`^"(?:\\?[A-Za-z_][A-Za-z0-9_]*(?:[.\\][A-Za-z_][A-Za-z0-9_]*)*|<[a-z]+>)"$`)

// refQuotedDouble keeps double-quoted SQL identifiers ("orders", "jobs.queue")
// and PHP class names (Class "App\Foo" not found), and replaces any other
// double-quoted value.
func refQuotedDouble(m string) string {
	if refIdentifier.MatchString(m) {
		return m
	}
	return `"<str>"`
}

// refHexID replaces hex runs that mix refDigits and letters (hashes, object ids);
// all-digit runs are left to the number rule, all-letter runs are words.
func refHexID(m string) string {
	if strings.ContainsAny(m, refDigits) && strings.ContainsAny(m, "abcdefABCDEF") {
		return "<hex>"
	}
	return m
}

// refRandomToken replaces long runs that mix letters and digits (API keys,
// base64, random ids) but not long words or CamelCase class names.
func refRandomToken(m string) string {
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

// normalizeReference is Normalize as first written, one regexp pass per
// placeholder. It is kept as the executable specification the scanner in
// scan.go is checked against, byte for byte.
//
// It replaces the variable parts of an exception message by
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
func normalizeReference(message string) string {
	// NUL marks the protected codes below, so none may come from the message.
	s := strings.ReplaceAll(clip(message, MaxMessageBytes), "\x00", "")
	var codes []string
	s = refSQLSTATE.ReplaceAllStringFunc(s, func(m string) string {
		codes = append(codes, m)
		return "\x00"
	})
	s = refClosureNames(s)
	for _, st := range referenceSteps {
		if st.need == "" || strings.ContainsAny(s, st.need) {
			s = st.run(s)
		}
	}
	for _, c := range codes {
		s = strings.Replace(s, "\x00", c, 1)
	}
	return strings.TrimSpace(s)
}
