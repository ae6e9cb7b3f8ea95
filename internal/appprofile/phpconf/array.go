package phpconf

import (
	"math"
	"strconv"
	"strings"
)

// maxNesting bounds how deeply arrays (and expressions) may nest. Laravel
// configs nest a handful of levels; the bound keeps hostile input from
// exhausting the stack.
const maxNesting = 100

func isOp(t token, op string) bool { return t.kind == tOp && t.text == op }

// isName matches a keyword or one of true, false and null, which PHP reads
// in any case.
func isName(t token, name string) bool { return t.kind == tName && strings.EqualFold(t.text, name) }

// arrayBuilder adds entries to an array value with PHP's rules: a repeated
// key replaces the value in place, and a key-less element gets the next int
// key (one more than the largest int key so far, or 0).
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

// push appends val under the next int key; ok is false when PHP would fail
// ("Cannot add element to the array as the next element is already occupied").
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

// addUnknownKey appends an entry whose key could not be evaluated.
func (b *arrayBuilder) addUnknownKey(keyExpr string, val *Value) {
	b.v.Entries = append(b.v.Entries, Entry{Key: keyExpr, Value: val, KeyUnknown: true})
}
