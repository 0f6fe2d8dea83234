package proxy_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/internal/enginetest"
)

// bearer adds an Authorization header to every request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// guardedGateway runs the mcp server with the test guard test0 (token
// "reader", whose sessions hold the role read) in front of a proxy whose
// options (none when "") and routes are given as YAML, each toolkit route
// exiting to a toolkit server <toolkit>0, and a memory store memory0.
func guardedGateway(t *testing.T, options, routes string, toolkits ...string) string {
	t.Helper()
	endpoint, _ := guardedEngine(t, options, routes, toolkits...)
	return endpoint
}

// guardedEngine is guardedGateway that returns the engine too.
func guardedEngine(t *testing.T, options, routes string, toolkits ...string) (string, *engine.Engine) {
	t.Helper()
	src := "    options:\n      authorization:\n        test0:\n          credentials: \"Bearer {credentials}\"\n" +
		"  mcp1:\n    type: mcp\n    kind: proxy\n" + options + "    routes:\n" + routes
	for _, tk := range toolkits {
		src += "  " + tk + "0:\n    type: toolkit\n    kind: server\n"
	}
	src += "guards:\n  test0:\n    type: test\n    options:\n      credentials: reader\n      roles: [read]\n" +
		"stores:\n  memory0:\n    type: memory\n"
	return enginetest.StartMCP(t, "proxy.yaml", "mcp1", src)
}

func connectAs(t *testing.T, ctx context.Context, endpoint, token string) *sdk.ClientSession {
	t.Helper()
	tr := &sdk.StreamableClientTransport{Endpoint: endpoint}
	if token != "" {
		tr.HTTPClient = &http.Client{Transport: bearer{token}}
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "guarded-test", Version: "1.0.0"}, nil)
	session, err := client.Connect(ctx, tr, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = session.Close() })
	return session
}

// threeGuardedRoutes: toolkit a open to all, b for the read role, c for
// admin.
const threeGuardedRoutes = `      - exit: a0
        when: [{toolkit: a}]
      - exit: b0
        when: [{toolkit: b}]
        guarded: {test0: [read]}
      - exit: c0
        when: [{toolkit: c}]
        guarded: {test0: [admin]}
`

// TestGuardedRoutes: a guarded route is listed and called only by a
// caller whose session the guard verifies with the route's roles. An
// anonymous caller sees the open route alone; the reader sees the route
// asking for read too, and never the one asking for admin; a call to a
// route the caller may not reach is an unknown tool, as if the route
// were not there.
func TestGuardedRoutes(t *testing.T) {
	endpoint := guardedGateway(t, "", threeGuardedRoutes, "a", "b", "c")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	anon := connectAs(t, ctx, endpoint, "")
	names := toolNames(t, ctx, anon)
	assert.Contains(t, names, "a__echo")
	for _, n := range names {
		assert.False(t, strings.HasPrefix(n, "b__") || strings.HasPrefix(n, "c__"), "anonymous sees %s", n)
	}
	res, err := anon.CallTool(ctx, &sdk.CallToolParams{Name: "b__echo", Arguments: map[string]any{"message": "hi"}})
	assertUnknownTool(t, res, err, "b__echo")

	reader := connectAs(t, ctx, endpoint, "reader")
	names = toolNames(t, ctx, reader)
	assert.Contains(t, names, "a__echo")
	assert.Contains(t, names, "b__echo")
	for _, n := range names {
		assert.False(t, strings.HasPrefix(n, "c__"), "the reader sees %s", n)
	}
	res, err = reader.CallTool(ctx, &sdk.CallToolParams{Name: "b__echo", Arguments: map[string]any{"message": "hi"}})
	require.NoError(t, err)
	require.False(t, res.IsError)
	assert.Equal(t, "Echo: hi", res.Content[0].(*sdk.TextContent).Text)
	res, err = reader.CallTool(ctx, &sdk.CallToolParams{Name: "c__echo", Arguments: map[string]any{"message": "hi"}})
	assertUnknownTool(t, res, err, "c__echo")
}

// assertUnknownTool checks a call was refused as naming no tool.
func assertUnknownTool(t *testing.T, res *sdk.CallToolResult, err error, name string) {
	t.Helper()
	if err != nil {
		assert.Contains(t, err.Error(), "Unknown tool")
		return
	}
	require.True(t, res.IsError, "the call to %s was served", name)
	assert.Contains(t, res.Content[0].(*sdk.TextContent).Text, "Unknown tool")
}

// TestGuardedRoutesChallenge: when every route is guarded, a caller who
// may reach none gets the initialize answered with a Bearer challenge
// whose scope is the roles the routes ask for: 401 without a token, 403
// with one whose session lacks the roles.
func TestGuardedRoutesChallenge(t *testing.T) {
	endpoint := guardedGateway(t, "", `      - exit: c0
        when: [{toolkit: c}]
        guarded: {test0: [admin]}
`, "c")
	initialize := func(token string) (*http.Response, string) {
		req, err := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp, string(body)
	}
	resp, body := initialize("")
	assert.Equal(t, 401, resp.StatusCode, body)
	assert.Equal(t, `Bearer error="invalid_token", scope="admin"`, resp.Header.Get("WWW-Authenticate"))
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"Unauthorized: invalid_token"}}`, body)

	resp, body = initialize("reader")
	assert.Equal(t, 403, resp.StatusCode, body)
	assert.Equal(t, `Bearer error="insufficient_scope", scope="admin"`, resp.Header.Get("WWW-Authenticate"))

	resp, body = initialize("forged")
	assert.Equal(t, 401, resp.StatusCode, body)
	assert.Equal(t, `Bearer error="invalid_token"`, resp.Header.Get("WWW-Authenticate"))
}

// TestGuardedRoutesCached: a cached list holds what the hydrate session
// reaches, and serves only callers who reach the same routes; the others
// get their own. Hydrated anonymously, the cache holds route a alone: the
// anonymous caller is served it, the reader still sees b. Hydrated as the
// reader, the cache holds a and b: the reader is served it, and the
// anonymous caller still does not see b.
func TestGuardedRoutesCached(t *testing.T) {
	routes := `      - exit: a0
        when: [{toolkit: a}]
      - exit: b0
        when: [{toolkit: b}]
        guarded: {test0: [read]}
`
	for name, cache := range map[string]string{
		"hydrated anonymously":   "    options:\n      cache: {store: memory0}\n",
		"hydrated as the reader": "    options:\n      cache:\n        store: memory0\n        authorization:\n          test0: {credentials: reader}\n",
	} {
		t.Run(name, func(t *testing.T) {
			endpoint := guardedGateway(t, cache, routes, "a", "b")
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			for range 2 { // the second list is the cache's, if any is
				anon := connectAs(t, ctx, endpoint, "")
				names := toolNames(t, ctx, anon)
				assert.Contains(t, names, "a__echo")
				assert.NotContains(t, names, "b__echo")
				reader := connectAs(t, ctx, endpoint, "reader")
				names = toolNames(t, ctx, reader)
				assert.Contains(t, names, "a__echo")
				assert.Contains(t, names, "b__echo")
			}
		})
	}
}

// TestCacheRouteCredentials: a route's with.cache.credentials are what
// the hydrate session presents on that route. The cache's own
// credentials are none (anonymous), and route b, guarded for the read
// role, has the reader's: the stored list holds b's tools, and the
// reader's lists are served from it, while the anonymous caller's go to
// the one route it reaches.
func TestCacheRouteCredentials(t *testing.T) {
	endpoint, e := guardedEngine(t, "    options:\n      cache:\n        store: memory0\n        authorization:\n          test0: {}\n",
		`      - exit: a0
        when: [{toolkit: a}]
      - exit: b0
        when: [{toolkit: b}]
        guarded: {test0: [read]}
        with:
          cache: {credentials: reader}
`, "a", "b")
	st, ok := e.Worker(0).Store("memory0")
	require.True(t, ok)
	timer := enginetest.NewTimer()
	var entry string
	for range 1000 {
		enginetest.Settle(t, e)
		got := make(chan string, 1)
		require.NoError(t, e.Execute(0, func(*engine.Worker) {
			st.Get("mcp1.tools", func(v []byte, _ bool) { got <- string(v) })
		}))
		if entry = enginetest.ReceiveBy(t, timer, got, "the get"); strings.Contains(entry, "b__echo") {
			break
		}
	}
	require.Contains(t, entry, "b__echo", "the hydrate session reached route b with its credentials")
	assert.Contains(t, entry, "a__echo")

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	names := toolNames(t, ctx, connectAs(t, ctx, endpoint, "reader"))
	assert.Contains(t, names, "b__echo")
	names = toolNames(t, ctx, connectAs(t, ctx, endpoint, ""))
	assert.Contains(t, names, "a__echo")
	assert.NotContains(t, names, "b__echo", "the cached list is not the anonymous caller's")
}
