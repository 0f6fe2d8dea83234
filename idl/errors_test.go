package idl

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// parseAndCheck parses src as t.idl (and other, when set, as other.idl) and
// checks the files together, returning the first error found.
func parseAndCheck(src, other string) error {
	f, err := Parse("t.idl", []byte(src))
	if err != nil {
		return err
	}
	files := []*File{f}
	if other != "" {
		o, err := Parse("other.idl", []byte(other))
		if err != nil {
			return err
		}
		files = append(files, o)
	}
	return Check(files...)
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name  string
		src   string
		other string // a second file, other.idl, checked together with src
		pos   string // file:line:col of the first error
		msg   string // a substring of its message
	}{
		// Syntax.
		{
			name: "missing semicolon",
			src:  "scope core\n{\n    struct Frame\n    {\n        int64 originId\n    }\n}\n",
			pos:  "t.idl:6:5",
			msg:  `expected ';' after field "originId", found '}'`,
		},
		{name: "empty file", src: "", pos: "t.idl:1:1", msg: "expected 'scope', found end of file"},
		{name: "declaration outside a scope", src: "struct S {}", pos: "t.idl:1:1", msg: "expected 'scope', found 'struct'"},
		{name: "binary garbage", src: "scope s {\n\x00\xff", pos: "t.idl:2:1", msg: `unexpected character '\x00'`},
		{name: "invalid UTF-8", src: "\xff", pos: "t.idl:1:1", msg: "invalid UTF-8 byte 0xff"},
		{name: "unterminated comment", src: "scope s {\n  /* never\n ends", pos: "t.idl:2:3", msg: "comment not terminated"},
		{name: "unterminated string", src: `scope s { struct S { string8 a = "abc`, pos: "t.idl:1:34", msg: "string literal not terminated"},
		{name: "invalid escape", src: `scope s { struct S { string8 a = "a\qb"; } }`, pos: "t.idl:1:36", msg: `invalid escape "\\q"`},
		{name: "missing closing brace", src: "scope s { struct S { int8 a; }", pos: "t.idl:1:31", msg: `expected '}' to close scope "s", found end of file`},
		{name: "fixed-size int array", src: "scope s { struct S { int32[4] x; } }", pos: "t.idl:1:27", msg: "fixed-size and sized arrays are supported only for octets"},
		{name: "sized int array", src: "scope s { struct S { uint8 n; int32[n] x; } }", pos: "t.idl:1:36", msg: "fixed-size and sized arrays are supported only for octets"},
		{name: "octets array", src: "scope s { struct S { octets[] x; } }", pos: "t.idl:1:28", msg: "octets cannot be an array element"},
		{name: "zero-size octets", src: "scope s { struct S { octets[0] x; } }", pos: "t.idl:1:29", msg: "octets size must be between 1 and"},
		{name: "variant", src: "scope s {\n  variant V switch (uint8) of int64 { case 1: int32; }\n}", pos: "t.idl:2:3", msg: "variant declarations are not supported"},
		{name: "map", src: "scope s { map M<K, V> using X; }", pos: "t.idl:1:11", msg: "map declarations are not supported"},
		{name: "list using", src: "scope s { list L using V { int8 a; } }", pos: "t.idl:1:18", msg: "list … using declarations are not supported"},
		{name: "varstring", src: "scope s { struct S { varstring a; } }", pos: "t.idl:1:22", msg: "varstring is not supported"},
		{name: "varuint32n", src: "scope s { struct S { varuint32n a; } }", pos: "t.idl:1:22", msg: "varuint32n is not supported"},
		{name: "parametric field type", src: "scope s { struct S { M<A, B> m; } }", pos: "t.idl:1:23", msg: "parametric types are not supported"},
		{name: "string enum", src: `scope s { enum Color (string8) { BLUE("blue") } }`, pos: "t.idl:1:23", msg: "enum base must be an integer type"},
		{name: "type id on union", src: "scope s { union U switch (uint8) [0x01] { } }", pos: "t.idl:1:34", msg: "a type id is allowed only on structs"},
		{name: "type id too large", src: "scope s { struct S [0x100000000] { } }", pos: "t.idl:1:21", msg: "type id 0x100000000 does not fit uint32"},
		{name: "integer too large", src: "scope s { struct S { uint64 a = 18446744073709551616; } }", pos: "t.idl:1:33", msg: "integer literal 18446744073709551616 is too large"},
		{name: "integer too small", src: "scope s { struct S { int64 a = -9223372036854775809; } }", pos: "t.idl:1:32", msg: "is too small"},
		{name: "malformed hex", src: "scope s { struct S { int8 a = 0xZ; } }", pos: "t.idl:1:31", msg: "malformed integer literal"},
		{name: "required outside list", src: "scope s { struct S { required int8 a; } }", pos: "t.idl:1:22", msg: "'required' is allowed only on list fields"},
		{name: "late option", src: "scope s { struct S {} option byteorder network; }", pos: "t.idl:1:23", msg: "option must come first"},
		{name: "bad byte order", src: "scope s { option byteorder little; }", pos: "t.idl:1:28", msg: "expected 'native' or 'network'"},
		{name: "keyword as field name", src: "scope s { struct S { int32 list; } }", pos: "t.idl:1:28", msg: "expected field name, found keyword 'list'"},
		{name: "primitive name declared", src: "scope s { struct int32 { } }", pos: "t.idl:1:18", msg: "expected struct name, found keyword 'int32'"},
		{name: "missing byte out of range", src: "scope s { list<uint8, uint8, 256> L { } }", pos: "t.idl:1:30", msg: "list missing-field byte 256 does not fit uint8"},
		{name: "several case fields", src: "scope s { union U switch (uint8) { case 1: int8 a, b; } }", pos: "t.idl:1:50", msg: "a union case has a single field"},
		{
			name: "nesting too deep",
			src:  strings.Repeat("scope s { ", MaxScopeDepth+1) + strings.Repeat("} ", MaxScopeDepth+1),
			pos:  "t.idl:1:641",
			msg:  "scopes are nested too deeply",
		},

		// Names.
		{name: "unknown type", src: "scope s { struct S { Foo f; } }", pos: "t.idl:1:22", msg: `unknown type "Foo"`},
		{name: "unknown qualified type", src: "scope s { struct S { s::t::Foo f; } }", pos: "t.idl:1:22", msg: `unknown type "s::t::Foo"`},
		{
			name: "qualified names start at the root",
			src:  "scope a { scope b { struct X { int8 x; } } struct Y { b::X x; } }",
			pos:  "t.idl:1:55",
			msg:  `unknown type "b::X"`,
		},
		{
			name:  "duplicate declaration across files",
			src:   "scope core {\n  scope stream { struct Frame { int8 a; } }\n}",
			other: "scope core { scope stream {\n enum Frame { A } } }",
			pos:   "other.idl:2:7",
			msg:   `duplicate declaration of "Frame" in scope core::stream (previous declaration at t.idl:2:25)`,
		},
		{name: "declaration named like a scope", src: "scope s { scope X { } struct X { } }", pos: "t.idl:1:30", msg: `declaration "X" conflicts with the scope`},
		{name: "duplicate field", src: "scope s { struct S { int8 a; int16 a; } }", pos: "t.idl:1:36", msg: `duplicate field "a" (previous at t.idl:1:27)`},
		{
			name: "duplicate inherited field",
			src:  "scope s {\n struct P { int8 a; }\n struct S extends P { int16 a; }\n}",
			pos:  "t.idl:3:29",
			msg:  `duplicate field "a": already declared in "P" at t.idl:2:18, inherited through extends`,
		},
		{name: "typedef cycle", src: "scope s { typedef B as A; typedef A as B; }", pos: "t.idl:1:24", msg: "typedef cycle: A -> B -> A"},
		{name: "self typedef", src: "scope s { typedef A as A; }", pos: "t.idl:1:24", msg: "typedef cycle: A -> A"},

		// Enums.
		{name: "duplicate enum constant", src: "scope s { enum E { A, B, A } }", pos: "t.idl:1:26", msg: `duplicate enum constant "A"`},
		{name: "duplicate enum value", src: "scope s { enum E { A(1), B(0), C } }", pos: "t.idl:1:32", msg: `enum constant "C" has the same value 1 as "A"`},
		{name: "enum value does not fit base", src: "scope s { enum E (uint8) { A(255), B } }", pos: "t.idl:1:36", msg: `value 256 of enum constant "B" does not fit uint8 (0..255)`},
		{name: "enum base not an integer", src: "scope s { struct T { } enum E (T) { A } }", pos: "t.idl:1:32", msg: `enum base must be an integer type, found struct "T"`},

		// Structs and extends.
		{name: "extends a union", src: "scope s { union U switch (uint8) { } struct S extends U { } }", pos: "t.idl:1:55", msg: `extends must name a struct, found union "U"`},
		{name: "extends cycle", src: "scope s { struct A extends B { } struct B extends A { } }", pos: "t.idl:1:51", msg: "struct extends cycle: A -> B -> A"},
		{name: "contains itself", src: "scope s { struct A { B b; } struct B { int8 x; A[] a; } }", pos: "t.idl:1:52", msg: `struct "B" contains itself by value through field "a" (A -> B -> A)`},
		{
			name: "contains itself through a union and a list",
			src:  "scope s { list<uint8, uint8> L { U u; } union U switch (uint8) { case 0: L l; } }",
			pos:  "t.idl:1:76",
			msg:  `union "U" contains itself by value through field "l" (L -> U -> L)`,
		},

		// Unbounded fields.
		{name: "unbounded octets not last", src: "scope s { struct S { octets rest; int8 a; } }", pos: "t.idl:1:29", msg: `unbounded octets field "rest" must be the last field of struct "S"`},
		{
			name: "unbounded struct field not last",
			src:  "scope s { struct T { octets rest; } struct S { T t; int8 a; } }",
			pos:  "t.idl:1:50",
			msg:  `field "t" must be the last field of struct "S"`,
		},
		{
			name:  "extending a parent that ends unbounded",
			src:   "scope mcp { struct Ex extends core::Data { int8 more; } }",
			other: "scope core { struct Data { int32 length; octets extension; } }",
			pos:   "t.idl:1:49",
			msg:   `struct "Ex" cannot add fields: inherited field "extension" is unbounded`,
		},
		{
			name: "union extending a parent that ends unbounded",
			src:  "scope s { struct P { octets x; } union U switch (uint8) extends P { } }",
			pos:  "t.idl:1:65",
			msg:  `union "U" cannot extend struct "P"`,
		},
		{name: "octets array through typedef", src: "scope s { typedef octets as Blob; struct S { Blob[] b; } }", pos: "t.idl:1:53", msg: "octets cannot be an array element"},
		{name: "unbounded array element", src: "scope s { struct T { octets x; } struct S { T[] t; } }", pos: "t.idl:1:49", msg: `element type struct "T" ends with unbounded data`},

		// Sized octets.
		{name: "unknown size field", src: "scope s { struct S { octets[len] x; } }", pos: "t.idl:1:34", msg: `unknown size field "len" for octets field "x"`},
		{name: "size field after", src: "scope s { struct S { octets[len] x; int32 len; } }", pos: "t.idl:1:34", msg: `size field "len" of octets field "x" must be declared before it`},
		{name: "size field not an integer", src: "scope s { struct S { string8 len; octets[len] x; } }", pos: "t.idl:1:47", msg: `size field "len" of octets field "x" must be an integer, found string8`},
		{name: "size field with default", src: "scope s { struct S { int32 len = 0; octets[len] x; } }", pos: "t.idl:1:49", msg: `size field "len" of octets field "x" cannot have a default`},
		{name: "unsigned size field of null octets", src: "scope s { struct S { uint8 len; octets[len] x = null; } }", pos: "t.idl:1:45", msg: `size field "len" must be a signed integer, not uint8`},
		{name: "size field sizes two fields", src: "scope s { struct S { int8 n; octets[n] a; octets[n] b; } }", pos: "t.idl:1:53", msg: `size field "n" already sizes octets field "a"`},
		{name: "varint size field not adjacent", src: "scope s { struct S { varint32 n; int8 x; octets[n] a; } }", pos: "t.idl:1:52", msg: `varint size field "n" must immediately precede octets field "a"`},
		{
			name: "inherited size field",
			src:  "scope s { struct P { int16 n; } struct S extends P { int8 x; octets[n] a = null; } }",
			pos:  "", // valid: an inherited size field may size an own field
		},

		{name: "size field of a union case", src: "scope s { union U switch (uint8) { case 1: octets[n] x; } }", pos: "t.idl:1:54", msg: `unknown size field "n" for octets field "x"`},
		{
			name: "union case sized by a parent field",
			src:  "scope s { struct P { int16 n; } union U switch (uint8) extends P { case 1: octets[n] a; case 2: octets[n] b = null; } }",
			pos:  "", // valid: each case is a separate encoding
		},
		{
			name: "varint parent field sizing a union case",
			src:  "scope s { struct P { varint32 n; } union U switch (uint8) extends P { case 1: octets[n] a; } }",
			pos:  "t.idl:1:89",
			msg:  `varint size field "n" must immediately precede octets field "a"`,
		},
		{
			name: "varint size field inherited and adjacent",
			src:  "scope s { struct P { varint32 n; } struct S extends P { octets[n] a; } }",
			pos:  "", // valid: n is the last inherited field, right before a
		},

		// Unions.
		{name: "switch on a string", src: "scope s { union U switch (string8) { } }", pos: "t.idl:1:27", msg: "switch type must be an integer type or an enum, found string8"},
		{name: "case value does not fit", src: "scope s { union U switch (uint8) { case 256: int8 a; } }", pos: "t.idl:1:41", msg: "case value 256 does not fit switch type uint8 (0..255)"},
		{name: "case value not an enum constant", src: "scope s { enum E { A } union U switch (E) { case B: int8 a; } }", pos: "t.idl:1:50", msg: `case value "B" is not a constant of switch enum "E"`},
		{name: "integer case on an enum switch", src: "scope s { enum E { A } union U switch (E) { case 0: int8 a; } }", pos: "t.idl:1:50", msg: `case value must be a constant of switch enum "E", found 0`},
		{name: "duplicate case value", src: "scope s { union U switch (uint8) { case 1: int8 a; case 0x01: int8 b; } }", pos: "t.idl:1:57", msg: "duplicate case value 1"},
		{name: "duplicate case field", src: "scope s { union U switch (uint8) { case 1: int8 a; case 2: int16 a; } }", pos: "t.idl:1:66", msg: `duplicate field "a"`},

		// Defaults.
		{name: "integer default does not fit", src: "scope s { struct S { uint8 a = 256; } }", pos: "t.idl:1:32", msg: `default 256 of field "a" does not fit uint8 (0..255)`},
		{name: "negative default for unsigned", src: "scope s { struct S { uint64 a = -1; } }", pos: "t.idl:1:33", msg: `default -1 of field "a" does not fit uint64`},
		{name: "huge default for int64", src: "scope s { struct S { int64 a = 9223372036854775808; } }", pos: "t.idl:1:32", msg: "does not fit int64"},
		{name: "null integer", src: "scope s { struct S { int32 a = null; } }", pos: "t.idl:1:32", msg: `default of int32 field "a" must be an integer, found null`},
		{name: "null fixed octets", src: "scope s { struct S { octets[4] a = null; } }", pos: "t.idl:1:36", msg: "null default is allowed only on strings and octets sized by a field"},
		{name: "null unbounded octets", src: "scope s { struct S { octets a = null; } }", pos: "t.idl:1:33", msg: "not on unbounded octets field"},
		{name: "string default for integer", src: `scope s { struct S { int8 a = "1"; } }`, pos: "t.idl:1:31", msg: `must be an integer, found "1"`},
		{name: "integer default for string", src: "scope s { struct S { string8 a = 1; } }", pos: "t.idl:1:34", msg: "must be a string or null, found 1"},
		{name: "string default too long", src: `scope s { struct S { string8 a = "` + strings.Repeat("x", 128) + `"; } }`, pos: "t.idl:1:34", msg: "too long: 128 bytes, the maximum is 127"},
		{name: "enum default not a constant", src: "scope s { enum E { A } struct S { E e = B; } }", pos: "t.idl:1:41", msg: `"B" is not a constant of enum "E"`},
		{name: "integer default for enum", src: "scope s { enum E { A } struct S { E e = 0; } }", pos: "t.idl:1:41", msg: `must be a constant of enum "E", found 0`},
		{name: "struct default", src: "scope s { struct T { } struct S { T t = 0; } }", pos: "t.idl:1:41", msg: `field "t" of struct "T" cannot have a default`},
		{name: "array default", src: "scope s { struct S { int32[] a = null; } }", pos: "t.idl:1:34", msg: `array field "a" cannot have a default`},

		// Lists.
		{name: "signed list length", src: "scope s { list<int32, uint8> L { } }", pos: "t.idl:1:16", msg: "list length type must be uint8, uint16 or uint32, found int32"},
		{name: "varint list count", src: "scope s { list<uint8, varuint32> L { } }", pos: "t.idl:1:23", msg: "list count type must be uint8, uint16 or uint32, found varuint32"},
		{name: "octets in a list", src: "scope s { list<uint8, uint8> L { octets[4] o; } }", pos: "t.idl:1:44", msg: `list field "o" cannot be octets`},
		{
			name: "unbounded struct in a list",
			src:  "scope s { struct T { octets x; } list<uint8, uint8> L { T t; } }",
			pos:  "t.idl:1:59",
			msg:  `list field "t" cannot be unbounded`,
		},
		{
			name: "too many list fields for the bitmask",
			src:  "scope s { list<uint32, uint32> L {" + manyFields(65) + " } }",
			pos:  "t.idl:1:32",
			msg:  "at most 64",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := parseAndCheck(tt.src, tt.other)
			if tt.pos == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			var list ErrorList
			require.True(t, errors.As(err, &list), "error is an ErrorList")
			require.NotEmpty(t, list)
			first := list[0].Error()
			assert.True(t, strings.HasPrefix(first, tt.pos+": "), "want position %s, got %s", tt.pos, first)
			assert.Contains(t, first, tt.msg)
		})
	}
}

// manyFields declares n int8 fields f0 … fn-1.
func manyFields(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(" int8 f")
		b.WriteString(strings.Repeat("x", i)) // distinct names
		b.WriteString(";")
	}
	return b.String()
}

func TestErrorListCollectsCheckErrors(t *testing.T) {
	src := "scope s {\n struct A { Foo f; }\n struct B { Bar b; }\n enum E { X, X }\n}"
	err := parseAndCheck(src, "")
	var list ErrorList
	require.True(t, errors.As(err, &list))
	require.Len(t, list, 3)
	assert.Equal(t, "t.idl:2:13: unknown type \"Foo\"", list[0].Error())
	assert.Equal(t, Pos{File: "t.idl", Line: 3, Col: 13}, list[1].Pos)
	assert.Equal(t, Pos{File: "t.idl", Line: 4, Col: 14}, list[2].Pos)
	assert.Equal(t, list[0].Error()+"\n"+list[1].Error()+"\n"+list[2].Error(), err.Error())
}

func TestParseReturnsNilFileOnError(t *testing.T) {
	f, err := Parse("t.idl", []byte("scope s { struct"))
	assert.Nil(t, f)
	require.Error(t, err)
}
