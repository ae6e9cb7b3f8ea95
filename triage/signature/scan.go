package signature

import (
	"bytes"
	"strings"
)

// The scanner below reproduces, byte for byte, the regular expressions
// Normalize was first written with (kept in reference_test.go as
// normalizeReference). Each pass is the hand-written form of one expression,
// with the same leftmost-first choices, the same ASCII \b and \s, and the
// same case folding: under (?i), [a-z] also matches ſ (U+017F) and the
// Kelvin sign (U+212A). Passes anchor on a byte they cannot match without
// (bytes.Index runs much faster than a byte loop) and copy the text only when
// they replace something. The placeholders a pass writes change what later
// passes see, so the order of the passes is part of the output.

// Byte classes, ASCII only (Go's \w, \d and \s are ASCII).
const (
	cWord    = 1 << iota // [0-9A-Za-z_]
	cDigit               // [0-9]
	cHex                 // [0-9a-fA-F]
	cToken               // [A-Za-z0-9+/_-], what a random token is made of
	cSpace               // [\t\n\f\r ], Go's \s
	cPathSeg             // [\w.@+~-], a path segment
	cURLStop             // \s ' " ` < > ( ) [ ] { }, which end a URL
	cAlpha               // [A-Za-z]
)

// byteClass holds the classes of each byte; bytes from 0x80 up are in none.
// TestByteClass checks it against the definitions above.
const byteClass = "" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x50\x50\x00\x50\x50\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x50\x00\x40\x00\x00\x00\x00\x40\x40\x40\x00\x28\x00\x28\x20\x08" +
	"\x2f\x2f\x2f\x2f\x2f\x2f\x2f\x2f\x2f\x2f\x00\x00\x40\x00\x40\x00" +
	"\x20\xad\xad\xad\xad\xad\xad\xa9\xa9\xa9\xa9\xa9\xa9\xa9\xa9\xa9" +
	"\xa9\xa9\xa9\xa9\xa9\xa9\xa9\xa9\xa9\xa9\xa9\x40\x00\x40\x00\x29" +
	"\x40\xad\xad\xad\xad\xad\xad\xa9\xa9\xa9\xa9\xa9\xa9\xa9\xa9\xa9" +
	"\xa9\xa9\xa9\xa9\xa9\xa9\xa9\xa9\xa9\xa9\xa9\x40\x00\x40\x20\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"

func is(c byte, class byte) bool { return byteClass[c]&class != 0 }

func isDigitAt(s []byte, i int) bool { return i < len(s) && is(s[i], cDigit) }

// classEnd is the end of the run of class bytes at s[i:].
func classEnd(s []byte, i int, class byte) int {
	for i < len(s) && is(s[i], class) {
		i++
	}
	return i
}

// wordAt and wordBefore give the two sides of a \b test at i.
func wordAt(s []byte, i int) bool     { return i < len(s) && is(s[i], cWord) }
func wordBefore(s []byte, i int) bool { return i > 0 && is(s[i-1], cWord) }
func boundary(s []byte, i int) bool   { return wordAt(s, i) != wordBefore(s, i) }

// foldLen is the length of ſ or K at s[i:], the two non-ASCII runes (?i)
// adds to [a-z]; 0 when neither starts there. Their lead bytes (C5, E2)
// never continue another rune, so matching the bytes is decoding them.
func foldLen(s []byte, i int) int {
	if i+1 < len(s) && s[i] == 0xC5 && s[i+1] == 0xBF {
		return 2
	}
	if i+2 < len(s) && s[i] == 0xE2 && s[i+1] == 0x84 && s[i+2] == 0xAA {
		return 3
	}
	return 0
}

func isSchemeByte(c byte) bool { return is(c, cWord) && c != '_' || c == '+' || c == '.' || c == '-' }
func isLocalByte(c byte) bool  { return is(c, cWord) || c == '.' || c == '%' || c == '+' || c == '-' }
func isLabelByte(c byte) bool  { return is(c, cWord) && c != '_' || c == '-' }

// foldClassLen is the length of the rune at s[i] when it is in a (?i)
// class whose ASCII members ascii reports; 0 when it is not.
func foldClassLen(s []byte, i int, ascii func(byte) bool) int {
	switch {
	case i >= len(s):
		return 0
	case s[i] >= 0x80:
		return foldLen(s, i)
	case ascii(s[i]):
		return 1
	}
	return 0
}

// foldClassLenBefore is foldClassLen for the rune ending at i.
func foldClassLenBefore(s []byte, i int, ascii func(byte) bool) int {
	if i > 0 && s[i-1] < 0x80 {
		return foldClassLen(s, i-1, ascii)
	}
	for _, n := range [...]int{2, 3} {
		if i >= n && foldLen(s[:i], i-n) == n {
			return n
		}
	}
	return 0
}

func isLetterByte(c byte) bool { return is(c, cAlpha) }

// edit builds one pass's output: src with some spans replaced, in order.
// Until the first replacement nothing is copied.
type edit struct {
	src, dst []byte
	last     int // end of the last replaced span in src
	changed  bool
}

func (e edit) replace(i, j int, with string) edit {
	e.changed = true
	e.dst = append(e.dst, e.src[e.last:i]...)
	e.dst = append(e.dst, with...)
	e.last = j
	return e
}

// result returns the rewritten text and whether it differs from src (when
// it does not, it is src itself and dst was left alone).
func (e edit) result() ([]byte, bool) {
	if !e.changed {
		return e.src, false
	}
	return append(e.dst, e.src[e.last:]...), true
}

// indexFrom is bytes.Index of sep in s[from:], as a position in s.
func indexFrom(s []byte, from int, sep string) int {
	if from >= len(s) {
		return -1
	}
	var k int
	if len(sep) == 1 {
		k = bytes.IndexByte(s[from:], sep[0]) // no conversion of sep
	} else {
		k = bytes.Index(s[from:], []byte(sep))
	}
	if k < 0 {
		return -1
	}
	return from + k
}

// pass names each pass that finds its matches from a text every match
// holds, its anchor; runPass runs one.
type pass int

const (
	passQueuedClosure pass = iota
	passInnerClosure
	passURL
	passEmail
	passUUID
	passTime
	passIP
	passUnixPath
	passWindowsPath
	passList
	passHexLiteral
)

// passes holds each pass's anchor and the placeholder of its matches.
var passes = [...]struct{ anchor, with string }{
	passQueuedClosure: {closureOpen, closureName},
	passInnerClosure:  {closureOpen, closureName},
	passURL:           {"://", "<url>"},
	passEmail:         {"@", "<email>"},
	passUUID:          {"-", "<uuid>"},
	passTime:          {"-", "<time>"},
	passIP:            {".", "<ip>"},
	passUnixPath:      {"/", "<path>"},
	passWindowsPath:   {`:\`, "<path>"},
	passList:          {"[", "[<list>]"},
	passHexLiteral:    {"x", "<hex>"}, // rarer than "0"
}

// runPass replaces the matches of pass k in s. Each match is found from an
// anchor (the match may start before it, never before pos, where the last
// match ended) as the span [start, end); none unless 0 <= start < end.
// (A switch, not function values in the table: through a function value s
// would escape, and Normalize's buffers with it.)
func runPass(dst, s []byte, k pass) ([]byte, bool) {
	e := edit{src: s, dst: dst}
	pos := 0
	for from := 0; ; {
		a := indexFrom(s, from, passes[k].anchor)
		if a < 0 {
			break
		}
		from = a + 1
		var start, end int
		switch k {
		case passQueuedClosure:
			start, end = queuedClosureAt(s, a)
		case passInnerClosure:
			start, end = a, innerClosureEnd(s, a+len(closureOpen))
		case passURL:
			start, end = urlAt(s, a, pos)
		case passEmail:
			start, end = emailAt(s, a, pos)
		case passUUID:
			start, end = uuidAt(s, a, pos)
		case passTime:
			start, end = timeAt(s, a, pos)
		case passIP:
			start, end = ipAt(s, a, pos)
		case passUnixPath:
			start, end = unixPathAt(s, a, pos)
		case passWindowsPath:
			start, end = windowsPathAt(s, a, pos)
		case passList:
			start, end = a, listEnd(s, a)
		case passHexLiteral:
			start, end = hexLiteralAt(s, a, pos)
		}
		if start >= 0 && end > start {
			e = e.replace(start, end, passes[k].with)
			pos, from = end, end
		}
	}
	return e.result()
}

// runBoundary is the first position in the run of class runes (as
// foldClassLen reads them) that ends at end and starts no earlier than pos,
// where \b holds and a rune of first starts; -1 when there is none.
func runBoundary(s []byte, end, pos int, class, first func(byte) bool) int {
	i := end
	for i > pos {
		n := foldClassLenBefore(s, i, class)
		if n == 0 || i-n < pos {
			break
		}
		i -= n
	}
	for ; i < end; i += foldClassLen(s, i, class) {
		if foldClassLen(s, i, first) > 0 && boundary(s, i) {
			return i
		}
	}
	return -1
}

// urlAt: (?i)\b[a-z][a-z0-9+.-]*://[^\s'"\x60<>()\[\]{}]+ at the "://" at c.
// The scheme is the run of scheme characters ending at c; the match starts
// at its first letter that sits on a word boundary.
func urlAt(s []byte, c, pos int) (int, int) {
	p := runBoundary(s, c, pos, isSchemeByte, isLetterByte)
	end := c + 3
	for end < len(s) && !is(s[end], cURLStop) {
		end++
	}
	if p < 0 || end == c+3 {
		return -1, -1
	}
	return p, end
}

// emailAt:
// (?i)\b[a-z0-9._%+-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}\b at the "@" at at.
func emailAt(s []byte, at, pos int) (int, int) {
	p := runBoundary(s, at, pos, isLocalByte, isLocalByte)
	if p < 0 {
		return -1, -1
	}
	return p, emailDomainEnd(s, at+1)
}

// emailDomainEnd matches [a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}\b at q.
// Labels are maximal runs (a shorter one is followed by a label character,
// never the dot the pattern needs next), so the only choice is after which
// label the final \.[a-z]{2,}\b starts: the greedy star prefers the last one
// that works.
func emailDomainEnd(s []byte, q int) int {
	r, _ := foldRunEnd(s, q, isLabelByte)
	if r == q {
		return -1
	}
	best := -1
	for {
		if t := tldEnd(s, r); t >= 0 {
			best = t
		}
		if r >= len(s) || s[r] != '.' {
			break
		}
		next, _ := foldRunEnd(s, r+1, isLabelByte)
		if next == r+1 {
			break
		}
		r = next
	}
	return best
}

// foldRunEnd is the end of the run of class runes (as foldClassLen reads
// them) at s[i:], and how many runes it holds.
func foldRunEnd(s []byte, i int, class func(byte) bool) (end, runes int) {
	for n := foldClassLen(s, i, class); n > 0; n = foldClassLen(s, i, class) {
		i += n
		runes++
	}
	return i, runes
}

// tldEnd matches \.[a-z]{2,}\b at r, giving back letters until \b holds.
func tldEnd(s []byte, r int) int {
	if r >= len(s) || s[r] != '.' {
		return -1
	}
	end, letters := foldRunEnd(s, r+1, isLetterByte)
	for ; letters >= 2; letters-- {
		if boundary(s, end) {
			return end
		}
		end -= foldClassLenBefore(s, end, isLetterByte)
	}
	return -1
}

// classRun reports whether the n bytes at s[i:] are all in class.
func classRun(s []byte, i, n int, class byte) bool {
	if i+n > len(s) {
		return false
	}
	for _, c := range s[i : i+n] {
		if !is(c, class) {
			return false
		}
	}
	return true
}

// uuidAt: (?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b
// at its first "-", d.
func uuidAt(s []byte, d, pos int) (int, int) {
	p := d - 8
	if p < pos || p+36 > len(s) || s[p+13] != '-' || s[p+18] != '-' || s[p+23] != '-' ||
		wordBefore(s, p) || wordAt(s, p+36) || !classRun(s, p, 8, cHex) ||
		!classRun(s, p+9, 4, cHex) || !classRun(s, p+14, 4, cHex) || !classRun(s, p+19, 4, cHex) || !classRun(s, p+24, 12, cHex) {
		return -1, -1
	}
	return p, p + 36
}

// timeAt:
// \b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})? at
// its first "-", d. Nothing follows the optional parts, so the greedy choice
// always stands.
func timeAt(s []byte, d, pos int) (int, int) {
	p := d - 4
	if p < pos || len(s) < p+19 || s[p+7] != '-' || s[p+13] != ':' || s[p+16] != ':' || wordBefore(s, p) ||
		!classRun(s, p, 4, cDigit) || !classRun(s, p+5, 2, cDigit) || !classRun(s, p+8, 2, cDigit) ||
		(s[p+10] != 'T' && s[p+10] != ' ') ||
		!classRun(s, p+11, 2, cDigit) || !classRun(s, p+14, 2, cDigit) || !classRun(s, p+17, 2, cDigit) {
		return -1, -1
	}
	end := p + 19
	if end < len(s) && s[end] == '.' && isDigitAt(s, end+1) {
		end = classEnd(s, end+2, cDigit)
	}
	switch {
	case end < len(s) && s[end] == 'Z':
		end++
	case end < len(s) && (s[end] == '+' || s[end] == '-') && classRun(s, end+1, 2, cDigit):
		if end+3 < len(s) && s[end+3] == ':' {
			if classRun(s, end+4, 2, cDigit) {
				end += 6
			}
		} else if classRun(s, end+3, 2, cDigit) {
			end += 5
		}
	}
	return p, end
}

// ipAt: \b(?:\d{1,3}\.){3}\d{1,3}\b at its first ".", d. Each \d{1,3} must
// be a whole digit run: a cut one is followed by a digit, not by "." or \b.
func ipAt(s []byte, d, pos int) (int, int) {
	p := d
	for p > 0 && is(s[p-1], cDigit) && d-p < 4 {
		p--
	}
	if p == d || d-p > 3 || p < pos || wordBefore(s, p) {
		return -1, -1
	}
	end := p
	for group := 0; group < 4; group++ {
		start := end
		end = classEnd(s, end, cDigit)
		if n := end - start; n < 1 || n > 3 {
			return -1, -1
		}
		if group < 3 {
			if end >= len(s) || s[end] != '.' {
				return -1, -1
			}
			end++
		}
	}
	if wordAt(s, end) {
		return -1, -1
	}
	return p, end
}

// pathPrefixes may precede a Unix path.
const pathPrefixes = "\t\n\f\r '\"(=:[,"

// unixPathAt: (^|[\s'"(=:\[,])(?:/[\w.@+~-]+){2,}/? → ${1}<path> at its
// first "/", d.
func unixPathAt(s []byte, d, pos int) (int, int) {
	if d > 0 && (d-1 < pos || strings.IndexByte(pathPrefixes, s[d-1]) < 0) {
		return -1, -1
	}
	end, segments := d, 0
	for end+1 < len(s) && s[end] == '/' && is(s[end+1], cPathSeg) {
		end = classEnd(s, end+2, cPathSeg)
		segments++
	}
	if segments < 2 {
		return -1, -1
	}
	if end < len(s) && s[end] == '/' {
		end++
	}
	return d, end
}

// windowsPathAt: \b[A-Za-z]:\\(?:[\w.@+~ -]+\\)*[\w.@+~-]+ at its ":\", c.
// The directories are whole runs ending in a backslash; the greedy star
// keeps the last directory after which a name (no spaces) follows.
func windowsPathAt(s []byte, c, pos int) (int, int) {
	p := c - 1
	if p < pos || !is(s[p], cAlpha) || wordBefore(s, p) {
		return -1, -1
	}
	best := -1
	for r := c + 2; ; {
		name := classEnd(s, r, cPathSeg)
		if name > r {
			best = name
		}
		dir := name
		for dir < len(s) && (is(s[dir], cPathSeg) || s[dir] == ' ') {
			dir++
		}
		if dir == r || dir >= len(s) || s[dir] != '\\' {
			break
		}
		r = dir + 1
	}
	return p, best
}

// listValueEnd matches '[^']*'|"[^"]*"|-?\d[\d.]*|true|false|null at i.
func listValueEnd(s []byte, i int) int {
	if i >= len(s) {
		return -1
	}
	switch c := s[i]; {
	case c == '\'' || c == '"':
		k := bytes.IndexByte(s[i+1:], c)
		if k < 0 {
			return -1
		}
		return i + 1 + k + 1
	case c == '-' && isDigitAt(s, i+1) || is(c, cDigit):
		i++
		for i < len(s) && (is(s[i], cDigit) || s[i] == '.') {
			i++
		}
		return i
	case bytes.HasPrefix(s[i:], []byte("true")), bytes.HasPrefix(s[i:], []byte("null")):
		return i + 4
	case bytes.HasPrefix(s[i:], []byte("false")):
		return i + 5
	}
	return -1
}

// listEnd matches \[\s*V(?:\s*,\s*V)*\s*\] at i. Every part is
// deterministic, so a list either parses to its "]" or not at all.
func listEnd(s []byte, i int) int {
	q := listValueEnd(s, classEnd(s, i+1, cSpace))
	for q >= 0 {
		t := classEnd(s, q, cSpace)
		if t >= len(s) {
			return -1
		}
		switch s[t] {
		case ']':
			return t + 1
		case ',':
			q = listValueEnd(s, classEnd(s, t+1, cSpace))
		default:
			return -1
		}
	}
	return -1
}

// quotedEnd matches q(?:[^q\\]|\\.)*q at i (s[i] is the quote q) and
// returns its end, or -1 and the position the scan failed at: a quote
// before that position was escaped, so a match starting there would walk
// the same path and fail too.
func quotedEnd(s []byte, i int) (end, failedAt int) {
	q := s[i]
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case q:
			return j + 1, 0
		case '\\':
			if j+1 >= len(s) || s[j+1] == '\n' { // "." matches anything but \n
				return -1, j
			}
			j++
		}
	}
	return -1, len(s)
}

// replaceQuoted is '(?:[^'\\]|\\.)*' → '<str>' with quote ', and
// "(?:[^"\\]|\\.)*" → "<str>" unless identifier-like with quote ".
func replaceQuoted(dst, s []byte, quote string) ([]byte, bool) {
	e := edit{src: s, dst: dst}
	for from := 0; ; {
		d := indexFrom(s, from, quote)
		if d < 0 {
			break
		}
		end, failedAt := quotedEnd(s, d)
		if end < 0 {
			from = failedAt
			continue
		}
		from = end
		if quote == "'" {
			e = e.replace(d, end, "'<str>'")
		} else if !isIdentifierLike(s[d+1 : end-1]) {
			e = e.replace(d, end, `"<str>"`)
		}
	}
	return e.result()
}

// isIdentifierLike reports whether a double-quoted text is a SQL
// identifier, a PHP class name or a placeholder:
// \\?[A-Za-z_][A-Za-z0-9_]*(?:[.\\][A-Za-z_][A-Za-z0-9_]*)*|<[a-z]+>.
func isIdentifierLike(t []byte) bool {
	if len(t) >= 3 && t[0] == '<' && t[len(t)-1] == '>' {
		return !bytes.ContainsFunc(t[1:len(t)-1], func(r rune) bool { return r < 'a' || r > 'z' })
	}
	i := 0
	if len(t) > 0 && t[0] == '\\' {
		i++
	}
	for {
		if i >= len(t) || !is(t[i], cAlpha) && t[i] != '_' {
			return false
		}
		if i = classEnd(t, i, cWord); i == len(t) {
			return true
		}
		if t[i] != '.' && t[i] != '\\' {
			return false
		}
		i++
	}
}

// hexLiteralAt: \b0x[0-9a-fA-F]+\b at its "x".
func hexLiteralAt(s []byte, x, pos int) (int, int) {
	p := x - 1
	if p < pos || s[p] != '0' || wordBefore(s, p) {
		return -1, -1
	}
	end := classEnd(s, x+1, cHex)
	if end == x+1 || wordAt(s, end) {
		return -1, -1
	}
	return p, end
}

// replaceHexIDsAndTokens applies two expressions in one scan:
//
//	\b[0-9a-fA-F]{8,}\b → <hex> when it has digits and letters, then
//	[A-Za-z0-9+/_-]{20,}={0,2} → <token> when it has two digits and two letters.
//
// Every word character is a token character, so each hex id lies inside one
// run of token characters, and the <hex>s cut that run into the pieces the
// token expression sees. Runs shorter than 8, or without a digit, hold
// neither.
func replaceHexIDsAndTokens(dst, s []byte) ([]byte, bool) {
	e := edit{src: s, dst: dst}
	for i := 0; i < len(s); {
		if !is(s[i], cToken) {
			i++
			continue
		}
		j, classes := tokenRun(s, i)
		if j-i >= 8 && classes&cDigit != 0 {
			e = replaceInRun(e, s, i, j)
		}
		i = j
	}
	return e.result()
}

// tokenRun is the end of the token run at s[i] and its classes' union.
func tokenRun(s []byte, i int) (int, byte) {
	classes := byte(0)
	for ; i < len(s) && is(s[i], cToken); i++ {
		classes |= byteClass[s[i]]
	}
	return i, classes
}

// replaceInRun applies both expressions to the token run s[i:j].
func replaceInRun(e edit, s []byte, i, j int) edit {
	piece := i
	for k := i; k < j; {
		if !is(s[k], cWord) {
			k++
			continue
		}
		end, hex := hexWordEnd(s, k, j)
		if hex {
			e = replaceToken(e, s, piece, k, false)
			e = e.replace(k, end, "<hex>")
			piece = end
		}
		k = end
	}
	return replaceToken(e, s, piece, j, true)
}

// hexWordEnd is the end of the run of word characters at s[k] (before j),
// and whether it is a hex id: at least 8 hex digits, digits and letters both.
func hexWordEnd(s []byte, k, j int) (end int, hex bool) {
	w := k
	all, any := byte(0xff), byte(0)
	for k < j && is(s[k], cWord) {
		all &= byteClass[s[k]]
		any |= byteClass[s[k]]
		k++
	}
	return k, k-w >= 8 && all&cHex != 0 && any&cDigit != 0 && any&cAlpha != 0
}

// replaceToken applies the token expression to the piece s[i:j] of a run;
// atRunEnd says the piece ends the run, so "=" padding may follow it.
func replaceToken(e edit, s []byte, i, j int, atRunEnd bool) edit {
	if !isToken(s[i:j]) {
		return e
	}
	if atRunEnd {
		for k := 0; k < 2 && j < len(s) && s[j] == '='; k++ {
			j++
		}
	}
	return e.replace(i, j, "<token>")
}

// isToken: the piece is long enough and has two digits and two letters.
func isToken(piece []byte) bool {
	if len(piece) < 20 {
		return false
	}
	digits, letters := 0, 0
	for _, c := range piece {
		if is(c, cDigit) {
			digits++
		} else if is(c, cAlpha) {
			letters++
		}
	}
	return digits >= 2 && letters >= 2
}

// numberEnd matches \d+(?:\.\d+)?(?:[eE][+-]?\d+)?\b at i (after a \b),
// trying the optional parts in the order backtracking would; each run of
// digits is whole, since a cut one is followed by a digit.
func numberEnd(s []byte, i int) int {
	intEnd, fracEnd := classEnd(s, i, cDigit), -1
	if intEnd < len(s) && s[intEnd] == '.' && isDigitAt(s, intEnd+1) {
		fracEnd = classEnd(s, intEnd+2, cDigit)
	}
	for _, at := range [2]int{fracEnd, intEnd} {
		if at < 0 {
			continue
		}
		if x := exponentEnd(s, at); x >= 0 && !wordAt(s, x) {
			return x
		}
		if !wordAt(s, at) {
			return at
		}
	}
	return -1
}

func exponentEnd(s []byte, i int) int {
	if i >= len(s) || (s[i] != 'e' && s[i] != 'E') {
		return -1
	}
	i++
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	if !isDigitAt(s, i) {
		return -1
	}
	return classEnd(s, i, cDigit)
}

// finishNumbersAndSpace applies the last three expressions in one scan:
//
//	\b\d+(?:\.\d+)?(?:[eE][+-]?\d+)?\b → <n>,
//	<n>(?:\s*,\s*<n>)+ → <n> (a list of numbers is one value),
//	\s+ → " ".
//
// It moves a run of token characters at a time: a number starts a word (\b,
// then a digit), and a run without digits holds none. The list rule is
// applied looking back: an <n> that follows "<n>," (with spaces) in the
// output is folded into it.
func finishNumbersAndSpace(dst, s []byte) []byte {
	out := dst
	lit := 0 // start of the text not yet copied to out
	for i := 0; i < len(s); {
		c := s[i]
		if is(c, cToken) {
			j, classes := tokenRun(s, i)
			if classes&cDigit == 0 {
				i = j
				continue
			}
			k := i
			for k < j {
				if !is(s[k], cDigit) || wordBefore(s, k) {
					k++
					continue
				}
				end := numberEnd(s, k)
				if end < 0 {
					k++
					continue
				}
				out = appendNumber(append(out, s[lit:k]...))
				lit, k = end, end // a number may run on into later runs ("1.5")
			}
			i = k
			continue
		}
		switch {
		case c == ' ' && (i+1 == len(s) || !is(s[i+1], cSpace)):
			i++ // a lone space stays as it is
		case is(c, cSpace):
			out = append(append(out, s[lit:i]...), ' ')
			i = classEnd(s, i, cSpace)
			lit = i
		case c == '<' && bytes.HasPrefix(s[i:], []byte("<n>")):
			out = appendNumber(append(out, s[lit:i]...))
			i += 3
			lit = i
		default:
			i++
		}
	}
	return append(out, s[lit:]...)
}

func appendNumber(out []byte) []byte {
	t := len(out)
	if t > 0 && out[t-1] == ' ' {
		t--
	}
	if t > 0 && out[t-1] == ',' {
		t--
		if t > 0 && out[t-1] == ' ' {
			t--
		}
		if bytes.HasSuffix(out[:t], []byte("<n>")) {
			return out[:t]
		}
	}
	return append(out, "<n>"...)
}
