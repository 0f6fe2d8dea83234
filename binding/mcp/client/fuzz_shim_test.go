package client_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/internal/enginetest"
)

// shimUpstream is the 2026-07-28 upstream of FuzzShimRound: a tools/call
// without inputResponses or requestState is answered with the result it
// is given, a retry with a complete result, and the retries' params are
// kept.
type shimUpstream struct {
	mu      sync.Mutex
	result  []byte
	retries []json.RawMessage
}

func (u *shimUpstream) serve(w http.ResponseWriter, _ *http.Request, msg, id string) {
	w.Header().Set("Content-Type", "application/json")
	var m struct {
		Method string
		Params map[string]json.RawMessage
	}
	_ = json.Unmarshal([]byte(msg), &m)
	switch m.Method {
	case "server/discover":
		answerDiscover(w, id)
	case "tools/call":
		_, hasResponses := m.Params["inputResponses"]
		_, hasState := m.Params["requestState"]
		u.mu.Lock()
		defer u.mu.Unlock()
		if hasResponses || hasState {
			var params json.RawMessage
			_ = json.Unmarshal([]byte(msg), &struct{ Params *json.RawMessage }{&params})
			u.retries = append(u.retries, params)
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"resultType":"complete","content":[{"type":"text","text":"done"}]}}`, id)
			return
		}
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, id, u.result)
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}

// next sets the result of the next call, and returns the retries' params
// since the last next.
func (u *shimUpstream) next(result []byte) []json.RawMessage {
	u.mu.Lock()
	defer u.mu.Unlock()
	r := u.retries
	u.result, u.retries = result, nil
	return r
}

// shimRig is a gateway (tcp → http → mcp server → mcp client, the
// upstream at 2026-07-28 only, an mcp proxy between the kinds or not) on
// a clock that stands still, its upstream, and a 2025-11-25 session
// through it for each set of client capabilities (capsObject's bits).
type shimRig struct {
	tool     string // the tool's name as the gateway lists it
	up       shimUpstream
	e        *engine.Engine
	url      string
	sessions map[uint8]string
	base     map[string]int64
	calls    int
}

func newShimRig(f *testing.F, proxy bool) *shimRig {
	r := &shimRig{sessions: map[uint8]string{}, tool: "t"}
	server := serveUpstream(f, false, r.up.serve)
	proxyOptions := ""
	if proxy {
		proxyOptions, r.tool = "prefix: always", "up__t"
	}
	r.url, r.e = startGatewayEngine(f, server, "      versions: [2026-07-28]\n", proxyOptions, engine.WithClock(enginetest.NewClock().Now))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for caps := range uint8(16) {
		reply, err := enginetest.PostMCP(ctx, r.url, "", "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":`+capsObject(caps)+`,"clientInfo":{"name":"fuzz","version":"1"}}}`)
		require.NoError(f, err)
		require.Equal(f, 200, reply.Status, "%v", reply.Msg)
		reply2, err := enginetest.PostMCP(ctx, r.url, "2025-11-25", reply.Session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		require.NoError(f, err)
		require.Equal(f, 202, reply2.Status)
		r.sessions[caps] = reply.Session
		// A call answered at once, so that the session has reached its
		// upstream before what the gateway holds is taken as the base.
		r.up.next([]byte(`{"content":[]}`))
		reply, err = enginetest.PostMCP(ctx, r.url, "2025-11-25", reply.Session, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"`+r.tool+`","arguments":{}}}`)
		require.NoError(f, err)
		require.Equal(f, 200, reply.Status, "%v", reply.Msg)
	}
	enginetest.Settle(f, r.e)
	r.base = mcpStreams(r.e)
	return r
}

// mcpStreams returns the active streams of the mcp bindings of e (the
// server kind, mcp0, and the client kind, client0), by binding and
// direction: unlike the http and tcp clients', they do not change with
// the upstream connections pooled.
func mcpStreams(e *engine.Engine) map[string]int64 {
	got := activeStreams(e)
	for k := range got {
		if !strings.HasPrefix(k, "mcp0 ") && !strings.HasPrefix(k, "client0 ") {
			delete(got, k)
		}
	}
	return got
}

// settledStreams checks that a call has left nothing behind: no buffer
// slot held, and no more mcp streams than base.
func settledStreams(t *testing.T, e *engine.Engine, base map[string]int64, open func() int32) {
	t.Helper()
	ok := func() bool {
		for k, n := range mcpStreams(e) {
			if n > base[k] {
				return false
			}
		}
		return enginetest.Held(e).Slots == 0 && open() == 0
	}
	require.Eventually(t, ok, 5*time.Second, time.Millisecond,
		"the gateway holds more than before the call: %v, was %v; %+v; upstream calls open: %d",
		mcpStreams(e), base, enginetest.Held(e), open())
}

// answers are what the rig's client answers each request to it with.
var answers = map[string]string{
	"elicitation/create":     `{"action":"accept","content":{"x":1}}`,
	"sampling/createMessage": `{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"}`,
	"roots/list":             `{"roots":[]}`,
}

// call makes a tools/call on the session of caps and reads its event
// stream, answering each request to the client as answers says, until
// the call's response. It returns the requests and the response.
func (r *shimRig) call(t *testing.T, caps uint8) (requests []json.RawMessage, response map[string]json.RawMessage) {
	t.Helper()
	r.calls++
	id := fmt.Sprint(100 + r.calls)
	sid := r.sessions[caps]
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := enginetest.NewMCPRequest(ctx, r.url, "2025-11-25", sid, `{"jsonrpc":"2.0","id":`+id+`,"method":"tools/call","params":{"name":"`+r.tool+`","arguments":{}}}`)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
	decode := func(data string) map[string]json.RawMessage {
		var m map[string]json.RawMessage
		require.True(t, utf8.ValidString(data), "%q", data)
		require.NoError(t, json.Unmarshal([]byte(data), &m), "%s", data)
		require.Empty(t, enginetest.EnvelopeTwice([]byte(data)), "%s", data)
		require.Equal(t, `"2.0"`, string(m["jsonrpc"]), "%s", data)
		return m
	}
	if resp.Header.Get("Content-Type") == "application/json" {
		var body bytes.Buffer
		_, err := body.ReadFrom(resp.Body)
		require.NoError(t, err)
		return nil, decode(body.String())
	}
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	br := bufio.NewReader(resp.Body)
	var data []string
	for {
		line, err := br.ReadString('\n')
		require.NoError(t, err, "the stream ends with the call's response; requests so far %d", len(requests))
		line = strings.TrimRight(line, "\r\n")
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			data = append(data, d)
			continue
		}
		if line != "" || len(data) == 0 || data[0] == "" {
			data = nil
			continue
		}
		msg := strings.Join(data, "\n")
		m := decode(msg)
		data = nil
		if _, ok := m["method"]; !ok {
			require.Equal(t, id, string(m["id"]), "the call's own response: %v", m)
			return requests, m
		}
		if _, ok := m["id"]; !ok {
			continue // a notification
		}
		requests = append(requests, json.RawMessage(msg))
		var method string
		require.NoError(t, json.Unmarshal(m["method"], &method))
		answer, ok := answers[method]
		require.True(t, ok, "a request to the client: %v", m)
		reply, err := enginetest.PostMCP(ctx, r.url, "2025-11-25", sid, `{"jsonrpc":"2.0","id":`+string(m["id"])+`,"result":`+answer+`}`)
		require.NoError(t, err)
		require.Equal(t, 202, reply.Status, "%v", reply.Msg)
	}
}

// legsOf reads result as the shim must, with encoding/json as the
// oracle: when it is an input_required result that has one reading (no
// member named twice at any depth, valid UTF-8), whose inputRequests are
// each a request to the client of a known method, params an object when
// present, an elicitation's mode "form" or "url" or none, and whose
// requestState is a string when present, it returns each request's
// method by key, the requestState's JSON text, and the capability bits
// (capsObject's) they need.
func legsOf(result []byte) (legs map[string]string, state json.RawMessage, need uint8, ok bool) {
	if !utf8.Valid(result) || !json.Valid(result) || enginetest.HasDuplicateNames(result) {
		return nil, nil, 0, false
	}
	// Maps, not structs: encoding/json matches a struct's fields without
	// regard to case, and the gateway does not.
	var r map[string]json.RawMessage
	if json.Unmarshal(result, &r) != nil || string(r["resultType"]) != `"input_required"` {
		return nil, nil, 0, false
	}
	var reqs map[string]map[string]json.RawMessage
	if json.Unmarshal(r["inputRequests"], &reqs) != nil || len(reqs) == 0 {
		return nil, nil, 0, false
	}
	for k := range r {
		if k != "resultType" && k != "inputRequests" && k != "requestState" {
			return nil, nil, 0, false
		}
	}
	state = r["requestState"]
	if state != nil && state[0] != '"' {
		return nil, nil, 0, false
	}
	legs = map[string]string{}
	for key, req := range reqs {
		var method, mode string
		if req == nil || json.Unmarshal(req["method"], &method) != nil {
			return nil, nil, 0, false
		}
		if params := req["params"]; params != nil && string(params) != "null" {
			var p map[string]json.RawMessage
			if json.Unmarshal(params, &p) != nil {
				return nil, nil, 0, false
			}
			if m, has := p["mode"]; has && (json.Unmarshal(m, &mode) != nil || mode == "") {
				return nil, nil, 0, false
			}
			for k := range p {
				if k != "mode" && strings.EqualFold(k, "mode") {
					return nil, nil, 0, false // encoding/json would read it as the mode
				}
			}
		}
		switch {
		case method == "elicitation/create" && (mode == "" || mode == "form"):
			need |= 1
		case method == "elicitation/create" && mode == "url":
			need |= 2
		case method == "sampling/createMessage" && mode == "":
			need |= 4
		case method == "roots/list" && mode == "":
			need |= 8
		default:
			return nil, nil, 0, false
		}
		legs[key] = method
	}
	return legs, state, need, true
}

// FuzzShimRound has a 2025-11-25 client (a session, with the
// capabilities caps picks) call, through the gateway, a tool of a
// 2026-07-28 upstream that answers with a fuzzed result; its retry (a
// call with inputResponses or requestState) gets a complete result. Every
// message on the call's stream is one JSON-RPC message, the requests to
// the client each of a method it declared, under an id of its own. When
// the result is an input_required result with one reading that the
// client can serve, the client is asked each request once, the retry
// carries each answer under its request's key and the requestState byte
// for byte, and the client gets the retry's result; one that names a key,
// inputRequests or requestState twice asks the client nothing. The gateway holds what it held before.
func FuzzShimRound(f *testing.F) {
	form := `{"method":"elicitation/create","params":{"message":"Name?","requestedSchema":{"type":"object"}}}`
	for _, s := range []struct {
		result string
		caps   uint8
	}{
		{`{"resultType":"input_required","inputRequests":{"a":` + form + `},"requestState":"s1"}`, 1},
		{`{"resultType":"input_required","inputRequests":{"a":` + form + `,"b":{"method":"sampling/createMessage","params":{"messages":[],"maxTokens":5}},"c":{"method":"roots/list"}},"requestState":"s\u00e9\"2"}`, 0xf},
		{`{"resultType":"input_required","inputRequests":{"u":{"method":"elicitation/create","params":{"mode":"url","url":"https://x.example/","message":"Sign in"}}}}`, 2},
		{`{"resultType":"input_required","inputRequests":{"u":{"method":"elicitation/create","params":{"mode":"url","url":"https://x.example/","message":"Sign in"}}}}`, 1},
		{`{"resultType":"input_required","inputRequests":{"a":` + form + `,"\u0061":` + form + `}}`, 1},
		{`{"resultType":"input_required","inputRequests":{"a":{"method":"elicitation/create","params":{"mode":"form","mode":"url"}}}}`, 3},
		{`{"resultType":"input_required","inputRequests":{"a":{"method":"elicitation/create","params":{"MODE":"url","url":"https://x.example/","message":"m"}}}}`, 1},
		{`{"resultType":"input_required","inputRequests":{"a":` + form + `},"requestState":"s1","requestState":"s2"}`, 1},
		{`{"resultType":"input_required","inputRequests":{"a":` + form + `},"inputRequests":{}}`, 1},
		{`{"resultType":"input_required","requestState":"again"}`, 0},
		{`{"resultType":"input_required","inputRequests":{"a":{"method":"tools/call"}}}`, 0xf},
		{`{"resultType":"complete","content":[{"type":"text","text":"plain"}]}`, 0},
		{`{"content":[],"resultType":"input_required","resultType":"complete"}`, 0},
		{`[1]`, 0},
	} {
		f.Add([]byte(s.result), s.caps)
		f.Add([]byte(s.result), s.caps|1<<4)
	}
	rigs := [2]*shimRig{newShimRig(f, false), newShimRig(f, true)}
	f.Fuzz(func(t *testing.T, result []byte, caps uint8) {
		// caps' bit 4 puts an mcp proxy between the server and the
		// client kinds.
		r := rigs[caps>>4&1]
		caps &= 0xf
		if len(result) > 8<<10 || !json.Valid(result) {
			// The upstream's message as a whole must be JSON for the
			// result to be one; FuzzGatewayUpstream covers the rest.
			return
		}
		r.up.next(result)
		requests, response := r.call(t, caps)
		retries := r.up.next(nil)
		_, hasResult := response["result"]
		_, hasError := response["error"]
		require.True(t, hasResult != hasError, "exactly one of result and error: %v", response)

		seen := map[string]bool{}
		for _, req := range requests {
			var m map[string]json.RawMessage
			require.NoError(t, json.Unmarshal(req, &m))
			require.False(t, seen[string(m["id"])], "one id per request: %q", requests)
			seen[string(m["id"])] = true
			checkClientRequest(t, caps, req)
		}

		if legs, state, need, ok := legsOf(result); ok && need&caps == need && len(legs) <= 64 {
			require.Len(t, requests, len(legs), "each request asked once")
			require.Len(t, retries, 1, "one retry: %q", retries)
			var retry struct {
				InputResponses map[string]json.RawMessage
				RequestState   json.RawMessage
			}
			require.NoError(t, json.Unmarshal(retries[0], &retry))
			require.Len(t, retry.InputResponses, len(legs), "%s", retries[0])
			for key, method := range legs {
				require.JSONEq(t, answers[method], string(retry.InputResponses[key]), "the answer for %q: %s", key, retries[0])
			}
			require.Equal(t, string(state), string(retry.RequestState), "the requestState byte for byte")
			require.True(t, hasResult, "%v", response)
			require.Contains(t, string(response["result"]), `"text":"done"`)
		}
		var twice struct{ InputRequests json.RawMessage }
		if json.Unmarshal(result, &twice) == nil && len(twice.InputRequests) > 0 && len(enginetest.NamedTwice(twice.InputRequests)) > 0 {
			require.Empty(t, requests, "inputRequests with a key twice asks the client nothing")
		}
		for _, name := range enginetest.NamedTwice(result) {
			if name == "inputRequests" || name == "requestState" {
				require.Empty(t, requests, "a result that names %s twice asks the client nothing", name)
				require.Empty(t, retries, "and is not retried")
			}
		}
		settledStreams(t, r.e, r.base, func() int32 { return 0 })
	})
}
