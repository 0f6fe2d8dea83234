package dynamic_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/binding/http"
	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/engine/frame"
	"github.com/sluicehq/sluice/idl"
	"github.com/sluicehq/sluice/idl/dynamic"
	"github.com/sluicehq/sluice/idl/flyweight"
	"github.com/sluicehq/sluice/internal/fixture"
)

// generated runs fill on a generated builder and returns the bytes written.
func generated[B any, P interface {
	*B
	Wrap(buf []byte, off, maxLimit int) *B
	BuildLimit() (int, error)
}](t testing.TB, fill func(*B)) []byte {
	t.Helper()
	buf := make([]byte, 4096)
	b := P(new(B)).Wrap(buf, 0, len(buf))
	fill(b)
	n, err := P(b).BuildLimit()
	require.NoError(t, err)
	return buf[:n]
}

// build evaluates a chain on a new builder of typ; the chain must end with
// the outermost build().
func build(t testing.TB, s *dynamic.Schema, typ, src string) ([]byte, error) {
	t.Helper()
	b, err := s.NewBuilder(typ)
	require.NoError(t, err)
	out, err := chain(t, b, src)
	if err != nil {
		return nil, err
	}
	bytes, ok := out.([]byte)
	require.Truef(t, ok, "chain %q ended with %T, not the outermost build()", src, out)
	return bytes, nil
}

type buildCase struct {
	name  string
	typ   string
	chain string
	want  []byte
}

func TestBuildMatchesGenerated(t *testing.T) {
	s := builtin(t)
	tests := []buildCase{
		{"mcp lifecycle", "McpBeginEx",
			`typeId(3).lifecycle().sessionId("sess-1").capabilities(5).authCallback("auth/callback").build().build()`,
			generated(t, func(b *mcp.McpBeginExBuilder) {
				b.TypeID(3).Lifecycle().SessionID("sess-1").Capabilities(5).AuthCallback("auth/callback")
			})},
		{"mcp lifecycle defaults", "McpBeginEx", `typeId(3).lifecycle().build().build()`,
			generated(t, func(b *mcp.McpBeginExBuilder) { b.TypeID(3).Lifecycle() })},
		{"mcp toolsList", "McpBeginEx", `typeId(3).toolsList().sessionId("s").timeout(1000L).build().build()`,
			generated(t, func(b *mcp.McpBeginExBuilder) { b.TypeID(3).ToolsList().SessionID("s").Timeout(1000) })},
		{"mcp toolsCall", "McpBeginEx",
			`typeId(3).toolsCall().sessionId("s").name("get_weather").contentLength(42).timeout(30000L).build().build()`,
			generated(t, func(b *mcp.McpBeginExBuilder) {
				b.TypeID(3).ToolsCall().SessionID("s").Name("get_weather").ContentLength(42).Timeout(30000)
			})},
		{"mcp toolsCall in any order", "McpBeginEx",
			`toolsCall().timeout(5L).name("n").sessionId("s").build().typeId(3).compositeId(7L).build()`,
			generated(t, func(b *mcp.McpBeginExBuilder) {
				b.CompositeID(7).TypeID(3).ToolsCall().SessionID("s").Name("n").Timeout(5)
			})},
		{"mcp toolsCall null session", "McpBeginEx", `typeId(3).toolsCall().sessionId(null).name("").build().build()`,
			generated(t, func(b *mcp.McpBeginExBuilder) { b.TypeID(3).ToolsCall().SessionIDNull().Name("") })},
		{"mcp promptsList", "McpBeginEx", `typeId(3).promptsList().sessionId("s").build().build()`,
			generated(t, func(b *mcp.McpBeginExBuilder) { b.TypeID(3).PromptsList().SessionID("s") })},
		{"mcp promptsGet", "McpBeginEx", `typeId(3).promptsGet().sessionId("s").name("greet").contentLength(2).build().build()`,
			generated(t, func(b *mcp.McpBeginExBuilder) { b.TypeID(3).PromptsGet().SessionID("s").Name("greet").ContentLength(2) })},
		{"mcp resourcesList", "McpBeginEx", `typeId(3).resourcesList().sessionId("s").timeout(-1L).build().build()`,
			generated(t, func(b *mcp.McpBeginExBuilder) { b.TypeID(3).ResourcesList().SessionID("s").Timeout(-1) })},
		{"mcp resourcesRead", "McpBeginEx", `typeId(3).resourcesRead().sessionId("s").uri("file:///a").build().build()`,
			generated(t, func(b *mcp.McpBeginExBuilder) { b.TypeID(3).ResourcesRead().SessionID("s").URI("file:///a") })},
		{"mcp resourcesTemplatesList", "McpBeginEx", `typeId(3).resourcesTemplatesList().sessionId("s").build().build()`,
			generated(t, func(b *mcp.McpBeginExBuilder) { b.TypeID(3).ResourcesTemplatesList().SessionID("s") })},
		{"mcp resourcesSubscribe", "McpBeginEx", `typeId(3).resourcesSubscribe().sessionId("s").uri("u").timeout(9L).build().build()`,
			generated(t, func(b *mcp.McpBeginExBuilder) { b.TypeID(3).ResourcesSubscribe().SessionID("s").URI("u").Timeout(9) })},
		{"mcp resourcesUnsubscribe", "McpBeginEx", `typeId(3).resourcesUnsubscribe().sessionId("s").uri("u").contentLength(0).build().build()`,
			generated(t, func(b *mcp.McpBeginExBuilder) {
				b.TypeID(3).ResourcesUnsubscribe().SessionID("s").URI("u").ContentLength(0)
			})},

		{"mcp flush resumable", "McpFlushEx", `typeId(3).resumable().build().build()`,
			generated(t, func(b *mcp.McpFlushExBuilder) { b.TypeID(3).Resumable() })},
		{"mcp flush toolsListChanged", "McpFlushEx", `typeId(3).toolsListChanged().id("p:1").build().build()`,
			generated(t, func(b *mcp.McpFlushExBuilder) { b.TypeID(3).ToolsListChanged().ID("p:1") })},
		{"mcp flush promptsListChanged", "McpFlushEx", `typeId(3).promptsListChanged().id("p:2").build().build()`,
			generated(t, func(b *mcp.McpFlushExBuilder) { b.TypeID(3).PromptsListChanged().ID("p:2") })},
		{"mcp flush resourcesListChanged", "McpFlushEx", `typeId(3).resourcesListChanged().build().build()`,
			generated(t, func(b *mcp.McpFlushExBuilder) { b.TypeID(3).ResourcesListChanged() })},
		{"mcp flush progress", "McpFlushEx",
			`typeId(3).progress().id("1").token("tok").progress(50L).total(100L).message("half").build().build()`,
			generated(t, func(b *mcp.McpFlushExBuilder) {
				b.TypeID(3).Progress().ID("1").Token("tok").Progress(50).Total(100).Message("half")
			})},
		{"mcp flush suspend", "McpFlushEx", `typeId(3).suspend().retry(3000L).build().build()`,
			generated(t, func(b *mcp.McpFlushExBuilder) { b.TypeID(3).Suspend().Retry(3000) })},
		{"mcp flush elicitCallback", "McpFlushEx", `typeId(3).elicitCallback().url("https://x/cb").build().build()`,
			generated(t, func(b *mcp.McpFlushExBuilder) { b.TypeID(3).ElicitCallback().URL("https://x/cb") })},
		{"mcp flush elicitComplete", "McpFlushEx", `typeId(3).elicitComplete().id("e1").build().build()`,
			generated(t, func(b *mcp.McpFlushExBuilder) { b.TypeID(3).ElicitComplete().ID("e1") })},
		{"mcp flush elicitResponse by name", "McpFlushEx", `typeId(3).elicitResponse().correlationId("c").action("DECLINE").build().build()`,
			generated(t, func(b *mcp.McpFlushExBuilder) {
				b.TypeID(3).ElicitResponse().CorrelationID("c").Action(mcp.McpElicitActionDecline)
			})},
		{"mcp flush elicitResponse by value", "McpFlushEx", `typeId(3).elicitResponse().action(2).correlationId("c").build().build()`,
			generated(t, func(b *mcp.McpFlushExBuilder) {
				b.TypeID(3).ElicitResponse().CorrelationID("c").Action(mcp.McpElicitActionCancel)
			})},
		{"mcp flush resourcesUpdated", "McpFlushEx", `typeId(3).resourcesUpdated().uri("file:///a").build().build()`,
			generated(t, func(b *mcp.McpFlushExBuilder) { b.TypeID(3).ResourcesUpdated().URI("file:///a") })},

		{"mcp challenge resume", "McpChallengeEx", `typeId(3).resume().id("p:7").build().build()`,
			generated(t, func(b *mcp.McpChallengeExBuilder) { b.TypeID(3).Resume().ID("p:7") })},
		{"mcp challenge suspended", "McpChallengeEx", `typeId(3).suspended().build().build()`,
			generated(t, func(b *mcp.McpChallengeExBuilder) { b.TypeID(3).Suspended() })},
		{"mcp challenge elicitCreate", "McpChallengeEx",
			`typeId(3).elicitCreate().id("e").url("https://x").message("sign in").correlationId("3").build().build()`,
			generated(t, func(b *mcp.McpChallengeExBuilder) {
				b.TypeID(3).ElicitCreate().ID("e").URL("https://x").Message("sign in").CorrelationID("3")
			})},

		{"mcp reset bearer", "McpResetEx", `typeId(3).bearer().realm("mcp").error("INVALID_TOKEN").build().build()`,
			generated(t, func(b *mcp.McpResetExBuilder) {
				b.TypeID(3).Bearer().Realm("mcp").Error(mcp.McpBearerErrorInvalidToken)
			})},
		{"mcp reset error", "McpResetEx", `typeId(3).error().code(-32602).message("bad params").build().build()`,
			generated(t, func(b *mcp.McpResetExBuilder) { b.TypeID(3).Error().Code(-32602).Message("bad params") })},
		{"mcp abort", "McpAbortEx", `typeId(3).reason("gone").build()`,
			generated(t, func(b *mcp.McpAbortExBuilder) { b.TypeID(3).Reason("gone") })},
		{"mcp end default outcome", "McpEndEx", `typeId(3).build()`,
			generated(t, func(b *mcp.McpEndExBuilder) { b.TypeID(3) })},
		{"mcp end error", "McpEndEx", `typeId(3).outcome("ERROR").build()`,
			generated(t, func(b *mcp.McpEndExBuilder) { b.TypeID(3).Outcome(mcp.McpOutcomeError) })},
		{"mcp event sessionEstablished", "McpEventEx", `typeId(3).sessionEstablished().sessionId("s").build().build()`,
			generated(t, func(b *mcp.McpEventExBuilder) { b.TypeID(3).SessionEstablished().SessionID("s") })},
		{"mcp event sessionClosed", "McpEventEx", `typeId(3).sessionClosed().sessionId("s").reason("idle").build().build()`,
			generated(t, func(b *mcp.McpEventExBuilder) { b.TypeID(3).SessionClosed().SessionID("s").Reason("idle") })},
		{"mcp event authorizationFailed", "McpEventEx", `typeId(3).authorizationFailed().error(2).build().build()`,
			generated(t, func(b *mcp.McpEventExBuilder) {
				b.TypeID(3).AuthorizationFailed().Error(mcp.McpBearerErrorInsufficientScope)
			})},
		{"mcp event elicitationTimeout", "McpEventEx", `typeId(3).elicitationTimeout().sessionId("s").elicitationId("e").build().build()`,
			generated(t, func(b *mcp.McpEventExBuilder) { b.TypeID(3).ElicitationTimeout().SessionID("s").ElicitationID("e") })},

		{"http begin headers", "HttpBeginEx",
			`typeId(1).header(":method", "GET").header(":path", "/mcp").header("accept", "text/event-stream").build()`,
			generated(t, func(b *http.HttpBeginExBuilder) {
				h := b.TypeID(1).Headers()
				h.Item().Name(":method").Value("GET")
				h.Item().Name(":path").Value("/mcp")
				h.Item().Name("accept").Value("text/event-stream")
			})},
		{"http begin headers by field name and item builders", "HttpBeginEx",
			`headers(":method", "GET").header().value("/mcp").name(":path").build().typeId(1).build()`,
			generated(t, func(b *http.HttpBeginExBuilder) {
				h := b.TypeID(1).Headers()
				h.Item().Name(":method").Value("GET")
				h.Item().Name(":path").Value("/mcp")
			})},
		{"http begin item alias", "HttpBeginEx", `typeId(1).item(":method", "GET").build()`,
			generated(t, func(b *http.HttpBeginExBuilder) { b.TypeID(1).Headers().Item().Name(":method").Value("GET") })},
		{"http begin no headers", "HttpBeginEx", `typeId(1).build()`,
			generated(t, func(b *http.HttpBeginExBuilder) { b.TypeID(1) })},
		{"http flush promise", "HttpFlushEx", `typeId(1).promiseId(5L).promise(":path", "/a").build()`,
			generated(t, func(b *http.HttpFlushExBuilder) { b.TypeID(1).PromiseID(5).Promise().Item().Name(":path").Value("/a") })},
		{"http end trailers", "HttpEndEx", `typeId(1).trailer("grpc-status", "0").build()`,
			generated(t, func(b *http.HttpEndExBuilder) { b.TypeID(1).Trailers().Item().Name("grpc-status").Value("0") })},
		{"http reset", "HttpResetEx", `typeId(1).header(":status", "503").build()`,
			generated(t, func(b *http.HttpResetExBuilder) { b.TypeID(1).Headers().Item().Name(":status").Value("503") })},
		{"http challenge", "HttpChallengeEx", `typeId(1).header("www-authenticate", null).build()`,
			generated(t, func(b *http.HttpChallengeExBuilder) {
				b.TypeID(1).Headers().Item().Name("www-authenticate").ValueNull()
			})},

		{"core begin", "Begin",
			`originId(1L).routedId(2L).streamId(3L).sequence(0L).acknowledge(0L).maximum(8192).affinity(7L).extension([0x01 0x02]).build()`,
			generated(t, func(b *frame.BeginBuilder) {
				b.OriginID(1).RoutedID(2).StreamID(3).Sequence(0).Acknowledge(0).Maximum(8192).Affinity(7).Extension([]byte{1, 2})
			})},
		{"core data", "Data",
			`originId(1L).routedId(2L).streamId(3L).sequence(4L).acknowledge(5L).maximum(6).traceId(9L).budgetId(0L).reserved(5).payload("hello").build()`,
			generated(t, func(b *frame.DataBuilder) {
				b.OriginID(1).RoutedID(2).StreamID(3).Sequence(4).Acknowledge(5).Maximum(6).TraceID(9).
					BudgetID(0).Reserved(5).Payload([]byte("hello"))
			})},
		{"core data null payload and flags", "Data",
			`originId(1L).routedId(2L).streamId(3L).sequence(4L).acknowledge(5L).maximum(6).flags(1).budgetId(0L).reserved(0).extension("x").build()`,
			generated(t, func(b *frame.DataBuilder) {
				b.OriginID(1).RoutedID(2).StreamID(3).Sequence(4).Acknowledge(5).Maximum(6).Flags(1).
					BudgetID(0).Reserved(0).PayloadNull().Extension([]byte("x"))
			})},
		{"core window", "Window",
			`originId(1L).routedId(2L).streamId(3L).sequence(0L).acknowledge(0L).maximum(65536).budgetId(0L).padding(0).capabilities(1).build()`,
			generated(t, func(b *frame.WindowBuilder) {
				b.OriginID(1).RoutedID(2).StreamID(3).Sequence(0).Acknowledge(0).Maximum(65536).BudgetID(0).Padding(0).Capabilities(1)
			})},
		{"core signal", "Signal",
			`originId(1L).routedId(2L).streamId(3L).sequence(0L).acknowledge(0L).maximum(0).cancelId(0L).signalId(1).contextId(2).payload([0xff]).build()`,
			generated(t, func(b *frame.SignalBuilder) {
				b.OriginID(1).RoutedID(2).StreamID(3).Sequence(0).Acknowledge(0).Maximum(0).CancelID(0).SignalID(1).ContextID(2).
					Payload([]byte{0xff})
			})},
	}
	runBuildCases(t, s, tests)
}

func runBuildCases(t *testing.T, s *dynamic.Schema, tests []buildCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := build(t, s, tt.typ, tt.chain)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			m, err := s.NewMatcher(tt.typ)
			require.NoError(t, err)
			_, err = chain(t, m, tt.chain)
			require.NoError(t, err)
			assert.NoError(t, m.Match(got), "a matcher given the builder's chain matches its bytes")
		})
	}
}

func TestBuildFixtureMatchesGenerated(t *testing.T) {
	s := fixtureSchema(t)
	tests := []buildCase{
		{"fixed defaults", "Fixed", `magic([0x01 0x02 0x03 0x04]).build()`,
			generated(t, func(b *fixture.FixedBuilder) { b.Magic([]byte{1, 2, 3, 4}) })},
		{"fixed extremes", "Fixed",
			`i8(-128).i16(32767).i24(-8388608).i32(2147483647).i64(-9223372036854775808L).u8(0).u16(65535).u24(16777215).u32(4294967295L).u64(18446744073709551615).color("GREEN").small(1).magic("abcd").build()`,
			generated(t, func(b *fixture.FixedBuilder) {
				b.I8(-128).I16(32767).I24(-8388608).I32(2147483647).I64(-9223372036854775808).U8(0).U16(65535).U24(16777215).
					U32(4294967295).U64(18446744073709551615).Color(fixture.ColorGreen).Small(fixture.SmallOne).Magic([]byte("abcd"))
			})},
		{"typedef alias", "FixedAlias", `magic("wxyz").build()`,
			generated(t, func(b *fixture.FixedAliasBuilder) { b.Magic([]byte("wxyz")) })},
		{"variable", "Variable",
			`typeId(1).v64(-300L).s32("thirty-two").between("b").sized([0x0a 0x0b]).varSized("vs").fixed().magic("mmmm").build().names("a", "bc").number(7).number(-7).color("BLUE").fixeds().magic("1234").build().rest("tail").build()`,
			generated(t, func(b *fixture.VariableBuilder) {
				b.TypeID(1).V64(-300).S32("thirty-two").Between("b").Sized([]byte{10, 11}).VarSized([]byte("vs")).Fixed().Magic([]byte("mmmm"))
				n := b.Names()
				n.Item().Set("a")
				n.Item().Set("bc")
				nums := b.Numbers()
				nums.Item().Set(7)
				nums.Item().Set(-7)
				b.Colors().Item().Set(fixture.ColorBlue)
				b.Fixeds().Item().Magic([]byte("1234"))
				b.Rest([]byte("tail"))
			})},
		{"variable varints and nulls", "Variable",
			`typeId(1).v32(-2147483648).v64(9223372036854775807L).vu32(4294967295L).s8(null).s16("x").s32(null).between(null).sized("").nullable(null).varSized([]).fixed().magic("mmmm").build().build()`,
			generated(t, func(b *fixture.VariableBuilder) {
				b.TypeID(1).V32(-2147483648).V64(9223372036854775807).Vu32(4294967295).S8Null().S16("x").S32Null().BetweenNull().
					Sized(nil).NullableNull().VarSized(nil).Fixed().Magic([]byte("mmmm"))
			})},
		{"choice number", "Choice", `typeId(2).number(-5).build()`,
			generated(t, func(b *fixture.ChoiceBuilder) { b.TypeID(2).Number(-5) })},
		{"choice text", "Choice", `typeId(2).text("hi").build()`,
			generated(t, func(b *fixture.ChoiceBuilder) { b.TypeID(2).Text("hi") })},
		{"choice items", "Choice", `typeId(2).items("a", "b").item("c").build()`,
			generated(t, func(b *fixture.ChoiceBuilder) {
				a := b.TypeID(2).Items()
				a.Item().Set("a")
				a.Item().Set("b")
				a.Item().Set("c")
			})},
		{"choice empty items", "Choice", `typeId(2).items().build()`,
			generated(t, func(b *fixture.ChoiceBuilder) { b.TypeID(2).Items() })},
		{"choice pair", "Choice", `typeId(2).pair([0x01 0x02]).build()`,
			generated(t, func(b *fixture.ChoiceBuilder) { b.TypeID(2).Pair([]byte{1, 2}) })},
		{"by color enum switch", "ByColor", `choice().typeId(1).fixed().magic("abcd").build().build().build()`,
			generated(t, func(b *fixture.ByColorBuilder) { b.Choice().TypeID(1).Fixed().Magic([]byte("abcd")) })},
		{"by color varint case", "ByColor", `count(-1L).build()`,
			generated(t, func(b *fixture.ByColorBuilder) { b.Count(-1) })},
		{"holder", "Holder", `tail(9).choices().typeId(1).text("x").build().choice().typeId(2).number(3).build().build()`,
			generated(t, func(b *fixture.HolderBuilder) {
				b.Choice().TypeID(2).Number(3)
				b.Choices().Item().TypeID(1).Text("x")
				b.Tail(9)
			})},
		{"bag bitmask list", "Bag", `note("n").name("bag").delta(-1L).number(1).number(2).build()`,
			generated(t, func(b *fixture.BagBuilder) {
				b.Name("bag").Delta(-1).Note("n")
				nums := b.Numbers()
				nums.Item().Set(1)
				nums.Item().Set(2)
			})},
		{"sparse missing-byte list", "Sparse", `c(-2).build()`,
			generated(t, func(b *fixture.SparseBuilder) { b.C(-2) })},
		{"sparse empty", "Sparse", `build()`,
			generated(t, func(b *fixture.SparseBuilder) {})},
		{"bag holder", "BagHolder", `bag().name("x").build().sparse().b("s").build().sparse().build().build()`,
			generated(t, func(b *fixture.BagHolderBuilder) {
				b.Bag().Name("x")
				sp := b.Sparse()
				sp.Item().B("s")
				sp.Item()
			})},
		{"network order struct", "NetHeader", `name("n").value(258).tag("a").tag(null).rest([0x09]).build()`,
			generated(t, func(b *fixture.NetHeaderBuilder) {
				tags := b.Name("n").Value(258).Tags()
				tags.Item().Set("a")
				tags.Item().SetNull()
				b.Rest([]byte{9})
			})},
		{"network order union", "NetChoice", `big(18446744073709551615).build()`,
			generated(t, func(b *fixture.NetChoiceBuilder) { b.Big(18446744073709551615) })},
		{"network order union struct case", "NetChoice", `header().name("h").value(1).delta(-1).build().build()`,
			generated(t, func(b *fixture.NetChoiceBuilder) { b.Header().Name("h").Value(1).Delta(-1) })},
	}
	runBuildCases(t, s, tests)
}

// TestEncodingPinned pins some encodings byte by byte, independently of
// the generated code: little and big endian, varints, strings, arrays and
// lists.
func TestEncodingPinned(t *testing.T) {
	le := binary.LittleEndian
	toolsCall := le.AppendUint64(nil, 0)                // compositeId
	toolsCall = le.AppendUint32(toolsCall, 3)           // typeId
	toolsCall = append(toolsCall, 2)                    // kind toolsCall
	toolsCall = append(toolsCall, 1, 0, 's')            // sessionId
	toolsCall = append(toolsCall, 2, 0, 'g', 'w')       // name
	toolsCall = le.AppendUint32(toolsCall, 0xffff_ffff) // contentLength -1
	toolsCall = le.AppendUint64(toolsCall, 1000)        // timeout

	headers := le.AppendUint64(nil, 0)
	headers = le.AppendUint32(headers, 1)
	headers = le.AppendUint32(headers, 1+7+2+3) // length of the items
	headers = le.AppendUint32(headers, 1)       // count
	headers = append(headers, 7)
	headers = append(headers, ":method"...)
	headers = append(headers, 3, 0)
	headers = append(headers, "GET"...)

	tests := []struct {
		name   string
		schema *dynamic.Schema
		typ    string
		chain  string
		want   []byte
	}{
		{"mcp toolsCall", builtin(t), "McpBeginEx", `typeId(3).toolsCall().sessionId("s").name("gw").timeout(1000L).build().build()`, toolsCall},
		{"http header", builtin(t), "HttpBeginEx", `typeId(1).header(":method", "GET").build()`, headers},
		{"network order", fixtureSchema(t), "NetHeader", `name("n").value(258).tag("a").build()`, []byte{
			0, 1, 'n', // string16 big endian
			0, 0, 1, 2, // uint32 258
			0xff, 0xff, 0xfe, // int24 -2 (default)
			0, 0, 0, 3, 0, 0, 0, 1, 0, 1, 'a', // string16[]: length 3, count 1
		}},
		{"network order union kind", fixtureSchema(t), "NetChoice", `big(1).build()`, []byte{1, 2, 0, 0, 0, 0, 0, 0, 0, 1}},
		{"varint case", fixtureSchema(t), "ByColor", `count(-3L).build()`, []byte{0x00, 0x03, 5}},
		{"varint zig-zag", fixtureSchema(t), "ByColor", `count(300L).build()`, []byte{0x00, 0x03, 0xd8, 0x04}},
		{"missing-byte list", fixtureSchema(t), "Sparse", `c(5).build()`, []byte{5, 3, 0x40, 0x40, 5, 0}},
		{"bitmask list", fixtureSchema(t), "Bag", `name("x").color("BLUE").build()`, []byte{
			4 + 8 + 2 + 2, 0, 0, 0, // length
			2, 0, 0, 0, // count
			0b101, 0, 0, 0, 0, 0, 0, 0, // mask: name, color
			1, 'x', 0x00, 0x03,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := build(t, tt.schema, tt.typ, tt.chain)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestBuildErrors(t *testing.T) {
	tests := []struct {
		name    string
		fixture bool
		typ     string
		chain   string
		kind    error
		msg     string
	}{
		{"unknown method", false, "McpBeginEx", `toolsCall().nmae("x")`, dynamic.ErrUnknownMethod,
			`McpBeginEx.toolsCall: unknown method "nmae" of struct McpToolsCallBeginEx (methods: sessionId, name, contentLength, timeout, build)`},
		{"method names are case sensitive", false, "McpBeginEx", `TypeId(3)`, dynamic.ErrUnknownMethod,
			`McpBeginEx: unknown method "TypeId" of union McpBeginEx`},
		{"wrong argument type", false, "McpBeginEx", `typeId("three")`, dynamic.ErrArgs,
			`McpBeginEx.typeId: wrong argument "three": want an integer`},
		{"string for bytes field", false, "McpBeginEx", `toolsCall().sessionId(1)`, dynamic.ErrArgs,
			`McpBeginEx.toolsCall.sessionId: wrong argument int 1: want a string, bytes or null`},
		{"out of range", false, "McpBeginEx", `typeId(2147483648L)`, dynamic.ErrRange,
			`McpBeginEx.typeId: 2147483648 out of range (int32 is -2147483648..2147483647)`},
		{"negative unsigned", false, "McpBeginEx", `lifecycle().capabilities(-1)`, dynamic.ErrRange,
			`McpBeginEx.lifecycle.capabilities: -1 out of range (uint16 is 0..65535)`},
		{"uint64 above int64", true, "Fixed", `i64(9223372036854775808)`, dynamic.ErrRange,
			`Fixed.i64: 9223372036854775808 out of range`},
		{"unknown enum constant", false, "McpFlushEx", `elicitResponse().action("MAYBE")`, dynamic.ErrRange,
			`McpFlushEx.elicitResponse.action: "MAYBE" is not a constant of enum McpElicitAction (ACCEPT, DECLINE, CANCEL)`},
		{"enum value out of base range", false, "McpFlushEx", `elicitResponse().action(256)`, dynamic.ErrRange,
			`McpFlushEx.elicitResponse.action: 256 out of range for enum McpElicitAction (uint8 is 0..255)`},
		{"too many arguments", false, "McpBeginEx", `typeId(1, 2)`, dynamic.ErrArgs, `McpBeginEx.typeId: takes 1 argument, got 2`},
		{"no argument", false, "McpBeginEx", `typeId()`, dynamic.ErrArgs, `McpBeginEx.typeId: takes 1 argument, got 0`},
		{"arguments to a case builder", false, "McpBeginEx", `toolsCall("x")`, dynamic.ErrArgs,
			`McpBeginEx.toolsCall: takes no arguments: toolsCall() opens the struct McpToolsCallBeginEx`},
		{"arguments to build", false, "McpBeginEx", `build(1)`, dynamic.ErrArgs, `McpBeginEx: build takes no arguments, got 1`},
		{"too many item fields", false, "HttpBeginEx", `header("a", "b", "c")`, dynamic.ErrArgs,
			`HttpBeginEx.headers[0]: 3 arguments for struct HttpHeader, which has 2 fields`},
		{"bad item field", false, "HttpBeginEx", `header("a").header("b", 7)`, dynamic.ErrArgs,
			`HttpBeginEx.headers[1].value: wrong argument int 7`},
		{"no item alias with several arrays", true, "Variable", `item(1)`, dynamic.ErrUnknownMethod,
			`Variable: unknown method "item" of struct Variable`},
		{"singular without items", true, "Choice", `item()`, dynamic.ErrArgs, `Choice.items: takes at least one item to append`},
		{"octets[N] length", true, "Fixed", `magic("abc")`, dynamic.ErrRange,
			`Fixed.magic: octets[4] takes exactly 4 bytes, got 3`},
		{"octets null without null default", true, "Variable", `sized(null)`, dynamic.ErrRange,
			`Variable.sized: cannot be null`},
		{"octets too long for size", true, "Variable", `sized("` + string(make([]byte, 256)) + `")`, dynamic.ErrRange,
			`Variable.sized: 256 bytes do not fit size field size (uint8 is 0..255)`},
		{"string too long", false, "HttpBeginEx", `header("` + string(make([]byte, 128)) + `", "v")`, dynamic.ErrRange,
			`HttpBeginEx.headers[0].name: 128 bytes is too long for string8 (at most 127)`},
		{"size field is computed", false, "Data", `length(3)`, dynamic.ErrComputed,
			`Data.length: is the size of payload and is computed from it; set payload instead`},
		{"missing required", false, "McpBeginEx", `typeId(3).toolsCall().name("x").build().build()`, dynamic.ErrMissing,
			`McpBeginEx.toolsCall.sessionId: required field McpToolsCallBeginEx.sessionId not set`},
		{"missing inherited", false, "McpBeginEx", `toolsCall().sessionId("s").name("x").build().build()`, dynamic.ErrMissing,
			`McpBeginEx.typeId: required field McpBeginEx.typeId not set`},
		{"no case", false, "McpBeginEx", `typeId(1).build()`, dynamic.ErrMissing,
			`McpBeginEx.kind: no case of union McpBeginEx selected: call one of lifecycle(), toolsList(), toolsCall()`},
		{"missing in array item", false, "HttpBeginEx", `typeId(1).header(":path").build()`, dynamic.ErrMissing,
			`HttpBeginEx.headers[0].value: required field HttpHeader.value not set`},
		{"missing in nested default", true, "Variable", `typeId(1).v64(1L).s32("").between("").sized("").varSized("").build()`, dynamic.ErrMissing,
			`Variable.fixed.magic: required field Fixed.magic not set`},
		{"missing required list field", true, "Bag", `size(1L).build()`, dynamic.ErrMissing,
			`Bag.name: required field Bag.name not set`},
		{"missing byte first", true, "Sparse", `a(64).build()`, dynamic.ErrRange,
			`Sparse.a: its encoding starts with the list's missing-field byte 0x40`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := builtin(t)
			if tt.fixture {
				s = fixtureSchema(t)
			}
			b, err := s.NewBuilder(tt.typ)
			require.NoError(t, err)
			_, err = chain(t, b, tt.chain)
			require.Error(t, err)
			assert.ErrorIs(t, err, tt.kind)
			var de *dynamic.Error
			require.ErrorAs(t, err, &de)
			assert.Contains(t, err.Error(), tt.msg)
		})
	}
}

func TestUnknownType(t *testing.T) {
	s := builtin(t)
	_, err := s.NewBuilder("McpBeginExx")
	assert.ErrorIs(t, err, dynamic.ErrUnknownType)
	assert.EqualError(t, err, "McpBeginExx: unknown type")
	_, err = s.NewMatcher("mcp::McpCapabilities")
	assert.EqualError(t, err, "mcp::McpCapabilities: enum McpCapabilities is not a struct, union or list")
	_, err = s.Decode("nope", nil)
	assert.ErrorIs(t, err, dynamic.ErrUnknownType)

	f, err := idl.Parse("amb.idl", []byte(`scope a { scope b { struct T { int8 x; } } scope c { struct T { int8 y; } } }`))
	require.NoError(t, err)
	require.NoError(t, idl.Check(f))
	amb, err := dynamic.NewSchema(f)
	require.NoError(t, err)
	_, err = amb.NewBuilder("T")
	assert.EqualError(t, err, "T: ambiguous type name; use one of a::b::T, a::c::T")
	b, err := amb.NewBuilder("a::c::T")
	require.NoError(t, err)
	_, err = b.Call("y", 1)
	require.NoError(t, err)
	out, err := b.Call("build")
	require.NoError(t, err)
	assert.Equal(t, []byte{1}, out)
}

func TestLookup(t *testing.T) {
	s := builtin(t)
	for _, name := range []string{"McpBeginEx", "mcp::stream::McpBeginEx", "::mcp::stream::McpBeginEx"} {
		typ, ok := s.Lookup(name)
		require.True(t, ok, name)
		assert.IsType(t, &idl.Union{}, typ)
		assert.Equal(t, "McpBeginEx", typ.TypeName())
	}
	typ, ok := s.Lookup("McpElicitAction")
	require.True(t, ok)
	assert.IsType(t, &idl.Enum{}, typ)
	_, ok = s.Lookup("stream::McpBeginEx")
	assert.False(t, ok, "qualified names start at the root")
	_, ok = s.Lookup("int32")
	assert.False(t, ok)
	assert.Contains(t, s.Types(), "http::stream::HttpBeginEx")
	assert.Contains(t, s.Types(), "core::stream::Begin")
}

func TestNewSchemaUnchecked(t *testing.T) {
	f, err := idl.Parse("x.idl", []byte(`scope x { struct S { T t; } struct T { int8 a; } }`))
	require.NoError(t, err)
	_, err = dynamic.NewSchema(f)
	assert.ErrorContains(t, err, "unresolved: check the files with idl.Check first")
}

// TestSchemaAcrossFiles builds a type whose parent is declared in a file
// not given to NewSchema (checked together with it).
func TestSchemaAcrossFiles(t *testing.T) {
	files, err := idl.Builtin()
	require.NoError(t, err)
	s, err := dynamic.NewSchema(files[2]) // mcp.idl alone; core.idl holds Extension
	require.NoError(t, err)
	got, err := build(t, s, "McpAbortEx", `typeId(3).reason("r").build()`)
	require.NoError(t, err)
	assert.Equal(t, generated(t, func(b *mcp.McpAbortExBuilder) { b.TypeID(3).Reason("r") }), got)
}

func TestChainReturns(t *testing.T) {
	s := builtin(t)
	b, err := s.NewBuilder("McpBeginEx")
	require.NoError(t, err)
	self, err := b.Call("typeId", 3)
	require.NoError(t, err)
	assert.Same(t, b, self, "a setter returns its builder")
	child, err := b.Call("toolsCall")
	require.NoError(t, err)
	cb := child.(*dynamic.Builder)
	assert.Equal(t, "McpBeginEx.toolsCall", cb.Path())
	assert.Same(t, b, cb.Root())
	assert.Equal(t, "McpToolsCallBeginEx", cb.Type().TypeName())
	_, err = cb.Call("sessionId", "s")
	require.NoError(t, err)
	_, err = cb.Call("name", "n")
	require.NoError(t, err)
	assert.Equal(t, `McpBeginEx{typeId: 3, kind: toolsCall, toolsCall: {sessionId: "s", name: "n"}}`, b.String())
	assert.Equal(t, `{sessionId: "s", name: "n"}`, cb.String())
	parent, err := cb.Call("build")
	require.NoError(t, err)
	assert.Same(t, b, parent)
	fromChild, err := cb.Bytes()
	require.NoError(t, err)
	out, err := b.Call("build")
	require.NoError(t, err)
	assert.Equal(t, fromChild, out, "Bytes of a nested builder encodes the whole chain")

	again, err := b.Call("toolsCall")
	require.NoError(t, err)
	_, err = again.(*dynamic.Builder).Call("name", "m")
	require.NoError(t, err)
	out2, err := b.Bytes()
	require.NoError(t, err)
	assert.Equal(t, generated(t, func(g *mcp.McpBeginExBuilder) { g.TypeID(3).ToolsCall().SessionID("s").Name("m") }), out2,
		"selecting the same case again keeps its fields")

	_, err = b.Call("toolsList")
	require.NoError(t, err)
	_, err = b.Bytes()
	assert.ErrorContains(t, err, "McpBeginEx.toolsList.sessionId: required field", "another case starts afresh")
}

func TestEncodeFromMap(t *testing.T) {
	s := builtin(t)
	got, err := s.Encode("McpBeginEx", map[string]any{
		"typeId": 3,
		"kind":   "toolsCall",
		"toolsCall": map[string]any{
			"sessionId": "s",
			"name":      []byte("n"),
		},
	})
	require.NoError(t, err)
	assert.Equal(t, generated(t, func(g *mcp.McpBeginExBuilder) { g.TypeID(3).ToolsCall().SessionID("s").Name("n") }), got)

	got, err = s.Encode("HttpBeginEx", map[string]any{
		"typeId":  1,
		"headers": []any{map[string]any{"name": ":method", "value": "GET"}},
	})
	require.NoError(t, err)
	assert.Equal(t, generated(t, func(g *http.HttpBeginExBuilder) { g.TypeID(1).Headers().Item().Name(":method").Value("GET") }), got)

	_, err = s.Encode("HttpBeginEx", map[string]any{"typeId": 1, "header": 1})
	assert.ErrorIs(t, err, dynamic.ErrUnknownMethod)
	_, err = s.Encode("McpBeginEx", map[string]any{"typeId": 1, "kind": "nope"})
	assert.ErrorIs(t, err, dynamic.ErrMissing)
	_, err = s.Encode("HttpBeginEx", map[string]any{"typeId": 1, "headers": "x"})
	assert.ErrorIs(t, err, dynamic.ErrArgs)
}

func TestErrorUnwrap(t *testing.T) {
	s := builtin(t)
	_, err := s.Decode("McpBeginEx", []byte{1, 2, 3})
	assert.ErrorIs(t, err, dynamic.ErrMalformed)
	assert.ErrorIs(t, err, flyweight.ErrShort)
	assert.False(t, errors.Is(err, dynamic.ErrMismatch))
}

// TestConcurrentUse shares one schema between goroutines, each with its own
// builders and matchers; run with -race.
func TestConcurrentUse(t *testing.T) {
	s := builtin(t)
	want, err := build(t, s, "McpBeginEx", `typeId(3).toolsCall().sessionId("s").name("n").build().build()`)
	require.NoError(t, err)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			for range 50 {
				b, err := s.NewBuilder("McpBeginEx")
				if err == nil {
					_, err = chain(t, b, `typeId(3).toolsCall().sessionId("s").name("n").build()`)
				}
				var got []byte
				if err == nil {
					got, err = b.Bytes()
				}
				if err == nil && !bytes.Equal(got, want) {
					err = fmt.Errorf("got %x", got)
				}
				if err == nil {
					_, err = s.Decode("McpBeginEx", got)
				}
				if err != nil {
					errs <- err
					return
				}
				_ = s.Format("HttpBeginEx", got)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestBigIntArguments(t *testing.T) {
	s := fixtureSchema(t)
	max := new(big.Int).SetUint64(math.MaxUint64)
	b, err := s.NewBuilder("NetChoice")
	require.NoError(t, err)
	_, err = b.Call("big", max)
	require.NoError(t, err)
	got, err := b.Bytes()
	require.NoError(t, err)
	assert.Equal(t, generated(t, func(g *fixture.NetChoiceBuilder) { g.Big(math.MaxUint64) }), got)

	_, err = b.Call("big", big.NewInt(-1))
	assert.EqualError(t, err, "NetChoice.big: -1 out of range (uint64 is 0..18446744073709551615)")
	_, err = b.Call("big", new(big.Int).Add(max, big.NewInt(1)))
	assert.EqualError(t, err, "NetChoice.big: 18446744073709551616 out of range (uint64 is 0..18446744073709551615)")
	_, err = b.Call("big", 1.5)
	assert.EqualError(t, err, "NetChoice.big: wrong argument float64 1.5: want an integer")
}
