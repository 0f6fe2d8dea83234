package spec

import (
	"math/big"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The expression language inside ${…} is the Unified Expression Language
// that k3po evaluates with JUEL (EL 2.2, with method invocations), which is
// what Zilla's scripts are written in:
//
//	${mcp:beginEx()
//	     .typeId(zilla:id("mcp"))
//	     .toolsCall()
//	         .sessionId("5ca1ab1e".concat(affinity))
//	         .build()
//	     .build()}
//	${kafka:timestamp() + deltaMillis}
//	${writeMaskA[0]}
//
// The parser accepts EL's literals, identifiers, ns:function(…) calls,
// .property and .method(…) suffixes chained across lines, [index], unary
// - ! not empty, the arithmetic, relational, equality and logical operators
// (symbolic and word forms) and a ? b : c. Beyond JUEL it also accepts hex
// integers (0x1F), a long suffix (1L), the \b \f \r \n \t escapes in
// strings, either quote escaped in either kind of string, and a } inside a
// string literal; JUEL rejects all of these, so no script that runs under
// k3po reads differently.

// MaxExprNesting is the deepest nesting of parentheses, arguments, indexes,
// unary operators and conditionals Parse accepts in one expression.
const MaxExprNesting = 64

// MaxExprChain is the longest run of suffixes (.name, .name(…), […]) or of
// binary operators at one nesting level Parse accepts.
const MaxExprChain = 1024

// Expr is a node of an expression. The concrete types are *Literal,
// *Ident, *Call, *MethodCall, *Member, *Index, *Unary, *Binary and *Cond.
type Expr interface {
	Node
	String() string
	expr()
}

// LitKind is the kind of a *Literal.
type LitKind uint8

// The literal kinds.
const (
	LitString LitKind = iota + 1
	LitInt
	LitFloat
	LitBool
	LitNull
)

// Literal is a constant. Raw is its spelling in the source. Value is a
// string (LitString, escapes decoded), an int64 (LitInt, or a *big.Int when
// it does not fit, as JUEL falls back to BigInteger), a float64 (LitFloat),
// a bool (LitBool) or nil (LitNull).
type Literal struct {
	Pos
	Kind  LitKind
	Raw   string
	Value any
}

// Ident refers to a variable: a property or a captured value.
type Ident struct {
	Pos
	Name string
}

// Call is a function call, ns:name(args) or, with no namespace, name(args).
type Call struct {
	Pos
	Namespace string
	Name      string
	Args      []Expr
}

// MethodCall is receiver.name(args). Pos is the position of name.
type MethodCall struct {
	Pos
	Receiver Expr
	Name     string
	Args     []Expr
}

// Member is receiver.name without arguments (an EL property access).
type Member struct {
	Pos
	Receiver Expr
	Name     string
}

// Index is receiver[index]. Pos is the position of the [.
type Index struct {
	Pos
	Receiver Expr
	Index    Expr
}

// Unary is an operator applied to X. Op is "-", "!" or "empty" ("not" is
// read as "!").
type Unary struct {
	Pos
	Op string
	X  Expr
}

// Binary is X Op Y. Op is the symbolic form: "||", "&&", "==", "!=", "<",
// ">", "<=", ">=", "+", "-", "*", "/" or "%"; the word forms (or, and, eq,
// ne, lt, gt, le, ge, div, mod) are read as these. Pos is the operator's.
type Binary struct {
	Pos
	Op   string
	X, Y Expr
}

// Cond is Cond ? Then : Else. Pos is the position of the ?.
type Cond struct {
	Pos
	Cond, Then, Else Expr
}

func (*Literal) expr()    {}
func (*Ident) expr()      {}
func (*Call) expr()       {}
func (*MethodCall) expr() {}
func (*Member) expr()     {}
func (*Index) expr()      {}
func (*Unary) expr()      {}
func (*Binary) expr()     {}
func (*Cond) expr()       {}

// ParseExpr parses the text of one expression, without the ${ and }, as if
// it began at pos (a zero Pos counts from 1:1). It is what Parse uses for
// each ${…}; runners can use it for expressions that come from elsewhere.
func ParseExpr(pos Pos, src string) (x Expr, err error) {
	f := newSrcFile(pos.File, []byte(src))
	f.base = pos
	p := &exprParser{f: f}
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(bailout); !ok {
				panic(r)
			}
			x, err = nil, p.errs.Err()
		}
	}()
	p.scan(0, false)
	x = p.parse()
	return x, nil
}

// Expression tokens.
type etokKind uint8

const (
	etEOF    etokKind = iota
	etClose           // the } that ends ${…}
	etIdent           // identifier, possibly a word operator
	etInt             // integer literal
	etFloat           // floating-point literal
	etString          // string literal
	etPunct           // operator or punctuation
)

type etok struct {
	kind etokKind
	off  int    // offset of the token in the file
	text string // source text (for etString, the decoded value is in val)
	val  string
}

// exprParser scans one ${…} into tokens, then parses them by recursive
// descent in JUEL's precedence order.
type exprParser struct {
	f      *srcFile
	toks   []etok
	i      int
	errs   ErrorList
	depth  int
	inThen int // how many a ? … : branches enclose the current token
	end    int // offset just past the closing }, when scanned from a script
}

func (p *exprParser) fail(off int, format string, args ...any) {
	p.errs.add(p.f.pos(off), format, args...)
	panic(bailout{})
}

// eword lists JUEL's reserved words; none can name a variable or function.
var ewords = map[string]bool{
	"and": true, "or": true, "not": true, "eq": true, "ne": true, "lt": true,
	"gt": true, "le": true, "ge": true, "true": true, "false": true,
	"null": true, "empty": true, "div": true, "mod": true, "instanceof": true,
}

// scan tokenizes from off. With closing set the expression ends at the
// first } outside a string literal (the end of ${…}); otherwise at the end
// of the input.
func (p *exprParser) scan(off int, closing bool) {
	src := p.f.src
	for {
		for off < len(src) && isSpace(src[off]) {
			off++
		}
		if off >= len(src) {
			if closing {
				p.fail(off, "expected } to end the expression, found end of file")
			}
			p.toks = append(p.toks, etok{kind: etEOF, off: off})
			return
		}
		c := src[off]
		start := off
		switch {
		case c == '}' && closing:
			p.toks = append(p.toks, etok{kind: etClose, off: off, text: "}"})
			p.end = off + 1
			return
		case c == '"' || c == '\'':
			val, n := p.scanString(off)
			off += n
			p.toks = append(p.toks, etok{kind: etString, off: start, text: string(src[start:off]), val: val})
		case isDigit(c) || c == '.' && off+1 < len(src) && isDigit(src[off+1]):
			kind, n := scanENumber(src[off:])
			off += n
			p.toks = append(p.toks, etok{kind: kind, off: start, text: string(src[start:off])})
		case isEIdentStart(src[off:]):
			off += scanEIdent(src[off:])
			p.toks = append(p.toks, etok{kind: etIdent, off: start, text: string(src[start:off])})
		default:
			n := punctLen(src[off:])
			if n == 0 {
				p.fail(off, "expected an expression, found %s", quoteChar(src[off:]))
			}
			off += n
			p.toks = append(p.toks, etok{kind: etPunct, off: start, text: string(src[start:off])})
		}
	}
}

// punctLen returns the length of the operator at the start of b, or 0.
func punctLen(b []byte) int {
	if len(b) >= 2 {
		switch string(b[:2]) {
		case "==", "!=", "<=", ">=", "&&", "||":
			return 2
		}
	}
	switch b[0] {
	case '(', ')', '[', ']', '.', ',', ':', '?', '+', '-', '*', '/', '%', '<', '>', '!':
		return 1
	}
	return 0
}

// scanString scans a quoted string at off and returns its decoded value and
// length.
func (p *exprParser) scanString(off int) (string, int) {
	src := p.f.src
	quote := src[off]
	var b strings.Builder
	i := off + 1
	for i < len(src) {
		c := src[i]
		switch {
		case c == quote:
			return b.String(), i + 1 - off
		case c == '\\':
			if i+1 >= len(src) {
				p.fail(off, "string literal not terminated")
			}
			r, ok := unescape(src[i+1])
			if !ok {
				p.fail(i, `unknown escape sequence %s in string; expected one of \" \' \\ \b \f \n \r \t`, escapeDesc(src[i:]))
			}
			b.WriteByte(r)
			i += 2
		default:
			b.WriteByte(c)
			i++
		}
	}
	p.fail(off, "string literal not terminated")
	return "", 0
}

// unescape decodes the character after a backslash, with k3po's escapes.
func unescape(c byte) (byte, bool) {
	switch c {
	case 'b':
		return '\b', true
	case 'f':
		return '\f', true
	case 'r':
		return '\r', true
	case 'n':
		return '\n', true
	case 't':
		return '\t', true
	case '"', '\'', '\\':
		return c, true
	}
	return 0, false
}

// scanENumber scans an EL number: digits, a fraction and an exponent, or a
// hex integer, and an optional L suffix on integers.
func scanENumber(b []byte) (etokKind, int) {
	i := 0
	if len(b) > 2 && b[0] == '0' && (b[1] == 'x' || b[1] == 'X') && isHex(b[2]) {
		i = 2
		for i < len(b) && (isHex(b[i]) || b[i] == '_' && i+1 < len(b) && isHex(b[i+1])) {
			i++
		}
		if i < len(b) && b[i] == 'L' {
			i++
		}
		return etInt, i
	}
	kind := etInt
	for i < len(b) && isDigit(b[i]) {
		i++
	}
	if i < len(b) && b[i] == '.' && (i+1 >= len(b) || !isEIdentStart(b[i+1:])) {
		kind = etFloat
		i++
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		j := i + 1
		if j < len(b) && (b[j] == '+' || b[j] == '-') {
			j++
		}
		if j < len(b) && isDigit(b[j]) {
			kind = etFloat
			for j < len(b) && isDigit(b[j]) {
				j++
			}
			i = j
		}
	}
	if kind == etInt && i < len(b) && b[i] == 'L' {
		i++
	}
	return kind, i
}

func isEIdentStart(b []byte) bool {
	if b[0] < utf8.RuneSelf {
		c := b[0]
		return c == '_' || c == '$' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
	}
	r, _ := utf8.DecodeRune(b)
	return unicode.IsLetter(r)
}

func scanEIdent(b []byte) int {
	i := 0
	for i < len(b) {
		if isDigit(b[i]) || isEIdentStart(b[i:]) {
			_, n := utf8.DecodeRune(b[i:])
			i += n
			continue
		}
		break
	}
	return i
}

func (p *exprParser) tok() etok { return p.toks[p.i] }
func (p *exprParser) peekAt(n int) etok {
	return p.toks[min(p.i+n, len(p.toks)-1)]
}
func (p *exprParser) next() { p.i = min(p.i+1, len(p.toks)-1) }

func (p *exprParser) is(text string) bool {
	t := p.tok()
	return (t.kind == etPunct || t.kind == etIdent) && t.text == text
}

func (p *exprParser) expect(text string) etok {
	t := p.tok()
	if !p.is(text) {
		p.fail(t.off, "expected %q, found %s", text, describeEtok(t))
	}
	p.next()
	return t
}

// parse parses the whole token list as one expression.
func (p *exprParser) parse() Expr {
	x := p.expr()
	if t := p.tok(); t.kind != etEOF && t.kind != etClose {
		p.fail(t.off, "expected an operator or the end of the expression, found %s", describeEtok(t))
	}
	return x
}

func (p *exprParser) enter(off int) {
	p.depth++
	if p.depth > MaxExprNesting {
		p.fail(off, "expression nested more than %d deep", MaxExprNesting)
	}
}

func (p *exprParser) leave() { p.depth-- }

// expr := or ('?' expr ':' expr)?
func (p *exprParser) expr() Expr {
	x := p.binary(0)
	if p.is("?") {
		t := p.tok()
		p.enter(t.off)
		p.next()
		p.inThen++
		then := p.expr()
		p.inThen--
		p.expect(":")
		els := p.expr()
		p.leave()
		x = &Cond{Pos: p.f.pos(t.off), Cond: x, Then: then, Else: els}
	}
	return x
}

// binaryLevels lists the binary operators from the loosest to the tightest,
// with their word forms mapped to the symbols.
var binaryLevels = []map[string]string{
	{"||": "||", "or": "||"},
	{"&&": "&&", "and": "&&"},
	{"==": "==", "eq": "==", "!=": "!=", "ne": "!="},
	{"<": "<", "lt": "<", ">": ">", "gt": ">", "<=": "<=", "le": "<=", ">=": ">=", "ge": ">="},
	{"+": "+", "-": "-"},
	{"*": "*", "/": "/", "div": "/", "%": "%", "mod": "%"},
}

// binary parses the left-associative operators of binaryLevels[level] and
// tighter.
func (p *exprParser) binary(level int) Expr {
	if level == len(binaryLevels) {
		return p.unary()
	}
	x := p.binary(level + 1)
	for n := 0; ; n++ {
		t := p.tok()
		if t.kind != etPunct && t.kind != etIdent {
			return x
		}
		op, ok := binaryLevels[level][t.text]
		if !ok {
			return x
		}
		if n == MaxExprChain {
			p.fail(t.off, "more than %d operators in a row", MaxExprChain)
		}
		p.next()
		y := p.binary(level + 1)
		x = &Binary{Pos: p.f.pos(t.off), Op: op, X: x, Y: y}
	}
}

// unary := ('-' | '!' | 'not' | 'empty') unary | value
func (p *exprParser) unary() Expr {
	t := p.tok()
	if (t.kind == etPunct || t.kind == etIdent) && (t.text == "-" || t.text == "!" || t.text == "not" || t.text == "empty") {
		op := t.text
		if op == "not" {
			op = "!"
		}
		p.enter(t.off)
		p.next()
		x := p.unary()
		p.leave()
		return &Unary{Pos: p.f.pos(t.off), Op: op, X: x}
	}
	return p.value()
}

// value := primary ('.' name ('(' args ')')? | '[' expr ']')*
func (p *exprParser) value() Expr {
	x := p.primary()
	for n := 0; ; n++ {
		t := p.tok()
		if !p.is(".") && !p.is("[") {
			return x
		}
		if n == MaxExprChain {
			p.fail(t.off, "more than %d suffixes in a row", MaxExprChain)
		}
		p.next()
		if t.text == "[" {
			p.enter(t.off)
			idx := p.expr()
			p.expect("]")
			p.leave()
			x = &Index{Pos: p.f.pos(t.off), Receiver: x, Index: idx}
			continue
		}
		// After a dot any identifier names the member, reserved words
		// included.
		name := p.tok()
		if name.kind != etIdent {
			p.fail(name.off, "expected a property or method name after \".\", found %s", describeEtok(name))
		}
		p.next()
		if p.is("(") {
			args := p.args()
			x = &MethodCall{Pos: p.f.pos(name.off), Receiver: x, Name: name.text, Args: args}
		} else {
			x = &Member{Pos: p.f.pos(name.off), Receiver: x, Name: name.text}
		}
	}
}

// args := '(' (expr (',' expr)*)? ')'
func (p *exprParser) args() []Expr {
	open := p.expect("(")
	p.enter(open.off)
	defer p.leave()
	args := []Expr{}
	if p.is(")") {
		p.next()
		return args
	}
	for {
		args = append(args, p.expr())
		if p.is(")") {
			p.next()
			return args
		}
		if !p.is(",") {
			t := p.tok()
			p.fail(t.off, "expected \",\" or \")\" in the arguments, found %s", describeEtok(t))
		}
		p.next()
	}
}

// primary := literal | ident | ns ':' name args | name args | '(' expr ')'
func (p *exprParser) primary() Expr {
	t := p.tok()
	pos := p.f.pos(t.off)
	switch t.kind {
	case etString:
		p.next()
		return &Literal{Pos: pos, Kind: LitString, Raw: t.text, Value: t.val}
	case etInt:
		p.next()
		return &Literal{Pos: pos, Kind: LitInt, Raw: t.text, Value: p.intValue(t)}
	case etFloat:
		p.next()
		v, err := strconv.ParseFloat(t.text, 64)
		if err != nil && !isRangeErr(err) {
			p.fail(t.off, "malformed number %s", t.text)
		}
		return &Literal{Pos: pos, Kind: LitFloat, Raw: t.text, Value: v}
	case etIdent:
		switch t.text {
		case "true", "false":
			p.next()
			return &Literal{Pos: pos, Kind: LitBool, Raw: t.text, Value: t.text == "true"}
		case "null":
			p.next()
			return &Literal{Pos: pos, Kind: LitNull, Raw: t.text}
		}
		if ewords[t.text] {
			p.fail(t.off, "expected an expression, found reserved word %q", t.text)
		}
		p.next()
		// As in JUEL, ns:name is a function only when "(" follows, so
		// that a ? b : c reads as a conditional.
		if p.is(":") {
			if name, open := p.peekAt(1), p.peekAt(2); name.kind == etIdent && !ewords[name.text] && open.kind == etPunct && open.text == "(" {
				p.next()
				p.next()
				return &Call{Pos: pos, Namespace: t.text, Name: name.text, Args: p.args()}
			}
			if name, after := p.peekAt(1), p.peekAt(2); name.kind == etIdent && p.inThen == 0 {
				p.fail(after.off, "expected \"(\" after function %s:%s, found %s", t.text, name.text, describeEtok(after))
			}
		}
		if p.is("(") {
			return &Call{Pos: pos, Name: t.text, Args: p.args()}
		}
		return &Ident{Pos: pos, Name: t.text}
	case etPunct:
		if t.text == "(" {
			p.enter(t.off)
			p.next()
			x := p.expr()
			p.expect(")")
			p.leave()
			return x
		}
	}
	p.fail(t.off, "expected an expression, found %s", describeEtok(t))
	return nil
}

// intValue decodes an integer literal: decimal, or hex with 0x; a trailing
// L and underscores between hex digits are allowed.
func (p *exprParser) intValue(t etok) any {
	s := strings.TrimSuffix(t.text, "L")
	base := 10
	if strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X") {
		s, base = strings.ReplaceAll(s[2:], "_", ""), 16
	}
	v, err := strconv.ParseInt(s, base, 64)
	if err == nil {
		return v
	}
	b, ok := new(big.Int).SetString(s, base)
	if !ok {
		p.fail(t.off, "malformed number %s", t.text)
	}
	return b
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

func describeEtok(t etok) string {
	switch t.kind {
	case etEOF:
		return "end of expression"
	case etClose:
		return `"}"`
	case etString:
		return "string " + shorten(t.text)
	case etInt, etFloat:
		return "number " + t.text
	case etIdent:
		return "identifier " + strconv.Quote(t.text)
	}
	return strconv.Quote(t.text)
}

// Precedences for printing, tightest highest.
const (
	precCond = iota + 1
	precOr
	precAnd
	precEq
	precRel
	precAdd
	precMul
	precUnary
	precValue
)

var binaryPrec = map[string]int{
	"||": precOr, "&&": precAnd, "==": precEq, "!=": precEq,
	"<": precRel, ">": precRel, "<=": precRel, ">=": precRel,
	"+": precAdd, "-": precAdd, "*": precMul, "/": precMul, "%": precMul,
}

func exprPrec(x Expr) int {
	switch x := x.(type) {
	case *Cond:
		return precCond
	case *Binary:
		return binaryPrec[x.Op]
	case *Unary:
		return precUnary
	}
	return precValue
}

// writeExpr prints x, in parentheses when it binds looser than prec.
func writeExpr(b *strings.Builder, x Expr, prec int) {
	if exprPrec(x) < prec {
		b.WriteByte('(')
		writeExpr(b, x, 0)
		b.WriteByte(')')
		return
	}
	switch x := x.(type) {
	case *Literal:
		if x.Kind == LitString {
			s, _ := x.Value.(string)
			b.WriteString(quoteText(s))
		} else {
			b.WriteString(x.Raw)
		}
	case *Ident:
		b.WriteString(x.Name)
	case *Call:
		if x.Namespace != "" {
			b.WriteString(x.Namespace)
			b.WriteByte(':')
		}
		b.WriteString(x.Name)
		writeArgs(b, x.Args)
	case *MethodCall:
		writeExpr(b, x.Receiver, precValue)
		b.WriteByte('.')
		b.WriteString(x.Name)
		writeArgs(b, x.Args)
	case *Member:
		writeExpr(b, x.Receiver, precValue)
		b.WriteByte('.')
		b.WriteString(x.Name)
	case *Index:
		writeExpr(b, x.Receiver, precValue)
		b.WriteByte('[')
		writeExpr(b, x.Index, 0)
		b.WriteByte(']')
	case *Unary:
		b.WriteString(x.Op)
		if x.Op == "empty" {
			b.WriteByte(' ')
		}
		// "- -1" must not print as "--1", which is not one token in EL
		// but reads badly; a space keeps nested unaries apart.
		if _, nested := x.X.(*Unary); nested {
			b.WriteByte(' ')
		}
		writeExpr(b, x.X, precUnary)
	case *Binary:
		prec := binaryPrec[x.Op]
		writeExpr(b, x.X, prec)
		b.WriteByte(' ')
		b.WriteString(x.Op)
		b.WriteByte(' ')
		writeExpr(b, x.Y, prec+1)
	case *Cond:
		writeExpr(b, x.Cond, precOr)
		b.WriteString(" ? ")
		// "a ? b : f(x)" would read back with the function b:f, as JUEL
		// reads it, so a then branch ending in a name before an else
		// branch starting with a call keeps parentheses.
		then, els := exprString(x.Then), exprString(x.Else)
		r, _ := utf8.DecodeLastRuneInString(then)
		n := scanEIdent([]byte(els))
		if (r == '_' || r == '$' || unicode.IsLetter(r) || unicode.IsDigit(r)) && n > 0 && n < len(els) && els[n] == '(' {
			then = "(" + then + ")"
		}
		b.WriteString(then)
		b.WriteString(" : ")
		b.WriteString(els)
	}
}

func writeArgs(b *strings.Builder, args []Expr) {
	b.WriteByte('(')
	for i, a := range args {
		if i > 0 {
			b.WriteString(", ")
		}
		writeExpr(b, a, 0)
	}
	b.WriteByte(')')
}

func exprString(x Expr) string {
	var b strings.Builder
	writeExpr(&b, x, 0)
	return b.String()
}

// String prints the expression in EL syntax, on one line.
func (x *Literal) String() string { return exprString(x) }

// String prints the expression in EL syntax, on one line.
func (x *Ident) String() string { return exprString(x) }

// String prints the expression in EL syntax, on one line.
func (x *Call) String() string { return exprString(x) }

// String prints the expression in EL syntax, on one line.
func (x *MethodCall) String() string { return exprString(x) }

// String prints the expression in EL syntax, on one line.
func (x *Member) String() string { return exprString(x) }

// String prints the expression in EL syntax, on one line.
func (x *Index) String() string { return exprString(x) }

// String prints the expression in EL syntax, on one line.
func (x *Unary) String() string { return exprString(x) }

// String prints the expression in EL syntax, on one line.
func (x *Binary) String() string { return exprString(x) }

// String prints the expression in EL syntax, on one line.
func (x *Cond) String() string { return exprString(x) }
