package phpconf

import (
	"math"
	"os"
	"testing"
)

// parseCache reads a config cache as the app profile does: evaluated
// without env.
func parseCache(file string, src []byte) (*Value, error) {
	return EvalConfig(file, src, EvalContext{})
}

// testdata/var_export.php is real PHP 8.2 var_export output covering every
// value type (see the test for what it holds).
func TestParseCacheVarExport(t *testing.T) {
	src, err := os.ReadFile("testdata/var_export.php")
	if err != nil {
		t.Fatal(err)
	}
	v, err := parseCache("cache.php", src)
	if err != nil {
		t.Fatal(err)
	}
	floats := []float64{1.5, 1e25, math.Copysign(0, -1), math.NaN(), math.Inf(1), math.Inf(-1), 0.1, 1e-7, 100}
	f := v.Get("f")
	if len(f.Entries) != len(floats) {
		t.Fatalf("f has %d entries", len(f.Entries))
	}
	for i, want := range floats {
		got := f.Entries[i].Value
		if got.Kind != KindFloat || !(got.Float == want && math.Signbit(got.Float) == math.Signbit(want) || math.IsNaN(want) && math.IsNaN(got.Float)) {
			t.Errorf("f.%d = %+v, want %v", i, got, want)
		}
	}
	for i, want := range []int64{math.MinInt64, math.MaxInt64, -3, 0} {
		if got := v.Entries[1].Value.Entries[i].Value; got.Kind != KindInt || got.Int != want {
			t.Errorf("i.%d = %+v, want %d", i, got, want)
		}
	}
	for i, want := range []string{"a\x00b", "\x00", `it's \ x`, "\x00\x00", "multi\nline", "ü"} {
		if got := v.Get("s").Entries[i].Value; got.Kind != KindString || got.Str != want {
			t.Errorf("s.%d = %+v, want %q", i, got, want)
		}
	}
	if got := v.Get("-7"); got == nil || got.Kind != KindBool || !got.Bool {
		t.Errorf("-7 = %+v", got)
	}
	if got := v.Get("3"); got == nil || got.Kind != KindBool || got.Bool {
		t.Errorf("3 = %+v", got)
	}
	if got := v.Get("n"); got == nil || got.Kind != KindNull {
		t.Errorf("n = %+v", got)
	}
	for key, expr := range map[string]string{
		"x":  `\Suit::Hearts`,
		"o":  `\Foo::__set_state(array( 'a' => 1, ))`,
		"so": `(object) array( 'k' => array ( 0 => 1, ), )`,
	} {
		got := v.Get(key)
		if got == nil || got.Kind != KindUnknown || got.Expr != expr {
			t.Errorf("%s = %+v, want unknown %q", key, got, expr)
		}
	}
	if got := v.Get("e"); got == nil || got.Kind != KindArray || len(got.Entries) != 0 {
		t.Errorf("e = %+v", got)
	}
	if got := v.Get("after"); got == nil || got.Str != "ok" || got.Pos.String() != "cache.php:50" {
		t.Errorf("after = %+v", got)
	}
	if got := v.Get("s.4"); got.Pos.Line != 27 {
		t.Errorf("s.4 at line %d, want 27", got.Pos.Line)
	}
}

func TestParseCacheAccepts(t *testing.T) {
	for src, check := range map[string]func(*Value) bool{
		"<?php return array ( );\n":                           func(v *Value) bool { return v.Kind == KindArray },
		"<?php return array ( 'a' => TRUE, ) ?>":              func(v *Value) bool { return v.Get("a").Bool },
		"  <?PHP return array ( 0 => 1, 0 => 2, );":           func(v *Value) bool { return len(v.Entries) == 1 && v.Entries[0].Value.Int == 2 },
		"<?php return array ( 'k' => 'a' . 'b' . \"\\0\", );": func(v *Value) bool { return v.Get("k").Str == "ab\x00" },
		"<?php return array ( 'k' => \\App\\Mode::Fast, 'n' => 1 );": func(v *Value) bool {
			return v.Get("k").Kind == KindUnknown && v.Get("n").Int == 1
		},
		"<?php return array ( 'k' => 1.0E-5, 'm' => -9223372036854775807 - 1 );": func(v *Value) bool {
			return v.Get("k").Float == 1e-5 && v.Get("m").Int == math.MinInt64
		},
		// var_export's spelling of the key PHP_INT_MIN (checked with PHP 8.2)
		"<?php return array ( -9223372036854775808 => false, -9223372036854775807 => true, );": func(v *Value) bool {
			return v.Entries[0].Key == "-9223372036854775808" && v.Entries[1].Key == "-9223372036854775807"
		},
	} {
		v, err := parseCache("c", []byte(src))
		if err != nil {
			t.Errorf("parseCache(%q): %v", src, err)
			continue
		}
		if !check(v) {
			t.Errorf("parseCache(%q) = %+v", src, v)
		}
	}
}
