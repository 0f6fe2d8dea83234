package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// inspectorCLI returns a function that runs the MCP Inspector's CLI
// (installed by make peers) once against endpoint with args, and returns
// what it printed as JSON.
func inspectorCLI(t *testing.T, endpoint string) func(args ...string) map[string]any {
	t.Helper()
	dir, node := peers(t)
	pkg := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "inspector")
	manifest, err := os.ReadFile(filepath.Join(pkg, "package.json"))
	require.NoError(t, err, "the MCP Inspector is not installed: run make peers (.ci/peers.sh)")
	var m struct {
		Bin map[string]string `json:"bin"`
	}
	require.NoError(t, json.Unmarshal(manifest, &m))
	bin := m.Bin["mcp-inspector"]
	require.NotEmpty(t, bin, "the Inspector names no mcp-inspector command")
	return func(args ...string) map[string]any {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, node, append([]string{filepath.Join(pkg, bin), "--cli", endpoint, "--transport", "http"}, args...)...)
		cmd.Dir = dir
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		require.NoError(t, cmd.Run(), "inspector %v: %s", args, stderr.String())
		var out map[string]any
		require.NoError(t, json.Unmarshal(bytes.TrimSpace(stdout.Bytes()), &out), "inspector %v printed %s", args, stdout.String())
		require.NotContains(t, out, "error", "inspector %v", args)
		return out
	}
}

// firstText returns the text of the first item of out[key] (content,
// contents or messages[].content).
func firstText(t *testing.T, out map[string]any, key string) string {
	t.Helper()
	items, ok := out[key].([]any)
	require.True(t, ok && len(items) > 0, "%s in %v", key, out)
	item, ok := items[0].(map[string]any)
	require.True(t, ok, "%v", items[0])
	if c, ok := item["content"].(map[string]any); ok {
		item = c
	}
	s, _ := item["text"].(string)
	return s
}

// TestInspectorCLI runs the MCP Inspector's CLI, the client the README
// points to, against the embedded default and through the gateway (the
// go-sdk and Node everything servers and the built-in toolkit behind the
// proxy): lists, calls, a resource and a prompt, each one process and one
// session of its own.
func TestInspectorCLI(t *testing.T) {
	t.Run("default", func(t *testing.T) {
		startDefault(t)
		cli := inspectorCLI(t, defaultEndpoint)
		var names []string
		for _, tool := range cli("--method", "tools/list")["tools"].([]any) {
			names = append(names, tool.(map[string]any)["name"].(string))
		}
		assert.Subset(t, names, []string{"echo", "add", "long_running_operation"})
		assert.Equal(t, "The sum of 2 and 40 is 42.", firstText(t, cli("--method", "tools/call", "--tool-name", "add", "--tool-arg", "a=2", "--tool-arg", "b=40"), "content"))
		assert.Contains(t, firstText(t, cli("--method", "resources/read", "--uri", "sluice://toolkit/readme"), "contents"), "Sluice toolkit")
		assert.Equal(t, "Say hello to Ada.", firstText(t, cli("--method", "prompts/get", "--prompt-name", "greeting", "--prompt-args", "name=Ada"), "messages"))
	})
	t.Run("gateway", func(t *testing.T) {
		endpoint, _, _ := threeRoutes(t)
		cli := inspectorCLI(t, endpoint)
		var names []string
		for _, tool := range cli("--method", "tools/list")["tools"].([]any) {
			names = append(names, tool.(map[string]any)["name"].(string))
		}
		assert.Subset(t, names, []string{"everything__test_simple_text", "node__echo", "local__add"})
		assert.NotEmpty(t, firstText(t, cli("--method", "tools/call", "--tool-name", "everything__test_simple_text"), "content"))
		assert.Equal(t, "Echo: hi", firstText(t, cli("--method", "tools/call", "--tool-name", "node__echo", "--tool-arg", "message=hi"), "content"))
		assert.Equal(t, "The sum of 2 and 40 is 42.", firstText(t, cli("--method", "tools/call", "--tool-name", "local__add", "--tool-arg", "a=2", "--tool-arg", "b=40"), "content"))
		assert.NotEmpty(t, firstText(t, cli("--method", "resources/read", "--uri", "everything+test://static-text"), "contents"))
		assert.Equal(t, "Say hello to Ada.", firstText(t, cli("--method", "prompts/get", "--prompt-name", "local__greeting", "--prompt-args", "name=Ada"), "messages"))
	})
}
