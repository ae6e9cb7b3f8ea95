package phpconf

import (
	"math"
	"strconv"
	"strings"
)

// maxNesting bounds how deeply arrays nest: Laravel configs nest a handful
// of levels, and hostile input must not exhaust the stack.
const maxNesting = 100

func isOp(t token, op string) bool { return t.kind == tOp && t.text == op }

// isName matches a keyword (or true, false, null) in any case, as PHP does.
func isName(t token, name string) bool { return t.kind == tName && strings.EqualFold(t.text, name) }

// arrayBuilder adds entries with PHP's rules: a repeated key replaces the
// value in place; a key-less element gets one more than the largest int key, or 0.
type arrayBuilder struct {
	v       *Value
	index   map[string]int
	nextInt int64
	hasInt  bool
	full    bool // the next int key would overflow: PHP refuses to append
}

func newArrayBuilder(v *Value) *arrayBuilder {
	return &arrayBuilder{v: v, index: map[string]int{}}
}

// set stores val under key, which must already be canonical (see Entry).
func (b *arrayBuilder) set(key string, val *Value) {
	if n, ok := isIntKeyString(key); ok {
		b.noteInt(n)
	}
	if i, ok := b.index[key]; ok {
		b.v.Entries[i].Value = val
		return
	}
	b.index[key] = len(b.v.Entries)
	b.v.Entries = append(b.v.Entries, Entry{Key: key, Value: val})
}

func (b *arrayBuilder) noteInt(n int64) {
	if !b.hasInt || n >= b.nextInt {
		if n == math.MaxInt64 {
			b.full = true
		} else {
			b.nextInt = n + 1
		}
		b.hasInt = true
	}
}

// push appends val under the next int key; false where PHP fails ("the
// next element is already occupied").
func (b *arrayBuilder) push(val *Value) bool {
	if b.full {
		return false
	}
	n := int64(0)
	if b.hasInt {
		n = b.nextInt
	}
	b.set(strconv.FormatInt(n, 10), val)
	return true
}

func (b *arrayBuilder) addUnknownKey(keyExpr string, val *Value) {
	b.v.Entries = append(b.v.Entries, Entry{Key: keyExpr, Value: val, KeyUnknown: true})
}
