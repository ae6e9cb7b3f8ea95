package phpconf

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// EvalContext is what a config file may read from outside itself.
type EvalContext struct {
	// Root is the base path of the path helpers and of a relative file name
	// (for __DIR__); empty, they are unknown. The helpers assume Laravel's
	// default layout: a bootstrap/app.php that moves storage/ and the
	// others (useStoragePath) is not seen.
	Root string
	// Env looks a variable up as Laravel's env repository does (the real
	// environment, then .env), before Env::get's casting; nil: all unset.
	Env func(name string) (raw string, ok bool)
}

// EvalConfig statically evaluates a config/*.php file: the array its
// top-level "return" returns; the statements before it are skipped, and
// what only PHP can run is a KindUnknown value. file names positions and,
// joined to ctx.Root when relative, __DIR__ and __FILE__. The error is an
// *EvalError without "<?php", without a top-level "return" of an array
// literal, on an unterminated string or bracket, or nesting too deep.
func EvalConfig(file string, src []byte, ctx EvalContext) (*Value, error) {
	text := string(src)
	toks, err := tokenize(text)
	if err != nil {
		if le, ok := err.(*lexError); ok {
			return nil, &EvalError{file, le.line, le.msg}
		}
		return nil, err
	}
	p := &exprParser{file: file, src: text, toks: toks}
	if err := p.findReturn(); err != nil {
		return nil, err
	}
	first := p.peek()
	n, err := p.element()
	if err != nil {
		return nil, err
	}
	if n.kind != nArray {
		return nil, p.errAt(first, "the top-level return value is not an array literal")
	}
	if end := p.peek(); !isOp(end, ";") && end.kind != tEOF && end.kind != tCloseTag {
		return nil, p.errAt(end, "unexpected %q after the returned array", end.text)
	}
	if treeDepth(n) > maxTreeDepth {
		return nil, p.errAt(first, "expression nested deeper than %d", maxTreeDepth)
	}
	ev := &evaluator{file: file, src: p.src, ctx: ctx, concatBudget: maxConcatBytes}
	return ev.eval(n), nil
}

// maxTreeDepth bounds the expression tree, and so the evaluator's
// recursion: the parser's bound misses chains ("a ?: b ?: c ...") it loops over.
const maxTreeDepth = 2000

// treeDepth is the depth of the tree under n, measured without recursion.
func treeDepth(n *node) int {
	type item struct {
		n     *node
		depth int
	}
	maxDepth := 0
	stack := []item{{n, 1}}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if it.n == nil {
			continue
		}
		maxDepth = max(maxDepth, it.depth)
		if maxDepth > maxTreeDepth {
			return maxDepth
		}
		for _, k := range it.n.kids {
			stack = append(stack, item{k, it.depth + 1})
		}
		for _, a := range it.n.items {
			stack = append(stack, item{a.key, it.depth + 1}, item{a.val, it.depth + 1})
		}
	}
	return maxDepth
}

// maxConcatBytes bounds what a file's concatenations may produce: only
// they (of env values repeated many times, say) could allocate without bound.
const maxConcatBytes = 4 * maxSourceBytes

type evaluator struct {
	file         string
	src          string
	ctx          EvalContext
	concatBudget int // bytes concatenation may still produce; beyond it results are unknown
}

func (e *evaluator) pos(n *node) Pos { return Pos{File: e.file, Line: n.line} }

// unknown is node n's unknown value with the env keys of from.
func (e *evaluator) unknown(n *node, from ...*Value) *Value {
	return &Value{Kind: KindUnknown, Pos: e.pos(n), Expr: collapseExpr(e.src[n.start:n.end]), EnvKeys: mergeEnvKeys(nil, from...)}
}

func mergeEnvKeys(keys []string, vs ...*Value) []string {
	for _, v := range vs {
		if v == nil {
			continue
		}
		for _, k := range v.EnvKeys {
			if !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	return keys
}

// withKeys returns v with the env keys of from added; v must be fresh.
func withKeys(v *Value, from ...*Value) *Value {
	v.EnvKeys = mergeEnvKeys(v.EnvKeys, from...)
	return v
}

func (e *evaluator) eval(n *node) *Value {
	switch n.kind {
	case nLit:
		v := *n.val
		return &v
	case nArray:
		return e.array(n)
	case nConcat:
		return e.concat(n)
	case nTernary:
		c := e.eval(n.kids[0])
		t, ok := c.Truthy()
		if !ok {
			return e.unknown(n, c)
		}
		var r *Value
		switch {
		case t && n.kids[1] == nil:
			r = c
		case t:
			r = e.eval(n.kids[1])
		default:
			r = e.eval(n.kids[2])
		}
		return e.rewrap(n, r, c)
	case nCoalesce:
		l := e.eval(n.kids[0])
		switch l.Kind {
		case KindUnknown:
			return e.unknown(n, l)
		case KindNull:
			return e.rewrap(n, e.eval(n.kids[1]), l)
		}
		return l
	case nCast:
		return e.cast(n)
	case nNot:
		x := e.eval(n.kids[0])
		t, ok := x.Truthy()
		if !ok {
			return e.unknown(n, x)
		}
		return withKeys(&Value{Kind: KindBool, Bool: !t, Pos: e.pos(n)}, x)
	case nNeg, nPlus:
		x := e.eval(n.kids[0])
		if x.Kind != KindInt && x.Kind != KindFloat {
			return e.unknown(n, x)
		}
		v := &Value{Kind: x.Kind, Int: x.Int, Float: x.Float}
		if n.kind == nNeg { // PHP multiplies by -1, so -PHP_INT_MIN is a float
			v, _ = arith("*", x, &Value{Kind: KindInt, Int: -1})
		}
		v.Pos = e.pos(n)
		return withKeys(v, x)
	case nCall:
		return e.call(n)
	case nBinary:
		return e.binary(n)
	}
	return e.unknown(n)
}

// concat evaluates a chain "a . b . c" (a left-nested tree) into one
// buffer, in linear time; a result over the concatenation budget is unknown.
func (e *evaluator) concat(n *node) *Value {
	var operands []*node
	left := n
	for left.kind == nConcat {
		operands = append(operands, left.kids[1])
		left = left.kids[0]
	}
	operands = append(operands, left)
	var b strings.Builder
	var parts []*Value
	known := true
	for i := len(operands) - 1; i >= 0; i-- {
		v := e.eval(operands[i])
		parts = append(parts, v)
		s, ok := v.String()
		if !ok || b.Len()+len(s) > e.concatBudget {
			known = false
		}
		if known {
			b.WriteString(s)
		}
	}
	if !known {
		return e.unknown(n, parts...)
	}
	e.concatBudget -= b.Len()
	return withKeys(&Value{Kind: KindString, Str: b.String(), Pos: e.pos(n)}, parts...)
}

// binary evaluates arithmetic, && and || (skipping their right operand as
// PHP does), === and !==; other operators are unknown.
func (e *evaluator) binary(n *node) *Value {
	if len(n.kids) != 2 {
		return e.unknown(n, e.eval(n.kids[0]))
	}
	l := e.eval(n.kids[0])
	switch n.name {
	case "&&", "||":
		t, ok := l.Truthy()
		if !ok {
			return e.unknown(n, l)
		}
		if t == (n.name == "||") { // decided by the left operand
			return withKeys(&Value{Kind: KindBool, Bool: t, Pos: e.pos(n)}, l)
		}
		r := e.eval(n.kids[1])
		rt, ok := r.Truthy()
		if !ok {
			return e.unknown(n, l, r)
		}
		return withKeys(&Value{Kind: KindBool, Bool: rt, Pos: e.pos(n)}, l, r)
	}
	r := e.eval(n.kids[1])
	switch n.name {
	case "===", "!==":
		eq, ok := strictEqual(l, r)
		if !ok {
			return e.unknown(n, l, r)
		}
		return withKeys(&Value{Kind: KindBool, Bool: eq == (n.name == "==="), Pos: e.pos(n)}, l, r)
	case "+", "-", "*", "/", "%", "**":
		v, ok := arith(n.name, l, r)
		if !ok {
			return e.unknown(n, l, r)
		}
		v.Pos = e.pos(n)
		return withKeys(v, l, r)
	}
	return e.unknown(n, l, r)
}

// rewrap is the chosen operand r of a ternary or ?? as n's value: an
// unknown's text covers n, and cond's env keys are kept.
func (e *evaluator) rewrap(n *node, r *Value, cond *Value) *Value {
	if r.Kind == KindUnknown {
		return e.unknown(n, cond, r)
	}
	out := *r
	out.EnvKeys = mergeEnvKeys(nil, cond, r)
	return &out
}

// cast is PHP's (int), (float), (bool) and (string) cast.
func (e *evaluator) cast(n *node) *Value {
	x := e.eval(n.kids[0])
	num := x
	if x.Kind == KindArray { // an array is 0 or 1 as a number
		num = &Value{Kind: KindInt, Int: int64(min(len(x.Entries), 1))}
	}
	out := &Value{Pos: e.pos(n)}
	ok := false
	switch n.name {
	case "int":
		out.Kind = KindInt
		out.Int, ok = num.IntValue()
	case "float":
		out.Kind = KindFloat
		out.Float, ok = num.FloatValue()
	case "bool":
		out.Kind = KindBool
		out.Bool, ok = x.Truthy()
	case "string":
		out.Kind = KindString
		out.Str, ok = x.String()
	}
	if !ok {
		return e.unknown(n, x)
	}
	return withKeys(out, x)
}

func (e *evaluator) array(n *node) *Value {
	v := &Value{Kind: KindArray, Pos: e.pos(n)}
	b := newArrayBuilder(v)
	for _, it := range n.items {
		if it.spread {
			b.addUnknownKey(collapseExpr("..."+e.src[it.val.start:it.val.end]), e.unknown(it.val, e.eval(it.val)))
			continue
		}
		val := e.eval(it.val)
		if it.key == nil {
			if !b.push(val) {
				b.addUnknownKey("[]", val)
			}
			continue
		}
		k := e.eval(it.key)
		key, ok := arrayKey(k)
		if !ok {
			b.addUnknownKey(collapseExpr(e.src[it.key.start:it.key.end]), withKeys(val, k))
			continue
		}
		b.set(key, withKeys(val, k))
	}
	return v
}

// arrayKey converts a key as PHP does: ints and strings as they are, bools
// to 0/1, null to "", floats truncated; arrays and unknowns are no keys.
func arrayKey(k *Value) (string, bool) {
	switch k.Kind {
	case KindString:
		return k.Str, true
	case KindNull:
		return "", true
	case KindBool, KindInt, KindFloat:
		i, _ := k.IntValue()
		return strconv.FormatInt(i, 10), true
	}
	return "", false
}

// pathHelperDirs maps Laravel's path helpers to their default directory
// under the base path.
var pathHelperDirs = map[string]string{"base_path": "", "database_path": "database", "storage_path": "storage",
	"app_path": "app", "config_path": "config", "resource_path": "resources", "public_path": "public"}

func (e *evaluator) call(n *node) *Value {
	switch n.name {
	case "env":
		return e.env(n)
	case "__dir__", "__file__":
		file := e.file
		if !filepath.IsAbs(file) {
			if e.ctx.Root == "" {
				return e.unknown(n)
			}
			file = filepath.Join(e.ctx.Root, file)
		}
		if n.name == "__dir__" {
			file = filepath.Dir(file)
		}
		return &Value{Kind: KindString, Str: file, Pos: e.pos(n)}
	case "dirname":
		return e.dirname(n)
	case "str::slug":
		return e.slug(n)
	}
	sub, ok := pathHelperDirs[n.name]
	if !ok || len(n.kids) > 1 || e.ctx.Root == "" {
		return e.unknown(n)
	}
	dir := e.ctx.Root
	if sub != "" {
		dir += "/" + sub
	}
	if len(n.kids) == 0 {
		return &Value{Kind: KindString, Str: dir, Pos: e.pos(n)}
	}
	arg := e.eval(n.kids[0])
	s, sok := arg.String()
	truthy, tok := arg.Truthy()
	if !sok || !tok {
		return e.unknown(n, arg)
	}
	// Laravel appends "/".$path only when $path is truthy, and $path itself
	// otherwise: base_path('0') is the base path followed by "0".
	if truthy {
		if n.name == "public_path" {
			s = strings.TrimLeft(s, "/")
		}
		s = "/" + s
	}
	return withKeys(&Value{Kind: KindString, Str: dir + s, Pos: e.pos(n)}, arg)
}

// env is Laravel's env($key, $default): the variable cast by Env::get, else
// the default, evaluated only then.
func (e *evaluator) env(n *node) *Value {
	if len(n.kids) == 0 || len(n.kids) > 2 {
		return e.unknown(n)
	}
	k := e.eval(n.kids[0])
	name, ok := k.String()
	if !ok || k.Kind == KindArray {
		return e.unknown(n, k)
	}
	keys := mergeEnvKeys([]string{name}, k)
	var raw string
	var set bool
	if e.ctx.Env != nil {
		raw, set = e.ctx.Env(name)
	}
	if set {
		v := CastEnv(raw)
		v.Pos, v.EnvKeys = e.pos(n), keys
		return v
	}
	if len(n.kids) < 2 {
		return &Value{Kind: KindNull, Pos: e.pos(n), EnvKeys: keys}
	}
	d := e.eval(n.kids[1])
	out := *d
	if d.Kind == KindUnknown {
		out = *e.unknown(n)
	}
	out.EnvKeys = mergeEnvKeys(keys, d)
	return &out
}

// CastEnv is Laravel's Env::get casting of a raw value: true, false,
// empty and null (ASCII case-insensitive, bare or in parentheses) are
// those values ("" for empty), and one pair of matching surrounding quotes
// is stripped (not across a newline: /\A(['"])(.*)\1\z/). It has no Pos.
func CastEnv(raw string) *Value {
	switch strings.ToLower(raw) { // maps nothing but A-Z onto these words, like PHP 8's strtolower
	case "true", "(true)":
		return &Value{Kind: KindBool, Bool: true}
	case "false", "(false)":
		return &Value{Kind: KindBool}
	case "empty", "(empty)":
		return &Value{Kind: KindString}
	case "null", "(null)":
		return &Value{Kind: KindNull}
	}
	if len(raw) >= 2 && (raw[0] == '\'' || raw[0] == '"') && raw[len(raw)-1] == raw[0] &&
		!strings.Contains(raw[1:len(raw)-1], "\n") {
		return &Value{Kind: KindString, Str: raw[1 : len(raw)-1]}
	}
	return &Value{Kind: KindString, Str: raw}
}

// dirname is PHP's dirname($path, $levels = 1) on a Unix host.
func (e *evaluator) dirname(n *node) *Value {
	if len(n.kids) == 0 || len(n.kids) > 2 {
		return e.unknown(n)
	}
	arg := e.eval(n.kids[0])
	s, ok := arg.String()
	if !ok {
		return e.unknown(n, arg)
	}
	levels := int64(1)
	var lv *Value
	if len(n.kids) == 2 {
		lv = e.eval(n.kids[1])
		if lv.Kind != KindInt || lv.Int < 1 {
			return e.unknown(n, arg, lv)
		}
		levels = lv.Int
	}
	for i := int64(0); i < levels; i++ {
		next := phpDirname(s)
		if next == s {
			break
		}
		s = next
	}
	return withKeys(&Value{Kind: KindString, Str: s, Pos: e.pos(n)}, arg, lv)
}

// phpDirname is zend_dirname for '/': trailing slashes and the last
// component go; "" stays "", a bare name is ".", the root stays "/".
func phpDirname(s string) string {
	if s == "" {
		return ""
	}
	end := len(s) - 1
	for end >= 0 && s[end] == '/' {
		end--
	}
	if end < 0 {
		return "/"
	}
	for end >= 0 && s[end] != '/' {
		end--
	}
	if end < 0 {
		return "."
	}
	for end >= 0 && s[end] == '/' {
		end--
	}
	if end < 0 {
		return "/"
	}
	return s[:end+1]
}

// slug is Str::slug($title, $separator = '-', $language = 'en').
func (e *evaluator) slug(n *node) *Value {
	if len(n.kids) == 0 || len(n.kids) > 3 {
		return e.unknown(n)
	}
	args := make([]*Value, len(n.kids))
	for i, k := range n.kids {
		args[i] = e.eval(k)
	}
	strs := []string{"", "-", "en"} // title, separator, language
	for i, a := range args {
		var ok bool
		if strs[i], ok = a.String(); !ok {
			return e.unknown(n, args...)
		}
	}
	s, ok := slugLang(strs[0], strs[1], strs[2])
	if !ok {
		return e.unknown(n, args...)
	}
	return withKeys(&Value{Kind: KindString, Str: s, Pos: e.pos(n)}, args...)
}
