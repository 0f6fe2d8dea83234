package spec_test

import (
	"math/big"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/spec"
)

func TestParseExpr(t *testing.T) {
	tests := []struct {
		name  string
		src   string
		print string // the expression printed back
		typ   string
	}{
		{name: "double-quoted string", src: `"a\"b\\c"`, print: `"a\"b\\c"`, typ: "Literal"},
		{name: "single-quoted string", src: `'it\'s'`, print: `"it's"`, typ: "Literal"},
		{name: "string with a brace", src: `"{}"`, print: `"{}"`, typ: "Literal"},
		{name: "int", src: "42", print: "42", typ: "Literal"},
		{name: "long", src: "42L", print: "42L", typ: "Literal"},
		{name: "hex", src: "0x7F_FF", print: "0x7F_FF", typ: "Literal"},
		{name: "float", src: "1.5e3", print: "1.5e3", typ: "Literal"},
		{name: "bool", src: "true", print: "true", typ: "Literal"},
		{name: "null", src: "null", print: "null", typ: "Literal"},
		{name: "identifier", src: "deltaMillis", print: "deltaMillis", typ: "Ident"},
		{name: "function", src: `zilla:id( "mcp" )`, print: `zilla:id("mcp")`, typ: "Call"},
		{name: "function with spaces around the colon", src: `zilla : id("mcp")`, print: `zilla:id("mcp")`, typ: "Call"},
		{name: "function without namespace", src: "f(1, 2)", print: "f(1, 2)", typ: "Call"},
		{name: "method on a literal", src: `"a".concat(b)`, print: `"a".concat(b)`, typ: "MethodCall"},
		{name: "property", src: "a.b.c", print: "a.b.c", typ: "Member"},
		{name: "index", src: "mask[3]", print: "mask[3]", typ: "Index"},
		{name: "nested calls", src: `kafka:randomBytes(8192-(512+512))`, print: "kafka:randomBytes(8192 - (512 + 512))", typ: "Call"},
		{name: "precedence", src: "1 + 2 * 3 - 4", print: "1 + 2 * 3 - 4", typ: "Binary"},
		{name: "parentheses kept where needed", src: "(1 + 2) * (3)", print: "(1 + 2) * 3", typ: "Binary"},
		{name: "left associative", src: "a - (b - c)", print: "a - (b - c)", typ: "Binary"},
		{name: "word operators", src: "a eq b and not c ne d or x gt 1 div 2 mod 3", print: "a == b && !c != d || x > 1 / 2 % 3", typ: "Binary"},
		{name: "relational", src: "a <= b == c >= d", print: "a <= b == c >= d", typ: "Binary"},
		{name: "unary", src: "- -x", print: "- -x", typ: "Unary"},
		{name: "empty", src: "empty list", print: "empty list", typ: "Unary"},
		{name: "conditional", src: "a ? b : c ? d : e", print: "a ? b : c ? d : e", typ: "Cond"},
		{name: "conditional as condition", src: "(a ? b : c) ? d : e", print: "(a ? b : c) ? d : e", typ: "Cond"},
		{name: "conditional with a call after a name", src: "a ? (b) : c(1)", print: "a ? (b) : c(1)", typ: "Cond"},
		{name: "conditional with a function", src: "a ? b:c(1) : d", print: "a ? b:c(1) : d", typ: "Cond"},
		{name: "big integer", src: "9223372036854775808", print: "9223372036854775808", typ: "Literal"},
		{name: "builder across lines", src: "mcp:beginEx()\n    .typeId(zilla:id(\"mcp\"))\n    .toolsCall()\n        .sessionId(\"s\")\n        .build()\n    .build()",
			print: `mcp:beginEx().typeId(zilla:id("mcp")).toolsCall().sessionId("s").build().build()`, typ: "MethodCall"},
		{name: "reserved word as a method", src: "x.empty()", print: "x.empty()", typ: "MethodCall"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x, err := spec.ParseExpr(spec.Pos{File: "e", Line: 1, Col: 1}, tt.src)
			require.NoError(t, err)
			assert.Equal(t, tt.print, x.String())
			assert.Equal(t, tt.typ, typeName(x))
			again, err := spec.ParseExpr(spec.Pos{File: "e", Line: 1, Col: 1}, x.String())
			require.NoError(t, err)
			assert.Equal(t, tt.print, again.String())
		})
	}
}

func TestParseExprValues(t *testing.T) {
	pos := spec.Pos{File: "e", Line: 3, Col: 10}
	tests := []struct {
		src  string
		kind spec.LitKind
		want any
	}{
		{src: `"tab\there"`, kind: spec.LitString, want: "tab\there"},
		{src: "12", kind: spec.LitInt, want: int64(12)},
		{src: "0x10L", kind: spec.LitInt, want: int64(16)},
		{src: "2.5", kind: spec.LitFloat, want: 2.5},
		{src: "false", kind: spec.LitBool, want: false},
		{src: "null", kind: spec.LitNull, want: nil},
		{src: "123456789012345678901234567890", kind: spec.LitInt, want: func() *big.Int {
			b, _ := new(big.Int).SetString("123456789012345678901234567890", 10)
			return b
		}()},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			x, err := spec.ParseExpr(pos, tt.src)
			require.NoError(t, err)
			assert.Equal(t, &spec.Literal{Pos: pos, Kind: tt.kind, Raw: tt.src, Value: tt.want}, x)
		})
	}
}

// TestParseExprPositions checks positions relative to where the expression
// starts, across lines.
func TestParseExprPositions(t *testing.T) {
	x, err := spec.ParseExpr(spec.Pos{File: "e", Line: 5, Col: 20}, "a\n  .b(c)\n  [d + e]")
	require.NoError(t, err)
	idx := x.(*spec.Index)
	assert.Equal(t, spec.Pos{File: "e", Line: 7, Col: 3}, idx.Pos)
	sum := idx.Index.(*spec.Binary)
	assert.Equal(t, spec.Pos{File: "e", Line: 7, Col: 6}, sum.Pos)
	call := idx.Receiver.(*spec.MethodCall)
	assert.Equal(t, spec.Pos{File: "e", Line: 6, Col: 4}, call.Pos)
	assert.Equal(t, spec.Pos{File: "e", Line: 6, Col: 6}, call.Args[0].Position())
	assert.Equal(t, spec.Pos{File: "e", Line: 5, Col: 20}, call.Receiver.Position())

	_, err = spec.ParseExpr(spec.Pos{File: "e", Line: 5, Col: 20}, "a +\n  )")
	require.Error(t, err)
	assert.Equal(t, `e:6:3: expected an expression, found ")"`, err.Error())
}

func TestParseExprLimits(t *testing.T) {
	tests := []struct {
		name string
		src  string
		msg  string // "" when it parses
	}{
		{name: "nesting at the limit", src: strings.Repeat("(", spec.MaxExprNesting) + "1" + strings.Repeat(")", spec.MaxExprNesting)},
		{name: "nesting past the limit", src: strings.Repeat("(", spec.MaxExprNesting+1) + "1" + strings.Repeat(")", spec.MaxExprNesting+1), msg: "nested more than 64 deep"},
		{name: "deep arguments", src: strings.Repeat("f(", 1000) + strings.Repeat(")", 1000), msg: "nested more than 64 deep"},
		{name: "deep unary", src: strings.Repeat("-", 1000) + "1", msg: "nested more than 64 deep"},
		{name: "deep conditionals", src: strings.Repeat("a ? b : ", 1000) + "c", msg: "nested more than 64 deep"},
		{name: "chain at the limit", src: "a" + strings.Repeat(".b()", spec.MaxExprChain)},
		{name: "chain past the limit", src: "a" + strings.Repeat(".b()", spec.MaxExprChain+1), msg: "more than 1024 suffixes in a row"},
		{name: "operators past the limit", src: "1" + strings.Repeat(" + 1", spec.MaxExprChain+1), msg: "more than 1024 operators in a row"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := spec.ParseExpr(spec.Pos{File: "e", Line: 1, Col: 1}, tt.src)
			if tt.msg == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.msg)
		})
	}
}
