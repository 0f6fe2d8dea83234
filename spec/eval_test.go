package spec_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/binding/http"
	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/idl/dynamic"
	"github.com/sluicehq/sluice/spec"
)

func TestEvalValues(t *testing.T) {
	props := map[string]any{
		"affinity": int64(7),
		"name":     "get_weather",
		"flag":     true,
		"mask":     []byte{0x01, 0xff},
		"nothing":  nil,
		"obj":      map[string]any{"k": "v"},
	}
	tests := []struct {
		src  string
		want any
	}{
		{`42`, int64(42)},
		{`1L`, int64(1)},
		{`0x1F`, int64(31)},
		{`-3`, int64(-3)},
		{`1.5`, 1.5},
		{`"s\tx"`, "s\tx"},
		{`'single'`, "single"},
		{`true`, true},
		{`null`, nil},
		{`affinity`, int64(7)},
		{`name`, "get_weather"},
		{`nothing`, nil},
		{`mask`, []byte{0x01, 0xff}},
		{`mask[1]`, int64(-1)},
		{`obj.k`, "v"},
		{`obj["k"]`, "v"},
		{`1 + 2 * 3`, int64(7)},
		{`affinity - 10L`, int64(-3)},
		{`7 / 2`, 3.5},
		{`7 % 3`, int64(1)},
		{`7 mod 3`, int64(1)},
		{`-7.5 % 2`, -1.5},
		{`affinity == 7`, true},
		{`affinity eq 7.0`, true},
		{`name != "echo"`, true},
		{`2 < 10 && "a" lt "b"`, true},
		{`!flag || nothing == null`, true},
		{`not flag`, false},
		{`empty ""`, true},
		{`empty name`, false},
		{`flag ? "yes" : "no"`, "yes"},
		{`nothing ? 1 : 2`, int64(2)},
		{`9223372036854775807 + 1`, int64(-9223372036854775808)},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			env := &spec.Env{Properties: props}
			got, err := env.EvalString(tt.src)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestEvalZillaID(t *testing.T) {
	env := &spec.Env{}
	ids := map[string]any{}
	for _, name := range []string{"mcp", "http", "mcp", "app0", "http"} {
		got, err := env.EvalString(`zilla:id("` + name + `")`)
		require.NoError(t, err)
		if prev, ok := ids[name]; ok {
			assert.Equal(t, prev, got, "id of %s is stable", name)
		}
		ids[name] = got
	}
	assert.Equal(t, map[string]any{"mcp": int64(1), "http": int64(2), "app0": int64(3)}, ids)

	custom := &spec.Env{Labels: func(name string) int32 { return int32(len(name)) * 10 }}
	got, err := custom.EvalString(`zilla:id("abcd")`)
	require.NoError(t, err)
	assert.Equal(t, int64(40), got)
}

const toolsCallSrc = `mcp:beginEx()
         .typeId(zilla:id("mcp"))
         .toolsCall()
             .sessionId("s-1")
             .name(toolName)
             .build()
         .build()`

// generatedToolsCall builds the same McpBeginEx with the generated builder.
func generatedToolsCall(t *testing.T, typeID int32, name string) []byte {
	t.Helper()
	buf := make([]byte, 256)
	var b mcp.McpBeginExBuilder
	b.Wrap(buf, 0, len(buf)).TypeID(typeID).ToolsCall().SessionID("s-1").Name(name)
	v, err := b.Build()
	require.NoError(t, err)
	return buf[:v.Limit()]
}

func TestEvalMcpBeginEx(t *testing.T) {
	env := &spec.Env{Properties: map[string]any{"toolName": "get_weather"}}
	got, err := env.EvalString(toolsCallSrc)
	require.NoError(t, err)
	require.IsType(t, []byte(nil), got)
	assert.Equal(t, generatedToolsCall(t, 1, "get_weather"), got)
}

func TestEvalHttpBeginEx(t *testing.T) {
	env := &spec.Env{}
	_, err := env.EvalString(`zilla:id("mcp")`) // http gets id 2
	require.NoError(t, err)
	got, err := env.EvalString(`http:beginEx()
	     .typeId(zilla:id("http"))
	     .header(":method", "GET")
	     .header(":path", "/index.html")
	     .build()`)
	require.NoError(t, err)

	buf := make([]byte, 128)
	var b http.HttpBeginExBuilder
	h := b.Wrap(buf, 0, len(buf)).TypeID(2).Headers()
	h.Item().Name(":method").Value("GET")
	h.Item().Name(":path").Value("/index.html")
	v, err := b.Build()
	require.NoError(t, err)
	assert.Equal(t, buf[:v.Limit()], got)
}

func TestEvalMcpMatchBeginEx(t *testing.T) {
	env := &spec.Env{}
	m, err := env.EvalString(`mcp:matchBeginEx()
	     .typeId(zilla:id("mcp"))
	     .toolsCall()
	         .name("get_weather")
	         .build()
	     .build()`)
	require.NoError(t, err)
	require.IsType(t, (*dynamic.Matcher)(nil), m)
	matcher := m.(*dynamic.Matcher)

	require.NoError(t, matcher.Match(generatedToolsCall(t, 1, "get_weather")))
	err = matcher.Match(generatedToolsCall(t, 1, "echo"))
	require.Error(t, err)
	assert.ErrorIs(t, err, dynamic.ErrMismatch)
	assert.Contains(t, err.Error(), "McpBeginEx.toolsCall.name")
	assert.Contains(t, err.Error(), `"echo"`)
}

func TestEvalOtherIDLFunctions(t *testing.T) {
	env := &spec.Env{}
	for _, src := range []string{`mcp:flushEx()`, `mcp:endEx()`, `mcp:abortEx()`, `mcp:resetEx()`, `mcp:challengeEx()`,
		`http:flushEx()`, `http:endEx()`, `http:resetEx()`, `http:challengeEx()`, `mcp:eventEx()`} {
		got, err := env.EvalString(src)
		require.NoError(t, err, src)
		assert.IsType(t, (*dynamic.Builder)(nil), got, src)
	}
	got, err := env.EvalString(`http:matchChallengeEx()`)
	require.NoError(t, err)
	assert.IsType(t, (*dynamic.Matcher)(nil), got)

	fns, err := env.Functions("mcp")
	require.NoError(t, err)
	assert.Contains(t, fns, "mcp:beginEx")
	assert.Contains(t, fns, "mcp:matchBeginEx")
	assert.Contains(t, fns, "mcp:toolsCallBeginEx")
	zfns, err := env.Functions("zilla")
	require.NoError(t, err)
	assert.Equal(t, []string{"zilla:id"}, zfns)
}

func TestEvalErrors(t *testing.T) {
	tests := []struct {
		name, src, want string
		kind            error
	}{
		{"unknown function", `mcp:foo()`, `test.rpt:1:1: unknown function mcp:foo`, nil},
		{"unknown namespace", `  nope:beginEx()`, `test.rpt:1:3: unknown function nope:beginEx (no function library "nope")`, nil},
		{"function without namespace", `beginEx()`, `test.rpt:1:1: unknown function beginEx`, nil},
		{"unknown method", "mcp:beginEx()\n   .typeId(1)\n   .bar()", `test.rpt:3:5: unknown method .bar on McpBeginEx builder (methods: compositeId, typeId, lifecycle,`, dynamic.ErrUnknownMethod},
		{"unknown nested method", "mcp:beginEx().toolsCall().nope(1)", `test.rpt:1:27: unknown method .nope on McpBeginEx.toolsCall builder`, dynamic.ErrUnknownMethod},
		{"unknown matcher method", "mcp:matchBeginEx().bar()", `test.rpt:1:20: unknown method .bar on McpBeginEx matcher`, dynamic.ErrUnknownMethod},
		{"wrong argument", `mcp:beginEx().typeId("x")`, `test.rpt:1:15: .typeId("x") on McpBeginEx builder: McpBeginEx.typeId: wrong argument`, dynamic.ErrArgs},
		{"out of range", `mcp:beginEx().typeId(0x1_0000_0000)`, `test.rpt:1:15: .typeId(4294967296) on McpBeginEx builder`, dynamic.ErrRange},
		{"builder function with arguments", `mcp:beginEx(1)`, `test.rpt:1:1: mcp:beginEx takes no arguments, got 1`, nil},
		{"unknown method on a string", `"5ca1ab1e".split("x")`, `test.rpt:1:12: unknown method .split on string "5ca1ab1e" (methods: concat, `, nil},
		{"string method on a number", `(7).concat("x")`, `test.rpt:1:5: cannot call method .concat on integer 7`, nil},
		{"method on a number", `zilla:id("a").build()`, `test.rpt:1:15: cannot call method .build on integer`, nil},
		{"method on bytes", `http:beginEx().typeId(1).build().build()`, `test.rpt:1:34: cannot call method .build on bytes`, nil},
		{"required field missing", `mcp:beginEx().build()`, `test.rpt:1:15: .build() on McpBeginEx builder: McpBeginEx`, dynamic.ErrMissing},
		{"property on builder", `mcp:beginEx().typeId`, `test.rpt:1:15: method .typeId needs parentheses`, nil},
		{"undefined property", `1 + missing`, `test.rpt:1:5: undefined property missing`, nil},
		{"zilla:id arity", `zilla:id()`, `test.rpt:1:1: zilla:id takes one argument`, nil},
		{"zilla:id type", `zilla:id( 42 )`, `test.rpt:1:11: wrong argument to zilla:id: want a string, got integer 42`, nil},
		{"unknown zilla function", `zilla:nope()`, `test.rpt:1:1: unknown function zilla:nope`, nil},
		{"arithmetic on a string", `1 + "a"`, `test.rpt:1:3: operands of + must be numbers, got integer 1 and string "a"`, nil},
		{"not a boolean", `!"maybe"`, `test.rpt:1:1: operand of ! must be a boolean`, nil},
		{"division by zero", `1 % 0`, `test.rpt:1:3: division by zero`, nil},
		{"parse error", `mcp:beginEx(`, `test.rpt:1:13:`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := &spec.Env{File: "test.rpt"}
			_, err := env.EvalString(tt.src)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			if tt.kind != nil {
				assert.ErrorIs(t, err, tt.kind)
			}
		})
	}
}

func TestEvalPositionsFromParse(t *testing.T) {
	// Eval reports positions of nodes parsed at an offset, as Parse gives
	// them for a ${…} in the middle of a script.
	x, err := spec.ParseExpr(spec.Pos{File: "s.rpt", Line: 12, Col: 25}, "mcp:beginEx()\n    .bogus()")
	require.NoError(t, err)
	_, err = (&spec.Env{}).Eval(x)
	var ee *spec.EvalError
	require.True(t, errors.As(err, &ee), "%T", err)
	assert.Equal(t, 13, ee.Pos.Line)
	assert.Equal(t, 6, ee.Pos.Col)
	assert.Equal(t, "s.rpt", ee.Pos.File)
}

func TestCoreFunctions(t *testing.T) {
	e := &spec.Env{Properties: map[string]any{}}
	eval := func(src string) any {
		t.Helper()
		v, err := e.EvalString(src)
		require.NoError(t, err, src)
		return v
	}
	b := eval(`core:randomBytes(16)`).([]byte)
	assert.Len(t, b, 16)
	for _, n := range []int{1, 2, 7, 64} {
		u := eval(fmt.Sprintf(`core:randomBytesUTF8(%d)`, n)).([]byte)
		assert.Len(t, u, n)
		assert.True(t, utf8.Valid(u), "%x", u)
		bad := eval(fmt.Sprintf(`core:randomBytesInvalidUTF8(%d)`, n)).([]byte)
		assert.Len(t, bad, n)
		assert.False(t, utf8.Valid(bad), "%x", bad)
	}
	for i := 0; i < 50; i++ {
		u := eval(`core:randomBytesUnalignedUTF8(10, 5)`).([]byte)
		require.Len(t, u, 10)
		assert.True(t, utf8.Valid(u), "%x", u)
		assert.False(t, utf8.Valid(u[:5]), "the character at 5 straddles the split: %x", u)
	}
	a := eval(`core:randomAscii(32)`).([]byte)
	assert.Len(t, a, 32)
	assert.Equal(t, "abc", strings.ToLower(eval(`core:randomizeLetterCase("abc")`).(string)))
	assert.NotEqual(t, "content-type", eval(`core:randomCaseNot("content-type")`))
	assert.Equal(t, []byte("ell"), eval(`core:copyOfRange("hello", 1, 4)`))
	assert.Equal(t, "aGk=", eval(`core:base64Encode("hi")`))
	assert.Equal(t, []byte("hi"), eval(`core:base64Decode("aGk=")`))
	assert.Len(t, eval(`http:randomBytes(3)`).([]byte), 3, "core helpers reach through IDL namespaces")
	_, err := e.EvalString(`core:randomBytes("x")`)
	assert.ErrorContains(t, err, "core:randomBytes: length must be a non-negative integer, got string")
	_, err = e.EvalString(`core:nope()`)
	assert.ErrorContains(t, err, "unknown function core:nope")
}
