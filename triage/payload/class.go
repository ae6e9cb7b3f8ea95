package payload

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// maxClassLen bounds the class names JobClass extracts (real ones are short).
const maxClassLen = 512

// The class rule reads four keys, and none of them has a fixed place: PHP
// writes displayName second, but a Redis job that was released has been
// re-encoded by the Lua cjson library, whose key order follows its hash
// table, and hook keys (Horizon's tags, pushedAt, …) may sit in front. So a
// listing does not read a head of the payload but one window per key, each
// starting where the key's text first occurs: the class windows.
//
// Every path derives the class from the same windows: the store cuts them
// in SQL on PostgreSQL and MySQL (strpos/LOCATE + substr, counting
// characters), and JobClass cuts them from a whole payload in Go (whole
// rows, and every SQLite listing) the same way, so a signature id is the
// same whichever command computed it.
const (
	// ClassWindowChars is the length of each window in characters, the key
	// included. A value whose JSON text does not fit is unreadable in every
	// path alike, and the rule falls through to the next key.
	ClassWindowChars = 512
	// ClassWindowSep starts the joined windows and separates them. Valid
	// JSON never holds it raw (control characters are escaped inside
	// strings and are not whitespace), so text starting with it is windows,
	// not a payload.
	ClassWindowSep = '\x1f'
)

// ClassKeys are the texts the class windows start at, in the order they are
// joined: displayName, data.command, data.commandName, job. Each is searched
// as literal text, case-sensitively, at the occurrence ClassKeyLast says;
// PHP's json_encode and cjson both write keys without whitespace around the
// colon.
var ClassKeys = [...]string{`"displayName":`, `"command":`, `"commandName":`, `"job":`}

// ClassKeyLast says, per ClassKeys entry, whether its window starts at the
// key's last occurrence rather than its first. displayName is read from its
// last: a payload with the key twice (never written by PHP, but a row can
// be crafted) means, to PHP's json_decode and so to every Laravel tool, its
// last value, and jobtriage must not show a different class than they do.
// The other keys keep their first occurrence: "job" and "command" also
// occur inside a string job's data (user arrays), after the top-level key.
//
// In SQL the window is the key and the text after its last occurrence
// (triage/sqlstore's dialect.windowLast).
var ClassKeyLast = [len(ClassKeys)]bool{windowDisplayName: true}

const (
	windowDisplayName = iota
	windowCommand
	windowCommandName
	windowJob
)

// ClassWindows cuts the class windows out of a whole payload exactly as the
// store's SQL does: for each of ClassKeys, ClassWindowSep, then
// ClassWindowChars characters from the key's first occurrence, or its last
// where ClassKeyLast says so (nothing when the key is absent). The keys are
// ASCII, so an occurrence is the same in bytes and in characters.
func ClassWindows(raw []byte) []byte {
	out := make([]byte, 0, len(ClassKeys)*(1+ClassWindowChars))
	for k, key := range ClassKeys {
		out = append(out, ClassWindowSep)
		find := bytes.Index
		if ClassKeyLast[k] {
			find = lastIndex
		}
		if i := find(raw, []byte(key)); i >= 0 {
			out = append(out, cutChars(raw[i:], ClassWindowChars)...)
		}
	}
	return out
}

// lastIndex is bytes.LastIndex, found by searching forward: a key occurs
// once or twice in a payload, and the forward search is many times faster
// than the backward one on 2 KB payloads.
func lastIndex(s, sep []byte) int {
	last, pos := -1, 0
	for {
		i := bytes.Index(s[pos:], sep)
		if i < 0 {
			return last
		}
		last = pos + i
		pos = last + 1
		if pos > len(s) {
			return last
		}
	}
}

// cutChars returns the first n characters of raw. For valid UTF-8 these
// are runes, as PostgreSQL's and MySQL's substr count them. Bytes that are
// not UTF-8 (only SQLite holds them, and only Go cuts SQLite's payloads)
// are stepped as SQLite's own substr does (SQLITE_SKIP_UTF8: a lead byte
// ≥ 0xC0 takes its continuation bytes along), without decoding.
func cutChars(raw []byte, n int) []byte {
	p := 0
	for k := 0; k < n && p < len(raw); k++ {
		c := raw[p]
		p++
		if c >= 0xc0 {
			for p < len(raw) && raw[p]&0xc0 == 0x80 {
				p++
			}
		}
	}
	return raw[:p]
}

// JobClass returns the class to display for a payload, by the rule
// displayName (its last occurrence, as PHP reads duplicate keys) → the class
// at the head of data.command when it is a serialized object ("O:…") →
// data.commandName → job; "" when none can be read. raw is a whole payload,
// cut into windows first, or the class windows a listing read: one answer.
func JobClass(raw []byte) string {
	if len(raw) == 0 || raw[0] != ClassWindowSep {
		// The displayName window decides for nearly every payload: read it
		// in place before cutting all four. A string it yields has no raw
		// control character, so the joined windows hold the same text up
		// to its closing quote and give the same answer.
		if i := lastIndex(raw, []byte(ClassKeys[windowDisplayName])); i >= 0 {
			if s, ok := stringAfter(cutChars(raw[i:], ClassWindowChars), ClassKeys[windowDisplayName]); ok && s != "" {
				return s
			}
		}
		raw = ClassWindows(raw)
	}
	var w [len(ClassKeys)][]byte
	for i, part := range bytes.SplitN(raw[1:], []byte{ClassWindowSep}, len(ClassKeys)) {
		w[i] = part
	}
	if s, ok := stringAfter(w[windowDisplayName], ClassKeys[windowDisplayName]); ok && s != "" {
		return s
	}
	if c, ok := commandClassAfter(w[windowCommand], ClassKeys[windowCommand]); ok {
		return c
	}
	if s, ok := stringAfter(w[windowCommandName], ClassKeys[windowCommandName]); ok && s != "" {
		return s
	}
	if s, ok := stringAfter(w[windowJob], ClassKeys[windowJob]); ok {
		return s
	}
	return ""
}

// valueAfter is the JSON text after key at the start of a window, leading
// whitespace skipped; false when the window does not start with key.
func valueAfter(window []byte, key string) ([]byte, bool) {
	if !bytes.HasPrefix(window, []byte(key)) {
		return nil, false
	}
	return bytes.TrimLeft(window[len(key):], " \t\r\n"), true
}

// stringAfter decodes the JSON string after key, if it ends in the window.
func stringAfter(window []byte, key string) (string, bool) {
	v, ok := valueAfter(window, key)
	if !ok || len(v) == 0 || v[0] != '"' {
		return "", false
	}
	for i := 1; i < len(v); i++ {
		switch v[i] {
		case '\\':
			i++
		case '"':
			var s string
			err := json.Unmarshal(v[:i+1], &s)
			return s, err == nil
		}
	}
	return "", false
}

// commandClassAfter reads the class at the head of a serialized command in
// its JSON text: `"O:23:\"App\\Jobs\\X\":…`.
func commandClassAfter(window []byte, key string) (string, bool) {
	v, _ := valueAfter(window, key) // nil without key
	rest, ok := bytes.CutPrefix(v, []byte(`"O:`))
	open := bytes.Index(rest, []byte(`\"`))
	if !ok || open < 0 {
		return "", false
	}
	length := rest[:open] // "23:"
	if len(length) < 2 || length[len(length)-1] != ':' ||
		bytes.ContainsFunc(length[:len(length)-1], func(r rune) bool { return r < '0' || r > '9' }) {
		return "", false
	}
	rest = rest[open+2:]
	end := bytes.Index(rest, []byte(`\"`))
	if end <= 0 || end > 2*maxClassLen {
		return "", false
	}
	var class string
	if err := json.Unmarshal(append(append([]byte{'"'}, rest[:end]...), '"'), &class); err != nil || class == "" || len(class) > maxClassLen {
		return "", false
	}
	return class, true
}

// commandClass is the class of a decoded serialized object: `O:23:"App\Jobs\X":…`.
func commandClass(command string) (string, bool) {
	if !strings.HasPrefix(command, "O:") {
		return "", false
	}
	open := strings.IndexByte(command, '"')
	if open < 0 {
		return "", false
	}
	end := strings.IndexByte(command[open+1:], '"')
	if end <= 0 || end > maxClassLen {
		return "", false
	}
	return command[open+1 : open+1+end], true
}

// ClassNeedle returns how class appears inside a payload's JSON text, for a
// substring pre-filter in SQL: Laravel's json_encode writes `\` as `\\`,
// `/` as `\/` and `"` as `\"`, and keeps non-ASCII as it is
// (JSON_UNESCAPED_UNICODE). The needle matches both displayName and the class
// inside data.command.
//
// The caller still has to escape it for LIKE: "%" and "_" are wildcards, and
// MySQL treats "\" as LIKE's escape character, so every backslash must be
// doubled again there (or an ESCAPE clause chosen).
func ClassNeedle(class string) string {
	var b strings.Builder
	for _, r := range class {
		short := strings.IndexRune("\\\"/\b\f\n\r\t", r)
		switch {
		case short >= 0:
			b.WriteByte('\\')
			b.WriteByte(`\"/bfnrt`[short])
		case r < 0x20:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
