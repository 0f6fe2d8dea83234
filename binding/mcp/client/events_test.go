package client_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
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

// TestUpstreamTrailingBytes: an upstream's JSON body is its one value,
// with whitespace around it, as JSON.parse and encoding/json read it. A
// body with more after its value, in the same write or a later one, with
// a Content-Length or chunked, fails the call (-32603) rather than have
// the gateway read the first value where the SDKs refuse the body. A
// chunked body's message waits for the body's end, and then is relayed.
func TestUpstreamTrailingBytes(t *testing.T) {
	answer := func(id, text string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":%q}]}}`, id, text)
	}
	server := serveUpstream(t, false, func(w http.ResponseWriter, r *http.Request, msg, id string) {
		if !strings.Contains(msg, `"method":"tools/call"`) {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		first, rest := answer(id, "first"), ""
		switch tool := between(msg, `"name":"`, `"`); tool {
		case "same":
			first += answer(id, "second")
		case "later":
			rest = answer(id, "second")
			w.Header().Set("Content-Length", strconv.Itoa(len(first)+len(rest)))
		case "chunked":
			rest = "x"
		case "space", "chunked-space":
			rest = " \r\n"
			if tool == "space" {
				w.Header().Set("Content-Length", strconv.Itoa(len(first)+len(rest)))
			}
		}
		_, _ = io.WriteString(w, first)
		if rest != "" {
			w.(http.Flusher).Flush()
			_, _ = io.WriteString(w, rest)
		}
	})
	endpoint, _ := startGatewayEngine(t, server, "      versions: [2025-11-25]\n", "")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for i, tool := range []string{"same", "later", "chunked", "space", "chunked-space"} {
		m, err := post2026Caps(ctx, endpoint, i+1, tool, "", `{}`)
		require.NoError(t, err, tool)
		if strings.HasSuffix(tool, "space") {
			assert.Equal(t, map[string]any{"content": []any{map[string]any{"type": "text", "text": "first"}}},
				without(m["result"], "_meta", "resultType"), "%s: %v", tool, m)
			continue
		}
		e, _ := m["error"].(map[string]any)
		require.NotNil(t, e, "%s: %v", tool, m)
		assert.EqualValues(t, -32603, e["code"], "%s: %v", tool, m)
	}
}
