package dynamic

import (
	"fmt"

	"github.com/sluicehq/sluice/idl"
)

// Builder builds a value of an IDL struct, union or list through the
// method chain of Zilla's k3po functions:
//
//	mcp:beginEx().typeId(3).toolsCall().sessionId("s").name("get_weather").build().build()
//
// becomes
//
//	b, _ := schema.NewBuilder("McpBeginEx")
//	b.Call("typeId", 3)               // returns b
//	c, _ := b.Call("toolsCall")       // returns the case's *Builder
//	c.(*Builder).Call("sessionId", "s")
//	c.(*Builder).Call("name", "get_weather")
//	c.(*Builder).Call("build")        // returns b
//	b.Call("build")                   // returns the encoded []byte
//
// The methods are derived from the IDL; see Call. Values are stored as they
// are set, in any order, and encoded by the outermost build() in IDL order
// with the defaults of the fields never set, byte for byte as the generated
// builders write them. A Builder is not safe for concurrent use.
type Builder struct {
	n      *node
	parent *Builder
	path   string
}

// NewBuilder starts a value of the struct, union or list named typeName
// (a simple or qualified name, see Lookup).
func (s *Schema) NewBuilder(typeName string) (*Builder, error) {
	ti, err := s.info(typeName)
	if err != nil {
		return nil, err
	}
	return &Builder{n: newNode(ti), path: ti.name}, nil
}

// Call applies one method of the chain and returns what the chain
// continues with:
//
//   - build() returns the parent *Builder of a nested builder, and the
//     encoded []byte from the outermost one;
//   - a field name with one argument sets the field and returns the
//     receiver: typeId(42), sessionId("s"), timeout(int64(1000)). Integers
//     are any Go integer type or a *big.Int, range-checked against the
//     field; strings and
//     octets take a string or []byte, and nil for null; an enum field takes
//     a constant's name (action("ACCEPT")) or an integer;
//   - a field of struct, union or list type, called with no arguments,
//     returns the *Builder of the nested value, whose build() returns the
//     receiver;
//   - a union case name selects the case; a case of struct, union or list
//     type returns the case's *Builder (toolsCall()), any other case takes
//     its value as a field does (number(42));
//   - an array field takes items: header(":method", "GET") — the field name
//     without its trailing "s" (or the field name itself) — appends one
//     item whose fields are the arguments in IDL order; called with no
//     arguments it appends an item and returns its *Builder. For arrays of
//     strings or integers each argument is appended as one item. A type with
//     a single array also takes item(…) for it. An array case named with no
//     arguments (items()) selects the case with no items.
//
// Size fields (the int32 length of an octets[length]) are computed from
// the octets and cannot be set. Method names are the IDL's, matched case
// sensitively.
func (b *Builder) Call(method string, args ...any) (any, error) {
	st, err := call(b.n, b.path, method, args, false)
	switch {
	case err != nil:
		return nil, err
	case st.build && b.parent != nil:
		return b.parent, nil
	case st.build:
		return b.Bytes()
	case st.child != nil:
		return &Builder{n: st.child, parent: b, path: st.path}, nil
	}
	return b, nil
}

// Open calls methods in turn, each with no arguments and each opening a
// nested value (a struct, union or list field, or a case of one), and
// returns the builder of the last, whose build() returns to b rather than
// to the values in between. Zilla's proxy:beginEx().addressInet() is
// Open("address", "inet"): one step in the script for two in the IDL.
func (b *Builder) Open(methods ...string) (*Builder, error) {
	n, path, err := open(b.n, b.path, methods, false)
	if err != nil {
		return nil, err
	}
	return &Builder{n: n, parent: b, path: path}, nil
}

// open applies the methods of Open from n, which is at path.
func open(n *node, path string, methods []string, matcher bool) (*node, string, error) {
	if len(methods) == 0 {
		return nil, "", &Error{Path: path, Msg: "open needs at least one method", Kind: ErrArgs}
	}
	for _, name := range methods {
		st, err := call(n, path, name, nil, matcher)
		if err != nil {
			return nil, "", err
		}
		if st.child == nil || st.build {
			return nil, "", &Error{Path: path, Msg: fmt.Sprintf("%s() opens no nested value", name), Kind: ErrArgs}
		}
		n, path = st.child, st.path
	}
	return n, path, nil
}

// Bytes encodes the value of the outermost builder of the chain, with the
// defaults of the fields not set. It reports a field without default that
// was never set, and a union without a case.
func (b *Builder) Bytes() ([]byte, error) {
	r := b.Root()
	return encode(make([]byte, 0, 64), r.n, r.path)
}

// Root returns the outermost builder of the chain.
func (b *Builder) Root() *Builder {
	for b.parent != nil {
		b = b.parent
	}
	return b
}

// Type returns the IDL type this builder builds.
func (b *Builder) Type() idl.Type { return b.n.ti.t }

// Path returns the builder's place in the chain, such as
// McpBeginEx.toolsCall or HttpBeginEx.headers[1].
func (b *Builder) Path() string { return b.path }

// String renders the fields set so far, like Format.
func (b *Builder) String() string { return formatNode(b.n, b.parent == nil) }

// Matcher checks an encoded value against the fields it was given, in the
// chain of Zilla's k3po matchXxx() functions:
//
//	mcp:matchBeginEx().typeId(3).toolsCall().name("get_weather").build().build()
//
// It has the methods of a Builder (see Builder.Call); a field never named is
// not checked. A selected union case checks the kind. Array items given with
// header(name, value) must each be present in the decoded array, in any
// order, as Zilla's HttpFunctions matchers have them; an item's fields not
// given are not checked. Every method that sets strings also has a Regex
// form whose last argument is a regular expression (Go syntax) that must
// match the whole decoded string: headerRegex(":date", ".+"),
// nameRegex("get_.*"). A Matcher is not safe for concurrent use.
type Matcher struct {
	n      *node
	parent *Matcher
	path   string
}

// NewMatcher starts a matcher of the struct, union or list named typeName.
func (s *Schema) NewMatcher(typeName string) (*Matcher, error) {
	ti, err := s.info(typeName)
	if err != nil {
		return nil, err
	}
	return &Matcher{n: newNode(ti), path: ti.name}, nil
}

// Call applies one method of the chain, as Builder.Call does, except that
// build() of the outermost matcher returns the *Matcher itself, ready for
// Match, and that a size field may be named to check its value.
func (m *Matcher) Call(method string, args ...any) (any, error) {
	st, err := call(m.n, m.path, method, args, true)
	switch {
	case err != nil:
		return nil, err
	case st.build && m.parent != nil:
		return m.parent, nil
	case st.build:
		return m, nil
	case st.child != nil:
		return &Matcher{n: st.child, parent: m, path: st.path}, nil
	}
	return m, nil
}

// Open is Builder.Open for a matcher: the matcher of the last nested value
// methods open, whose build() returns to m.
func (m *Matcher) Open(methods ...string) (*Matcher, error) {
	n, path, err := open(m.n, m.path, methods, true)
	if err != nil {
		return nil, err
	}
	return &Matcher{n: n, parent: m, path: path}, nil
}

// Root returns the outermost matcher of the chain.
func (m *Matcher) Root() *Matcher {
	for m.parent != nil {
		m = m.parent
	}
	return m
}

// Type returns the IDL type this matcher checks.
func (m *Matcher) Type() idl.Type { return m.n.ti.t }

// Path returns the matcher's place in the chain.
func (m *Matcher) Path() string { return m.path }

// String renders the fields the matcher checks, like Format.
func (m *Matcher) String() string { return formatNode(m.n, m.parent == nil) }

// Match decodes b as the outermost matcher's type and checks the fields
// given. b must hold exactly one value: trailing bytes are a mismatch. The
// error names the field and both values:
//
//	McpBeginEx.toolsCall.name: expected "get_weather", got "echo"
//
// Bytes that do not decode give an error of kind ErrMalformed naming the
// field where decoding failed.
func (m *Matcher) Match(b []byte) error {
	r := m.Root()
	got, err := decodeAll(b, r.n.ti)
	if err != nil {
		return err
	}
	return matchNode(r.n, got, r.path)
}

// decodeAll decodes b, which must hold exactly one value of type ti.
func decodeAll(b []byte, ti *typeInfo) (*node, error) {
	n, p, err := decode(b, 0, len(b), ti, ti.name)
	if err != nil {
		return nil, err
	}
	if p != len(b) {
		return nil, &Error{Path: ti.name, Msg: trailing(len(b) - p), Kind: ErrMalformed}
	}
	return n, nil
}

func trailing(n int) string {
	if n == 1 {
		return "1 trailing byte after the value"
	}
	return itoa(n) + " trailing bytes after the value"
}

// Decode decodes b, which must hold exactly one value of the struct, union
// or list named typeName, into a map from field name to value:
//
//   - integers are int64, except uint64 fields, which are uint64;
//   - enums are the constant's name, or the int64 value when it names no
//     constant;
//   - strings are string, and nil when null;
//   - octets are []byte, and nil when null;
//   - arrays are []any;
//   - structs and lists are map[string]any (a list holds only the fields
//     present);
//   - a union holds its parent's fields, "kind" (the case name) and the
//     case's field.
func (s *Schema) Decode(typeName string, b []byte) (map[string]any, error) {
	ti, err := s.info(typeName)
	if err != nil {
		return nil, err
	}
	n, err := decodeAll(b, ti)
	if err != nil {
		return nil, err
	}
	return toMap(n), nil
}

// Format renders b decoded as typeName on one line, for logs and the spec
// runner's failure output:
//
//	McpBeginEx{compositeId: 0, typeId: 3, kind: toolsCall, toolsCall: {sessionId: "s", name: "x", contentLength: -1, timeout: 0}}
//
// Strings are quoted, null is null, enums are their constant's name,
// octets are quoted when printable and [0x01 0x02] hex bytes otherwise.
// Bytes that do not decode render as the type, the error and the bytes.
func (s *Schema) Format(typeName string, b []byte) string {
	ti, err := s.info(typeName)
	if err != nil {
		return typeName + "(" + err.Error() + ") " + hexBytes([]byte(b))
	}
	n, err := decodeAll(b, ti)
	if err != nil {
		return ti.name + "(" + err.Error() + ") " + hexBytes(b)
	}
	return formatNode(n, true)
}

// Encode is a shortcut for a Builder driven by Go code: it builds typeName
// from vals, a map from field name to argument as Call takes it (a nested
// map[string]any for a struct, union or list field; a []any for an array;
// for a union, the case name mapped to the case's value).
func (s *Schema) Encode(typeName string, vals map[string]any) ([]byte, error) {
	b, err := s.NewBuilder(typeName)
	if err != nil {
		return nil, err
	}
	if err := fromMap(b.n, b.path, vals); err != nil {
		return nil, err
	}
	return b.Bytes()
}
