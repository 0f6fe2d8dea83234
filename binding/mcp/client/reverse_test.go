package client_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/internal/enginetest"
)

// post2026 POSTs a stateless 2026-07-28 tools/call of tool to endpoint
// with extra members in its params, and returns the JSON-RPC response.
func post2026(ctx context.Context, endpoint string, id int, tool, extra string) (map[string]any, error) {
	return post2026Caps(ctx, endpoint, id, tool, extra, `{"elicitation":{}}`)
}

// post2026Caps is post2026 with the client capabilities caps.
func post2026Caps(ctx context.Context, endpoint string, id int, tool, extra, caps string) (map[string]any, error) {
	r, err := post2026Request(ctx, endpoint, id, "tools/call", tool, fmt.Sprintf(`"name":%q,"arguments":{}%s`, tool, extra), caps)
	return r.Msg, err
}

// post2026Request POSTs a stateless 2026-07-28 request of method, naming
// name (if not empty) in Mcp-Name, whose params are the members params
// then a _meta with the client capabilities caps, and more headers hdr
// (name, value pairs). A reply without a JSON-RPC message is an error.
func post2026Request(ctx context.Context, endpoint string, id int, method, name, params, caps string, hdr ...string) (enginetest.MCPReply, error) {
	if params != "" {
		params += ","
	}
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":{%s"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":%s}}}`, id, method, params, caps)
	h := []string{"Mcp-Method", method}
	if name != "" {
		h = append(h, "Mcp-Name", name)
	}
	r, err := enginetest.PostMCP(ctx, endpoint, "2026-07-28", "", body, append(h, hdr...)...)
	if err == nil && r.Msg == nil {
		err = fmt.Errorf("status %d: no JSON-RPC message", r.Status)
	}
	return r, err
}

// TestReverseRoundExpires: a 2026-07-28 client's call to a 2025 upstream
// that asks its client something ends its round with input_required; when
// no retry comes within options.inputRequired.roundTimeout, the gateway
// answers the upstream's request -32001, cancels the call, and a late
// retry with the state gets -32602 "Invalid requestState" (expired), with
// nothing more sent upstream. The engine runs on a manual clock.
func TestReverseRoundExpires(t *testing.T) {
	clock := enginetest.NewClock()
	asked := make(chan struct{}, 1)
	gone := make(chan struct{}, 1)
	answers := make(chan string, 4)
	calls := make(chan string, 4)
	server := serveUpstream(t, false, func(w http.ResponseWriter, r *http.Request, msg, id string) {
		switch {
		case strings.Contains(msg, `"method":"tools/call"`):
			calls <- msg
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(200)
			fmt.Fprint(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"elicitation/create\",\"params\":{\"message\":\"Your name?\",\"requestedSchema\":{\"type\":\"object\"}}}\n\n")
			w.(http.Flusher).Flush()
			asked <- struct{}{}
			<-r.Context().Done() // never answers: the gateway cancels it
			gone <- struct{}{}
		default:
			if !strings.Contains(msg, `"notifications/initialized"`) {
				answers <- msg
			}
			w.WriteHeader(http.StatusAccepted)
		}
	})
	endpoint, e := startGatewayEngine(t, server, "      versions: [2025-11-25]\n      inputRequired:\n        roundTimeout: PT10S\n", "", engine.WithClock(clock.Now))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	type result struct {
		m   map[string]any
		err error
	}
	first := make(chan result, 1)
	go func() {
		m, err := post2026(ctx, endpoint, 1, "ask", "")
		first <- result{m, err}
	}()
	enginetest.Receive(t, asked, "the upstream's elicitation/create sent")
	// The round ends once the requests that come together are in, a
	// moment on the engine's clock after the first.
	var r result
	for got := false; !got; {
		clock.Tick(t, e, 10*time.Millisecond)
		select {
		case r = <-first:
			got = true
		case <-time.After(20 * time.Millisecond):
		}
	}
	require.NoError(t, r.err)
	res, _ := r.m["result"].(map[string]any)
	require.NotNil(t, res, "%v", r.m)
	assert.Equal(t, "input_required", res["resultType"])
	reqs, _ := res["inputRequests"].(map[string]any)
	assert.Equal(t, map[string]any{"7": map[string]any{"method": "elicitation/create",
		"params": map[string]any{"message": "Your name?", "requestedSchema": map[string]any{"type": "object"}}}}, reqs)
	state, _ := res["requestState"].(string)
	require.NotEmpty(t, state)

	// A moment before the round timeout nothing happens; at it, the
	// upstream's request is answered and the call cancelled.
	clock.Tick(t, e, 10*time.Second-time.Second)
	enginetest.Settle(t, e)
	select {
	case msg := <-answers:
		t.Fatalf("answered before the round timeout: %s", msg)
	default:
	}
	clock.Tick(t, e, time.Second)
	got := []string{enginetest.Receive(t, answers, "the upstream's request answered"),
		enginetest.Receive(t, answers, "the call cancelled")}
	enginetest.Receive(t, gone, "the call's stream closed")
	assert.Contains(t, strings.Join(got, "\n"), `{"jsonrpc":"2.0","id":7,"error":{"code":-32001,"message":"Request cancelled: the client did not retry in time"}}`)
	assert.Contains(t, strings.Join(got, "\n"), `"method":"notifications/cancelled","params":{"requestId":2,`)

	// The late retry is refused, and goes nowhere upstream.
	m, err := post2026(ctx, endpoint, 2, "ask", `,"inputResponses":{"7":{"action":"accept","content":{}}},"requestState":"`+state+`"`)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"code": float64(-32602), "message": "Invalid requestState", "data": map[string]any{"reason": "expired"}}, m["error"])
	enginetest.Settle(t, e)
	assert.Len(t, calls, 1, "one tools/call upstream")
	assert.Empty(t, answers)
}

// TestReverseFinalAnswers: the final answers of a 2025 upstream that a
// 2026-07-28 client could not use as they are. A -32042 becomes
// input_required with a URL elicitation, and its retry goes upstream as a
// new call without inputResponses and requestState; an input_required
// result the upstream sent itself (no resultType, as go-sdk's legacy shim
// sends one) is marked so, its requestState wrapped, and the retry
// carries the upstream's own state back byte-exact. A client without
// url elicitation gets the -32042 as it is.
func TestReverseFinalAnswers(t *testing.T) {
	calls := make(chan string, 8)
	server := serveUpstream(t, false, func(w http.ResponseWriter, r *http.Request, msg, id string) {
		if !strings.Contains(msg, `"method":"tools/call"`) {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		calls <- msg
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.Contains(msg, `"name":"url"`) && strings.Contains(msg, `"again":true`):
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"authorized"}]}}`, id)
		case strings.Contains(msg, `"name":"url"`):
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32042,"message":"URL elicitation required","data":{"elicitations":[{"mode":"url","elicitationId":"auth-1","url":"https://auth.example/x","message":"Sign in"},{"mode":"url","url":"https://auth.example/y","message":"Consent"}]}}}`, id)
		case strings.Contains(msg, `"requestState":"round=2;name=Ada"`):
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"done"}]}}`, id)
		default:
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[],"inputRequests":{"step2":{"method":"elicitation/create","params":{"message":"Colour?","requestedSchema":{"type":"object"}}}},"requestState":"round=2;name=Ada"}}`, id)
		}
	})
	endpoint := startGateway(t, server, "      versions: [2025-11-25]\n")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	urlCaps := `{"elicitation":{"url":{}}}`

	m, err := post2026Caps(ctx, endpoint, 1, "url", "", urlCaps)
	require.NoError(t, err)
	res, _ := m["result"].(map[string]any)
	require.NotNil(t, res, "%v", m)
	assert.Equal(t, "input_required", res["resultType"])
	assert.Equal(t, map[string]any{
		"auth-1":            map[string]any{"method": "elicitation/create", "params": map[string]any{"mode": "url", "elicitationId": "auth-1", "url": "https://auth.example/x", "message": "Sign in"}},
		"url-elicitation-2": map[string]any{"method": "elicitation/create", "params": map[string]any{"mode": "url", "url": "https://auth.example/y", "message": "Consent"}},
	}, res["inputRequests"])
	state, _ := res["requestState"].(string)
	require.NotEmpty(t, state)
	first := enginetest.Receive(t, calls, "the call")
	assert.NotContains(t, first, "requestState")

	m, err = post2026Caps(ctx, endpoint, 2, "url", `,"again":true,"inputResponses":{"auth-1":{"action":"accept"}},"requestState":"`+state+`"`, urlCaps)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"content": []any{map[string]any{"type": "text", "text": "authorized"}}},
		without(m["result"], "_meta", "resultType"), "%v", m)
	again := enginetest.Receive(t, calls, "the call again")
	assert.NotContains(t, again, "requestState")
	assert.NotContains(t, again, "inputResponses")

	// Without url elicitation, the error as it is.
	m, err = post2026(ctx, endpoint, 3, "url", "")
	require.NoError(t, err)
	e, _ := m["error"].(map[string]any)
	assert.Equal(t, float64(-32042), e["code"], "%v", m)
	enginetest.Receive(t, calls, "the call")

	m, err = post2026(ctx, endpoint, 4, "steps", "")
	require.NoError(t, err)
	res, _ = m["result"].(map[string]any)
	require.NotNil(t, res, "%v", m)
	assert.Equal(t, "input_required", res["resultType"])
	wrapped, _ := res["requestState"].(string)
	require.NotEmpty(t, wrapped)
	assert.NotEqual(t, "round=2;name=Ada", wrapped)
	enginetest.Receive(t, calls, "the call")

	m, err = post2026(ctx, endpoint, 5, "steps", `,"inputResponses":{"step2":{"action":"accept","content":{"colour":"red"}}},"requestState":"`+wrapped+`"`)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"content": []any{map[string]any{"type": "text", "text": "done"}}},
		without(m["result"], "_meta", "resultType"), "%v", m)
	retry := enginetest.Receive(t, calls, "the retry")
	assert.Contains(t, retry, `"requestState":"round=2;name=Ada"`)
	assert.Contains(t, retry, `"inputResponses":{"step2":{"action":"accept","content":{"colour":"red"}}}`)

	// A forged wrap reaches no upstream.
	m, err = post2026(ctx, endpoint, 6, "steps", `,"requestState":"round=2;name=Ada"`)
	require.NoError(t, err)
	e, _ = m["error"].(map[string]any)
	assert.Equal(t, "Invalid requestState", e["message"], "%v", m)
	assert.Empty(t, calls)
}

// without returns the object v without the members names.
func without(v any, names ...string) map[string]any {
	m, _ := v.(map[string]any)
	out := map[string]any{}
	for k, x := range m {
		out[k] = x
	}
	for _, n := range names {
		delete(out, n)
	}
	return out
}

// TestReverseMaxPending: with options.inputRequired.maxPending 1, a
// worker holding one pending call refuses the next call's round: the
// client gets -32603 "Server busy: too many calls awaiting input" and the
// upstream's request an error.
func TestReverseMaxPending(t *testing.T) {
	answers := make(chan string, 4)
	server := serveUpstream(t, false, func(w http.ResponseWriter, r *http.Request, msg, id string) {
		switch {
		case strings.Contains(msg, `"method":"tools/call"`):
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(200)
			fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"ask-%s\",\"method\":\"elicitation/create\",\"params\":{\"message\":\"Name?\",\"requestedSchema\":{\"type\":\"object\"}}}\n\n", id)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		default:
			if strings.Contains(msg, `"error"`) {
				answers <- msg
			}
			w.WriteHeader(http.StatusAccepted)
		}
	})
	endpoint, _ := startGatewayEngine(t, server, "      versions: [2025-11-25]\n      inputRequired:\n        maxPending: 1\n", "", engine.WithWorkers(1))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	m, err := post2026(ctx, endpoint, 1, "ask", "")
	require.NoError(t, err)
	res, _ := m["result"].(map[string]any)
	require.NotNil(t, res, "%v", m)
	assert.Equal(t, "input_required", res["resultType"])
	assert.Contains(t, res["inputRequests"], "ask-2")

	m, err = post2026(ctx, endpoint, 2, "ask", "")
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"code": float64(-32603), "message": "Server busy: too many calls awaiting input"}, m["error"], "%v", m)
	assert.Contains(t, enginetest.Receive(t, answers, "the second call's request refused"), `"id":"ask-3","error":{"code":-32603`)
}

// TestReverseAskedBound: a pending call waits on at most 64 requests to
// its client; the upstream's 65th is answered -32603 at once and stays
// out of the round, and the 64 are answered -32001 when the round
// expires.
func TestReverseAskedBound(t *testing.T) {
	r := newReverseRig(t, false)
	var asks strings.Builder
	for i := 1; i <= 65; i++ {
		fmt.Fprintf(&asks, "data: {\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"roots/list\"}\n\n", i)
	}
	r.up.hold = true
	written := r.up.next([]byte(asks.String()))
	first := reply(t, r.exchange(t, r.callBody(8, ""), written), r.calls)
	round, ok := inputRequired(t, first["result"], 8)
	require.True(t, ok, "%s", first["result"])
	assert.Len(t, round.requests, 64)
	assert.NotContains(t, round.requests, "65")

	r.clock.Tick(t, r.e, roundTimeout+time.Second)
	require.Eventually(t, func() bool { return len(r.up.taken()) == 65 }, 5*time.Second, time.Millisecond)
	taken := strings.Join(r.up.taken(), "\n")
	assert.Contains(t, taken, `{"jsonrpc":"2.0","id":65,"error":{"code":-32603,"message":"Internal error: too many requests outstanding"}}`)
	assert.Equal(t, 64, strings.Count(taken, `"code":-32001`))
}

// TestReverseResultTwice: a 2025 upstream's input_required result that
// names requestState, inputRequests or resultType twice reaches a
// 2026-07-28 client as -32603: the gateway would wrap one state while the
// client's parser might read the other.
func TestReverseResultTwice(t *testing.T) {
	results := map[string]string{
		"state":  `{"content":[],"inputRequests":{"a":{"method":"roots/list"}},"requestState":"s1","requestState":"s2"}`,
		"inputs": `{"content":[],"inputRequests":{"a":{"method":"roots/list"}},"inputRequests":{}}`,
		"type":   `{"resultType":"input_required","resultType":"complete","content":[]}`,
	}
	server := serveUpstream(t, false, func(w http.ResponseWriter, r *http.Request, msg, id string) {
		if !strings.Contains(msg, `"method":"tools/call"`) {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, id, results[between(msg, `"name":"`, `"`)])
	})
	endpoint := startGateway(t, server, "      versions: [2025-11-25]\n")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for i, tool := range []string{"state", "inputs", "type"} {
		m, err := post2026Caps(ctx, endpoint, i+1, tool, "", `{"roots":{}}`)
		require.NoError(t, err)
		assert.Equal(t, map[string]any{"code": float64(-32603), "message": "Internal error: the upstream's result names resultType, inputRequests or requestState twice"}, m["error"], tool)
	}
}
