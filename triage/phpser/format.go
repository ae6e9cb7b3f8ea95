package phpser

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// modelIdentifierClass is what SerializesModels stores a model as.
const modelIdentifierClass = `Illuminate\Contracts\Database\ModelIdentifier`

// isClosureClass reports the wrappers Laravel serializes closures into;
// their content (PHP source text, scope hashes) is noise in a triage view.
func isClosureClass(class string) bool {
	switch class {
	case `Laravel\SerializableClosure\SerializableClosure`,
		`Laravel\SerializableClosure\UnsignedSerializableClosure`,
		`Opis\Closure\SerializableClosure`,
		`Illuminate\Queue\SerializableClosure`:
		return true
	}
	return false
}

// FormatOptions tune Format.
type FormatOptions struct {
	// HideNoise drops the properties the Queueable/InteractsWithQueue traits
	// add to every job when they hold their defaults: job, connection,
	// queue, chainConnection, chainQueue, chainCatchCallbacks, delay and
	// afterCommit when null, middleware and chained when empty. A property
	// with a real value (queue "emails", a delay) is always shown.
	HideNoise bool
	// MaxString cuts string values longer than this many bytes (0: 200).
	MaxString int
}

// FormatWith renders v as indented text. Strings are quoted with Go escapes,
// and names and classes have control and invisible characters escaped, so
// the output holds no terminal control sequences.
func FormatWith(v Value, opts FormatOptions) string {
	opts.MaxString = cmp.Or(max(opts.MaxString, 0), 200)
	f := formatter{opts: opts}
	f.value(v, 0)
	return f.b.String()
}

type formatter struct {
	b    strings.Builder
	opts FormatOptions
}

func (f *formatter) newline(depth int) {
	f.b.WriteByte('\n')
	for range depth {
		f.b.WriteString("  ")
	}
}

func (f *formatter) value(v Value, depth int) {
	switch v.Kind {
	case Null:
		f.b.WriteString("null")
	case Bool:
		f.b.WriteString(strconv.FormatBool(v.Bool))
	case Int:
		f.b.WriteString(strconv.FormatInt(v.Int, 10))
	case Float:
		f.b.WriteString(formatFloat(v.Float))
	case String:
		f.b.WriteString(f.quote(v.Str))
	case Ref:
		f.b.WriteString("&" + strconv.FormatInt(v.Int, 10))
	case Enum:
		f.b.WriteString(name(v.Class) + "::" + name(v.Str))
	case Custom:
		if isClosureClass(v.Class) {
			f.b.WriteString("Closure")
			return
		}
		f.b.WriteString(name(v.Class) + " (custom serialized, " + strconv.Itoa(len(v.Str)) + " bytes)")
	case Array:
		f.array(v, depth)
	case Object:
		f.object(v, depth)
	default:
		f.b.WriteString("?")
	}
}

func formatFloat(x float64) string {
	switch {
	case math.IsInf(x, 1):
		return "INF"
	case math.IsInf(x, -1):
		return "-INF"
	case math.IsNaN(x):
		return "NAN"
	}
	s := strconv.FormatFloat(x, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eEn") {
		s += ".0" // keep 3.0 distinguishable from the int 3
	}
	return s
}

func (f *formatter) quote(s string) string {
	cut := ""
	if len(s) > f.opts.MaxString {
		end := f.opts.MaxString
		for end > 0 && !utf8.RuneStart(s[end]) {
			end--
		}
		cut = "…(" + strconv.Itoa(len(s)) + " bytes)"
		s = s[:end]
	}
	return quoteString(s) + cut
}

// quoteString double-quotes s for display. Backslashes stay as they are, so
// class names read naturally ("App\Jobs\X" would not); quotes, control and
// invisible characters and invalid UTF-8 are escaped.
func quoteString(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			const hex = "0123456789abcdef"
			b.WriteString(`\x`)
			b.WriteByte(hex[s[i]>>4])
			b.WriteByte(hex[s[i]&0xf])
		case r == '"':
			b.WriteString(`\"`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case !unicode.IsPrint(r):
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	b.WriteByte('"')
	return b.String()
}

// isScalar reports values that fit on one line.
func isScalar(v Value) bool {
	switch v.Kind {
	case Array:
		return len(v.Items) == 0
	case Object:
		return isModelIdentifier(v) || isClosureClass(v.Class)
	}
	return true
}

func (f *formatter) array(v Value, depth int) {
	if len(v.Items) == 0 {
		f.b.WriteString("[]")
		return
	}
	if isInlineList(v.Items) {
		f.b.WriteByte('[')
		for i, it := range v.Items {
			if i > 0 {
				f.b.WriteString(", ")
			}
			f.value(it.Value, depth+1)
		}
		f.b.WriteByte(']')
		return
	}
	f.entries(depth, "[", "]", len(v.Items), func(i int) Value {
		if k := v.Items[i].Key; k.Kind == Int {
			f.b.WriteString(strconv.FormatInt(k.Int, 10))
		} else {
			f.b.WriteString(f.quote(k.Str))
		}
		f.b.WriteString(" => ")
		return v.Items[i].Value
	})
}

// entries writes n entries between open and close, one a line: each
// writes its label and returns its value.
func (f *formatter) entries(depth int, open, end string, n int, entry func(i int) Value) {
	f.b.WriteString(open)
	for i := range n {
		f.newline(depth + 1)
		f.value(entry(i), depth+1)
	}
	f.newline(depth)
	f.b.WriteString(end)
}

// isInlineList: a short list (keys 0, 1, …) of scalars, shown on one line.
func isInlineList(items []Item) bool {
	for i, it := range items {
		if it.Key.Kind != Int || it.Key.Int != int64(i) || !isScalar(it.Value) {
			return false
		}
	}
	return len(items) <= 16
}

func (f *formatter) object(v Value, depth int) {
	if isClosureClass(v.Class) {
		f.b.WriteString("Closure")
		return
	}
	if isModelIdentifier(v) {
		f.b.WriteString(modelIdentifier(v))
		return
	}
	f.b.WriteString(name(v.Class))
	props := v.Props
	if f.opts.HideNoise {
		props = slices.DeleteFunc(slices.Clone(props), isNoise)
	}
	if len(props) == 0 {
		f.b.WriteString(" {}")
		return
	}
	f.entries(depth, " {", "}", len(props), func(i int) Value {
		p := props[i]
		f.b.WriteString(name(p.Name))
		switch p.Visibility {
		case Protected:
			f.b.WriteString(" (protected)")
		case Private:
			f.b.WriteString(" (private")
			if p.DeclaringClass != v.Class {
				f.b.WriteString(" " + name(p.DeclaringClass))
			}
			f.b.WriteString(")")
		}
		f.b.WriteString(": ")
		return p.Value
	})
}

func isModelIdentifier(v Value) bool {
	if v.Kind != Object || v.Class != modelIdentifierClass {
		return false
	}
	class, ok := prop(v, "class")
	return ok && class.Kind == String
}

// modelIdentifier renders what SerializesModels stored in place of a model
// or an Eloquent collection: App\Models\Order#1042, App\Models\Order#[1,2,3].
func modelIdentifier(v Value) string {
	class, _ := prop(v, "class")
	var b strings.Builder
	b.WriteString(name(class.Str))
	b.WriteByte('#')
	id, _ := prop(v, "id")
	if id.Kind == Array {
		b.WriteByte('[')
		for i, it := range id.Items {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(idText(it.Value))
		}
		b.WriteByte(']')
	} else {
		b.WriteString(idText(id))
	}
	if conn, ok := prop(v, "connection"); ok && conn.Kind == String {
		b.WriteString(" (connection " + name(conn.Str) + ")")
	}
	if rel, ok := prop(v, "relations"); ok && rel.Kind == Array && len(rel.Items) > 0 {
		var names []string
		for _, it := range rel.Items {
			if it.Value.Kind == String {
				names = append(names, name(it.Value.Str))
			}
		}
		b.WriteString(" with " + strings.Join(names, ", "))
	}
	return b.String()
}

func idText(v Value) string {
	switch v.Kind {
	case Int:
		return strconv.FormatInt(v.Int, 10)
	case String:
		return name(v.Str)
	case Null:
		return "null"
	}
	return "?"
}

func prop(v Value, n string) (Value, bool) {
	for _, p := range v.Props {
		if p.Name == n {
			return p.Value, true
		}
	}
	return Value{}, false
}

// isNoise: a Queueable/InteractsWithQueue property at its default value.
func isNoise(p Prop) bool {
	if p.Visibility != Public {
		return false
	}
	switch p.Name {
	case "job", "connection", "queue", "chainConnection", "chainQueue", "chainCatchCallbacks", "delay", "afterCommit":
		return p.Value.Kind == Null
	case "middleware", "chained":
		return p.Value.Kind == Array && len(p.Value.Items) == 0
	}
	return false
}

// name makes an identifier from the data safe to print: class and property
// names are normally plain, but the bytes are attacker-controlled.
func name(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return r == utf8.RuneError || !unicode.IsPrint(r) }) {
		return s
	}
	q := quoteString(s)
	return q[1 : len(q)-1]
}
