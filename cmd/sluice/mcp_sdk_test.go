package main

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// defaultEndpoint is where the embedded default configuration serves MCP.
const defaultEndpoint = "http://127.0.0.1:7114/mcp"

// startDefault runs sluice start on the embedded default configuration
// until the test ends.
func startDefault(t *testing.T) {
	t.Helper()
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr syncBuffer
	code := make(chan int, 1)
	go func() {
		code <- startEngine(ctx, []string{"-w", "2", "-e", filepath.Join(dir, "engine")}, &stdout, &stderr)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case c := <-code:
			assert.Equal(t, exitOK, c, stderr.String())
		case <-time.After(5 * time.Second):
			t.Error("sluice start did not stop")
		}
	})
	require.Eventually(t, func() bool {
		c, err := net.Dial("tcp", "127.0.0.1:7114")
		if err == nil {
			c.Close()
		}
		return err == nil
	}, 5*time.Second, 20*time.Millisecond, "sluice start did not listen: %s", stderr.String())
}

// TestGoSDKClient runs the official Go SDK's client against the embedded
// default: initialize (or discover) → tools/list → tools/call with
// progress → resources/read → prompts/get → cancel a long call → close,
// at 2025-11-25 and at 2026-07-28.
func TestGoSDKClient(t *testing.T) {
	startDefault(t)
	for _, version := range []string{"2025-11-25", "2025-06-18", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			var mu sync.Mutex
			var progress []float64
			client := mcp.NewClient(&mcp.Implementation{Name: "sluice-test", Version: "1.0.0"}, &mcp.ClientOptions{
				ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
					mu.Lock()
					progress = append(progress, req.Params.Progress)
					mu.Unlock()
				},
			})
			session, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: defaultEndpoint},
				&mcp.ClientSessionOptions{ProtocolVersion: version})
			require.NoError(t, err)

			tools, err := session.ListTools(ctx, nil)
			require.NoError(t, err)
			var names []string
			for _, tool := range tools.Tools {
				names = append(names, tool.Name)
			}
			assert.Subset(t, names, []string{"echo", "add", "long_running_operation"})

			res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hi"}})
			require.NoError(t, err)
			require.False(t, res.IsError)
			require.Len(t, res.Content, 1)
			assert.Equal(t, "Echo: hi", res.Content[0].(*mcp.TextContent).Text)

			long := &mcp.CallToolParams{Name: "long_running_operation", Arguments: map[string]any{"duration": 0.3, "steps": 3}}
			long.SetProgressToken("tok-" + version)
			res, err = session.CallTool(ctx, long)
			require.NoError(t, err)
			require.False(t, res.IsError)
			assert.Contains(t, res.Content[0].(*mcp.TextContent).Text, "Long running operation completed")
			// The SDK may run the last notification's handler just after the
			// call returns.
			assert.Eventually(t, func() bool {
				mu.Lock()
				defer mu.Unlock()
				return len(progress) == 3
			}, 2*time.Second, 10*time.Millisecond, "three progress notifications")
			mu.Lock()
			assert.Equal(t, []float64{1, 2, 3}, progress, "progress notifications, in order")
			mu.Unlock()

			read, err := session.ReadResource(ctx, &mcp.ReadResourceParams{URI: "sluice://toolkit/readme"})
			require.NoError(t, err)
			require.Len(t, read.Contents, 1)
			assert.NotEmpty(t, read.Contents[0].Text)

			prompt, err := session.GetPrompt(ctx, &mcp.GetPromptParams{Name: "greeting", Arguments: map[string]string{"name": "Ada"}})
			require.NoError(t, err)
			require.NotEmpty(t, prompt.Messages)
			assert.Contains(t, prompt.Messages[0].Content.(*mcp.TextContent).Text, "Ada")

			// Cancel a long call: the SDK sends notifications/cancelled when
			// the call's context ends, and the session stays usable.
			callCtx, callCancel := context.WithTimeout(ctx, 300*time.Millisecond)
			_, err = session.CallTool(callCtx, &mcp.CallToolParams{Name: "long_running_operation",
				Arguments: map[string]any{"duration": 10, "steps": 10}})
			callCancel()
			require.Error(t, err)
			assert.True(t, errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "cancel"), err.Error())

			res, err = session.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": 2, "b": 3}})
			require.NoError(t, err)
			assert.Contains(t, res.Content[0].(*mcp.TextContent).Text, "5")

			require.NoError(t, session.Close())
		})
	}
}
