package dynamic_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDecode(t *testing.T) {
	tests := []struct {
		name    string
		fixture bool
		typ     string
		chain   string
		want    map[string]any
	}{
		{"union", false, "McpBeginEx", `typeId(3).toolsCall().sessionId("s").name("x").build().build()`, map[string]any{
			"compositeId": int64(0), "typeId": int64(3), "kind": "toolsCall",
			"toolsCall": map[string]any{"sessionId": "s", "name": "x", "contentLength": int64(-1), "timeout": int64(0)},
		}},
		{"null strings", false, "McpBeginEx", `typeId(3).lifecycle().build().build()`, map[string]any{
			"compositeId": int64(0), "typeId": int64(3), "kind": "lifecycle",
			"lifecycle": map[string]any{"sessionId": nil, "capabilities": int64(0), "authCallback": nil, "subscriptions": int64(0)},
		}},
		{"enum", false, "McpFlushEx", `typeId(3).elicitResponse().correlationId("c").action(2).build().build()`, map[string]any{
			"compositeId": int64(0), "typeId": int64(3), "kind": "elicitResponse",
			"elicitResponse": map[string]any{"correlationId": "c", "action": "CANCEL"},
		}},
		{"enum value without constant", false, "McpFlushEx", `typeId(3).elicitResponse().correlationId("c").action(7).build().build()`, map[string]any{
			"compositeId": int64(0), "typeId": int64(3), "kind": "elicitResponse",
			"elicitResponse": map[string]any{"correlationId": "c", "action": int64(7)},
		}},
		{"array", false, "HttpBeginEx", `typeId(1).header(":method", "GET").header("x", null).build()`, map[string]any{
			"compositeId": int64(0), "typeId": int64(1),
			"headers": []any{map[string]any{"name": ":method", "value": "GET"}, map[string]any{"name": "x", "value": nil}},
		}},
		{"octets", false, "Data", dataChain, map[string]any{
			"originId": int64(1), "routedId": int64(2), "streamId": int64(3), "sequence": int64(4), "acknowledge": int64(5),
			"maximum": int64(6), "timestamp": int64(0), "traceId": int64(0), "authorization": int64(0), "flags": int64(3),
			"budgetId": int64(0), "reserved": int64(5), "length": int64(5), "payload": []byte("hello"), "extension": []byte{},
		}},
		{"uint64", true, "NetChoice", `big(18446744073709551615).build()`, map[string]any{
			"kind": "big", "big": uint64(18446744073709551615),
		}},
		{"list holds the fields present", true, "Bag", `name("b").delta(-1L).number(1).build()`, map[string]any{
			"name": "b", "delta": int64(-1), "numbers": []any{int64(1)},
		}},
		{"missing-byte list", true, "Sparse", `c(9).build()`, map[string]any{"c": int64(9)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := builtin(t)
			if tt.fixture {
				s = fixtureSchema(t)
			}
			b, err := build(t, s, tt.typ, tt.chain)
			require.NoError(t, err)
			got, err := s.Decode(tt.typ, b)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestFormat(t *testing.T) {
	tests := []struct {
		name    string
		fixture bool
		typ     string
		chain   string
		want    string
	}{
		{"union", false, "McpBeginEx", `typeId(3).toolsCall().sessionId("s").name("x").build().build()`,
			`McpBeginEx{compositeId: 0, typeId: 3, kind: toolsCall, toolsCall: {sessionId: "s", name: "x", contentLength: -1, timeout: 0}}`},
		{"null and enum", false, "McpResetEx", `typeId(3).bearer().realm("mcp").error("INSUFFICIENT_SCOPE").build().build()`,
			`McpResetEx{compositeId: 0, typeId: 3, kind: bearer, bearer: {realm: "mcp", scopes: null, resourceMetadata: null, error: INSUFFICIENT_SCOPE}}`},
		{"unknown enum value", false, "McpEndEx", `typeId(3).outcome(9).build()`,
			`McpEndEx{compositeId: 0, typeId: 3, outcome: McpOutcome(9)}`},
		{"empty case", false, "McpChallengeEx", `typeId(3).suspended().build().build()`,
			`McpChallengeEx{compositeId: 0, typeId: 3, kind: suspended, suspended: {}}`},
		{"headers", false, "HttpBeginEx", `typeId(1).header(":method", "GET").header(":path", "/").build()`,
			`HttpBeginEx{compositeId: 0, typeId: 1, headers: [{name: ":method", value: "GET"}, {name: ":path", value: "/"}]}`},
		{"quoted", false, "HttpBeginEx", `typeId(1).header("x", "a\"b\n").build()`,
			`HttpBeginEx{compositeId: 0, typeId: 1, headers: [{name: "x", value: "a\"b\n"}]}`},
		{"octets", false, "Begin", beginChain,
			`Begin{originId: 1, routedId: 2, streamId: 3, sequence: 0, acknowledge: 0, maximum: 8192, timestamp: 0, traceId: 0, authorization: 0, affinity: 7, redirectedId: 0, extension: [0x01 0x02]}`},
		{"null octets", false, "Signal",
			`originId(1L).routedId(2L).streamId(3L).sequence(0L).acknowledge(0L).maximum(0).cancelId(0L).signalId(1).contextId(2).build()`,
			`Signal{originId: 1, routedId: 2, streamId: 3, sequence: 0, acknowledge: 0, maximum: 0, timestamp: 0, traceId: 0, authorization: 0, cancelId: 0, signalId: 1, contextId: 2, length: -1, payload: null}`},
		{"scalar arrays and nested", true, "Variable", variableChain,
			`Variable{compositeId: 0, typeId: 1, v32: -1, v64: -300, vu32: 300, s8: "eight", s16: null, s32: "thirty-two", size: 2, between: "b", sized: [0x0a 0x0b], nullableSize: -1, nullable: null, varSize: 2, varSized: "vs", fixed: {i8: -8, i16: -16, i24: -24, i32: -32, i64: -64, u8: 255, u16: 65535, u24: 16777215, u32: 4294967295, u64: 18446744073709551615, color: BLUE, small: TWO, magic: "mmmm"}, names: ["a", "bc"], numbers: [7, -7], colors: [BLUE], fixeds: [], rest: "tail"}`},
		{"list", true, "BagHolder", `bag().name("x").build().sparse().b("s").build().build()`,
			`BagHolder{bag: {name: "x"}, sparse: [{b: "s"}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := builtin(t)
			if tt.fixture {
				s = fixtureSchema(t)
			}
			b, err := build(t, s, tt.typ, tt.chain)
			require.NoError(t, err)
			assert.Equal(t, tt.want, s.Format(tt.typ, b))
		})
	}
}

func TestFormatMalformed(t *testing.T) {
	s := builtin(t)
	assert.Equal(t, "McpAbortEx(McpAbortEx.reason: buffer too short) [0x00 0x00 0x00 0x00 0x00 0x00 0x00 0x00 0x03 0x00 0x00 0x00 0x05]",
		s.Format("McpAbortEx", []byte{0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 5}))
	assert.Equal(t, "Nope(Nope: unknown type) [0x01]", s.Format("Nope", []byte{1}))
}
