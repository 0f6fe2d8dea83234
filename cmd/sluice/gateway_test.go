package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The gateway tests put real MCP servers behind Sluice's proxy and client
// kinds and drive the gateway with real clients: tools from every route
// appear prefixed (<toolkit>__name, <toolkit>+uri) and every one is
// callable through it.

// threeRoutes starts go-sdk's everything-server (stateful) and
// server-everything, and a gateway with routes everything, node and the
// built-in toolkit (local).
func threeRoutes(t *testing.T) (endpoint string, goUp, nodeUp *upstream) {
	t.Helper()
	goUp = startGoEverything(t, 0, false)
	nodeUp = startNodeEverything(t, 0)
	port := freePort(t)
	endpoint = startGateway(t, gatewayConfig(port, "",
		gatewayRoute{Toolkit: "everything", Upstream: goUp.URL},
		gatewayRoute{Toolkit: "node", Upstream: nodeUp.URL},
		gatewayRoute{Toolkit: "local", Upstream: ""}), port, 2)
	return endpoint, goUp, nodeUp
}

func toolNames(t *testing.T, ctx context.Context, s *mcp.ClientSession) []string {
	t.Helper()
	var names []string
	for tool, err := range s.Tools(ctx, nil) {
		require.NoError(t, err)
		names = append(names, tool.Name)
	}
	return names
}

// rpcCode returns the code of the JSON-RPC error err carries.
func rpcCode(t *testing.T, err error) int64 {
	t.Helper()
	var rpcErr *jsonrpc.Error
	require.ErrorAs(t, err, &rpcErr)
	return rpcErr.Code
}

func text(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	require.NotEmpty(t, res.Content)
	tc, ok := res.Content[0].(*mcp.TextContent)
	require.True(t, ok, "text content, got %T", res.Content[0])
	return tc.Text
}

// TestGatewayGoSDKClient runs the Go SDK's client through the gateway at
// both eras: the merged, prefixed lists, a call to each upstream and to the
// toolkit, progress relayed with its token, resources and prompts.
func TestGatewayGoSDKClient(t *testing.T) {
	endpoint, _, _ := threeRoutes(t)
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			var mu sync.Mutex
			var tokens []any
			client := mcp.NewClient(&mcp.Implementation{Name: "sluice-gateway-test", Version: "1.0.0"}, &mcp.ClientOptions{
				ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
					mu.Lock()
					tokens = append(tokens, req.Params.ProgressToken)
					mu.Unlock()
				},
			})
			session, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, MaxRetries: -1},
				&mcp.ClientSessionOptions{ProtocolVersion: version})
			require.NoError(t, err)
			defer session.Close()

			names := toolNames(t, ctx, session)
			assert.Subset(t, names, []string{"everything__test_simple_text", "everything__test_tool_with_progress",
				"node__echo", "node__get-sum", "local__echo", "local__add"})
			for _, n := range names {
				assert.True(t, strings.HasPrefix(n, "everything__") || strings.HasPrefix(n, "node__") || strings.HasPrefix(n, "local__"), n)
			}

			res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "everything__test_simple_text"})
			require.NoError(t, err)
			assert.False(t, res.IsError, text(t, res))
			assert.NotEmpty(t, text(t, res))

			res, err = session.CallTool(ctx, &mcp.CallToolParams{Name: "node__echo", Arguments: map[string]any{"message": "hi"}})
			require.NoError(t, err)
			assert.Equal(t, "Echo: hi", text(t, res))

			res, err = session.CallTool(ctx, &mcp.CallToolParams{Name: "local__add", Arguments: map[string]any{"a": 2, "b": 3}})
			require.NoError(t, err)
			assert.Contains(t, text(t, res), "5")

			call := &mcp.CallToolParams{Name: "everything__test_tool_with_progress"}
			call.SetProgressToken("tok-" + version)
			res, err = session.CallTool(ctx, call)
			require.NoError(t, err)
			assert.False(t, res.IsError)
			assert.Eventually(t, func() bool {
				mu.Lock()
				defer mu.Unlock()
				return len(tokens) >= 3
			}, 2*time.Second, 10*time.Millisecond, "progress notifications relayed")
			mu.Lock()
			for _, tok := range tokens {
				assert.Equal(t, "tok-"+version, tok, "the token intact")
			}
			mu.Unlock()

			var uris []string
			for r, err := range session.Resources(ctx, nil) {
				require.NoError(t, err)
				uris = append(uris, r.URI)
			}
			assert.Contains(t, uris, "everything+test://static-text")
			assert.Contains(t, uris, "local+sluice://toolkit/readme")
			read, err := session.ReadResource(ctx, &mcp.ReadResourceParams{URI: "everything+test://static-text"})
			require.NoError(t, err)
			require.NotEmpty(t, read.Contents)
			assert.NotEmpty(t, read.Contents[0].Text)
			assert.Equal(t, "everything+test://static-text", read.Contents[0].URI, "the prefix restored")

			prompt, err := session.GetPrompt(ctx, &mcp.GetPromptParams{Name: "everything__test_prompt_with_arguments",
				Arguments: map[string]string{"arg1": "alpha", "arg2": "beta"}})
			require.NoError(t, err)
			require.NotEmpty(t, prompt.Messages)
			assert.Contains(t, prompt.Messages[0].Content.(*mcp.TextContent).Text, "alpha")

			_, err = session.CallTool(ctx, &mcp.CallToolParams{Name: "nowhere__echo"})
			assert.Equal(t, int64(-32602), rpcCode(t, err), "an unknown prefix")
		})
	}
}

// TestGatewayTypeScriptClient runs the TypeScript SDK's client through the
// gateway (2025-11-25).
func TestGatewayTypeScriptClient(t *testing.T) {
	endpoint, _, _ := threeRoutes(t)
	stdout := runNodeScript(t, "ts-gateway-client.mjs", 60*time.Second, endpoint)
	var out struct {
		ProtocolVersion string   `json:"protocolVersion"`
		Tools           []string `json:"tools"`
		Simple          string   `json:"simple"`
		Echo            string   `json:"echo"`
		Add             string   `json:"add"`
		Progress        []any    `json:"progress"`
		Resource        string   `json:"resource"`
		ResourceURI     string   `json:"resourceUri"`
		Prompt          string   `json:"prompt"`
		Cancelled       string   `json:"cancelled"`
		After           string   `json:"after"`
	}
	require.NoError(t, json.Unmarshal(stdout, &out), string(stdout))
	assert.Equal(t, "2025-11-25", out.ProtocolVersion)
	assert.Subset(t, out.Tools, []string{"everything__test_simple_text", "node__echo", "local__add"})
	assert.NotEmpty(t, out.Simple)
	assert.Equal(t, "Echo: hi", out.Echo)
	assert.Contains(t, out.Add, "5")
	assert.GreaterOrEqual(t, len(out.Progress), 3, "progress through the gateway")
	assert.NotEmpty(t, out.Resource)
	assert.Equal(t, "everything+test://static-text", out.ResourceURI)
	assert.Contains(t, out.Prompt, "alpha")
	assert.NotEqual(t, "completed", out.Cancelled)
	assert.Equal(t, "Echo: after", out.After, "the session goes on after a cancelled call")
}

// TestGatewayUpstreamDies kills an upstream in the middle of a call: the
// client gets a JSON-RPC error rather than a hang, the gateway keeps
// serving the other routes, and once the upstream is back (a new process,
// so new sessions) its tools work again through a re-initialized session.
func TestGatewayUpstreamDies(t *testing.T) {
	endpoint, nodeUp := nodeAndLocal(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	progressed := make(chan struct{}, 1)
	client := mcp.NewClient(&mcp.Implementation{Name: "sluice-gateway-test", Version: "1.0.0"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) {
			select {
			case progressed <- struct{}{}:
			default:
			}
		},
	})
	session, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, MaxRetries: -1}, nil)
	require.NoError(t, err)
	defer session.Close()

	res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "node__echo", Arguments: map[string]any{"message": "before"}})
	require.NoError(t, err)
	assert.Equal(t, "Echo: before", text(t, res))

	errc := make(chan error, 1)
	long := &mcp.CallToolParams{Name: "node__trigger-long-running-operation", Arguments: map[string]any{"duration": 30, "steps": 30}}
	long.SetProgressToken("dies")
	go func() {
		_, err := session.CallTool(ctx, long)
		errc <- err
	}()
	// In the middle of the call: its first step has come through the
	// gateway (a step a second).
	select {
	case <-progressed:
	case <-time.After(20 * time.Second):
		t.Fatal("the long-running call reported no progress")
	}
	nodeUp.Stop()
	select {
	case err := <-errc:
		assert.Equal(t, int64(-32603), rpcCode(t, err), "a call whose upstream died fails")
		assert.NotContains(t, err.Error(), "timeout", "failed by the upstream's death, not by the call's timeout")
	case <-time.After(20 * time.Second):
		t.Fatal("the call hung after its upstream died")
	}

	res, err = session.CallTool(ctx, &mcp.CallToolParams{Name: "local__echo", Arguments: map[string]any{"message": "still here"}})
	require.NoError(t, err)
	assert.Equal(t, "Echo: still here", text(t, res))

	startNodeEverything(t, nodeUp.Port)
	require.Eventually(t, func() bool {
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "node__echo", Arguments: map[string]any{"message": "again"}})
		return err == nil && !res.IsError && text(t, res) == "Echo: again"
	}, 20*time.Second, 200*time.Millisecond, "the upstream's tools work again once it is back")
}

// TestExampleGateway runs examples/gateway.yaml, moved to free ports, with
// go-sdk's everything-server as its upstream.
func TestExampleGateway(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "examples", "gateway.yaml"))
	require.NoError(t, err)
	require.Contains(t, string(src), "7190")
	require.Contains(t, string(src), "127.0.0.1:3101")
	up := startGoEverything(t, 0, false)
	port := freePort(t)
	cfg := strings.ReplaceAll(string(src), "7190", fmt.Sprint(port))
	cfg = strings.ReplaceAll(cfg, "127.0.0.1:3101", fmt.Sprintf("127.0.0.1:%d", up.Port))
	endpoint := startGateway(t, cfg, port, 2)

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "sluice-gateway-test", Version: "1.0.0"}, nil)
	session, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, MaxRetries: -1}, nil)
	require.NoError(t, err)
	defer session.Close()
	names := toolNames(t, ctx, session)
	assert.Subset(t, names, []string{"everything__test_simple_text", "local__echo"})
	res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "everything__test_simple_text"})
	require.NoError(t, err)
	assert.False(t, res.IsError)
}

// TestGatewayResumesUpstream puts a go-sdk server with an event store
// (resumable streams) behind the gateway, with a tool that closes its
// call's event stream before the result (SEP-1699: a "close" event with a
// retry). The result comes only on the stream the client resumes with GET
// and Last-Event-ID, which the mcp client kind must do by itself.
func TestGatewayResumesUpstream(t *testing.T) {
	// The tool answers once the gateway has come back for its stream: a
	// GET with Last-Event-ID.
	resumed := make(chan struct{}, 8)
	quit := make(chan struct{})
	t.Cleanup(func() { close(quit) })
	server := mcp.NewServer(&mcp.Implementation{Name: "resumable", Version: "1.0.0"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "cut", Description: "closes its stream, then answers"},
		func(ctx context.Context, req *mcp.CallToolRequest, _ any) (*mcp.CallToolResult, any, error) {
			req.Extra.CloseSSEStream(mcp.CloseSSEStreamArgs{RetryAfter: 10 * time.Millisecond})
			select {
			case <-resumed:
			case <-quit:
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "after the cut"}}}, nil, nil
		})
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
		&mcp.StreamableHTTPOptions{EventStore: mcp.NewMemoryEventStore(nil)})
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.Header.Get("Last-Event-ID") != "" {
			resumed <- struct{}{}
		}
		sdk.ServeHTTP(w, r)
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	up := &http.Server{Handler: handler}
	go up.Serve(l)
	t.Cleanup(func() { up.Close() })

	port := freePort(t)
	endpoint := startGateway(t, gatewayConfig(port, "never", gatewayRoute{Toolkit: "up", Upstream: "http://" + l.Addr().String() + "/mcp"}), port, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "sluice-gateway-test", Version: "1.0.0"}, nil)
	session, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, MaxRetries: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	require.NoError(t, err)
	defer session.Close()
	for range 3 {
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "cut"})
		require.NoError(t, err)
		assert.False(t, res.IsError)
		assert.Equal(t, "after the cut", text(t, res))
	}
}

// TestGatewayEverythingSyncsRoots: server-everything asks its client for
// its roots on its own, 350 ms after the session's initialized (its
// syncRoots), on its GET stream, and logs what it got. Through the
// gateway the request reaches the Go SDK client, which answers it, and
// the server's log message about the answer comes back to the client.
func TestGatewayEverythingSyncsRoots(t *testing.T) {
	nodeUp := startNodeEverything(t, 0)
	port := freePort(t)
	endpoint := startGateway(t, gatewayConfig(port, "", gatewayRoute{Toolkit: "node", Upstream: nodeUp.URL}), port, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	logs := make(chan string, 64)
	client := mcp.NewClient(&mcp.Implementation{Name: "sluice-gateway-test", Version: "1.0.0"}, &mcp.ClientOptions{
		//lint:ignore SA1019 a 2025-era client's log messages, which carry server-everything's word on the roots
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			if s, ok := req.Params.Data.(string); ok {
				select {
				case logs <- s:
				default:
				}
			}
		},
	})
	session, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	require.NoError(t, err)
	defer session.Close()
	for {
		select {
		case s := <-logs:
			if strings.Contains(s, "root(s) received from client") {
				assert.Equal(t, "Roots updated: 0 root(s) received from client", s)
				return
			}
		case <-ctx.Done():
			t.Fatal("server-everything never had the client's roots")
		}
	}
}

// TestGatewayEverythingRootsStateless: a 2026-07-28 client has no session
// for server-everything (2025 only) to ask, so its calls go through the
// worker's own upstream session, which declares every client capability.
// get-roots-list asks that session's client for its roots on the GET
// stream, not on the call's, and the TypeScript SDK drops a request when
// no GET stream is open and waits its full 60 s for the answer. The
// gateway keeps the worker session's GET stream open and refuses such a
// request at once (no one client is the one asked), so the tool answers
// without the roots instead of the call hanging.
func TestGatewayEverythingRootsStateless(t *testing.T) {
	nodeUp := startNodeEverything(t, 0)
	port := freePort(t)
	endpoint := startGateway(t, gatewayConfig(port, "", gatewayRoute{Toolkit: "node", Upstream: nodeUp.URL}), port, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "sluice-gateway-test", Version: "1.0.0"}, nil)
	session, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, MaxRetries: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	require.NoError(t, err)
	defer session.Close()
	for range 2 {
		// One route: its names go unprefixed.
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "get-roots-list"})
		require.NoError(t, err, "the call must not wait out the upstream's 60 s")
		assert.Contains(t, text(t, res), "no roots are currently configured")
	}
}

// TestGatewayMatchesDirect runs the TypeScript SDK's client against each
// everything server twice, directly and through the gateway, doing the
// same things on both (ts-diff-client.mjs: every tool, list, resource,
// prompt and completion, and what the server asks the client on the way),
// and requires the same answers, once the gateway's prefixes are taken
// off. At 2025-11-25 the upstreams are server-everything and go-sdk's
// everything-server (stateful), both routes of one gateway; at 2026-07-28
// it is go-sdk's server run stateless, which the client kind uses at
// 2026-07-28.
func TestGatewayMatchesDirect(t *testing.T) {
	type diff struct {
		Checked int `json:"checked"`
		Diffs   []struct {
			What    string `json:"what"`
			Direct  string `json:"direct"`
			Gateway string `json:"gateway"`
		} `json:"diffs"`
	}
	check := func(t *testing.T, era, direct, endpoint, prefix string, min int, skip string) {
		t.Helper()
		stdout := runNodeScript(t, "ts-diff-client.mjs", 120*time.Second, era, direct, endpoint, prefix, skip)
		var out diff
		require.NoError(t, json.Unmarshal(stdout, &out), string(stdout))
		assert.GreaterOrEqual(t, out.Checked, min, "what was compared")
		for _, d := range out.Diffs {
			t.Errorf("%s differs through the gateway:\n  direct:  %s\n  gateway: %s", d.What, d.Direct, d.Gateway)
		}
	}
	t.Run("2025-11-25", func(t *testing.T) {
		endpoint, goUp, nodeUp := threeRoutes(t)
		check(t, "2025", nodeUp.URL, endpoint, "node", 30, "")
		// test_reconnection closes its event stream before the answer, with
		// no event id to resume from: directly, the client waits out its
		// 60 s timeout; through the gateway, it gets -32603 at once.
		check(t, "2025", goUp.URL, endpoint, "everything", 40, "test_reconnection")
	})
	t.Run("2026-07-28", func(t *testing.T) {
		up := startGoEverything(t, 0, true)
		port := freePort(t)
		endpoint := startGateway(t, gatewayConfig(port, "",
			gatewayRoute{Toolkit: "everything", Upstream: up.URL, Versions: "[2026-07-28, 2025-11-25]"},
			gatewayRoute{Toolkit: "local", Upstream: ""}), port, 2)
		check(t, "2026", up.URL, endpoint, "everything", 40, "")
	})
}
