package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGatewayServerToClientTypeScript runs the TypeScript SDK's client, with
// sampling, form elicitation and roots handlers, through the gateway to
// both everything servers: each request an upstream sends while answering
// a call reaches the client, and the client's answer reaches the upstream.
func TestGatewayServerToClientTypeScript(t *testing.T) {
	endpoint, _, _ := threeRoutes(t)
	stdout := runNodeScript(t, "ts-s2c-client.mjs", 90*time.Second, endpoint)
	var out struct {
		Sampling    []string `json:"sampling"`
		Elicitation []struct {
			Message string   `json:"message"`
			Fields  []string `json:"fields"`
		} `json:"elicitation"`
		Roots           int    `json:"roots"`
		GoSampling      string `json:"goSampling"`
		GoElicitation   string `json:"goElicitation"`
		GoDefaults      string `json:"goDefaults"`
		GoEnums         string `json:"goEnums"`
		NodeSampling    string `json:"nodeSampling"`
		NodeElicitation string `json:"nodeElicitation"`
		NodeRoots       string `json:"nodeRoots"`
	}
	require.NoError(t, json.Unmarshal(stdout, &out), string(stdout))
	require.Len(t, out.Sampling, 2, "one sampling request from each upstream")
	assert.Contains(t, out.Sampling[0], "hello from go")
	assert.Contains(t, out.Sampling[1], "hello from node")
	assert.Contains(t, out.GoSampling, "sampled answer", "the client's sample reached the go upstream")
	assert.Contains(t, out.NodeSampling, "sampled answer", "the client's sample reached the node upstream")
	require.Len(t, out.Elicitation, 4, "go's three elicitations and node's one")
	assert.Equal(t, "who are you?", out.Elicitation[0].Message)
	for _, e := range out.Elicitation[1:] {
		assert.NotEmpty(t, e.Fields, "the requested schema came through")
	}
	// The client answered each field from the schema's default, so the
	// upstream accepted; the enum schema (SEP-1330) came through whole and
	// its decline reached the upstream.
	assert.Contains(t, out.GoDefaults, "action=accept", "requestedSchema defaults (SEP-1034)")
	assert.Contains(t, out.GoEnums, "action=decline", "requestedSchema enums (SEP-1330)")
	assert.Subset(t, out.Elicitation[2].Fields, []string{"titledMulti"}, "the enum schema's fields")
	assert.Contains(t, out.GoElicitation, "accept")
	assert.NotEmpty(t, out.NodeElicitation)
	if out.NodeRoots != "" {
		assert.Contains(t, out.NodeRoots, "file:///work/project", "the client's roots reached the node upstream")
		assert.Positive(t, out.Roots)
	}
}

// TestGatewayServerToClientIsolation: two clients on one gateway. The
// upstream asks client A something while answering A's call; B, whose
// session is on the same gateway and the same upstream route, never sees
// it, and a response B posts for it is refused. A's own answer completes
// A's call.
func TestGatewayServerToClientIsolation(t *testing.T) {
	goUp := startGoEverything(t, 0, false)
	port := freePort(t)
	endpoint := startGateway(t, gatewayConfig(port, "", gatewayRoute{Toolkit: "everything", Upstream: goUp.URL}), port, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	var bAsked atomic.Int32
	clientB := mcp.NewClient(&mcp.Implementation{Name: "client-b", Version: "1.0.0"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			bAsked.Add(1)
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
	})
	// The 2025 era: a 2026-07-28 session asks its client through
	// input_required results instead (issue 28).
	era := &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}
	sessionB, err := clientB.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint}, era)
	require.NoError(t, err)
	defer sessionB.Close()

	// A raw session that forges responses: it declares elicitation but
	// answers nothing it was asked, only what it guesses.
	forger := rawSession(t, ctx, endpoint)

	forged := make(chan int, 1)
	clientA := mcp.NewClient(&mcp.Implementation{Name: "client-a", Version: "1.0.0"}, &mcp.ClientOptions{
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			// While A's answer is outstanding, the forger posts one in
			// its own session for ids the gateway could have used.
			status := 0
			for _, id := range []string{`"s2c-1"`, `1`, `0`, `"1"`} {
				if s := forger.post(t, ctx, `{"jsonrpc":"2.0","id":`+id+`,"result":{"action":"accept","content":{"username":"mallory"}}}`); s >= 200 && s < 300 {
					status = s
				}
			}
			forged <- status
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"username": "alice"}}, nil
		},
	})
	sessionA, err := clientA.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint}, era)
	require.NoError(t, err)
	defer sessionA.Close()

	tools, err := sessionA.ListTools(ctx, nil)
	require.NoError(t, err)
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	require.Contains(t, names, "test_elicitation", "one route: names unprefixed")
	res, err := sessionA.CallTool(ctx, &mcp.CallToolParams{Name: "test_elicitation", Arguments: map[string]any{"message": "for A only"}})
	require.NoError(t, err)
	assert.False(t, res.IsError, text(t, res))
	assert.Contains(t, text(t, res), "alice", "A's own answer reached the upstream")
	assert.NotContains(t, text(t, res), "mallory", "the forged answer did not")
	select {
	case status := <-forged:
		assert.Zero(t, status, "no forged response was accepted")
	default:
		t.Fatal("A was never asked")
	}
	assert.Zero(t, bAsked.Load(), "B never saw A's elicitation")
}

// rawSessionClient is an MCP session driven with plain HTTP requests.
type rawSessionClient struct {
	endpoint, id string
}

// rawSession initializes a session that declares the elicitation
// capability and returns it.
func rawSession(t *testing.T, ctx context.Context, endpoint string) *rawSessionClient {
	t.Helper()
	s := &rawSessionClient{endpoint: endpoint}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"forger","version":"1"}}}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	s.id = resp.Header.Get("Mcp-Session-Id")
	require.NotEmpty(t, s.id)
	require.Equal(t, http.StatusAccepted, s.post(t, ctx, `{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	return s
}

// post sends body in the session and returns the HTTP status.
func (s *rawSessionClient) post(t *testing.T, ctx context.Context, body string) int {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.endpoint, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", s.id)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}
