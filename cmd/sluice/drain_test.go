package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/internal/enginetest"
)

// slowUpstream is a go-sdk MCP server whose tool hold keeps every call
// until release is closed, then answers "held <n>".
type slowUpstream struct {
	URL     string
	started atomic.Int32
	arrived chan struct{} // one value per call that has started
	release chan struct{}
}

func startSlowUpstream(t *testing.T) *slowUpstream {
	t.Helper()
	u := &slowUpstream{arrived: make(chan struct{}, 1024), release: make(chan struct{})}
	server := mcp.NewServer(&mcp.Implementation{Name: "slow", Version: "1.0.0"}, nil)
	type holdArgs struct {
		N int `json:"n"`
	}
	mcp.AddTool(server, &mcp.Tool{Name: "hold", Description: "answers once released"},
		func(ctx context.Context, _ *mcp.CallToolRequest, args holdArgs) (*mcp.CallToolResult, any, error) {
			u.started.Add(1)
			u.arrived <- struct{}{}
			select {
			case <-u.release:
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("held %d", args.N)}}}, nil, nil
		})
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil))
	u.URL = serveLoopback(t, mux) + "/mcp"
	return u
}

// awaitCalls waits until n calls have reached the upstream.
func (u *slowUpstream) awaitCalls(t *testing.T, n int) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for i := 0; i < n; i++ {
		select {
		case <-u.arrived:
		case <-deadline:
			t.Fatalf("%d of %d calls reached the upstream", u.started.Load(), n)
		}
	}
}

// gatewayProcess is the sluice binary running a gateway the test started.
type gatewayProcess struct {
	URL  string
	port int
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{}
	err  error // cmd.Wait's, once done is closed
}

// startGatewayProcess runs `sluice start` with extra args on a gateway to
// up (toolkit slow: one route, so its tools keep their names) and waits until it listens.
func startGatewayProcess(t *testing.T, up *slowUpstream, args ...string) *gatewayProcess {
	t.Helper()
	dir := t.TempDir()
	port := freePort(t)
	cfg := filepath.Join(dir, "gateway.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(gatewayConfig(port, "", gatewayRoute{Toolkit: "slow", Upstream: up.URL})), 0o644))
	cmd := exec.Command(sluiceBinary(t), append([]string{"start", "-c", cfg, "-w", "2", "-e", filepath.Join(dir, "engine")}, args...)...)
	g := &gatewayProcess{URL: fmt.Sprintf("http://127.0.0.1:%d/mcp", port), port: port, cmd: cmd, out: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = g.out, g.out
	require.NoError(t, cmd.Start())
	go func() {
		g.err = cmd.Wait()
		close(g.done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-g.done
		if t.Failed() {
			t.Logf("sluice:\n%s", g.out)
		}
	})
	require.Eventually(t, func() bool { return g.exited() || g.accepts() }, 15*time.Second, 10*time.Millisecond)
	require.False(t, g.exited(), "sluice exited: %s", g.out)
	return g
}

func (g *gatewayProcess) exited() bool {
	select {
	case <-g.done:
		return true
	default:
		return false
	}
}

// accepts reports whether a connection to the gateway's port is taken.
func (g *gatewayProcess) accepts() bool {
	c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", g.port))
	if err == nil {
		c.Close()
	}
	return err == nil
}

// wait waits for the process to exit and returns its exit code.
func (g *gatewayProcess) wait(t *testing.T, limit time.Duration) int {
	t.Helper()
	select {
	case <-g.done:
	case <-time.After(limit):
		t.Fatalf("sluice still running after %s", limit)
	}
	var exit *exec.ExitError
	if errors.As(g.err, &exit) {
		return exit.ExitCode()
	}
	require.NoError(t, g.err)
	return 0
}

// holdSession initializes a session and lists the tools, so that the
// gateway knows hold.
func holdSession(t *testing.T, ctx context.Context, endpoint string) *rawSessionClient {
	t.Helper()
	s := rawSession(t, ctx, endpoint)
	require.Equal(t, http.StatusOK, s.post(t, ctx, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`))
	return s
}

// callHold calls hold with n in session s and returns the result's
// text, or why there is none.
func callHold(ctx context.Context, s *rawSessionClient, n int) (string, error) {
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"hold","arguments":{"n":%d}}}`, n+10, n)
	r, err := enginetest.PostMCP(ctx, s.endpoint, "2025-11-25", s.id, body)
	if err != nil {
		return "", err
	}
	if r.Status != http.StatusOK || r.Msg == nil {
		return "", fmt.Errorf("status %d: %v", r.Status, r.Msg)
	}
	m := r.Msg
	if m["error"] != nil {
		return "", fmt.Errorf("error %v", m["error"])
	}
	return resultText(m), nil
}

// holdCalls starts n calls of hold in s and returns where each
// one's outcome arrives.
func holdCalls(ctx context.Context, s *rawSessionClient, n int) []chan error {
	outcomes := make([]chan error, n)
	for i := range outcomes {
		outcomes[i] = make(chan error, 1)
		go func() {
			got, err := callHold(ctx, s, i)
			if err == nil && got != fmt.Sprintf("held %d", i) {
				err = fmt.Errorf("call %d answered %q", i, got)
			}
			outcomes[i] <- err
		}()
	}
	return outcomes
}

// openStanding opens the session's GET event stream.
func openStanding(t *testing.T, ctx context.Context, s *rawSessionClient) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.endpoint, nil)
	require.NoError(t, err)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", s.id)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "chunked", strings.Join(resp.TransferEncoding, ","))
	return resp
}

// TestSIGTERMDrains: with 50 calls in flight to a slow upstream tool and a
// GET event stream open, SIGTERM makes the gateway refuse new connections
// and end the event stream cleanly, while every call still completes once
// the tool answers; then it exits 0.
func TestSIGTERMDrains(t *testing.T) {
	const calls = 50
	up := startSlowUpstream(t)
	g := startGatewayProcess(t, up)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s := holdSession(t, ctx, g.URL)
	standing := openStanding(t, ctx, s)
	outcomes := holdCalls(ctx, s, calls)
	up.awaitCalls(t, calls)

	require.NoError(t, g.cmd.Process.Signal(syscall.SIGTERM))
	require.Eventually(t, func() bool { return !g.accepts() }, 10*time.Second, 10*time.Millisecond,
		"the gateway still accepts connections")
	// The event stream ends with the chunked body's end, not a cut.
	_, err := io.Copy(io.Discard, standing.Body)
	require.NoError(t, err, "the GET event stream ends cleanly")
	for i, out := range outcomes {
		select {
		case err := <-out:
			t.Fatalf("call %d finished before the tool answered: %v", i, err)
		default:
		}
	}
	require.False(t, g.exited(), "sluice exited with calls in flight: %s", g.out)

	close(up.release)
	for i, out := range outcomes {
		select {
		case err := <-out:
			assert.NoError(t, err, "call %d", i)
		case <-ctx.Done():
			t.Fatalf("call %d never finished", i)
		}
	}
	assert.Equal(t, exitOK, g.wait(t, 10*time.Second), "%s", g.out)
	assert.Contains(t, g.out.String(), "msg=draining")
	assert.NotContains(t, g.out.String(), "drain cut short")
	assert.Contains(t, g.out.String(), "msg=stopped")
}

// TestSecondSignalCuts: a second SIGTERM during the drain stops the
// gateway at once: the calls in flight are cut and it exits 1.
func TestSecondSignalCuts(t *testing.T) {
	const calls = 5
	up := startSlowUpstream(t)
	defer close(up.release)
	g := startGatewayProcess(t, up)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s := holdSession(t, ctx, g.URL)
	outcomes := holdCalls(ctx, s, calls)
	up.awaitCalls(t, calls)

	require.NoError(t, g.cmd.Process.Signal(syscall.SIGTERM))
	require.Eventually(t, func() bool { return strings.Contains(g.out.String(), "msg=draining") }, 10*time.Second, 10*time.Millisecond)
	require.NoError(t, g.cmd.Process.Signal(syscall.SIGTERM))
	assert.Equal(t, exitFail, g.wait(t, 10*time.Second), "%s", g.out)
	for i, out := range outcomes {
		select {
		case err := <-out:
			assert.Error(t, err, "call %d was cut", i)
		case <-ctx.Done():
			t.Fatalf("call %d never finished", i)
		}
	}
	assert.Contains(t, g.out.String(), "drain cut short")
}

// TestDrainTimeout: when the drain timeout passes first, the calls still
// in flight are cut and the gateway exits 0.
func TestDrainTimeout(t *testing.T) {
	up := startSlowUpstream(t)
	defer close(up.release)
	g := startGatewayProcess(t, up, "--drain-timeout", "200ms")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s := holdSession(t, ctx, g.URL)
	outcomes := holdCalls(ctx, s, 2)
	up.awaitCalls(t, 2)

	require.NoError(t, g.cmd.Process.Signal(syscall.SIGTERM))
	assert.Equal(t, exitOK, g.wait(t, 10*time.Second), "%s", g.out)
	for i, out := range outcomes {
		select {
		case err := <-out:
			assert.Error(t, err, "call %d was cut", i)
		case <-ctx.Done():
			t.Fatalf("call %d never finished", i)
		}
	}
	assert.Contains(t, g.out.String(), "drain timeout 200ms passed")
}
