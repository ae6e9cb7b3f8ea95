package signature

import "bytes"

// closureOpen starts a closure's name as PHP 8.4 writes it.
const closureOpen = "{closure:"

// closureName is what every closure's name becomes: PHP 8.3's form.
const closureName = "{closure}"

// queuedClosureSchemes are a queued closure's pseudo-file schemes.
var queuedClosureSchemes = [...]string{"laravel-serializable-closure://", "closure://"}

// replaceClosureNames is refClosureNames (reference_test.go): a queued
// closure's name {closure:<scheme>://<source>}:<line>}, then, until none is
// left, the innermost {closure:<no space or brace>:<line>}, become {closure}.
func replaceClosureNames(dst, s []byte) ([]byte, bool) {
	if !bytes.Contains(s, []byte(closureOpen)) {
		return s, false
	}
	out, changed := runPass(dst, s, passQueuedClosure)
	for {
		next, ok := runPass(nil, out, passInnerClosure)
		if !ok {
			return out, changed
		}
		out, changed = next, true
	}
}

// queuedClosureAt:
// \{closure:(?:laravel-serializable-closure|closure)://(?s:.*?)\}:\d+\} at p.
func queuedClosureAt(s []byte, p int) (int, int) {
	for _, scheme := range queuedClosureSchemes {
		if body := p + len(closureOpen); bytes.HasPrefix(s[body:], []byte(scheme)) {
			return p, lineEnd(s, body+len(scheme))
		}
	}
	return -1, -1
}

// lineEnd is the end of the first "}:<digits>}" at or after i, or -1.
func lineEnd(s []byte, i int) int {
	for {
		j := indexFrom(s, i, "}:")
		if j < 0 {
			return -1
		}
		k := classEnd(s, j+2, cDigit)
		if k > j+2 && k < len(s) && s[k] == '}' {
			return k + 1
		}
		i = j + 1
	}
}

// innerClosureEnd matches \{closure:(?:[^{}\s]|\{closure\})*:\d+\}: it is
// the end of a name whose text after closureOpen starts at i, or -1: the
// text runs to the first brace that is not part of a closureName, without
// whitespace, and ends in ":<digits>".
func innerClosureEnd(s []byte, i int) int {
	start := i
	for i < len(s) {
		switch c := s[i]; {
		case bytes.HasPrefix(s[i:], []byte(closureName)):
			i += len(closureName)
			continue
		case c == '}':
			k := i
			for k > start && isDigitAt(s, k-1) {
				k--
			}
			if k < i && k-1 >= start && s[k-1] == ':' {
				return i + 1
			}
			return -1
		case c == '{' || is(c, cSpace):
			return -1
		}
		i++
	}
	return -1
}
