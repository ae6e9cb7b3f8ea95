package phpconf

import (
	"math"
	"testing"
)

// The expected conversions were checked with PHP 8.2 (php -r 'var_dump(...)').
func TestStringToNumber(t *testing.T) {
	for _, c := range []struct {
		in   string
		i    int64
		f    float64
		bool bool
	}{
		{"", 0, 0, false},
		{"0", 0, 0, false},
		{"12abc", 12, 12, true},
		{" 12", 12, 12, true},
		{"\n\v\f\r\t 7 ", 7, 7, true},
		{"1e3", 1000, 1000, true},
		{"1.9", 1, 1.9, true},
		{"-1.9e1", -19, -19, true},
		{".5", 0, 0.5, true},
		{"5.", 5, 5, true},
		{"0x1A", 0, 0, true},
		{"1e30", math.MaxInt64, 1e30, true},
		{"-1e30", math.MinInt64, -1e30, true},
		{"9223372036854775807", math.MaxInt64, 9223372036854775807, true},
		{"9223372036854775808", math.MaxInt64, 9223372036854775808, true},
		{"-9223372036854775809", math.MinInt64, -9223372036854775809, true},
		{"abc", 0, 0, true},
		{"+3", 3, 3, true},
		{"- 3", 0, 0, true},
		{"1e", 1, 1, true},
		{"1e+", 1, 1, true},
		{"1_000", 1, 1, true},
		{"١٢", 0, 0, true},
	} {
		v := &Value{Kind: KindString, Str: c.in}
		if i, _ := v.IntValue(); i != c.i {
			t.Errorf("(int) %q = %d, want %d", c.in, i, c.i)
		}
		if f, _ := v.FloatValue(); f != c.f {
			t.Errorf("(float) %q = %v, want %v", c.in, f, c.f)
		}
		if b, _ := v.Truthy(); b != c.bool {
			t.Errorf("(bool) %q = %v, want %v", c.in, b, c.bool)
		}
	}
	if f, _ := (&Value{Kind: KindString, Str: "  -0.0"}).FloatValue(); !math.Signbit(f) {
		t.Errorf(`(float) "  -0.0" lost its sign`)
	}
}

func TestFloatConversions(t *testing.T) {
	for _, c := range []struct {
		f   float64
		str string
		i   int64
	}{
		{0.1 + 0.2, "0.3", 0},
		{1e25, "1.0E+25", 1590897979265384448},
		{math.Copysign(0, -1), "-0", 0},
		{1.0, "1", 1},
		{1e15, "1.0E+15", 1000000000000000},
		{1e14, "1.0E+14", 100000000000000},
		{123456789012345.0, "1.2345678901234E+14", 123456789012345},
		{12345678901234.0, "12345678901234", 12345678901234},
		{0.0001, "0.0001", 0},
		{0.00001, "1.0E-5", 0},
		{1.5, "1.5", 1},
		{-2.5e-10, "-2.5E-10", 0},
		{1.0 / 3, "0.33333333333333", 0},
		{2.0 / 3, "0.66666666666667", 0},
		{100.0, "100", 100},
		{1e100, "1.0E+100", 0},
		{5e-324, "4.9406564584125E-324", 0},
		{math.MaxFloat64, "1.7976931348623E+308", 0},
		{999999999999999.9, "1.0E+15", 999999999999999},
		{0.000123456789012345, "0.00012345678901234", 0},
		{1e19, "1.0E+19", -8446744073709551616},
		{-1e19, "-1.0E+19", 8446744073709551616},
		{1.8446744073709552e19, "1.844674407371E+19", 0},
		{9.2233720368547758e18, "9.2233720368548E+18", math.MinInt64},
		{-9.2233720368547758e18, "-9.2233720368548E+18", math.MinInt64},
		{2.7670116110564327e19, "2.7670116110564E+19", math.MinInt64},
		{math.NaN(), "NAN", 0},
		{math.Inf(1), "INF", 0},
		{math.Inf(-1), "-INF", 0},
	} {
		v := &Value{Kind: KindFloat, Float: c.f}
		if s, _ := v.String(); s != c.str {
			t.Errorf("(string) %v = %q, want %q", c.f, s, c.str)
		}
		if i, _ := v.IntValue(); i != c.i {
			t.Errorf("(int) %v = %d, want %d", c.f, i, c.i)
		}
	}
}

func TestValueConversions(t *testing.T) {
	arr := &Value{Kind: KindArray, Entries: []Entry{{Key: "0", Value: &Value{Kind: KindInt}}}}
	unk := &Value{Kind: KindUnknown, Expr: "foo()"}
	for _, c := range []struct {
		v            *Value
		str          string
		strOK        bool
		i            int64
		iOK          bool
		truth, truOK bool
	}{
		{&Value{Kind: KindNull}, "", true, 0, true, false, true},
		{&Value{Kind: KindBool, Bool: true}, "1", true, 1, true, true, true},
		{&Value{Kind: KindBool}, "", true, 0, true, false, true},
		{&Value{Kind: KindInt, Int: -5}, "-5", true, -5, true, true, true},
		{&Value{Kind: KindFloat, Float: math.NaN()}, "NAN", true, 0, true, true, true},
		{&Value{Kind: KindString, Str: "0.0"}, "0.0", true, 0, true, true, true},
		{arr, "", false, 0, false, true, true},
		{&Value{Kind: KindArray}, "", false, 0, false, false, true},
		{unk, "", false, 0, false, false, false},
		{nil, "", false, 0, false, false, false},
	} {
		s, ok := c.v.String()
		if s != c.str || ok != c.strOK {
			t.Errorf("%+v String() = %q, %v", c.v, s, ok)
		}
		i, ok := c.v.IntValue()
		if i != c.i || ok != c.iOK {
			t.Errorf("%+v IntValue() = %d, %v", c.v, i, ok)
		}
		b, ok := c.v.Truthy()
		if b != c.truth || ok != c.truOK {
			t.Errorf("%+v Truthy() = %v, %v", c.v, b, ok)
		}
	}
}

func TestGet(t *testing.T) {
	v, err := parseCache("c.php", []byte(`<?php return array (
  'database' => array (
    'connections' => array (
      'pgsql' => array ( 'host' => 'pg', ),
      'my.sql' => array ( 'host' => 'dotted', ),
      'my' => array ( 'sql' => array ( 'host' => 'nested', ), ),
    ),
    'a.b' => 'literal',
    'a' => array ( 'b' => 'nested', 'c' => 'only-nested', ),
    5 => 'int key',
  ),
);`))
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		"database.connections.pgsql.host":  "pg",
		"database.connections.my.sql.host": "dotted",
		"database.a.b":                     "literal",
		"database.a.c":                     "only-nested",
		"database.5":                       "int key",
	} {
		got := v.Get(path)
		if got == nil || got.Str != want {
			t.Errorf("Get(%q) = %+v, want %q", path, got, want)
		}
	}
	for _, path := range []string{"database.connections.pgsql.host.x", "nope", "database.05", "database..a", "."} {
		if got := v.Get(path); got != nil {
			t.Errorf("Get(%q) = %+v, want nil", path, got)
		}
	}
	if v.Get("") != v {
		t.Error(`Get("") is not the value itself`)
	}
	if (*Value)(nil).Get("a") != nil {
		t.Error("nil.Get is not nil")
	}
	if p := v.Get("database.a.c").Pos; p.String() != "c.php:9" {
		t.Errorf("position %v, want c.php:9", p)
	}
}
