// Package enginetest starts engines on YAML configurations for tests of the
// bindings and the command: a free loopback port to put in the YAML, the
// engine itself (stopped when the test ends), and a wait for a listener.
package enginetest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/binding"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/config"
	"github.com/sluicehq/sluice/engine/frame"
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

// StartMCP starts, as Start does, an engine on an MCP endpoint at a free
// loopback port: Front's tcp and http servers in front of an mcp server,
// mcp0, whose exit is exit, followed by rest (more of mcp0's keys, indented
// by four spaces, then more bindings, indented by two). name is the file
// name its errors cite. It waits for the port to listen and returns the
// endpoint's URL and the engine.
func StartMCP(t testing.TB, name, exit, rest string, opts ...engine.Option) (string, *engine.Engine) {
	t.Helper()
	port := FreePort(t)
	src := Front(port, "mcp0") + "  mcp0:\n    type: mcp\n    kind: server\n    exit: " + exit + "\n" + rest
	e := Start(t, name, src, opts...)
	WaitListen(t, fmt.Sprintf("127.0.0.1:%d", port))
	return fmt.Sprintf("http://127.0.0.1:%d/mcp", port), e
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
	cfg, err := Load(name, src)
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

// Load loads src, a configuration (name is the file name its errors
// cite), against the schema of the compiled-in bindings and the engine's
// components. external names the bindings the configuration may use as
// exits without declaring them: those the test attaches itself.
func Load(name, src string, external ...string) (*config.Config, error) {
	schema, err := config.NewSchema(append(binding.Fragments(), engine.ComponentFragments()...)...)
	if err != nil {
		return nil, err
	}
	return config.Load(name, []byte(src), schema, config.WithExternal(external...))
}

// Quiet is a logger that discards what it is given and drops debug
// records before they are formatted, so that it costs a test that counts
// allocations nothing.
var Quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// New returns an engine on cfg with opts after the test defaults: two
// unpinned workers, the Quiet logger and the compiled-in bindings.
func New(t testing.TB, cfg *config.Config, opts ...engine.Option) *engine.Engine {
	t.Helper()
	e, err := engine.New(cfg, append([]engine.Option{
		engine.WithWorkers(2), engine.WithPin(false), engine.WithLogger(Quiet), engine.WithBindings(binding.Factory),
	}, opts...)...)
	require.NoError(t, err)
	return e
}

// Run starts e and returns it. It stops e when the test ends, failing the
// test unless e stops cleanly within StopTimeout.
func Run(t testing.TB, e *engine.Engine) *engine.Engine {
	t.Helper()
	require.NoError(t, e.Start())
	t.Cleanup(func() { Stop(t, e) })
	return e
}

// Check loads src (name is the file name its errors cite), with the
// external bindings as exits, adds the system bindings it names, starts an
// engine on it with opts after the test defaults and stops it again. It
// returns the first error, the configuration's or the start's, for tests
// of configuration errors; an engine that starts must stop cleanly.
func Check(t testing.TB, name, src string, external map[string]engine.Binding, opts ...engine.Option) error {
	t.Helper()
	cfg, err := Load(name, src, slices.Sorted(maps.Keys(external))...)
	if err != nil {
		return err
	}
	if err := binding.Resolve(cfg); err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(external)) {
		opts = append(opts, engine.WithExternal(name, external[name]))
	}
	e := New(t, cfg, opts...)
	if err := e.Start(); err != nil {
		ctx, cancel := context.WithTimeout(context.Background(), StopTimeout)
		defer cancel()
		_ = e.Stop(ctx) // whatever the failed start left running
		return err
	}
	Stop(t, e)
	return nil
}

// StopTimeout bounds how long Stop waits for an engine's workers.
const StopTimeout = 5 * time.Second

// Stop stops e, failing the test unless it stops cleanly within
// StopTimeout.
func Stop(t testing.TB, e *engine.Engine) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), StopTimeout)
	defer cancel()
	require.NoError(t, e.Stop(ctx))
}

// HelperEnv is set, to the helper test's name, in a test binary that
// Helper runs again.
const HelperEnv = "SLUICE_TEST_HELPER"

// Helper runs the test binary again as a server of its own, running only
// the test named test, which acts when HelperEnv names it (and skips
// otherwise). The helper prints one line, such as its address, which
// Helper returns; it stops when its standard input closes, which Helper
// arranges for the end of t. Tests that count their own process's
// allocations put their peers there.
func Helper(t testing.TB, test string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$")
	cmd.Env = append(os.Environ(), HelperEnv+"="+test)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = stdin.Close()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err, "helper %s printed no line", test)
	return strings.TrimSpace(line)
}

// IsHelper reports whether this test binary runs as the helper test
// named test (Helper).
func IsHelper(test string) bool { return os.Getenv(HelperEnv) == test }

// WaitStdinClosed blocks until standard input closes: a helper test run by
// Helper serves until then, which is the end of the test that started it.
func WaitStdinClosed() { _, _ = io.Copy(io.Discard, os.Stdin) }

// MallocsPerOp runs op for warmup, so that free lists and tables reach
// their steady size, then n times, and returns this process's heap
// allocations per op over those n: the engine's workers' included, which
// is the point. Unlike testing.AllocsPerRun it leaves GOMAXPROCS alone.
// op should report failures through require only when they happen: the
// arguments of a passing check allocate too.
func MallocsPerOp(warmup time.Duration, n int, op func()) float64 {
	for start := time.Now(); time.Since(start) < warmup; {
		op()
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range n {
		op()
	}
	runtime.ReadMemStats(&after)
	return float64(after.Mallocs-before.Mallocs) / float64(n)
}

// ReceiveTimeout bounds how long Receive waits.
const ReceiveTimeout = 5 * time.Second

// Receive returns the next value from ch, failing the test if none comes
// within ReceiveTimeout; the failure reads "timed out waiting for " and
// what, formatted with args.
func Receive[T any](t testing.TB, ch <-chan T, what string, args ...any) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(ReceiveTimeout):
		t.Fatalf("timed out waiting for "+what, args...)
		var zero T
		return zero
	}
}

// Timer bounds waits as Receive does, with one timer used again and again:
// for tests that count allocations, which time.After would spoil.
type Timer struct{ t *time.Timer }

// NewTimer returns a stopped Timer.
func NewTimer() *Timer {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &Timer{t: t}
}

// ReceiveBy is Receive on the reused timer tm: it allocates nothing.
func ReceiveBy[T any](t testing.TB, tm *Timer, ch <-chan T, what string) T {
	t.Helper()
	tm.t.Reset(ReceiveTimeout)
	defer tm.t.Stop()
	select {
	case v := <-ch:
		return v
	case <-tm.t.C:
		t.Fatal("timed out waiting for " + what)
		var zero T
		return zero
	}
}

// Refuse is an external binding that refuses every stream routed to it:
// the one a test's own streams come from.
type Refuse struct{}

// Attach returns Refuse itself as the worker's handler.
func (Refuse) Attach(*engine.Worker, *engine.BindingConfig) (engine.Handler, error) {
	return Refuse{}, nil
}

// NewStream refuses the stream.
func (Refuse) NewStream(frame.FrameType, []byte) engine.MessageConsumer { return nil }

// Head is the header of a frame a test sends: the stream, and the
// sequence, acknowledge and maximum of its flow. Its trace id and
// authorization are 0.
type Head struct {
	OriginID, RoutedID, StreamID int64
	Seq, Ack                     int64
	Max                          int32
}

// headBuilder is a frame builder, B, and the header setters every frame
// type's builder has.
type headBuilder[B any] interface {
	OriginID(v int64) B
	RoutedID(v int64) B
	StreamID(v int64) B
	Sequence(v int64) B
	Acknowledge(v int64) B
	Maximum(v int32) B
	TraceID(v int64) B
	Authorization(v int64) B
}

// withHead writes h with b and returns b for the fields of its type.
func withHead[B headBuilder[B]](b B, h Head) B {
	return b.OriginID(h.OriginID).RoutedID(h.RoutedID).StreamID(h.StreamID).
		Sequence(h.Seq).Acknowledge(h.Ack).Maximum(h.Max).TraceID(0).Authorization(0)
}

// Begin wraps b over buf and writes h as the header of a BEGIN, with
// affinity 0; the caller adds the extension and builds it.
func Begin(b *frame.BeginBuilder, buf []byte, h Head) *frame.BeginBuilder {
	return withHead(b.Wrap(buf, 0, len(buf)), h).Affinity(0)
}

// Data builds in buf, with b, a DATA with the header h that carries
// payload whole (INIT and FIN) against reserved bytes of credit and no
// budget, and returns its length.
func Data(b *frame.DataBuilder, buf []byte, h Head, reserved int32, payload []byte) (int, error) {
	return withHead(b.Wrap(buf, 0, len(buf)), h).Flags(3).BudgetID(0).Reserved(reserved).Payload(payload).BuildLimit()
}

// End builds in buf, with b, an END with the header h and no extension,
// and returns its length.
func End(b *frame.EndBuilder, buf []byte, h Head) (int, error) {
	return withHead(b.Wrap(buf, 0, len(buf)), h).BuildLimit()
}

// Window builds in buf, with b, a WINDOW with the header h and no budget
// or padding, and returns its length.
func Window(b *frame.WindowBuilder, buf []byte, h Head) (int, error) {
	return withHead(b.Wrap(buf, 0, len(buf)), h).BudgetID(0).Padding(0).BuildLimit()
}

// Holdings is what an engine's workers hold between them: streams,
// throttle registrations and buffer slots.
type Holdings struct{ Streams, Throttles, Slots int }

// Held returns what e's workers hold, each counted on its own worker.
func Held(e *engine.Engine) Holdings {
	var h Holdings
	for i := range e.Workers() {
		w := e.Worker(i)
		done := make(chan Holdings, 1)
		w.Dispatch(func() {
			s, th := w.Streams()
			done <- Holdings{s, th, w.BufferPool().Acquired()}
		})
		r := <-done
		h.Streams += r.Streams
		h.Throttles += r.Throttles
		h.Slots += r.Slots
	}
	return h
}

// Released reports whether no worker of e holds a stream, a throttle
// registration or a buffer slot.
func Released(e *engine.Engine) bool { return Held(e) == Holdings{} }

// StreamIDs supplies, on w, the id of a new stream to routedID and returns
// it with its reply's.
func StreamIDs(w *engine.Worker, routedID int64) (initialID, replyID int64) {
	initialID = w.SupplyInitialID(routedID)
	return initialID, engine.ReplyID(initialID)
}

// Metric sums, over the workers, the telemetry metric name of the binding
// named binding, as e gathers it now.
func Metric(e *engine.Engine, binding, name string) int64 {
	var n int64
	for _, s := range e.Telemetry().Gather() {
		if b, _ := s.Labels.Get("binding"); b == binding && s.Name == name {
			n += s.Value
		}
	}
	return n
}

// Clock is a manual clock for [engine.WithClock]: its time stands still
// until the test moves it, so that a test of a timeout decides when the
// timeout is due instead of racing it. Safe for concurrent use.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a Clock that stands at the current time.
func NewClock() *Clock { return &Clock{now: time.Now()} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d and returns its new time. Nothing
// fires until a worker next looks at its timers: Tick moves the clock and
// fires what came due.
func (c *Clock) Advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	return c.now
}

// Tick moves the clock forward by d and fires, on each worker of e, the
// timers due by the new time ([engine.Worker.FireTimers]). When it
// returns they have run; what they sent other workers or sockets is on
// its way.
func (c *Clock) Tick(t testing.TB, e *engine.Engine, d time.Duration) {
	t.Helper()
	c.Advance(d)
	for i := range e.Workers() {
		require.NoError(t, e.Execute(i, func(w *engine.Worker) { w.FireTimers() }))
	}
}

// Settle returns once each worker of e, in turn, has begun a pass of its
// loop after Settle reached it, and finished it: the frames sent to a
// worker before then have been read (up to the 256 a pass reads). A frame
// read there may send another to a worker already settled, or to the
// same one, so a chain of n hops needs n calls.
func Settle(t testing.TB, e *engine.Engine) {
	t.Helper()
	for i := range e.Workers() {
		// Two tasks, the second dispatched once the first has run: the
		// first may run in the pass whose ring read came before the
		// call; the second runs in a later pass, after a read of the ring.
		for range 2 {
			require.NoError(t, e.Execute(i, func(*engine.Worker) {}))
		}
	}
}
