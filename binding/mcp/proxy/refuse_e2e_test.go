package proxy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	_ "github.com/sluicehq/sluice/binding/mcp/client"
	"github.com/sluicehq/sluice/engine/telemetry"
	"github.com/sluicehq/sluice/internal/enginetest"
)

// seenAnswer is an answer an upstream took from its client: the id it
// answers and the error's message, empty for a result.
type seenAnswer struct {
	id  int
	err string
}

// rawUpstream serves an MCP upstream on a real socket that sends asks
// requests roots/list (ids 1 to asks) on its GET stream at once, and
// sends each answer it is POSTed to answers. An initialize for which
// hold reports true is answered once ready is closed.
func rawUpstream(t *testing.T, hold func(body []byte) bool, ready <-chan struct{}, asks int, answers chan<- seenAnswer) string {
	t.Helper()
	ln := listen(t)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodDelete:
			return
		case http.MethodGet:
			if asks == 0 {
				w.WriteHeader(http.StatusMethodNotAllowed)
				return
			}
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			for i := 1; i <= asks; i++ {
				fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"roots/list\"}\n\n", i)
			}
			http.NewResponseController(w).Flush()
			<-r.Context().Done()
			return
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ProtocolVersion string `json:"protocolVersion"`
			} `json:"params"`
			Error *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		body, _ := io.ReadAll(r.Body)
		if json.Unmarshal(body, &m) != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		switch {
		case m.Method == "initialize":
			if hold(body) {
				select {
				case <-ready:
				case <-r.Context().Done():
					return
				}
			}
			w.Header().Set("Mcp-Session-Id", "up")
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":%q,"capabilities":{},"serverInfo":{"name":"raw","version":"1"}}}`,
				m.ID, m.Params.ProtocolVersion)
		case m.Method == "" && m.ID != nil:
			var id int
			_ = json.Unmarshal(m.ID, &id)
			a := seenAnswer{id: id}
			if m.Error != nil {
				a.err = m.Error.Message
			}
			answers <- a
			w.WriteHeader(http.StatusAccepted)
		case m.ID == nil:
			w.WriteHeader(http.StatusAccepted)
		default:
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{}}`, m.ID)
		}
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

// TestGatewayHeldRequestsOverflow: route a's upstream asks the client for
// its roots 17 times as the session opens, while route b's upstream has
// not yet answered the session's initialize, so that the session is not open to
// the client. The proxy holds 16 of the requests until it opens, and
// answers the 17th itself with an error at once, rather than leave the
// upstream to wait out its own timeout. Then b initializes, the session
// opens, and the real client (go-sdk) answers each of the 16 held ones
// once its GET stream is open.
func TestGatewayHeldRequestsOverflow(t *testing.T) {
	const asks = 17
	answers := make(chan seenAnswer, 2*asks)
	// The gateway's own initializes (capability discovery, which opens no
	// GET stream) advertise every client capability; the session's has
	// the go-sdk client's, which asks for no sampling, and b holds it.
	never := func([]byte) bool { return false }
	session := func(body []byte) bool { return !bytes.Contains(body, []byte(`"sampling"`)) }
	bReady := make(chan struct{})
	a := rawUpstream(t, never, nil, asks, answers)
	b := rawUpstream(t, session, bReady, 0, nil)
	src := "  mcp1:\n    type: mcp\n    kind: proxy\n" +
		"    routes:\n      - exit: a0\n        when:\n          - toolkit: a\n" +
		"      - exit: b0\n        when:\n          - toolkit: b\n" +
		"  a0:\n    type: mcp\n    kind: client\n    options:\n      server: http://" + a + "/mcp\n" +
		"  b0:\n    type: mcp\n    kind: client\n    options:\n      server: http://" + b + "/mcp\n"
	endpoint, e := enginetest.StartMCP(t, "proxy.yaml", "mcp1", src)

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	client := sdk.NewClient(&sdk.Implementation{Name: "c", Version: "1"}, nil)
	connected := make(chan error, 1)
	go func() {
		s, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: endpoint},
			&sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err == nil {
			t.Cleanup(func() { _ = s.Close() })
		}
		connected <- err
	}()

	select {
	case got := <-answers:
		assert.Equal(t, seenAnswer{id: asks, err: "Internal error: too many requests to the client before its session opened"}, got)
	case <-ctx.Done():
		t.Fatal("the request past the held ones was not answered")
	}
	close(bReady)
	require.NoError(t, <-connected)
	// The held requests reach the server as the session opens, before the
	// client has its GET stream open; the server holds them for it, and
	// the client answers each.
	seen := map[int]bool{}
	for len(seen) < asks-1 {
		select {
		case got := <-answers:
			assert.Empty(t, got.err, "answer %d", got.id)
			assert.False(t, seen[got.id], "answer %d twice", got.id)
			seen[got.id] = true
		case <-ctx.Done():
			t.Fatalf("the client answered %d of the %d held requests", len(seen), asks-1)
		}
	}
	for i := 1; i < asks; i++ {
		assert.True(t, seen[i], "held request %d answered", i)
	}
	assert.Equal(t, int64(1), enginetest.Metric(e, "mcp1", "mcp.proxy.client.refused"), "the one the proxy answered, counted")
	for _, m := range e.Telemetry().Gather() {
		_, described := telemetry.LookupDescription(m.Name)
		assert.True(t, described, "metric %s has a description (its HELP)", m.Name)
	}
}

// TestGatewayHydrateKeepAlive: the cache's hydrate session holds an
// upstream session of its own, whose client is the proxy. A go-sdk
// upstream with KeepAlive pings that client and closes the session at the
// first ping that fails; the proxy answers each ping, so the session
// lives on, initialized once.
func TestGatewayHydrateKeepAlive(t *testing.T) {
	// go-sdk gives each ping half the interval: 250 ms, ample on a busy
	// machine for an answer that crosses the engine twice.
	server := sdk.NewServer(&sdk.Implementation{Name: "up", Version: "1"}, &sdk.ServerOptions{KeepAlive: 500 * time.Millisecond})
	sdk.AddTool(server, &sdk.Tool{Name: "ping", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *sdk.CallToolRequest, map[string]any) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{}, nil, nil
		})
	mcpHandler := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return server }, nil)
	initializes, pongs := make(chan struct{}, 64), make(chan string, 64)
	ln := listen(t)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var m struct {
			Method string           `json:"method"`
			Result *json.RawMessage `json:"result"`
			Error  *json.RawMessage `json:"error"`
		}
		if json.Unmarshal(body, &m) == nil {
			switch {
			case m.Method == "initialize":
				initializes <- struct{}{}
			case m.Method == "" && m.Result != nil:
				pongs <- string(*m.Result)
			case m.Method == "" && m.Error != nil:
				pongs <- "error " + string(*m.Error)
			}
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		mcpHandler.ServeHTTP(w, r)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })

	src := "  mcp1:\n    type: mcp\n    kind: proxy\n" +
		"    options:\n      cache:\n        store: store0\n        ttl:\n          tools: PT1H\n" +
		"    routes:\n      - exit: up0\n" +
		"  up0:\n    type: mcp\n    kind: client\n    options:\n      server: http://" + ln.Addr().String() + "/mcp\n" +
		"stores:\n  store0:\n    type: memory\n"
	enginetest.StartMCP(t, "proxy.yaml", "mcp1", src)

	for range 3 {
		assert.Equal(t, "{}", enginetest.Receive(t, pongs, "the hydrate session's answer to a keepalive ping"))
	}
	assert.Len(t, initializes, 1, "the upstream session lived on")
}
