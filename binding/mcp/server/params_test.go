package server_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// paramsPost sends a 2026-07-28 request with the extra headers hdr and
// params (members, without _meta), and returns the status and body.
func paramsPost(t *testing.T, h *harness, method, name, params string, hdr ...[2]string) (string, string) {
	t.Helper()
	headers := [][2]string{
		{":scheme", "http"}, {":method", "POST"}, {":path", "/mcp"}, {":authority", "localhost:8080"},
		{"content-type", "application/json"}, {"accept", "application/json, text/event-stream"},
		{"mcp-protocol-version", "2026-07-28"}, {"mcp-method", method},
	}
	if name != "" {
		headers = append(headers, [2]string{"mcp-name", name})
	}
	headers = append(headers, hdr...)
	if params != "" {
		params += ","
	}
	h.req.set(t, headers, `{"jsonrpc":"2.0","id":7,"method":"`+method+`","params":{`+params+
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	h.request(t)
	return string(h.req.status), string(h.req.response)
}

const geoTools = `{"tools":[{"name":"geo","inputSchema":{"type":"object","properties":{` +
	`"region":{"type":"string","x-mcp-header":"Region"},"count":{"type":"integer","x-mcp-header":"Count"},` +
	`"loc":{"type":"object","properties":{"zone":{"type":"string","x-mcp-header":"Zone"}}},"note":{"type":"string"}}}},` +
	`{"name":"plain","inputSchema":{"type":"object"}}]}`

// TestParamHeaders: once the server has listed a tool whose inputSchema
// declares x-mcp-header arguments, a 2026-07-28 tools/call of it must
// carry matching Mcp-Param headers (SEP-2243): a missing, undecodable,
// differing, unexpected or repeated one gets 400 -32020 with go-sdk's
// message and never reaches the application; matching ones pass.
func TestParamHeaders(t *testing.T) {
	h := newHarnessWith(t, "\nversions: [2026-07-28, 2025-11-25]", nil)
	h.req.parse = true
	h.app.calls = []string{}
	ok := []byte(`{"content":[],"resultType":"complete"}`)

	// Before the tool is listed, nothing is checked.
	h.app.results = [][]byte{ok}
	status, body := paramsPost(t, h, "tools/call", "geo", `"name":"geo","arguments":{"region":"eu"}`)
	require.Equal(t, "200", status, body)

	h.app.results = [][]byte{[]byte(geoTools)}
	status, body = paramsPost(t, h, "tools/list", "", "")
	require.Equal(t, "200", status, body)

	const args = `"name":"geo","arguments":{"region":"日本","count":3,"loc":{"zone":"z1"},"note":"n"}`
	good := [][2]string{{"mcp-param-region", "=?base64?5pel5pys?="}, {"mcp-param-count", "3.0"}, {"Mcp-Param-Zone", " z1 "}}
	errs := []struct {
		name string
		args string
		hdr  [][2]string
		msg  string
	}{
		{"missing", args, good[1:], `Header mismatch: missing Mcp-Param-Region header for parameter \"region\"`},
		{"nested missing", args, good[:2], `Header mismatch: missing Mcp-Param-Zone header for parameter \"loc.zone\"`},
		{"differs", args, [][2]string{good[0], {"mcp-param-count", "4"}, good[2]}, `Header mismatch: Mcp-Param-Count header value '4' does not match body value`},
		{"bad padding", args, [][2]string{{"mcp-param-region", "=?base64?SGVsbG8?="}, good[1], good[2]}, `Header mismatch: Mcp-Param-Region header contains invalid Base64 encoding`},
		{"bad alphabet", args, [][2]string{{"mcp-param-region", "=?base64?SGVs!!!bG8=?="}, good[1], good[2]}, `Header mismatch: Mcp-Param-Region header contains invalid Base64 encoding`},
		{"not encoded", args, [][2]string{{"mcp-param-region", "5pel5pys"}, good[1], good[2]}, `Header mismatch: Mcp-Param-Region header value '5pel5pys' does not match body value`},
		{"unexpected", `"name":"geo","arguments":{"region":null,"count":3,"loc":{"zone":"z1"}}`, good, `Header mismatch: unexpected Mcp-Param-Region header for absent or null parameter \"region\"`},
		{"not primitive", `"name":"geo","arguments":{"region":["a"],"count":3,"loc":{"zone":"z1"}}`, good, `Header mismatch: Mcp-Param-Region header present but body parameter \"region\" is not a primitive type`},
		{"twice", args, append([][2]string{{"mcp-param-region", "=?base64?5pel5pys?="}}, good...), `Header mismatch: Mcp-Param-Region header appears more than once`},
	}
	for _, tc := range errs {
		h.app.results = [][]byte{ok}
		status, body := paramsPost(t, h, "tools/call", "geo", tc.args, tc.hdr...)
		assert.Equal(t, "400", status, tc.name)
		assert.Equal(t, `{"jsonrpc":"2.0","id":7,"error":{"code":-32020,"message":"`+tc.msg+`"}}`, body, tc.name)
	}
	assert.Len(t, calls(t, h), 2, "no refused call reached the application")

	h.app.results = [][]byte{ok}
	status, body = paramsPost(t, h, "tools/call", "geo", args, good...)
	assert.Equal(t, "200", status, body)
	// Absent arguments need no header; an undeclared header is not checked.
	h.app.results = [][]byte{ok}
	status, body = paramsPost(t, h, "tools/call", "geo", `"name":"geo","arguments":{}`, [2]string{"mcp-param-other", "x"})
	assert.Equal(t, "200", status, body)
	// A tool listed without declarations is not checked.
	h.app.results = [][]byte{ok}
	status, body = paramsPost(t, h, "tools/call", "plain", `"name":"plain","arguments":{"region":"x"}`)
	assert.Equal(t, "200", status, body)
}
