package redact

// Key redaction: the values of payload keys and command properties whose
// names are on a list (password, token, card, …) are replaced by Redacted.
// It is the sibling of Text's password masking: Text masks known passwords
// in connection errors, Keys masks whatever value a listed key holds, in
// the three shapes a failed job carries them.
//
// A key name matches a list entry when a run of consecutive words of the
// name, joined, equals the entry (or the entry with a trailing "s"), case
// ignored. Words are split at every character other than a letter or digit
// and at camelCase humps; entries are compared without their separators.
// So "password" matches password, user_password, PASSWORD_CONFIRMATION,
// newPasswords and X-Password; "api_key" and "apikey" both match api_key,
// apiKey, X-API-Key and stripe_api_key; "card" matches card_number and
// giftCard but not discard; "auth" matches auth, basic_auth and auth_token
// but not author. A PHP property's visibility prefix ("\0*\0") is dropped
// first.

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/jobtriage/jobtriage/triage/phpser"
	"github.com/tidwall/gjson"
)

// Redacted replaces the value of a listed key.
const Redacted = "[redacted]"

// DefaultKeyNames is the list a zero Keys uses.
func DefaultKeyNames() []string {
	return []string{"password", "passwd", "secret", "token", "api_key", "apikey", "authorization", "auth",
		"cookie", "card", "cvv", "iban", "ssn"}
}

// Keys lists key names whose values are redacted; zero Keys: the defaults.
type Keys struct {
	entries []string // lower case, letters and digits only
}

// DefaultKeys is the default list.
func DefaultKeys() Keys { return newKeys(DefaultKeyNames()) }

// ErrBadKeys: a key list that names no key.
var ErrBadKeys = errors.New("bad redaction key list")

// ParseKeys reads a comma-separated list (--redact-keys). Entries that all
// start with '+' are added to the default list; otherwise the list
// replaces it. Blanks around entries are ignored.
func ParseKeys(list string) (Keys, error) {
	var names []string
	plus, plain := 0, 0
	for _, n := range strings.Split(list, ",") {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		if strings.HasPrefix(n, "+") {
			plus++
			n = strings.TrimSpace(n[1:])
		} else {
			plain++
		}
		if normalizeKey(n) == "" {
			return Keys{}, fmt.Errorf("%w: %q has no letter or digit", ErrBadKeys, n)
		}
		names = append(names, n)
	}
	switch {
	case len(names) == 0:
		return Keys{}, fmt.Errorf("%w: it is empty", ErrBadKeys)
	case plus > 0 && plain > 0:
		return Keys{}, fmt.Errorf("%w: either every entry starts with + (added to the defaults) or none does (the list replaces them)", ErrBadKeys)
	case plus > 0:
		names = append(DefaultKeyNames(), names...)
	}
	return newKeys(names), nil
}

func newKeys(names []string) Keys {
	var k Keys
	for _, n := range names {
		k.entries = append(k.entries, normalizeKey(n))
	}
	return k
}

func (k Keys) list() []string {
	if k.entries == nil {
		return DefaultKeys().entries
	}
	return k.entries
}

// normalizeKey lower-cases a name and keeps its letters and digits.
func normalizeKey(s string) string {
	var b strings.Builder
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// keyWords splits a key name into lower-case words at every non-letter,
// non-digit and at camelCase humps ("apiKey", "APIKey" → api, key).
func keyWords(name string) []string {
	if i := strings.LastIndexByte(name, 0); i >= 0 {
		name = name[i+1:] // PHP's "\0*\0prop" and "\0Class\0prop"
	}
	var b strings.Builder
	rs := []rune(name)
	for i, r := range rs {
		if i > 0 && unicode.IsUpper(r) && (unicode.IsLower(rs[i-1]) || unicode.IsDigit(rs[i-1]) ||
			unicode.IsUpper(rs[i-1]) && i+1 < len(rs) && unicode.IsLower(rs[i+1])) {
			b.WriteByte(' ')
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return strings.FieldsFunc(b.String(), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// maxKeyName bounds the names Match looks at: longer ones are data.
const maxKeyName = 128

// Match reports whether a key name is on the list (rule: package comment).
func (k Keys) Match(name string) bool {
	if name == "" || len(name) > maxKeyName {
		return false
	}
	words := keyWords(name)
	entries := k.list()
	for i := range words {
		run := ""
		for j := i; j < len(words); j++ {
			run += words[j]
			longest := 0
			for _, e := range entries {
				if run == e || run == e+"s" {
					return true
				}
				longest = max(longest, len(e)+1)
			}
			if len(run) > longest {
				break
			}
		}
	}
	return false
}

// textKeyRE finds a key and its separator in free text: "key": and
// \"key\": (JSON, also escaped inside a string), 'key' =>, [key] => and
// ["key"]=> (PHP's print_r, var_export, var_dump), key= (query strings,
// logfmt), key: (headers, YAML). The names are unbounded here and bounded
// by Match (maxKeyName): a counted repetition makes RE2's automaton that
// many times larger, and the scan of text without keys that many times
// slower (4 µs a byte with a bound of 128, measured).
var textKeyRE = regexp.MustCompile(`(?:\\?"([^"'\\\n\]]+)\\?"|'([^"'\\\n\]]+)'|\[\s*["']?([^"'\\\n\[\]]+?)["']?\s*\]|([\p{L}\p{N}_.\-]+))(\s*(?:=>|:|=)[ \t]*)`)

// authScheme: word starts an Authorization value, the next token with it.
func authScheme(word string) bool {
	return slices.Contains([]string{"bearer", "basic", "token", "digest", "apikey"}, strings.ToLower(word))
}

// phpPairRE finds a string property and a string value of a PHP
// serialization in text, its quotes possibly escaped (a payload that is
// not JSON): s:N:"name";s:M:" — the value follows.
var phpPairRE = regexp.MustCompile(`s:\d{1,6}:(\\?)"([^"]{0,160}?)\\?";s:\d{1,9}:\\?"`)

// phpEscapedNUL is how a NUL of a property name reads in escaped text.
var phpEscapedNUL = regexp.MustCompile(`\\(?:x00|u0000|0)`)

// Text masks, in free text such as an exception message, the value that
// follows a listed key: key=VALUE, "key": "VALUE", 'key' => 'VALUE',
// [key] => VALUE, key: VALUE, and a PHP serialization's s:N:"key";s:M:"VALUE".
// A quoted value is masked up to its closing quote, a bracketed one ([…],
// {…}) to its closing bracket, a bare one up to the next blank or
// , ; & ) ] } < > or quote ("Bearer abc" as one). Everything else is kept
// byte for byte.
func (k Keys) Text(s string) string {
	return k.phpText(k.plainText(s))
}

// phpText masks listed properties' string values of PHP serializations.
func (k Keys) phpText(s string) string {
	var spans []span
	for pos := 0; pos < len(s); {
		m := phpPairRE.FindStringSubmatchIndex(s[pos:])
		if m == nil {
			break
		}
		if !k.Match(phpEscapedNUL.ReplaceAllString(s[pos+m[4]:pos+m[5]], "\x00")) {
			pos += m[5]
			continue
		}
		vs, end := pos+m[1], `";`
		if m[3] > m[2] { // the name's quote was escaped: so is the value's
			end = `\";`
		}
		ve := strings.Index(s[vs:], end)
		if ve < 0 {
			ve = stopAt(s, vs, "\n") - vs
		}
		if ve > 0 {
			spans = append(spans, span{vs, vs + ve, Redacted})
		}
		pos = vs + ve
	}
	return apply(s, spans)
}

func (k Keys) plainText(s string) string {
	var spans []span
	for pos := 0; pos < len(s); {
		m := textKeyRE.FindStringSubmatchIndex(s[pos:])
		if m == nil {
			break
		}
		name := ""
		for g := 1; g <= 4 && name == ""; g++ {
			if m[2*g] >= 0 {
				name = s[pos+m[2*g] : pos+m[2*g+1]]
			}
		}
		if !k.Match(name) {
			// Step past the key only: what follows may hold the next key
			// ("url: https://x/?token=…").
			pos += m[2*5]
			continue
		}
		vs, ve := valueSpan(s, pos+m[1])
		if ve > vs {
			spans = append(spans, span{vs, ve, Redacted})
		}
		pos = ve
	}
	return apply(s, spans)
}

// maxValue bounds a bracketed value's scan; an unclosed one masks the line.
const maxValue = 1 << 16

// valueSpan is the part of s from i that Text masks: inside the quotes of
// a quoted value, a whole bracketed value, or a bare token.
func valueSpan(s string, i int) (int, int) {
	if i >= len(s) {
		return i, i
	}
	if strings.HasPrefix(s[i:], "string(") { // var_dump: string(7) "hunter2"
		if j := strings.Index(s[i:], ") "); j > 0 && j < 20 {
			i += j + 2
		}
	}
	switch {
	case strings.HasPrefix(s[i:], `\"`):
		if j := strings.Index(s[i+2:], `\"`); j >= 0 {
			return i + 2, i + 2 + j
		}
		return i + 2, stopAt(s, i+2, "\n")
	case s[i] == '"' || s[i] == '\'':
		q := s[i]
		for j := i + 1; j < len(s); j++ {
			switch s[j] {
			case '\\':
				j++
			case q, '\n':
				return i + 1, j
			}
		}
		return i + 1, len(s)
	case s[i] == '[' || s[i] == '{':
		return i, bracketEnd(s, i)
	}
	j := stopAt(s, i, bareStops)
	if authScheme(s[i:j]) && j+1 < len(s) && s[j] == ' ' && strings.IndexByte(bareStops, s[j+1]) < 0 {
		j = stopAt(s, j+1, bareStops)
	}
	return i, j
}

// bareStops end a bare value.
const bareStops = " \t\n\r,;&)]}<>\"'"

// bracketEnd ends the balanced [..] or {..} at i (quotes kept), or the line.
func bracketEnd(s string, i int) int {
	depth := 0
	var quote byte
	for j := i; j < len(s) && j-i < maxValue; j++ {
		c := s[j]
		switch {
		case quote != 0:
			if c == '\\' {
				j++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '[' || c == '{':
			depth++
		case c == ']' || c == '}':
			depth--
			if depth == 0 {
				return j + 1
			}
		}
	}
	return stopAt(s, i, "\n")
}

// maxJSONDepth bounds JSON's nesting here; deeper documents are masked as
// text. It also bounds the walk's cost: each level reads the values under
// it once more.
const maxJSONDepth = phpMaxDepth

// JSON masks the values of listed keys in a JSON document at any depth,
// and inside string values that hold a PHP serialization (a queued job's
// data.command), the listed properties' values. The document keeps its
// key order and formatting; a masked value becomes the string Redacted.
// Text that is not JSON is masked as Text.
func (k Keys) JSON(doc []byte) []byte {
	if !json.Valid(doc) {
		return []byte(k.Text(string(doc)))
	}
	s := string(doc)
	var edits []span
	if !k.jsonEdits(gjson.Parse(s), 0, &edits) {
		return []byte(k.Text(s))
	}
	return []byte(apply(s, edits))
}

// jsonEdits appends, in document order, the edits that mask v (at depth)
// and the values in it; false when deeper than maxJSONDepth.
func (k Keys) jsonEdits(v gjson.Result, depth int, edits *[]span) bool {
	if depth > maxJSONDepth {
		return false
	}
	if v.Type == gjson.String {
		if repl, ok := k.phpInJSON(v); ok {
			*edits = append(*edits, span{v.Index, v.Index + len(v.Raw), repl})
		}
	}
	if v.Type != gjson.JSON { // ForEach would visit a scalar itself
		return true
	}
	ok := true
	v.ForEach(func(key, val gjson.Result) bool {
		if key.Type == gjson.String && k.Match(key.Str) {
			*edits = append(*edits, span{val.Index, val.Index + len(val.Raw), `"` + Redacted + `"`})
			return true
		}
		ok = k.jsonEdits(val, depth+1, edits)
		return ok
	})
	return ok
}

// phpInJSON is the JSON string v with the listed properties of the PHP
// serialization it holds masked (masked as Text when phpser cannot decode
// it); ok is false for any other string, and when nothing was masked.
func (k Keys) phpInJSON(v gjson.Result) (string, bool) {
	if !strings.HasPrefix(v.Raw, `"O:`) && !strings.HasPrefix(v.Raw, `"a:`) {
		return "", false
	}
	masked, ok := k.PHP(v.Str)
	if !ok {
		masked = k.Text(v.Str)
	}
	if masked == v.Str {
		return "", false
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(masked) != nil {
		return "", false
	}
	return strings.TrimSuffix(b.String(), "\n"), true
}

// redactedPHP is a masked property's value in a PHP serialization.
func redactedPHP() string { return `s:` + strconv.Itoa(len(Redacted)) + `:"` + Redacted + `";` }

// phpMaxDepth bounds the nesting of a PHP serialization PHP reads.
const phpMaxDepth = 512

// PHP masks the values of listed array keys and object properties in a
// PHP serialization (serialize()'s format, as Laravel stores a queued
// command), at any depth; a masked value becomes the string Redacted.
// ok is false, and s is returned as it is, when phpser cannot decode s.
func (k Keys) PHP(s string) (string, bool) {
	// Every value takes two bytes at least, so len(s) bounds the nodes.
	v, err := phpser.DecodeWithLimits(s, phpser.Limits{MaxDepth: phpMaxDepth, MaxNodes: len(s)})
	if err != nil {
		return s, false
	}
	var edits []span
	k.phpEdits(s, v, &edits)
	return apply(s, edits), true
}

// phpEdits appends, in order, the edits that mask the listed string keys'
// and properties' values under v; a value already masked is kept.
func (k Keys) phpEdits(s string, v phpser.Value, edits *[]span) {
	visit := func(listed bool, val phpser.Value) {
		switch {
		case !listed:
			k.phpEdits(s, val, edits)
		case s[val.Start:val.End] != redactedPHP():
			*edits = append(*edits, span{val.Start, val.End, redactedPHP()})
		}
	}
	for _, it := range v.Items {
		visit(it.Key.Kind == phpser.String && k.Match(it.Key.Str), it.Value)
	}
	for _, p := range v.Props {
		visit(k.Match(p.Name), p.Value)
	}
}
