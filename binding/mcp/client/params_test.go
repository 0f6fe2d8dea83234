package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// post2026Method POSTs a stateless 2026-07-28 request with params (an
// object's members, without _meta) and extra headers, and returns the
// HTTP status and the JSON-RPC response.
func post2026Method(ctx context.Context, endpoint string, id int, method, name, params string, hdr map[string]string) (int, map[string]any, error) {
	if params != "" {
		params += ","
	}
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":{%s"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`, id, method, params)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	if name != "" {
		req.Header.Set("Mcp-Name", name)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return resp.StatusCode, nil, fmt.Errorf("%w: %s", err, raw)
	}
	return resp.StatusCode, m, nil
}

// TestParamHeadersMirrored: a tools/call to a 2026-07-28 upstream carries
// a Mcp-Param header for each argument the tool declares with
// x-mcp-header in the tools/list result the gateway relayed (SEP-2243),
// encoded as the spec says; an undeclared argument, and a tool never
// listed, get none.
func TestParamHeadersMirrored(t *testing.T) {
	type seen struct {
		tool string
		hdr  http.Header
	}
	calls := make(chan seen, 4)
	server := serveUpstream(t, false, func(w http.ResponseWriter, r *http.Request, msg, id string) {
		w.Header().Set("Content-Type", "application/json")
		switch between(msg, `"method":"`, `"`) {
		case "server/discover":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"serverInfo":{"name":"tiny","version":"1"}}}`, id)
		case "tools/list":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"geo","inputSchema":{"type":"object","properties":{`+
				`"region":{"type":"string","x-mcp-header":"Region"},"count":{"type":"integer","x-mcp-header":"Count"},`+
				`"flag":{"type":"boolean","x-mcp-header":"Flag"},"note":{"type":"string"}}}}]}}`, id)
		case "tools/call":
			calls <- seen{between(msg, `"name":"`, `"`), r.Header.Clone()}
			answerOK(w, id)
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	})
	endpoint, _ := startGatewayEngine(t, server, "      versions: [2026-07-28, 2025-11-25]\n", "")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	status, m, err := post2026Method(ctx, endpoint, 1, "tools/list", "", "", nil)
	require.NoError(t, err)
	require.Equal(t, 200, status, "%v", m)

	status, m, err = post2026Method(ctx, endpoint, 2, "tools/call", "geo",
		`"name":"geo","arguments":{"region":"日本","count":3,"flag":null,"note":"n"}`,
		map[string]string{"Mcp-Param-Region": "=?base64?5pel5pys?=", "Mcp-Param-Count": "3"})
	require.NoError(t, err)
	require.Equal(t, 200, status, "%v", m)
	c := <-calls
	assert.Equal(t, "geo", c.tool)
	assert.Equal(t, []string{"=?base64?5pel5pys?="}, c.hdr.Values("Mcp-Param-Region"))
	assert.Equal(t, []string{"3"}, c.hdr.Values("Mcp-Param-Count"))
	assert.Empty(t, c.hdr.Values("Mcp-Param-Flag"), "a null argument is not mirrored")
	assert.Empty(t, c.hdr.Values("Mcp-Param-Note"))

	status, m, err = post2026Method(ctx, endpoint, 3, "tools/call", "other", `"name":"other","arguments":{"region":"x"}`, nil)
	require.NoError(t, err)
	require.Equal(t, 200, status, "%v", m)
	c = <-calls
	assert.Equal(t, "other", c.tool)
	for k := range c.hdr {
		assert.False(t, strings.HasPrefix(k, "Mcp-Param-"), "a tool never listed got %s", k)
	}
}
