package server_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	_ "github.com/sluicehq/sluice/binding/echo"
	"github.com/sluicehq/sluice/internal/enginetest"
)

// maxFuzzBody keeps a fuzzed body inside one buffer slot, where the
// server holds it whole and reads all of it before it answers.
const maxFuzzBody = 8 << 10

// FuzzStack posts arbitrary bodies through tcp → http → mcp server →
// echo, in a 2025-11-25 session or stateless at 2026-07-28 with fuzzed
// Mcp-Method and Mcp-Name headers. Every POST is answered as
// enginetest.CheckMCPAnswer holds, and leaves no stream or buffer slot
// held.
func FuzzStack(f *testing.F) {
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{"x":[1,2]}}}`,
		`{"jsonrpc":"2.0","id":"x","method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":-1.5e3,"method":"ping"}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
		`{"jsonrpc":"2.0","id":5,"result":{}}`,
		`{"jsonrpc":"2.0","id":1,"\u0069d":2,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":"\ud800","method":"resources/read","params":{"uri":"a:b"}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		`{"a":`,
		"{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"x\xff\"}",
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"subscriptions/listen","params":{"notifications":{"resourceSubscriptions":["a:b","a:b"],"toolsListChanged":true},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
	} {
		f.Add(false, "", "", []byte(body))
		f.Add(true, "tools/call", "echo", []byte(body))
	}

	base, e := enginetest.StartMCP(f, "stack.yaml", "app0", "\n  app0:\n    type: echo\n    kind: server\n")
	s := &stack{base: base, e: e, client: &http.Client{Timeout: 5 * time.Second}}
	f.Cleanup(s.client.CloseIdleConnections)
	sid := fuzzSession(f, s)

	f.Fuzz(func(t *testing.T, stateless bool, method, name string, body []byte) {
		body = body[:min(len(body), maxFuzzBody)]
		var hdr []string
		version := "2025-11-25"
		if stateless {
			version = "2026-07-28"
			if m := enginetest.HeaderValue(method); m != "" {
				hdr = append(hdr, "Mcp-Method", m)
			}
			if n := enginetest.HeaderValue(name); n != "" {
				hdr = append(hdr, "Mcp-Name", n)
			}
		} else {
			hdr = append(hdr, "Mcp-Session-Id", sid)
		}
		resp, out := s.post(t, "", version, string(body), hdr...)
		enginetest.CheckMCPAnswer(t, body, resp.StatusCode, resp.Header.Get("Content-Type"), out)
		s.client.CloseIdleConnections()
		require.Eventually(t, s.released, 2*time.Second, time.Millisecond, "a worker still holds a buffer slot or a stream")
	})
}

// fuzzSession opens the 2025-11-25 session the fuzzed bodies go to.
func fuzzSession(tb testing.TB, s *stack) string {
	tb.Helper()
	post := func(sid, body string) *http.Response {
		req, err := http.NewRequest(http.MethodPost, s.base, strings.NewReader(body))
		require.NoError(tb, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		}
		resp, err := s.client.Do(req)
		require.NoError(tb, err)
		_, err = io.Copy(io.Discard, resp.Body)
		require.NoError(tb, err)
		resp.Body.Close()
		return resp
	}
	resp := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"fuzz","version":"1"}}}`)
	require.Equal(tb, 200, resp.StatusCode)
	sid := resp.Header.Get("Mcp-Session-Id")
	require.Equal(tb, 202, post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`).StatusCode)
	return sid
}
