package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGatewayLegacyShim: a 2025-era client (a session) calls, through the
// gateway, the go-sdk everything server run stateless, whose conformance
// tools answer input_required at 2026-07-28. The gateway's client kind
// offers 2026-07-28 alone, as toward an upstream of that era only, or
// 2026-07-28 and 2025-11-25: this upstream serves both, but answers
// initialize without a session id, so it keeps no 2025 session and the
// client kind uses it at 2026-07-28 all the same. The client never sees
// input_required: the gateway's mcp server asks it each embedded request
// (elicitation, sampling, roots) as a real request of its session, and
// retries the call upstream with the answers and the requestState until
// the tool's final result, which the client gets as the answer to its
// call.
func TestGatewayLegacyShim(t *testing.T) {
	for _, versions := range []string{"[2026-07-28]", "[2026-07-28, 2025-11-25]"} {
		t.Run("versions="+versions, func(t *testing.T) { legacyShim(t, versions) })
	}
}

func legacyShim(t *testing.T, versions string) {
	goUp := startGoEverything(t, 0, true)
	port := freePort(t)
	endpoint := startGateway(t, gatewayConfig(port, "", gatewayRoute{
		Toolkit: "everything", Upstream: goUp.URL, Versions: versions,
	}), port, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	var mu sync.Mutex
	var asked []string
	note := func(what string) {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, what)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "legacy", Version: "1.0.0"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			note("elicitation: " + req.Params.Message)
			switch req.Params.Message {
			case "Please confirm":
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"ok": true}}, nil
			case "Step 2: What is your favorite color?":
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"color": "teal"}}, nil
			case "Please provide context for the prompt":
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"context": "gateway tests"}}, nil
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
		},
		//lint:ignore SA1019 a 2025-era client's log messages
		LoggingMessageHandler: func(context.Context, *mcp.LoggingMessageRequest) { note("log") },
		// Sampling and roots are deprecated in 2026-07-28 (SEP-2577) but are
		// what a 2025-era client answers, which this test is about.
		//lint:ignore SA1019 a 2025-era client's sampling handler
		CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			note("sampling")
			//lint:ignore SA1019 a 2025-era client's sampling result
			return &mcp.CreateMessageResult{Role: "assistant", Model: "test", Content: &mcp.TextContent{Text: "Paris"}}, nil
		},
	})
	//lint:ignore SA1019 a 2025-era client's roots
	client.AddRoots(&mcp.Root{URI: "file:///work/project", Name: "project"})
	// The go-sdk client would fulfil an input_required result itself:
	// what the gateway sends it is watched on the wire instead.
	wire := &wireLog{next: http.DefaultTransport}
	session, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: wire}},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	require.NoError(t, err)
	defer session.Close()

	text := func(res *mcp.CallToolResult) string {
		t.Helper()
		require.False(t, res.IsError, "%+v", res.Content)
		require.NotEmpty(t, res.Content)
		tc, ok := res.Content[0].(*mcp.TextContent)
		require.True(t, ok, "%T", res.Content[0])
		return tc.Text
	}
	for _, tt := range []struct {
		tool, want string
		asked      []string
	}{
		{"test_input_required_result_elicitation", "Hello, Ada!", []string{"elicitation: What is your name?"}},
		{"test_input_required_result_sampling", "Sampling response: Paris", []string{"sampling"}},
		{"test_input_required_result_list_roots", "Client exposed 1 root(s): file:///work/project", nil},
		{"test_input_required_result_request_state", "state-ok: requestState received and confirmation accepted", []string{"elicitation: Please confirm"}},
		{"test_input_required_result_tampered_state", "state-ok: requestState received and confirmation accepted", []string{"elicitation: Please confirm"}},
		{"test_input_required_result_multiple_inputs", "Paris Ada — 1 root(s) visible", []string{"elicitation: What is your name?", "sampling"}},
		{"test_input_required_result_multi_round", "Multi-round complete: Ada likes teal",
			[]string{"elicitation: Step 1: What is your name?", "elicitation: Step 2: What is your favorite color?"}},
	} {
		t.Run(tt.tool, func(t *testing.T) {
			mu.Lock()
			asked = nil
			mu.Unlock()
			wire.reset()
			res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: tt.tool})
			require.NoError(t, err)
			assert.Equal(t, tt.want, text(res))
			got := wire.text()
			assert.NotContains(t, got, "input_required", "the 2025-era client never sees input_required")
			assert.NotContains(t, got, "resultType", "nor the 2026-07-28 resultType")
			assert.NotContains(t, got, "io.modelcontextprotocol/serverInfo", "nor the 2026-07-28 serverInfo")
			assert.Contains(t, got, `"id":"s2c-`, "the gateway asked the client itself")
			mu.Lock()
			defer mu.Unlock()
			assert.ElementsMatch(t, tt.asked, asked, "what the client was asked")
		})
	}

	t.Run("prompts/get", func(t *testing.T) {
		wire.reset()
		res, err := session.GetPrompt(ctx, &mcp.GetPromptParams{Name: "test_input_required_result_prompt"})
		require.NoError(t, err)
		require.Len(t, res.Messages, 1)
		tc, ok := res.Messages[0].Content.(*mcp.TextContent)
		require.True(t, ok)
		assert.Equal(t, "Context: gateway tests", tc.Text)
		assert.NotContains(t, wire.text(), "input_required")
		assert.NotContains(t, wire.text(), "resultType")
	})

	// A list's result comes without the 2026-07-28 members too.
	t.Run("tools/list", func(t *testing.T) {
		wire.reset()
		res, err := session.ListTools(ctx, nil)
		require.NoError(t, err)
		require.NotEmpty(t, res.Tools)
		got := wire.text()
		for _, member := range []string{"resultType", "ttlMs", "cacheScope", "io.modelcontextprotocol/serverInfo"} {
			assert.NotContains(t, got, member)
		}
	})

	// The session's logging/setLevel works too: the gateway keeps the level
	// and sends it with each later request, without which the upstream
	// logs nothing at 2026-07-28.
	t.Run("logging/setLevel", func(t *testing.T) {
		logs := func() int {
			mu.Lock()
			defer mu.Unlock()
			n := 0
			for _, a := range asked {
				if a == "log" {
					n++
				}
			}
			return n
		}
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "test_tool_with_logging"})
		require.NoError(t, err)
		assert.Equal(t, "Tool with logging executed successfully", text(res))
		assert.Zero(t, logs(), "log messages before logging/setLevel")
		//lint:ignore SA1019 a 2025-era client's log level
		require.NoError(t, session.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}))
		res, err = session.CallTool(ctx, &mcp.CallToolParams{Name: "test_tool_with_logging"})
		require.NoError(t, err)
		assert.Equal(t, "Tool with logging executed successfully", text(res))
		// The client may hand a notification to its handler after the answer.
		assert.Eventually(t, func() bool { return logs() > 0 }, 10*time.Second, 10*time.Millisecond, "log messages after logging/setLevel")
	})
}

// wireLog is an http.RoundTripper that keeps the bodies of the responses
// it carries, as the client reads them.
type wireLog struct {
	next http.RoundTripper
	mu   sync.Mutex
	buf  bytes.Buffer
}

func (w *wireLog) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := w.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Body = &teeBody{ReadCloser: resp.Body, w: w}
	return resp, nil
}

func (w *wireLog) reset() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Reset()
}

func (w *wireLog) text() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

type teeBody struct {
	io.ReadCloser
	w *wireLog
}

func (b *teeBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.w.mu.Lock()
	b.w.buf.Write(p[:n])
	b.w.mu.Unlock()
	return n, err
}

// TestGatewayLegacyShimTypeScript: the TypeScript SDK's 2025-era client
// through the gateway to the stateless go-sdk everything server, whose
// tools and prompt answer input_required: the client gets each tool's
// final result, having answered the embedded requests as requests of its
// session, and never an input_required result.
func TestGatewayLegacyShimTypeScript(t *testing.T) {
	goUp := startGoEverything(t, 0, true)
	port := freePort(t)
	endpoint := startGateway(t, gatewayConfig(port, "", gatewayRoute{
		Toolkit: "everything", Upstream: goUp.URL, Versions: "[2026-07-28]",
	}), port, 2)
	stdout := runNodeScript(t, "ts-shim-client.mjs", 90*time.Second, endpoint)
	var out struct {
		Asked             []string          `json:"asked"`
		Results           map[string]string `json:"results"`
		InputRequiredSeen bool              `json:"inputRequiredSeen"`
	}
	require.NoError(t, json.Unmarshal(stdout, &out), string(stdout))
	assert.False(t, out.InputRequiredSeen, "the 2025-era client never sees input_required")
	assert.Equal(t, map[string]string{
		"test_input_required_result_elicitation":     "Hello, Ada!",
		"test_input_required_result_sampling":        "Sampling response: Paris",
		"test_input_required_result_list_roots":      "Client exposed 1 root(s): file:///work/project",
		"test_input_required_result_request_state":   "state-ok: requestState received and confirmation accepted",
		"test_input_required_result_multiple_inputs": "Paris Ada — 1 root(s) visible",
		"test_input_required_result_multi_round":     "Multi-round complete: Ada likes teal",
		"prompt":                                     "Context: gateway tests",
	}, out.Results)
	assert.Contains(t, out.Asked, "elicitation: Step 2: What is your favorite color?")
	assert.Contains(t, out.Asked, "sampling")
	assert.Contains(t, out.Asked, "roots")
}
