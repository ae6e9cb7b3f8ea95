package phpconf

import (
	"math"
	"strconv"
	"strings"
)

// phpPrecision is PHP's default `precision` ini setting, which (string)
// casts and string concatenation of floats use.
const phpPrecision = 14

// phpFloatString formats f the way PHP 8 converts a float to a string
// (zend_gcvt with phpPrecision significant digits): "0.3", "-0", "1.0E+25",
// "1.0E-5", "INF", "NAN".
func phpFloatString(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NAN"
	case math.IsInf(f, 1):
		return "INF"
	case math.IsInf(f, -1):
		return "-INF"
	}
	neg := math.Signbit(f)
	if neg {
		f = -f
	}
	var digits string
	var decpt int // f = 0.DIGITS × 10^decpt, as zend_dtoa reports it
	if f == 0 {
		digits, decpt = "0", 1
	} else {
		e := strconv.FormatFloat(f, 'e', phpPrecision-1, 64) // d.ddddde±XX
		mant, exp, _ := strings.Cut(e, "e")
		digits = strings.TrimRight(strings.Replace(mant, ".", "", 1), "0")
		if digits == "" {
			digits = "0"
		}
		x, _ := strconv.Atoi(exp)
		decpt = x + 1
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	switch {
	case decpt < -3 || decpt > phpPrecision:
		b.WriteByte(digits[0])
		b.WriteByte('.')
		if len(digits) == 1 {
			b.WriteByte('0')
		} else {
			b.WriteString(digits[1:])
		}
		exp := decpt - 1
		b.WriteByte('E')
		if exp < 0 {
			b.WriteByte('-')
			exp = -exp
		} else {
			b.WriteByte('+')
		}
		b.WriteString(strconv.Itoa(exp))
	case decpt <= 0:
		b.WriteString("0.")
		b.WriteString(strings.Repeat("0", -decpt))
		b.WriteString(digits)
	default:
		if len(digits) <= decpt {
			b.WriteString(digits)
			b.WriteString(strings.Repeat("0", decpt-len(digits)))
		} else {
			b.WriteString(digits[:decpt])
			b.WriteByte('.')
			b.WriteString(digits[decpt:])
		}
	}
	return b.String()
}

const (
	twoPow63 = 9223372036854775808.0
	twoPow64 = 18446744073709551616.0
)

// floatToInt is PHP 8's (int) of a float on 64-bit builds: NAN and ±INF give
// 0, values in range truncate toward zero, and values out of range wrap
// modulo 2^64 (zend_dval_to_lval).
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

// phpWhitespace is what PHP 8's numeric-string check skips before and after
// the number.
const phpWhitespace = " \t\n\r\v\f"

// numericPrefix reads the leading number of s as PHP 8's is_numeric_string
// with errors allowed does: optional whitespace, sign, digits with an
// optional fraction and exponent. isFloat reports a fraction, an exponent
// or an int overflow. ok is false when s does not start with a number.
func numericPrefix(s string) (i int64, f float64, isFloat, ok bool) {
	s = strings.TrimLeft(s, phpWhitespace)
	n := 0
	if n < len(s) && (s[n] == '+' || s[n] == '-') {
		n++
	}
	intDigits := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
		intDigits++
	}
	fracDigits := 0
	if n < len(s) && s[n] == '.' {
		m := n + 1
		for m < len(s) && s[m] >= '0' && s[m] <= '9' {
			m++
			fracDigits++
		}
		if intDigits+fracDigits > 0 {
			n = m
			isFloat = true
		}
	}
	if intDigits+fracDigits == 0 {
		return 0, 0, false, false
	}
	if n < len(s) && (s[n] == 'e' || s[n] == 'E') {
		m := n + 1
		if m < len(s) && (s[m] == '+' || s[m] == '-') {
			m++
		}
		if m < len(s) && s[m] >= '0' && s[m] <= '9' {
			for m < len(s) && s[m] >= '0' && s[m] <= '9' {
				m++
			}
			n = m
			isFloat = true
		}
	}
	num := s[:n]
	if !isFloat {
		v, err := strconv.ParseInt(num, 10, 64)
		if err == nil {
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
