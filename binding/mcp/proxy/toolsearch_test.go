package proxy_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/binding/mcp/proxy"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/internal/enginetest"
)

// searchOptions is a proxy's options.cache with the search tools under
// toolkit zilla, hydrated with the reader's token, and an eager policy
// that gives the a toolkit's echo in full.
const searchOptions = `    options:
      cache:
        store: memory0
        authorization:
          test0:
            credentials: reader
        tools:
          search:
            toolkit: zilla
            limit: 3
          eager:
            policy: explicit
            match: [a__echo]
`

// callMeta calls a search tool and returns its result's structured
// content, or the text of an isError result.
func callMeta(t *testing.T, ctx context.Context, s *sdk.ClientSession, name string, args map[string]any) (map[string]any, string) {
	t.Helper()
	res, err := s.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	require.NoError(t, err)
	if res.IsError {
		require.Len(t, res.Content, 1)
		return nil, res.Content[0].(*sdk.TextContent).Text
	}
	require.Len(t, res.Content, 1)
	text := res.Content[0].(*sdk.TextContent).Text
	var fromText map[string]any
	require.NoError(t, json.Unmarshal([]byte(text), &fromText), "the text content is the structured content as JSON")
	sc, ok := res.StructuredContent.(map[string]any)
	require.True(t, ok, "structuredContent is an object: %T", res.StructuredContent)
	assert.Equal(t, sc, fromText)
	return sc, ""
}

func resultNames(sc map[string]any) []string {
	var names []string
	tools, _ := sc["tools"].([]any)
	for _, v := range tools {
		names = append(names, v.(map[string]any)["name"].(string))
	}
	return names
}

// TestToolSearchGateway drives options.cache.tools with the Go SDK
// through the mcp server, the proxy and three toolkits: tools/list gives
// a__echo in full and the search tools, every other tool being deferred
// to them; search_tools and describe_tool answer from the cached list,
// each caller finding only the tools it may call; execute_tool calls the
// tool it names.
// It runs with the index built on the worker's thread and on a
// goroutine of its own, as a large list's is.
func TestToolSearchGateway(t *testing.T) {
	t.Run("indexed on the worker", testToolSearchGateway)
	t.Run("indexed on a goroutine", func(t *testing.T) {
		// Restored once the engine has stopped: its workers read it.
		t.Cleanup(proxy.SetSyncIndexTools(0))
		testToolSearchGateway(t)
	})
}

func testToolSearchGateway(t *testing.T) {
	endpoint := guardedGateway(t, searchOptions, threeGuardedRoutes, "a", "b", "c")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	anon := connectAs(t, ctx, endpoint, "")
	reader := connectAs(t, ctx, endpoint, "reader")
	want := []string{"a__echo", "zilla__search_tools", "zilla__describe_tool", "zilla__execute_tool"}
	assert.Equal(t, want, toolNames(t, ctx, anon), "a fanned-out list (the anonymous caller reaches less than the hydrate session)")
	assert.Equal(t, want, toolNames(t, ctx, reader), "the cached list")

	tools, err := reader.ListTools(ctx, nil)
	require.NoError(t, err)
	search := tools.Tools[1]
	assert.Equal(t, "Search Tools", search.Title)
	assert.Contains(t, string(mustJSON(t, search.InputSchema)), `"required":["query"]`)
	assert.True(t, search.Annotations.ReadOnlyHint)

	sc, _ := callMeta(t, ctx, reader, "zilla__search_tools", map[string]any{"query": "add two numbers"})
	assert.Equal(t, []string{"a__add", "b__add"}, resultNames(sc), "the reader reaches a and b")
	first := sc["tools"].([]any)[0].(map[string]any)
	assert.Equal(t, map[string]any{"name": "a__add", "description": "Adds two numbers"}, first, "a match is its name and description")

	sc, _ = callMeta(t, ctx, anon, "zilla__search_tools", map[string]any{"query": "add two numbers"})
	assert.Equal(t, []string{"a__add"}, resultNames(sc), "the anonymous caller reaches a alone")

	sc, _ = callMeta(t, ctx, reader, "zilla__search_tools", map[string]any{"query": "echo operation", "max_results": 2})
	assert.Len(t, resultNames(sc), 2, "max_results bounds the answer")
	sc, _ = callMeta(t, ctx, reader, "zilla__search_tools", map[string]any{"query": "echo operation add numbers", "max_results": 50})
	assert.Len(t, resultNames(sc), 3, "the configured limit bounds max_results")
	sc, _ = callMeta(t, ctx, reader, "zilla__search_tools", map[string]any{"query": "the of and"})
	assert.Empty(t, resultNames(sc), "stopwords match nothing")

	sc, _ = callMeta(t, ctx, reader, "zilla__describe_tool", map[string]any{"name": "b__add"})
	require.Len(t, sc["tools"], 1)
	described := sc["tools"].([]any)[0].(map[string]any)
	assert.Equal(t, "b__add", described["name"])
	assert.Contains(t, described, "inputSchema", "the whole definition")

	_, text := callMeta(t, ctx, anon, "zilla__describe_tool", map[string]any{"name": "b__add"})
	assert.Equal(t, "Tool not found", text, "a tool the caller may not call is not there")
	_, text = callMeta(t, ctx, reader, "zilla__describe_tool", map[string]any{"name": "c__add"})
	assert.Equal(t, "Tool not found", text, "nor one the cache does not hold")

	res, err := reader.CallTool(ctx, &sdk.CallToolParams{Name: "zilla__execute_tool",
		Arguments: map[string]any{"name": "b__echo", "arguments": map[string]any{"message": "via search"}}})
	require.NoError(t, err)
	require.False(t, res.IsError)
	assert.Contains(t, res.Content[0].(*sdk.TextContent).Text, "via search")

	_, text = callMeta(t, ctx, anon, "zilla__execute_tool", map[string]any{"name": "b__echo", "arguments": map[string]any{"message": "x"}})
	assert.Equal(t, "Tool not found", text, "execute_tool reaches only what tools/call would")

	for name, args := range map[string]map[string]any{
		"zilla__search_tools":  {"max_results": 2},
		"zilla__describe_tool": {},
		"zilla__execute_tool":  {"arguments": map[string]any{}},
	} {
		_, err := reader.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), "Invalid params", name)
	}
	_, err = reader.CallTool(ctx, &sdk.CallToolParams{Name: "zilla__execute_tool",
		Arguments: map[string]any{"name": "a__echo", "arguments": "not an object"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "arguments is an object")
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

// TestToolArgumentsChecked: with options.tools (a json model, strategy
// tool), a tools/call whose arguments fail the cached tool's inputSchema
// is answered -32602, naming where, and never reaches the route; good
// arguments go through, as do those of execute_tool, which are checked
// the same way. A tool the caller may not reach is an unknown tool, its
// schema not consulted.
func TestToolArgumentsChecked(t *testing.T) {
	src := `  mcp1:
    type: mcp
    kind: proxy
    options:
      cache:
        store: memory0
        tools:
          search: {toolkit: zilla}
      tools:
        model: json
        catalog:
          tools_schema: [{strategy: tool}]
    routes:
      - exit: a0
        when: [{toolkit: a}]
      - exit: b0
        when: [{toolkit: b}]
        guarded: {test0: [read]}
  a0:
    type: toolkit
    kind: server
  b0:
    type: toolkit
    kind: server
guards:
  test0:
    type: test
    options: {credentials: reader, roles: [read]}
stores:
  memory0:
    type: memory
catalogs:
  tools_schema:
    type: test
`
	endpoint, _ := enginetest.StartMCP(t, "proxy.yaml", "mcp1", src)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s := connectAs(t, ctx, endpoint, "")
	require.Contains(t, toolNames(t, ctx, s), "a__add", "the tools list is cached")

	res, err := s.CallTool(ctx, &sdk.CallToolParams{Name: "a__add", Arguments: map[string]any{"a": 2, "b": 40}})
	require.NoError(t, err)
	assert.Contains(t, res.Content[0].(*sdk.TextContent).Text, "42")

	for args, want := range map[string]string{
		`{"a":"two","b":40}`: "Invalid params: arguments/a: got string, want number",
		`{"a":2}`:            "Invalid params: arguments: missing property 'b'",
	} {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(args), &m))
		_, err := s.CallTool(ctx, &sdk.CallToolParams{Name: "a__add", Arguments: m})
		var rpcErr *jsonrpc.Error
		require.ErrorAs(t, err, &rpcErr, args)
		assert.EqualValues(t, -32602, rpcErr.Code, args)
		assert.Equal(t, want, rpcErr.Message, args)
	}

	_, err = s.CallTool(ctx, &sdk.CallToolParams{Name: "zilla__execute_tool",
		Arguments: map[string]any{"name": "a__echo", "arguments": map[string]any{"message": 7}}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Invalid params: arguments/message: got number, want string")
	res, err = s.CallTool(ctx, &sdk.CallToolParams{Name: "zilla__execute_tool",
		Arguments: map[string]any{"name": "a__echo", "arguments": map[string]any{"message": "checked"}}})
	require.NoError(t, err)
	assert.Contains(t, res.Content[0].(*sdk.TextContent).Text, "checked")

	_, err = s.CallTool(ctx, &sdk.CallToolParams{Name: "b__add", Arguments: map[string]any{"a": "two"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Unknown tool: b__add", "a tool the caller may not reach tells nothing of its schema")
}

// TestGateHoldsSearch: a stateless search_tools that comes before the
// cached tools list has settled waits at the cache's gate, as a session
// does, and is answered from the list once it settles, rather than
// finding nothing. The route answers no hydrate list, so the gate opens
// at its timeout; the store is seeded meanwhile, as another instance
// would.
func TestGateHoldsSearch(t *testing.T) {
	r := newCacheRigWith(t, "    type: test\n", "        tools:\n          search: {toolkit: zilla}\n", []*listApp{{silent: true}})
	var exB mcp.McpBeginExBuilder
	params := []byte(`{"name":"zilla__search_tools","arguments":{"query":"weather"}}`)
	ext := make([]byte, 256)
	n, err := exB.Wrap(ext, 0, len(ext)).TypeID(r.typeID).ToolsCall().SessionIDNull().Name("zilla__search_tools").
		ContentLength(int32(len(params))).BuildLimit()
	require.NoError(t, err)
	c := enginetest.NewCaller(r.w, r.driver, r.proxy, ext[:n], params, 1<<20)
	c.Start(1)
	enginetest.Settle(t, r.e)

	st, ok := r.w.Store("store0")
	require.True(t, ok)
	put := make(chan bool, 1)
	require.NoError(t, r.e.Execute(0, func(*engine.Worker) {
		st.Put("mcp1.tools", []byte(`{"tools":[{"name":"get_weather","description":"Weather"}]}`), 0, func(error) { put <- true })
	}))
	enginetest.ReceiveBy(t, r.timer, put, "the put")
	enginetest.Settle(t, r.e)
	r.clock.Tick(t, r.e, 5*time.Second)
	require.True(t, c.Wait(t, r.timer))
	assert.Contains(t, string(c.Reply()), `"structuredContent":{"tools":[{"name":"get_weather","description":"Weather"}]}`)
}
