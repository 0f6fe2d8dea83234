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
)

// TestUpstreamEventTypes: an upstream event of a type other than
// message is not a JSON-RPC message, as the SDKs' clients read it: the
// gateway skips one that looks like the call's answer and relays the
// answer that follows as a message event.
func TestUpstreamEventTypes(t *testing.T) {
	server := serveUpstream(t, false, func(w http.ResponseWriter, r *http.Request, msg, id string) {
		if !strings.Contains(msg, `"method":"tools/call"`) {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		fmt.Fprintf(w, "event: debug\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"not this\"}]}}\n\n", id)
		fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"this\"}]}}\n\n", id)
	})
	endpoint, _ := startGatewayEngine(t, server, "      versions: [2025-11-25]\n", "")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	m, err := post2026Caps(ctx, endpoint, 1, "t", "", `{}`)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"content": []any{map[string]any{"type": "text", "text": "this"}}}, without(m["result"], "_meta", "resultType"), "%v", m)
}

// TestUpstreamHeaderTwice: an upstream response that gives Content-Type
// twice has no one reading (the Go SDK reads the first, the TypeScript
// SDK both joined): the call fails rather than take either, here the
// last, which alone fits the JSON body.
func TestUpstreamHeaderTwice(t *testing.T) {
	server := serveUpstream(t, false, func(w http.ResponseWriter, r *http.Request, msg, id string) {
		if !strings.Contains(msg, `"method":"tools/call"`) {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header()["Content-Type"] = []string{"text/event-stream", "application/json"}
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[]}}`, id)
	})
	endpoint, _ := startGatewayEngine(t, server, "      versions: [2025-11-25]\n", "")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	m, err := post2026Caps(ctx, endpoint, 1, "t", "", `{}`)
	require.NoError(t, err)
	e, _ := m["error"].(map[string]any)
	require.NotNil(t, e, "%v", m)
	assert.EqualValues(t, -32603, e["code"], "%v", m)
}
