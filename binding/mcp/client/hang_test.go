package client_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/internal/enginetest"
)

// hangingUpstream serves MCP at /mcp, but leaves the first request whose
// body holds hang (or, for hang "DELETE", the first DELETE) unanswered
// until the gateway drops it, which it reports on dropped; it reports the
// request's arrival on hung.
type hangingUpstream struct {
	hang          string
	once          atomic.Bool
	hung, dropped chan struct{}
}

func newHangingUpstream(t *testing.T, hang string) (*hangingUpstream, string) {
	u := &hangingUpstream{hang: hang, hung: make(chan struct{}), dropped: make(chan struct{})}
	srv := httptest.NewServer(http.HandlerFunc(u.serve))
	t.Cleanup(srv.Close)
	return u, srv.URL + "/mcp"
}

func (u *hangingUpstream) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	msg := string(body)
	id := between(msg, `"id":`, `,`)
	if (strings.Contains(msg, u.hang) || r.Method == u.hang) && u.once.CompareAndSwap(false, true) {
		close(u.hung)
		<-r.Context().Done()
		close(u.dropped)
		return
	}
	switch {
	case r.Method != http.MethodPost:
		w.WriteHeader(http.StatusOK)
	case strings.Contains(msg, `"method":"initialize"`):
		w.Header().Set("Mcp-Session-Id", "s1")
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"hang","version":"1"}}}`, id)
	case !strings.Contains(msg, `"id":`):
		w.WriteHeader(http.StatusAccepted)
	default:
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"ok"}]}}`, id)
	}
}

// TestUpstreamInitializeHangs: an upstream that takes the connection for
// its session's initialize (or notifications/initialized) and never
// answers holds it for one timeout, not for ever. The calls waiting for
// the session then fail, the connection is dropped, and the next call
// initializes anew and is served. The engine's clock stands still but
// for the test's moves, on one worker, so that both calls share its
// session.
func TestUpstreamInitializeHangs(t *testing.T) {
	for _, hang := range []string{`"method":"initialize"`, `"method":"notifications/initialized"`} {
		t.Run(between(hang, `"method":"`, `"`), func(t *testing.T) {
			up, server := newHangingUpstream(t, hang)
			clock := enginetest.NewClock()
			endpoint, e := startGatewayEngine(t, server, "      versions: [2025-11-25]\n      timeout: PT5S\n", "",
				engine.WithClock(clock.Now), engine.WithWorkers(1))
			call := func(id int) <-chan enginetest.MCPReply {
				done := make(chan enginetest.MCPReply, 1)
				go func() {
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					defer cancel()
					reply, err := enginetest.PostMCP(ctx, endpoint, "2026-07-28", "",
						fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"t","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`, id),
						"Mcp-Method", "tools/call", "Mcp-Name", "t")
					if err != nil {
						reply.Msg = map[string]any{"transport": err.Error()}
					}
					done <- reply
				}()
				return done
			}
			first := call(1)
			enginetest.Receive(t, up.hung, "the upstream's hung request")
			enginetest.Settle(t, e)
			clock.Tick(t, e, 6*time.Second)
			reply := enginetest.Receive(t, first, "the first call's answer")
			assert.Contains(t, fmt.Sprint(reply.Msg["error"]), "Upstream timeout", "%v", reply.Msg)
			enginetest.Receive(t, up.dropped, "the hung request dropped")

			reply = enginetest.Receive(t, call(2), "the second call's answer")
			require.Contains(t, reply.Msg, "result", "%v", reply.Msg)
			assert.Contains(t, fmt.Sprint(reply.Msg["result"]), "ok")
		})
	}
}

// TestUpstreamDeleteHangs: the DELETE that ends an upstream session, whose
// answer nobody waits for, is dropped after the binding's timeout when
// the upstream never answers it, rather than holding its connection.
func TestUpstreamDeleteHangs(t *testing.T) {
	up, server := newHangingUpstream(t, http.MethodDelete)
	clock := enginetest.NewClock()
	endpoint, e := startGatewayEngine(t, server, "      versions: [2025-11-25]\n      timeout: PT5S\n", "",
		engine.WithClock(clock.Now), engine.WithWorkers(1))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	reply, err := enginetest.PostMCP(ctx, endpoint, "", "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	require.NoError(t, err)
	session := reply.Session
	require.NotEmpty(t, session, "%v", reply.Msg)
	_, err = enginetest.PostMCP(ctx, endpoint, "2025-11-25", session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	require.NoError(t, err)
	reply, err = enginetest.PostMCP(ctx, endpoint, "2025-11-25", session, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t","arguments":{}}}`)
	require.NoError(t, err)
	require.Contains(t, reply.Msg, "result", "%v", reply.Msg)

	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, endpoint, nil)
	require.NoError(t, err)
	req.Header.Set("Mcp-Session-Id", session)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
	enginetest.Receive(t, up.hung, "the upstream's DELETE")
	enginetest.Settle(t, e)
	clock.Tick(t, e, 6*time.Second)
	enginetest.Receive(t, up.dropped, "the hung DELETE dropped")
}
