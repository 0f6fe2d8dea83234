package idl

import (
	"fmt"
	"math"
	"strings"
)

// MaxScopeDepth is the deepest nesting of scopes Parse accepts.
const MaxScopeDepth = 64

// Parse parses one IDL file. filename is used only in positions. On error
// it returns a nil *File and an ErrorList; parsing stops at the first
// syntax error. Parse does not resolve names: call Check on the parsed
// files for that.
func Parse(filename string, src []byte) (f *File, err error) {
	p := &parser{lx: newLexer(filename, src)}
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(bailout); !ok {
				panic(r)
			}
			f, err = nil, p.errs.Err()
		}
	}()
	p.advance()
	f = p.parseFile(filename)
	return f, nil
}

// bailout is panicked by parser.fail to unwind to Parse.
type bailout struct{}

type parser struct {
	lx    lexer
	tok   token
	errs  ErrorList
	depth int
}

// fail records an error at pos and stops the parse.
func (p *parser) fail(pos Pos, format string, args ...any) {
	p.errs.add(pos, format, args...)
	panic(bailout{})
}

// advance reads the next token.
func (p *parser) advance() {
	tok, err := p.lx.next()
	if err != nil {
		p.errs = append(p.errs, err)
		panic(bailout{})
	}
	p.tok = tok
}

// peek returns the token after the current one without consuming it.
func (p *parser) peek() token {
	lx := p.lx
	tok, err := lx.next()
	if err != nil {
		return token{kind: tokEOF, pos: err.Pos}
	}
	return tok
}

// isWord reports whether the current token is the identifier or keyword w.
func (p *parser) isWord(w string) bool {
	return p.tok.kind == tokIdent && p.tok.text == w
}

// expect consumes a token of kind k, or fails with "expected k context,
// found …".
func (p *parser) expect(k tokenKind, context string) token {
	tok := p.tok
	if tok.kind != k {
		p.fail(tok.pos, "expected %s %s, found %s", k.quote(), context, tok)
	}
	p.advance()
	return tok
}

// expectWord consumes the keyword w.
func (p *parser) expectWord(w, context string) {
	if !p.isWord(w) {
		p.fail(p.tok.pos, "expected '%s' %s, found %s", w, context, p.tok)
	}
	p.advance()
}

// name consumes an identifier that is not a keyword: the name of a scope,
// declaration, field or enum constant. what describes it for messages.
func (p *parser) name(what string) token {
	tok := p.tok
	if tok.kind != tokIdent {
		p.fail(tok.pos, "expected %s, found %s", what, tok)
	}
	if keywords[tok.text] {
		p.fail(tok.pos, "expected %s, found keyword '%s' (keywords and type names are reserved)", what, tok.text)
	}
	p.advance()
	return tok
}

func (p *parser) parseFile(filename string) *File {
	f := &File{Name: filename}
	for {
		if p.tok.kind == tokEOF && len(f.Scopes) > 0 {
			return f
		}
		if !p.isWord("scope") {
			p.fail(p.tok.pos, "expected 'scope', found %s", p.tok)
		}
		f.Scopes = append(f.Scopes, p.parseScope(nil))
	}
}

// parseScope parses "scope NAME { [option byteorder …;] (scope | decl)* }".
func (p *parser) parseScope(parent *Scope) *Scope {
	kw := p.tok
	p.advance() // scope
	if p.depth >= MaxScopeDepth {
		p.fail(kw.pos, "scopes are nested too deeply (the limit is %d)", MaxScopeDepth)
	}
	p.depth++
	defer func() { p.depth-- }()

	name := p.name("scope name")
	s := &Scope{Pos: name.pos, Name: name.text, Parent: parent}
	if parent != nil {
		s.ByteOrder = parent.ByteOrder
	}
	p.expect(tokLBrace, fmt.Sprintf("after scope name %q", s.Name))

	optionSeen := false
	for p.isWord("option") {
		opt := p.tok
		p.advance()
		p.expectWord("byteorder", "after 'option'")
		switch {
		case p.isWord("native"):
			s.ByteOrder = Native
		case p.isWord("network"):
			s.ByteOrder = Network
		default:
			p.fail(p.tok.pos, "expected 'native' or 'network' after 'option byteorder', found %s", p.tok)
		}
		if optionSeen {
			p.fail(opt.pos, "duplicate byteorder option in scope %q", s.Name)
		}
		optionSeen = true
		p.advance()
		p.expect(tokSemicolon, "after byteorder option")
	}

	for {
		tok := p.tok
		if tok.kind == tokRBrace {
			p.advance()
			return s
		}
		if tok.kind == tokEOF {
			p.fail(tok.pos, "expected '}' to close scope %q, found end of file", s.Name)
		}
		word := ""
		if tok.kind == tokIdent {
			word = tok.text
		}
		switch word {
		case "scope":
			s.Scopes = append(s.Scopes, p.parseScope(s))
		case "struct":
			s.Decls = append(s.Decls, p.parseStruct(s))
		case "union":
			s.Decls = append(s.Decls, p.parseUnion(s))
		case "enum":
			s.Decls = append(s.Decls, p.parseEnum(s))
		case "typedef":
			s.Decls = append(s.Decls, p.parseTypedef(s))
		case "list":
			s.Decls = append(s.Decls, p.parseList(s))
		case "option":
			p.fail(tok.pos, "option must come first in the body of scope %q", s.Name)
		case "variant":
			p.fail(tok.pos, "variant declarations are not supported")
		case "map":
			p.fail(tok.pos, "map declarations are not supported")
		default:
			p.fail(tok.pos, "expected declaration (struct, union, enum, typedef, list or scope) or '}' in scope %q, found %s", s.Name, tok)
		}
	}
}

// parseTypeRef parses a possibly qualified type name: int32, Frame,
// core::stream::Frame or ::core::stream::Frame.
func (p *parser) parseTypeRef(what string) *TypeRef {
	ref := &TypeRef{Pos: p.tok.pos}
	var b strings.Builder
	if p.tok.kind == tokScopeSep {
		b.WriteString("::")
		p.advance()
	}
	tok := p.tok
	if tok.kind != tokIdent {
		p.fail(tok.pos, "expected %s, found %s", what, tok)
	}
	if _, prim := PrimKindOf(tok.text); prim && b.Len() == 0 {
		p.advance()
		ref.Name = tok.text
		return ref
	}
	for {
		tok := p.tok
		switch {
		case tok.kind != tokIdent:
			p.fail(tok.pos, "expected %s, found %s", what, tok)
		case tok.text == "varstring" || tok.text == "varuint32n":
			p.fail(tok.pos, "%s is not supported", tok.text)
		case tok.text == "string":
			p.fail(tok.pos, "string is not supported: use string8, string16 or string32")
		case keywords[tok.text]:
			p.fail(tok.pos, "expected %s, found %s", what, tok)
		}
		b.WriteString(tok.text)
		p.advance()
		if p.tok.kind != tokScopeSep {
			break
		}
		b.WriteString("::")
		p.advance()
	}
	ref.Name = b.String()
	return ref
}

// parseStruct parses "struct NAME [extends T] [[TYPEID]] { field* }".
func (p *parser) parseStruct(scope *Scope) *Struct {
	p.advance() // struct
	name := p.name("struct name")
	s := &Struct{Pos: name.pos, Name: name.text, Scope: scope}
	if p.isWord("extends") {
		p.advance()
		s.Extends = p.parseTypeRef("type name after 'extends'")
	}
	if p.tok.kind == tokLBrack {
		p.advance()
		tok := p.tok
		if tok.kind != tokInt {
			p.fail(tok.pos, "expected type id after '[', found %s", tok)
		}
		if tok.num > math.MaxUint32 {
			p.fail(tok.pos, "type id %s does not fit uint32", tok.text)
		}
		p.advance()
		s.HasTypeID, s.TypeID = true, uint32(tok.num)
		p.expect(tokRBrack, "after type id")
	}
	p.expect(tokLBrace, fmt.Sprintf("to open struct %q", s.Name))
	for p.tok.kind != tokRBrace {
		s.Fields = append(s.Fields, p.parseMembers(memberOfStruct, s.Name)...)
	}
	p.advance()
	return s
}

// parseUnion parses "union NAME switch (T) [extends T] { case* }".
func (p *parser) parseUnion(scope *Scope) *Union {
	p.advance() // union
	name := p.name("union name")
	u := &Union{Pos: name.pos, Name: name.text, Scope: scope}
	p.expectWord("switch", fmt.Sprintf("after union name %q", u.Name))
	p.expect(tokLParen, "after 'switch'")
	u.Switch = p.parseTypeRef("switch type")
	p.expect(tokRParen, "after switch type")
	if p.isWord("extends") {
		p.advance()
		u.Extends = p.parseTypeRef("type name after 'extends'")
	}
	p.noTypeID("union")
	p.expect(tokLBrace, fmt.Sprintf("to open union %q", u.Name))
	for p.tok.kind != tokRBrace {
		if !p.isWord("case") {
			p.fail(p.tok.pos, "expected 'case' or '}' in union %q, found %s", u.Name, p.tok)
		}
		c := &Case{Pos: p.tok.pos}
		p.advance()
		switch tok := p.tok; {
		case tok.kind == tokInt || tok.kind == tokMinus:
			c.Value = p.parseInt("case value")
		case tok.kind == tokIdent && !keywords[tok.text]:
			p.advance()
			c.Value = &Value{Pos: tok.pos, Kind: IdentValue, Ident: tok.text}
		default:
			p.fail(tok.pos, "expected case value (an integer or an enum constant), found %s", tok)
		}
		p.expect(tokColon, "after case value")
		c.Field = p.parseMembers(memberOfCase, u.Name)[0]
		u.Cases = append(u.Cases, c)
	}
	p.advance()
	return u
}

// noTypeID fails on a "[type id]" after a declaration other than a struct.
func (p *parser) noTypeID(kind string) {
	if p.tok.kind == tokLBrack {
		p.fail(p.tok.pos, "a type id is allowed only on structs, not on a %s", kind)
	}
}

// parseEnum parses "enum NAME [(BASE)] { A, B(2), … }".
func (p *parser) parseEnum(scope *Scope) *Enum {
	p.advance() // enum
	name := p.name("enum name")
	e := &Enum{Pos: name.pos, Name: name.text, Scope: scope}
	if p.tok.kind == tokLParen {
		p.advance()
		e.Base = p.parseTypeRef("enum base type")
		if k, ok := PrimKindOf(e.Base.Name); ok && !k.IsInteger() {
			p.fail(e.Base.Pos, "enum base must be an integer type, found %s", k)
		}
		p.expect(tokRParen, "after enum base type")
	}
	p.noTypeID("enum")
	p.expect(tokLBrace, fmt.Sprintf("to open enum %q", e.Name))
	for {
		tok := p.name(fmt.Sprintf("constant name in enum %q", e.Name))
		v := &EnumValue{Pos: tok.pos, Name: tok.text}
		if p.tok.kind == tokLParen {
			p.advance()
			if p.tok.kind == tokString {
				p.fail(p.tok.pos, "string enum values are not supported: enum base must be an integer type")
			}
			lit := p.parseInt(fmt.Sprintf("value of enum constant %q", v.Name))
			v.Value, v.Uint, v.Explicit = lit.Int, lit.Uint, true
			p.expect(tokRParen, fmt.Sprintf("after value of enum constant %q", v.Name))
		}
		e.Values = append(e.Values, v)
		if p.tok.kind == tokComma {
			p.advance()
			if p.tok.kind == tokRBrace {
				break
			}
			continue
		}
		if p.tok.kind != tokRBrace {
			p.fail(p.tok.pos, "expected ',' or '}' after enum constant %q, found %s", v.Name, p.tok)
		}
		break
	}
	p.advance()
	return e
}

// parseTypedef parses "typedef TYPE as NAME;".
func (p *parser) parseTypedef(scope *Scope) *Typedef {
	p.advance() // typedef
	target := p.parseTypeRef("type name after 'typedef'")
	if p.tok.kind == tokLAngle {
		p.fail(p.tok.pos, "parametric typedefs are not supported")
	}
	p.expectWord("as", fmt.Sprintf("after typedef target %q", target.Name))
	name := p.name("typedef name")
	p.expect(tokSemicolon, fmt.Sprintf("after typedef %q", name.text))
	return &Typedef{Pos: name.pos, Name: name.text, Scope: scope, Target: target}
}

// parseList parses "list<LENGTH, COUNT[, MISSING]> NAME { field* }".
func (p *parser) parseList(scope *Scope) *List {
	p.advance() // list
	if p.tok.kind != tokLAngle {
		if p.tok.kind == tokIdent && p.peek().kind == tokIdent && p.peek().text == "using" {
			p.fail(p.peek().pos, "list … using declarations are not supported")
		}
		p.fail(p.tok.pos, "expected '<' after 'list' (list<length type, count type> Name), found %s", p.tok)
	}
	p.advance()
	l := &List{}
	l.LengthType = p.parseTypeRef("list length type")
	p.expect(tokComma, "after list length type")
	l.CountType = p.parseTypeRef("list count type")
	if p.tok.kind == tokComma {
		p.advance()
		lit := p.parseInt("list missing-field byte")
		if lit.Uint || lit.Int < 0 || lit.Int > math.MaxUint8 {
			p.fail(lit.Pos, "list missing-field byte %s does not fit uint8", lit)
		}
		l.HasMissing, l.Missing = true, lit.Int
	}
	p.expect(tokRAngle, "after list parameters")
	name := p.name("list name")
	l.Pos, l.Name, l.Scope = name.pos, name.text, scope
	if p.isWord("using") {
		p.fail(p.tok.pos, "list … using declarations are not supported")
	}
	p.noTypeID("list")
	p.expect(tokLBrace, fmt.Sprintf("to open list %q", l.Name))
	for p.tok.kind != tokRBrace {
		l.Fields = append(l.Fields, p.parseMembers(memberOfList, l.Name)...)
	}
	p.advance()
	return l
}

// memberKind tells parseMembers where the member is declared.
type memberKind uint8

const (
	memberOfStruct memberKind = iota
	memberOfList
	memberOfCase
)

// parseMembers parses one member declaration:
//
//	[required] TYPE [ '[' ']' | '[' N ']' | '[' FIELD ']' ] NAME {, NAME} [= VALUE] ;
//
// Several names declare several fields of the same type; a default needs a
// single name. Union cases take a single name.
func (p *parser) parseMembers(kind memberKind, owner string) []*Field {
	if p.tok.kind == tokEOF {
		p.fail(p.tok.pos, "expected field or '}' in %q, found end of file", owner)
	}
	required := false
	if p.isWord("required") {
		if kind != memberOfList {
			p.fail(p.tok.pos, "'required' is allowed only on list fields")
		}
		required = true
		p.advance()
	}
	if p.tok.kind == tokIdent {
		switch p.tok.text {
		case "case":
			p.fail(p.tok.pos, "'case' is allowed only in unions")
		case "map", "array", "list":
			p.fail(p.tok.pos, "inline %s types are not supported", p.tok.text)
		}
	}
	ref := p.parseTypeRef("field type")
	proto := Field{Type: ref, Required: required}
	if p.tok.kind == tokLAngle {
		p.fail(p.tok.pos, "parametric types are not supported")
	}
	if p.tok.kind == tokLBrack {
		open := p.tok
		p.advance()
		if p.tok.kind == tokRBrack {
			if ref.Name == "octets" {
				p.fail(open.pos, "octets cannot be an array element: use octets[N] or octets[sizeField]")
			}
			proto.Array = true
		} else {
			if ref.Name != "octets" {
				p.fail(open.pos, "fixed-size and sized arrays are supported only for octets, not %s", ref.Name)
			}
			switch tok := p.tok; tok.kind {
			case tokInt:
				if tok.num == 0 || tok.num > math.MaxInt32 {
					p.fail(tok.pos, "octets size must be between 1 and %d, found %s", math.MaxInt32, tok.text)
				}
				proto.SizeLit = int(tok.num)
			case tokIdent:
				if keywords[tok.text] {
					p.fail(tok.pos, "expected octets size (an integer or a field name), found %s", tok)
				}
				proto.SizeName = tok.text
			default:
				p.fail(tok.pos, "expected octets size (an integer or a field name), found %s", tok)
			}
			p.advance()
		}
		p.expect(tokRBrack, "after array size")
		if p.tok.kind == tokLBrack {
			p.fail(p.tok.pos, "arrays of arrays are not supported")
		}
	}

	var fields []*Field
	for {
		name := p.name("field name")
		f := proto
		f.Pos, f.Name = name.pos, name.text
		if len(fields) > 0 {
			t := *ref
			f.Type = &t
		}
		fields = append(fields, &f)
		if p.tok.kind != tokComma {
			break
		}
		if kind == memberOfCase {
			p.fail(p.tok.pos, "expected ';' after field %q, found ',' (a union case has a single field)", f.Name)
		}
		p.advance()
	}
	last := fields[len(fields)-1]
	if p.tok.kind == tokAssign {
		if len(fields) > 1 {
			p.fail(p.tok.pos, "a default value needs a field of its own: split %q from the other fields", last.Name)
		}
		p.advance()
		last.Default = p.parseValue(last.Name)
	}
	p.expect(tokSemicolon, fmt.Sprintf("after field %q", last.Name))
	return fields
}

// parseValue parses a default value: an integer, a string, null or an enum
// constant.
func (p *parser) parseValue(field string) *Value {
	tok := p.tok
	switch {
	case tok.kind == tokInt || tok.kind == tokMinus:
		return p.parseInt(fmt.Sprintf("default value of field %q", field))
	case tok.kind == tokString:
		p.advance()
		return &Value{Pos: tok.pos, Kind: StringValue, Str: tok.text}
	case tok.kind == tokIdent && tok.text == "null":
		p.advance()
		return &Value{Pos: tok.pos, Kind: NullValue}
	case tok.kind == tokIdent && !keywords[tok.text]:
		p.advance()
		return &Value{Pos: tok.pos, Kind: IdentValue, Ident: tok.text}
	}
	p.fail(tok.pos, "expected default value of field %q (an integer, a string, null or an enum constant), found %s", field, tok)
	return nil
}

// parseInt parses an integer literal with an optional leading minus.
func (p *parser) parseInt(what string) *Value {
	v := &Value{Pos: p.tok.pos, Kind: IntValue}
	neg := false
	if p.tok.kind == tokMinus {
		neg = true
		p.advance()
	}
	tok := p.tok
	if tok.kind != tokInt {
		p.fail(tok.pos, "expected %s (an integer), found %s", what, tok)
	}
	p.advance()
	switch {
	case neg && tok.num > 1<<63:
		p.fail(v.Pos, "integer literal -%s is too small (the minimum is %d)", tok.text, int64(math.MinInt64))
	case neg:
		v.Int = int64(-tok.num)
	default:
		v.Int = int64(tok.num)
		v.Uint = tok.num > math.MaxInt64
	}
	return v
}
