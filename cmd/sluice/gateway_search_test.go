package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// searchGatewayConfig is gatewayConfig with the proxy's list cache on a
// memory store and its search tools (toolkit zilla), only node__echo
// given in full by tools/list.
func searchGatewayConfig(port int, routes ...gatewayRoute) string {
	cfg := gatewayConfig(port, "", routes...)
	const proxy = "  proxy0:\n    type: mcp\n    kind: proxy\n"
	cfg = strings.Replace(cfg, proxy, proxy+`    options:
      cache:
        store: memory0
        tools:
          search: {toolkit: zilla, limit: 4}
          eager: {policy: explicit, match: [node__echo]}
`, 1)
	return cfg + "stores:\n  memory0:\n    type: memory\n"
}

// TestGatewayToolSearch runs the search tools through sluice start with
// two workers, server-everything and go-sdk's everything-server behind
// it, and the Go SDK's client in front: the list gives node__echo and
// the search tools alone; search finds the upstreams' tools, describe
// gives one's schema, and execute_tool calls each upstream, with the
// call's progress relayed. The MCP Inspector's CLI (the TypeScript SDK's
// client) searches and executes too.
func TestGatewayToolSearch(t *testing.T) {
	goUp := startGoEverything(t, 0, false)
	nodeUp := startNodeEverything(t, 0)
	port := freePort(t)
	endpoint := startGateway(t, searchGatewayConfig(port,
		gatewayRoute{Toolkit: "everything", Upstream: goUp.URL},
		gatewayRoute{Toolkit: "node", Upstream: nodeUp.URL}), port, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	var progress atomic.Int32
	client := mcp.NewClient(&mcp.Implementation{Name: "search-test", Version: "1.0.0"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) { progress.Add(1) },
	})
	for i := range 3 { // sessions land on both workers
		session, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint}, nil)
		require.NoError(t, err)
		defer session.Close()
		assert.Equal(t, []string{"node__echo", "zilla__search_tools", "zilla__describe_tool", "zilla__execute_tool"},
			toolNames(t, ctx, session), "session %d", i)
	}
	session, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint}, nil)
	require.NoError(t, err)
	defer session.Close()

	call := func(name string, args map[string]any) map[string]any {
		t.Helper()
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		require.NoError(t, err)
		require.False(t, res.IsError, "%s: %s", name, text(t, res))
		var sc map[string]any
		require.NoError(t, json.Unmarshal([]byte(text(t, res)), &sc))
		return sc
	}
	found := func(sc map[string]any) []string {
		var names []string
		for _, v := range sc["tools"].([]any) {
			names = append(names, v.(map[string]any)["name"].(string))
		}
		return names
	}

	names := found(call("zilla__search_tools", map[string]any{"query": "progress"}))
	require.NotEmpty(t, names)
	assert.Contains(t, names, "everything__test_tool_with_progress")
	assert.LessOrEqual(t, len(names), 4)
	names = found(call("zilla__search_tools", map[string]any{"query": "echo", "max_results": 1}))
	assert.Equal(t, []string{"node__echo"}, names)

	sc := call("zilla__describe_tool", map[string]any{"name": "node__get-sum"})
	tool := sc["tools"].([]any)[0].(map[string]any)
	assert.Equal(t, "node__get-sum", tool["name"])
	assert.Contains(t, fmt.Sprint(tool["inputSchema"]), "properties")

	res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "zilla__execute_tool",
		Arguments: map[string]any{"name": "node__get-sum", "arguments": map[string]any{"a": 2, "b": 40}}})
	require.NoError(t, err)
	require.False(t, res.IsError, text(t, res))
	assert.Contains(t, text(t, res), "42")

	p := &mcp.CallToolParams{Name: "zilla__execute_tool",
		Arguments: map[string]any{"name": "everything__test_tool_with_progress"}}
	p.SetProgressToken("search-progress")
	res, err = session.CallTool(ctx, p)
	require.NoError(t, err)
	require.False(t, res.IsError, text(t, res))
	assert.Positive(t, progress.Load(), "the tool's progress reaches the caller through execute_tool")

	res, err = session.CallTool(ctx, &mcp.CallToolParams{Name: "zilla__execute_tool",
		Arguments: map[string]any{"name": "nowhere__tool"}})
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Equal(t, "Tool not found", text(t, res))

	// The TypeScript SDK's client, through the MCP Inspector's CLI.
	cli := inspectorCLI(t, endpoint)
	out := cli("--method", "tools/call", "--tool-name", "zilla__search_tools", "--tool-arg", "query=echo", "--tool-arg", "max_results=1")
	assert.JSONEq(t, `{"tools":[{"name":"node__echo","description":"Echoes back the input string"}]}`, firstText(t, out, "content"))
	out = cli("--method", "tools/call", "--tool-name", "zilla__execute_tool", "--tool-arg", "name=node__echo", "--tool-arg", `arguments={"message":"hi"}`)
	assert.Equal(t, "Echo: hi", firstText(t, out, "content"))
}

// TestGatewayEagerDeferred: with an eager policy and no search tools,
// tools/list gives every tool, the deferred ones marked
// "defer_loading": true, and real clients take the list as it is: the Go
// SDK's client and the MCP Inspector's CLI list and call a deferred tool.
func TestGatewayEagerDeferred(t *testing.T) {
	nodeUp := startNodeEverything(t, 0)
	port := freePort(t)
	cfg := searchGatewayConfig(port, gatewayRoute{Toolkit: "node", Upstream: nodeUp.URL})
	cfg = strings.Replace(cfg, "          search: {toolkit: zilla, limit: 4}\n", "", 1)
	cfg = strings.Replace(cfg, "match: [node__echo]", "match: [echo]", 1) // one route: names go unprefixed
	endpoint := startGateway(t, cfg, port, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	session, err := mcp.NewClient(&mcp.Implementation{Name: "eager-test", Version: "1.0.0"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint}, nil)
	require.NoError(t, err)
	defer session.Close()
	names := toolNames(t, ctx, session)
	assert.Contains(t, names, "echo")
	assert.Contains(t, names, "get-sum", "a deferred tool is still listed")
	assert.NotContains(t, names, "zilla__search_tools")

	resp, body := initializeWith(t, endpoint, "", "", oauthInitialize)
	require.Equal(t, 200, resp.StatusCode, body)
	sid := resp.Header.Get("Mcp-Session-Id")
	resp, body = initializeWith(t, endpoint, "", sid, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	require.Equal(t, 200, resp.StatusCode, body)
	var list struct {
		Result struct {
			Tools []map[string]any `json:"tools"`
		} `json:"result"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &list), body)
	deferred := map[string]any{}
	for _, tool := range list.Result.Tools {
		deferred[tool["name"].(string)] = tool["defer_loading"]
	}
	assert.Nil(t, deferred["echo"], "the eager tool is given as it is")
	assert.Equal(t, true, deferred["get-sum"])

	cli := inspectorCLI(t, endpoint)
	var cliNames []string
	for _, tool := range cli("--method", "tools/list")["tools"].([]any) {
		cliNames = append(cliNames, tool.(map[string]any)["name"].(string))
	}
	assert.Contains(t, cliNames, "get-sum")
	assert.Equal(t, "The sum of 2 and 40 is 42.", firstText(t, cli("--method", "tools/call", "--tool-name", "get-sum", "--tool-arg", "a=2", "--tool-arg", "b=40"), "content"))
}
