package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	_ "github.com/sluicehq/sluice/binding/echo"
	_ "github.com/sluicehq/sluice/binding/http/server"
	_ "github.com/sluicehq/sluice/binding/tcp"
	_ "github.com/sluicehq/sluice/binding/toolkit"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/telemetry"
	"github.com/sluicehq/sluice/internal/enginetest"
	"github.com/sluicehq/sluice/spec"
)

// stack is tcp → http → mcp server → toolkit on a free loopback port,
// driven with net/http.
type stack struct {
	base   string
	e      *engine.Engine
	client *http.Client
}

// startStack starts the stack; options is the mcp server's options block
// (YAML, indented under options:), or "", and opts add to the engine's.
func startStack(t *testing.T, options string, opts ...engine.Option) *stack {
	t.Helper()
	base, e := enginetest.StartMCP(t, "stack.yaml", "app0", options+"\n  app0:\n    type: toolkit\n    kind: server\n", opts...)
	s := &stack{base: base, e: e, client: &http.Client{Timeout: 5 * time.Second}}
	t.Cleanup(s.client.CloseIdleConnections)
	return s
}

// post sends one JSON-RPC body with the headers of a 2025 client.
func (s *stack) post(t *testing.T, session, version, body string, hdr ...string) (*http.Response, string) {
	t.Helper()
	h := []string{"Content-Type", "application/json", "Accept", "application/json, text/event-stream"}
	if session != "" {
		h = append(h, "Mcp-Session-Id", session)
	}
	if version != "" {
		h = append(h, "Mcp-Protocol-Version", version)
	}
	return s.do(t, http.MethodPost, body, append(h, hdr...)...)
}

// get opens session's GET event stream, resuming after the event last
// names when it is not empty; the caller closes the response's body.
func (s *stack) get(t *testing.T, session, last string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, s.base, nil)
	require.NoError(t, err)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", session)
	if last != "" {
		req.Header.Set("Last-Event-ID", last)
	}
	resp, err := s.client.Do(req)
	require.NoError(t, err)
	return resp
}

func (s *stack) do(t *testing.T, method, body string, hdr ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, s.base, strings.NewReader(body))
	require.NoError(t, err)
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i] == "Host" {
			req.Host = hdr[i+1] // net/http sends req.Host, not a Host header
			continue
		}
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := s.client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, string(b)
}

// initialize opens a session and returns its id.
func (s *stack) initialize(t *testing.T, version string) string {
	t.Helper()
	resp, body := s.post(t, "", "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+version+
		`","capabilities":{"elicitation":{}},"clientInfo":{"name":"go-test","version":"1"}}}`)
	require.Equal(t, 200, resp.StatusCode, body)
	sid := resp.Header.Get("Mcp-Session-Id")
	require.Len(t, sid, 32, "128 random bits in hex")
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"`+version+`",
		"capabilities":{"tools":{"listChanged":true},"prompts":{},"resources":{"subscribe":true}},
		"serverInfo":{"name":"sluice","version":"devel"}}}`, body)
	resp, body = s.post(t, sid, version, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	require.Equal(t, 202, resp.StatusCode, body)
	require.Empty(t, body)
	return sid
}

// released reports whether no worker holds a buffer slot or a stream.
func (s *stack) released() bool {
	for i := range s.e.Workers() {
		done := make(chan bool, 1)
		w := s.e.Worker(i)
		w.Dispatch(func() {
			streams, throttles := w.Streams()
			// The tcp and http bindings keep their idle connections.
			done <- w.BufferPool().Acquired() == 0 && streams == throttles
		})
		if !<-done {
			return false
		}
	}
	return true
}

func (s *stack) requireReleased(t *testing.T) {
	t.Helper()
	s.client.CloseIdleConnections()
	require.Eventually(t, s.released, 2*time.Second, 5*time.Millisecond, "a worker still holds a buffer slot")
}

func TestStackSessionFlow(t *testing.T) {
	for _, version := range []string{"2025-06-18", "2025-11-25", "2025-03-26"} {
		t.Run(version, func(t *testing.T) {
			s := startStack(t, "")
			sid := s.initialize(t, version)

			resp, body := s.post(t, sid, version, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
			require.Equal(t, 200, resp.StatusCode, body)
			assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
			var list struct {
				ID     int `json:"id"`
				Result struct {
					Tools []struct{ Name string } `json:"tools"`
				} `json:"result"`
			}
			require.NoError(t, json.Unmarshal([]byte(body), &list), body)
			assert.Equal(t, 2, list.ID)
			require.NotEmpty(t, list.Result.Tools)

			resp, body = s.post(t, sid, version, `{"jsonrpc":"2.0","id":"c-1","method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`)
			require.Equal(t, 200, resp.StatusCode, body)
			assert.JSONEq(t, `{"jsonrpc":"2.0","id":"c-1","result":{"content":[{"type":"text","text":"Echo: hi"}]}}`, body)

			resp, body = s.post(t, sid, version, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"nope","arguments":{}}}`)
			require.Equal(t, 200, resp.StatusCode, body)
			assert.JSONEq(t, `{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"Unknown tool: nope"}}`, body)

			resp, body = s.post(t, sid, version, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"long_running_operation",
				"arguments":{"duration":0.02,"steps":2},"_meta":{"progressToken":"tok"}}}`)
			require.Equal(t, 200, resp.StatusCode, body)
			assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
			events := enginetest.SSEData(body)
			require.Len(t, events, 3, body)
			assert.JSONEq(t, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok","progress":1,"total":2,"message":"Step 1 of 2"}}`, events[0])
			assert.Contains(t, events[2], `"id":4,"result":{"content"`)
			assert.Equal(t, version == "2025-11-25", strings.HasPrefix(body, "id: 4:0\ndata: \n\n"), "priming only at 2025-11-25")

			resp, body = s.post(t, sid, version, `{"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":"sluice://toolkit/readme"}}`)
			require.Equal(t, 200, resp.StatusCode, body)
			assert.Contains(t, body, `"id":5,"result":{"contents":[{"uri":"sluice://toolkit/readme"`)

			resp, body = s.post(t, sid, version, `{"jsonrpc":"2.0","id":6,"method":"prompts/get","params":{"name":"greeting","arguments":{"name":"Ada"}}}`)
			require.Equal(t, 200, resp.StatusCode, body)
			assert.Contains(t, body, `"id":6,"result":{`)

			resp, body = s.post(t, sid, version, `{"jsonrpc":"2.0","id":7,"method":"ping"}`)
			require.Equal(t, 200, resp.StatusCode, body)
			assert.JSONEq(t, `{"jsonrpc":"2.0","id":7,"result":{}}`, body)

			resp, body = s.do(t, http.MethodDelete, "", "Mcp-Session-Id", sid, "Mcp-Protocol-Version", version)
			require.Equal(t, 200, resp.StatusCode, body)
			resp, body = s.post(t, sid, version, `{"jsonrpc":"2.0","id":8,"method":"tools/list"}`)
			require.Equal(t, 404, resp.StatusCode, body)
			s.requireReleased(t)
		})
	}
}

func TestStackCancel(t *testing.T) {
	s := startStack(t, "")
	sid := s.initialize(t, "2025-11-25")
	resp, r := openCall(t, s, sid, 9)
	defer resp.Body.Close()
	cresp, body := s.post(t, sid, "2025-11-25", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9,"reason":"user abort"}}`)
	require.Equal(t, 202, cresp.StatusCode, body)
	rest, err := io.ReadAll(r)
	require.NoError(t, err, "the response ends")
	assert.NotContains(t, string(rest), `"id":9`, "no response to a cancelled request")
	resp.Body.Close()
	s.do(t, http.MethodDelete, "", "Mcp-Session-Id", sid)
	s.requireReleased(t)
}

func TestStackGetStream(t *testing.T) {
	s := startStack(t, "")
	sid := s.initialize(t, "2025-11-25")
	resp := s.get(t, sid, "")
	require.Equal(t, 200, resp.StatusCode)
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	r := bufio.NewReader(resp.Body)
	line, err := r.ReadString('\n')
	require.NoError(t, err)
	assert.Equal(t, "id: :0\n", line, "the priming event")

	// One GET stream per session.
	second, body := s.do(t, http.MethodGet, "", "Accept", "text/event-stream", "Mcp-Session-Id", sid)
	assert.Equal(t, 409, second.StatusCode, body)

	// DELETE ends the GET stream with the session.
	dresp, body := s.do(t, http.MethodDelete, "", "Mcp-Session-Id", sid)
	require.Equal(t, 200, dresp.StatusCode, body)
	_, err = io.ReadAll(r)
	require.NoError(t, err)
	resp.Body.Close()
	s.requireReleased(t)
}

func TestStackStateless(t *testing.T) {
	s := startStack(t, "")
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	h := func(method, name string) []string {
		out := []string{"Mcp-Method", method}
		if name != "" {
			out = append(out, "Mcp-Name", name)
		}
		return out
	}
	resp, body := s.post(t, "", "2026-07-28", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"x"},`+meta+`}}`,
		h("tools/call", "echo")...)
	require.Equal(t, 200, resp.StatusCode, body)
	assert.Empty(t, resp.Header.Get("Mcp-Session-Id"))
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete",
		"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"sluice","version":"devel"}},
		"content":[{"type":"text","text":"Echo: x"}]}}`, body)

	resp, body = s.post(t, "", "2026-07-28", `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{`+meta+`}}`, h("tools/list", "")...)
	require.Equal(t, 200, resp.StatusCode, body)
	// SEP-2549: a list result carries the caching hints the toolkit does not set.
	assert.Contains(t, body, `"result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"sluice","version":"devel"}},"ttlMs":0,"cacheScope":"public","tools":[`)

	resp, body = s.post(t, "", "2026-07-28", `{"jsonrpc":"2.0","id":6,"method":"resources/read","params":{"uri":"sluice://toolkit/readme",`+meta+`}}`,
		h("resources/read", "sluice://toolkit/readme")...)
	require.Equal(t, 200, resp.StatusCode, body)
	assert.Contains(t, body, `"result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"sluice","version":"devel"}},"ttlMs":0,"cacheScope":"public","contents":[`)

	// Mcp-Name in the =?base64?…?= form.
	resp, body = s.post(t, "", "2026-07-28", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"message":"y"},`+meta+`}}`,
		h("tools/call", "=?base64?ZWNobw==?=")...)
	require.Equal(t, 200, resp.StatusCode, body)

	for range 2 { // the second is answered from the worker's cache, on one worker or the other
		resp, body = s.post(t, "", "2026-07-28", `{"jsonrpc":"2.0","id":4,"method":"server/discover","params":{`+meta+`}}`, h("server/discover", "")...)
		require.Equal(t, 200, resp.StatusCode, body)
		assert.JSONEq(t, `{"jsonrpc":"2.0","id":4,"result":{"resultType":"complete",
			"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"sluice","version":"devel"}},
			"ttlMs":0,"cacheScope":"public",
			"supportedVersions":["2026-07-28","2025-11-25","2025-06-18","2025-03-26"],
			"capabilities":{"tools":{"listChanged":true},"prompts":{},"resources":{}}}}`, body)
	}

	resp, body = s.post(t, "", "2026-07-28", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"nope","arguments":{},`+meta+`}}`,
		h("tools/call", "nope")...)
	require.Equal(t, 200, resp.StatusCode, body)
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"Unknown tool: nope"}}`, body)

	// SEP-2164: the toolkit's -32002 "Resource not found" reaches a
	// 2026-07-28 client as -32602, its data intact.
	resp, body = s.post(t, "", "2026-07-28", `{"jsonrpc":"2.0","id":7,"method":"resources/read","params":{"uri":"sluice://toolkit/none",`+meta+`}}`,
		h("resources/read", "sluice://toolkit/none")...)
	require.Equal(t, 200, resp.StatusCode, body)
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"Resource not found","data":{"uri":"sluice://toolkit/none"}}}`, body)
	s.requireReleased(t)
}

// dataSent returns the payload bytes the mcp server has sent (the
// stream.data.sent of mcp0), after a pass of every worker.
func (s *stack) dataSent(t *testing.T) int64 {
	t.Helper()
	enginetest.Settle(t, s.e)
	return enginetest.Metric(s.e, "mcp0", telemetry.StreamDataSent)
}

// TestStackListen opens a 2026-07-28 subscriptions/listen: the toolkit
// can send tools list_changed only, so that is what is acknowledged, and
// the stream stays open with keepalive comments until the client leaves,
// which ends the subscription's lifecycle stream. The engine runs on a
// manual clock: the comment goes out when the interval has passed since
// the acknowledgement, not a millisecond before.
func TestStackListen(t *testing.T) {
	clock := enginetest.NewClock()
	s := startStack(t, "    options:\n      sse:\n        keepalive:\n          interval: PT0.05S\n", engine.WithClock(clock.Now))
	resp, rd := s.listen(t, `9`, `{"toolsListChanged":true,"promptsListChanged":true,"resourcesListChanged":true}`)
	lines := readLines(t, rd, 3)
	// The keepalive was armed with the acknowledgement's write.
	sent := s.dataSent(t)
	clock.Tick(t, s.e, 49*time.Millisecond)
	assert.Equal(t, sent, s.dataSent(t), "nothing within the interval")
	clock.Tick(t, s.e, time.Millisecond)
	lines = append(lines, readLines(t, rd, 1)...)
	assert.Equal(t, []string{"event: message\n",
		`data: {"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"notifications":{"toolsListChanged":true},` +
			`"_meta":{"io.modelcontextprotocol/subscriptionId":9}}}` + "\n", "\n", ":\n"}, lines)
	require.NoError(t, resp.Body.Close())
	s.tickUntilReleased(t, clock, 50*time.Millisecond)
}

// listen POSTs a 2026-07-28 subscriptions/listen with the JSON-RPC id
// and params.notifications given, and returns its event stream's
// response and a reader over it.
func (s *stack) listen(t *testing.T, id, notifications string) (*http.Response, *bufio.Reader) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.base, strings.NewReader(`{"jsonrpc":"2.0","id":`+id+`,"method":"subscriptions/listen","params":{`+
		`"notifications":`+notifications+`,`+
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "subscriptions/listen")
	resp, err := s.client.Do(req)
	require.NoError(t, err)
	require.Equal(t, 200, resp.StatusCode)
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	return resp, bufio.NewReader(resp.Body)
}

// readLines reads n more lines from rd.
func readLines(t *testing.T, rd *bufio.Reader, n int) []string {
	t.Helper()
	var lines []string
	for len(lines) < n {
		line, err := rd.ReadString('\n')
		require.NoError(t, err)
		lines = append(lines, line)
	}
	return lines
}

// tickUntilReleased moves clock a keepalive interval at a time until the
// server has released everything: it learns that a listen's client has
// left when a keepalive meets the closed connection. The close reaches
// the server through the socket, in real time, so the loop is bounded in
// time as well as in ticks: on a busy machine a hundred ticks can pass
// before it arrives.
func (s *stack) tickUntilReleased(t *testing.T, clock *enginetest.Clock, interval time.Duration) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for i := 0; !s.released(); i++ {
		require.True(t, i < 10000 && time.Now().Before(deadline), "the listen stream outlived its client")
		clock.Tick(t, s.e, interval)
		enginetest.Settle(t, s.e)
	}
	s.requireReleased(t)
}

// TestStackInactivity: a session idle for inactivity.timeout expires and
// is gone (404); each request restarts the count. On a manual clock, a
// millisecond either side of each deadline.
func TestStackInactivity(t *testing.T) {
	clock := enginetest.NewClock()
	s := startStack(t, "    options:\n      inactivity:\n        timeout: PT1M\n", engine.WithClock(clock.Now))
	sid := s.initialize(t, "2025-11-25")
	list := func() *http.Response {
		resp, _ := s.post(t, sid, "2025-11-25", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
		return resp
	}
	clock.Tick(t, s.e, time.Minute-time.Millisecond)
	require.Equal(t, 200, list().StatusCode, "idle a millisecond short of the timeout")
	clock.Tick(t, s.e, time.Minute-time.Millisecond)
	require.Equal(t, 200, list().StatusCode, "the request before restarted the count")
	clock.Tick(t, s.e, time.Minute)
	resp, body := s.post(t, sid, "2025-11-25", `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
	assert.Equal(t, 404, resp.StatusCode)
	assert.JSONEq(t, `{"jsonrpc":"2.0","error":{"code":-32001,"message":"Session not found"},"id":null}`, body)
	s.requireReleased(t)
}

// TestStackSettings: the engine settings fix the session id and the
// serverInfo, as Zilla's tests pin them, and set the inactivity timeout,
// which a binding's own option still overrides.
func TestStackSettings(t *testing.T) {
	const fixed = "5ca1ab1e-c0de-4a11-b0a7-000100000000"
	clock := enginetest.NewClock()
	s := startStack(t, "", engine.WithClock(clock.Now),
		engine.WithSetting("zilla.binding.mcp.session.id", fixed),
		engine.WithSetting("mcp.server.name", "zilla"), engine.WithSetting("mcp.server.version", "1.0"),
		engine.WithSetting("mcp.inactivity.timeout", "PT1S"))
	resp, body := s.post(t, "", "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",`+
		`"capabilities":{},"clientInfo":{"name":"go-test","version":"1"}}}`)
	require.Equal(t, 200, resp.StatusCode, body)
	assert.Equal(t, fixed, resp.Header.Get("Mcp-Session-Id"))
	assert.Contains(t, body, `"serverInfo":{"name":"zilla","version":"1.0"}`)
	// A connection each, so that requests reach both workers and those
	// on the other are relayed to the session's owner.
	s.client = &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	for i := range 6 {
		resp, body = s.post(t, fixed, "2025-11-25", fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i+2))
		require.Equal(t, 200, resp.StatusCode, body)
	}
	clock.Tick(t, s.e, time.Second)
	resp, body = s.post(t, fixed, "2025-11-25", `{"jsonrpc":"2.0","id":9,"method":"ping"}`)
	assert.Equal(t, 404, resp.StatusCode, "expired after the setting's timeout: %s", body)
	s.requireReleased(t)

	clock = enginetest.NewClock()
	s = startStack(t, "    options:\n      inactivity:\n        timeout: PT1M\n", engine.WithClock(clock.Now),
		engine.WithSetting("mcp.inactivity.timeout", "PT1S"))
	sid := s.initialize(t, "2025-11-25")
	clock.Tick(t, s.e, time.Second)
	resp, body = s.post(t, sid, "2025-11-25", `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	assert.Equal(t, 200, resp.StatusCode, "the option's timeout wins over the setting: %s", body)
}

// TestStackBadRequests checks the status and body of every request the
// server refuses by itself.
func TestStackBadRequests(t *testing.T) {
	s := startStack(t, "    options:\n      origins: [\"https://app.example\"]\n      limits:\n        body: 4096\n")
	sid := s.initialize(t, "2025-11-25")
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	accept := "application/json, text/event-stream"
	tests := []struct {
		name   string
		method string
		hdr    []string
		body   string
		status int
		want   string // the JSON body, or "" for none
		header []string
	}{
		{"accept json only", "POST", []string{"Accept", "application/json", "Mcp-Session-Id", sid}, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, 406,
			`{"jsonrpc":"2.0","error":{"code":-32000,"message":"Not Acceptable: Client must accept both application/json and text/event-stream"},"id":null}`, nil},
		{"session missing", "POST", []string{"Accept", accept}, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, 400,
			`{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: Mcp-Session-Id header is required"},"id":null}`, nil},
		{"session unknown", "POST", []string{"Accept", accept, "Mcp-Session-Id", "0123"}, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, 404,
			`{"jsonrpc":"2.0","error":{"code":-32001,"message":"Session not found"},"id":null}`, nil},
		{"version unsupported", "POST", []string{"Accept", accept, "Mcp-Session-Id", sid, "Mcp-Protocol-Version", "1999-01-01"}, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, 400,
			`{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: Unsupported protocol version: 1999-01-01 (supported versions: 2026-07-28, 2025-11-25, 2025-06-18, 2025-03-26)"},"id":null}`, nil},
		{"origin forbidden", "POST", []string{"Accept", accept, "Mcp-Session-Id", sid, "Origin", "http://evil.example"}, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, 403,
			`{"jsonrpc":"2.0","error":{"code":-32000,"message":"Forbidden: Origin not allowed"},"id":null}`, nil},
		{"origin allowed", "POST", []string{"Accept", accept, "Mcp-Session-Id", sid, "Origin", "https://app.example"}, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, 200,
			`{"jsonrpc":"2.0","id":1,"result":{}}`, nil},
		{"origin same host", "POST", []string{"Accept", accept, "Mcp-Session-Id", sid, "Origin", "http://" + strings.TrimSuffix(strings.TrimPrefix(s.base, "http://"), "/mcp")}, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, 200,
			`{"jsonrpc":"2.0","id":1,"result":{}}`, nil},
		{"parse error", "POST", []string{"Accept", accept, "Mcp-Session-Id", sid}, `{bad`, 400,
			`{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error: Invalid JSON"},"id":null}`, nil},
		{"empty body", "POST", []string{"Accept", accept, "Mcp-Session-Id", sid}, ``, 400,
			`{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error: Invalid JSON"},"id":null}`, nil},
		{"batch", "POST", []string{"Accept", accept, "Mcp-Session-Id", sid}, `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, 400,
			`{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: batch requests are not supported"},"id":null}`, nil},
		{"not an object", "POST", []string{"Accept", accept, "Mcp-Session-Id", sid}, `"ping"`, 400,
			`{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: a JSON-RPC message must be an object"},"id":null}`, nil},
		{"jsonrpc missing", "POST", []string{"Accept", accept, "Mcp-Session-Id", sid}, `{"id":1,"method":"ping"}`, 400,
			`{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: jsonrpc must be \"2.0\""},"id":null}`, nil},
		{"id null", "POST", []string{"Accept", accept, "Mcp-Session-Id", sid}, `{"jsonrpc":"2.0","id":null,"method":"ping"}`, 400,
			`{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: the id must be a string or an integer"},"id":null}`, nil},
		{"method unknown", "POST", []string{"Accept", accept, "Mcp-Session-Id", sid}, `{"jsonrpc":"2.0","id":1,"method":"nope"}`, 200,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}`, nil},
		{"completion without the capability", "POST", []string{"Accept", accept, "Mcp-Session-Id", sid}, `{"jsonrpc":"2.0","id":1,"method":"completion/complete","params":{}}`, 200,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}`, nil},
		{"logging answered here", "POST", []string{"Accept", accept, "Mcp-Session-Id", sid}, `{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"info"}}`, 200,
			`{"jsonrpc":"2.0","id":1,"result":{}}`, nil},
		{"params not an object", "POST", []string{"Accept", accept, "Mcp-Session-Id", sid}, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":[]}`, 200,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params: params must be an object"}}`, nil},
		{"tool name missing", "POST", []string{"Accept", accept, "Mcp-Session-Id", sid}, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}`, 200,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params: name must be a string"}}`, nil},
		{"cursor not a string", "POST", []string{"Accept", accept, "Mcp-Session-Id", sid}, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":1}}`, 200,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params: cursor must be a string"}}`, nil},
		{"initialize params missing", "POST", []string{"Accept", accept}, `{"jsonrpc":"2.0","id":1,"method":"initialize"}`, 200,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params: params must be an object"}}`, nil},
		{"body too large", "POST", []string{"Accept", accept, "Mcp-Session-Id", sid}, `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("x", 5000) + `"}}`, 413,
			`{"jsonrpc":"2.0","error":{"code":-32000,"message":"Payload Too Large: the request body exceeds the limit"},"id":null}`, nil},
		{"put", "PUT", []string{"Accept", accept}, ``, 405,
			`{"jsonrpc":"2.0","error":{"code":-32000,"message":"Method Not Allowed"},"id":null}`, []string{"Allow", "GET, POST, DELETE"}},
		{"get without accept", "GET", []string{"Mcp-Session-Id", sid}, ``, 406,
			`{"jsonrpc":"2.0","error":{"code":-32000,"message":"Not Acceptable: Client must accept text/event-stream"},"id":null}`, nil},
		{"get without session", "GET", []string{"Accept", "text/event-stream"}, ``, 400,
			`{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: Mcp-Session-Id header is required"},"id":null}`, nil},
		{"delete unknown", "DELETE", []string{"Mcp-Session-Id", "nope"}, ``, 404,
			`{"jsonrpc":"2.0","error":{"code":-32001,"message":"Session not found"},"id":null}`, nil},
		{"2026 get", "GET", []string{"Accept", "text/event-stream", "Mcp-Protocol-Version", "2026-07-28"}, ``, 405,
			`{"jsonrpc":"2.0","error":{"code":-32000,"message":"Method Not Allowed"},"id":null}`, []string{"Allow", "POST"}},
		{"2026 method header missing", "POST", []string{"Accept", accept, "Mcp-Protocol-Version", "2026-07-28"}, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + meta + `}}`, 400,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"Header mismatch: the Mcp-Method header is required"}}`, nil},
		{"2026 method mismatch", "POST", []string{"Accept", accept, "Mcp-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/list"}, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo",` + meta + `}}`, 400,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"Header mismatch: Mcp-Method header value 'tools/list' does not match body value 'tools/call'"}}`, nil},
		{"2026 name mismatch", "POST", []string{"Accept", accept, "Mcp-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", "add"}, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo",` + meta + `}}`, 400,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"Header mismatch: Mcp-Name header value 'add' does not match body value 'echo'"}}`, nil},
		{"2026 meta missing", "POST", []string{"Accept", accept, "Mcp-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/list"}, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, 400,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params: _meta[\"io.modelcontextprotocol/protocolVersion\"] is required"}}`, nil},
		{"2026 capabilities missing", "POST", []string{"Accept", accept, "Mcp-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/list"}, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, 400,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params: _meta[\"io.modelcontextprotocol/clientCapabilities\"] is required"}}`, nil},
		{"2026 meta version mismatch", "POST", []string{"Accept", accept, "Mcp-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/list"}, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25","io.modelcontextprotocol/clientCapabilities":{}}}}`, 400,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"Header mismatch: MCP-Protocol-Version header value '2026-07-28' does not match body value \"2025-11-25\""}}`, nil},
		{"2026 method unknown", "POST", []string{"Accept", accept, "Mcp-Protocol-Version", "2026-07-28", "Mcp-Method", "initialize"}, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, 404,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}`, nil},
		{"2026 version unsupported", "POST", []string{"Accept", accept, "Mcp-Protocol-Version", "2099-01-01", "Mcp-Method", "tools/list"}, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, 400,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28","2025-11-25","2025-06-18","2025-03-26"],"requested":"2099-01-01"}}}`, nil},
		{"2026 discover meta missing", "POST", []string{"Accept", accept, "Mcp-Protocol-Version", "2026-07-28", "Mcp-Method", "server/discover"}, `{"jsonrpc":"2.0","id":101,"method":"server/discover","params":{}}`, 400,
			`{"jsonrpc":"2.0","id":101,"error":{"code":-32602,"message":"Invalid params: _meta[\"io.modelcontextprotocol/protocolVersion\"] is required"}}`, nil},
		{"2026 discover version missing", "POST", []string{"Accept", accept, "Mcp-Protocol-Version", "2026-07-28", "Mcp-Method", "server/discover"}, `{"jsonrpc":"2.0","id":102,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{}}}}`, 400,
			`{"jsonrpc":"2.0","id":102,"error":{"code":-32602,"message":"Invalid params: _meta[\"io.modelcontextprotocol/protocolVersion\"] is required"}}`, nil},
		{"2026 discover capabilities missing", "POST", []string{"Accept", accept, "Mcp-Protocol-Version", "2026-07-28", "Mcp-Method", "server/discover"}, `{"jsonrpc":"2.0","id":104,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, 400,
			`{"jsonrpc":"2.0","id":104,"error":{"code":-32602,"message":"Invalid params: _meta[\"io.modelcontextprotocol/clientCapabilities\"] is required"}}`, nil},
		{"2026 discover version mismatch", "POST", []string{"Accept", accept, "Mcp-Protocol-Version", "2026-07-28", "Mcp-Method", "server/discover"}, `{"jsonrpc":"2.0","id":302,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"v999.0.0","io.modelcontextprotocol/clientCapabilities":{}}}}`, 400,
			`{"jsonrpc":"2.0","id":302,"error":{"code":-32020,"message":"Header mismatch: MCP-Protocol-Version header value '2026-07-28' does not match body value \"v999.0.0\""}}`, nil},
		{"2026 listen notifications missing", "POST", []string{"Accept", accept, "Mcp-Protocol-Version", "2026-07-28", "Mcp-Method", "subscriptions/listen"}, `{"jsonrpc":"2.0","id":7,"method":"subscriptions/listen","params":{` + meta + `}}`, 400,
			`{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"Invalid params: missing required 'notifications' field"}}`, nil},
		{"2026 listen notifications not an object", "POST", []string{"Accept", accept, "Mcp-Protocol-Version", "2026-07-28", "Mcp-Method", "subscriptions/listen"}, `{"jsonrpc":"2.0","id":7,"method":"subscriptions/listen","params":{"notifications":true,` + meta + `}}`, 400,
			`{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"Invalid params: missing required 'notifications' field"}}`, nil},
		{"2026 listen meta missing", "POST", []string{"Accept", accept, "Mcp-Protocol-Version", "2026-07-28", "Mcp-Method", "subscriptions/listen"}, `{"jsonrpc":"2.0","id":7,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true}}}`, 400,
			`{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"Invalid params: _meta[\"io.modelcontextprotocol/protocolVersion\"] is required"}}`, nil},
		{"2026 listen nothing agreed", "POST", []string{"Accept", accept, "Mcp-Protocol-Version", "2026-07-28", "Mcp-Method", "subscriptions/listen"}, `{"jsonrpc":"2.0","id":"l-1","method":"subscriptions/listen","params":{"notifications":{"promptsListChanged":true},` + meta + `}}`, 200,
			`{"jsonrpc":"2.0","id":"l-1","result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":"l-1","io.modelcontextprotocol/serverInfo":{"name":"sluice","version":"devel"}}}}`, nil},
		{"2026 listen resourceSubscriptions not an array", "POST", []string{"Accept", accept, "Mcp-Protocol-Version", "2026-07-28", "Mcp-Method", "subscriptions/listen"}, `{"jsonrpc":"2.0","id":7,"method":"subscriptions/listen","params":{"notifications":{"resourceSubscriptions":"file:///a"},` + meta + `}}`, 400,
			`{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"Invalid params: resourceSubscriptions must be an array of strings"}}`, nil},
		{"2026 listen resourceSubscriptions not strings", "POST", []string{"Accept", accept, "Mcp-Protocol-Version", "2026-07-28", "Mcp-Method", "subscriptions/listen"}, `{"jsonrpc":"2.0","id":7,"method":"subscriptions/listen","params":{"notifications":{"resourceSubscriptions":["file:///a",1]},` + meta + `}}`, 400,
			`{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"Invalid params: resourceSubscriptions must be an array of strings"}}`, nil},
		{"2026 listen resource uri empty", "POST", []string{"Accept", accept, "Mcp-Protocol-Version", "2026-07-28", "Mcp-Method", "subscriptions/listen"}, `{"jsonrpc":"2.0","id":7,"method":"subscriptions/listen","params":{"notifications":{"resourceSubscriptions":[""]},` + meta + `}}`, 400,
			`{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"Invalid params: a resource uri is empty or too long"}}`, nil},
		{"2026 listen member twice", "POST", []string{"Accept", accept, "Mcp-Protocol-Version", "2026-07-28", "Mcp-Method", "subscriptions/listen"}, `{"jsonrpc":"2.0","id":7,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":false,"tools\u004cistChanged":true},` + meta + `}}`, 400,
			`{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"Invalid params: duplicate member \"toolsListChanged\""}}`, nil},
		{"2025 listen", "POST", []string{"Accept", accept, "Mcp-Session-Id", sid}, `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{}}}`, 200,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}`, nil},
		{"content-type text/plain", "POST", []string{"Content-Type", "text/plain", "Accept", accept, "Mcp-Session-Id", sid}, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, 415,
			`{"jsonrpc":"2.0","error":{"code":-32000,"message":"Unsupported Media Type: Content-Type must be application/json"},"id":null}`, nil},
		{"content-type form", "POST", []string{"Content-Type", "application/x-www-form-urlencoded", "Accept", accept}, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, 415,
			`{"jsonrpc":"2.0","error":{"code":-32000,"message":"Unsupported Media Type: Content-Type must be application/json"},"id":null}`, nil},
		{"content-type missing", "POST", []string{"Content-Type", "", "Accept", accept, "Mcp-Session-Id", sid}, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, 415,
			`{"jsonrpc":"2.0","error":{"code":-32000,"message":"Unsupported Media Type: Content-Type must be application/json"},"id":null}`, nil},
		{"content-type in a parameter", "POST", []string{"Content-Type", "text/plain; a=application/json", "Accept", accept, "Mcp-Session-Id", sid}, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, 415,
			`{"jsonrpc":"2.0","error":{"code":-32000,"message":"Unsupported Media Type: Content-Type must be application/json"},"id":null}`, nil},
		{"content-type json suffix", "POST", []string{"Content-Type", "application/jsonx", "Accept", accept, "Mcp-Session-Id", sid}, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, 415,
			`{"jsonrpc":"2.0","error":{"code":-32000,"message":"Unsupported Media Type: Content-Type must be application/json"},"id":null}`, nil},
		{"content-type charset", "POST", []string{"Content-Type", "Application/JSON ; charset=utf-8", "Accept", accept, "Mcp-Session-Id", sid}, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, 200,
			`{"jsonrpc":"2.0","id":1,"result":{}}`, nil},
		{"content-type after accept", "POST", []string{"Content-Type", "text/plain", "Accept", "application/json", "Mcp-Session-Id", sid}, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, 406,
			`{"jsonrpc":"2.0","error":{"code":-32000,"message":"Not Acceptable: Client must accept both application/json and text/event-stream"},"id":null}`, nil},
		{"content-type after size", "POST", []string{"Content-Type", "text/plain", "Accept", accept, "Mcp-Session-Id", sid}, `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("x", 5000) + `"}}`, 413,
			`{"jsonrpc":"2.0","error":{"code":-32000,"message":"Payload Too Large: the request body exceeds the limit"},"id":null}`, nil},
		{"duplicate method", "POST", []string{"Accept", accept, "Mcp-Session-Id", sid}, `{"jsonrpc":"2.0","id":1,"method":"tools/list","\u006dethod":"ping"}`, 400,
			`{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: duplicate member \"method\""},"id":null}`, nil},
		{"duplicate id", "POST", []string{"Accept", accept, "Mcp-Session-Id", sid}, `{"jsonrpc":"2.0","id":1,"method":"ping","id":2}`, 400,
			`{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: duplicate member \"id\""},"id":null}`, nil},
		{"duplicate result", "POST", []string{"Accept", accept, "Mcp-Session-Id", sid}, `{"jsonrpc":"2.0","id":1,"result":{},"result":{"action":"accept"}}`, 400,
			`{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: duplicate member \"result\""},"id":null}`, nil},
		{"duplicate tool name", "POST", []string{"Accept", accept, "Mcp-Session-Id", sid}, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","name":"add"}}`, 200,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params: duplicate member \"name\""}}`, nil},
		{"duplicate requestState", "POST", []string{"Accept", accept, "Mcp-Session-Id", sid}, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","requestState":"a","requestState":"b"}}`, 200,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params: duplicate member \"requestState\""}}`, nil},
		{"duplicate inputResponses", "POST", []string{"Accept", accept, "Mcp-Session-Id", sid}, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","inputResponses":{"7":{"action":"accept"}},"inputResponses":{}}}`, 200,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params: duplicate member \"inputResponses\""}}`, nil},
		{"duplicate initialize version", "POST", []string{"Accept", accept}, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"protocolVersion":"2025-03-26"}}`, 200,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params: duplicate member \"protocolVersion\""}}`, nil},
		{"2026 duplicate meta version", "POST", []string{"Accept", accept, "Mcp-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/list"}, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/protocolVersion":"2025-11-25"}}}`, 400,
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params: duplicate member \"io.modelcontextprotocol/protocolVersion\""}}`, nil},
		{"2026 notification", "POST", []string{"Accept", accept, "Mcp-Protocol-Version", "2026-07-28"}, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`, 202, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hdr := tt.hdr
			if tt.method == "POST" && !slices.Contains(hdr, "Content-Type") {
				hdr = append([]string{"Content-Type", "application/json"}, hdr...)
			}
			resp, body := s.do(t, tt.method, tt.body, hdr...)
			assert.Equal(t, tt.status, resp.StatusCode, body)
			if tt.want == "" {
				assert.Empty(t, body)
			} else {
				assert.JSONEq(t, tt.want, body)
				assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
			}
			for i := 0; i+1 < len(tt.header); i += 2 {
				assert.Equal(t, tt.header[i+1], resp.Header.Get(tt.header[i]))
			}
		})
	}
	s.do(t, http.MethodDelete, "", "Mcp-Session-Id", sid)
	s.requireReleased(t)
}

// TestStackLargeBodies sends bodies beyond one buffer slot: their params
// stream through to the application. The toolkit takes params of one slot
// at most: what it answers shows what reached it.
func TestStackLargeBodies(t *testing.T) {
	s := startStack(t, "")
	sid := s.initialize(t, "2025-11-25")
	big := strings.Repeat("0123456789abcdef", 6<<10) // 96 KiB
	tooLarge := `{"code":-32602,"message":"Invalid params: too large"}`

	resp, body := s.post(t, sid, "2025-11-25", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"`+big+`"}}}`)
	require.Equal(t, 200, resp.StatusCode, body)
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":1,"error":`+tooLarge+`}`, body)

	// The id after the params, and the name too.
	resp, body = s.post(t, sid, "2025-11-25", `{"jsonrpc":"2.0","method":"tools/call","params":{"arguments":{"message":"`+big+`"},"name":"echo"},"id":"late"}`)
	require.Equal(t, 200, resp.StatusCode, body)
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":"late","error":`+tooLarge+`}`, body)

	// Params before the method cannot be routed before they pass.
	resp, body = s.post(t, sid, "2025-11-25", `{"jsonrpc":"2.0","id":2,"params":{"name":"echo","arguments":{"message":"`+big+`"}},"method":"tools/call"}`)
	require.Equal(t, 400, resp.StatusCode, body)
	assert.JSONEq(t, `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: in a large body, method must come before params"},"id":null}`, body)

	// 2026-07-28 with its _meta in the head.
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	resp, body = s.post(t, "", "2026-07-28", `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo",`+meta+`,"arguments":{"message":"`+big+`"}}}`,
		"Mcp-Method", "tools/call", "Mcp-Name", "echo")
	require.Equal(t, 200, resp.StatusCode, body)
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":4,"error":`+tooLarge+`}`, body)
	// … and with it at the end, where it cannot be checked in time.
	resp, body = s.post(t, "", "2026-07-28", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"message":"`+big+`"},`+meta+`}}`,
		"Mcp-Method", "tools/call", "Mcp-Name", "echo")
	require.Equal(t, 413, resp.StatusCode, body)

	// A member after the params larger than a slot drains as it is read.
	resp, body = s.post(t, sid, "2025-11-25", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}},"x":"`+big+`"}`)
	require.Equal(t, 200, resp.StatusCode, body)
	assert.Contains(t, body, `"id":7,"result":{"content":[{"type":"text","text":"Echo: hi"}]`)
	// … unless the id comes after it: the id cannot be read in time.
	resp, body = s.post(t, sid, "2025-11-25", `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}},"x":"`+big+`","id":8}`)
	require.Equal(t, 413, resp.StatusCode, "%s", body)

	// Beyond limits.body, announced by content-length.
	resp, body = s.post(t, sid, "2025-11-25", `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"echo","arguments":{"message":"`+strings.Repeat(big, 12)+`"}}}`)
	require.Equal(t, 413, resp.StatusCode, body)

	s.do(t, http.MethodDelete, "", "Mcp-Session-Id", sid)
	s.requireReleased(t)
}

// TestStackTooLargeCloses: a body beyond the mcp server's limits.body
// (below the http server's) is answered 413 at once, and the response
// closes the connection rather than have the http server read the rest.
func TestStackTooLargeCloses(t *testing.T) {
	s := startStack(t, "    options:\n      limits:\n        body: 65536")
	sid := s.initialize(t, "2025-11-25")
	resp, body := s.post(t, sid, "2025-11-25", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"`+strings.Repeat("x", 200<<10)+`"}}}`)
	require.Equal(t, 413, resp.StatusCode, body)
	assert.True(t, resp.Close, "Connection: close")
	s.do(t, http.MethodDelete, "", "Mcp-Session-Id", sid)
	s.requireReleased(t)
}

// TestStackAnswerBeforeBodyEnd: a call whose body streams is answered
// once its params have passed, before the rest of its body (a member after
// the params) has come. The http server reads and drops that rest, and the
// connection, which the response kept alive, carries the next request.
func TestStackAnswerBeforeBodyEnd(t *testing.T) {
	for _, late := range []bool{false, true} {
		t.Run(fmt.Sprint("late=", late), func(t *testing.T) { answerBeforeBodyEnd(t, late) })
	}
}

// answerBeforeBodyEnd is TestStackAnswerBeforeBodyEnd; when late, the
// client sends no more of the body, and once the http server's
// body-timeout (60 s) has passed, the connection closes.
func answerBeforeBodyEnd(t *testing.T, late bool) {
	clock := enginetest.NewClock()
	s := startStack(t, "", engine.WithClock(clock.Now))
	sid := s.initialize(t, "2025-11-25")
	u, err := url.Parse(s.base)
	require.NoError(t, err)
	conn, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.SetDeadline(time.Now().Add(10*time.Second)))
	r := bufio.NewReader(conn)
	head := func(body int) string {
		return "POST /mcp HTTP/1.1\r\nHost: " + u.Host + "\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n" +
			"Mcp-Session-Id: " + sid + "\r\nMcp-Protocol-Version: 2025-11-25\r\nContent-Length: " + fmt.Sprint(body) + "\r\n\r\n"
	}
	first := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}},"x":"` + strings.Repeat("x", 40<<10)
	rest := strings.Repeat("y", 56<<10) + `"}`
	_, err = io.WriteString(conn, head(len(first)+len(rest))+first)
	require.NoError(t, err)
	resp, err := http.ReadResponse(r, nil)
	require.NoError(t, err, "the answer comes before the body's end")
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, 200, resp.StatusCode, "%s", body)
	assert.Contains(t, string(body), `"id":7,"result":{"content":[{"type":"text","text":"Echo: hi"}]`)
	require.False(t, resp.Close, "the response keeps the connection")

	if late {
		// The server may still be reading the first part when the answer
		// comes, and each read restarts the body-timeout: tick past it
		// until the connection closes, a bounded number of times, each
		// waiting a while for the close.
		var err error
		for range 50 {
			clock.Tick(t, s.e, 61*time.Second)
			require.NoError(t, conn.SetReadDeadline(time.Now().Add(200*time.Millisecond)))
			if _, err = r.ReadByte(); err == nil {
				t.Fatal("a byte after the response, where the connection should close")
			}
			var ne net.Error
			if !errors.As(err, &ne) || !ne.Timeout() {
				return // closed
			}
		}
		t.Fatalf("the connection was left open past the body-timeout: %v", err)
	}
	ping := `{"jsonrpc":"2.0","id":8,"method":"ping"}`
	_, err = io.WriteString(conn, rest+head(len(ping))+ping)
	require.NoError(t, err)
	resp, err = http.ReadResponse(r, nil)
	require.NoError(t, err, "the connection carries the next request")
	body, err = io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":8,"result":{}}`, string(body))
}

// TestStackResume cuts an event stream short and resumes it with GET and
// Last-Event-ID (MCP.md §1.2): the events after that id are replayed, and
// the rest follow, the response included. The request's id is a string
// with a ':', a space and non-ASCII, which its event ids encode.
func TestStackResume(t *testing.T) {
	s := startStack(t, "")
	sid := s.initialize(t, "2025-11-25")
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	req, err := http.NewRequest(http.MethodPost, s.base, strings.NewReader(`{"jsonrpc":"2.0","id":"job:1 é","method":"tools/call",
		"params":{"name":"long_running_operation","arguments":{"duration":0.6,"steps":3},"_meta":{"progressToken":"t"}}}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	resp, err := client.Do(req)
	require.NoError(t, err)
	r := bufio.NewReader(resp.Body)
	var last string
	for { // up to the first progress event, and its id
		line, err := r.ReadString('\n')
		require.NoError(t, err)
		if id, ok := strings.CutPrefix(line, "id: "); ok {
			last = strings.TrimSpace(id)
		}
		if strings.Contains(line, "notifications/progress") {
			break
		}
	}
	require.Equal(t, "job%3A1%20%C3%A9:1", last)
	resp.Body.Close() // the client goes away; the call goes on
	tr.CloseIdleConnections()

	gresp := s.get(t, sid, last)
	defer gresp.Body.Close()
	require.Equal(t, 200, gresp.StatusCode)
	gr := bufio.NewReader(gresp.Body)
	var data []string
	for len(data) < 3 {
		line, err := gr.ReadString('\n')
		require.NoError(t, err)
		if d, ok := strings.CutPrefix(line, "data: "); ok && strings.TrimSpace(d) != "" {
			data = append(data, d)
		}
	}
	assert.Contains(t, data[0], `"progress":2`)
	assert.Contains(t, data[1], `"progress":3`)
	assert.Contains(t, data[2], `"id":"job:1 é","result":{"content"`)
	gresp.Body.Close()
	s.do(t, http.MethodDelete, "", "Mcp-Session-Id", sid)
	s.requireReleased(t)
}

// TestStackResumeUnknown: a Last-Event-ID that names no stream of the
// session, or is of another form, opens the GET stream as a fresh one,
// priming event first, rather than resuming anything.
func TestStackResumeUnknown(t *testing.T) {
	s := startStack(t, "")
	for _, last := range []string{"nope:3", "1-1", "event-99", "2:x"} {
		sid := s.initialize(t, "2025-11-25")
		resp := s.get(t, sid, last)
		require.Equal(t, 200, resp.StatusCode, last)
		line, err := bufio.NewReader(resp.Body).ReadString('\n')
		require.NoError(t, err)
		assert.Equal(t, "id: :0\n", line, "the priming event for %q", last)
		s.do(t, http.MethodDelete, "", "Mcp-Session-Id", sid)
		resp.Body.Close()
	}
	s.requireReleased(t)
}

// TestStackOptions checks versions and get.
func TestStackOptions(t *testing.T) {
	s := startStack(t, "    options:\n      versions: [2025-11-25]\n      get: false\n")
	resp, body := s.post(t, "", "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{}}}`)
	require.Equal(t, 200, resp.StatusCode, body)
	assert.Contains(t, body, `"protocolVersion":"2025-11-25"`, "the server's latest when the client's is not enabled")
	sid := resp.Header.Get("Mcp-Session-Id")
	resp, body = s.do(t, http.MethodGet, "", "Accept", "text/event-stream", "Mcp-Session-Id", sid)
	assert.Equal(t, 405, resp.StatusCode, body)
	assert.Equal(t, "POST, DELETE", resp.Header.Get("Allow"))
	resp, body = s.post(t, sid, "2025-06-18", `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	assert.Equal(t, 400, resp.StatusCode, body)
	assert.Contains(t, body, "Unsupported protocol version: 2025-06-18 (supported versions: 2025-11-25)")
	resp, body = s.post(t, "", "2026-07-28", `{"jsonrpc":"2.0","id":3,"method":"server/discover"}`, "Mcp-Method", "server/discover")
	assert.Equal(t, 400, resp.StatusCode, body)
	assert.Contains(t, body, `"code":-32022`)
	s.do(t, http.MethodDelete, "", "Mcp-Session-Id", sid)
	s.requireReleased(t)
}

// TestStackCancelAfterDisconnect cancels a request whose client has gone
// already, as SDKs do when a call's context ends: the request is released
// once, and the session and the worker go on serving.
func TestStackCancelAfterDisconnect(t *testing.T) {
	s := startStack(t, "")
	sid := s.initialize(t, "2025-11-25")
	for i := range 3 {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.base, strings.NewReader(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call",
			"params":{"name":"long_running_operation","arguments":{"duration":5,"steps":5}}}`, 100+i)))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", sid)
		_, err = s.client.Do(req)
		cancel()
		require.Error(t, err)
		resp, body := s.post(t, sid, "2025-11-25", fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d}}`, 100+i))
		require.Equal(t, 202, resp.StatusCode, body)
	}
	for i := range 5 {
		resp, body := s.post(t, sid, "2025-11-25", fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"add","arguments":{"a":%d,"b":1}}}`, i, i))
		require.Equal(t, 200, resp.StatusCode, body)
		assert.Contains(t, body, fmt.Sprintf(`"id":%d,"result"`, i))
	}
	s.do(t, http.MethodDelete, "", "Mcp-Session-Id", sid)
	s.requireReleased(t)
}

// TestScenarios plays scripts/mcp: each pair peer to peer, then each
// network client script into the mcp server binding, net0, with the
// application server script, if any, as its exit (see
// spec.RunServerScenarios for the configurations).
func TestScenarios(t *testing.T) {
	spec.RunServerScenarios(t, filepath.Join("..", "..", "..", "scripts", "mcp"))
}

// TestScenarioSettings plays session.fixed with the session id and server
// name fixed by engine settings, as Zilla's tests fix them, the scripts
// expecting those values through their properties.
func TestScenarioSettings(t *testing.T) {
	const fixed = "5ca1ab1e-c0de-4a11-b0a7-000100000000"
	lib := filepath.Join("..", "..", "..", "scripts", "mcp")
	setup := spec.Config(filepath.Join(lib, "config", "server.settings.yaml"),
		spec.Setting("zilla.binding.mcp.session.id", fixed), spec.Setting("mcp.server.name", "zilla"),
		spec.Override("sessionId", fixed), spec.Override("serverName", "zilla"))
	spec.Run(t, setup, filepath.Join(lib, "streams", "network", "session.fixed", "client"),
		filepath.Join(lib, "streams", "application", "session.fixed", "server"))
}

// TestHostForbidden: with options.hosts, a request for another host gets
// 403 naming the Host, not the Origin (there is none), and a listed host
// is served (the http server adds the default port to :authority, as
// Zilla's does).
func TestHostForbidden(t *testing.T) {
	s := startStack(t, "    options:\n      hosts: [\"mcp.example:80\"]\n")
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	resp, body := s.post(t, "", "", init, "Host", "mcp.example")
	assert.Equal(t, 200, resp.StatusCode, body)
	resp, body = s.post(t, "", "", init, "Host", "evil.example")
	assert.Equal(t, 403, resp.StatusCode)
	assert.JSONEq(t, `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Forbidden: Host not allowed"},"id":null}`, body)
}

// TestGetStreamFreedOnClose: when the client closes the connection of its
// GET stream, the session's GET slot is free at once: a new GET is taken
// (200, not 409 for a stream still thought open).
func TestGetStreamFreedOnClose(t *testing.T) {
	s := startStack(t, "")
	sid := s.initialize(t, "2025-11-25")
	open := func() *http.Response {
		req, err := http.NewRequest(http.MethodGet, s.base, nil)
		require.NoError(t, err)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
		resp, err := c.Do(req)
		require.NoError(t, err)
		return resp
	}
	first := open()
	require.Equal(t, 200, first.StatusCode)
	require.NoError(t, first.Body.Close()) // closes the connection: the body is a stream
	var statuses []int
	ok := assert.Eventually(t, func() bool {
		resp := open()
		statuses = append(statuses, resp.StatusCode)
		resp.Body.Close()
		return resp.StatusCode == 200
	}, 2*time.Second, 20*time.Millisecond, "a GET after the first one's connection closed")
	if !ok {
		t.Logf("statuses: %v", statuses[:min(len(statuses), 5)])
	}
}

// TestStackListenResources opens a subscriptions/listen for twenty
// resource uris, one of them named twice: the toolkit takes subscriptions,
// so the server subscribes each uri once, eight at a time, and the
// acknowledgement names all twenty, in the order asked. The client leaving
// ends the subscription and releases everything (the server learns of it
// when a keepalive meets the closed connection, as in TestStackListen).
func TestStackListenResources(t *testing.T) {
	clock := enginetest.NewClock()
	s := startStack(t, "    options:\n      sse:\n        keepalive:\n          interval: PT0.05S\n", engine.WithClock(clock.Now))
	var uris []string
	for i := range 20 {
		uris = append(uris, fmt.Sprintf("file:///r%02d", i))
	}
	asked, _ := json.Marshal(append(uris, uris[3]))
	resp, rd := s.listen(t, `"r"`, `{"resourceSubscriptions":`+string(asked)+`}`)
	lines := readLines(t, rd, 3)
	agreed, _ := json.Marshal(uris)
	assert.Equal(t, []string{"event: message\n",
		`data: {"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"notifications":{"resourceSubscriptions":` + string(agreed) + `},` +
			`"_meta":{"io.modelcontextprotocol/subscriptionId":"r"}}}` + "\n", "\n"}, lines)
	require.NoError(t, resp.Body.Close())
	s.tickUntilReleased(t, clock, 50*time.Millisecond)
}
