package phpconf

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// maxNesting bounds how deeply arrays (and expressions) may nest. Laravel
// configs nest a handful of levels; the bound keeps hostile input from
// exhausting the stack.
const maxNesting = 100

// CacheError says why a file is not a config cache, and where.
type CacheError struct {
	File string
	Line int
	Msg  string
}

func (e *CacheError) Error() string {
	return fmt.Sprintf("%s:%d: not a Laravel config cache: %s", e.File, e.Line, e.Msg)
}

// ParseCache parses bootstrap/cache/config.php as written by `php artisan
// config:cache`: "<?php return " + var_export($config, true) + ";". It
// accepts exactly var_export's grammar: array ( k => v, ... ), int and
// single-quoted string keys, strings (with "\0" concatenations for NUL
// bytes), ints (PHP_INT_MIN as -9223372036854775807-1), floats (NAN, INF,
// -INF, 1.0E+25), true, false and NULL. Objects and enum cases
// (\Foo::__set_state(array(...)), (object) array(...), \Foo::Bar) become
// KindUnknown values instead of failing the file. file names the positions.
func ParseCache(file string, src []byte) (*Value, error) {
	text := string(src)
	toks, err := tokenize(text)
	if err != nil {
		if le, ok := err.(*lexError); ok {
			return nil, &CacheError{file, le.line, le.msg}
		}
		return nil, &CacheError{file, 1, err.Error()}
	}
	p := &cacheParser{file: file, src: text, toks: toks}
	return p.parse()
}

type cacheParser struct {
	file  string
	src   string
	toks  []token
	pos   int
	depth int
}

func (p *cacheParser) peek() token { return p.toks[p.pos] }

func (p *cacheParser) peekAt(n int) token {
	if p.pos+n < len(p.toks) {
		return p.toks[p.pos+n]
	}
	return p.toks[len(p.toks)-1]
}

func (p *cacheParser) take() token {
	t := p.toks[p.pos]
	if t.kind != tEOF {
		p.pos++
	}
	return t
}

func (p *cacheParser) fail(t token, format string, args ...any) error {
	return &CacheError{p.file, t.line, fmt.Sprintf(format, args...)}
}

func isOp(t token, op string) bool { return t.kind == tOp && t.text == op }

// isName matches a keyword or one of true, false and null, which PHP reads
// in any case.
func isName(t token, name string) bool { return t.kind == tName && strings.EqualFold(t.text, name) }

// isConst matches a constant such as NAN, whose name is case-sensitive.
func isConst(t token, name string) bool {
	return t.kind == tName && strings.TrimPrefix(t.text, "\\") == name
}

func (p *cacheParser) expectOp(op string) error {
	t := p.take()
	if !isOp(t, op) {
		return p.fail(t, "expected %q, found %q", op, t.text)
	}
	return nil
}

func (p *cacheParser) parse() (*Value, error) {
	t := p.take()
	if !isName(t, "return") {
		return nil, p.fail(t, "expected return, found %q", t.text)
	}
	v, err := p.value()
	if err != nil {
		return nil, err
	}
	if v.Kind != KindArray {
		return nil, p.fail(t, "the returned value is not an array")
	}
	if end := p.take(); !isOp(end, ";") && end.kind != tCloseTag {
		return nil, p.fail(end, "expected \";\", found %q", end.text)
	}
	if t := p.take(); t.kind != tEOF && t.kind != tCloseTag {
		return nil, p.fail(t, "unexpected %q after the returned array", t.text)
	}
	return v, nil
}

func (p *cacheParser) pos0(t token) Pos { return Pos{File: p.file, Line: t.line} }

// value parses one var_export value.
func (p *cacheParser) value() (*Value, error) {
	t := p.peek()
	switch {
	case isName(t, "array") && isOp(p.peekAt(1), "("):
		return p.array()
	case t.kind == tString:
		s, err := p.str()
		if err != nil {
			return nil, err
		}
		return &Value{Kind: KindString, Str: s, Pos: p.pos0(t)}, nil
	case t.kind == tInt || t.kind == tFloat || isOp(t, "-") || isConst(t, "NAN") || isConst(t, "INF"):
		return p.number()
	case isName(t, "true") || isName(t, "false"):
		p.take()
		return &Value{Kind: KindBool, Bool: isName(t, "true"), Pos: p.pos0(t)}, nil
	case isName(t, "null"):
		p.take()
		return &Value{Kind: KindNull, Pos: p.pos0(t)}, nil
	case t.kind == tName && isOp(p.peekAt(1), "::"):
		return p.object()
	case t.kind == tCast && t.val == "object":
		p.take()
		if !isName(p.peek(), "array") {
			return nil, p.fail(p.peek(), "expected array after (object)")
		}
		if _, err := p.array(); err != nil {
			return nil, err
		}
		return p.unknown(t), nil
	}
	return nil, p.fail(t, "unexpected %q", t.text)
}

// unknown makes the KindUnknown value for the tokens from t to the current position.
func (p *cacheParser) unknown(t token) *Value {
	end := p.toks[p.pos-1].end
	return &Value{Kind: KindUnknown, Pos: p.pos0(t), Expr: collapseExpr(p.src[t.start:end])}
}

// object parses \Class::__set_state(array(...)) or an enum case
// \Class::Case. var_export never writes Class::class, but PHP reads it as
// the class name, so it is that string here too (as in EvalConfig).
func (p *cacheParser) object() (*Value, error) {
	t := p.take()
	p.take() // ::
	m := p.take()
	if m.kind != tName {
		return nil, p.fail(m, "expected a name after ::")
	}
	if bare := strings.TrimPrefix(t.text, "\\"); strings.EqualFold(m.text, "class") && !isOp(p.peek(), "(") && !isSelfOrStatic(bare) {
		return &Value{Kind: KindString, Str: bare, Pos: p.pos0(t)}, nil
	}
	if isOp(p.peek(), "(") {
		p.take()
		if _, err := p.array(); err != nil {
			return nil, err
		}
		if err := p.expectOp(")"); err != nil {
			return nil, err
		}
	}
	return p.unknown(t), nil
}

// str parses a string literal, or var_export's concatenation of them.
func (p *cacheParser) str() (string, error) {
	var b strings.Builder
	for {
		t := p.take()
		if t.kind != tString {
			return "", p.fail(t, "expected a string, found %q", t.text)
		}
		if t.interp {
			return "", p.fail(t, "interpolated string")
		}
		b.WriteString(t.val)
		if !isOp(p.peek(), ".") {
			return b.String(), nil
		}
		p.take()
	}
}

// number parses ints, floats, NAN, INF, their negations, and var_export's
// PHP_INT_MIN spelling -9223372036854775807-1.
func (p *cacheParser) number() (*Value, error) {
	first := p.peek()
	neg := false
	if isOp(first, "-") {
		neg = true
		p.take()
	}
	t := p.take()
	v := &Value{Pos: p.pos0(first)}
	switch {
	case t.kind == tInt:
		v.Kind, v.Int = KindInt, t.i
		if neg {
			v.Int = -t.i
		}
	case t.kind == tFloat:
		v.Kind, v.Float = KindFloat, t.f
		if neg {
			v.Float = -t.f
		}
	case isConst(t, "NAN") && !neg:
		v.Kind, v.Float = KindFloat, math.NaN()
	case isConst(t, "INF"):
		v.Kind, v.Float = KindFloat, math.Inf(1)
		if neg {
			v.Float = math.Inf(-1)
		}
	default:
		return nil, p.fail(t, "expected a number, found %q", t.text)
	}
	if v.Kind == KindInt && neg && v.Int == -math.MaxInt64 && isOp(p.peek(), "-") {
		if one := p.peekAt(1); one.kind == tInt && one.i == 1 {
			p.take()
			p.take()
			v.Int = math.MinInt64
		}
	}
	return v, nil
}

// array parses "array ( key => value, ... )" with a trailing comma allowed.
func (p *cacheParser) array() (*Value, error) {
	open := p.take() // array
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxNesting {
		return nil, p.fail(open, "arrays nested deeper than %d", maxNesting)
	}
	if err := p.expectOp("("); err != nil {
		return nil, err
	}
	v := &Value{Kind: KindArray, Pos: p.pos0(open)}
	b := newArrayBuilder(v)
	for !isOp(p.peek(), ")") {
		kt := p.peek()
		var key string
		switch {
		case kt.kind == tString:
			s, err := p.str()
			if err != nil {
				return nil, err
			}
			key = s
		case kt.kind == tInt || kt.kind == tFloat || isOp(kt, "-"):
			// var_export writes the key PHP_INT_MIN as -9223372036854775808,
			// which PHP reads as a float and converts back to that int key.
			n, err := p.number()
			if err != nil {
				return nil, err
			}
			switch {
			case n.Kind == KindInt:
				key = strconv.FormatInt(n.Int, 10)
			case n.Kind == KindFloat && !math.IsNaN(n.Float) && !math.IsInf(n.Float, 0):
				key = strconv.FormatInt(floatToInt(n.Float), 10)
			default:
				return nil, p.fail(kt, "array key is not a number")
			}
		default:
			return nil, p.fail(kt, "expected an array key, found %q", kt.text)
		}
		if err := p.expectOp("=>"); err != nil {
			return nil, err
		}
		val, err := p.value()
		if err != nil {
			return nil, err
		}
		b.set(key, val)
		if isOp(p.peek(), ",") {
			p.take()
			continue
		}
		if !isOp(p.peek(), ")") {
			return nil, p.fail(p.peek(), "expected \",\" or \")\", found %q", p.peek().text)
		}
	}
	p.take()
	return v, nil
}

// arrayBuilder adds entries to an array value with PHP's rules: a repeated
// key replaces the value in place, and a key-less element gets the next int
// key (one more than the largest int key so far, or 0).
type arrayBuilder struct {
	v       *Value
	index   map[string]int
	nextInt int64
	hasInt  bool
	full    bool // the next int key would overflow: PHP refuses to append
}

func newArrayBuilder(v *Value) *arrayBuilder {
	return &arrayBuilder{v: v, index: map[string]int{}}
}

// set stores val under key, which must already be canonical (see Entry).
func (b *arrayBuilder) set(key string, val *Value) {
	if n, ok := isIntKeyString(key); ok {
		b.noteInt(n)
	}
	if i, ok := b.index[key]; ok {
		b.v.Entries[i].Value = val
		return
	}
	b.index[key] = len(b.v.Entries)
	b.v.Entries = append(b.v.Entries, Entry{Key: key, Value: val})
}

func (b *arrayBuilder) noteInt(n int64) {
	if !b.hasInt || n >= b.nextInt {
		if n == math.MaxInt64 {
			b.full = true
		} else {
			b.nextInt = n + 1
		}
		b.hasInt = true
	}
}

// push appends val under the next int key; ok is false when PHP would fail
// ("Cannot add element to the array as the next element is already occupied").
func (b *arrayBuilder) push(val *Value) bool {
	if b.full {
		return false
	}
	n := int64(0)
	if b.hasInt {
		n = b.nextInt
	}
	b.set(strconv.FormatInt(n, 10), val)
	return true
}

// addUnknownKey appends an entry whose key could not be evaluated.
func (b *arrayBuilder) addUnknownKey(keyExpr string, val *Value) {
	b.v.Entries = append(b.v.Entries, Entry{Key: keyExpr, Value: val, KeyUnknown: true})
}
