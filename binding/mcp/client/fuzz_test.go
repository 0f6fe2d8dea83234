package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/internal/enginetest"
)

// fuzzAnswer is what the fuzzed upstream answers the next tools/call
// with; id is the id of the last call it saw.
type fuzzAnswer struct {
	mu     sync.Mutex
	status int
	sse    bool
	body   []byte
	id     string
}

// upstreamStatuses are the HTTP statuses a fuzzed answer comes with.
var upstreamStatuses = []int{200, 200, 200, 202, 400, 404, 500}

// FuzzGatewayUpstream has an upstream answer tools/calls, made through
// tcp → http → mcp server → mcp client by a 2025-11-25 session, with
// fuzzed bodies (%ID% stands for the call's id upstream), as JSON or as
// an event stream, under one of upstreamStatuses. The engine's clock
// stands still, so no timeout can answer for the gateway. Every call is
// answered with one JSON-RPC response to its id; a plain JSON result for
// the call's id reaches the client as the upstream wrote it, and a
// response whose result or error is not an object, or that has both, is
// -32603; and after
// a call the gateway holds no buffer slot, and no more streams than
// those of the session and of its pooled upstream connections (a 400 or 404 makes
// the client start a new upstream session, which may leave one more
// connection idle in the pool).
func FuzzGatewayUpstream(f *testing.F) {
	for _, s := range []struct {
		status uint8
		sse    bool
		body   string
	}{
		{0, false, `{"jsonrpc":"2.0","id":%ID%,"result":{"content":[{"type":"text","text":"ok"}]}}`},
		{0, false, `{"jsonrpc":"2.0","id":%ID%,"error":{"code":-32602,"message":"no"}}`},
		{0, true, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\n" +
			"id: e1\ndata: {\"jsonrpc\":\"2.0\",\"id\":%ID%,\"result\":{\"content\":[]}}\n\n"},
		{0, true, "data: {\"jsonrpc\":\"2.0\",\"id\":%ID%,\"method\":\"elicitation/create\",\"params\":{}}\n\n"},
		{0, false, `{"jsonrpc":"2.0","id":999,"result":{}}`},
		{0, false, `{"jsonrpc":"2.0","id":%ID%,"result":{},"result":{"x":1}}`},
		{0, false, `[{"jsonrpc":"2.0","id":%ID%,"result":{}}]`},
		{0, false, `{"jsonrpc":"2.0","id":%ID%,"result":`},
		{0, false, `{"jsonrpc":"2.0","id":%ID%,"result":[1]}`},
		{0, false, `{"jsonrpc":"2.0","id":%ID%,"error":"boom"}`},
		{0, false, `{"jsonrpc":"2.0","id":%ID%,"result":{},"error":{"code":1,"message":"m"}}`},
		{0, true, "data: {\"jsonrpc\":\"2.0\",\"id\":%ID%,\"result\":null}\n\n"},
		{3, false, ``},
		{4, false, `{"jsonrpc":"2.0","id":%ID%,"error":{"code":-32600,"message":"bad"}}`},
		{5, false, `Not Found`},
		{6, true, `data: x`},
	} {
		f.Add(s.status, s.sse, []byte(s.body))
	}

	r := newFuzzRig(f, "tools/call", "")
	f.Fuzz(func(t *testing.T, status uint8, sse bool, body []byte) {
		reply, upStatus, upBody := r.call(t, status, sse, body,
			`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"t","arguments":{}}}`)
		_, hasError := reply["error"]
		if !sse && upStatus == 200 && enginetest.EnvelopeTwice(upBody) != "" {
			require.True(t, hasError, "an upstream message with two readings is refused: %v", reply)
		}
		if want, ok := plainResult(upBody, r.upstreamID()); ok && !sse && upStatus == 200 {
			require.Equal(t, want, reply["result"], "upstream answered %q", body)
		}
		if !sse && upStatus == 200 && notObjectAnswer(upBody, r.upstreamID()) {
			e, _ := reply["error"].(map[string]any)
			require.Equal(t, float64(-32603), e["code"], "a response whose result or error is not an object, or that has both, is refused: %v", reply)
		}
		r.settled(t)
	})
}

// FuzzProxyUpstreamList is FuzzGatewayUpstream for tools/list through an
// mcp proxy (prefix: always, one route, up): the fuzzed answer is the
// route's list. Every tool the client sees carries the prefix, however it
// reads a name given twice; and a plain list (tools, each an object with
// a string name, and nothing else) reaches the client with each name
// prefixed and the rest of each tool as the route wrote it, but for a
// tool whose name an earlier one has, which is left out.
func FuzzProxyUpstreamList(f *testing.F) {
	for _, s := range []struct {
		status uint8
		sse    bool
		body   string
	}{
		{0, false, `{"jsonrpc":"2.0","id":%ID%,"result":{"tools":[{"name":"a","inputSchema":{"type":"object"}},{"name":"b\u00e9","x":[1,{"y":null}]}]}}`},
		{0, false, `{"jsonrpc":"2.0","id":%ID%,"result":{"tools":[{"_meta":{"ui":{"resourceUri":"ui://v/a.html"},"ui/resourceUri":"\u0075i:\/\/v/a.html"},"name":"a"},{"name":"b","_meta":{"openai/outputTemplate":"file:x","ui":{"resourceUri":7}}}]}}`},
		{0, false, `{"jsonrpc":"2.0","id":%ID%,"result":{"tools":[],"nextCursor":"c1"}}`},
		{0, true, "data: {\"jsonrpc\":\"2.0\",\"id\":%ID%,\"result\":{\"tools\":[{\"name\":\"z\"}]}}\n\n"},
		{0, false, `{"jsonrpc":"2.0","id":%ID%,"result":{"tools":[{"name":1}]}}`},
		{0, false, `{"jsonrpc":"2.0","id":%ID%,"result":{"tools":{}}}`},
		{0, false, `{"jsonrpc":"2.0","id":%ID%,"result":{"tools":[{"name":"a","name":"b"}]}}`},
		{0, false, `{"jsonrpc":"2.0","id":%ID%,"result":{"tools":[{"name":"a"}],"tools":[]}}`},
		{4, false, `{"jsonrpc":"2.0","id":%ID%,"error":{"code":-32601,"message":"no tools"}}`},
	} {
		f.Add(s.status, s.sse, []byte(s.body))
	}
	r := newFuzzRig(f, "tools/list", "prefix: always")
	f.Fuzz(func(t *testing.T, status uint8, sse bool, body []byte) {
		reply, upStatus, upBody := r.call(t, status, sse, body, `{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`)
		if result, ok := reply["result"].(map[string]any); ok {
			list, _ := result["tools"].([]any)
			for _, v := range list {
				name, _ := v.(map[string]any)["name"].(string)
				require.True(t, strings.HasPrefix(name, "up__"),
					"every tool the client sees, read as encoding/json reads it, has its route's prefix: %v; upstream answered %q", reply, body)
			}
		}
		if sse || upStatus != 200 {
			r.settled(t)
			return
		}
		if want, ok := plainResult(upBody, r.upstreamID()); ok {
			if tools, ok := plainTools(want); ok {
				// A name an earlier tool has is left out: the first is the
				// one a call reaches.
				prefixed := make([]any, 0, len(tools))
				seen := map[string]bool{}
				for _, tool := range tools {
					name := tool["name"].(string)
					if seen[name] {
						continue
					}
					seen[name] = true
					tool["name"] = "up__" + name
					prefixViews(tool)
					prefixed = append(prefixed, tool)
				}
				require.Equal(t, map[string]any{"tools": prefixed}, reply["result"], "upstream answered %q", body)
			}
		}
		r.settled(t)
	})
}

// prefixViews puts route up's uri prefix on the MCP Apps views a listed
// tool's _meta names, as the proxy does: inside a ui:// uri's authority,
// in front of any other.
func prefixViews(tool map[string]any) {
	meta, _ := tool["_meta"].(map[string]any)
	if meta == nil {
		return
	}
	prefix := func(v any) any {
		s, ok := v.(string)
		if !ok {
			return v
		}
		if rest, ok := strings.CutPrefix(s, "ui://"); ok {
			return "ui://up+" + rest
		}
		return "up+" + s
	}
	for _, k := range []string{"ui/resourceUri", "openai/outputTemplate"} {
		if v, ok := meta[k]; ok {
			meta[k] = prefix(v)
		}
	}
	if ui, ok := meta["ui"].(map[string]any); ok {
		if v, ok := ui["resourceUri"]; ok {
			ui["resourceUri"] = prefix(v)
		}
	}
}

// FuzzGatewayDownstream posts arbitrary bodies through the whole gateway
// (tcp → http → mcp server → mcp proxy, prefix: always → mcp client →
// an upstream that answers as tinyUpstream does), in the rig's
// 2025-11-25 session or stateless at 2026-07-28 with fuzzed Mcp-Method
// and Mcp-Name headers. Every POST is answered as
// enginetest.CheckMCPAnswer holds, and the gateway is left holding what
// it held before.
func FuzzGatewayDownstream(f *testing.F) {
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"up__t","arguments":{"x":[1,2]}}}`,
		`{"jsonrpc":"2.0","id":"x","method":"tools/list","params":{"cursor":"AQFgg4oCAAJjMQ"}}`,
		`{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"up+a:b"}}`,
		`{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"ui://up+a/b.html"}}`,
		`{"jsonrpc":"2.0","id":3,"method":"prompts/get","params":{"name":"nope"}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
		`{"jsonrpc":"2.0","id":4,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"up__p"},"argument":{"name":"a","value":"b"}}}`,
		`{"jsonrpc":"2.0","id":5,"method":"logging/setLevel","params":{"level":"debug"}}`,
		`{"jsonrpc":"2.0","id":6,"result":{"action":"accept"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"up__t","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
	} {
		f.Add(false, "", "", []byte(body))
		f.Add(true, "tools/call", "up__t", []byte(body))
	}
	r := newFuzzRig(f, "", "prefix: always")
	client := &http.Client{Timeout: 5 * time.Second}
	f.Cleanup(client.CloseIdleConnections)
	f.Fuzz(func(t *testing.T, stateless bool, method, name string, body []byte) {
		body = body[:min(len(body), 8<<10)]
		req, err := http.NewRequest(http.MethodPost, r.url, bytes.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if stateless {
			req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
			if m := enginetest.HeaderValue(method); m != "" {
				req.Header.Set("Mcp-Method", m)
			}
			if n := enginetest.HeaderValue(name); n != "" {
				req.Header.Set("Mcp-Name", n)
			}
		} else {
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
			req.Header.Set("Mcp-Session-Id", r.sid)
		}
		resp, err := client.Do(req)
		require.NoError(t, err, "the gateway answers %q", body)
		out, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		require.NoError(t, err)
		enginetest.CheckMCPAnswer(t, body, resp.StatusCode, resp.Header.Get("Content-Type"), string(out))
		client.CloseIdleConnections()
		r.settled(t)
	})
}

// plainTools returns the tools of a list result that holds nothing but
// tools, each an object with a string name.
func plainTools(result any) ([]map[string]any, bool) {
	m, ok := result.(map[string]any)
	if !ok || len(m) != 1 {
		return nil, false
	}
	list, ok := m["tools"].([]any)
	if !ok {
		return nil, false
	}
	tools := make([]map[string]any, 0, len(list))
	for _, v := range list {
		tool, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if _, ok := tool["name"].(string); !ok {
			return nil, false
		}
		tools = append(tools, tool)
	}
	return tools, true
}

// fuzzRig is a gateway, its upstream and a 2025-11-25 session through
// it, for fuzzing what the upstream answers to one method.
type fuzzRig struct {
	answer fuzzAnswer
	conns  atomic.Int64 // connections open to the upstream
	e      *engine.Engine
	url    string
	sid    string
	base   enginetest.Holdings
	calls  int
}

// newFuzzRig starts the upstream, which answers method (none when it is
// empty) as the rig's answer says and everything else as tinyUpstream
// does, and the gateway
// (through an mcp proxy with proxyOptions when they are set), on a clock
// that stands still, and opens the session.
func newFuzzRig(f *testing.F, method, proxyOptions string) *fuzzRig {
	r := &fuzzRig{}
	server := serveUpstreamConns(f, false, func(w http.ResponseWriter, _ *http.Request, msg, id string) {
		switch {
		case !strings.Contains(msg, `"id":`):
			w.WriteHeader(http.StatusAccepted)
		case method != "" && strings.Contains(msg, `"method":"`+method+`"`):
			a := &r.answer
			a.mu.Lock()
			a.id = id
			status, sse, body := a.status, a.sse, bytes.ReplaceAll(a.body, []byte("%ID%"), []byte(id))
			a.mu.Unlock()
			if sse {
				w.Header().Set("Content-Type", "text/event-stream")
			} else {
				w.Header().Set("Content-Type", "application/json")
			}
			w.WriteHeader(status)
			_, _ = w.Write(body)
		case strings.Contains(msg, `"method":"tools/call"`):
			answerOK(w, id)
		default:
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"t","inputSchema":{"type":"object"}}]}}`, id)
		}
	}, &r.conns)
	r.url, r.e = startGatewayEngine(f, server, "      versions: [2025-11-25]\n      timeout: PT20S\n", proxyOptions,
		engine.WithClock(enginetest.NewClock().Now))
	r.sid = fuzzInitialize(f, r.url)
	// A list first, answered well, so that the session has reached its
	// upstream (through a proxy it does so after the client's
	// initialize) before what the gateway holds is taken as the base.
	r.answer.status, r.answer.body = 200, []byte(`{"jsonrpc":"2.0","id":%ID%,"result":{"tools":[]}}`)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	reply, err := enginetest.PostMCP(ctx, r.url, "2025-11-25", r.sid, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	require.NoError(f, err)
	require.Equal(f, 200, reply.Status, "%v", reply.Msg)
	enginetest.Settle(f, r.e)
	r.base = r.session()
	return r
}

// session is what the gateway holds for the session: the streams held
// less those of the pooled upstream connections, each a tcp client
// stream and its http client's.
func (r *fuzzRig) session() enginetest.Holdings {
	h := enginetest.Held(r.e)
	n := int(r.conns.Load())
	return enginetest.Holdings{Streams: h.Streams - streamsPerConn*n, Throttles: h.Throttles - streamsPerConn*n, Slots: h.Slots}
}

// call has the upstream answer the next request with body, under the
// status upstreamStatuses picks and as an event stream when sse is set,
// and sends request (a format with %d for the id) on the session. It
// checks that the client gets one JSON-RPC response to its id, and
// returns it with the upstream's status and body as sent.
func (r *fuzzRig) call(t *testing.T, status uint8, sse bool, body []byte, request string) (map[string]any, int, []byte) {
	t.Helper()
	upStatus := upstreamStatuses[int(status)%len(upstreamStatuses)]
	r.answer.mu.Lock()
	r.answer.status, r.answer.sse, r.answer.body = upStatus, sse, body
	r.answer.mu.Unlock()
	r.calls++
	id := r.calls + 1
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	reply, err := enginetest.PostMCP(ctx, r.url, "2025-11-25", r.sid, fmt.Sprintf(request, id))
	require.NoError(t, err, "upstream answered %q", body)
	require.Equal(t, 200, reply.Status, "upstream answered %q", body)
	require.Equal(t, "2.0", reply.Msg["jsonrpc"], "%v", reply.Msg)
	require.Equal(t, float64(id), reply.Msg["id"], "the request's own id: %v", reply.Msg)
	_, hasResult := reply.Msg["result"]
	_, hasError := reply.Msg["error"]
	require.True(t, hasResult != hasError, "exactly one of result and error: %v", reply.Msg)
	return reply.Msg, upStatus, bytes.ReplaceAll(body, []byte("%ID%"), []byte(r.upstreamID()))
}

// upstreamID is the id the upstream saw on the last request it answered
// with the fuzzed body.
func (r *fuzzRig) upstreamID() string {
	r.answer.mu.Lock()
	defer r.answer.mu.Unlock()
	return r.answer.id
}

// settled checks that a request has left nothing behind: the gateway
// holds no buffer slot, and no more streams than once the session was
// open (it may hold fewer: a connection idle then may have closed
// since).
func (r *fuzzRig) settled(t *testing.T) {
	t.Helper()
	require.Eventually(t, func() bool {
		s := r.session()
		return s.Streams <= r.base.Streams && s.Throttles <= r.base.Throttles && s.Slots == 0
	}, 2*time.Second, time.Millisecond,
		"the gateway holds more than before the request: %+v, was %+v", r.session(), r.base)
}

// fuzzInitialize opens the 2025-11-25 session the fuzzed calls go on.
func fuzzInitialize(tb testing.TB, endpoint string) string {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	reply, err := enginetest.PostMCP(ctx, endpoint, "", "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"fuzz","version":"1"}}}`)
	require.NoError(tb, err)
	require.Equal(tb, 200, reply.Status, "%v", reply.Msg)
	reply2, err := enginetest.PostMCP(ctx, endpoint, "2025-11-25", reply.Session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	require.NoError(tb, err)
	require.Equal(tb, 202, reply2.Status)
	return reply.Session
}

// plainResult returns the result of body when it is one well-formed
// JSON-RPC response to id whose result is an object: UTF-8 (which
// encoding/json does not ask of strings, and the gateway does), each
// member once, as encoding/json reads it.
func plainResult(body []byte, id string) (any, bool) {
	var m map[string]json.RawMessage
	if !utf8.Valid(body) || json.Unmarshal(body, &m) != nil || len(m) != 3 || string(m["jsonrpc"]) != `"2.0"` || string(m["id"]) != id {
		return nil, false
	}
	r, ok := m["result"]
	if !ok || len(r) == 0 || r[0] != '{' || enginetest.HasDuplicateNames(body) {
		return nil, false
	}
	var v any
	if json.Unmarshal(r, &v) != nil {
		return nil, false
	}
	return v, true
}

// notObjectAnswer reports whether body is one JSON-RPC response to id,
// with one reading, whose result or error is not an object, or that has
// both.
func notObjectAnswer(body []byte, id string) bool {
	var m map[string]json.RawMessage
	if !utf8.Valid(body) || json.Unmarshal(body, &m) != nil || enginetest.EnvelopeTwice(body) != "" || string(m["id"]) != id {
		return false
	}
	if _, ok := m["method"]; ok {
		return false
	}
	result, hasResult := m["result"]
	e, hasError := m["error"]
	return hasResult && hasError || hasResult && result[0] != '{' || hasError && e[0] != '{'
}

// streamsPerConn is how many streams an open upstream connection holds
// on its worker: the http client's and the tcp client's.
const streamsPerConn = 2
