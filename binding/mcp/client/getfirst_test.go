package client_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/internal/enginetest"
)

// TestNullSessionGetFirst: the worker's own upstream session (the one a
// 2026-07-28 client's calls use toward a 2025 upstream) opens its GET
// stream before it serves a call, so that a request the upstream sends
// its client outside the call, while answering it, finds the stream open
// and is refused at once. An upstream that holds the GET's head back
// delays the first call by getOpenWait (2 s) at most, on the engine's
// clock.
func TestNullSessionGetFirst(t *testing.T) {
	for _, hold := range []bool{false, true} {
		t.Run(fmt.Sprintf("hold=%v", hold), func(t *testing.T) {
			var mu sync.Mutex
			var order []string
			note := func(s string) {
				mu.Lock()
				defer mu.Unlock()
				order = append(order, s)
			}
			release := make(chan struct{})
			t.Cleanup(func() { close(release) })
			called := make(chan struct{}, 1)
			server := serveGetUpstream(t, func(w http.ResponseWriter, r *http.Request, msg, id string) {
				switch {
				case r.Method == http.MethodGet:
					note("GET")
					if hold {
						select {
						case <-release:
						case <-r.Context().Done():
							return
						}
					}
					w.Header().Set("Content-Type", "text/event-stream")
					w.WriteHeader(http.StatusOK)
					w.(http.Flusher).Flush()
					<-r.Context().Done()
				case strings.Contains(msg, `"method":"initialize"`):
					answerInitialize(w, id, "s1")
				case strings.Contains(msg, `"method":"tools/call"`):
					note("tools/call")
					called <- struct{}{}
					answerOK(w, id)
				default:
					w.WriteHeader(http.StatusAccepted)
				}
			})
			clock := enginetest.NewClock()
			endpoint, e := startGatewayEngine(t, server, "      versions: [2025-11-25]\n", "", engine.WithClock(clock.Now))
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			// The client's connect (server/discover) and first call both
			// need the worker's session.
			done := make(chan string, 1)
			go func() {
				client := mcp.NewClient(&mcp.Implementation{Name: "mcpclient-test", Version: "1.0.0"}, nil)
				s, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, MaxRetries: -1},
					&mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
				if err != nil {
					done <- err.Error()
					return
				}
				defer s.Close()
				res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "t"})
				if err != nil {
					done <- err.Error()
					return
				}
				done <- res.Content[0].(*mcp.TextContent).Text
			}()
			if hold {
				require.Eventually(t, func() bool {
					mu.Lock()
					defer mu.Unlock()
					return len(order) > 0
				}, 10*time.Second, time.Millisecond, "the GET reaches the upstream")
				enginetest.Settle(t, e)
				select {
				case <-called:
					t.Fatal("the call went upstream before the GET stream opened or getOpenWait passed")
				case s := <-done:
					t.Fatalf("the client was served before the GET stream opened or getOpenWait passed: %s", s)
				default:
				}
				clock.Tick(t, e, 2*time.Second)
			}
			assert.Equal(t, "ok", enginetest.Receive(t, done, "the call's answer"))
			mu.Lock()
			defer mu.Unlock()
			assert.Equal(t, []string{"GET", "tools/call"}, order)
		})
	}
}

// serveGetUpstream serves handle, GETs included, at the URL it returns;
// msg is a POST's body, id its JSON-RPC id.
func serveGetUpstream(t *testing.T, handle func(w http.ResponseWriter, r *http.Request, msg, id string)) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		msg := string(body)
		handle(w, r, msg, between(msg, `"id":`, `,`))
	}))
	// After the engine has stopped (cleanups run last first), which ends
	// the GET stream the server waits on.
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}
