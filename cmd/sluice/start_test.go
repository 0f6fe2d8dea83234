package main

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// syncBuffer is a bytes.Buffer safe to read while start writes to it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func openFDs(t *testing.T) int {
	entries, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	return len(entries)
}

// TestStartStopsCleanly runs start in-process until its context ends and
// checks that it exits 0 and leaves no goroutine or file descriptor behind.
func TestStartStopsCleanly(t *testing.T) {
	if r, w, err := os.Pipe(); err == nil { // let the runtime open its poller first
		r.Close()
		w.Close()
	}
	goroutines, fds := runtime.NumGoroutine(), openFDs(t)

	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr syncBuffer
	code := make(chan int, 1)
	go func() {
		code <- startEngine(ctx, []string{"-w", "2", "-e", filepath.Join(dir, "engine")}, &stdout, &stderr)
	}()
	require.Eventually(t, func() bool { return strings.Contains(stdout.String(), "started") }, 5*time.Second, 5*time.Millisecond, "%s", &stderr)
	assert.Contains(t, stderr.String(), "binding attached")
	assert.Contains(t, stderr.String(), `bindings="[http0 mcp0 tcp0 toolkit0]"`)
	assert.Contains(t, stderr.String(), "msg=listening worker=0 binding=tcp0 address=127.0.0.1:7114")
	assert.Equal(t, 1, strings.Count(stderr.String(), "msg=listening"), "one line per address, not per worker")
	assert.FileExists(t, filepath.Join(dir, "engine", "data0"))
	assert.FileExists(t, filepath.Join(dir, "engine", "data1"))

	cancel()
	select {
	case c := <-code:
		assert.Equal(t, exitOK, c, stderr.String())
	case <-time.After(stopTimeout):
		t.Fatal("start did not stop within 2 s")
	}
	assert.Contains(t, stderr.String(), "stopped")
	// Not require.Eventually: it runs the condition on goroutines of its own.
	for deadline := time.Now().Add(2 * time.Second); runtime.NumGoroutine() > goroutines && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	assert.LessOrEqual(t, runtime.NumGoroutine(), goroutines, "goroutines")
	assert.Equal(t, fds, openFDs(t), "file descriptors")
}

func TestStartBadConfig(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("name: test\nbindings:\n  app0:\n    type: echo\n    kind: server\n    exit: app9\n"), 0o644))
	var stdout, stderr bytes.Buffer
	code := startEngine(context.Background(), []string{"-c", bad, "-e", dir}, &stdout, &stderr)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr.String(), bad+`:6: bindings.app0.exit: no binding named "app9"`)
}

func TestValidateErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		yaml string
		want []string
	}{
		{
			name: "wrong type",
			yaml: "name: test\nbindings:\n  app0:\n    type: echo\n    kind: 7\n",
			want: []string{":5: bindings.app0.kind: "},
		},
		{
			name: "unknown key",
			yaml: "name: test\nbindings:\n  app0:\n    type: echo\n    kind: server\n    exits: app1\n",
			want: []string{`:6: bindings.app0: unknown key "exits"`},
		},
		{
			name: "unknown exit",
			yaml: "name: test\nbindings:\n  app0:\n    type: echo\n    kind: server\n    exit: app9\n",
			want: []string{`:6: bindings.app0.exit: no binding named "app9"`},
		},
		{
			name: "unknown binding type",
			yaml: "name: test\nbindings:\n  app0:\n    type: nope\n    kind: server\n",
			want: []string{`:4: bindings.app0.type: unknown binding type "nope"`},
		},
		{
			name: "tcp server without port",
			yaml: "name: test\nbindings:\n  tcp0:\n    type: tcp\n    kind: server\n    options:\n      host: 127.0.0.1\n    exit: app0\n  app0:\n    type: echo\n    kind: server\n",
			want: []string{`:6: bindings.tcp0.options: missing required key "port"`},
		},
		{
			name: "tcp server without options",
			yaml: "name: test\nbindings:\n  tcp0:\n    type: tcp\n    kind: server\n    exit: app0\n  app0:\n    type: echo\n    kind: server\n",
			want: []string{`:3: bindings.tcp0: missing required key "options"`},
		},
		{
			name: "mcp client without server",
			yaml: "name: test\nbindings:\n  mcp0:\n    type: mcp\n    kind: client\n    options:\n      versions: [\"2025-06-18\"]\n",
			want: []string{`:6: bindings.mcp0.options: missing required key "server"`},
		},
		{
			name: "not yaml",
			yaml: "name: [unclosed\n",
			want: []string{"bad.yaml:"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, "bad.yaml")
			require.NoError(t, os.WriteFile(path, []byte(tt.yaml), 0o644))
			var stdout, stderr bytes.Buffer
			assert.Equal(t, exitUsage, run([]string{"validate", "-c", path}, &stdout, &stderr))
			for _, w := range tt.want {
				assert.Contains(t, stderr.String(), w)
			}
			assert.True(t, strings.HasPrefix(stderr.String(), path+":"), stderr.String())
			assert.Empty(t, stdout.String())

			// start refuses the file with the same words, before it
			// starts anything.
			stdout.Reset()
			stderr.Reset()
			assert.Equal(t, exitUsage, startEngine(context.Background(), []string{"-c", path, "-e", filepath.Join(dir, "engine")}, &stdout, &stderr))
			for _, w := range tt.want {
				assert.Contains(t, stderr.String(), w)
			}
			assert.Empty(t, stdout.String())
		})
	}
}

// TestSIGTERM runs the real binary and checks that SIGTERM stops it with
// status 0 within 2 seconds.
func TestSIGTERM(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "sluice")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Stderr = os.Stderr
	require.NoError(t, build.Run())

	cmd := exec.Command(bin, "start", "-w", "2", "-e", filepath.Join(dir, "engine"))
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr syncBuffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err, stderr.String())
	assert.Contains(t, line, "started")

	sent := time.Now()
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		assert.NoError(t, err, "exit status: %s", stderr.String())
		assert.Less(t, time.Since(sent), 2*time.Second)
	case <-time.After(5 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("sluice did not stop after SIGTERM")
	}
	assert.Contains(t, stderr.String(), "stopped")
}
