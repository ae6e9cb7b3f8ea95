package phpconf

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// tokKind classifies a token of the small PHP subset this package reads.
type tokKind int

const (
	tEOF      tokKind = iota
	tName             // identifier, keyword or namespaced name (Foo\Bar, \Foo)
	tVar              // $name
	tString           // a single- or double-quoted string; tok.val is decoded
	tInt              // integer literal; tok.i holds it
	tFloat            // float literal (or an int literal that overflows); tok.f holds it
	tCast             // (int), (bool), ...; tok.val is the canonical type name
	tOpaque           // heredoc, nowdoc or backtick string: never evaluated
	tOp               // punctuation and operators; tok.text is the operator
	tCloseTag         // ?> ends the PHP code
)

// token is a lexeme with its byte span and 1-based line.
type token struct {
	kind       tokKind
	text       string // source text for names and operators
	val        string // decoded value of a tString
	interp     bool   // tString: a double-quoted string with $ interpolation
	i          int64
	f          float64
	start, end int
	line       int
}

// maxSourceBytes and maxTokens bound EvalConfig's input, keeping memory
// bounded: a large config cache is a few hundred kilobytes, a token per ten bytes.
const (
	maxSourceBytes = 4 << 20
	maxTokens      = 1 << 19
)

// openTag starts PHP code; everything before it is inline output.
const openTag = "<?php"

// lexer turns PHP source into tokens. It knows what config files and
// var_export output need, and lexes the rest (strings, comments, heredocs,
// brackets) well enough to find where an expression it cannot read ends.
type lexer struct {
	src  string
	pos  int
	line int
}

type lexError struct {
	line int
	msg  string
}

func (e *lexError) Error() string { return fmt.Sprintf("line %d: %s", e.line, e.msg) }

// tokenize lexes src from its "<?php" open tag to the end or the first
// "?>". It fails without an open tag or on an unterminated string, comment
// or heredoc.
func tokenize(src string) ([]token, error) {
	if len(src) > maxSourceBytes {
		return nil, &lexError{1, fmt.Sprintf("file is larger than %d bytes", maxSourceBytes)}
	}
	at := indexFold(src, openTag)
	if at < 0 {
		return nil, &lexError{1, "no <?php open tag"}
	}
	after := at + len(openTag)
	if after < len(src) && !isSpace(src[after]) {
		return nil, &lexError{strings.Count(src[:at], "\n") + 1, "no <?php open tag"}
	}
	lx := &lexer{src: src, pos: after, line: 1 + strings.Count(src[:after], "\n")}
	var toks []token
	for {
		t, err := lx.next()
		if err != nil {
			return nil, err
		}
		toks = append(toks, t)
		if len(toks) > maxTokens {
			return nil, &lexError{t.line, fmt.Sprintf("more than %d tokens", maxTokens)}
		}
		if t.kind == tEOF || t.kind == tCloseTag {
			if t.kind == tCloseTag {
				toks = append(toks, token{kind: tEOF, start: t.end, end: t.end, line: t.line})
			}
			return toks, nil
		}
	}
}

// indexFold is strings.Index, ASCII-case-insensitive.
func indexFold(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(sub)], sub) {
			return i
		}
	}
	return -1
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func isNameStart(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80
}

func isNameChar(c byte) bool { return isNameStart(c) || (c >= '0' && c <= '9') }

func (lx *lexer) errf(format string, args ...any) error {
	return &lexError{lx.line, fmt.Sprintf(format, args...)}
}

func (lx *lexer) advance(p int) {
	lx.line += strings.Count(lx.src[lx.pos:p], "\n")
	lx.pos = p
}

// skipSpaceAndComments skips whitespace and //, # and /* */ comments; a
// line comment ends at a newline or "?>", as in PHP.
func (lx *lexer) skipSpaceAndComments() error {
	s := lx.src
	for lx.pos < len(s) {
		c := s[lx.pos]
		switch {
		case isSpace(c):
			lx.advance(lx.pos + 1)
		case c == '#' && !strings.HasPrefix(s[lx.pos:], "#["), c == '/' && strings.HasPrefix(s[lx.pos:], "//"):
			end := lx.pos
			for end < len(s) && s[end] != '\n' && !strings.HasPrefix(s[end:], "?>") {
				end++
			}
			lx.advance(end)
		case c == '/' && strings.HasPrefix(s[lx.pos:], "/*"):
			end := strings.Index(s[lx.pos+2:], "*/")
			if end < 0 {
				return lx.errf("unterminated comment")
			}
			lx.advance(lx.pos + 2 + end + 2)
		default:
			return nil
		}
	}
	return nil
}

// operatorAt is the multi-character operator s starts with, "" for none.
func operatorAt(s string) string {
	if len(s) >= 3 {
		switch s[:3] {
		case "<<=", "<=>", "**=", "...", ">>=", "===", "!==", "??=", "?->":
			return s[:3]
		}
	}
	if len(s) >= 2 {
		switch s[:2] {
		case "::", "=>", "->", "??", "==", "!=", "<>", "<=", ">=", "&&", "||", "++", "--",
			"+=", "-=", "*=", "/=", ".=", "%=", "&=", "|=", "^=", "<<", ">>", "**", "#[":
			return s[:2]
		}
	}
	return ""
}

// castTypes maps the spellings of a cast to the canonical type.
var castTypes = map[string]string{"int": "int", "integer": "int", "bool": "bool", "boolean": "bool",
	"float": "float", "double": "float", "real": "float", "string": "string", "binary": "string",
	"array": "array", "object": "object", "unset": "unset"}

func (lx *lexer) next() (token, error) {
	if err := lx.skipSpaceAndComments(); err != nil {
		return token{}, err
	}
	s := lx.src
	start, line := lx.pos, lx.line
	tok := func(kind tokKind, end int) token {
		lx.advance(end)
		return token{kind: kind, text: s[start:end], start: start, end: end, line: line}
	}
	if lx.pos >= len(s) {
		return token{kind: tEOF, start: len(s), end: len(s), line: line}, nil
	}
	c := s[lx.pos]
	switch {
	case strings.HasPrefix(s[lx.pos:], "?>"):
		return tok(tCloseTag, lx.pos+2), nil
	case c == '\'':
		val, end, err := lx.singleQuoted(lx.pos)
		if err != nil {
			return token{}, err
		}
		t := tok(tString, end)
		t.val = val
		return t, nil
	case c == '"':
		val, interp, end, err := lx.doubleQuoted(lx.pos+1, '"')
		if err != nil {
			return token{}, err
		}
		t := tok(tString, end)
		t.val, t.interp = val, interp
		return t, nil
	case c == '`':
		_, _, end, err := lx.doubleQuoted(lx.pos+1, '`')
		if err != nil {
			return token{}, err
		}
		return tok(tOpaque, end), nil
	case strings.HasPrefix(s[lx.pos:], "<<<"):
		end, err := lx.heredoc()
		if err != nil {
			return token{}, err
		}
		return tok(tOpaque, end), nil
	case c == '$' && lx.pos+1 < len(s) && isNameStart(s[lx.pos+1]):
		end := lx.pos + 2
		for end < len(s) && isNameChar(s[end]) {
			end++
		}
		return tok(tVar, end), nil
	case c >= '0' && c <= '9' || (c == '.' && lx.pos+1 < len(s) && s[lx.pos+1] >= '0' && s[lx.pos+1] <= '9'):
		return lx.number()
	case isNameStart(c) || (c == '\\' && lx.pos+1 < len(s) && isNameStart(s[lx.pos+1])):
		end := lx.pos
		if c == '\\' {
			end++
		}
		for {
			for end < len(s) && isNameChar(s[end]) {
				end++
			}
			if end+1 < len(s) && s[end] == '\\' && isNameStart(s[end+1]) {
				end++
				continue
			}
			break
		}
		return tok(tName, end), nil
	case c == '(':
		if typ, end, ok := lx.cast(); ok {
			t := tok(tCast, end)
			t.val = typ
			return t, nil
		}
	}
	if op := operatorAt(s[lx.pos:]); op != "" {
		return tok(tOp, lx.pos+len(op)), nil
	}
	_, size := utf8.DecodeRuneInString(s[lx.pos:])
	return tok(tOp, lx.pos+size), nil
}

// cast recognises "( type )" at lx.pos.
func (lx *lexer) cast() (typ string, end int, ok bool) {
	s := lx.src
	p := lx.pos + 1
	for p < len(s) && (s[p] == ' ' || s[p] == '\t') {
		p++
	}
	nameStart := p
	for p < len(s) && ((s[p] >= 'a' && s[p] <= 'z') || (s[p] >= 'A' && s[p] <= 'Z')) {
		p++
	}
	name := s[nameStart:p]
	for p < len(s) && (s[p] == ' ' || s[p] == '\t') {
		p++
	}
	if p >= len(s) || s[p] != ')' {
		return "", 0, false
	}
	typ, ok = castTypes[strings.ToLower(name)]
	return typ, p + 1, ok
}

// singleQuoted decodes the '...' string at from (only \\ and \' escape)
// and returns the position after it.
func (lx *lexer) singleQuoted(from int) (string, int, error) {
	s := lx.src
	var b strings.Builder
	for p := from + 1; p < len(s); p++ {
		switch s[p] {
		case '\\':
			if p+1 < len(s) && (s[p+1] == '\\' || s[p+1] == '\'') {
				b.WriteByte(s[p+1])
				p++
				continue
			}
			b.WriteByte('\\')
		case '\'':
			return b.String(), p + 1, nil
		default:
			b.WriteByte(s[p])
		}
	}
	return "", 0, lx.errf("unterminated string")
}

// doubleQuoted decodes a double-quoted (or backtick) string whose body
// starts at from. interp reports an unescaped "$name", "${" or "{$", which
// only PHP can evaluate; the end is still found past {$a["k"]}.
func (lx *lexer) doubleQuoted(from int, quote byte) (val string, interp bool, end int, err error) {
	s := lx.src
	var b strings.Builder
	p := from
	for p < len(s) {
		c := s[p]
		switch {
		case c == quote:
			return b.String(), interp, p + 1, nil
		case c == '\\' && p+1 < len(s):
			n, adv := decodeEscape(s[p+1:], quote)
			b.WriteString(n)
			p += 1 + adv
		case c == '$' && p+1 < len(s) && (isNameStart(s[p+1]) || s[p+1] == '{'):
			interp = true
			if s[p+1] == '{' {
				q, err := lx.skipBraces(p + 1)
				if err != nil {
					return "", false, 0, err
				}
				p = q
				continue
			}
			p++
		case c == '{' && p+1 < len(s) && s[p+1] == '$':
			interp = true
			q, err := lx.skipBraces(p)
			if err != nil {
				return "", false, 0, err
			}
			p = q
		default:
			b.WriteByte(c)
			p++
		}
	}
	return "", false, 0, lx.errf("unterminated string")
}

// skipBraces returns the position after the '}' matching the '{' at from.
func (lx *lexer) skipBraces(from int) (int, error) {
	s := lx.src
	depth := 0
	for p := from; p < len(s); p++ {
		switch s[p] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return p + 1, nil
			}
		case '\'', '"':
			q := s[p]
			p++
			for p < len(s) && s[p] != q {
				if s[p] == '\\' {
					p++
				}
				p++
			}
		}
	}
	return 0, lx.errf("unterminated interpolation")
}

// decodeEscape decodes the escape that rest starts with (after a
// backslash) and says how many bytes it used; unknown ones keep the backslash.
func decodeEscape(rest string, quote byte) (string, int) {
	c := rest[0]
	if i := strings.IndexByte("ntrvef\\$", c); i >= 0 { // a one-letter escape: the byte at its index
		return "\n\t\r\v\x1b\f\\$"[i : i+1], 1
	}
	switch c {
	case quote:
		return string(quote), 1
	case 'x':
		n := 1
		for n < len(rest) && n < 3 && isHex(rest[n]) {
			n++
		}
		if n == 1 {
			return "\\x", 1
		}
		v, _ := strconv.ParseUint(rest[1:n], 16, 8)
		return string([]byte{byte(v)}), n
	case 'u':
		if len(rest) > 1 && rest[1] == '{' {
			close := strings.IndexByte(rest, '}')
			if close > 2 {
				v, err := strconv.ParseUint(rest[2:close], 16, 32)
				if err == nil && v <= utf8.MaxRune {
					return string(encodeRuneLoose(rune(v))), close + 1
				}
			}
		}
		return "\\u", 1
	}
	if c >= '0' && c <= '7' {
		n := 1
		for n < len(rest) && n < 3 && rest[n] >= '0' && rest[n] <= '7' {
			n++
		}
		v, _ := strconv.ParseUint(rest[:n], 8, 16)
		return string([]byte{byte(v)}), n // PHP keeps the low byte of "\777"
	}
	return "\\" + string(c), 1
}

// encodeRuneLoose encodes r as UTF-8 the way PHP's \u{} does, surrogates
// included (Go's encoder would replace them with U+FFFD).
func encodeRuneLoose(r rune) []byte {
	if r >= 0xD800 && r <= 0xDFFF {
		return []byte{0xED, byte(0x80 | (r>>6)&0x3F), byte(0x80 | r&0x3F)}
	}
	return utf8.AppendRune(nil, r)
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// heredoc returns the end of the heredoc or nowdoc at lx.pos; the closing
// label may be indented (PHP 7.3+) and is followed by no name character.
func (lx *lexer) heredoc() (int, error) {
	s := lx.src
	p := lx.pos + 3
	for p < len(s) && (s[p] == ' ' || s[p] == '\t') {
		p++
	}
	var q byte
	if p < len(s) && (s[p] == '\'' || s[p] == '"') {
		q = s[p]
		p++
	}
	ls := p
	for p < len(s) && isNameChar(s[p]) {
		p++
	}
	label := s[ls:p]
	if label == "" || !isNameStart(label[0]) {
		return 0, lx.errf("bad heredoc label")
	}
	if q != 0 {
		if p >= len(s) || s[p] != q {
			return 0, lx.errf("bad heredoc label")
		}
		p++
	}
	nl := strings.IndexByte(s[p:], '\n')
	if nl < 0 {
		return 0, lx.errf("unterminated heredoc")
	}
	p += nl + 1
	for p < len(s) {
		l := p
		for l < len(s) && (s[l] == ' ' || s[l] == '\t') {
			l++
		}
		if strings.HasPrefix(s[l:], label) && (l+len(label) >= len(s) || !isNameChar(s[l+len(label)])) {
			return l + len(label), nil
		}
		nl := strings.IndexByte(s[p:], '\n')
		if nl < 0 {
			break
		}
		p += nl + 1
	}
	return 0, lx.errf("unterminated heredoc")
}

// number lexes an int or float literal: decimal, 0x, 0b, 0o, legacy octal,
// '_' separators; an int that overflows is a float, as in PHP.
func (lx *lexer) number() (token, error) {
	s := lx.src
	start := lx.pos
	p := start
	isDigit := func(c byte) bool { return c >= '0' && c <= '9' }
	digitsFrom := func(p int, ok func(byte) bool) int {
		for p < len(s) && (ok(s[p]) || s[p] == '_') {
			p++
		}
		return p
	}
	if p+1 < len(s) && s[p] == '0' && strings.ContainsRune("xXbBoO", rune(s[p+1])) {
		p = digitsFrom(p+2, isHex)
	} else {
		p = digitsFrom(p, isDigit)
		if p < len(s) && s[p] == '.' && !(p+1 < len(s) && s[p+1] == '.') {
			p = digitsFrom(p+1, isDigit)
		}
		if p < len(s) && (s[p] == 'e' || s[p] == 'E') {
			q := p + 1
			if q < len(s) && (s[q] == '+' || s[q] == '-') {
				q++
			}
			if q < len(s) && isDigit(s[q]) {
				p = digitsFrom(q, isDigit)
			}
		}
	}
	text := s[start:p]
	t := token{kind: tInt, text: text, start: start, end: p, line: lx.line}
	lx.advance(p)
	clean := strings.ReplaceAll(text, "_", "")
	lower := strings.ToLower(clean)
	base, digits := 10, clean
	switch {
	case strings.HasPrefix(lower, "0x"):
		base, digits = 16, clean[2:]
	case strings.HasPrefix(lower, "0b"):
		base, digits = 2, clean[2:]
	case strings.HasPrefix(lower, "0o"):
		base, digits = 8, clean[2:]
	case strings.ContainsAny(clean, ".eE"):
		f, err := strconv.ParseFloat(clean, 64)
		if err != nil && !isRangeErr(err) {
			return token{}, lx.errf("bad number %q", text)
		}
		t.kind, t.f = tFloat, f
		return t, nil
	case len(clean) > 1 && clean[0] == '0':
		base, digits = 8, clean[1:]
	}
	if digits == "" {
		return token{}, lx.errf("bad number %q", text)
	}
	u, err := strconv.ParseUint(digits, base, 64)
	if err != nil && !isRangeErr(err) {
		return token{}, lx.errf("bad number %q", text)
	}
	if err != nil || u > 1<<63-1 {
		t.kind, t.f = tFloat, overflowFloat(digits, base)
		return t, nil
	}
	t.i = int64(u)
	return t, nil
}

// overflowFloat is the float PHP gives an integer literal too big for
// int64. Decimal is rounded correctly (zend_strtod); the others accumulate
// digit by digit like zend_hex_strtod, and zend_bin_strtod and
// zend_oct_strtod, whose "value * base + c - '0'" rounds twice per digit.
func overflowFloat(digits string, base int) float64 {
	if base == 10 {
		f, _ := strconv.ParseFloat(digits, 64)
		return f
	}
	f := 0.0
	for i := 0; i < len(digits); i++ {
		c := digits[i]
		scaled := float64(f * float64(base)) // the conversion forbids fusing into an FMA
		if base == 16 {
			d, _ := strconv.ParseUint(digits[i:i+1], 16, 8)
			f = scaled + float64(d)
			continue
		}
		f = float64(scaled+float64(c)) - float64('0')
	}
	return f
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}
