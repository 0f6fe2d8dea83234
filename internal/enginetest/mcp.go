package enginetest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/engine"
)

// MCPReply is an MCP endpoint's answer to a POST: the HTTP status, the
// JSON-RPC message it carried (nil when the body was empty) and the
// session id the response names.
type MCPReply struct {
	Status  int
	Msg     map[string]any
	Session string
}

// PostMCP POSTs the JSON-RPC message body to endpoint as an MCP client over
// HTTP: the Content-Type and Accept every client sends, then
// MCP-Protocol-Version: version and Mcp-Session-Id: session where they are
// not empty, then hdr, name and value pairs, each added: a name given
// twice is sent twice, for tests of conflicting headers. The message it returns is the
// JSON body or, from an event stream, the data of its last event: the
// response, which ends the stream after any request or notification sent
// before it. It returns errors rather than failing a test, so that
// goroutines other than the test's can call it; ctx bounds the exchange.
func PostMCP(ctx context.Context, endpoint, version, session, body string, hdr ...string) (MCPReply, error) {
	req, err := NewMCPRequest(ctx, endpoint, version, session, body, hdr...)
	if err != nil {
		return MCPReply{}, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return MCPReply{}, err
	}
	defer resp.Body.Close()
	reply := MCPReply{Status: resp.StatusCode, Session: resp.Header.Get("Mcp-Session-Id")}
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return reply, err
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		var last []byte
		sc := bufio.NewScanner(bytes.NewReader(raw))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if d, ok := bytes.CutPrefix(sc.Bytes(), []byte("data: ")); ok {
				last = append(last[:0], d...)
			}
		}
		raw = last
	}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &reply.Msg); err != nil {
			return reply, fmt.Errorf("status %d: %w: %s", reply.Status, err, raw)
		}
	}
	return reply, nil
}

// NewMCPRequest returns the POST of body that PostMCP sends, for a test
// that reads the answer itself.
func NewMCPRequest(ctx context.Context, endpoint, version, session, body string, hdr ...string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if version != "" {
		req.Header.Set("MCP-Protocol-Version", version)
	}
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Add(hdr[i], hdr[i+1])
	}
	return req, nil
}

// ToolsCallCaller returns a Caller on e's first worker that plays the mcp
// server kind, as the binding driver, in front of the binding target:
// tools/call streams of tool with params as their body, in session ("" for
// none), typeID the mcp extensions' type, window the reply's credit.
func ToolsCallCaller(tb testing.TB, e *engine.Engine, typeID int32, target, session, tool string, params []byte, window int32) *Caller {
	tb.Helper()
	var b mcp.McpBeginExBuilder
	ext := make([]byte, 256)
	tc := b.Wrap(ext, 0, len(ext)).TypeID(typeID).ToolsCall()
	if session == "" {
		tc.SessionIDNull()
	} else {
		tc.SessionID(session)
	}
	n, err := tc.Name(tool).ContentLength(int32(len(params))).BuildLimit()
	require.NoError(tb, err)
	origin, ok := e.ResolveID("driver")
	require.True(tb, ok, "no binding driver")
	routed, ok := e.ResolveID(target)
	require.True(tb, ok, "no binding %s", target)
	return NewCaller(e.Worker(0), origin, routed, ext[:n], params, window)
}
