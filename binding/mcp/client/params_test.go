package client_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// post2026Method POSTs a stateless 2026-07-28 request with params (an
// object's members, without _meta) and extra headers (name, value
// pairs), and returns the HTTP status and the JSON-RPC response.
func post2026Method(ctx context.Context, endpoint string, id int, method, name, params string, hdr ...string) (int, map[string]any, error) {
	r, err := post2026Request(ctx, endpoint, id, method, name, params, "{}", hdr...)
	return r.Status, r.Msg, err
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
			answerDiscover(w, id)
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

	status, m, err := post2026Method(ctx, endpoint, 1, "tools/list", "", "")
	require.NoError(t, err)
	require.Equal(t, 200, status, "%v", m)

	status, m, err = post2026Method(ctx, endpoint, 2, "tools/call", "geo",
		`"name":"geo","arguments":{"region":"日本","count":3,"flag":null,"note":"n"}`,
		"Mcp-Param-Region", "=?base64?5pel5pys?=", "Mcp-Param-Count", "3")
	require.NoError(t, err)
	require.Equal(t, 200, status, "%v", m)
	c := <-calls
	assert.Equal(t, "geo", c.tool)
	assert.Equal(t, []string{"=?base64?5pel5pys?="}, c.hdr.Values("Mcp-Param-Region"))
	assert.Equal(t, []string{"3"}, c.hdr.Values("Mcp-Param-Count"))
	assert.Empty(t, c.hdr.Values("Mcp-Param-Flag"), "a null argument is not mirrored")
	assert.Empty(t, c.hdr.Values("Mcp-Param-Note"))

	status, m, err = post2026Method(ctx, endpoint, 3, "tools/call", "other", `"name":"other","arguments":{"region":"x"}`)
	require.NoError(t, err)
	require.Equal(t, 200, status, "%v", m)
	c = <-calls
	assert.Equal(t, "other", c.tool)
	for k := range c.hdr {
		assert.False(t, strings.HasPrefix(k, "Mcp-Param-"), "a tool never listed got %s", k)
	}
}

// paramsUpstream is a stateless upstream whose tools/list comes in two
// pages, the tool geo, which declares Mcp-Param-Region, on the second; a
// tools/call of geo without the header, or of secret (never listed),
// gets 400 -32020. It counts the tools/list pages it serves and records
// each tools/call's tool and headers.
func paramsUpstream(t *testing.T, lists *atomic.Int32, calls chan<- seenCall) string {
	return serveUpstream(t, false, func(w http.ResponseWriter, r *http.Request, msg, id string) {
		w.Header().Set("Content-Type", "application/json")
		switch between(msg, `"method":"`, `"`) {
		case "server/discover":
			answerDiscover(w, id)
		case "tools/list":
			lists.Add(1)
			if strings.Contains(msg, `"cursor":"p2"`) {
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"geo","inputSchema":{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}}]}}`, id)
				return
			}
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"plain","inputSchema":{"type":"object"}}],"nextCursor":"p2"}}`, id)
		case "tools/call":
			tool := between(msg, `"name":"`, `"`)
			calls <- seenCall{tool, r.Header.Clone()}
			if tool == "secret" || tool == "geo" && r.Header.Get("Mcp-Param-Region") == "" {
				w.WriteHeader(http.StatusBadRequest)
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32020,"message":"Missing required header Mcp-Param-Region"}}`, id)
				return
			}
			answerOK(w, id)
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	})
}

type seenCall struct {
	tool string
	hdr  http.Header
}

// TestParamHeadersFetched: a tools/call of a tool never listed through
// the gateway that a 2026-07-28 upstream refuses with 400 -32020 makes
// the gateway list the upstream's tools (every page) and call again with
// the headers the tool declares. A tool that declares none still gets
// the upstream's error, after one more call and no retry. Calls that
// come together share one listing.
func TestParamHeadersFetched(t *testing.T) {
	var lists atomic.Int32
	calls := make(chan seenCall, 32)
	server := paramsUpstream(t, &lists, calls)
	endpoint := startGateway(t, server, "      versions: [2026-07-28, 2025-11-25]\n")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	status, m, err := post2026Method(ctx, endpoint, 1, "tools/call", "geo", `"name":"geo","arguments":{"region":"eu"}`)
	require.NoError(t, err)
	require.Equal(t, 200, status, "%v", m)
	assert.Equal(t, map[string]any{"content": []any{map[string]any{"type": "text", "text": "ok"}}}, without(m["result"], "_meta", "resultType"), "%v", m)
	first, again := <-calls, <-calls
	assert.Empty(t, first.hdr.Values("Mcp-Param-Region"))
	assert.Equal(t, []string{"eu"}, again.hdr.Values("Mcp-Param-Region"))
	assert.Equal(t, int32(2), lists.Load(), "both pages listed")

	status, m, err = post2026Method(ctx, endpoint, 2, "tools/call", "secret", `"name":"secret","arguments":{}`)
	require.NoError(t, err)
	e, _ := m["error"].(map[string]any)
	assert.Equal(t, map[string]any{"code": float64(-32020), "message": "Missing required header Mcp-Param-Region"}, e, "status %d: %v", status, m)
	assert.Equal(t, "secret", (<-calls).tool)
	assert.Equal(t, int32(4), lists.Load(), "listed again for a tool it did not know")
	assert.Empty(t, calls, "no retry without declarations")

	// A fresh gateway: calls that come together list once.
	lists.Store(0)
	endpoint = startGateway(t, server, "      versions: [2026-07-28, 2025-11-25]\n")
	const n = 4
	errs := make(chan error, n)
	for i := range n {
		go func() {
			status, m, err := post2026Method(ctx, endpoint, 10+i, "tools/call", "geo", `"name":"geo","arguments":{"region":"eu"}`)
			if err == nil && status != 200 {
				err = fmt.Errorf("status %d: %v", status, m)
			}
			errs <- err
		}()
	}
	for range n {
		require.NoError(t, <-errs)
	}
	assert.Equal(t, int32(2), lists.Load(), "one listing of both pages")
	withHeader := 0
	for len(calls) > 0 {
		if c := <-calls; len(c.hdr.Values("Mcp-Param-Region")) > 0 {
			withHeader++
		}
	}
	assert.Equal(t, n, withHeader, "each call made with the header in the end")
}
