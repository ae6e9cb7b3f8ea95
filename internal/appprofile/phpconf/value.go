// Package phpconf reads a Laravel application's configuration the way
// Laravel itself would see it, without running PHP: EvalConfig statically
// evaluates one config/*.php file, including env() with Laravel's Env::get
// casting, and so also the var_export() output that `php artisan
// config:cache` writes to bootstrap/cache/config.php (evaluated without env).
//
// EvalConfig knows literals, arrays, strings, concatenation, arithmetic,
// casts, ternaries, ?: and ??, env(), X::class, the path helpers, __DIR__,
// dirname() and Str::slug(). Every other expression (function and method
// calls, variables, class constants, closures, objects, ...) becomes a
// KindUnknown Value that carries the expression text and where it was
// written; the rest of the file is still evaluated.
package phpconf

import (
	"math"
	"strconv"
	"strings"
)

// Kind is the PHP type of a Value.
type Kind int

// The kinds of values a config file can hold. KindUnknown is a value PHP
// computes at run time that the static evaluator could not decide.
const (
	KindNull Kind = iota
	KindBool
	KindInt
	KindFloat
	KindString
	KindArray
	KindUnknown
)

// Pos is where a value was written: the file name as given to EvalConfig and a 1-based line.
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

// Entry is one key => value pair of a PHP array. Key is the PHP array key in
// its canonical form: an int key is its decimal string ("0", "-3"), so the
// int 5 and the string "5" are the same key, as in PHP. When the key
// expression could not be evaluated (a class constant such as
// PDO::MYSQL_ATTR_SSL_CA, or a spread "...$x"), KeyUnknown is set, Key holds
// that expression's text, and Get never matches the entry.
type Entry struct {
	Key        string
	Value      *Value
	KeyUnknown bool
}

// Get follows a dot path the way Laravel's Arr::get does, but with
// backtracking: at each level a key equal to the whole remaining path is
// preferred, then every split at a '.', longest first key first, so a key
// that itself contains dots wins over nested arrays. It returns nil
// when the path does not exist, when it runs into a non-array, or when v is
// nil. An empty path returns v itself.
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

// entry returns the value stored under key (in PHP's key normalisation), or nil.
func (v *Value) entry(key string) *Value {
	for i := range v.Entries {
		if !v.Entries[i].KeyUnknown && v.Entries[i].Key == key {
			return v.Entries[i].Value
		}
	}
	return nil
}

// String converts a scalar the way PHP's (string) cast does: ints in
// decimal, true → "1", false and null → "", floats with PHP's default
// precision of 14 significant digits. ok is false for arrays and unknowns.
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

// IntValue converts a scalar the way PHP's (int) cast does, including PHP 8's
// numeric-prefix rules for strings ("12abc" → 12, "1e3" → 1000, "abc" → 0).
// ok is false for arrays and unknowns.
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

// FloatValue converts a scalar the way PHP's (float) cast does.
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

// Truthy converts the way PHP's (bool) cast does: null, false, 0, 0.0, -0.0,
// "", "0" and the empty array are false; everything else (NAN included) is
// true. ok is false only for unknowns.
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

// isIntKeyString reports whether PHP treats the string key s as an int key:
// the canonical decimal form of an int64 ("5", "-3"; not "05", "+5", "-0").
func isIntKeyString(s string) (int64, bool) {
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil && strconv.FormatInt(n, 10) == s
}

// collapseExpr turns expression source text into the Expr of an unknown:
// whitespace runs (newlines included) become one space, and text longer
// than maxExprLen is cut at a UTF-8 boundary and ends in "…".
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
