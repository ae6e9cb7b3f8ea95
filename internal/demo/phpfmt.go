package demo

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The ser* helpers build PHP serialize() output, lengths in bytes as PHP
// counts them.

func serStr(s string) string { return "s:" + strconv.Itoa(len(s)) + `:"` + s + `";` }
func serInt(n int64) string  { return "i:" + strconv.FormatInt(n, 10) + ";" }
func serBool(v bool) string {
	if v {
		return "b:1;"
	}
	return "b:0;"
}

const serNull = "N;"

func serFloat(f float64) string { return "d:" + strconv.FormatFloat(f, 'f', -1, 64) + ";" }

// prop is an object property: its name as PHP mangles it and serialized value.
type prop struct{ name, value string }

func protected(name string) string      { return "\x00*\x00" + name }
func private(class, name string) string { return "\x00" + class + "\x00" + name }
func serObject(class string, props []prop) string {
	return "O:" + strconv.Itoa(len(class)) + `:"` + class + `":` + strconv.Itoa(len(props)) + ":{" + serProps(props) + "}"
}

// serList serializes a list of serialized values.
func serList(values []string) string {
	var b strings.Builder
	b.WriteString("a:" + strconv.Itoa(len(values)) + ":{")
	for i, v := range values {
		b.WriteString(serInt(int64(i)))
		b.WriteString(v)
	}
	b.WriteString("}")
	return b.String()
}

// serMap serializes a PHP array with string keys, in the given order.
func serMap(kv []prop) string { return "a:" + strconv.Itoa(len(kv)) + ":{" + serProps(kv) + "}" }

func serProps(props []prop) string {
	var b strings.Builder
	for _, p := range props {
		b.WriteString(serStr(p.name))
		b.WriteString(p.value)
	}
	return b.String()
}

// queueableProps are what Laravel 8.83's Queueable and InteractsWithQueue
// add to every job, in order; queue "" is null (the connection's default).
func queueableProps(withJob bool, queue string) []prop {
	q := serNull
	if queue != "" {
		q = serStr(queue)
	}
	ps := []prop{}
	if withJob {
		ps = append(ps, prop{"job", serNull})
	}
	return append(ps,
		prop{"connection", serNull},
		prop{"queue", q},
		prop{"chainConnection", serNull},
		prop{"chainQueue", serNull},
		prop{"chainCatchCallbacks", serNull},
		prop{"delay", serNull},
		prop{"afterCommit", serNull},
		prop{"middleware", "a:0:{}"},
		prop{"chained", "a:0:{}"},
	)
}

// modelIdentifier is how SerializesModels stores an Eloquent model.
func modelIdentifier(class string, id int64, connection string) string {
	return serObject(`Illuminate\Contracts\Database\ModelIdentifier`, []prop{
		{"class", serStr(class)},
		{"id", serInt(id)},
		{"relations", "a:0:{}"},
		{"connection", serStr(connection)},
	})
}

// phpJSONString is json_encode($s, JSON_UNESCAPED_UNICODE): '/' is "\/",
// control characters \b \f \n \r \t or \u00xx, U+2028 and U+2029 escaped,
// other text UTF-8, invalid UTF-8 (which PHP refuses) U+FFFD. encoding/json
// without HTML escapes differs only in '/' and in escaping U+FFFD.
func phpJSONString(s string) string {
	if !utf8.ValidString(s) {
		var b strings.Builder
		for _, r := range s { // U+FFFD for each invalid byte
			b.WriteRune(r)
		}
		s = b.String()
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.ReplaceAll(strings.TrimSuffix(b.String(), "\n"), "/", `\/`)
}

// jsonNullableInt renders an optional integer as PHP's json_encode does.
func jsonNullableInt(v *int64) string {
	if v == nil {
		return "null"
	}
	return strconv.FormatInt(*v, 10)
}
