// Package enginetest starts engines on YAML configurations for tests of the
// bindings and the command: a free loopback port to put in the YAML, the
// engine itself (stopped when the test ends), and a wait for a listener.
package enginetest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/binding"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/config"
)

// FreePort returns a loopback TCP port that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	return port
}

// WaitListen waits up to 10 s until addr accepts a connection.
func WaitListen(t testing.TB, addr string) {
	t.Helper()
	require.Eventually(t, func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			_ = c.Close()
		}
		return err == nil
	}, 10*time.Second, 10*time.Millisecond, "nothing listens on %s", addr)
}

// Front returns the start of a configuration named test: a tcp server on
// 127.0.0.1:port whose connections go to an http server, whose requests
// go to exit. The caller appends its own bindings, indented by two spaces.
func Front(port int, exit string) string {
	return fmt.Sprintf(`name: test
bindings:
  tcp0:
    type: tcp
    kind: server
    options:
      host: 127.0.0.1
      port: %d
    exit: http0
  http0:
    type: http
    kind: server
    exit: %s
`, port, exit)
}

// Logs is where the engines' debug logs go: nowhere, unless
// SLUICE_TEST_LOG is set, then standard error.
func Logs() io.Writer {
	if os.Getenv("SLUICE_TEST_LOG") != "" {
		return os.Stderr
	}
	return io.Discard
}

// Start loads src (name is the file name its errors cite), adds the system
// bindings it names, and starts an engine on it: two unpinned workers with
// the default rings, debug logs to Logs(), the built-in bindings, then opts. The
// engine stops when the test ends.
func Start(t testing.TB, name, src string, opts ...engine.Option) *engine.Engine {
	t.Helper()
	schema, err := config.NewSchema(append(binding.Fragments(), engine.ComponentFragments()...)...)
	require.NoError(t, err)
	cfg, err := config.Load(name, []byte(src), schema)
	require.NoError(t, err)
	require.NoError(t, binding.Resolve(cfg))
	all := append([]engine.Option{
		engine.WithWorkers(2), engine.WithPin(false),
		engine.WithLogger(slog.New(slog.NewTextHandler(Logs(), &slog.HandlerOptions{Level: slog.LevelDebug}))),
		engine.WithBindings(binding.Factory),
	}, opts...)
	e, err := engine.New(cfg, all...)
	require.NoError(t, err)
	require.NoError(t, e.Start())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		_ = e.Stop(ctx)
	})
	return e
}
