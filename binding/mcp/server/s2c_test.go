package server_test

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/internal/enginetest"
)

// clientRequestExt builds a FLUSH McpFlushEx.clientRequest.
func clientRequestExt(t testing.TB, typeID int32, id, method, params string) []byte {
	t.Helper()
	buf := make([]byte, 8192)
	var b mcp.McpFlushExBuilder
	cr := b.Wrap(buf, 0, len(buf)).TypeID(typeID).ClientRequest().ID(id).Method(method)
	if params != "" {
		cr.Params(params)
	}
	n, err := b.BuildLimit()
	require.NoError(t, err)
	return buf[:n]
}

// initSession initializes session-1 with the client capabilities caps.
func initSession(t testing.TB, h *harness, caps string) {
	t.Helper()
	h.req.set(t, postHeaders, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":`+caps+`}}`)
	h.request(t)
	require.Equal(t, "200", string(h.req.status))
	require.Equal(t, "session-1", string(h.req.session))
}

// second returns another HTTP request driver on h's worker, for a POST
// made while h.req's response is still open.
func (h *harness) second() *httpRequest {
	r := *h.req
	r2 := &r
	r2.done = make(chan struct{}, 1)
	r2.buf = make([]byte, 64<<10)
	r2.onFrame = r2.handle
	r2.startFn = r2.start
	return r2
}

// send sends body with headers as another request while h.req's response
// is still open, and waits for its response (what names it in a failure).
func (h *harness) send(t testing.TB, headers [][2]string, body, what string) *httpRequest {
	t.Helper()
	r := h.second()
	r.set(t, headers, body)
	r.left = 1
	h.w.Dispatch(r.startFn)
	enginetest.ReceiveBy(t, h.timer, r.done, what)
	return r
}

// heldCall initializes session-1 with the client capabilities caps and
// starts a tools/call whose application sends the client one request (id,
// method, params) and holds its own reply; it returns once the request
// has reached the client as s2c-1.
func heldCall(t *testing.T, h *harness, caps, id, method, params string) {
	t.Helper()
	initSession(t, h, caps)
	h.app.record = []byte{}
	h.app.clientReqs = [][]byte{clientRequestExt(t, h.app.mcpType, id, method, params)}
	h.app.hold = true
	startCall(t, h, benchBody, `"s2c-1"`)
}

// until runs cond on the worker until it holds, letting the engine pass
// frames between tries.
func until(t testing.TB, h *harness, what string, cond func() bool) {
	t.Helper()
	for range 1000 {
		ok := false
		require.NoError(t, h.e.Execute(0, func(*engine.Worker) { ok = cond() }))
		if ok {
			return
		}
		enginetest.Settle(t, h.e)
	}
	t.Fatalf("never: %s", what)
}

// answers returns the clientResponse BEGINs the application received.
func answers(t *testing.T, h *harness) []mcp.McpClientResponseBeginEx {
	var out []mcp.McpClientResponseBeginEx
	require.NoError(t, h.e.Execute(0, func(*engine.Worker) {
		for _, b := range h.app.begins {
			var ex mcp.McpBeginEx
			if ex.TryWrap(b, 0, len(b)) && ex.Kind() == mcp.McpBeginExKindClientResponse {
				out = append(out, ex.ClientResponse())
			}
		}
	}))
	return out
}

// TestClientRequestAnswered: an elicitation on a tools/call's reply
// reaches the client on the response's event stream under the server's
// id; the client's answer reaches the application under the
// application's id, and the metrics count it.
func TestClientRequestAnswered(t *testing.T) {
	h := newHarness(t)
	heldCall(t, h, `{"elicitation":{}}`, "7", "elicitation/create", `{"message":"Name?"}`)

	answer := h.send(t, benchHeaders, `{"jsonrpc":"2.0","id":"s2c-1","result":{"action":"accept","content":{"name":"Ada"}}}`, "the answer's response")
	assert.Equal(t, "202", string(answer.status))
	enginetest.ReceiveBy(t, h.timer, h.req.done, "the tools/call's response")
	assert.Equal(t, "200", string(h.req.status))
	assert.Equal(t, "id: 42:0\ndata: \n\n"+
		"event: message\nid: 42:1\ndata: "+`{"jsonrpc":"2.0","id":"s2c-1","method":"elicitation/create","params":{"message":"Name?"}}`+"\n\n"+
		"event: message\nid: 42:2\ndata: "+`{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"Echo: hi"}]}}`+"\n\n",
		string(h.req.response))

	got := answers(t, h)
	require.Len(t, got, 1)
	assert.Equal(t, "session-1", got[0].SessionIDString())
	assert.Equal(t, "7", got[0].IDString())
	assert.Equal(t, uint8(0), got[0].Error())
	assert.Equal(t, int32(len(`{"action":"accept","content":{"name":"Ada"}}`)), got[0].ContentLength())
	until(t, h, "the answer's DATA reaches the application", func() bool {
		return strings.HasSuffix(string(h.app.record), `{"action":"accept","content":{"name":"Ada"}}`)
	})

	assert.Equal(t, int64(1), enginetest.Metric(h.e, "net0", "elicitation.requests"))
	assert.Equal(t, int64(1), enginetest.Metric(h.e, "net0", "elicitation.completed"))
	assert.Equal(t, int64(0), enginetest.Metric(h.e, "net0", "elicitation.timeout"))

	// The same id again is stale: refused, and nothing more reaches the
	// application.
	stale := h.send(t, benchHeaders, `{"jsonrpc":"2.0","id":"s2c-1","result":{"action":"accept","content":{}}}`, "the stale answer's response")
	assert.Equal(t, "400", string(stale.status))
	assert.Contains(t, string(stale.response), `"code":-32600`)
	assert.Len(t, answers(t, h), 1)
}

// TestClientRequestBound: past 64 outstanding requests in a session the
// upstream is answered -32603 at once, and the client sees only 64.
func TestClientRequestBound(t *testing.T) {
	h := newHarness(t)
	initSession(t, h, `{"roots":{}}`)
	h.app.record = []byte{}
	for i := range 65 {
		h.app.clientReqs = append(h.app.clientReqs, clientRequestExt(t, h.app.mcpType, fmt.Sprint(100+i), "roots/list", ""))
	}
	h.app.hold = true
	h.req.set(t, benchHeaders, benchBody)
	h.req.left = 1
	h.w.Dispatch(h.req.startFn)
	until(t, h, "the 65th request is refused", func() bool { return len(h.app.begins) >= 2 })
	got := answers(t, h)
	require.Len(t, got, 1)
	assert.Equal(t, "164", got[0].IDString())
	assert.Equal(t, uint8(1), got[0].Error())
	until(t, h, "the refusal's DATA reaches the application", func() bool {
		return strings.HasSuffix(string(h.app.record), `{"code":-32603,"message":"Internal error: too many requests outstanding"}`)
	})
	assert.Equal(t, int64(64), enginetest.Metric(h.e, "net0", "roots.requests"))
}

// TestClientRequestCapabilityMissing: a sampling request for a client
// that declared no sampling never reaches the client; the application
// gets -32601 under its own id, and the tools/call stays a JSON response.
func TestClientRequestCapabilityMissing(t *testing.T) {
	refused(t, `{"elicitation":{"url":{}}}`, `{"code":-32601,"message":"Method not found"}`,
		[3]string{`"a"`, "sampling/createMessage", `{"messages":[]}`},
		[3]string{`"b"`, "elicitation/create", `{"message":"form?"}`},
		[3]string{`"c"`, "tasks/get", `{}`})
}

// refused has the application send the requests reqs (id, method,
// params) to a client of a session with the capabilities caps during a
// tools/call, and checks that none reaches the client: the application
// gets the error want under each id, and the tools/call stays a JSON
// response.
func refused(t *testing.T, caps, want string, reqs ...[3]string) {
	t.Helper()
	h := newHarness(t)
	initSession(t, h, caps)
	h.app.record = []byte{}
	for _, r := range reqs {
		h.app.clientReqs = append(h.app.clientReqs, clientRequestExt(t, h.app.mcpType, r[0], r[1], r[2]))
	}
	h.req.set(t, benchHeaders, benchBody)
	h.request(t)
	assert.Equal(t, "200", string(h.req.status))
	assert.Equal(t, `{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"Echo: hi"}]}}`, string(h.req.response))
	until(t, h, "the refusals", func() bool { return len(h.app.begins) >= len(reqs)+1 })
	got := answers(t, h)
	require.Len(t, got, len(reqs))
	for i, r := range reqs {
		assert.Equal(t, r[0], got[i].IDString())
		assert.Equal(t, uint8(1), got[i].Error())
	}
	n := len(reqs) * len(want)
	until(t, h, "the refusals' DATA", func() bool { return len(h.app.record) >= n })
	assert.Equal(t, strings.Repeat(want, len(reqs)), string(h.app.record[len(h.app.record)-n:]))
}

// TestClientRequestInvalidParams: a request whose params are not an
// object, or name an elicitation's mode twice or as neither "form" nor
// "url", never reaches the client: which capability it needs has no one
// reading. The application gets -32602 under its own id.
func TestClientRequestInvalidParams(t *testing.T) {
	refused(t, `{"elicitation":{"form":{},"url":{}},"roots":{}}`, `{"code":-32602,"message":"Invalid params"}`,
		[3]string{`"a"`, "elicitation/create", `{"mode":"form","m\u006fde":"url","url":"https://x.example/"}`},
		[3]string{`"b"`, "elicitation/create", `{"mode":"sms","message":"?"}`},
		[3]string{`"c"`, "roots/list", `[1]`})
}

// TestClientRequestUpstreamCancelled: the upstream's notifications/cancelled
// for a request the client was sent reaches the client under the
// server's id, and nothing goes back to the application, nor from a
// late answer of the client.
func TestClientRequestUpstreamCancelled(t *testing.T) {
	h := newHarness(t)
	initSession(t, h, `{"elicitation":{}}`)
	h.app.record = []byte{}
	buf := make([]byte, 256)
	var b mcp.McpFlushExBuilder
	b.Wrap(buf, 0, len(buf)).TypeID(h.app.mcpType).Notification().
		Method("notifications/cancelled").Params(`{"requestId":7,"reason":"changed"}`)
	n, err := b.BuildLimit()
	require.NoError(t, err)
	h.app.clientReqs = [][]byte{clientRequestExt(t, h.app.mcpType, "7", "elicitation/create", `{"message":"Name?"}`), buf[:n]}
	h.req.set(t, benchHeaders, benchBody)
	h.request(t)
	assert.Equal(t, "id: 42:0\ndata: \n\n"+
		"event: message\nid: 42:1\ndata: "+`{"jsonrpc":"2.0","id":"s2c-1","method":"elicitation/create","params":{"message":"Name?"}}`+"\n\n"+
		"event: message\nid: 42:2\ndata: "+`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"s2c-1","reason":"changed"}}`+"\n\n"+
		"event: message\nid: 42:3\ndata: "+`{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"Echo: hi"}]}}`+"\n\n",
		string(h.req.response))
	enginetest.Settle(t, h.e)
	assert.Empty(t, answers(t, h))

	// The client's handler answered before it read the cancellation: its
	// answer is taken and dropped, once; the same id again is stale.
	for _, want := range []string{"202", "400"} {
		late := h.send(t, benchHeaders, `{"jsonrpc":"2.0","id":"s2c-1","result":{"action":"accept","content":{"name":"Ada"}}}`, "the late answer's response")
		assert.Equal(t, want, string(late.status))
	}
	enginetest.Settle(t, h.e)
	assert.Empty(t, answers(t, h), "a cancelled request's answer reaches no one")
}

// TestClientRequestSessionClosed: a session that ends (DELETE) with a
// request the client still owes answers the application -32603 for it.
func TestClientRequestSessionClosed(t *testing.T) {
	h := newHarness(t)
	heldCall(t, h, `{"sampling":{}}`, "9", "sampling/createMessage", `{"messages":[]}`)

	h.send(t, [][2]string{
		{":scheme", "http"}, {":method", "DELETE"}, {":path", "/mcp"}, {":authority", "localhost:8080"},
		{"mcp-session-id", "session-1"}, {"mcp-protocol-version", "2025-11-25"},
	}, "", "the DELETE's response")
	until(t, h, "the application hears the session closed", func() bool {
		return strings.HasSuffix(string(h.app.record), `{"code":-32603,"message":"Client session closed"}`)
	})
	got := answers(t, h)
	require.Len(t, got, 1)
	assert.Equal(t, "9", got[0].IDString())
	assert.Equal(t, uint8(1), got[0].Error())
	enginetest.ReceiveBy(t, h.timer, h.req.done, "the tools/call's response")
}

// BenchmarkClientRequestOutstanding measures the memory one outstanding
// server-to-client request holds: each round delivers 64 roots/list
// requests on one held tools/call and reports the heap allocated per
// request (the tools/call's own share included, so an upper bound).
//
//	go test ./binding/mcp/server -run '^$' -bench ClientRequestOutstanding -benchtime 20x
func BenchmarkClientRequestOutstanding(b *testing.B) {
	const n = 64
	var perRequest float64
	for b.Loop() {
		b.StopTimer()
		h := newHarness(b)
		initSession(b, h, `{"roots":{}}`)
		for i := range n {
			h.app.clientReqs = append(h.app.clientReqs, clientRequestExt(b, h.app.mcpType, fmt.Sprint(100+i), "roots/list", ""))
		}
		h.app.hold = true
		h.req.set(b, benchHeaders, benchBody)
		h.req.left = 1
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		b.StartTimer()
		h.w.Dispatch(h.req.startFn)
		until(b, h, "every request is outstanding", func() bool {
			return enginetest.Metric(h.e, "net0", "roots.requests") == n
		})
		b.StopTimer()
		runtime.ReadMemStats(&after)
		perRequest = float64(after.TotalAlloc-before.TotalAlloc) / n
		// Each pass's engine stops now rather than when the benchmark
		// ends, so that a fixed -benchtime=Nx does not keep N engines.
		enginetest.Stop(b, h.e)
		b.StartTimer()
	}
	b.ReportMetric(perRequest, "B/outstanding")
}

// TestClientRequestDuplicateAction: an elicitation answer that gives its
// action twice, which the server counts one way and the upstream could
// read another, is refused 400 -32600 and reaches no one; the request
// stays outstanding, and a proper answer then completes it.
func TestClientRequestDuplicateAction(t *testing.T) {
	h := newHarness(t)
	heldCall(t, h, `{"elicitation":{}}`, "7", "elicitation/create", `{"message":"Name?"}`)

	forged := h.send(t, benchHeaders, `{"jsonrpc":"2.0","id":"s2c-1","result":{"action":"decline","\u0061ction":"accept","content":{"name":"Ada"}}}`, "the forged answer's response")
	assert.Equal(t, "400", string(forged.status))
	assert.JSONEq(t, `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: duplicate member \"action\""},"id":null}`, string(forged.response))
	assert.Empty(t, answers(t, h))

	answer := h.send(t, benchHeaders, `{"jsonrpc":"2.0","id":"s2c-1","result":{"action":"accept","content":{"name":"Ada"}}}`, "the answer's response")
	assert.Equal(t, "202", string(answer.status))
	enginetest.ReceiveBy(t, h.timer, h.req.done, "the tools/call's response")
	assert.Equal(t, "200", string(h.req.status))
	assert.Len(t, answers(t, h), 1)
	assert.Equal(t, int64(1), enginetest.Metric(h.e, "net0", "elicitation.completed"))
}

// postHeaders are the headers of a 2025 client's POST to the harness.
var postHeaders = [][2]string{
	{":scheme", "http"}, {":method", "POST"}, {":path", "/mcp"}, {":authority", "localhost:8080"},
	{"content-type", "application/json"}, {"accept", "application/json, text/event-stream"},
}

// sendUnanswered sends a request whose lifecycle the application leaves
// unanswered, and returns once that lifecycle has reached it; h.req.done
// then says when the request is answered.
func (h *harness) sendUnanswered(t *testing.T, headers [][2]string, body string) {
	t.Helper()
	h.app.silent = true
	h.req.set(t, headers, body)
	h.req.left = 1
	h.w.Dispatch(h.req.startFn)
	for range 3 {
		enginetest.Settle(t, h.e)
	}
	require.NotNil(t, h.app.lifecycle, "the lifecycle opened")
	h.app.silent = false
}

// TestDiscoverUnanswered: an application that never answers the
// lifecycle a server/discover opens has inactivity.timeout to do so; then
// the request gets -32603, and the next server/discover opens another.
func TestDiscoverUnanswered(t *testing.T) {
	clock := enginetest.NewClock()
	h := newHarnessWith(t, "\nversions: [2026-07-28]\ninactivity: {timeout: PT5S}", clock)
	h.sendUnanswered(t, append(slices.Clone(postHeaders), [2]string{"mcp-protocol-version", "2026-07-28"}, [2]string{"mcp-method", "server/discover"}),
		`{"jsonrpc":"2.0","id":4,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	clock.Tick(t, h.e, 6*time.Second)
	enginetest.ReceiveBy(t, h.timer, h.req.done, "the answer at the timeout")
	assert.Contains(t, string(h.req.response), `"error":{"code":-32603,"message":"Internal error: the application gave no capabilities"}`)

	h.request(t)
	assert.Contains(t, string(h.req.response), `"supportedVersions":["2026-07-28"]`)
}

// TestInitializeUnanswered: an application that never answers the
// lifecycle an initialize opens has inactivity.timeout to do so; then the
// client gets -32603 and the session it would have started is given up,
// its address's count with it, so that the next initialize from that
// address is taken.
func TestInitializeUnanswered(t *testing.T) {
	clock := enginetest.NewClock()
	h := newHarnessWith(t, "\ninactivity: {timeout: PT5S}\nlimits: {sessionsPerAddress: 1}", clock)
	h.sendUnanswered(t, postHeaders, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}`)
	clock.Tick(t, h.e, 4*time.Second)
	for range 3 {
		enginetest.Settle(t, h.e)
	}
	select {
	case <-h.req.done:
		t.Fatalf("answered before the timeout: %s", h.req.response)
	default:
	}
	clock.Tick(t, h.e, 2*time.Second)
	enginetest.ReceiveBy(t, h.timer, h.req.done, "the answer at the timeout")
	assert.Equal(t, `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error: the application did not answer initialize in time"}}`, string(h.req.response))

	h.request(t)
	assert.Equal(t, "200", string(h.req.status), "%s", h.req.response)
	assert.Equal(t, "session-2", string(h.req.session))
}

// clientRequestPart returns a FLUSH extension with one part of a client
// request's params: total bytes in all, these from start on.
func clientRequestPart(t testing.TB, typeID int32, id, method, params string, total, start int32) []byte {
	t.Helper()
	buf := make([]byte, 1024)
	var b mcp.McpFlushExBuilder
	n, err := b.Wrap(buf, 0, len(buf)).TypeID(typeID).ClientRequest().ID(id).Method(method).Params(params).
		Total(total).Start(start).BuildLimit()
	require.NoError(t, err)
	return buf[:n]
}

// TestClientRequestPartsDropped: a client request in parts that cannot be
// put together (larger than the server takes, or cut short by the next
// one's start) is answered -32603 under the application's id, which
// would wait for the client's answer otherwise; the request after it
// reaches the client.
func TestClientRequestPartsDropped(t *testing.T) {
	h := newHarness(t)
	initSession(t, h, `{"roots":{}}`)
	h.app.record = []byte{}
	h.app.clientReqs = [][]byte{
		clientRequestPart(t, h.app.mcpType, "9", "roots/list", `{"a":`, mcp.MaxNotification+1, 0),
		clientRequestPart(t, h.app.mcpType, "9", "roots/list", `1}`, mcp.MaxNotification+1, 5),
		clientRequestPart(t, h.app.mcpType, "10", "roots/list", `{"a":`, 7, 0),
		clientRequestPart(t, h.app.mcpType, "11", "roots/list", `{}`, 2, 0),
	}
	h.req.set(t, benchHeaders, benchBody)
	h.request(t)
	assert.Contains(t, string(h.req.response), `"id":"s2c-1","method":"roots/list","params":{}`, "the request after them reaches the client")
	until(t, h, "the answers", func() bool { return len(h.app.begins) >= 3 })
	got := answers(t, h)
	require.Len(t, got, 2, "request 9 answered once")
	for i, id := range []string{"9", "10"} {
		assert.Equal(t, id, got[i].IDString())
		assert.Equal(t, uint8(1), got[i].Error())
	}
	until(t, h, "the answers' DATA", func() bool {
		return strings.Count(string(h.app.record), `"Internal error: the request to the client could not be put together"`) == 2
	})
}

// TestLifecycleRequestBeforeGet: a request of the lifecycle that comes
// before the session's first GET stream (an upstream asking for roots as
// soon as its own session starts) is held for it, and goes out on it as
// the stream opens, in the order the requests came; the client's answer
// then reaches the application.
func TestLifecycleRequestBeforeGet(t *testing.T) {
	h := newHarness(t)
	initSession(t, h, `{"roots":{}}`)
	h.app.record = []byte{}
	reqs := [][]byte{
		clientRequestExt(t, h.app.mcpType, "7", "roots/list", ""),
		clientRequestExt(t, h.app.mcpType, "8", "ping", ""),
	}
	require.NoError(t, h.e.Execute(0, func(*engine.Worker) { h.app.lifecycle.flush(reqs) }))
	enginetest.Settle(t, h.e)
	assert.Empty(t, answers(t, h), "held, not refused")

	get := resume(t, h, "", false)
	until(t, h, "the held requests on the GET stream", func() bool {
		return strings.Contains(string(get.response), `"id":"s2c-2","method":"ping"`)
	})
	roots := strings.Index(string(get.response), `{"jsonrpc":"2.0","id":"s2c-1","method":"roots/list"}`)
	ping := strings.Index(string(get.response), `{"jsonrpc":"2.0","id":"s2c-2","method":"ping"}`)
	assert.True(t, roots >= 0 && roots < ping, "in the order they came: %s", get.response)

	begins := 0
	require.NoError(t, h.e.Execute(0, func(*engine.Worker) { begins = len(h.app.begins) }))
	answer := h.send(t, benchHeaders, `{"jsonrpc":"2.0","id":"s2c-1","result":{"roots":[]}}`, "the client's answer")
	assert.Equal(t, "202", string(answer.status))
	until(t, h, "the answer reaches the application", func() bool { return len(h.app.begins) > begins })
	got := answers(t, h)
	assert.Equal(t, "7", got[0].IDString())
	assert.Equal(t, uint8(0), got[0].Error())
}

// TestLifecycleRequestNoGet: a session whose client opens no GET stream
// within earlyWait has the requests held for it answered -32603, on the
// engine's clock.
func TestLifecycleRequestNoGet(t *testing.T) {
	clock := enginetest.NewClock()
	h := newHarnessWith(t, "", clock)
	initSession(t, h, `{"roots":{}}`)
	h.app.record = []byte{}
	held := [][]byte{clientRequestExt(t, h.app.mcpType, "7", "roots/list", "")}
	require.NoError(t, h.e.Execute(0, func(*engine.Worker) { h.app.lifecycle.flush(held) }))
	enginetest.Settle(t, h.e)
	begins := 0
	require.NoError(t, h.e.Execute(0, func(*engine.Worker) { begins = len(h.app.begins) }))
	clock.Tick(t, h.e, 10*time.Second-time.Millisecond)
	enginetest.Settle(t, h.e)
	assert.Empty(t, answers(t, h), "held until earlyWait")
	clock.Tick(t, h.e, time.Millisecond)
	until(t, h, "the held request answered", func() bool { return len(h.app.begins) > begins })
	until(t, h, "its error", func() bool {
		return string(h.app.record) == `{"code":-32603,"message":"Internal error: no stream open to the client"}`
	})
	assert.Equal(t, uint8(1), answers(t, h)[0].Error())
}
