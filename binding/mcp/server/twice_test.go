package server_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStackHeadersTwice: a header the server reads as one value, given
// twice (the same value or not), gets 400 before anything else reads it:
// a component that takes the first, the last or both joined would read
// another request than the server does.
func TestStackHeadersTwice(t *testing.T) {
	s := startStack(t, "    options:\n      origins: [\"https://app.example\"]\n")
	sid := s.initialize(t, "2025-11-25")
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"x"},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	stateful := []string{"Mcp-Session-Id", sid, "MCP-Protocol-Version", "2025-11-25"}
	stateless := []string{"MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", "echo"}
	tests := []struct {
		name   string
		method string
		hdr    []string // added after the request's own
		base   []string
		body   string
		twice  string // the header named in the 400, "" for an answer
	}{
		{"once", "POST", nil, stateful, ping, ""},
		{"session id, same value", "POST", []string{"Mcp-Session-Id", sid}, stateful, ping, "Mcp-Session-Id"},
		{"session id, another", "POST", []string{"Mcp-Session-Id", "0123"}, stateful, ping, "Mcp-Session-Id"},
		{"version", "POST", []string{"MCP-Protocol-Version", "2025-06-18"}, stateful, ping, "MCP-Protocol-Version"},
		{"origin", "POST", []string{"Origin", "https://app.example", "Origin", "http://evil.example"}, stateful, ping, "Origin"},
		{"stateless once", "POST", nil, stateless, call, ""},
		{"method", "POST", []string{"Mcp-Method", "tools/list"}, stateless, call, "Mcp-Method"},
		{"name", "POST", []string{"Mcp-Name", "echo"}, stateless, call, "Mcp-Name"},
		{"last event id", "GET", []string{"Last-Event-ID", "1", "Last-Event-ID", "2"}, stateful, "", "Last-Event-ID"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(tt.method, s.base, strings.NewReader(tt.body))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if tt.method == "GET" {
				req.Header.Set("Accept", "text/event-stream")
			}
			for i := 0; i+1 < len(tt.base); i += 2 {
				req.Header.Add(tt.base[i], tt.base[i+1])
			}
			for i := 0; i+1 < len(tt.hdr); i += 2 {
				req.Header.Add(tt.hdr[i], tt.hdr[i+1])
			}
			resp, err := s.client.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			if tt.twice == "" {
				b, _ := io.ReadAll(resp.Body)
				assert.Equal(t, 200, resp.StatusCode, "%s", b)
				return
			}
			b, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			assert.Equal(t, 400, resp.StatusCode)
			assert.JSONEq(t, `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: `+tt.twice+` header given twice"},"id":null}`, string(b))
		})
	}
}
