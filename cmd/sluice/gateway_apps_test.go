package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// startAppsServer runs testdata/ts-apps-server.mjs, an MCP Apps server on
// the TypeScript SDK and ext-apps, whose answers carry label.
func startAppsServer(t *testing.T, label string) *upstream {
	t.Helper()
	dir, node, script := peerScript(t, "ts-apps-server.mjs")
	port := freePort(t)
	cmd := exec.Command(node, script, fmt.Sprint(port), label)
	cmd.Dir = dir
	return startProcess(t, cmd, port)
}

// appsHost is what testdata/ts-apps-host.mjs prints.
type appsHost struct {
	Extension bool     `json:"extension"`
	Plain     []string `json:"plain"`
	Tools     map[string]struct {
		URI        string `json:"uri"`
		Flat       string `json:"flat"`
		MimeType   string `json:"mimeType"`
		HTML       string `json:"html"`
		ReadURI    string `json:"readUri"`
		Text       string `json:"text"`
		Link       string `json:"link"`
		LinkedHTML string `json:"linkedHtml"`
		View       bool   `json:"view"`
	} `json:"tools"`
	Resources []string `json:"resources"`
}

func runAppsHost(t *testing.T, endpoint string, args ...string) appsHost {
	t.Helper()
	var out appsHost
	stdout := runNodeScript(t, "ts-apps-host.mjs", 60*time.Second, append([]string{endpoint}, args...)...)
	require.NoError(t, json.Unmarshal(stdout, &out), "%s", stdout)
	return out
}

// TestGatewayApps puts two MCP Apps servers that serve the same view,
// ui://weather/view.html, behind one gateway, and has an MCP Apps host
// (the TypeScript SDK's client with ext-apps' getToolUiResourceUri, which
// refuses a view whose uri is not ui://) find each tool's view, read it,
// call the tool and read the view its result links to. Each route's view
// keeps its ui:// scheme, the route's prefix in its authority, and reads
// back from its own server; so does the link. Directly, the host sees the
// server's own uri.
//
// The extension is negotiated through the gateway both ways: the servers
// serve the view only to a client that declares it renders views (as
// ext-apps documents), and the gateway declares the servers' extension.
// A host that declares nothing gets the text-only tools. Through one
// route, unprefixed, the host sees the server's own uris.
func TestGatewayApps(t *testing.T) {
	a, b := startAppsServer(t, "alpha"), startAppsServer(t, "beta")

	direct := runAppsHost(t, a.URL, "ui")
	assert.True(t, direct.Extension)
	require.Contains(t, direct.Tools, "weather")
	assert.Equal(t, "ui://weather/view.html", direct.Tools["weather"].URI)
	assert.Equal(t, []string{"ui://weather/view.html"}, direct.Resources)

	port := freePort(t)
	endpoint := startGateway(t, gatewayConfig(port, "",
		gatewayRoute{Toolkit: "a", Upstream: a.URL},
		gatewayRoute{Toolkit: "b", Upstream: b.URL}), port, 2)
	out := runAppsHost(t, endpoint, "ui")
	assert.True(t, out.Extension, "the gateway declares the servers' MCP Apps extension")
	assert.Equal(t, []string{"a__time", "b__time"}, out.Plain)
	require.Len(t, out.Tools, 2, "%+v", out)
	for _, tc := range []struct{ tool, view, label string }{
		{"a__weather", "ui://a+weather/view.html", "alpha"},
		{"b__weather", "ui://b+weather/view.html", "beta"},
	} {
		got, ok := out.Tools[tc.tool]
		if !assert.True(t, ok, "%s listed with a view: %+v", tc.tool, out) {
			continue
		}
		assert.Equal(t, tc.view, got.URI, tc.tool)
		assert.Equal(t, tc.view, got.Flat, "%s: the flat _meta key", tc.tool)
		assert.Equal(t, tc.view, got.ReadURI, "%s: the read's contents[].uri", tc.tool)
		assert.True(t, got.View, "%s: mime type %q", tc.tool, got.MimeType)
		assert.Equal(t, "<html><body>"+tc.label+"</body></html>", got.HTML, tc.tool)
		assert.Equal(t, tc.label+": sunny in Oslo", got.Text, tc.tool)
		assert.Equal(t, tc.view, got.Link, "%s: the result's resource link", tc.tool)
		assert.Equal(t, got.HTML, got.LinkedHTML, tc.tool)
	}
	assert.Equal(t, []string{"ui://a+weather/view.html", "ui://b+weather/view.html"}, out.Resources)

	plain := runAppsHost(t, endpoint)
	assert.Empty(t, plain.Tools, "a host that renders no views is served none")
	assert.Equal(t, []string{"a__time", "a__weather", "b__time", "b__weather"}, plain.Plain)

	// With one route the proxy puts no prefix on, and hands calls through.
	port1 := freePort(t)
	one := runAppsHost(t, startGateway(t, gatewayConfig(port1, "", gatewayRoute{Toolkit: "a", Upstream: a.URL}), port1, 2), "ui")
	assert.True(t, one.Extension)
	require.Contains(t, one.Tools, "weather", "%+v", one)
	assert.Equal(t, "ui://weather/view.html", one.Tools["weather"].URI)
	assert.Equal(t, "<html><body>alpha</body></html>", one.Tools["weather"].LinkedHTML)

	// A 2026-07-28 client is served through the worker's own session,
	// which declares views upstream for all the clients it serves.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	session := sdkSession(t, ctx, endpoint, "2026-07-28")
	require.NotNil(t, session.InitializeResult())
	assert.Contains(t, session.InitializeResult().Capabilities.Extensions, "io.modelcontextprotocol/ui",
		"server/discover declares the servers' MCP Apps extension")
	list, err := session.ListTools(ctx, nil)
	require.NoError(t, err)
	var view string
	for _, tool := range list.Tools {
		if tool.Name == "b__weather" {
			ui, _ := tool.Meta["ui"].(map[string]any)
			view, _ = ui["resourceUri"].(string)
		}
	}
	require.Equal(t, "ui://b+weather/view.html", view, "%+v", list.Tools)
	read, err := session.ReadResource(ctx, &mcp.ReadResourceParams{URI: view})
	require.NoError(t, err)
	require.Len(t, read.Contents, 1)
	assert.Equal(t, "<html><body>beta</body></html>", read.Contents[0].Text)
	assert.Equal(t, view, read.Contents[0].URI)
}

// TestGatewayAppsCached puts the proxy's list cache in front of the two
// MCP Apps servers. The cache lists the routes' tools on a hydrate
// session of its own and serves that list to every client, so what the
// session declares decides what all get: it declares views, and a host
// that renders them gets them from the cache as from the routes. A client
// that declares nothing is served the same list once it is cached, its
// tools' views in _meta for it to ignore.
func TestGatewayAppsCached(t *testing.T) {
	a, b := startAppsServer(t, "alpha"), startAppsServer(t, "beta")
	port := freePort(t)
	cfg := gatewayConfig(port, "", gatewayRoute{Toolkit: "a", Upstream: a.URL}, gatewayRoute{Toolkit: "b", Upstream: b.URL})
	const proxy = "  proxy0:\n    type: mcp\n    kind: proxy\n"
	cfg = strings.Replace(cfg, proxy, proxy+"    options:\n      cache: {store: memory0}\n", 1)
	endpoint := startGateway(t, cfg+"stores:\n  memory0:\n    type: memory\n", port, 2)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	session := sdkSession(t, ctx, endpoint, "2025-11-25")
	view := func() string {
		list, err := session.ListTools(ctx, nil)
		require.NoError(t, err)
		for _, tool := range list.Tools {
			if tool.Name == "a__weather" {
				ui, _ := tool.Meta["ui"].(map[string]any)
				s, _ := ui["resourceUri"].(string)
				return s
			}
		}
		return ""
	}
	require.Eventually(t, func() bool { return view() == "ui://a+weather/view.html" }, 10*time.Second, 50*time.Millisecond,
		"the cached list holds the view this client did not ask for: the hydrate session declared views")

	out := runAppsHost(t, endpoint, "ui")
	require.Len(t, out.Tools, 2, "%+v", out)
	assert.Equal(t, "<html><body>beta</body></html>", out.Tools["b__weather"].HTML)
	assert.Equal(t, "ui://b+weather/view.html", out.Tools["b__weather"].Link)
}
