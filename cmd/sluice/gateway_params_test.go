package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/internal/enginetest"
)

// paramCall POSTs a 2026-07-28 request as a raw client: the standard
// headers, params (members, without _meta) and the extra headers hdr. It
// returns the HTTP status and the JSON-RPC response.
func paramCall(t *testing.T, ctx context.Context, endpoint string, id int, method, name, params string, hdr ...string) (int, map[string]any) {
	t.Helper()
	if params != "" {
		params += ","
	}
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":{%s"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",`+
		`"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"}}}}`, id, method, params)
	h := []string{"Mcp-Method", method}
	if name != "" {
		h = append(h, "Mcp-Name", name)
	}
	r, err := enginetest.PostMCP(ctx, endpoint, "2026-07-28", "", body, append(h, hdr...)...)
	require.NoError(t, err)
	require.NotNil(t, r.Msg, "status %d: no JSON-RPC message", r.Status)
	return r.Status, r.Msg
}

// resultText returns the first text content of a tools/call response.
func resultText(m map[string]any) string {
	res, _ := m["result"].(map[string]any)
	content, _ := res["content"].([]any)
	if len(content) == 0 {
		return ""
	}
	c, _ := content[0].(map[string]any)
	s, _ := c["text"].(string)
	return s
}

// TestGatewayParamHeaders: a 2026-07-28 client calls go-sdk's
// test_x_mcp_header (its region argument declared "x-mcp-header":
// "Region", SEP-2243) through the gateway to the stateless
// everything-server. Once the tools are listed through the gateway, a
// call with the right Mcp-Param-Region header succeeds, the client kind
// mirroring the header upstream, plain or =?base64?…?=; a wrong or
// missing one gets 400 -32020 from the gateway itself. Before any
// listing the gateway knows no declaration: the upstream's -32020 makes
// the client kind list the tools and call again with the header.
func TestGatewayParamHeaders(t *testing.T) {
	up := startGoEverything(t, 0, true)
	port := freePort(t)
	gw := startGateway(t, gatewayConfig(port, "never", gatewayRoute{Toolkit: "everything", Upstream: up.URL, Versions: "[2026-07-28, 2025-11-25]"}), port, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const tool = "test_x_mcp_header"

	// Directly, the upstream takes the header and checks it.
	status, m := paramCall(t, ctx, up.URL, 1, "tools/call", tool, `"name":"test_x_mcp_header","arguments":{"region":"us-west1"}`, "Mcp-Param-Region", "us-west1")
	require.Equal(t, 200, status, "%v", m)
	assert.Equal(t, "region=us-west1", resultText(m))

	// Not listed through the gateway yet: the call goes without the
	// header, the upstream refuses it with -32020, and the client kind
	// lists the upstream's tools, learns the declaration and calls again
	// with the header.
	status, m = paramCall(t, ctx, gw, 2, "tools/call", tool, `"name":"test_x_mcp_header","arguments":{"region":"us-west1"}`, "Mcp-Param-Region", "us-west1")
	require.Equal(t, 200, status, "%v", m)
	assert.Equal(t, "region=us-west1", resultText(m))

	// A tool the upstream does not have: its own error, after the
	// listing finds no declaration for it.
	status, m = paramCall(t, ctx, gw, 6, "tools/call", "no_such_tool", `"name":"no_such_tool","arguments":{}`)
	e, _ := m["error"].(map[string]any)
	require.NotNil(t, e, "status %d: %v", status, m)
	assert.NotEqual(t, float64(-32020), e["code"], "%v", m)

	status, m = paramCall(t, ctx, gw, 3, "tools/list", "", "")
	require.Equal(t, 200, status, "%v", m)
	require.Contains(t, fmt.Sprint(m), "x-mcp-header")

	status, m = paramCall(t, ctx, gw, 4, "tools/call", tool, `"name":"test_x_mcp_header","arguments":{"region":"us-west1","level":2}`, "Mcp-Param-Region", "us-west1")
	require.Equal(t, 200, status, "%v", m)
	assert.Equal(t, "region=us-west1", resultText(m))

	status, m = paramCall(t, ctx, gw, 5, "tools/call", tool, `"name":"test_x_mcp_header","arguments":{"region":"Zürich "}`, "Mcp-Param-Region", "=?base64?WsO8cmljaCA=?=")
	require.Equal(t, 200, status, "%v", m)
	assert.Equal(t, "region=Zürich ", resultText(m))

	for i, tc := range []struct {
		hdr []string
		msg string
	}{
		{[]string{"Mcp-Param-Region", "eu-west1"}, `Header mismatch: Mcp-Param-Region header value 'eu-west1' does not match body value`},
		{nil, `Header mismatch: missing Mcp-Param-Region header for parameter "region"`},
		{[]string{"Mcp-Param-Region", "=?base64?dXMtd2VzdDE?="}, `Header mismatch: Mcp-Param-Region header contains invalid Base64 encoding`},
		{[]string{"Mcp-Param-Region", "us-west1", "Mcp-Param-Region", "us-west1"}, `Header mismatch: Mcp-Param-Region header appears more than once`},
	} {
		status, m = paramCall(t, ctx, gw, 10+i, "tools/call", tool, `"name":"test_x_mcp_header","arguments":{"region":"us-west1"}`, tc.hdr...)
		assert.Equal(t, 400, status, "%v", m)
		assert.Equal(t, map[string]any{"code": float64(-32020), "message": tc.msg}, m["error"], "%v", tc.hdr)
	}
}

// TestGatewayParamHeadersPrefixed: with prefix always the client sees
// everything__test_x_mcp_header. The server kind learns the declaration
// by that name, the client kind by the upstream's, and the call passes
// with the right header and is refused by the gateway with a wrong one.
func TestGatewayParamHeadersPrefixed(t *testing.T) {
	up := startGoEverything(t, 0, true)
	port := freePort(t)
	gw := startGateway(t, gatewayConfig(port, "always", gatewayRoute{Toolkit: "everything", Upstream: up.URL, Versions: "[2026-07-28, 2025-11-25]"}), port, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const tool = "everything__test_x_mcp_header"

	status, m := paramCall(t, ctx, gw, 1, "tools/list", "", "")
	require.Equal(t, 200, status, "%v", m)
	require.Contains(t, fmt.Sprint(m), tool)

	status, m = paramCall(t, ctx, gw, 2, "tools/call", tool, `"name":"`+tool+`","arguments":{"region":"us-west1"}`, "Mcp-Param-Region", "us-west1")
	require.Equal(t, 200, status, "%v", m)
	assert.Equal(t, "region=us-west1", resultText(m))

	status, m = paramCall(t, ctx, gw, 3, "tools/call", tool, `"name":"`+tool+`","arguments":{"region":"us-west1"}`, "Mcp-Param-Region", "us-east1")
	assert.Equal(t, 400, status, "%v", m)
	assert.Equal(t, map[string]any{"code": float64(-32020), "message": "Header mismatch: Mcp-Param-Region header value 'us-east1' does not match body value"}, m["error"])
}
