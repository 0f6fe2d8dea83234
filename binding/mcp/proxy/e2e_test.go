package proxy_test

import (
	"context"
	"errors"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	_ "github.com/sluicehq/sluice/binding/http/server"
	_ "github.com/sluicehq/sluice/binding/mcp"
	_ "github.com/sluicehq/sluice/binding/mcp/proxy"
	_ "github.com/sluicehq/sluice/binding/mcp/server"
	_ "github.com/sluicehq/sluice/binding/tcp"
	_ "github.com/sluicehq/sluice/binding/toolkit"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/telemetry"
	"github.com/sluicehq/sluice/internal/enginetest"
)

// startGateway runs tcp → http → mcp server → mcp proxy (options and
// routes as given, YAML indented under the binding) on a free loopback
// port, with toolkits a0 and b0 behind, and returns the MCP endpoint.
func startGateway(t *testing.T, proxy string) string {
	t.Helper()
	endpoint, _ := startGatewayEngine(t, proxy)
	return endpoint
}

// startGatewayEngine is startGateway, with the engine.
func startGatewayEngine(t *testing.T, proxy string) (string, *engine.Engine) {
	t.Helper()
	return enginetest.StartMCP(t, "proxy.yaml", "mcp1", "  mcp1:\n    type: mcp\n    kind: proxy\n"+proxy+
		"\n  a0:\n    type: toolkit\n    kind: server\n  b0:\n    type: toolkit\n    kind: server\n")
}

// opens is how many streams binding has accepted so far.
func opens(e *engine.Engine, binding string) int64 {
	return enginetest.Metric(e, binding, telemetry.StreamOpensReceived)
}

const twoRoutes = `    options:
      prefix: conditional
    routes:
      - exit: a0
        when:
          - toolkit: a
      - exit: b0
        when:
          - toolkit: b`

func connect(t *testing.T, ctx context.Context, endpoint string, opts *sdk.ClientOptions) *sdk.ClientSession {
	t.Helper()
	client := sdk.NewClient(&sdk.Implementation{Name: "proxy-test", Version: "1.0.0"}, opts)
	session, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: endpoint},
		&sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = session.Close() })
	return session
}

func toolNames(t *testing.T, ctx context.Context, s *sdk.ClientSession) []string {
	t.Helper()
	tools, err := s.ListTools(ctx, nil)
	require.NoError(t, err)
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	return names
}

// TestGatewayTwoToolkits drives the proxy with the Go SDK through the
// whole stack: two toolkits behind one MCP endpoint.
func TestGatewayTwoToolkits(t *testing.T) {
	endpoint := startGateway(t, twoRoutes)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var mu sync.Mutex
	var progress []float64
	var tokens []any
	session := connect(t, ctx, endpoint, &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			mu.Lock()
			progress = append(progress, req.Params.Progress)
			tokens = append(tokens, req.Params.ProgressToken)
			mu.Unlock()
		},
	})
	init := session.InitializeResult()
	require.NotNil(t, init.Capabilities.Tools)
	require.NotNil(t, init.Capabilities.Resources)

	t.Run("tools/list", func(t *testing.T) {
		assert.Equal(t, []string{"a__echo", "a__add", "a__long_running_operation", "b__echo", "b__add", "b__long_running_operation"},
			toolNames(t, ctx, session), "route order, then each toolkit's order")
	})

	t.Run("tools/call", func(t *testing.T) {
		res, err := session.CallTool(ctx, &sdk.CallToolParams{Name: "a__add", Arguments: map[string]any{"a": 2, "b": 3}})
		require.NoError(t, err)
		require.False(t, res.IsError)
		assert.Contains(t, res.Content[0].(*sdk.TextContent).Text, "5")
		res, err = session.CallTool(ctx, &sdk.CallToolParams{Name: "b__echo", Arguments: map[string]any{"message": "hi"}})
		require.NoError(t, err)
		assert.Equal(t, "Echo: hi", res.Content[0].(*sdk.TextContent).Text)
	})

	t.Run("progress", func(t *testing.T) {
		long := &sdk.CallToolParams{Name: "a__long_running_operation", Arguments: map[string]any{"duration": 0.3, "steps": 3}}
		long.SetProgressToken("tok-1")
		res, err := session.CallTool(ctx, long)
		require.NoError(t, err)
		assert.Contains(t, res.Content[0].(*sdk.TextContent).Text, "Long running operation completed")
		assert.Eventually(t, func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(progress) == 3
		}, 2*time.Second, 10*time.Millisecond)
		mu.Lock()
		assert.Equal(t, []float64{1, 2, 3}, progress)
		assert.Equal(t, []any{"tok-1", "tok-1", "tok-1"}, tokens)
		mu.Unlock()
	})

	t.Run("cancel", func(t *testing.T) {
		callCtx, callCancel := context.WithTimeout(ctx, 300*time.Millisecond)
		_, err := session.CallTool(callCtx, &sdk.CallToolParams{Name: "b__long_running_operation",
			Arguments: map[string]any{"duration": 10, "steps": 10}})
		callCancel()
		require.Error(t, err)
		assert.True(t, errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "cancel"), err.Error())
		res, err := session.CallTool(ctx, &sdk.CallToolParams{Name: "a__echo", Arguments: map[string]any{"message": "after"}})
		require.NoError(t, err)
		assert.Equal(t, "Echo: after", res.Content[0].(*sdk.TextContent).Text)
	})

	t.Run("resources", func(t *testing.T) {
		list, err := session.ListResources(ctx, nil)
		require.NoError(t, err)
		var uris []string
		for _, r := range list.Resources {
			uris = append(uris, r.URI)
		}
		assert.Equal(t, []string{"a+sluice://toolkit/readme", "b+sluice://toolkit/readme"}, uris)
		templates, err := session.ListResourceTemplates(ctx, nil)
		require.NoError(t, err)
		require.Len(t, templates.ResourceTemplates, 2)
		assert.Equal(t, "a+sluice://toolkit/echo/{text}", templates.ResourceTemplates[0].URITemplate)
		read, err := session.ReadResource(ctx, &sdk.ReadResourceParams{URI: "b+sluice://toolkit/readme"})
		require.NoError(t, err)
		require.Len(t, read.Contents, 1)
		assert.Equal(t, "b+sluice://toolkit/readme", read.Contents[0].URI, "the result's uri carries the prefix")
		assert.NotEmpty(t, read.Contents[0].Text)
		_, err = session.ReadResource(ctx, &sdk.ReadResourceParams{URI: "c+sluice://toolkit/readme"})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "Resource not found")
	})

	t.Run("prompts", func(t *testing.T) {
		list, err := session.ListPrompts(ctx, nil)
		require.NoError(t, err)
		require.Len(t, list.Prompts, 2)
		assert.Equal(t, "a__greeting", list.Prompts[0].Name)
		prompt, err := session.GetPrompt(ctx, &sdk.GetPromptParams{Name: "a__greeting", Arguments: map[string]string{"name": "Ada"}})
		require.NoError(t, err)
		require.NotEmpty(t, prompt.Messages)
		assert.Contains(t, prompt.Messages[0].Content.(*sdk.TextContent).Text, "Ada")
	})

	t.Run("unknown prefix", func(t *testing.T) {
		_, err := session.CallTool(ctx, &sdk.CallToolParams{Name: "c__echo", Arguments: map[string]any{"message": "x"}})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "Unknown tool: c__echo")
		_, err = session.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "x"}})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "Unknown tool: echo")
	})

	t.Run("bad cursor", func(t *testing.T) {
		_, err := session.ListTools(ctx, &sdk.ListToolsParams{Cursor: "not-a-cursor"})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "Invalid cursor")
	})
}

// TestGatewayPrefixNever serves one toolkit under its own names. Its
// calls are handed through to the toolkit (passThrough): the proxy
// accepts no stream for them and the toolkit accepts each one, progress
// included; a call the route's globs refuse stays the proxy's, which
// answers it.
func TestGatewayPrefixNever(t *testing.T) {
	endpoint, e := startGatewayEngine(t, `    options:
      prefix: never
    routes:
      - exit: a0
        when:
          - toolkit: a
            tool: ["echo", "long_*"]`)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var mu sync.Mutex
	var progress []float64
	session := connect(t, ctx, endpoint, &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			mu.Lock()
			progress = append(progress, req.Params.Progress)
			mu.Unlock()
		},
	})
	assert.Equal(t, []string{"echo", "long_running_operation"}, toolNames(t, ctx, session))
	proxied, served := opens(e, "mcp1"), opens(e, "a0")

	res, err := session.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "plain"}})
	require.NoError(t, err)
	assert.Equal(t, "Echo: plain", res.Content[0].(*sdk.TextContent).Text)
	read, err := session.ReadResource(ctx, &sdk.ReadResourceParams{URI: "sluice://toolkit/readme"})
	require.NoError(t, err)
	assert.Equal(t, "sluice://toolkit/readme", read.Contents[0].URI)
	long := &sdk.CallToolParams{Name: "long_running_operation", Arguments: map[string]any{"duration": 0.2, "steps": 2}}
	long.SetProgressToken("tok")
	_, err = session.CallTool(ctx, long)
	require.NoError(t, err)
	// The SDK hands notifications to the handler on its own goroutine.
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(progress) == 2
	}, 2*time.Second, 10*time.Millisecond, "progress comes through a handed-through call")
	mu.Lock()
	assert.Equal(t, []float64{1, 2}, progress)
	mu.Unlock()
	assert.Equal(t, proxied, opens(e, "mcp1"), "the proxy accepted no stream for a call")
	assert.Equal(t, served+3, opens(e, "a0"), "the toolkit accepted the three calls itself")

	_, err = session.CallTool(ctx, &sdk.CallToolParams{Name: "add", Arguments: map[string]any{"a": 1, "b": 2}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Unknown tool: add")
	assert.Equal(t, proxied+1, opens(e, "mcp1"), "a call the globs refuse is the proxy's")
	assert.Equal(t, served+3, opens(e, "a0"))
}

// TestGatewayPrefixNeverShadowed: two unprefixed routes that serve the
// same names (two toolkits) give a list with each name once, its first
// route's, and calls reach that route: a client never sees an item it
// cannot call, nor a second item of a name.
func TestGatewayPrefixNeverShadowed(t *testing.T) {
	endpoint, e := startGatewayEngine(t, `    options:
      prefix: never
    routes:
      - exit: a0
        when:
          - toolkit: a
            tool: ["echo"]
      - exit: b0
        when:
          - toolkit: b`)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	session := connect(t, ctx, endpoint, nil)
	names := toolNames(t, ctx, session)
	assert.Equal(t, "echo", names[0])
	assert.Len(t, slices.Compact(slices.Sorted(slices.Values(names))), len(names), "each name once: %v", names)
	assert.Contains(t, names, "add", "b's other tools are listed")
	a, b := opens(e, "a0"), opens(e, "b0")
	_, err := session.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "x"}})
	require.NoError(t, err)
	assert.Equal(t, a+1, opens(e, "a0"), "echo reaches the route it was listed for")
	assert.Equal(t, b, opens(e, "b0"))
}

// TestGatewayAllowGlobs filters lists and refuses calls by each route's
// globs.
func TestGatewayAllowGlobs(t *testing.T) {
	endpoint := startGateway(t, `    routes:
      - exit: a0
        when:
          - toolkit: a
            tool: ["echo", "add*"]
            prompt: none
      - exit: b0
        when:
          - toolkit: b
            tool: long_*
            resource: "sluice://toolkit/echo/*"`)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	session := connect(t, ctx, endpoint, nil)
	assert.Equal(t, []string{"a__echo", "a__add", "b__long_running_operation"}, toolNames(t, ctx, session))
	_, err := session.CallTool(ctx, &sdk.CallToolParams{Name: "b__echo", Arguments: map[string]any{"message": "x"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Unknown tool: b__echo")
	res, err := session.CallTool(ctx, &sdk.CallToolParams{Name: "a__echo", Arguments: map[string]any{"message": "y"}})
	require.NoError(t, err)
	assert.Equal(t, "Echo: y", res.Content[0].(*sdk.TextContent).Text)

	prompts, err := session.ListPrompts(ctx, nil)
	require.NoError(t, err)
	var names []string
	for _, p := range prompts.Prompts {
		names = append(names, p.Name)
	}
	assert.Equal(t, []string{"b__greeting"}, names)
	_, err = session.GetPrompt(ctx, &sdk.GetPromptParams{Name: "a__greeting", Arguments: map[string]string{"name": "x"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Unknown prompt: a__greeting")

	resources, err := session.ListResources(ctx, nil)
	require.NoError(t, err)
	var uris []string
	for _, r := range resources.Resources {
		uris = append(uris, r.URI)
	}
	sort.Strings(uris)
	assert.Equal(t, []string{"a+sluice://toolkit/readme"}, uris, "b's readme is not in its allow-set")
	_, err = session.ReadResource(ctx, &sdk.ReadResourceParams{URI: "b+sluice://toolkit/readme"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Resource not found")
	read, err := session.ReadResource(ctx, &sdk.ReadResourceParams{URI: "b+sluice://toolkit/echo/hi"})
	require.NoError(t, err)
	assert.Equal(t, "b+sluice://toolkit/echo/hi", read.Contents[0].URI)
}
