package dynamic_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/idl/dynamic"
)

func TestMatch(t *testing.T) {
	const (
		toolsCall   = `typeId(3).toolsCall().sessionId("s").name("echo").contentLength(12).build().build()`
		httpRequest = `typeId(1).header(":method", "GET").header(":path", "/mcp").header("accept", "text/event-stream").build()`
	)
	tests := []struct {
		name    string
		fixture bool
		typ     string
		build   string // the bytes, built by this chain
		match   string // the matcher's chain
		want    string // the error, "" for a match
		kind    error
	}{
		{"field", false, "McpBeginEx", toolsCall, `toolsCall().name("echo").build().build()`, "", nil},
		{"field differs", false, "McpBeginEx", toolsCall, `typeId(3).toolsCall().name("get_weather").build().build()`,
			`McpBeginEx.toolsCall.name: expected "get_weather", got "echo"`, dynamic.ErrMismatch},
		{"kind only", false, "McpBeginEx", toolsCall, `toolsCall().build().build()`, "", nil},
		{"kind differs", false, "McpBeginEx", toolsCall, `toolsList().sessionId("s").build().build()`,
			`McpBeginEx.kind: expected toolsList, got toolsCall`, dynamic.ErrMismatch},
		{"inherited field only", false, "McpBeginEx", toolsCall, `typeId(3).build()`, "", nil},
		{"inherited field differs", false, "McpBeginEx", toolsCall, `typeId(4).build()`,
			`McpBeginEx.typeId: expected 4, got 3`, dynamic.ErrMismatch},
		{"empty matcher", false, "McpBeginEx", toolsCall, `build()`, "", nil},
		{"default value checked", false, "McpBeginEx", toolsCall, `toolsCall().timeout(0L).contentLength(12).build().build()`, "", nil},
		{"null expected", false, "McpBeginEx", toolsCall, `toolsCall().sessionId(null).build().build()`,
			`McpBeginEx.toolsCall.sessionId: expected null, got "s"`, dynamic.ErrMismatch},
		{"null got", false, "McpAbortEx", `typeId(3).build()`, `reason("x").build()`,
			`McpAbortEx.reason: expected "x", got null`, dynamic.ErrMismatch},
		{"enum", false, "McpFlushEx", `typeId(3).elicitResponse().correlationId("c").action("DECLINE").build().build()`,
			`elicitResponse().action(1).build().build()`, "", nil},
		{"enum differs", false, "McpFlushEx", `typeId(3).elicitResponse().correlationId("c").action("DECLINE").build().build()`,
			`elicitResponse().action("ACCEPT").build().build()`,
			`McpFlushEx.elicitResponse.action: expected ACCEPT, got DECLINE`, dynamic.ErrMismatch},
		{"enum switch kind differs", false, "McpEventEx", `typeId(3).sessionClosed().sessionId("s").build().build()`,
			`sessionEstablished().build().build()`,
			`McpEventEx.kind: expected sessionEstablished, got sessionClosed`, dynamic.ErrMismatch},
		{"headers in any order", false, "HttpBeginEx", httpRequest, `header(":path", "/mcp").header(":method", "GET").build()`, "", nil},
		{"header by name only", false, "HttpBeginEx", httpRequest, `header("accept").build()`, "", nil},
		{"header missing", false, "HttpBeginEx", httpRequest, `header(":method", "GET").header(":status", "200").build()`,
			`HttpBeginEx.headers: expected an item {name: ":status", value: "200"}, got [{name: ":method", value: "GET"}, {name: ":path", value: "/mcp"}, {name: "accept", value: "text/event-stream"}]`,
			dynamic.ErrMismatch},
		{"header value differs", false, "HttpBeginEx", httpRequest, `header(":method", "POST").build()`,
			`HttpBeginEx.headers: expected an item {name: ":method", value: "POST"}`, dynamic.ErrMismatch},
		{"header regex", false, "HttpBeginEx", httpRequest, `headerRegex(":path", "/m.p").headerRegex("accept", "text/.*").build()`, "", nil},
		{"header regex is a full match", false, "HttpBeginEx", httpRequest, `headerRegex(":path", "/m").build()`,
			`HttpBeginEx.headers: expected an item {name: ":path", value: /\/m/}`, dynamic.ErrMismatch},
		{"field regex", false, "McpBeginEx", toolsCall, `toolsCall().nameRegex("e.*o").sessionIdRegex("[a-z]").build().build()`, "", nil},
		{"field regex differs", false, "McpBeginEx", toolsCall, `toolsCall().nameRegex("get_.*").build().build()`,
			`McpBeginEx.toolsCall.name: expected /get_.*/, got "echo"`, dynamic.ErrMismatch},
		{"regex never matches null", false, "McpAbortEx", `typeId(3).build()`, `reasonRegex(".*").build()`,
			`McpAbortEx.reason: expected /.*/, got null`, dynamic.ErrMismatch},
		{"header absent", false, "HttpBeginEx", httpRequest, `header(":method", "GET").headerMissing("alt-svc").build()`, "", nil},
		{"header absent is present", false, "HttpBeginEx", httpRequest, `headerMissing(":path").build()`,
			`HttpBeginEx.headers[1]: expected no item {name: ":path"}, got {name: ":path", value: "/mcp"}`, dynamic.ErrMismatch},
		{"header absent with another value", false, "HttpBeginEx", httpRequest, `headerMissing(":path", "/other").build()`, "", nil},
		{"scalar array item absent", true, "Variable", variableChain, `numberMissing(8).build()`, "", nil},
		{"scalar array item present", true, "Variable", variableChain, `numberMissing(-7).build()`,
			`Variable.numbers[1]: expected no item -7, got -7`, dynamic.ErrMismatch},
		{"header item builder", false, "HttpBeginEx", httpRequest, `header().value("/mcp").build().build()`, "", nil},
		{"size field", false, "Data", dataChain, `length(5).payload("hello").build()`, "", nil},
		{"size field differs", false, "Data", dataChain, `length(6).build()`, `Data.length: expected 6, got 5`, dynamic.ErrMismatch},
		{"octets", false, "Begin", beginChain, `extension([0x01 0x02]).build()`, "", nil},
		{"octets differ", false, "Begin", beginChain, `extension([0x01 0x03]).build()`,
			`Begin.extension: expected [0x01 0x03], got [0x01 0x02]`, dynamic.ErrMismatch},
		{"printable octets", false, "Data", dataChain, `payload("help").build()`,
			`Data.payload: expected "help", got "hello"`, dynamic.ErrMismatch},
		{"nested struct", true, "Variable", variableChain, `fixed().color("RED").build().build()`,
			`Variable.fixed.color: expected RED, got BLUE`, dynamic.ErrMismatch},
		{"scalar array contains", true, "Variable", variableChain, `number(-7).names("bc").build()`, "", nil},
		{"scalar array item missing", true, "Variable", variableChain, `numbers(8).build()`,
			`Variable.numbers: expected an item 8, got [7, -7]`, dynamic.ErrMismatch},
		{"union scalar case kind only", true, "Choice", `typeId(2).number(-5).build()`, `number().build()`, "", nil},
		{"union scalar case", true, "Choice", `typeId(2).number(-5).build()`, `number(5).build()`,
			`Choice.number: expected 5, got -5`, dynamic.ErrMismatch},
		{"uint64", true, "NetChoice", `big(1).build()`, `big(18446744073709551615).build()`,
			`NetChoice.big: expected 18446744073709551615, got 1`, dynamic.ErrMismatch},
		{"list default of absent field", true, "Bag", `name("b").build()`, `size(10L).note("none").build()`, "", nil},
		{"list absent field", true, "Bag", `name("b").build()`, `delta(1L).build()`,
			`Bag.delta: expected 1, got absent`, dynamic.ErrMismatch},
		{"list present field", true, "Bag", `name("b").delta(-1L).build()`, `delta(-1L).name("b").build()`, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := builtin(t)
			if tt.fixture {
				s = fixtureSchema(t)
			}
			b, err := build(t, s, tt.typ, tt.build)
			require.NoError(t, err)
			m, err := s.NewMatcher(tt.typ)
			require.NoError(t, err)
			out, err := chain(t, m, tt.match)
			require.NoError(t, err)
			require.Same(t, m, out, "the outermost build() of a matcher returns it")
			err = m.Match(b)
			if tt.want == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.ErrorIs(t, err, tt.kind)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

const (
	dataChain     = `originId(1L).routedId(2L).streamId(3L).sequence(4L).acknowledge(5L).maximum(6).budgetId(0L).reserved(5).payload("hello").build()`
	beginChain    = `originId(1L).routedId(2L).streamId(3L).sequence(0L).acknowledge(0L).maximum(8192).affinity(7L).extension([0x01 0x02]).build()`
	variableChain = `typeId(1).v64(-300L).s32("thirty-two").between("b").sized([0x0a 0x0b]).varSized("vs").fixed().magic("mmmm").build().names("a", "bc").number(7).number(-7).color("BLUE").rest("tail").build()`
)

func TestMatchMalformed(t *testing.T) {
	s := builtin(t)
	b, err := build(t, s, "McpBeginEx", `typeId(3).toolsCall().sessionId("s").name("echo").build().build()`)
	require.NoError(t, err)
	m, err := s.NewMatcher("McpBeginEx")
	require.NoError(t, err)

	tests := []struct {
		name string
		b    []byte
		want string
	}{
		{"empty", nil, "McpBeginEx.compositeId: buffer too short"},
		{"truncated string", b[:len(b)-13], "McpBeginEx.toolsCall.name: buffer too short"},
		{"truncated fixed field", b[:len(b)-3], "McpBeginEx.toolsCall.timeout: buffer too short"},
		{"trailing", append(b[:len(b):len(b)], 0), "McpBeginEx: 1 trailing byte after the value"},
		{"unknown kind", append(append([]byte{}, b[:12]...), 99), "McpBeginEx.kind: unknown union kind 99"},
		{"negative length", append(append([]byte{}, b[:13]...), 0xfe, 0xff), "McpBeginEx.toolsCall.sessionId: invalid string length -2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := m.Match(tt.b)
			require.Error(t, err)
			assert.ErrorIs(t, err, dynamic.ErrMalformed)
			assert.EqualError(t, err, tt.want)
		})
	}
}

func TestMatcherString(t *testing.T) {
	s := builtin(t)
	m, err := s.NewMatcher("HttpBeginEx")
	require.NoError(t, err)
	_, err = chain(t, m, `typeId(1).header(":method", "GET").header(":path").build()`)
	require.NoError(t, err)
	assert.Equal(t, `HttpBeginEx{typeId: 1, headers: [{name: ":method", value: "GET"}, {name: ":path"}]}`, m.String())
}

func TestMatcherRegexErrors(t *testing.T) {
	s := builtin(t)
	tests := []struct {
		name  string
		typ   string
		chain string
		kind  error
		msg   string
	}{
		{"regex of an integer", "McpBeginEx", `typeIdRegex("3")`, dynamic.ErrArgs,
			`McpBeginEx.typeId: a regular expression matches strings, not int32`},
		{"invalid regex", "HttpBeginEx", `headerRegex(":path", "(")`, dynamic.ErrArgs,
			`HttpBeginEx.headers[0].value: invalid regular expression "("`},
		{"regex not a string", "McpBeginEx", `toolsCall().nameRegex(1)`, dynamic.ErrArgs,
			`McpBeginEx.toolsCall.name: wrong argument int 1: want a regular expression string`},
		{"regex of a struct case", "McpBeginEx", `toolsCallRegex("x")`, dynamic.ErrArgs,
			`McpBeginEx.toolsCall: toolsCallRegex takes a regular expression as its last argument`},
		{"regex without argument", "HttpBeginEx", `headerRegex()`, dynamic.ErrArgs,
			`HttpBeginEx.headers: headerRegex takes a regular expression as its last argument`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := s.NewMatcher(tt.typ)
			require.NoError(t, err)
			_, err = chain(t, m, tt.chain)
			require.Error(t, err)
			assert.ErrorIs(t, err, tt.kind)
			assert.Contains(t, err.Error(), tt.msg)
		})
	}

	b, err := s.NewBuilder("HttpBeginEx")
	require.NoError(t, err)
	_, err = b.Call("headerRegex", ":path", ".*")
	assert.ErrorIs(t, err, dynamic.ErrUnknownMethod, "builders have no Regex methods")
}
