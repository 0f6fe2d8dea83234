package server_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/internal/enginetest"
)

// TestStackDuplicatesStreaming: a body beyond one buffer slot streams
// its params to the application as they arrive; a second envelope
// member in its head is refused as in a body held whole (400 -32600, no
// id), before any params pass.
func TestStackDuplicatesStreaming(t *testing.T) {
	s := startStack(t, "")
	sid := s.initialize(t, "2025-11-25")
	big := strings.Repeat("0123456789abcdef", 6<<10) // 96 KiB
	for _, tc := range []struct{ body, member string }{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","method":"tools/list","params":{"name":"echo","arguments":{"message":"` + big + `"}}}`, "method"},
		{`{"jsonrpc":"2.0","id":2,"\u0069d":3,"method":"tools/call","params":{"name":"echo","arguments":{"message":"` + big + `"}}}`, "id"},
	} {
		resp, body := s.post(t, sid, "2025-11-25", tc.body)
		assert.Equal(t, 400, resp.StatusCode, body)
		assert.JSONEq(t, `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: duplicate member \"`+tc.member+`\""},"id":null}`, body)
	}
	// The session goes on.
	resp, body := s.post(t, sid, "2025-11-25", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`)
	require.Equal(t, 200, resp.StatusCode, body)
	assert.Contains(t, body, `"text":"Echo: hi"`)
	s.do(t, http.MethodDelete, "", "Mcp-Session-Id", sid)
	s.requireReleased(t)
}

// TestStackLoneSurrogates: the server reads a lone surrogate escape as
// encoding/json does, as U+FFFD, and the params the application gets say
// so; an escaped backslash before "ud800" is text, and a surrogate pair
// is kept. The id comes back as it was spelled.
func TestStackLoneSurrogates(t *testing.T) {
	s := startStack(t, "")
	sid := s.initialize(t, "2025-11-25")
	resp, body := s.post(t, sid, "2025-11-25", `{"jsonrpc":"2.0","id":"\ud800","method":"tools/call","params":{"name":"echo","arguments":{"message":"a\ud800b\\ud800c\ud83d\ude00\udc00"}}}`)
	require.Equal(t, 200, resp.StatusCode, body)
	events := enginetest.SSEData(body)
	if len(events) == 0 {
		events = []string{body}
	}
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":"\ud800","result":{"content":[{"type":"text","text":"Echo: a\ufffdb\\ud800c😀\ufffd"}]}}`, events[len(events)-1])
	assert.Contains(t, events[len(events)-1], `"id":"\ud800"`)
	s.do(t, http.MethodDelete, "", "Mcp-Session-Id", sid)
	s.requireReleased(t)
}

// TestStackLoneSurrogatesStreaming: params that stream through (a body
// beyond one 32 KiB slot) have their lone surrogates rewritten as they
// pass, an escape cut by the slot's end included; a pair is kept. The
// echo binding answers with the params it got.
func TestStackLoneSurrogatesStreaming(t *testing.T) {
	base, e := enginetest.StartMCP(t, "stack.yaml", "app0", "\n  app0:\n    type: echo\n    kind: server\n")
	s := &stack{base: base, e: e, client: &http.Client{Timeout: 5 * time.Second}}
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	head := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo",` + meta + `,"arguments":{"message":"`
	// The first \ud800 straddles the end of the first slot.
	body := head + strings.Repeat("x", 32<<10-len(head)-3) + `\ud800\ud800` + strings.Repeat("y", 40000) + `\ud83d\ude00\udc00"}}}`
	resp, out := s.post(t, "", "2026-07-28", body, "Mcp-Method", "tools/call", "Mcp-Name", "echo")
	require.Equal(t, 200, resp.StatusCode, out[:min(len(out), 300)])
	assert.Contains(t, out, `x\ufffd\ufffdy`)
	assert.Contains(t, out, `y\ud83d\ude00\ufffd"`)
	assert.NotContains(t, out, `\ud800`)
	assert.NotContains(t, out, `\udc00`)
	s.client.CloseIdleConnections()
	require.Eventually(t, s.released, 2*time.Second, 5*time.Millisecond)
}
