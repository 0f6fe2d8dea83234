package proxy_test

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	_ "github.com/sluicehq/sluice/binding/http/client"
	_ "github.com/sluicehq/sluice/binding/mcp/client"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/internal/enginetest"
)

// upstream is a go-sdk MCP server with one tool, ping, on a real socket.
// While stalled, it reads a tools/list or tools/call and never answers
// it, as an upstream stopped mid-run does.
type upstream struct {
	addr   string
	srv    *http.Server
	server *sdk.Server
	// changed has a value each time the server writes a list_changed
	// notification on a GET stream.
	changed chan struct{}
	mu      sync.Mutex
	stalled bool
	release chan struct{}
}

func startUpstream(t *testing.T, ln net.Listener) *upstream {
	t.Helper()
	server := sdk.NewServer(&sdk.Implementation{Name: "up", Version: "1"}, nil)
	sdk.AddTool(server, &sdk.Tool{Name: "ping", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *sdk.CallToolRequest, map[string]any) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "pong"}}}, nil, nil
		})
	mcpHandler := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return server }, nil)
	u := &upstream{addr: ln.Addr().String(), server: server, changed: make(chan struct{}, 64), release: make(chan struct{})}
	u.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		u.mu.Lock()
		stalled := u.stalled
		u.mu.Unlock()
		if stalled && (bytes.Contains(body, []byte(`"tools/list"`)) || bytes.Contains(body, []byte(`"tools/call"`))) {
			select {
			case <-r.Context().Done():
			case <-u.release:
			}
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if r.Method == http.MethodGet {
			w = &notifyWriter{ResponseWriter: w, changed: u.changed}
		}
		mcpHandler.ServeHTTP(w, r)
	})}
	go func() { _ = u.srv.Serve(ln) }()
	t.Cleanup(func() {
		close(u.release)
		_ = u.srv.Close()
	})
	return u
}

// notifyWriter signals changed for each list_changed written through it.
type notifyWriter struct {
	http.ResponseWriter
	changed chan struct{}
}

func (w *notifyWriter) Write(b []byte) (int, error) {
	n, err := w.ResponseWriter.Write(b)
	if bytes.Contains(b, []byte("list_changed")) {
		select {
		case w.changed <- struct{}{}:
		default:
		}
	}
	return n, err
}

func (w *notifyWriter) Flush() { http.NewResponseController(w.ResponseWriter).Flush() }

func (w *notifyWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (u *upstream) stall() {
	u.mu.Lock()
	u.stalled = true
	u.mu.Unlock()
}

func listen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	return ln
}

// gatewayWithUpstream runs the proxy with the toolkit a0 as route a and
// an mcp client to addr as route up, the proxy's own options and the up
// route's with given as YAML lines.
func gatewayWithUpstream(t *testing.T, addr, options, with string, opts ...engine.Option) string {
	t.Helper()
	endpoint, _ := gatewayEngine(t, addr, options, with, opts...)
	return endpoint
}

// gatewayEngine is gatewayWithUpstream that also returns the engine.
func gatewayEngine(t *testing.T, addr, options, with string, opts ...engine.Option) (string, *engine.Engine) {
	t.Helper()
	src := "  mcp1:\n    type: mcp\n    kind: proxy\n" + options +
		"    routes:\n      - exit: a0\n        when:\n          - toolkit: a\n" +
		"      - exit: up0\n        when:\n          - toolkit: up\n" + with +
		"  a0:\n    type: toolkit\n    kind: server\n" +
		"  up0:\n    type: mcp\n    kind: client\n    options:\n      server: http://" + addr + "/mcp\n"
	return enginetest.StartMCP(t, "proxy.yaml", "mcp1", src, opts...)
}

// TestRouteTimeout stalls one route's upstream: a tools/list comes back
// within the route's timeout with the other route's tools and a _meta
// note naming the route left out, and a tools/call to it gets -32001
// naming the route, both well before the mcp client's own 60 s.
func TestRouteTimeout(t *testing.T) {
	up := startUpstream(t, listen(t))
	endpoint := gatewayWithUpstream(t, up.addr, "", "        with:\n          timeout:\n            tools/call: 300ms\n            tools/list: PT0.4S\n")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	session := connect(t, ctx, endpoint, nil)
	require.Contains(t, toolNames(t, ctx, session), "up__ping", "the route serves while its upstream answers")

	up.stall()
	start := time.Now()
	list, err := session.ListTools(ctx, nil)
	require.NoError(t, err)
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
	}
	assert.NotContains(t, names, "up__ping")
	assert.Contains(t, names, "a__echo")
	missing, ok := list.Meta["sluice/missingRoutes"].([]any)
	require.True(t, ok, "the partial list is marked: %v", list.Meta)
	require.Len(t, missing, 1)
	m := missing[0].(map[string]any)
	assert.Equal(t, "up", m["route"])
	assert.EqualValues(t, -32001, m["code"])
	assert.Contains(t, m["message"], "route up did not answer tools/list within 400ms")
	assert.Less(t, time.Since(start), 10*time.Second, "the list waits for the route's timeout, not the default")

	start = time.Now()
	_, err = session.CallTool(ctx, &sdk.CallToolParams{Name: "up__ping"})
	require.Error(t, err)
	var rpcErr *jsonrpc.Error
	require.ErrorAs(t, err, &rpcErr)
	assert.EqualValues(t, -32001, rpcErr.Code)
	assert.Equal(t, "Request timed out: route up did not answer tools/call within 300ms", rpcErr.Message)
	assert.Less(t, time.Since(start), 10*time.Second)

	res, err := session.CallTool(ctx, &sdk.CallToolParams{Name: "a__echo", Arguments: map[string]any{"message": "still here"}})
	require.NoError(t, err)
	assert.Equal(t, "Echo: still here", res.Content[0].(*sdk.TextContent).Text)
}

// TestRouteTimeoutConfig refuses bad timeouts with the file and line.
func TestRouteTimeoutConfig(t *testing.T) {
	for name, tc := range map[string]struct{ options, with, want string }{
		"bad duration":   {"    options:\n      timeout: soon\n", "", `proxy.yaml:7: bindings.mcp1.options.timeout: mcp mcp1: options.timeout "soon": want a duration such as PT30S`},
		"unknown method": {"", "        with:\n          timeout:\n            tools/cal: PT1S\n", "routes[1].with.timeout.tools/cal: unknown method"},
	} {
		t.Run(name, func(t *testing.T) {
			err := startConfig(t, tc.options+
				"    routes:\n      - exit: app0\n        when:\n          - toolkit: a\n"+
				"      - exit: app1\n        when:\n          - toolkit: b\n"+tc.with)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// TestRouteRevived starts a session while one route's upstream is down:
// the session lists the other route's tools, with the missing route
// named; a call to it says which route is unavailable and why; once the
// upstream is back, the same session's next call opens the route again
// and is served, and its lists are whole again.
func TestRouteRevived(t *testing.T) {
	ln := listen(t)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close()) // down: connections are refused
	// The engine's clock runs skew ahead of the real one: the test moves
	// it on past a backoff rather than wait for it.
	var skew atomic.Int64
	clock := func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
	endpoint := gatewayWithUpstream(t, addr, "", "", engine.WithClock(clock))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	session := connect(t, ctx, endpoint, nil)

	list, err := session.ListTools(ctx, nil)
	require.NoError(t, err)
	for _, tool := range list.Tools {
		assert.NotEqual(t, "up__ping", tool.Name)
	}
	missing, ok := list.Meta["sluice/missingRoutes"].([]any)
	require.True(t, ok, "the partial list is marked: %v", list.Meta)
	assert.Equal(t, "up", missing[0].(map[string]any)["route"])
	assert.Contains(t, missing[0].(map[string]any)["message"], "Route up is unavailable: Upstream unreachable")

	_, err = session.CallTool(ctx, &sdk.CallToolParams{Name: "up__ping"})
	var rpcErr *jsonrpc.Error
	require.ErrorAs(t, err, &rpcErr)
	assert.EqualValues(t, -32603, rpcErr.Code)
	assert.Contains(t, rpcErr.Message, "Route up is unavailable: Upstream unreachable")
	assert.NotContains(t, rpcErr.Message, "session not found")

	// The failed attempt set a backoff: with the upstream back, the
	// session's call is refused until it runs out, then served.
	ln, err = net.Listen("tcp", addr)
	require.NoError(t, err)
	startUpstream(t, ln)
	_, err = session.CallTool(ctx, &sdk.CallToolParams{Name: "up__ping"})
	require.ErrorAs(t, err, &rpcErr)
	require.Contains(t, rpcErr.Message, "(next attempt in ", "the backoff holds the route back")
	skew.Add(int64(backoffOf(t, rpcErr.Message)))
	res, err := session.CallTool(ctx, &sdk.CallToolParams{Name: "up__ping"})
	require.NoError(t, err)
	assert.Equal(t, "pong", res.Content[0].(*sdk.TextContent).Text)
	assert.Contains(t, toolNames(t, ctx, session), "up__ping")
}

// backoffOf reads the "next attempt in D" of a backoff message.
func backoffOf(t *testing.T, msg string) time.Duration {
	t.Helper()
	i := strings.LastIndex(msg, "(next attempt in ")
	require.GreaterOrEqual(t, i, 0, msg)
	d, err := time.ParseDuration(strings.TrimSuffix(msg[i+len("(next attempt in "):], ")"))
	require.NoError(t, err, msg)
	return d
}
