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

// dupPost POSTs body to endpoint as a 2025-11-25 client of session sid
// ("" for none) and returns the status, the JSON-RPC answer and the
// session id the response names.
func dupPost(t *testing.T, ctx context.Context, endpoint, sid, body string) (int, map[string]any, string) {
	t.Helper()
	version := ""
	if sid != "" {
		version = "2025-11-25"
	}
	r, err := enginetest.PostMCP(ctx, endpoint, version, sid, body)
	require.NoError(t, err)
	return r.Status, r.Msg, r.Session
}

// dupSession opens a 2025-11-25 session on endpoint as a raw client.
func dupSession(t *testing.T, ctx context.Context, endpoint string) string {
	t.Helper()
	status, m, sid := dupPost(t, ctx, endpoint, "", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	require.Equal(t, 200, status, "%v", m)
	require.NotEmpty(t, sid)
	status, _, _ = dupPost(t, ctx, endpoint, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	require.Equal(t, 202, status)
	return sid
}

// dupContentType returns the type of a tools/call result's first content.
func dupContentType(m map[string]any) string {
	res, _ := m["result"].(map[string]any)
	content, _ := res["content"].([]any)
	if len(content) == 0 {
		return ""
	}
	c, _ := content[0].(map[string]any)
	s, _ := c["type"].(string)
	return s
}

// dupError returns the code and message of a JSON-RPC error answer.
func dupError(m map[string]any) (float64, string) {
	e, _ := m["error"].(map[string]any)
	code, _ := e["code"].(float64)
	msg, _ := e["message"].(string)
	return code, msg
}

// TestGatewayDuplicateMembers: one message must have one reading. Sent
// straight to go-sdk's everything-server, a tools/call naming two tools
// runs the last one; through the gateway (which routes on the name) it
// is refused, as are duplicates of the other members the gateway reads:
// the JSON-RPC envelope's (400 -32600) and params' name, uri, cursor,
// _meta, ref and ref's name (-32602), keys compared as they decode. The
// same requests without the duplicate pass, to go-sdk's and to
// server-everything's upstreams.
func TestGatewayDuplicateMembers(t *testing.T) {
	endpoint, goUp, _ := threeRoutes(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	// The upstream alone takes the last name: the two readings.
	direct := dupSession(t, ctx, goUp.URL)
	status, m, _ := dupPost(t, ctx, goUp.URL, direct, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test_simple_text","name":"test_image_content"}}`)
	require.Equal(t, 200, status, "%v", m)
	require.Equal(t, "image", dupContentType(m), "%v", m)

	sid := dupSession(t, ctx, endpoint)
	call := func(id int, method, params string) (int, map[string]any) {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":{%s}}`, id, method, params)
		status, m, _ := dupPost(t, ctx, endpoint, sid, body)
		return status, m
	}

	// Without duplicates, each upstream answers.
	status, m = call(1, "tools/call", `"name":"everything__test_simple_text"`)
	require.Equal(t, 200, status, "%v", m)
	assert.Equal(t, "text", dupContentType(m), "%v", m)
	status, m = call(2, "tools/call", `"name":"node__echo","arguments":{"message":"hi"}`)
	require.Equal(t, 200, status, "%v", m)
	assert.Equal(t, "Echo: hi", resultText(m), "%v", m)

	for i, tc := range []struct {
		method, params, member string
	}{
		{"tools/call", `"name":"everything__test_simple_text","name":"test_image_content"`, "name"},
		{"tools/call", `"name":"everything__test_simple_text","name":"everything__test_image_content"`, "name"},
		{"tools/call", `"name":"node__echo","n\u0061me":"node__get-sum","arguments":{"message":"hi"}`, "name"},
		{"tools/call", `"name":"node__echo","arguments":{"message":"a"},"arguments":{"message":"b"}`, "arguments"},
		{"tools/call", `"name":"node__echo","arguments":{"message":"a"},"_meta":{},"_meta":{"progressToken":1}`, "_meta"},
		{"tools/call", `"name":"node__echo","arguments":{"message":"a"},"_meta":{"progressToken":1,"progressToken":2}`, "progressToken"},
		{"resources/read", `"uri":"node+demo://resource/static/document/architecture.md","uri":"everything+test://static-text"`, "uri"},
		{"tools/list", `"cursor":"a","cursor":"b"`, "cursor"},
		{"completion/complete", `"ref":{"type":"ref/prompt","name":"node__args-prompt"},"ref":{"type":"ref/prompt","name":"everything__test_prompt_with_arguments"},"argument":{"name":"city","value":"x"}`, "ref"},
		{"completion/complete", `"ref":{"type":"ref/prompt","name":"node__args-prompt","name":"everything__test_prompt_with_arguments"},"argument":{"name":"city","value":"x"}`, "name"},
	} {
		status, m = call(10+i, tc.method, tc.params)
		code, msg := dupError(m)
		assert.Equal(t, 200, status, "%s %s: %v", tc.method, tc.params, m)
		assert.Equal(t, float64(-32602), code, "%s %s: %v", tc.method, tc.params, m)
		assert.Equal(t, fmt.Sprintf("Invalid params: duplicate member %q", tc.member), msg, "%s %s", tc.method, tc.params)
		assert.Equal(t, float64(10+i), m["id"], "%v", m)
	}

	for _, tc := range []struct {
		body, member string
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"everything__test_simple_text"},"params":{"name":"everything__test_image_content"}}`, "params"},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list","method":"tools/call","params":{"name":"node__echo","arguments":{"message":"hi"}}}`, "method"},
		{`{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/list"}`, "id"},
		{`{"jsonrpc":"2.0","jsonrpc":"1.0","id":1,"method":"tools/list"}`, "jsonrpc"},
		{`{"jsonrpc":"2.0","id":1,"\u006dethod":"tools/list","method":"ping"}`, "method"},
	} {
		status, m, _ := dupPost(t, ctx, endpoint, sid, tc.body)
		code, msg := dupError(m)
		assert.Equal(t, 400, status, "%s: %v", tc.body, m)
		assert.Equal(t, float64(-32600), code, "%s: %v", tc.body, m)
		assert.Equal(t, fmt.Sprintf("Invalid Request: duplicate member %q", tc.member), msg, "%s", tc.body)
		assert.Nil(t, m["id"], "%s: the id of a message read two ways is not echoed", tc.body)
	}
}

// TestGatewayDuplicateArguments: at 2026-07-28 the gateway checks a
// tools/call's Mcp-Param headers against the arguments they declare, so
// a declared argument given twice is refused (-32602) rather than
// checked in its first spelling while go-sdk's stateless upstream reads
// the last; so is a second _meta protocol version.
func TestGatewayDuplicateArguments(t *testing.T) {
	up := startGoEverything(t, 0, true)
	port := freePort(t)
	gw := startGateway(t, gatewayConfig(port, "never", gatewayRoute{Toolkit: "everything", Upstream: up.URL, Versions: "[2026-07-28, 2025-11-25]"}), port, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const tool = "test_x_mcp_header"

	status, m := paramCall(t, ctx, gw, 1, "tools/list", "", "")
	require.Equal(t, 200, status, "%v", m)
	require.Contains(t, fmt.Sprint(m), "x-mcp-header")

	status, m = paramCall(t, ctx, gw, 2, "tools/call", tool, `"name":"test_x_mcp_header","arguments":{"region":"us-west1"}`, "Mcp-Param-Region", "us-west1")
	require.Equal(t, 200, status, "%v", m)
	assert.Equal(t, "region=us-west1", resultText(m))

	status, m = paramCall(t, ctx, gw, 3, "tools/call", tool, `"name":"test_x_mcp_header","arguments":{"region":"us-west1","region":"eu-west1"}`, "Mcp-Param-Region", "us-west1")
	assert.Equal(t, 400, status, "%v", m)
	assert.Equal(t, map[string]any{"code": float64(-32602), "message": `Invalid params: duplicate member "region"`}, m["error"])

	status, m = paramCall(t, ctx, gw, 4, "tools/call", tool, `"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25"},"name":"test_x_mcp_header","arguments":{"region":"us-west1"}`, "Mcp-Param-Region", "us-west1")
	assert.Equal(t, 400, status, "%v", m)
	assert.Equal(t, map[string]any{"code": float64(-32602), "message": `Invalid params: duplicate member "_meta"`}, m["error"])
}
