// Package redact takes database passwords out of text that may echo a
// connection string: driver errors, configuration warnings, descriptions of
// an endpoint. It works by structure, so that the words of a message are
// never touched however short or common the password is.
//
// The rule, in the order it is applied (spans found by any step are masked;
// everything else is kept byte for byte):
//
//  1. URL user info: in scheme://user:PASSWORD@host the PASSWORD is masked,
//     whatever it is and whether or not it is known: a known password (raw or
//     in any escaped form, see below) followed by '@', else everything up to
//     the last '@' of the authority (which ends at a blank, '/', '?', '#' or
//     a quote).
//  2. Password fields: in KEY=VALUE, where KEY is a word containing "pass",
//     "pwd" or "secret" in any case (password=, DB_PASSWORD=, PGPASSWORD=,
//     sslpassword=, AWS_SECRET_ACCESS_KEY=), and in JSON "KEY": "VALUE", the
//     VALUE is masked: a quoted value ('…' or "…", backslash escapes) up to
//     its closing quote, a known password (any form) where it starts the
//     value, else up to the next blank, '&', or quote.
//  3. Last line of defence: an occurrence of a known password anywhere else,
//     raw or escaped, is masked only when it is a whole token (neither
//     neighbour is a letter, digit or '_'), the password has at least
//     MinLooseLength characters, and it either contains a character other
//     than a letter, digit or '_', or has at least MinBareLength characters
//     and is not letters only. So "e", "@" or Sail's "password" never garble
//     "database", 'root'@'host' or "password authentication failed", while
//     "S3cret,with space" or "hunter2hunter2" are masked wherever they stand
//     alone.
//
// The escaped forms of a password are those a connection string or an error
// may carry it in: URL query and path escaping (Go's and PHP's rawurlencode),
// URL user-info escaping, Go %q and %+q quoting, JSON string escaping, and
// libpq key=value escaping.
package redact

import (
	"encoding/json"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Mask replaces every masked span.
const Mask = "xxxxx"

// Rule 3 of the package comment: MinLooseLength is the shortest password
// the last line of defence masks at all (shorter ones, even of symbols, turn
// up in messages by chance: ":1", "'@'"); MinBareLength the shortest made of
// letters, digits and '_' only.
const (
	MinLooseLength = 4
	MinBareLength  = 8
)

// Text returns s with the passwords masked by the package's rule. Empty
// passwords are ignored; the structural rules apply even with none.
func Text(s string, passwords ...string) string {
	var forms []string
	var loose []string // forms that rule 3 may mask
	for _, p := range passwords {
		bare := maskableAnywhere(p)
		for _, f := range Forms(p) { // none for ""
			if !slices.Contains(forms, f) {
				forms = append(forms, f)
				if bare {
					loose = append(loose, f)
				}
			}
		}
	}
	// Longest first, so a known password is matched whole rather than by a
	// shorter escaped form that happens to be its prefix.
	longestFirst := func(a, b string) int { return len(b) - len(a) }
	slices.SortStableFunc(forms, longestFirst)
	slices.SortStableFunc(loose, longestFirst)
	spans := userinfoSpans(s, forms)
	spans = append(spans, fieldSpans(s, forms, spans)...)
	return apply(s, append(spans, tokenSpans(s, loose)...))
}

// Forms lists the password and its escaped forms (package comment), once.
func Forms(p string) []string {
	userinfo := strings.TrimPrefix(url.UserPassword("", p).String(), ":")
	js, _ := json.Marshal(p)
	candidates := []string{
		p,
		url.QueryEscape(p),
		url.PathEscape(p),
		rawURLEncode(p),
		userinfo,
		unquote(strconv.Quote(p)),
		unquote(strconv.QuoteToASCII(p)),
		unquote(string(js)),
		conninfoEscape(p),
	}
	var out []string
	for _, c := range candidates {
		if c != "" && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

func unquote(q string) string {
	if len(q) >= 2 {
		return q[1 : len(q)-1]
	}
	return q
}

// rawURLEncode is PHP's: all but A-Z a-z 0-9 - _ . ~ is %XX-escaped, as
// QueryEscape does but for the space.
func rawURLEncode(s string) string { return strings.ReplaceAll(url.QueryEscape(s), "+", "%20") }

// conninfoEscape is how a libpq key=value string escapes a quoted value.
func conninfoEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s)
}

// maskableAnywhere is rule 3's condition on the password itself.
func maskableAnywhere(p string) bool {
	n := utf8.RuneCountInString(p)
	if n < MinLooseLength {
		return false
	}
	lettersOnly := true
	for _, r := range p {
		if !isWord(r) {
			return true
		}
		if !unicode.IsLetter(r) {
			lettersOnly = false
		}
	}
	return n >= MinBareLength && !lettersOnly
}

// wordAt reports whether a word character starts at s[i:].
func wordAt(s string, i int) bool {
	r, size := utf8.DecodeRuneInString(s[i:])
	return size > 0 && isWord(r)
}

func isWord(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

// span is a part of a text to replace: s[start:end] becomes repl.
type span struct {
	start, end int
	repl       string
}

// apply replaces each run of spans that overlap or touch by its first repl.
func apply(s string, spans []span) string {
	if len(spans) == 0 {
		return s
	}
	slices.SortStableFunc(spans, func(a, b span) int { return a.start - b.start })
	var b strings.Builder
	at := 0
	for i := 0; i < len(spans); {
		run := spans[i]
		for i++; i < len(spans) && spans[i].start <= run.end; i++ {
			run.end = max(run.end, spans[i].end)
		}
		b.WriteString(s[at:run.start])
		b.WriteString(run.repl)
		at = run.end
	}
	b.WriteString(s[at:])
	return b.String()
}

// stopAt is the index of the first byte of stops in s from i, or len(s).
func stopAt(s string, i int, stops string) int {
	if j := strings.IndexAny(s[i:], stops); j >= 0 {
		return i + j
	}
	return len(s)
}

// schemeUserRE finds "scheme://user:" — the start of a URL's password.
var schemeUserRE = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.\-]*://[^\s:/?#@"'\x60]*:`)

// userinfoSpans is rule 1.
func userinfoSpans(s string, forms []string) []span {
	var out []span
	for _, m := range schemeUserRE.FindAllStringIndex(s, -1) {
		v := m[1]
		if f := knownAt(s, v, forms); f != "" && strings.HasPrefix(s[v+len(f):], "@") {
			out = append(out, span{v, v + len(f), Mask})
			continue
		}
		end := stopAt(s, v, " \t\r\n/?#\"'`")
		if at := strings.LastIndexByte(s[v:end], '@'); at > 0 {
			out = append(out, span{v, v + at, Mask})
		}
	}
	return out
}

// knownAt returns the longest form that s has at position i.
func knownAt(s string, i int, forms []string) string {
	for _, f := range forms {
		if strings.HasPrefix(s[i:], f) {
			return f
		}
	}
	return ""
}

var (
	// fieldRE finds KEY= and "KEY": of rule 2; the submatch starts at the
	// key and ends where the value starts.
	fieldRE = regexp.MustCompile(`(?i)(?:^|[^A-Za-z0-9_])((?:[A-Za-z0-9_]*(?:pass|pwd|secret)[A-Za-z0-9_]*[ \t]*=|"[A-Za-z0-9_]*(?:pass|pwd|secret)[A-Za-z0-9_]*"[ \t]*:))`)
)

// fieldSpans is rule 2. A key inside a span already masked (by rule 1, in
// prior, or an earlier value) is part of that password — "pAss=" in
// user:pAss=@host is no field of its own — and is skipped: its value would
// run past the password's end and eat the host.
func fieldSpans(s string, forms []string, prior []span) []span {
	var out []span
	masked := 0 // the end of the last value masked
	for _, m := range fieldRE.FindAllStringSubmatchIndex(s, -1) {
		key := m[2]
		if key < masked || covered(prior, key) {
			continue
		}
		value := m[3] // where the value starts
		// A known password may begin with blanks, so it is tried right
		// after the '=' or ':' before the blanks are skipped.
		sp, ok := fieldValue(s, value, forms, true)
		if !ok {
			sp, ok = fieldValue(s, len(s)-len(strings.TrimLeft(s[value:], " \t")), forms, false)
		}
		if ok {
			out = append(out, sp)
			masked = sp.end
		}
	}
	return out
}

func covered(spans []span, i int) bool {
	for _, sp := range spans {
		if sp.start <= i && i < sp.end {
			return true
		}
	}
	return false
}

// fieldValue finds the value that starts at s[v:]: a known password inside
// quotes, a known password as the whole value (it may itself start with a
// quote), then, unless knownOnly, a quoted or bare value by syntax.
func fieldValue(s string, v int, forms []string, knownOnly bool) (span, bool) {
	if v >= len(s) {
		return span{}, false
	}
	q := s[v]
	quoted := q == '\'' || q == '"'
	if f := knownAt(s, v+1, forms); quoted && f != "" && strings.HasPrefix(s[v+1+len(f):], string(q)) {
		return span{v + 1, v + 1 + len(f), Mask}, true
	}
	if f := knownAt(s, v, forms); f != "" && !wordAt(s, v+len(f)) {
		return span{v, v + len(f), Mask}, true
	}
	if knownOnly {
		return span{}, false
	}
	if quoted {
		end := closingQuote(s, v+1, q)
		return span{v + 1, end, Mask}, end > v+1
	}
	end := stopAt(s, v, " \t\r\n&\"'")
	return span{v, end, Mask}, end > v
}

// closingQuote is the unescaped q ending a value from i (else len(s)).
func closingQuote(s string, i int, q byte) int {
	for ; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case q:
			return i
		}
	}
	return len(s)
}

// tokenSpans is rule 3: whole-token occurrences of the loose forms.
func tokenSpans(s string, loose []string) []span {
	var out []span
	for _, f := range loose {
		for from := 0; from < len(s); {
			i := strings.Index(s[from:], f)
			if i < 0 {
				break
			}
			start, end := from+i, from+i+len(f)
			before, _ := utf8.DecodeLastRuneInString(s[:start])
			after, _ := utf8.DecodeRuneInString(s[end:])
			if (start == 0 || !isWord(before)) && (end == len(s) || !isWord(after)) {
				out = append(out, span{start, end, Mask})
				from = end
			} else {
				_, size := utf8.DecodeRuneInString(s[start:])
				from = start + size
			}
		}
	}
	return out
}
