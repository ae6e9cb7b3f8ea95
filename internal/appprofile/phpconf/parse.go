package phpconf

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// nodeKind classifies the expression tree EvalConfig evaluates; the tree
// lets env() evaluate its default only when the variable is absent, as PHP does.
type nodeKind int

const (
	nLit      nodeKind = iota // val
	nUnknown                  // an expression only PHP can evaluate
	nArray                    // items
	nConcat                   // kids[0] . kids[1]
	nTernary                  // kids[0] ? kids[1] : kids[2]; kids[1] nil for ?:
	nCoalesce                 // kids[0] ?? kids[1]
	nCast                     // (name) kids[0]
	nNot                      // !kids[0]
	nNeg                      // -kids[0]
	nPlus                     // +kids[0]
	nCall                     // a supported function: name (lower case, e.g. "env", "str::slug"), kids = arguments
	nBinary                   // any other operator (name): arithmetic, &&, ||, ===, !== are evaluated, the rest is unknown
)

type node struct {
	kind       nodeKind
	start, end int // byte span in the source
	line       int
	val        *Value
	name       string
	kids       []*node
	items      []arrayItem
}

type arrayItem struct {
	key, val *node // key nil for a key-less element
	spread   bool  // ...expr
}

// maxExprDepth bounds the parser's recursion: an array level costs about
// two, so maxNesting arrays fit; a longer chain of unary operators or
// ternaries is an error rather than a stack overflow.
const maxExprDepth = 3 * maxNesting

// EvalError says why a file is not "<?php ... return <array>;".
type EvalError struct {
	File string
	Line int
	Msg  string
}

func (e *EvalError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

type exprParser struct {
	file    string
	src     string
	toks    []token
	pos     int
	depth   int
	ternary int // how many ternaries' middle operands we are inside: ':' ends an unknown expression there
}

func (p *exprParser) peek() token { return p.toks[p.pos] }

func (p *exprParser) peekAt(n int) token {
	if p.pos+n < len(p.toks) {
		return p.toks[p.pos+n]
	}
	return p.toks[len(p.toks)-1]
}

func (p *exprParser) take() token {
	t := p.toks[p.pos]
	if t.kind != tEOF {
		p.pos++
	}
	return t
}

func (p *exprParser) lastEnd() int {
	if p.pos == 0 {
		return 0
	}
	return p.toks[p.pos-1].end
}

func (p *exprParser) errAt(t token, format string, args ...any) error {
	return &EvalError{p.file, t.line, fmt.Sprintf(format, args...)}
}

func (p *exprParser) enter(t token) error {
	p.depth++
	if p.depth > maxExprDepth {
		return p.errAt(t, "expression nested deeper than %d", maxExprDepth)
	}
	return nil
}

func (p *exprParser) leave() { p.depth-- }

// findReturn moves past the first "return" outside any bracket.
func (p *exprParser) findReturn() error {
	for depth := 0; ; p.take() {
		t := p.peek()
		switch {
		case t.kind == tEOF || t.kind == tCloseTag:
			return p.errAt(t, "no top-level return statement")
		case depth == 0 && isName(t, "return"):
			p.take()
			return nil
		}
		depth += bracketDelta(t)
	}
}

func bracketDelta(t token) int {
	switch {
	case t.kind != tOp:
		return 0
	case t.text == "(" || t.text == "[" || t.text == "{" || t.text == "#[":
		return 1
	case t.text == ")" || t.text == "]" || t.text == "}":
		return -1
	}
	return 0
}

// unknownFrom is an unknown node from start to the last token taken.
func (p *exprParser) unknownFrom(start token) *node {
	end := p.lastEnd()
	if end < start.start {
		end = start.start
	}
	return &node{kind: nUnknown, start: start.start, end: end, line: start.line}
}

// isTerminator: t ends a list element or a statement.
func isTerminator(t token) bool {
	if t.kind == tEOF || t.kind == tCloseTag {
		return true
	}
	return t.kind == tOp && (t.text == "," || t.text == ";" || t.text == ")" || t.text == "]" || t.text == "}" || t.text == "=>")
}

// skipRest consumes an expression the parser does not understand up to
// (not including) the ',', ';', ')', ']', '}' or '=>' that ends it outside
// brackets; inside a ternary's middle operand a ':' ends it too. Arrow
// functions ("fn() => x") and nested ternaries inside are kept whole.
func (p *exprParser) skipRest() {
	for depth, arrows, questions := 0, 0, 0; ; p.take() {
		t := p.peek()
		if t.kind == tEOF || t.kind == tCloseTag {
			return
		}
		if d := bracketDelta(t); d != 0 || depth > 0 {
			if depth += d; depth < 0 { // a closer of an enclosing bracket
				return
			}
			continue
		}
		switch {
		case isOp(t, ",") || isOp(t, ";"):
			return
		case isOp(t, "=>"):
			if arrows == 0 {
				return
			}
			arrows--
		case isOp(t, "?"):
			questions++
		case isOp(t, ":") && questions > 0:
			questions--
		case isOp(t, ":") && p.ternary > 0:
			return
		case isName(t, "fn"):
			arrows++
		}
	}
}

// skipBalanced consumes the bracketed group the current token opens.
func (p *exprParser) skipBalanced() {
	for depth := 0; ; {
		t := p.take()
		d := bracketDelta(t)
		if depth += d; t.kind == tEOF || t.kind == tCloseTag || d < 0 && depth <= 0 {
			return
		}
	}
}

// element parses an expression that must end at a terminator (a list
// element, argument, key or statement); anything else after it makes the
// whole element unknown.
func (p *exprParser) element() (*node, error) {
	start := p.peek()
	n, err := p.expr()
	if err != nil {
		return nil, err
	}
	if next := p.peek(); !isTerminator(next) && !(p.ternary > 0 && isOp(next, ":")) {
		p.skipRest()
		return p.unknownFrom(start), nil
	}
	return n, nil
}

func (p *exprParser) expr() (*node, error) {
	start := p.peek()
	if err := p.enter(start); err != nil {
		return nil, err
	}
	defer p.leave()
	cond, err := p.coalesce()
	if err != nil {
		return nil, err
	}
	for isOp(p.peek(), "?") {
		p.take()
		var then *node
		if !isOp(p.peek(), ":") {
			p.ternary++
			then, err = p.expr()
			p.ternary--
			if err != nil {
				return nil, err
			}
		}
		if !isOp(p.peek(), ":") {
			p.skipRest()
			return p.unknownFrom(start), nil
		}
		p.take()
		els, err := p.coalesce()
		if err != nil {
			return nil, err
		}
		cond = &node{kind: nTernary, start: start.start, end: p.lastEnd(), line: start.line, kids: []*node{cond, then, els}}
	}
	return cond, nil
}

// coalesce parses "a ?? b", which is right-associative.
func (p *exprParser) coalesce() (*node, error) {
	start := p.peek()
	l, err := p.binary(1)
	if err != nil {
		return nil, err
	}
	if !isOp(p.peek(), "??") {
		return l, nil
	}
	p.take()
	if err := p.enter(start); err != nil {
		return nil, err
	}
	r, err := p.coalesce()
	p.leave()
	if err != nil {
		return nil, err
	}
	return &node{kind: nCoalesce, start: start.start, end: p.lastEnd(), line: start.line, kids: []*node{l, r}}, nil
}

// binaryPrec is PHP 8's precedence of a left-associative binary operator
// (higher binds tighter), 0 for anything else.
func binaryPrec(t token) int {
	if isName(t, "instanceof") {
		return 12
	}
	if t.kind != tOp {
		return 0
	}
	return binaryPrecs[t.text]
}

var binaryPrecs = map[string]int{"||": 1, "&&": 2, "|": 3, "^": 4, "&": 5,
	"==": 6, "!=": 6, "===": 6, "!==": 6, "<>": 6, "<=>": 6, "<": 7, "<=": 7, ">": 7, ">=": 7,
	".": 8, "<<": 9, ">>": 9, "+": 10, "-": 10, "*": 11, "/": 11, "%": 11}

func (p *exprParser) binary(minPrec int) (*node, error) {
	start := p.peek()
	l, err := p.unary()
	if err != nil {
		return nil, err
	}
	for {
		op := p.peek()
		prec := binaryPrec(op)
		if prec == 0 || prec < minPrec {
			return l, nil
		}
		p.take()
		r, err := p.binary(prec + 1)
		if err != nil {
			return nil, err
		}
		kind := nBinary
		if op.text == "." {
			kind = nConcat
		}
		l = &node{kind: kind, name: op.text, start: start.start, end: p.lastEnd(), line: start.line, kids: []*node{l, r}}
	}
}

// unary parses prefix operators and casts, then "**".
func (p *exprParser) unary() (*node, error) {
	start := p.peek()
	if err := p.enter(start); err != nil {
		return nil, err
	}
	defer p.leave()
	var kind nodeKind
	switch {
	case isOp(start, "!"):
		kind = nNot
	case isOp(start, "-"):
		kind = nNeg
	case isOp(start, "+"):
		kind = nPlus
	case isOp(start, "~"):
		kind = nBinary
	case start.kind == tCast:
		kind = nCast
	case isOp(start, "@"): // error suppression does not change the value
		p.take()
		return p.unary()
	default:
		base, err := p.postfix()
		if err != nil {
			return nil, err
		}
		if isOp(p.peek(), "**") {
			p.take()
			exp, err := p.unary()
			if err != nil {
				return nil, err
			}
			return &node{kind: nBinary, name: "**", start: start.start, end: p.lastEnd(), line: start.line, kids: []*node{base, exp}}, nil
		}
		return base, nil
	}
	p.take()
	x, err := p.unary()
	if err != nil {
		return nil, err
	}
	name := start.text
	if kind == nCast {
		name = start.val
	}
	return &node{kind: kind, name: name, start: start.start, end: p.lastEnd(), line: start.line, kids: []*node{x}}, nil
}

// postfix parses a primary; any dereference, call or property access after
// it ("x[0]", "x->y", "x::Y", "x()") makes the whole chain unknown.
func (p *exprParser) postfix() (*node, error) {
	start := p.peek()
	n, err := p.primary()
	if err != nil {
		return nil, err
	}
	before := p.pos
	if p.skipChain(); p.pos == before {
		return n, nil
	}
	return p.unknownFrom(start), nil
}

// skipChain consumes "(...)", "[...]", "{...}", "->name", "?->name",
// "::name" and "++"/"--" for as long as they follow.
func (p *exprParser) skipChain() {
	for {
		t := p.peek()
		switch {
		case isOp(t, "(") || isOp(t, "[") || isOp(t, "{"):
			p.skipBalanced()
		case isOp(t, "->") || isOp(t, "?->") || isOp(t, "::"):
			p.take()
			switch m := p.peek(); {
			case m.kind == tName || m.kind == tVar:
				p.take()
			case isOp(m, "{"):
				p.skipBalanced()
			}
		case isOp(t, "++") || isOp(t, "--"):
			p.take()
		default:
			return
		}
	}
}

// isOpaqueKeyword reports keywords that start expressions never evaluated
// whose end only brackets show: objects, closures, arrow functions.
func isOpaqueKeyword(t token) bool {
	return t.kind == tName && slices.Contains([]string{"new", "clone", "fn", "function", "static", "print",
		"yield", "throw", "include", "include_once", "require", "require_once"}, strings.ToLower(t.text))
}

// isSelfOrStatic reports the class names whose X::class needs a class scope.
func isSelfOrStatic(name string) bool {
	return slices.Contains([]string{"static", "self", "parent"}, strings.ToLower(name))
}

// isStrClass reports the spellings of Laravel's Str class.
func isStrClass(name string) bool {
	name = strings.ToLower(strings.TrimPrefix(name, "\\"))
	return name == "str" || name == "illuminate\\support\\str"
}

// isKnownFunction reports the global functions EvalConfig evaluates.
func isKnownFunction(name string) bool {
	_, helper := pathHelperDirs[name]
	return helper || name == "env" || name == "dirname"
}

func (p *exprParser) lit(t token, v *Value) *node {
	return &node{kind: nLit, start: t.start, end: t.end, line: t.line, val: v}
}

func (p *exprParser) primary() (*node, error) {
	t := p.peek()
	pos := Pos{File: p.file, Line: t.line}
	switch {
	case t.kind == tString && !t.interp:
		p.take()
		return p.lit(t, &Value{Kind: KindString, Str: t.val, Pos: pos}), nil
	case t.kind == tInt:
		p.take()
		return p.lit(t, &Value{Kind: KindInt, Int: t.i, Pos: pos}), nil
	case t.kind == tFloat:
		p.take()
		return p.lit(t, &Value{Kind: KindFloat, Float: t.f, Pos: pos}), nil
	case t.kind == tOpaque || t.kind == tVar || t.kind == tString: // an interpolated string
		p.take()
		return p.unknownFrom(t), nil
	case isOp(t, "["):
		return p.array("]")
	case isName(t, "array") && isOp(p.peekAt(1), "("):
		p.take()
		return p.array(")")
	case isName(t, "list") && isOp(p.peekAt(1), "("):
		p.take()
		p.skipBalanced()
		return p.unknownFrom(t), nil
	case isOp(t, "("):
		p.take()
		saved := p.ternary
		p.ternary = 0
		inner, err := p.element()
		p.ternary = saved
		if err != nil {
			return nil, err
		}
		if !isOp(p.peek(), ")") {
			p.skipRest()
			if isOp(p.peek(), ")") {
				p.take()
			}
			return p.unknownFrom(t), nil
		}
		p.take()
		return inner, nil
	case t.kind == tName && !isOpaqueKeyword(t):
		return p.name()
	}
	p.skipRest()
	if p.pos < len(p.toks) && p.lastEnd() <= t.start {
		// Nothing could be consumed (an unexpected closer): an empty unknown.
		return &node{kind: nUnknown, start: t.start, end: t.start, line: t.line}, nil
	}
	return p.unknownFrom(t), nil
}

// name parses constants, X::class, Str::slug(...) and function calls.
func (p *exprParser) name() (*node, error) {
	t := p.take()
	pos := Pos{File: p.file, Line: t.line}
	bare := strings.TrimPrefix(t.text, "\\")
	lower := strings.ToLower(bare)
	next := p.peek()
	switch {
	case isOp(next, "::"):
		member := p.peekAt(1)
		switch {
		case isName(member, "class") && !isSelfOrStatic(bare):
			p.take()
			p.take()
			return &node{kind: nLit, start: t.start, end: member.end, line: t.line, val: &Value{Kind: KindString, Str: bare, Pos: pos}}, nil
		case isStrClass(t.text) && isName(member, "slug") && isOp(p.peekAt(2), "("):
			p.take()
			p.take()
			return p.call(t, "str::slug")
		}
		return p.unknownFrom(t), nil // postfix() consumes the rest of the chain
	case isOp(next, "("):
		if isKnownFunction(lower) {
			return p.call(t, lower)
		}
		return p.unknownFrom(t), nil
	}
	// true, false, null and the magic constants are case-insensitive.
	var v *Value
	c, isConst := constants[bare]
	switch {
	case lower == "true" || lower == "false":
		v = &Value{Kind: KindBool, Bool: lower == "true"}
	case lower == "null":
		v = &Value{Kind: KindNull}
	case lower == "__line__":
		v = &Value{Kind: KindInt, Int: int64(t.line)}
	case lower == "__dir__" || lower == "__file__":
		return &node{kind: nCall, name: lower, start: t.start, end: t.end, line: t.line}, nil
	case isConst:
		v = &c
	default:
		return p.unknownFrom(t), nil
	}
	v.Pos = pos
	return p.lit(t, v), nil
}

// constants are the case-sensitive constants EvalConfig knows, for a Unix host.
var constants = map[string]Value{"PHP_EOL": {Kind: KindString, Str: "\n"}, "DIRECTORY_SEPARATOR": {Kind: KindString, Str: "/"},
	"NAN": {Kind: KindFloat, Float: math.NaN()}, "INF": {Kind: KindFloat, Float: math.Inf(1)},
	"PHP_INT_MAX": {Kind: KindInt, Int: math.MaxInt64}, "PHP_INT_MIN": {Kind: KindInt, Int: math.MinInt64}}

// call parses a supported function's arguments; spread or named ones make
// the call unknown.
func (p *exprParser) call(fn token, name string) (*node, error) {
	openIdx := p.pos
	p.take() // (
	n := &node{kind: nCall, name: name, start: fn.start, line: fn.line}
	saved := p.ternary
	p.ternary = 0
	defer func() { p.ternary = saved }()
	for !isOp(p.peek(), ")") {
		a := p.peek()
		if isOp(a, "...") || (a.kind == tName && isOp(p.peekAt(1), ":")) || a.kind == tEOF || a.kind == tCloseTag {
			p.pos = openIdx
			p.skipBalanced()
			return p.unknownFrom(fn), nil
		}
		arg, err := p.element()
		if err != nil {
			return nil, err
		}
		n.kids = append(n.kids, arg)
		if isOp(p.peek(), ",") {
			p.take()
			continue
		}
		if !isOp(p.peek(), ")") {
			p.skipBalanced()
			return p.unknownFrom(fn), nil
		}
	}
	p.take()
	n.end = p.lastEnd()
	return n, nil
}

func (p *exprParser) array(closer string) (*node, error) {
	open := p.take()
	if err := p.enter(open); err != nil {
		return nil, err
	}
	defer p.leave()
	saved := p.ternary
	p.ternary = 0
	defer func() { p.ternary = saved }()
	start := open.start
	if closer == ")" {
		start = p.toks[p.pos-2].start // the "array" keyword
	}
	n := &node{kind: nArray, start: start, line: open.line}
	for {
		t := p.peek()
		before := p.pos
		if isOp(t, closer) {
			p.take()
			n.end = p.lastEnd()
			return n, nil
		}
		if t.kind == tEOF || t.kind == tCloseTag || (t.kind == tOp && (t.text == ")" || t.text == "]" || t.text == "}" || t.text == ";")) {
			return nil, p.errAt(t, "expected %q to close the array opened on line %d, found %q", closer, open.line, t.text)
		}
		var item arrayItem
		if isOp(t, "...") {
			p.take()
			item.spread = true
		}
		if isOp(p.peek(), ",") { // an empty element, which PHP rejects
			p.take()
			continue
		}
		first, err := p.element()
		if err != nil {
			return nil, err
		}
		if !item.spread && isOp(p.peek(), "=>") {
			p.take()
			val, err := p.element()
			if err != nil {
				return nil, err
			}
			item.key, item.val = first, val
		} else {
			item.val = first
		}
		n.items = append(n.items, item)
		if isOp(p.peek(), ",") {
			p.take()
			continue
		}
		if !isOp(p.peek(), closer) {
			// "=>" after a key-value pair, or a stray closer: skip to the next element.
			p.skipRest()
			if isOp(p.peek(), "=>") || isOp(p.peek(), ",") {
				p.take()
			}
		}
		if p.pos == before { // never loop without consuming input
			p.take()
		}
	}
}
