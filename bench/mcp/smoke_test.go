package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/internal/enginetest"
)

// report is the part of load's JSON report the smoke test checks.
type report struct {
	Method      string             `json:"method"`
	Requests    int64              `json:"requests"`
	Errors      int64              `json:"errors"`
	FirstError  string             `json:"first_error"`
	RPS         float64            `json:"rps"`
	P50us       float64            `json:"p50_us"`
	P99us       float64            `json:"p99_us"`
	CPUusPerReq map[string]float64 `json:"cpu_us_per_req"`
	Client      string             `json:"client"`
}

// TestSmoke builds upstream, load and revproxy, starts the first (twice:
// with JSON responses, the benchmark's, and with SSE ones) and the last on
// loopback, and runs a second of load against the upstream directly and
// through revproxy, for tools/call and tools/list, with load's raw client
// and, once, its net/http one.
func TestSmoke(t *testing.T) {
	bin := t.TempDir()
	build := exec.Command(goTool(t), "build", "-o", bin+string(filepath.Separator), "./upstream", "./load", "./revproxy")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "go build: %s", out)

	upPort := freePort(t)
	up := start(t, filepath.Join(bin, "upstream"), "-addr", upPort)
	ssePort := freePort(t)
	sse := start(t, filepath.Join(bin, "upstream"), "-addr", ssePort, "-json=false")
	rpPort := freePort(t)
	rp := start(t, filepath.Join(bin, "revproxy"), "-addr", rpPort, "-upstream", "http://"+upPort)
	enginetest.WaitListen(t, upPort)
	enginetest.WaitListen(t, ssePort)
	enginetest.WaitListen(t, rpPort)

	tests := []struct {
		name   string
		addr   string
		method string
		pids   map[string]int
		client string
	}{
		{"direct call", upPort, "tools/call", map[string]int{"upstream": up}, "raw"},
		{"direct list", upPort, "tools/list", nil, "raw"},
		{"direct call net/http", upPort, "tools/call", nil, "http"},
		{"sse call", ssePort, "tools/call", map[string]int{"upstream": sse}, "raw"},
		{"sse list", ssePort, "tools/list", nil, "raw"},
		{"revproxy call", rpPort, "tools/call", map[string]int{"proxy": rp, "upstream": up}, "raw"},
		{"revproxy list", rpPort, "tools/list", map[string]int{"proxy": rp}, "raw"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "report.json")
			args := []string{"-url", "http://" + tt.addr + "/mcp", "-method", tt.method,
				"-sessions", "4", "-concurrency", "4", "-duration", "600ms", "-warmup", "100ms",
				"-min-tools", "2", "-json", file, "-client", tt.client}
			for name, pid := range tt.pids {
				args = append(args, "-pid", fmt.Sprintf("%s=%d", name, pid))
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			out, err := exec.CommandContext(ctx, filepath.Join(bin, "load"), args...).CombinedOutput()
			require.NoError(t, err, "load: %s", out)
			b, err := os.ReadFile(file)
			require.NoError(t, err)
			var r report
			require.NoError(t, json.Unmarshal(b, &r))
			assert.Equal(t, tt.method, r.Method)
			assert.Equal(t, tt.client, r.Client)
			assert.Positive(t, r.Requests)
			assert.Zero(t, r.Errors, r.FirstError)
			assert.Positive(t, r.RPS)
			assert.LessOrEqual(t, r.P50us, r.P99us)
			assert.Contains(t, r.CPUusPerReq, "load", "load reports its own CPU")
			for name := range tt.pids {
				assert.Contains(t, r.CPUusPerReq, name)
			}
		})
	}
}

// goTool is the go command: go test puts its own GOROOT/bin first on PATH.
func goTool(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("no go command to build the benchmark programs: %v", err)
	}
	return p
}

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

// start runs a program until the test ends and returns its pid.
func start(t *testing.T, path string, args ...string) int {
	t.Helper()
	cmd := exec.Command(path, args...)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd.Process.Pid
}
