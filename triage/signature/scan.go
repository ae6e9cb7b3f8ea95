package signature

import "bytes"

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

// foldLenBefore is foldLen for the rune ending at i.
func foldLenBefore(s []byte, i int) int {
	if i >= 2 && s[i-2] == 0xC5 && s[i-1] == 0xBF {
		return 2
	}
	if i >= 3 && s[i-3] == 0xE2 && s[i-2] == 0x84 && s[i-1] == 0xAA {
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
	if i >= len(s) {
		return 0
	}
	if c := s[i]; c < 0x80 {
		if ascii(c) {
			return 1
		}
		return 0
	}
	return foldLen(s, i)
}

// foldClassLenBefore is foldClassLen for the rune ending at i.
func foldClassLenBefore(s []byte, i int, ascii func(byte) bool) int {
	if i <= 0 {
		return 0
	}
	if c := s[i-1]; c < 0x80 {
		if ascii(c) {
			return 1
		}
		return 0
	}
	return foldLenBefore(s, i)
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
	k := bytes.Index(s[from:], []byte(sep))
	if k < 0 {
		return -1
	}
	return from + k
}

// indexByteFrom is indexFrom for one byte.
func indexByteFrom(s []byte, from int, c byte) int {
	if from >= len(s) {
		return -1
	}
	if k := bytes.IndexByte(s[from:], c); k >= 0 {
		return from + k
	}
	return -1
}

// replaceURLs: (?i)\b[a-z][a-z0-9+.-]*://[^\s'"\x60<>()\[\]{}]+ → <url>.
func replaceURLs(dst, s []byte) ([]byte, bool) {
	e := edit{src: s, dst: dst}
	pos := 0
	for from := 0; ; {
		c := indexFrom(s, from, "://")
		if c < 0 {
			break
		}
		from = c + 1
		// The scheme is the run of scheme characters ending at c; the match
		// starts at its first letter that sits on a word boundary.
		start := c
		for start > pos {
			if b := s[start-1]; b < 0x80 {
				if !isSchemeByte(b) {
					break
				}
				start--
				continue
			}
			n := foldLenBefore(s, start)
			if n == 0 || start-n < pos {
				break
			}
			start -= n
		}
		p := -1
		if start < c && is(s[start], cAlpha) && !wordBefore(s, start) {
			p = start // the usual case: "https" after a space or quote
		}
		for i := start; p < 0 && i < c; {
			n := foldClassLen(s, i, isSchemeByte)
			if foldClassLen(s, i, isLetterByte) > 0 && boundary(s, i) {
				p = i
				break
			}
			i += n
		}
		if p < 0 {
			continue
		}
		end := c + 3
		for end < len(s) && !is(s[end], cURLStop) {
			end++
		}
		if end == c+3 {
			continue
		}
		e = e.replace(p, end, "<url>")
		pos, from = end, end
	}
	return e.result()
}

// replaceEmails:
// (?i)\b[a-z0-9._%+-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}\b → <email>.
func replaceEmails(dst, s []byte) ([]byte, bool) {
	e := edit{src: s, dst: dst}
	pos := 0
	for from := 0; ; {
		at := indexByteFrom(s, from, '@')
		if at < 0 {
			break
		}
		from = at + 1
		start := at
		for start > pos {
			n := foldClassLenBefore(s, start, isLocalByte)
			if n == 0 || start-n < pos {
				break
			}
			start -= n
		}
		p := -1
		for i := start; i < at; i += foldClassLen(s, i, isLocalByte) {
			if boundary(s, i) {
				p = i
				break
			}
		}
		if p < 0 {
			continue
		}
		end := emailDomainEnd(s, at+1)
		if end < 0 {
			continue
		}
		e = e.replace(p, end, "<email>")
		pos, from = end, end
	}
	return e.result()
}

// emailDomainEnd matches [a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}\b at q.
// Labels are maximal runs (a shorter one is followed by a label character,
// never the dot the pattern needs next), so the only choice is after which
// label the final \.[a-z]{2,}\b starts: the greedy star prefers the last one
// that works.
func emailDomainEnd(s []byte, q int) int {
	r := labelEnd(s, q)
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
		next := labelEnd(s, r+1)
		if next == r+1 {
			break
		}
		r = next
	}
	return best
}

func labelEnd(s []byte, i int) int {
	for {
		n := foldClassLen(s, i, isLabelByte)
		if n == 0 {
			return i
		}
		i += n
	}
}

// tldEnd matches \.[a-z]{2,}\b at r, giving back letters until \b holds.
func tldEnd(s []byte, r int) int {
	if r >= len(s) || s[r] != '.' {
		return -1
	}
	end, letters := r+1, 0
	for {
		n := foldClassLen(s, end, isLetterByte)
		if n == 0 {
			break
		}
		end += n
		letters++
	}
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

// replaceUUIDs:
// (?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b → <uuid>.
func replaceUUIDs(dst, s []byte) ([]byte, bool) {
	e := edit{src: s, dst: dst}
	pos := 0
	for from := 8; ; {
		d := indexByteFrom(s, from, '-')
		if d < 0 {
			break
		}
		from = d + 1
		p := d - 8
		if p < pos || p+36 > len(s) || s[p+13] != '-' || s[p+18] != '-' || s[p+23] != '-' ||
			wordBefore(s, p) || wordAt(s, p+36) || !classRun(s, p, 8, cHex) ||
			!classRun(s, p+9, 4, cHex) || !classRun(s, p+14, 4, cHex) || !classRun(s, p+19, 4, cHex) || !classRun(s, p+24, 12, cHex) {
			continue
		}
		e = e.replace(p, p+36, "<uuid>")
		pos, from = p+36, p+36
	}
	return e.result()
}

// replaceTimes:
// \b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})? → <time>.
// Nothing follows the optional parts, so the greedy choice always stands.
func replaceTimes(dst, s []byte) ([]byte, bool) {
	e := edit{src: s, dst: dst}
	pos := 0
	for from := 4; ; {
		d := indexByteFrom(s, from, '-')
		if d < 0 {
			break
		}
		from = d + 1
		p := d - 4
		if p < pos || len(s) < p+19 || s[p+7] != '-' || s[p+13] != ':' || s[p+16] != ':' || wordBefore(s, p) ||
			!classRun(s, p, 4, cDigit) || !classRun(s, p+5, 2, cDigit) || s[p+7] != '-' || !classRun(s, p+8, 2, cDigit) ||
			(s[p+10] != 'T' && s[p+10] != ' ') ||
			!classRun(s, p+11, 2, cDigit) || s[p+13] != ':' || !classRun(s, p+14, 2, cDigit) || s[p+16] != ':' || !classRun(s, p+17, 2, cDigit) {
			continue
		}
		end := p + 19
		if end < len(s) && s[end] == '.' && isDigitAt(s, end+1) {
			end += 2
			for isDigitAt(s, end) {
				end++
			}
		}
		if end < len(s) {
			switch s[end] {
			case 'Z':
				end++
			case '+', '-':
				if classRun(s, end+1, 2, cDigit) {
					if end+3 < len(s) && s[end+3] == ':' {
						if classRun(s, end+4, 2, cDigit) {
							end += 6
						}
					} else if classRun(s, end+3, 2, cDigit) {
						end += 5
					}
				}
			}
		}
		e = e.replace(p, end, "<time>")
		pos, from = end, end
	}
	return e.result()
}

// replaceIPs: \b(?:\d{1,3}\.){3}\d{1,3}\b → <ip>. Each \d{1,3} must be a
// whole digit run: a cut one is followed by a digit, not by "." or \b.
func replaceIPs(dst, s []byte) ([]byte, bool) {
	e := edit{src: s, dst: dst}
	pos := 0
	for from := 1; ; {
		d := indexByteFrom(s, from, '.')
		if d < 0 {
			break
		}
		from = d + 1
		p := d
		for p > 0 && is(s[p-1], cDigit) && d-p < 4 {
			p--
		}
		if p == d || d-p > 3 || p < pos || wordBefore(s, p) {
			continue
		}
		end := p
		ok := true
		for group := 0; group < 4 && ok; group++ {
			n := 0
			for isDigitAt(s, end) {
				end++
				n++
			}
			ok = n >= 1 && n <= 3
			if group < 3 && ok {
				ok = end < len(s) && s[end] == '.'
				end++
			}
		}
		if !ok || wordAt(s, end) {
			continue
		}
		e = e.replace(p, end, "<ip>")
		pos, from = end, end
	}
	return e.result()
}

func isPathPrefix(c byte) bool {
	switch c {
	case '\t', '\n', '\f', '\r', ' ', '\'', '"', '(', '=', ':', '[', ',':
		return true
	}
	return false
}

// replaceUnixPaths: (^|[\s'"(=:\[,])(?:/[\w.@+~-]+){2,}/? → ${1}<path>.
func replaceUnixPaths(dst, s []byte) ([]byte, bool) {
	e := edit{src: s, dst: dst}
	pos := 0
	for from := 0; ; {
		d := indexByteFrom(s, from, '/')
		if d < 0 {
			break
		}
		from = d + 1
		if d > 0 && (d-1 < pos || !isPathPrefix(s[d-1])) {
			continue
		}
		end, segments := d, 0
		for end+1 < len(s) && s[end] == '/' && is(s[end+1], cPathSeg) {
			end += 2
			for end < len(s) && is(s[end], cPathSeg) {
				end++
			}
			segments++
		}
		if segments < 2 {
			continue
		}
		if end < len(s) && s[end] == '/' {
			end++
		}
		e = e.replace(d, end, "<path>")
		pos, from = end, end
	}
	return e.result()
}

// replaceWindowsPaths: \b[A-Za-z]:\\(?:[\w.@+~ -]+\\)*[\w.@+~-]+ → <path>.
// The directories are whole runs ending in a backslash; the greedy star
// keeps the last directory after which a name (no spaces) follows.
func replaceWindowsPaths(dst, s []byte) ([]byte, bool) {
	e := edit{src: s, dst: dst}
	pos := 0
	for from := 1; ; {
		c := indexFrom(s, from, `:\`)
		if c < 0 {
			break
		}
		from = c + 1
		p := c - 1
		if p < pos || !is(s[p], cAlpha) || wordBefore(s, p) {
			continue
		}
		best := -1
		for r := c + 2; ; {
			name := r
			for name < len(s) && is(s[name], cPathSeg) {
				name++
			}
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
		if best < 0 {
			continue
		}
		e = e.replace(p, best, "<path>")
		pos, from = best, best
	}
	return e.result()
}

func skipSpace(s []byte, i int) int {
	for i < len(s) && is(s[i], cSpace) {
		i++
	}
	return i
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
	case c == '-' || is(c, cDigit):
		if c == '-' {
			i++
			if !isDigitAt(s, i) {
				return -1
			}
		}
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
	q := listValueEnd(s, skipSpace(s, i+1))
	for q >= 0 {
		t := skipSpace(s, q)
		if t >= len(s) {
			return -1
		}
		switch s[t] {
		case ']':
			return t + 1
		case ',':
			q = listValueEnd(s, skipSpace(s, t+1))
		default:
			return -1
		}
	}
	return -1
}

// replaceLists: a bracketed list of values → [<list>].
func replaceLists(dst, s []byte) ([]byte, bool) {
	e := edit{src: s, dst: dst}
	for from := 0; ; {
		d := indexByteFrom(s, from, '[')
		if d < 0 {
			break
		}
		from = d + 1
		if end := listEnd(s, d); end > 0 {
			e = e.replace(d, end, "[<list>]")
			from = end
		}
	}
	return e.result()
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

// replaceQuoted handles '…' (always replaced) and "…" (kept when it holds
// an identifier or a placeholder).
func replaceQuoted(dst, s []byte, quote byte) ([]byte, bool) {
	e := edit{src: s, dst: dst}
	for from := 0; ; {
		d := indexByteFrom(s, from, quote)
		if d < 0 {
			break
		}
		end, failedAt := quotedEnd(s, d)
		if end < 0 {
			from = failedAt
			continue
		}
		from = end
		if quote == '\'' {
			e = e.replace(d, end, "'<str>'")
		} else if !isIdentifierLike(s[d+1 : end-1]) {
			e = e.replace(d, end, `"<str>"`)
		}
	}
	return e.result()
}

// replaceSingleQuoted: '(?:[^'\\]|\\.)*' → '<str>'.
func replaceSingleQuoted(dst, s []byte) ([]byte, bool) { return replaceQuoted(dst, s, '\'') }

// replaceDoubleQuoted: "(?:[^"\\]|\\.)*" → "<str>" unless identifier-like.
func replaceDoubleQuoted(dst, s []byte) ([]byte, bool) { return replaceQuoted(dst, s, '"') }

// isIdentifierLike reports whether a double-quoted text is a SQL
// identifier, a PHP class name or a placeholder:
// \\?[A-Za-z_][A-Za-z0-9_]*(?:[.\\][A-Za-z_][A-Za-z0-9_]*)*|<[a-z]+>.
func isIdentifierLike(t []byte) bool {
	if len(t) >= 3 && t[0] == '<' && t[len(t)-1] == '>' {
		for _, c := range t[1 : len(t)-1] {
			if c < 'a' || c > 'z' {
				return false
			}
		}
		return true
	}
	i := 0
	if len(t) > 0 && t[0] == '\\' {
		i++
	}
	for {
		if i >= len(t) || !is(t[i], cAlpha) && t[i] != '_' {
			return false
		}
		for i < len(t) && is(t[i], cWord) {
			i++
		}
		if i == len(t) {
			return true
		}
		if t[i] != '.' && t[i] != '\\' {
			return false
		}
		i++
	}
}

// replaceHexLiterals: \b0x[0-9a-fA-F]+\b → <hex>.
func replaceHexLiterals(dst, s []byte) ([]byte, bool) {
	e := edit{src: s, dst: dst}
	pos := 0
	for from := 1; ; {
		x := indexByteFrom(s, from, 'x') // rarer than "0"
		if x < 0 {
			break
		}
		from = x + 1
		p := x - 1
		if s[p] != '0' || p < pos || wordBefore(s, p) {
			continue
		}
		end := p + 2
		for end < len(s) && is(s[end], cHex) {
			end++
		}
		if end == p+2 || wordAt(s, end) {
			continue
		}
		e = e.replace(p, end, "<hex>")
		pos, from = end, end
	}
	return e.result()
}

// replaceHexIDsAndTokens applies two expressions in one scan:
//
//	\b[0-9a-fA-F]{8,}\b → <hex> when it has digits and letters, then
//	[A-Za-z0-9+/_-]{20,}={0,2} → <token> when it has two digits and two letters.
//
// Every word character is a token character, so each hex id lies inside one
// run of token characters, and the <hex>s cut that run into the pieces the
// token expression sees. Runs shorter than 8 hold neither.
func replaceHexIDsAndTokens(dst, s []byte) ([]byte, bool) {
	e := edit{src: s, dst: dst}
	for i := 0; i < len(s); {
		if !is(s[i], cToken) {
			i++
			continue
		}
		j := i + 1
		for j < len(s) && is(s[j], cToken) {
			j++
		}
		if j-i >= 8 {
			e = replaceInRun(e, s, i, j)
		}
		i = j
	}
	return e.result()
}

// replaceInRun applies both expressions to the run of token characters
// s[i:j].
func replaceInRun(e edit, s []byte, i, j int) edit {
	piece := i
	for k := i; k < j; {
		if !is(s[k], cWord) {
			k++
			continue
		}
		w := k
		end, hex := hexWordEnd(s, k, j)
		if hex {
			e = replaceToken(e, s, piece, w, false)
			e = e.replace(w, end, "<hex>")
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

// isToken: the piece is long enough for a token and has two digits and two
// letters.
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
	intEnd := i
	for isDigitAt(s, intEnd) {
		intEnd++
	}
	fracEnd := -1
	if intEnd < len(s) && s[intEnd] == '.' && isDigitAt(s, intEnd+1) {
		fracEnd = intEnd + 2
		for isDigitAt(s, fracEnd) {
			fracEnd++
		}
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
	for isDigitAt(s, i) {
		i++
	}
	return i
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
//
// With unlessHex, s has not been through replaceHexIDsAndTokens yet, and
// the scan gives up (false) on meeting a run that pass would change. When
// it does not give up, that pass would have left s as it is, so the result
// is the same. Hex ids and tokens are rare, and this saves a scan.
func finishNumbersAndSpace(dst, s []byte, unlessHex bool) ([]byte, bool) {
	out := dst
	lit := 0     // start of the text not yet copied to out
	checked := 0 // with unlessHex: every token run starting before has been checked
	for i := 0; i < len(s); {
		c := s[i]
		if is(c, cToken) {
			j, classes := i+1, byteClass[c]
			for j < len(s) && is(s[j], cToken) {
				classes |= byteClass[s[j]]
				j++
			}
			if classes&cDigit == 0 {
				i = j
				continue
			}
			if unlessHex && i >= checked {
				if runChanges(s, i, j) {
					return nil, false
				}
				checked = j
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
				lit, k = end, end
				// A number may run on into later runs ("1.5"): check those too,
				// as the scan will resume inside them.
				for unlessHex && checked < end {
					p := checked
					if !is(s[p], cToken) {
						checked++
						continue
					}
					q := p + 1
					for q < len(s) && is(s[q], cToken) {
						q++
					}
					if runChanges(s, p, q) {
						return nil, false
					}
					checked = q
				}
			}
			i = k
			continue
		}
		switch {
		case c == ' ' && (i+1 == len(s) || !is(s[i+1], cSpace)):
			i++ // a lone space stays as it is
		case is(c, cSpace):
			out = append(append(out, s[lit:i]...), ' ')
			i = skipSpace(s, i)
			lit = i
		case c == '<' && bytes.HasPrefix(s[i:], []byte("<n>")):
			out = appendNumber(append(out, s[lit:i]...))
			i += 3
			lit = i
		default:
			i++
		}
	}
	return append(out, s[lit:]...), true
}

// runChanges reports whether replaceHexIDsAndTokens would change the run of
// token characters s[i:j].
func runChanges(s []byte, i, j int) bool {
	if j-i < 8 {
		return false
	}
	for k := i; k < j; {
		if !is(s[k], cWord) {
			k++
			continue
		}
		end, hex := hexWordEnd(s, k, j)
		if hex {
			return true
		}
		k = end
	}
	// No hex id, so the whole run is the piece the token rule sees.
	return isToken(s[i:j])
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
