package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGatewayUpstreamChallenge: an upstream that refuses the session's
// initialize 401 with a Bearer challenge has the client's initialize
// answered 401 with that challenge, through the mcp server and client
// kinds, rather than 500: the client learns what authorization to get.
func TestGatewayUpstreamChallenge(t *testing.T) {
	const challenge = `Bearer realm="upstream", scope="files:read", error="invalid_token"`
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("WWW-Authenticate", challenge)
		w.WriteHeader(http.StatusUnauthorized)
	}))
	defer upstream.Close()
	port := freePort(t)
	cfg := "name: gateway\nbindings:\n" + frontYAML(fmt.Sprint(port), "/mcp") + fmt.Sprintf(`  mcp0:
    type: mcp
    kind: server
    exit: client0
  client0:
    type: mcp
    kind: client
    options: {server: %q}
`, upstream.URL+"/mcp")
	endpoint := startGateway(t, cfg, port, 1)

	req, err := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, string(body))
	got := resp.Header.Get("WWW-Authenticate")
	assert.True(t, strings.HasPrefix(got, "Bearer "), got)
	assert.Contains(t, got, `realm="upstream"`)
	assert.Contains(t, got, `scope="files:read"`)
	assert.Contains(t, got, `error="invalid_token"`)
}
