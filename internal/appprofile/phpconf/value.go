// Package phpconf reads a Laravel app's configuration as Laravel sees it,
// without PHP: EvalConfig statically evaluates a config/*.php file, env()
// with Env::get's casting included, and so also the var_export() output of
// `php artisan config:cache` (evaluated without env).
//
// EvalConfig knows literals, arrays, strings, concatenation, arithmetic,
// casts, ternaries, ?: and ??, env(), X::class, the path helpers, __DIR__,
// dirname() and Str::slug(). Any other expression (calls, variables, class
// constants, closures, objects, ...) is a KindUnknown Value carrying its
// text and position; the rest of the file is still evaluated.
package phpconf

import (
	"math"
	"strconv"
	"strings"
)

// Kind is the PHP type of a Value.
type Kind int

// The kinds of values; KindUnknown is one only PHP, at run time, could decide.
const (
	KindNull Kind = iota
	KindBool
	KindInt
	KindFloat
	KindString
	KindArray
	KindUnknown
)

// Pos is where a value was written: EvalConfig's file name and a 1-based line.
type Pos struct {
	File string
	Line int
}

func (p Pos) String() string { return p.File + ":" + strconv.Itoa(p.Line) }

// Value is one PHP value. Only the field matching Kind is meaningful.
type Value struct {
	Kind    Kind
	Bool    bool
	Int     int64
	Float   float64
	Str     string  // PHP strings are byte strings; Str may hold invalid UTF-8 or NUL bytes
	Entries []Entry // KindArray, in source order; int keys as decimal strings
	Pos     Pos
	Expr    string   // KindUnknown: the expression text as written, whitespace collapsed, at most maxExprLen bytes
	EnvKeys []string // names of env() keys this value's expression read, in reading order, without duplicates
}

// Entry is one key => value pair of a PHP array. Key is canonical: an int
// key is its decimal string, so 5 and "5" are one key, as in PHP. When the
// key could not be evaluated (PDO::MYSQL_ATTR_SSL_CA, a spread "...$x"),
// KeyUnknown is set, Key holds the expression, and Get never matches it.
type Entry struct {
	Key        string
	Value      *Value
	KeyUnknown bool
}

// Get follows a dot path as Laravel's Arr::get does, with backtracking: at
// each level a key equal to the whole remaining path wins, then each split
// at a '.', longest first key first. It is nil when the path does not exist
// or runs into a non-array; an empty path is v itself.
func (v *Value) Get(path string) *Value {
	if v == nil {
		return nil
	}
	if path == "" {
		return v
	}
	return v.get(path, 0)
}

// maxGetDepth bounds the backtracking in Get; config paths are a few levels.
const maxGetDepth = 64

func (v *Value) get(path string, depth int) *Value {
	if v == nil || v.Kind != KindArray || depth > maxGetDepth {
		return nil
	}
	if e := v.entry(path); e != nil {
		return e
	}
	for i := len(path) - 1; i >= 0; i-- {
		if path[i] != '.' {
			continue
		}
		child := v.entry(path[:i])
		if child == nil || child.Kind != KindArray {
			continue
		}
		if r := child.get(path[i+1:], depth+1); r != nil {
			return r
		}
	}
	return nil
}

// entry is the value under the canonical key, or nil.
func (v *Value) entry(key string) *Value {
	for i := range v.Entries {
		if !v.Entries[i].KeyUnknown && v.Entries[i].Key == key {
			return v.Entries[i].Value
		}
	}
	return nil
}

// String converts a scalar as PHP's (string) cast does (true "1", false and
// null "", floats to phpPrecision digits); ok is false for arrays and unknowns.
func (v *Value) String() (string, bool) {
	if v == nil {
		return "", false
	}
	switch v.Kind {
	case KindNull:
		return "", true
	case KindBool:
		if v.Bool {
			return "1", true
		}
		return "", true
	case KindInt:
		return strconv.FormatInt(v.Int, 10), true
	case KindFloat:
		return phpFloatString(v.Float), true
	case KindString:
		return v.Str, true
	}
	return "", false
}

// IntValue converts a scalar as PHP 8's (int) cast does ("12abc" → 12,
// "1e3" → 1000, "abc" → 0); ok is false for arrays and unknowns.
func (v *Value) IntValue() (int64, bool) {
	if v == nil {
		return 0, false
	}
	switch v.Kind {
	case KindNull:
		return 0, true
	case KindBool:
		if v.Bool {
			return 1, true
		}
		return 0, true
	case KindInt:
		return v.Int, true
	case KindFloat:
		return floatToInt(v.Float), true
	case KindString:
		return stringToInt(v.Str), true
	}
	return 0, false
}

// FloatValue converts a scalar as PHP's (float) cast does.
func (v *Value) FloatValue() (float64, bool) {
	switch {
	case v != nil && v.Kind == KindFloat:
		return v.Float, true
	case v != nil && v.Kind == KindString:
		return stringToFloat(v.Str), true
	}
	i, ok := v.IntValue() // null, bools and ints; not arrays or unknowns
	return float64(i), ok
}

// Truthy converts as PHP's (bool) cast does: null, false, 0, ±0.0, "", "0"
// and the empty array are false, the rest (NAN too) true; ok is false for unknowns.
func (v *Value) Truthy() (bool, bool) {
	if v == nil {
		return false, false
	}
	switch v.Kind {
	case KindNull:
		return false, true
	case KindBool:
		return v.Bool, true
	case KindInt:
		return v.Int != 0, true
	case KindFloat:
		return v.Float != 0 || math.IsNaN(v.Float), true
	case KindString:
		return v.Str != "" && v.Str != "0", true
	case KindArray:
		return len(v.Entries) > 0, true
	}
	return false, false
}

// isIntKeyString reports a string key PHP takes as an int: an int64's
// canonical decimal ("5", "-3"; not "05", "+5", "-0").
func isIntKeyString(s string) (int64, bool) {
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil && strconv.FormatInt(n, 10) == s
}

// collapseExpr is source text as an unknown's Expr: whitespace runs become
// one space, and past maxExprLen it is cut at a UTF-8 boundary and ends in "…".
func collapseExpr(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= maxExprLen {
		return s
	}
	cut := maxExprLen
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}

// maxExprLen bounds Value.Expr; the text is for messages, not for parsing.
const maxExprLen = 120
