package phpconf

import (
	"math"
	"regexp"
	"strconv"
	"strings"
)

// phpPrecision is PHP's default `precision`, which float-to-string uses.
const phpPrecision = 14

// phpFloatString formats f as PHP 8 does (zend_gcvt): "0.3", "-0",
// "1.0E+25", "1.0E-5", "INF", "NAN". Go's %G switches to an exponent at the
// same points; PHP's mantissa always has a fraction, its exponent no padding.
func phpFloatString(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NAN"
	case math.IsInf(f, 1):
		return "INF"
	case math.IsInf(f, -1):
		return "-INF"
	}
	mant, exp, isExp := strings.Cut(strconv.FormatFloat(f, 'G', phpPrecision, 64), "E")
	if !isExp {
		return mant
	}
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	return mant + "E" + exp[:1] + strings.TrimLeft(exp[1:], "0")
}

const (
	twoPow63 = 9223372036854775808.0
	twoPow64 = 18446744073709551616.0
)

// floatToInt is PHP 8's (int) of a float on 64 bits (zend_dval_to_lval):
// NAN and ±INF are 0, in range truncates, out of range wraps modulo 2^64.
func floatToInt(d float64) int64 {
	if math.IsNaN(d) || math.IsInf(d, 0) {
		return 0
	}
	if d >= -twoPow63 && d < twoPow63 {
		return int64(d)
	}
	m := math.Mod(d, twoPow64)
	if m < 0 {
		m += twoPow64
	}
	if m >= twoPow63 {
		m -= twoPow64
	}
	if m >= twoPow63 || m < -twoPow63 {
		return math.MinInt64
	}
	return int64(m)
}

// floatToIntCap is the saturating conversion PHP uses for numeric strings
// such as "1e30" (zend_dval_to_lval_cap).
func floatToIntCap(d float64) int64 {
	switch {
	case math.IsNaN(d) || math.IsInf(d, 0):
		return 0
	case d >= twoPow63:
		return math.MaxInt64
	case d < -twoPow63:
		return math.MinInt64
	}
	return int64(d)
}

// numericPrefixRE is the leading number is_numeric_string (errors
// allowed) reads.
var numericPrefixRE = regexp.MustCompile(`\A[ \t\n\r\v\f]*([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)`)

// numericPrefix reads s's leading number; isFloat reports a fraction, an
// exponent or an int overflow; ok is false when there is none.
func numericPrefix(s string) (i int64, f float64, isFloat, ok bool) {
	m := numericPrefixRE.FindStringSubmatch(s)
	if m == nil {
		return 0, 0, false, false
	}
	num := m[1]
	if !strings.ContainsAny(num, ".eE") {
		if v, err := strconv.ParseInt(num, 10, 64); err == nil {
			return v, float64(v), false, true
		}
	}
	v, _ := strconv.ParseFloat(num, 64) // ±Inf on overflow, as zend_strtod
	return 0, v, true, true
}

// stringToInt is PHP 8's (int) of a string.
func stringToInt(s string) int64 {
	i, f, isFloat, ok := numericPrefix(s)
	switch {
	case !ok:
		return 0
	case isFloat:
		return floatToIntCap(f)
	}
	return i
}

// stringToFloat is PHP 8's (float) of a string.
func stringToFloat(s string) float64 {
	_, f, _, ok := numericPrefix(s)
	if !ok {
		return 0
	}
	return f
}
