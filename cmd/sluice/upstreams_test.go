package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The real MCP servers the gateway tests put behind Sluice: go-sdk's
// conformance everything-server (built from the module cache at the
// go-sdk version go.mod pins) and the reference server-everything (Node,
// installed by make peers).

var (
	buildOnce sync.Once
	buildDir  string
	buildErr  error
)

// TestMain removes the binaries the tests built.
func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// goEverythingBinary builds go-sdk's conformance everything-server once per
// test binary.
func goEverythingBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "sluice-upstreams-")
		if buildErr != nil {
			return
		}
		cmd := exec.Command("go", "build", "-o", filepath.Join(buildDir, "everything-server"),
			"github.com/modelcontextprotocol/go-sdk/conformance/everything-server")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			buildErr = fmt.Errorf("go build everything-server: %v\n%s", err, out.String())
		}
	})
	require.NoError(t, buildErr)
	return filepath.Join(buildDir, "everything-server")
}

// freePort returns a loopback port no earlier test of this binary used:
// Sluice's listeners are SO_REUSEPORT, so a new instance could otherwise
// share a port with one still shutting down.
func freePort(t testing.TB) int {
	t.Helper()
	for {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		port := l.Addr().(*net.TCPAddr).Port
		require.NoError(t, l.Close())
		usedPortsMu.Lock()
		fresh := !usedPorts[port]
		usedPorts[port] = true
		usedPortsMu.Unlock()
		if fresh {
			return port
		}
	}
}

// upstream is a real MCP server process the test started.
type upstream struct {
	URL  string
	Port int
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{}
}

// Stop kills the process (by its PID, which the test started) and waits.
func (u *upstream) Stop() {
	if u.cmd.Process != nil {
		_ = u.cmd.Process.Kill()
	}
	select {
	case <-u.done:
	case <-time.After(5 * time.Second):
	}
}

// startProcess runs cmd until the test ends, waiting for port to listen.
func startProcess(t testing.TB, cmd *exec.Cmd, port int) *upstream {
	t.Helper()
	u := &upstream{URL: fmt.Sprintf("http://127.0.0.1:%d/mcp", port), Port: port, cmd: cmd, out: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = u.out, u.out
	require.NoError(t, cmd.Start())
	go func() {
		_ = cmd.Wait()
		close(u.done)
	}()
	t.Cleanup(u.Stop)
	require.Eventually(t, func() bool {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			c.Close()
		}
		return err == nil
	}, 15*time.Second, 20*time.Millisecond, "%s did not listen: %s", cmd.Path, u.out)
	return u
}

// startGoEverything runs go-sdk's everything-server on port (0: a free
// one), stateful (2025-era sessions) or stateless (2026-07-28).
func startGoEverything(t testing.TB, port int, stateless bool) *upstream {
	t.Helper()
	bin := goEverythingBinary(t)
	if port == 0 {
		port = freePort(t)
	}
	cmd := exec.Command(bin, fmt.Sprintf("-http=127.0.0.1:%d", port), fmt.Sprintf("-stateless=%t", stateless))
	return startProcess(t, cmd, port)
}

// startNodeEverything runs @modelcontextprotocol/server-everything in
// Streamable HTTP mode on port (0: a free one), held to loopback by
// ../shared/tools/loopback.cjs (it would bind every interface).
func startNodeEverything(t *testing.T, port int) *upstream {
	t.Helper()
	dir, node := peers(t)
	loopback, err := filepath.Abs(filepath.Join("..", "..", "..", "shared", "tools", "loopback.cjs"))
	require.NoError(t, err)
	_, err = os.Stat(loopback)
	require.NoError(t, err, "../shared/tools/loopback.cjs keeps server-everything on 127.0.0.1")
	if port == 0 {
		port = freePort(t)
	}
	script := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	cmd := exec.Command(node, "-r", loopback, script, "streamableHttp")
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	return startProcess(t, cmd, port)
}

// startGateway runs sluice start on config (a YAML text) with the given
// number of workers, waiting for port to listen, and returns the MCP
// endpoint's URL.
func startGateway(t testing.TB, config string, port, workers int) string {
	return startConfig(t, config, port, workers)
}

// startConfig runs sluice start on config until the test ends and returns
// http://127.0.0.1:port/mcp.
func startConfig(t testing.TB, config string, port, workers int) string {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "gateway.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(config), 0o644))
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr syncBuffer
	code := make(chan int, 1)
	go func() {
		code <- startEngine(ctx, []string{"-c", cfg, "-w", fmt.Sprint(workers), "-e", filepath.Join(dir, "engine")}, &stdout, &stderr)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case c := <-code:
			if c != exitOK {
				t.Errorf("sluice start exited %d: %s", c, stderr.String())
			}
		case <-time.After(5 * time.Second):
			t.Error("sluice start did not stop")
		}
	})
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	require.Eventually(t, func() bool {
		select {
		case c := <-code:
			code <- c
			return true // exited: reported below
		default:
		}
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err == nil
	}, 5*time.Second, 20*time.Millisecond, stderr.String())
	select {
	case c := <-code:
		code <- c
		t.Fatalf("sluice start exited %d: %s", c, stderr.String())
	default:
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("sluice stderr:\n%s", stderr.String())
		}
	})
	return "http://" + addr + "/mcp"
}

// gatewayRoute is one route of a gateway config: a toolkit name and either
// an upstream URL (an mcp client) or "" for the built-in toolkit.
type gatewayRoute struct {
	Toolkit  string
	Upstream string
	// Versions, when set, is the client's options.versions, such as
	// "[2026-07-28, 2025-11-25]" to discover a stateless upstream; the
	// client's default is 2025-11-25.
	Versions string
}

// frontYAML is the bindings a gateway's clients reach first: a tcp server
// on 127.0.0.1:port (a number, or a ${{ env.… }} reference) and an http
// server whose requests for each of paths (exact, or a prefix ending in
// *) go to the mcp server mcp0.
func frontYAML(port string, paths ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `  tcp0:
    type: tcp
    kind: server
    options:
      host: 127.0.0.1
      port: %s
    exit: http0
  http0:
    type: http
    kind: server
    routes:
`, port)
	for _, p := range paths {
		fmt.Fprintf(&b, "      - exit: mcp0\n        when:\n          - headers: {\":path\": %q}\n", p)
	}
	return b.String()
}

// gatewayConfig writes a gateway: tcp → http → mcp server → mcp proxy →
// one mcp client per upstream route, the toolkit for the others.
func gatewayConfig(port int, prefix string, routes ...gatewayRoute) string {
	var b strings.Builder
	b.WriteString("name: gateway\nbindings:\n" + frontYAML(fmt.Sprint(port), "/mcp"))
	fmt.Fprintf(&b, `  mcp0:
    type: mcp
    kind: server
    exit: proxy0
    options:
      hosts: ["127.0.0.1:%d", "localhost:%d"]
  proxy0:
    type: mcp
    kind: proxy
`, port, port)
	if prefix != "" {
		fmt.Fprintf(&b, "    options: {prefix: %s}\n", prefix)
	}
	b.WriteString("    routes:\n")
	for i, r := range routes {
		fmt.Fprintf(&b, "      - exit: route%d\n        when:\n          - toolkit: %s\n", i, r.Toolkit)
	}
	for i, r := range routes {
		if r.Upstream == "" {
			fmt.Fprintf(&b, "  route%d:\n    type: toolkit\n    kind: server\n", i)
			continue
		}
		fmt.Fprintf(&b, "  route%d:\n    type: mcp\n    kind: client\n    options: {server: %q", i, r.Upstream)
		if r.Versions != "" {
			fmt.Fprintf(&b, ", versions: %s", r.Versions)
		}
		b.WriteString("}\n")
	}
	return b.String()
}
