package server_test

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/frame"
	"github.com/sluicehq/sluice/internal/enginetest"
)

// The legacy shim (shim.go): a 2025-era session's call that the
// application answers with input_required is fulfilled by the server.

// shimState is a requestState with escapes, which the retry must carry
// byte for byte.
const shimState = `"st\u00e9:\"a\/b==\n"`

// sse is the text of one event of the tools/call's stream (request id 42).
func sse(n int, data string) string {
	return "event: message\nid: 42:" + string(rune('0'+n)) + "\ndata: " + data + "\n\n"
}

// startCall starts the tools/call (id 42) of session-1 and waits until
// its response shows want.
func startCall(t *testing.T, h *harness, body, want string) {
	t.Helper()
	h.req.set(t, benchHeaders, body)
	h.req.left = 1
	h.w.Dispatch(h.req.startFn)
	until(t, h, "the response shows "+want, func() bool { return strings.Contains(string(h.req.response), want) })
}

// answer POSTs the client's answer (a JSON-RPC response) and checks it is
// taken with 202.
func answer(t *testing.T, h *harness, msg string) {
	t.Helper()
	a := h.send(t, benchHeaders, msg, "the answer's response")
	require.Equal(t, "202", string(a.status), string(a.response))
}

// calls returns the params of the requests the application got.
func calls(t *testing.T, h *harness) []string {
	var out []string
	require.NoError(t, h.e.Execute(0, func(*engine.Worker) { out = append(out, h.app.calls...) }))
	return out
}

// TestShimOneRound: an elicitation in an input_required result reaches the
// client as a request of the server's on the call's stream; its answer
// makes the retry, whose params are the client's plus inputResponses and
// the requestState byte for byte, and the retry's complete result reaches
// the client under the call's id. The application never hears of the
// client's answer as an answer.
func TestShimOneRound(t *testing.T) {
	h := newHarness(t)
	initSession(t, h, `{"elicitation":{}}`)
	h.app.record = []byte{}
	h.app.calls = []string{}
	h.app.results = [][]byte{
		[]byte(`{"content":[],"inputRequests":{"confirm":{"method":"elicitation/create","params":{"mode":"form","message":"Sure?","requestedSchema":{"type":"object"}}}},"requestState":` + shimState + `,"resultType":"input_required"}`),
		[]byte(`{"content":[{"type":"text","text":"done"}],"resultType":"complete"}`),
	}
	startCall(t, h, benchBody, `"s2c-1"`)
	answer(t, h, `{"jsonrpc":"2.0","id":"s2c-1","result":{"action":"accept","content":{"ok":true}}}`)
	enginetest.ReceiveBy(t, h.timer, h.req.done, "the tools/call's response")
	assert.Equal(t, "200", string(h.req.status))
	assert.Equal(t, "id: 42:0\ndata: \n\n"+
		sse(1, `{"jsonrpc":"2.0","id":"s2c-1","method":"elicitation/create","params":{"mode":"form","message":"Sure?","requestedSchema":{"type":"object"},"_meta":{"progressToken":"s2c-1"}}}`)+
		sse(2, `{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"done"}]}}`),
		string(h.req.response))
	assert.Equal(t, []string{
		`{"name":"echo","arguments":{"message":"hi"}}`,
		`{"name":"echo","arguments":{"message":"hi"},"inputResponses":{"confirm":{"action":"accept","content":{"ok":true}}},"requestState":` + shimState + `}`,
	}, calls(t, h))
	assert.Empty(t, answers(t, h), "the shim keeps the client's answers")
	// Both calls are tools/call echo of session-1.
	var names []string
	require.NoError(t, h.e.Execute(0, func(*engine.Worker) {
		for _, b := range h.app.begins {
			var ex mcp.McpBeginEx
			if ex.TryWrap(b, 0, len(b)) && ex.Kind() == mcp.McpBeginExKindToolsCall {
				c := ex.ToolsCall()
				names = append(names, c.SessionIDString()+"/"+c.NameString())
			}
		}
	}))
	assert.Equal(t, []string{"session-1/echo", "session-1/echo"}, names)
	assert.Equal(t, int64(1), enginetest.Metric(h.e, "net0", "elicitation.requests"))
}

// TestShimTwoRoundsAllKinds: a round of elicitation, sampling and roots,
// answered out of order, then a round that asks again with inputResponses
// the client's params carried (they are replaced) and no requestState; a
// third answer completes. Each retry has only its own round's answers.
func TestShimTwoRoundsAllKinds(t *testing.T) {
	h := newHarness(t)
	initSession(t, h, `{"elicitation":{},"sampling":{},"roots":{}}`)
	h.app.calls = []string{}
	h.app.results = [][]byte{
		[]byte(`{"resultType":"input_required","inputRequests":{` +
			`"e":{"method":"elicitation/create","params":{"message":"Name?","requestedSchema":{"type":"object"}}},` +
			`"s":{"method":"sampling/createMessage","params":{"messages":[],"maxTokens":5}},` +
			`"r":{"method":"roots/list"}},"requestState":"one"}`),
		[]byte(`{"inputRequests":{"again":{"method":"elicitation/create","params":{"message":"Really?"}}},"resultType":"input_required"}`),
		[]byte(`{"content":[{"type":"text","text":"ok"}]}`),
	}
	body := `{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"echo","inputResponses":{"stale":1},"arguments":{}}}`
	startCall(t, h, body, `"s2c-3"`)
	answer(t, h, `{"jsonrpc":"2.0","id":"s2c-3","result":{"roots":[{"uri":"file:///w"}]}}`)
	answer(t, h, `{"jsonrpc":"2.0","id":"s2c-1","result":{"action":"decline"}}`)
	answer(t, h, `{"jsonrpc":"2.0","id":"s2c-2","result":{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"}}`)
	until(t, h, "the second round", func() bool { return strings.Contains(string(h.req.response), `"s2c-4"`) })
	answer(t, h, `{"jsonrpc":"2.0","id":"s2c-4","result":{"action":"cancel"}}`)
	enginetest.ReceiveBy(t, h.timer, h.req.done, "the tools/call's response")
	assert.Equal(t, "id: 42:0\ndata: \n\n"+
		sse(1, `{"jsonrpc":"2.0","id":"s2c-1","method":"elicitation/create","params":{"message":"Name?","requestedSchema":{"type":"object"},"_meta":{"progressToken":"s2c-1"}}}`)+
		sse(2, `{"jsonrpc":"2.0","id":"s2c-2","method":"sampling/createMessage","params":{"messages":[],"maxTokens":5,"_meta":{"progressToken":"s2c-2"}}}`)+
		sse(3, `{"jsonrpc":"2.0","id":"s2c-3","method":"roots/list","params":{"_meta":{"progressToken":"s2c-3"}}}`)+
		sse(4, `{"jsonrpc":"2.0","id":"s2c-4","method":"elicitation/create","params":{"message":"Really?","_meta":{"progressToken":"s2c-4"}}}`)+
		sse(5, `{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"ok"}]}}`),
		string(h.req.response))
	assert.Equal(t, []string{
		`{"name":"echo","inputResponses":{"stale":1},"arguments":{}}`,
		`{"name":"echo","arguments":{},"inputResponses":{"e":{"action":"decline"},"s":{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"},"r":{"roots":[{"uri":"file:///w"}]}},"requestState":"one"}`,
		`{"name":"echo","arguments":{},"inputResponses":{"again":{"action":"cancel"}}}`,
	}, calls(t, h))
	assert.Equal(t, int64(1), enginetest.Metric(h.e, "net0", "sampling.requests"))
	assert.Equal(t, int64(1), enginetest.Metric(h.e, "net0", "roots.requests"))
	assert.Equal(t, int64(2), enginetest.Metric(h.e, "net0", "elicitation.requests"))
}

// TestShimRequestStateOnly: a result with requestState alone (the
// upstream shedding load) is asked again at once, with nothing sent to
// the client, and the answer is a plain JSON response.
func TestShimRequestStateOnly(t *testing.T) {
	h := newHarness(t)
	initSession(t, h, `{}`)
	h.app.calls = []string{}
	h.app.results = [][]byte{
		[]byte(`{"resultType":"input_required","requestState":` + shimState + `}`),
		[]byte(`{"content":[{"type":"text","text":"later"}]}`),
	}
	h.req.set(t, benchHeaders, benchBody)
	h.request(t)
	assert.Equal(t, "200", string(h.req.status))
	assert.Equal(t, `{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"later"}]}}`, string(h.req.response))
	assert.Equal(t, []string{
		`{"name":"echo","arguments":{"message":"hi"}}`,
		`{"name":"echo","arguments":{"message":"hi"},"requestState":` + shimState + `}`,
	}, calls(t, h))
}

// TestShimCapabilityMissing: a round that needs what the client did not
// declare sends the client nothing: a tools/call ends with an isError
// result, a prompts/get with a JSON-RPC error.
func TestShimCapabilityMissing(t *testing.T) {
	ir := []byte(`{"resultType":"input_required","inputRequests":{"e":{"method":"elicitation/create","params":{"message":"x"}},"s":{"method":"sampling/createMessage","params":{"messages":[]}}}}`)
	t.Run("tools/call", func(t *testing.T) {
		h := newHarness(t)
		initSession(t, h, `{"elicitation":{}}`)
		h.app.calls = []string{}
		h.app.results = [][]byte{ir}
		h.req.set(t, benchHeaders, benchBody)
		h.request(t)
		assert.Equal(t, `{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"The upstream needs the client's sampling capability for sampling/createMessage, which the client did not declare"}],"isError":true}}`,
			string(h.req.response))
		assert.Len(t, calls(t, h), 1, "no retry")
		assert.Equal(t, int64(0), enginetest.Metric(h.e, "net0", "elicitation.requests"))
	})
	t.Run("prompts/get", func(t *testing.T) {
		h := newHarness(t)
		initSession(t, h, `{"sampling":{}}`)
		h.app.results = [][]byte{ir}
		h.req.set(t, benchHeaders, `{"jsonrpc":"2.0","id":42,"method":"prompts/get","params":{"name":"p"}}`)
		h.request(t)
		assert.Equal(t, `{"jsonrpc":"2.0","id":42,"error":{"code":-32603,"message":"The upstream needs the client's elicitation capability for elicitation/create, which the client did not declare"}}`,
			string(h.req.response))
	})
}

// TestShimRoundCap: past inputRequired.maxRounds input_required results
// the call ends with the cap named.
func TestShimRoundCap(t *testing.T) {
	h := newHarnessWith(t, "\ninputRequired: {maxRounds: 2}", nil)
	initSession(t, h, `{}`)
	h.app.calls = []string{}
	shed := []byte(`{"resultType":"input_required","requestState":"again"}`)
	h.app.results = [][]byte{shed, shed, shed, []byte(`{"content":[]}`)}
	h.req.set(t, benchHeaders, benchBody)
	h.request(t)
	assert.Equal(t, `{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"input_required rounds exceeded: the upstream asked for input more than 2 times in one call (inputRequired.maxRounds)"}],"isError":true}}`,
		string(h.req.response))
	assert.Len(t, calls(t, h), 3, "the call and two retries")
}

// TestShimLegTimeout: a request of the shim the client does not answer
// within inputRequired.roundTimeout is cancelled toward the client, and
// the call fails; the timer is the engine's clock, moved by the test.
func TestShimLegTimeout(t *testing.T) {
	clock := enginetest.NewClock()
	h := newHarnessWith(t, "\ninputRequired: {roundTimeout: PT30S}", clock)
	initSession(t, h, `{"roots":{}}`)
	h.app.calls = []string{}
	h.app.results = [][]byte{[]byte(`{"resultType":"input_required","inputRequests":{"r":{"method":"roots/list"}}}`)}
	startCall(t, h, `{"jsonrpc":"2.0","id":42,"method":"resources/read","params":{"uri":"file:///a"}}`, `"s2c-1"`)
	clock.Tick(t, h.e, 29*time.Second)
	enginetest.Settle(t, h.e)
	assert.NotContains(t, string(h.req.response), "notifications/cancelled", "not before the round timeout")
	clock.Tick(t, h.e, time.Second)
	enginetest.ReceiveBy(t, h.timer, h.req.done, "the resources/read's response")
	assert.Equal(t, "id: 42:0\ndata: \n\n"+
		sse(1, `{"jsonrpc":"2.0","id":"s2c-1","method":"roots/list","params":{"_meta":{"progressToken":"s2c-1"}}}`)+
		sse(2, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"s2c-1","reason":"timeout"}}`)+
		sse(3, `{"jsonrpc":"2.0","id":42,"error":{"code":-32001,"message":"Request timed out: the client did not answer roots/list within inputRequired.roundTimeout"}}`),
		string(h.req.response))
	assert.Len(t, calls(t, h), 1, "no retry")
	assert.Equal(t, int64(1), enginetest.Metric(h.e, "net0", "roots.timeout"))
}

// TestShimLegProgress: a request of the shim carries its own id as
// _meta.progressToken (replacing one the upstream wrote, keeping the rest
// of its _meta), and the client's notifications/progress on that token
// restarts the request's inputRequired.roundTimeout; progress on any
// other token does not.
func TestShimLegProgress(t *testing.T) {
	clock := enginetest.NewClock()
	h := newHarnessWith(t, "\ninputRequired: {roundTimeout: PT30S}", clock)
	initSession(t, h, `{"roots":{}}`)
	h.app.calls = []string{}
	h.app.results = [][]byte{[]byte(`{"resultType":"input_required","inputRequests":{"r":{"method":"roots/list","params":{"_meta":{"progressToken":7,"x":1}}}}}`)}
	startCall(t, h, `{"jsonrpc":"2.0","id":42,"method":"resources/read","params":{"uri":"file:///a"}}`, `"s2c-1"`)
	clock.Tick(t, h.e, 20*time.Second)
	// notifications get 202, as answers do
	answer(t, h, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"s2c-1","progress":1}}`)
	clock.Tick(t, h.e, 29*time.Second)
	enginetest.Settle(t, h.e)
	assert.NotContains(t, string(h.req.response), "notifications/cancelled", "the progress restarted the timeout")
	answer(t, h, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"s2c-9","progress":2}}`)
	answer(t, h, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":2}}`)
	clock.Tick(t, h.e, time.Second)
	enginetest.ReceiveBy(t, h.timer, h.req.done, "the resources/read's response")
	assert.Equal(t, "id: 42:0\ndata: \n\n"+
		sse(1, `{"jsonrpc":"2.0","id":"s2c-1","method":"roots/list","params":{"_meta":{"progressToken":"s2c-1","x":1}}}`)+
		sse(2, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"s2c-1","reason":"timeout"}}`)+
		sse(3, `{"jsonrpc":"2.0","id":42,"error":{"code":-32001,"message":"Request timed out: the client did not answer roots/list within inputRequired.roundTimeout"}}`),
		string(h.req.response))
	assert.Len(t, calls(t, h), 1, "no retry")
}

// TestShimClientError: a client that answers a request of the shim with
// an error fails the call; its other requests are cancelled.
func TestShimClientError(t *testing.T) {
	h := newHarness(t)
	initSession(t, h, `{"elicitation":{},"roots":{}}`)
	h.app.calls = []string{}
	h.app.results = [][]byte{[]byte(`{"resultType":"input_required","inputRequests":{"r":{"method":"roots/list"},"e":{"method":"elicitation/create","params":{"message":"?"}}}}`)}
	startCall(t, h, benchBody, `"s2c-2"`)
	answer(t, h, `{"jsonrpc":"2.0","id":"s2c-1","error":{"code":-32601,"message":"no roots here"}}`)
	enginetest.ReceiveBy(t, h.timer, h.req.done, "the tools/call's response")
	assert.Equal(t, "id: 42:0\ndata: \n\n"+
		sse(1, `{"jsonrpc":"2.0","id":"s2c-1","method":"roots/list","params":{"_meta":{"progressToken":"s2c-1"}}}`)+
		sse(2, `{"jsonrpc":"2.0","id":"s2c-2","method":"elicitation/create","params":{"message":"?","_meta":{"progressToken":"s2c-2"}}}`)+
		sse(3, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"s2c-2","reason":"The request that asked it ended"}}`)+
		sse(4, `{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"The client answered roots/list with an error: no roots here"}],"isError":true}}`),
		string(h.req.response))
	assert.Len(t, calls(t, h), 1)
}

// TestShimURLElicitation: a URL-mode elicitation without an elicitationId
// gets one (random, 32 hex digits) before it reaches the client; one with
// an id keeps it.
func TestShimURLElicitation(t *testing.T) {
	h := newHarness(t)
	initSession(t, h, `{"elicitation":{"url":{}}}`)
	h.app.calls = []string{}
	h.app.results = [][]byte{
		[]byte(`{"resultType":"input_required","inputRequests":{` +
			`"a":{"method":"elicitation/create","params":{"mode":"url","url":"https://x.example/a","message":"A"}},` +
			`"b":{"method":"elicitation/create","params":{"mode":"url","elicitationId":"given","url":"https://x.example/b","message":"B"}}}}`),
		[]byte(`{"content":[]}`),
	}
	startCall(t, h, benchBody, `"s2c-2"`)
	got := string(h.req.response)
	assert.Regexp(t, regexp.MustCompile(`"id":"s2c-1","method":"elicitation/create","params":\{"elicitationId":"[0-9a-f]{32}","mode":"url","url":"https://x.example/a","message":"A","_meta":\{"progressToken":"s2c-1"\}\}`), got)
	assert.Contains(t, got, `"id":"s2c-2","method":"elicitation/create","params":{"mode":"url","elicitationId":"given","url":"https://x.example/b","message":"B","_meta":{"progressToken":"s2c-2"}}}`)
	answer(t, h, `{"jsonrpc":"2.0","id":"s2c-1","result":{"action":"accept"}}`)
	answer(t, h, `{"jsonrpc":"2.0","id":"s2c-2","result":{"action":"decline"}}`)
	enginetest.ReceiveBy(t, h.timer, h.req.done, "the tools/call's response")
	c := calls(t, h)
	require.Len(t, c, 2)
	assert.Equal(t, `{"name":"echo","arguments":{"message":"hi"},"inputResponses":{"a":{"action":"accept"},"b":{"action":"decline"}}}`, c[1])
}

// TestShimURLRequired: a URL-mode elicitation in an input_required result
// toward a client that takes elicitation but not its URL mode ends the
// call the 2025-era way, -32042 with the elicitation (given an id) in
// MCP's data shape, and nothing is asked of the client.
func TestShimURLRequired(t *testing.T) {
	h := newHarness(t)
	initSession(t, h, `{"elicitation":{}}`)
	h.app.calls = []string{}
	h.app.results = [][]byte{[]byte(`{"resultType":"input_required","inputRequests":{` +
		`"a":{"method":"elicitation/create","params":{"mode":"url","url":"https://x.example/a","message":"A"}}},"requestState":"s"}`)}
	h.req.set(t, benchHeaders, benchBody)
	h.request(t)
	assert.Regexp(t, regexp.MustCompile(`^\{"jsonrpc":"2.0","id":42,"error":\{"code":-32042,"message":"URL elicitation required","data":`+
		`\{"elicitations":\[\{"elicitationId":"[0-9a-f]{32}","mode":"url","url":"https://x.example/a","message":"A"\}\]\}\}\}$`),
		string(h.req.response))
	assert.Len(t, calls(t, h), 1, "no retry")
	assert.Equal(t, int64(0), enginetest.Metric(h.e, "net0", "elicitation.requests"))
}

// TestShimMalformed: an input_required result the shim cannot act on is
// the upstream's bug: a JSON-RPC error, even for a tools/call.
func TestShimMalformed(t *testing.T) {
	for _, res := range []string{
		`{"resultType":"input_required"}`,
		`{"resultType":"input_required","inputRequests":{"x":{"method":"tools/call"}}}`,
		`{"resultType":"input_required","inputRequests":[]}`,
		`{"resultType":"input_required","requestState":7}`,
		`{"resultType":"input_required","inputRequests":{"e":{"method":"elicitation/create","params":{"mode":"form","mode":"url"}}}}`,
		`{"resultType":"input_required","inputRequests":{"e":{"method":"elicitation/create","params":{"mode":"sms"}}}}`,
		`{"resultType":"input_required","inputRequests":{"e":{"method":"roots/list"},"\u0065":{"method":"roots/list"}}}`,
		`{"resultType":"input_required","inputRequests":{"e":{"method":"roots/list"}},"requestState":"a","requestState":"b"}`,
		`{"resultType":"input_required","inputRequests":{"e":{"method":"roots/list"}},"inputRequests":{}}`,
	} {
		h := newHarness(t)
		initSession(t, h, `{"elicitation":{}}`)
		h.app.results = [][]byte{[]byte(res)}
		h.req.set(t, benchHeaders, benchBody)
		h.request(t)
		assert.Contains(t, string(h.req.response), `"error":{"code":-32603,"message":"Internal error: the upstream's input_required result is malformed: `, res)
	}
}

// TestShimCancelled: the client's notifications/cancelled for the call
// cancels the shim's requests to it, and the call ends with no answer;
// the application hears nothing more.
func TestShimCancelled(t *testing.T) {
	h := newHarness(t)
	initSession(t, h, `{"elicitation":{}}`)
	h.app.calls = []string{}
	h.app.results = [][]byte{[]byte(`{"resultType":"input_required","inputRequests":{"e":{"method":"elicitation/create","params":{"message":"?"}}}}`)}
	startCall(t, h, benchBody, `"s2c-1"`)
	answer(t, h, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":42}}`)
	enginetest.ReceiveBy(t, h.timer, h.req.done, "the tools/call's response")
	assert.Equal(t, "id: 42:0\ndata: \n\n"+
		sse(1, `{"jsonrpc":"2.0","id":"s2c-1","method":"elicitation/create","params":{"message":"?","_meta":{"progressToken":"s2c-1"}}}`)+
		sse(2, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"s2c-1","reason":"The request that asked it ended"}}`),
		string(h.req.response))
	late := h.send(t, benchHeaders, `{"jsonrpc":"2.0","id":"s2c-1","result":{"action":"accept"}}`, "the late answer's response")
	assert.Equal(t, "202", string(late.status), "a late answer to a cancelled request is taken and dropped")
	enginetest.Settle(t, h.e)
	assert.Len(t, calls(t, h), 1)
}

// TestShimCompleteUntouched: a complete result reaches a 2025-era
// session without its 2026-07-28 resultType, and a 2026-07-28 request's
// input_required passes as it is.
func TestShimCompleteUntouched(t *testing.T) {
	h := newHarness(t)
	initSession(t, h, `{"elicitation":{}}`)
	h.app.results = [][]byte{[]byte(`{"content":[],"resultType":"complete"}`)}
	h.req.set(t, benchHeaders, benchBody)
	h.request(t)
	assert.Equal(t, `{"jsonrpc":"2.0","id":42,"result":{"content":[]}}`, string(h.req.response))

	ir := `{"resultType":"input_required","inputRequests":{"e":{"method":"elicitation/create","params":{"message":"?"}}},"requestState":"s"}`
	h.app.results = [][]byte{[]byte(ir)}
	h.req.set(t, [][2]string{
		{":scheme", "http"}, {":method", "POST"}, {":path", "/mcp"}, {":authority", "localhost:8080"},
		{"content-type", "application/json"}, {"accept", "application/json, text/event-stream"},
		{"mcp-protocol-version", "2026-07-28"}, {"mcp-method", "tools/call"}, {"mcp-name", "echo"},
	}, `{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	h.request(t)
	assert.Contains(t, string(h.req.response), `"resultType":"input_required","inputRequests":{"e":{"method":"elicitation/create","params":{"message":"?"}}},"requestState":"s"}}`)
}

// leave is the client going away from its response: a RESET of the reply.
func (r *httpRequest) leave() {
	var b frame.ResetBuilder
	n, _ := b.Wrap(r.buf, 0, len(r.buf)).OriginID(r.origin).RoutedID(r.routed).StreamID(r.replyID).
		Sequence(r.inSeq).Acknowledge(r.inSeq).Maximum(65536).TraceID(0).Authorization(0).BuildLimit()
	_ = r.w.Send(frame.FrameReset, r.buf[:n])
}

// resume opens session-1's GET stream with Last-Event-ID last (none when
// empty), a driver that grants its response no credit when stalled.
func resume(t *testing.T, h *harness, last string, stalled bool) *httpRequest {
	t.Helper()
	get := h.second()
	headers := [][2]string{
		{":scheme", "http"}, {":method", "GET"}, {":path", "/mcp"}, {":authority", "localhost:8080"},
		{"accept", "text/event-stream"}, {"mcp-session-id", "session-1"}, {"mcp-protocol-version", "2025-11-25"},
	}
	if last != "" {
		headers = append(headers, [2]string{"last-event-id", last})
	}
	get.set(t, headers, "")
	if stalled {
		get.stall, get.all = true, []byte{}
	}
	get.left = 1
	h.w.Dispatch(get.startFn)
	return get
}

// TestShimClientLeft: a client that leaves the call's event stream while
// the shim waits for its answer has not cancelled the call (MCP.md §1.1):
// its answer, POSTed later, still makes the retry, and the final result
// is kept for the client to resume with Last-Event-ID.
func TestShimClientLeft(t *testing.T) {
	h := newHarness(t)
	initSession(t, h, `{"elicitation":{}}`)
	h.app.calls = []string{}
	h.app.results = [][]byte{
		[]byte(`{"resultType":"input_required","inputRequests":{"e":{"method":"elicitation/create","params":{"message":"?"}}},"requestState":"x"}`),
		[]byte(`{"content":[{"type":"text","text":"after all"}]}`),
	}
	startCall(t, h, benchBody, `"s2c-1"`)
	h.w.Dispatch(h.req.leave)
	enginetest.Settle(t, h.e)
	answer(t, h, `{"jsonrpc":"2.0","id":"s2c-1","result":{"action":"accept","content":{}}}`)
	until(t, h, "the retry", func() bool { return len(h.app.calls) == 2 })

	get := resume(t, h, "42:1", false)
	until(t, h, "the replayed result", func() bool {
		return strings.Contains(string(get.response), sse(2, `{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"after all"}]}}`))
	})
	assert.Equal(t, `{"name":"echo","arguments":{"message":"hi"},"inputResponses":{"e":{"action":"accept","content":{}}},"requestState":"x"}`, calls(t, h)[1])
}
