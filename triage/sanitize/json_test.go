package sanitize

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// rawJSONString quotes s as a JSON string the way a careless writer would:
// quotes, backslashes and C0 controls escaped, everything else (invalid
// UTF-8, C1, bidi) left raw.
func rawJSONString(s string) []byte {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte("0123456789abcdef"[c>>4])
			b.WriteByte("0123456789abcdef"[c&0xf])
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return []byte(b.String())
}

func checkJSON(t *testing.T, s string) {
	t.Helper()
	js := []byte(`{"k":` + string(rawJSONString(s)) + `,"n":[1, 2]}`)
	got := JSON(js)
	if !json.Valid(got) || !utf8.Valid(got) {
		t.Fatalf("JSON(%q) = %q: not valid JSON in UTF-8", js, got)
	}
	if r, at, ok := Inert(string(got)); !ok {
		t.Fatalf("JSON(%q) = %q holds %U at %d", js, got, r, at)
	}
	var before, after map[string]any
	if err := json.Unmarshal(js, &before); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(got, &after); err != nil {
		t.Fatal(err)
	}
	if before["k"] != after["k"] {
		t.Errorf("JSON changed the value: %q → %q", before["k"], after["k"])
	}
}

func TestJSON(t *testing.T) {
	for _, s := range []string{"", "plain", "\x1b]52;c;ZXZpbA==\x07", "\u202eevil", "\xff\xfe", "a\u009bb", "日本語",
		"\U000e0041tag", "\u2028", "ok\ufffd"} {
		checkJSON(t, s)
	}
	if in := []byte(`{"a":"b"}`); &JSON(in)[0] != &in[0] {
		t.Error("ASCII JSON was copied")
	}
}

func FuzzJSON(f *testing.F) {
	for _, s := range []string{"", "\x1b]52;c;AAAA\x07", "\u202e", "\xff\xfe", "\xc2\x9b", "\U000e0041"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkJSON(t, s)
		if _, _, ok := Inert(Line(s)); !ok {
			t.Errorf("Line(%q) is not inert", s)
		}
	})
}
