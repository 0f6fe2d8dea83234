package tcp_test

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	_ "github.com/sluicehq/sluice/binding/echo"
	_ "github.com/sluicehq/sluice/binding/tcp"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/config"
	"github.com/sluicehq/sluice/engine/telemetry"
	"github.com/sluicehq/sluice/internal/enginetest"
)

// freePort returns a loopback port nothing listens on right now.
func freePort(t testing.TB) int { return enginetest.FreePort(t) }

// load loads a configuration from source, with app0 and app1 allowed as
// external exits.
func load(t testing.TB, src string) (*config.Config, error) {
	t.Helper()
	return enginetest.Load("test.yaml", src, "app0", "app1")
}

// engineOptions configure startEngine.
type engineOptions struct {
	workers  int
	external map[string]engine.Binding
	bindings func(string) (engine.Binding, error)
	logger   *slog.Logger
	ring     int // ring capacity, 4 MiB when 0
	options  []engine.Option
}

// startEngine runs an engine over the configuration src and stops it when
// the test ends.
func startEngine(t testing.TB, src string, o engineOptions) *engine.Engine {
	t.Helper()
	cfg, err := load(t, src)
	require.NoError(t, err)
	opts := []engine.Option{engine.WithWorkers(cmp.Or(o.workers, 2)), engine.WithRingCapacity(cmp.Or(o.ring, 1<<22))}
	if o.bindings != nil {
		opts = append(opts, engine.WithBindings(o.bindings))
	}
	if o.logger != nil {
		opts = append(opts, engine.WithLogger(o.logger))
	}
	for name, b := range o.external {
		opts = append(opts, engine.WithExternal(name, b))
	}
	opts = append(opts, o.options...)
	e := enginetest.New(t, cfg, opts...)
	for _, b := range o.external {
		if a, ok := b.(*app); ok {
			a.e = e
		}
	}
	return enginetest.Run(t, e)
}

// tcpBinding is a configuration of one tcp binding, net0, of the kind:
// options are the lines of its options block, rest more lines of the
// binding (such as "exit: app0").
func tcpBinding(kind, options string, rest ...string) string {
	src := "name: test\nbindings:\n  net0:\n    type: tcp\n    kind: " + kind + "\n"
	if options != "" {
		src += "    options:\n"
		for _, line := range strings.Split(options, "\n") {
			src += "      " + line + "\n"
		}
	}
	for _, r := range rest {
		src += "    " + r + "\n"
	}
	return src
}

// serverOptions are a tcp server's options to listen on 127.0.0.1:port.
func serverOptions(port int) string { return fmt.Sprintf("host: 127.0.0.1\nport: %d", port) }

// echoBinding is the echo binding echo0, to follow a configuration.
const echoBinding = "  echo0:\n    type: echo\n    kind: server\n"

// echoConfig is a tcp server on port to an echo binding.
func echoConfig(port int) string {
	return tcpBinding("server", serverOptions(port), "exit: echo0") + echoBinding
}

// appConfig is a tcp server on port whose exit is the external app0.
func appConfig(port int) string { return tcpBinding("server", serverOptions(port), "exit: app0") }

// openStreams counts the stream registrations left on every worker.
func openStreams(t testing.TB, e *engine.Engine) int {
	t.Helper()
	open := 0
	for i := 0; i < e.Workers(); i++ {
		require.NoError(t, e.Execute(i, func(w *engine.Worker) {
			s, th := w.Streams()
			open += s + th
		}))
	}
	return open
}

// opened returns how many streams the binding named name has begun
// (stream.opens.sent, counted once the BEGIN is in its target's ring or
// its worker's backlog), after a pass of every worker.
func opened(t testing.TB, e *engine.Engine, name string) int64 {
	t.Helper()
	enginetest.Settle(t, e)
	return enginetest.Metric(e, name, telemetry.StreamOpensSent)
}

// requireNoStreams waits until no worker has a stream registered.
func requireNoStreams(t testing.TB, e *engine.Engine) {
	t.Helper()
	require.Eventually(t, func() bool { return openStreams(t, e) == 0 }, 5*time.Second, 5*time.Millisecond,
		"stream registrations left open")
}

// dial connects to the loopback port.
func dial(t testing.TB, port int) *net.TCPConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), 5*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c.(*net.TCPConn)
}

// pattern returns n bytes that show any byte out of place.
func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*131+i/251) ^ seed
	}
	return b
}

// scriptConfig copies the configuration scripts/tcp/config/name into a
// temporary directory with its port 12345 replaced by port.
func scriptConfig(t testing.TB, name string, port int) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(scriptsDir, "config", name))
	require.NoError(t, err)
	require.True(t, bytes.Contains(src, []byte("12345")), "%s has no port 12345 to replace", name)
	out := strings.ReplaceAll(string(src), "12345", strconv.Itoa(port))
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, []byte(out), 0o644))
	return path
}

const scriptsDir = "../../scripts/tcp"

// logRecorder keeps the log records at or above a level.
type logRecorder struct {
	mu      sync.Mutex
	records []string
}

func (r *logRecorder) Enabled(context.Context, slog.Level) bool { return true }

func (r *logRecorder) Handle(_ context.Context, rec slog.Record) error {
	var b strings.Builder
	b.WriteString(rec.Level.String() + " " + rec.Message)
	rec.Attrs(func(a slog.Attr) bool {
		b.WriteString(" " + a.Key + "=" + a.Value.String())
		return true
	})
	r.mu.Lock()
	r.records = append(r.records, b.String())
	r.mu.Unlock()
	return nil
}

func (r *logRecorder) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *logRecorder) WithGroup(string) slog.Handler      { return r }

// matching returns the records that contain s.
func (r *logRecorder) matching(s string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, rec := range r.records {
		if strings.Contains(rec, s) {
			out = append(out, rec)
		}
	}
	return out
}
