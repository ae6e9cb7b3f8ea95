// Package phpser reads PHP's serialize() format for display. It is a
// bounded reader: it never writes serialized data back, never instantiates
// anything, and refuses input deeper or larger than its limits with a clear
// error instead of exhausting memory. String lengths are in bytes, as PHP
// writes them.
package phpser

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Kind is the type of a decoded value.
type Kind int

const (
	Null   Kind = iota // N;
	Bool               // b:
	Int                // i:
	Float              // d:
	String             // s: and S:
	Array              // a:
	Object             // O:
	Custom             // C: (Serializable::serialize payload, kept raw in Str)
	Ref                // r: and R: (Int holds the 1-based value number)
	Enum               // E: (Class and Str hold the enum and the case)
)

// Visibility of an object property, from the name's NUL markers.
type Visibility int

const (
	Public    Visibility = iota // "name"
	Protected                   // "\0*\0name"
	Private                     // "\0Class\0name"
)

// Value is one decoded node. Which fields are set depends on Kind.
type Value struct {
	Kind  Kind
	Bool  bool
	Int   int64
	Float float64
	Str   string // String bytes; Custom raw data; Enum case name
	Class string // Object, Custom, Enum
	// ByRef marks R: references (PHP &), as opposed to r: object handles.
	ByRef bool
	Items []Item // Array entries in order
	Props []Prop // Object properties in order
	// Start and End delimit the value's bytes in the decoded input, so a
	// caller can rewrite one value and keep the rest byte for byte.
	Start, End int
}

// Item is one array entry; Key is an Int or a String value.
type Item struct {
	Key   Value
	Value Value
}

// Prop is one object property with its visibility markers decoded.
type Prop struct {
	Name           string
	Visibility     Visibility
	DeclaringClass string // the class that declared a private property
	Value          Value
}

// Limits bound the work Decode does on hostile input.
type Limits struct {
	MaxDepth int // nesting of arrays and objects
	MaxNodes int // values decoded in total
}

// ErrSyntax is wrapped by every error about malformed or truncated input.
var ErrSyntax = errors.New("invalid PHP serialization")

// ErrLimit is wrapped when the input exceeds the decoding limits.
var ErrLimit = errors.New("PHP serialization too large or too deep")

// Error tells where decoding stopped.
type Error struct {
	Offset int
	Msg    string
	kind   error
}

func (e *Error) Error() string {
	return fmt.Sprintf("%v at byte %d: %s", e.kind, e.Offset, e.Msg)
}

func (e *Error) Unwrap() error { return e.kind }

// Decode reads one value spanning s, within limits wide for real commands.
func Decode(s string) (Value, error) {
	return DecodeWithLimits(s, Limits{MaxDepth: 64, MaxNodes: 200_000})
}

// DecodeWithLimits is Decode with explicit limits.
func DecodeWithLimits(s string, lim Limits) (Value, error) {
	d := decoder{s: s, lim: lim}
	v, err := d.value(0)
	if err != nil {
		return Value{}, err
	}
	if d.pos != len(s) {
		return Value{}, d.syntax("unexpected data after the value")
	}
	return v, nil
}

type decoder struct {
	s     string
	pos   int
	nodes int
	lim   Limits
}

func (d *decoder) syntax(format string, args ...any) error {
	return &Error{Offset: d.pos, Msg: fmt.Sprintf(format, args...), kind: ErrSyntax}
}

func (d *decoder) limit(format string, args ...any) error {
	return &Error{Offset: d.pos, Msg: fmt.Sprintf(format, args...), kind: ErrLimit}
}

func (d *decoder) value(depth int) (Value, error) {
	start := d.pos
	v, err := d.node(depth)
	v.Start, v.End = start, d.pos
	return v, err
}

func (d *decoder) node(depth int) (Value, error) {
	d.nodes++
	if d.nodes > d.lim.MaxNodes {
		return Value{}, d.limit("more than %d values", d.lim.MaxNodes)
	}
	if d.pos >= len(d.s) {
		return Value{}, d.syntax("unexpected end of input")
	}
	tag := d.s[d.pos]
	if tag == 'N' {
		d.pos++
		return Value{Kind: Null}, d.expect(';')
	}
	d.pos++
	if err := d.expect(':'); err != nil {
		return Value{}, err
	}
	switch tag {
	case 'b':
		n, err := d.intUntil(';')
		if err != nil {
			return Value{}, err
		}
		if n != 0 && n != 1 {
			return Value{}, d.syntax("bool must be 0 or 1, got %d", n)
		}
		return Value{Kind: Bool, Bool: n == 1}, nil
	case 'i':
		n, err := d.intUntil(';')
		return Value{Kind: Int, Int: n}, err
	case 'd':
		f, err := d.float()
		return Value{Kind: Float, Float: f}, err
	case 's', 'S':
		str, err := d.counted("string length", '"', '"', tag == 'S')
		if err != nil {
			return Value{}, err
		}
		return Value{Kind: String, Str: str}, d.expect(';')
	case 'r', 'R':
		n, err := d.intUntil(';')
		if err != nil {
			return Value{}, err
		}
		if n < 1 {
			return Value{}, d.syntax("reference to value %d", n)
		}
		return Value{Kind: Ref, Int: n, ByRef: tag == 'R'}, nil
	case 'E':
		str, err := d.counted("string length", '"', '"', false)
		if err != nil {
			return Value{}, err
		}
		class, name, ok := strings.Cut(str, ":")
		if !ok || class == "" || name == "" {
			return Value{}, d.syntax("enum %q is not Class:Case", str)
		}
		return Value{Kind: Enum, Class: class, Str: name}, d.expect(';')
	case 'a':
		items, err := d.items(depth, "array size")
		return Value{Kind: Array, Items: items}, err
	case 'O':
		return d.object(depth)
	case 'C':
		return d.custom()
	}
	d.pos -= 2
	return Value{}, d.syntax("unknown type %q", tag)
}

func (d *decoder) expect(c byte) error {
	if d.pos >= len(d.s) {
		return d.syntax("unexpected end of input, want %q", c)
	}
	if d.s[d.pos] != c {
		return d.syntax("want %q, got %q", c, d.s[d.pos])
	}
	d.pos++
	return nil
}

// intUntil reads a decimal integer terminated by end.
func (d *decoder) intUntil(end byte) (int64, error) {
	start := d.pos
	i := strings.IndexByte(d.s[start:], end)
	if i < 0 {
		return 0, d.syntax("unterminated number")
	}
	text := d.s[start : start+i]
	n, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		return 0, d.syntax("bad integer %q", truncate(text))
	}
	d.pos = start + i + 1
	return n, nil
}

func (d *decoder) float() (float64, error) {
	i := strings.IndexByte(d.s[d.pos:], ';')
	if i < 0 {
		return 0, d.syntax("unterminated float")
	}
	text := d.s[d.pos : d.pos+i]
	// ParseFloat reads PHP's INF, -INF and NAN; it must not read any other
	// spelling of them, nor Go's hex floats and digit separators.
	f, err := strconv.ParseFloat(text, 64)
	if text != "INF" && text != "-INF" && text != "NAN" &&
		(err != nil && !errors.Is(err, strconv.ErrRange) || text == "" || strings.ContainsAny(text, "xXpP_iInN")) {
		return 0, d.syntax("bad float %q", truncate(text))
	}
	d.pos += i + 1
	return f, nil
}

// count reads the "N:" length or count prefix and checks it against what is
// left of the input, so a hostile count cannot make us allocate or loop.
func (d *decoder) count(what string, minBytesEach int) (int, error) {
	n, err := d.intUntil(':')
	if err != nil {
		return 0, err
	}
	if n < 0 {
		return 0, d.syntax("negative %s %d", what, n)
	}
	// Division, not n*minBytesEach: a count near MaxInt64 (PHP accepts any
	// digits) would overflow the product, pass the check and reach make().
	// Once n fits the remaining input, every later offset sum pos+n stays
	// within len(s), so no other size computation can overflow.
	if remaining := int64(len(d.s) - d.pos); n > remaining/int64(minBytesEach) {
		return 0, d.syntax("%s %d exceeds the remaining %d bytes", what, n, remaining)
	}
	return int(n), nil
}

// maxPrealloc caps the capacity reserved from a declared count: a count is
// only checked against the bytes left, and an Item is far larger than the 6
// bytes of an entry, so nested arrays each declaring all the input would
// reserve hundreds of times its size. Past the cap, append grows as needed.
const maxPrealloc = 256

// counted reads `N:`, open, N bytes and end: a string's `N:"bytes"`, a
// class name, a custom object's data. escaped selects the S: form, where
// "\xx" is a hex-escaped byte and N counts decoded bytes.
func (d *decoder) counted(what string, open, end byte, escaped bool) (string, error) {
	n, err := d.count(what, 1)
	if err != nil {
		return "", err
	}
	if err := d.expect(open); err != nil {
		return "", err
	}
	var str string
	if escaped {
		if str, err = d.unescape(n); err != nil {
			return "", err
		}
	} else {
		if d.pos+n > len(d.s) {
			return "", d.syntax("%s %d runs past the end", what, n)
		}
		str = d.s[d.pos : d.pos+n]
		d.pos += n
	}
	return str, d.expect(end)
}

func (d *decoder) unescape(n int) (string, error) {
	var b strings.Builder
	b.Grow(n) // n <= the bytes left (count), and each decoded byte takes at least one
	for b.Len() < n {
		if d.pos >= len(d.s) {
			return "", d.syntax("escaped string runs past the end")
		}
		c := d.s[d.pos]
		if c != '\\' {
			b.WriteByte(c)
			d.pos++
			continue
		}
		if d.pos+3 > len(d.s) {
			return "", d.syntax("truncated escape")
		}
		v, err := strconv.ParseUint(d.s[d.pos+1:d.pos+3], 16, 8)
		if err != nil {
			return "", d.syntax("bad escape %q", d.s[d.pos:d.pos+3])
		}
		b.WriteByte(byte(v))
		d.pos += 3
	}
	return b.String(), nil
}

// items reads an array's or object's "{key value …}"; keys: ints, strings.
func (d *decoder) items(depth int, what string) ([]Item, error) {
	if depth+1 > d.lim.MaxDepth {
		return nil, d.limit("nested deeper than %d", d.lim.MaxDepth)
	}
	// The shortest entry, "i:0;N;", is 6 bytes.
	n, err := d.count(what, 6)
	if err != nil {
		return nil, err
	}
	if err := d.expect('{'); err != nil {
		return nil, err
	}
	items := make([]Item, 0, min(n, maxPrealloc))
	for range n {
		if d.pos < len(d.s) && d.s[d.pos] != 'i' && d.s[d.pos] != 's' && d.s[d.pos] != 'S' {
			return nil, d.syntax("key must be an int or a string, got %q", d.s[d.pos])
		}
		key, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		val, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		items = append(items, Item{Key: key, Value: val})
	}
	return items, d.expect('}')
}

func (d *decoder) className() (string, error) {
	class, err := d.counted("class name length", '"', '"', false)
	if err == nil && class == "" {
		err = d.syntax("empty class name")
	}
	if err != nil {
		return "", err
	}
	return class, d.expect(':')
}

func (d *decoder) object(depth int) (Value, error) {
	class, err := d.className()
	if err != nil {
		return Value{}, err
	}
	items, err := d.items(depth, "property count")
	v := Value{Kind: Object, Class: class, Props: make([]Prop, len(items))}
	for i, it := range items {
		v.Props[i] = propFromKey(it.Key, it.Value)
	}
	return v, err
}

func (d *decoder) custom() (Value, error) {
	class, err := d.className()
	if err != nil {
		return Value{}, err
	}
	data, err := d.counted("custom data length", '{', '}', false)
	return Value{Kind: Custom, Class: class, Str: data}, err
}

// propFromKey decodes the NUL markers PHP puts in property names.
func propFromKey(key, val Value) Prop {
	if key.Kind == Int {
		return Prop{Name: strconv.FormatInt(key.Int, 10), Value: val}
	}
	name := key.Str
	if len(name) > 0 && name[0] == 0 {
		if end := strings.IndexByte(name[1:], 0); end >= 0 {
			class, rest := name[1:1+end], name[2+end:]
			if class == "*" {
				return Prop{Name: rest, Visibility: Protected, Value: val}
			}
			return Prop{Name: rest, Visibility: Private, DeclaringClass: class, Value: val}
		}
	}
	return Prop{Name: name, Value: val}
}

func truncate(s string) string {
	if len(s) > 32 {
		return s[:32] + "…"
	}
	return s
}
