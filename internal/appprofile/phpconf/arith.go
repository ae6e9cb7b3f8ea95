package phpconf

import "math"

// operand is a number as PHP's arithmetic sees it.
type operand struct {
	isFloat bool
	i       int64
	f       float64
}

func (o operand) float() float64 {
	if o.isFloat {
		return o.f
	}
	return float64(o.i)
}

// toOperand converts an arithmetic operand as PHP 8 does: null and bools
// are ints; a string must start with a number ("12abc" is 12; "abc" and ""
// throw a TypeError); arrays and unknowns are not numbers.
func toOperand(v *Value) (operand, bool) {
	switch v.Kind {
	case KindNull, KindBool, KindInt:
		i, _ := v.IntValue()
		return operand{i: i}, true
	case KindFloat:
		return operand{isFloat: true, f: v.Float}, true
	case KindString:
		i, f, isFloat, ok := numericPrefix(v.Str)
		if !ok {
			return operand{}, false
		}
		if isFloat {
			return operand{isFloat: true, f: f}, true
		}
		return operand{i: i}, true
	}
	return operand{}, false
}

// arith applies a PHP arithmetic operator; an int result that overflows is
// a float. ok is false where PHP throws (division by zero, a non-numeric
// operand) and where the answer needs C's pow() (** with a float, a negative
// exponent or an overflow). "+" on two arrays is PHP's union.
func arith(op string, l, r *Value) (*Value, bool) {
	if op == "+" && l.Kind == KindArray && r.Kind == KindArray {
		out := &Value{Kind: KindArray}
		b := newArrayBuilder(out)
		for _, e := range l.Entries {
			if e.KeyUnknown {
				return nil, false
			}
			b.set(e.Key, e.Value)
		}
		for _, e := range r.Entries {
			if e.KeyUnknown {
				return nil, false
			}
			if _, dup := b.index[e.Key]; !dup {
				b.set(e.Key, e.Value)
			}
		}
		return out, true
	}
	a, okA := toOperand(l)
	c, okC := toOperand(r)
	if !okA || !okC {
		return nil, false
	}
	intV := func(i int64) (*Value, bool) { return &Value{Kind: KindInt, Int: i}, true }
	floatV := func(f float64) (*Value, bool) { return &Value{Kind: KindFloat, Float: f}, true }
	bothInt := !a.isFloat && !c.isFloat
	switch op {
	case "+":
		if bothInt {
			if s := a.i + c.i; (s > a.i) == (c.i > 0) {
				return intV(s)
			}
		}
		return floatV(a.float() + c.float())
	case "-":
		if bothInt {
			if d := a.i - c.i; (d < a.i) == (c.i > 0) {
				return intV(d)
			}
		}
		return floatV(a.float() - c.float())
	case "*":
		if bothInt {
			if p, ok := mulExact(a.i, c.i); ok {
				return intV(p)
			}
		}
		return floatV(a.float() * c.float())
	case "/":
		if c.float() == 0 {
			return nil, false // DivisionByZeroError
		}
		if bothInt && !(a.i == math.MinInt64 && c.i == -1) && a.i%c.i == 0 {
			return intV(a.i / c.i)
		}
		return floatV(a.float() / c.float())
	case "%":
		x, y := a.i, c.i
		if a.isFloat {
			x = floatToInt(a.f)
		}
		if c.isFloat {
			y = floatToInt(c.f)
		}
		switch y {
		case 0:
			return nil, false // DivisionByZeroError
		case -1:
			return intV(0)
		}
		return intV(x % y)
	case "**":
		if !bothInt || c.i < 0 {
			return nil, false
		}
		result, base, exp := int64(1), a.i, c.i
		for exp > 0 {
			if exp&1 == 1 {
				p, ok := mulExact(result, base)
				if !ok {
					return nil, false
				}
				result = p
			}
			exp >>= 1
			if exp > 0 {
				sq, ok := mulExact(base, base)
				if !ok {
					return nil, false
				}
				base = sq
			}
		}
		return intV(result)
	}
	return nil, false
}

func mulExact(a, b int64) (int64, bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	p := a * b
	if p/b != a || (a == -1 && b == math.MinInt64) || (b == -1 && a == math.MinInt64) {
		return 0, false
	}
	return p, true
}

// strictEqual is PHP's === for scalars; ok is false for arrays and unknowns.
func strictEqual(l, r *Value) (equal, ok bool) {
	if l.Kind == KindArray || r.Kind == KindArray || l.Kind == KindUnknown || r.Kind == KindUnknown {
		return false, false
	}
	if l.Kind != r.Kind {
		return false, true
	}
	switch l.Kind {
	case KindNull:
		return true, true
	case KindBool:
		return l.Bool == r.Bool, true
	case KindInt:
		return l.Int == r.Int, true
	case KindFloat:
		return l.Float == r.Float, true
	}
	return l.Str == r.Str, true
}
