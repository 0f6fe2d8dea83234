package engine_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/sluicehq/sluice/binding"
	_ "github.com/sluicehq/sluice/binding/echo"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/config"
	"github.com/sluicehq/sluice/engine/frame"
	"github.com/sluicehq/sluice/engine/ring"
	"github.com/sluicehq/sluice/engine/telemetry"
	"github.com/sluicehq/sluice/internal/enginetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMain checks that the engine tests leave no goroutine and no file
// descriptor behind.
func TestMain(m *testing.M) {
	// The Go runtime opens its own epoll instance and eventfd the first
	// time it needs its network poller, which os.Pipe does before it
	// returns: let it, before taking the baseline.
	if r, w, err := os.Pipe(); err == nil {
		r.Close()
		w.Close()
	}
	goroutines := runtime.NumGoroutine()
	fds := openFDs()
	code := m.Run()
	if code == 0 {
		deadline := time.Now().Add(2 * time.Second)
		for runtime.NumGoroutine() > goroutines && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if n := runtime.NumGoroutine(); n > goroutines {
			fmt.Fprintf(os.Stderr, "leaked goroutines: %d before, %d after\n", goroutines, n)
			code = 1
		}
		if n := openFDs(); n > fds {
			fmt.Fprintf(os.Stderr, "leaked file descriptors: %d before, %d after\n", fds, n)
			entries, _ := os.ReadDir("/proc/self/fd")
			for _, e := range entries {
				link, _ := os.Readlink("/proc/self/fd/" + e.Name())
				fmt.Fprintf(os.Stderr, "  fd %s -> %s\n", e.Name(), link)
			}
			code = 1
		}
	}
	os.Exit(code)
}

func openFDs() int {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 0
	}
	return len(entries)
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// start runs an engine with an echo binding named app0 on n workers.
func start(t *testing.T, n int, opts ...engine.Option) *engine.Engine {
	t.Helper()
	cfg := &config.Config{Name: "test", Bindings: []*config.Binding{{Name: "app0", Type: "echo", Kind: "server"}}}
	return startConfig(t, cfg, append([]engine.Option{engine.WithWorkers(n)}, opts...)...)
}

// startWith runs an engine of cfg on two workers, with the binding types
// lookup gives.
func startWith(t *testing.T, cfg *config.Config, lookup func(string) (engine.Binding, error)) *engine.Engine {
	t.Helper()
	return startConfig(t, cfg, engine.WithWorkers(2), engine.WithBindings(lookup))
}

// startConfig runs an engine of cfg, unpinned, with a 64 KiB ring, a
// quiet logger and the registered bindings unless opts say otherwise, and
// stops it when the test ends.
func startConfig(t *testing.T, cfg *config.Config, opts ...engine.Option) *engine.Engine {
	t.Helper()
	opts = append([]engine.Option{
		engine.WithRingCapacity(1 << 16), engine.WithPin(false),
		engine.WithLogger(quiet), engine.WithBindings(binding.Factory),
	}, opts...)
	e, err := engine.New(cfg, opts...)
	require.NoError(t, err)
	require.NoError(t, e.Start())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		require.NoError(t, e.Stop(ctx))
	})
	return e
}

// received is one frame a test client saw, decoded.
type received struct {
	typ      frame.FrameType
	streamID int64
	seq, ack int64
	max      int32
	payload  string
	ext      string
	signalID int32
}

// client plays the initiator of one stream from a worker's thread and
// reports every frame it receives on a channel.
type client struct {
	e         *engine.Engine
	worker    int
	originID  int64
	routedID  int64
	initialID int64
	frames    chan received
	initial   engine.Flow // sent
	reply     engine.Flow // received
}

func newClient(e *engine.Engine, worker int, routed string) *client {
	routedID, ok := e.ResolveID(routed)
	if !ok {
		routedID = 0x7777 // names no binding
	}
	return &client{e: e, worker: worker, originID: 0x1_0000_0042, routedID: routedID, frames: make(chan received, 64)}
}

func (c *client) onMessage(t frame.FrameType, buf []byte) {
	r := received{typ: t}
	var h frame.Frame
	if h.TryWrap(buf, 0, len(buf)) {
		r.streamID, r.seq, r.ack, r.max = h.StreamID(), h.Sequence(), h.Acknowledge(), h.Maximum()
	}
	switch t {
	case frame.FrameBegin:
		var b frame.Begin
		if b.TryWrap(buf, 0, len(buf)) {
			r.ext = string(b.Extension())
		}
	case frame.FrameData:
		var d frame.Data
		if d.TryWrap(buf, 0, len(buf)) {
			r.payload, r.ext = string(d.Payload()), string(d.Extension())
			_ = c.reply.OnData(&d)
		}
	case frame.FrameWindow:
		var w frame.Window
		if w.TryWrap(buf, 0, len(buf)) {
			_ = c.initial.OnWindow(&w)
		}
	case frame.FrameSignal:
		var s frame.Signal
		if s.TryWrap(buf, 0, len(buf)) {
			r.signalID = s.SignalID()
		}
	}
	c.frames <- r
}

// on runs fn on the client's worker.
func (c *client) on(t *testing.T, fn func(w *engine.Worker)) {
	t.Helper()
	require.NoError(t, c.e.Execute(c.worker, fn))
}

func (c *client) begin(t *testing.T, target int, ext string) {
	t.Helper()
	c.on(t, func(w *engine.Worker) {
		c.initialID = w.SupplyInitialIDOn(target)
		var b frame.BeginBuilder
		buf := w.WriteBuffer()
		n, err := b.Wrap(buf, 0, len(buf)).OriginID(c.originID).RoutedID(c.routedID).StreamID(c.initialID).
			Sequence(0).Acknowledge(0).Maximum(0).Affinity(0).Extension([]byte(ext)).BuildLimit()
		require.NoError(t, err)
		require.NoError(t, w.NewStream(buf[:n], c.onMessage))
	})
}

// window grants the reply direction max bytes of credit.
func (c *client) window(t *testing.T, max int32) {
	t.Helper()
	c.on(t, func(w *engine.Worker) {
		c.reply.Grant(max)
		var b frame.WindowBuilder
		buf := w.WriteBuffer()
		n, err := b.Wrap(buf, 0, len(buf)).OriginID(c.originID).RoutedID(c.routedID).StreamID(engine.ReplyID(c.initialID)).
			Sequence(c.reply.Seq).Acknowledge(c.reply.Ack).Maximum(c.reply.Max).BudgetID(0).Padding(0).BuildLimit()
		require.NoError(t, err)
		require.NoError(t, w.Send(frame.FrameWindow, buf[:n]))
	})
}

// data sends payload if the window allows it and reports whether it did.
func (c *client) data(t *testing.T, payload string) bool {
	t.Helper()
	sent := false
	c.on(t, func(w *engine.Worker) {
		if !c.initial.CanSend(len(payload)) {
			return
		}
		seq := c.initial.Seq
		reserved := c.initial.Send(len(payload))
		var b frame.DataBuilder
		buf := w.WriteBuffer()
		n, err := b.Wrap(buf, 0, len(buf)).OriginID(c.originID).RoutedID(c.routedID).StreamID(c.initialID).
			Sequence(seq).Acknowledge(c.initial.Ack).Maximum(c.initial.Max).
			BudgetID(0).Reserved(reserved).Payload([]byte(payload)).BuildLimit()
		require.NoError(t, err)
		require.NoError(t, w.Send(frame.FrameData, buf[:n]))
		sent = true
	})
	return sent
}

func (c *client) end(t *testing.T) {
	t.Helper()
	c.on(t, func(w *engine.Worker) {
		var b frame.EndBuilder
		buf := w.WriteBuffer()
		n, err := b.Wrap(buf, 0, len(buf)).OriginID(c.originID).RoutedID(c.routedID).StreamID(c.initialID).
			Sequence(c.initial.Seq).Acknowledge(c.initial.Ack).Maximum(c.initial.Max).BuildLimit()
		require.NoError(t, err)
		require.NoError(t, w.Send(frame.FrameEnd, buf[:n]))
	})
}

// echo runs one whole stream through the echo binding on worker target:
// BEGIN with ext, a window, DATA payload echoed back, END both ways.
func (c *client) echo(t *testing.T, target int, ext, payload string) {
	t.Helper()
	c.begin(t, target, ext)
	c.expect(t, frame.FrameBegin)
	c.window(t, 8192)
	c.expect(t, frame.FrameWindow)
	require.True(t, c.data(t, payload))
	assert.Equal(t, payload, c.expect(t, frame.FrameData).payload)
	c.end(t)
	c.expect(t, frame.FrameEnd)
}

// expect waits for the next frame and checks its type.
func (c *client) expect(t *testing.T, typ frame.FrameType) received {
	t.Helper()
	select {
	case r := <-c.frames:
		require.Equal(t, typ, r.typ, "received %+v", r)
		return r
	case <-time.After(5 * time.Second):
		t.Fatalf("timed out waiting for %s", typ)
		return received{}
	}
}

// expectNone checks that no frame has come for the client once every
// worker has read what was sent to it, twice over: the client's frames
// and the answers to them, which is as far as the tests' exchanges go.
// It waits for the workers' passes, not for a while.
func (c *client) expectNone(t *testing.T) {
	t.Helper()
	enginetest.Settle(t, c.e)
	enginetest.Settle(t, c.e)
	select {
	case r := <-c.frames:
		t.Fatalf("unexpected frame %+v", r)
	default:
	}
}

func TestStreamAcrossWorkers(t *testing.T) {
	e := start(t, 2)
	c := newClient(e, 0, "app0")
	c.begin(t, 1, "hello-ext")
	assert.Equal(t, 0, engine.ClientIndex(c.initialID))
	assert.Equal(t, 1, engine.ServerIndex(c.initialID))

	begin := c.expect(t, frame.FrameBegin)
	assert.Equal(t, engine.ReplyID(c.initialID), begin.streamID)
	assert.Equal(t, "hello-ext", begin.ext)

	c.window(t, 8192)
	win := c.expect(t, frame.FrameWindow)
	assert.Equal(t, c.initialID, win.streamID)
	assert.Equal(t, int32(8192), win.max)

	require.True(t, c.data(t, "hello"))
	data := c.expect(t, frame.FrameData)
	assert.Equal(t, "hello", data.payload)
	assert.Equal(t, engine.ReplyID(c.initialID), data.streamID)

	c.end(t)
	c.expect(t, frame.FrameEnd)

	// Both sides forget the stream once it is closed both ways.
	require.Eventually(t, func() bool {
		open := 0
		for i := 0; i < 2; i++ {
			require.NoError(t, e.Execute(i, func(w *engine.Worker) {
				s, th := w.Streams()
				open += s + th
			}))
		}
		return open == 0
	}, 2*time.Second, 10*time.Millisecond)
}

// TestZeroWindowBlocksThenResumes opens a stream whose receiver grants no
// credit: the writer may not send until a WINDOW arrives.
func TestZeroWindowBlocksThenResumes(t *testing.T) {
	e := start(t, 2)
	c := newClient(e, 0, "app0")
	c.begin(t, 1, "")
	c.expect(t, frame.FrameBegin)

	c.window(t, 0)
	zero := c.expect(t, frame.FrameWindow)
	assert.Equal(t, int32(0), zero.max)
	assert.False(t, c.data(t, "blocked"), "a zero window must block the writer")
	c.expectNone(t)

	c.window(t, 4)
	c.expect(t, frame.FrameWindow)
	assert.False(t, c.data(t, "12345"), "5 bytes do not fit a 4-byte window")
	require.True(t, c.data(t, "1234"))
	assert.Equal(t, "1234", c.expect(t, frame.FrameData).payload)
	assert.False(t, c.data(t, "5"), "the window is spent until acknowledged")

	c.window(t, 4) // acknowledges the 4 bytes echoed back
	c.expect(t, frame.FrameWindow)
	require.True(t, c.data(t, "5"))
	assert.Equal(t, "5", c.expect(t, frame.FrameData).payload)
}

func TestResetOnUnroutableBegin(t *testing.T) {
	e := start(t, 2)
	c := newClient(e, 1, "nowhere")
	c.begin(t, 0, "")
	reset := c.expect(t, frame.FrameReset)
	assert.Equal(t, c.initialID, reset.streamID)
}

// TestSignalAtAndCancel runs on a manual clock: a signal comes when the
// clock reaches its deadline and not a tick before, a cancelled one never,
// and SignalNow at once.
func TestSignalAtAndCancel(t *testing.T) {
	clock := enginetest.NewClock()
	e := start(t, 1, engine.WithClock(clock.Now))
	c := newClient(e, 0, "app0")
	c.begin(t, 0, "")
	c.expect(t, frame.FrameBegin)

	var kept, cancelled int64
	c.on(t, func(w *engine.Worker) {
		now := w.Now()
		kept = w.SignalAt(now.Add(30*time.Millisecond), c.originID, c.routedID, c.initialID, 0, 7, 0)
		cancelled = w.SignalAt(now.Add(10*time.Millisecond), c.originID, c.routedID, c.initialID, 0, 8, 0)
		assert.True(t, w.Cancel(cancelled))
		assert.False(t, w.Cancel(cancelled))
	})
	clock.Tick(t, e, 29*time.Millisecond)
	c.expectNone(t)
	clock.Tick(t, e, time.Millisecond)
	assert.Equal(t, int32(7), c.expect(t, frame.FrameSignal).signalID)
	clock.Tick(t, e, time.Hour)
	c.expectNone(t)
	c.on(t, func(w *engine.Worker) { assert.False(t, w.Cancel(kept), "a fired signal cannot be cancelled") })

	c.on(t, func(w *engine.Worker) { w.SignalNow(c.originID, c.routedID, c.initialID, 0, 9, 0) })
	assert.Equal(t, int32(9), c.expect(t, frame.FrameSignal).signalID)
}

// TestDisarm: Disarm cancels the timer an id names and zeroes the id, so
// that the timer never fires; a zero id is left alone.
func TestDisarm(t *testing.T) {
	clock := enginetest.NewClock()
	e := start(t, 1, engine.WithClock(clock.Now))
	var fired []string // appended on the worker's thread
	var disarmed, kept, none int64
	require.NoError(t, e.Execute(0, func(w *engine.Worker) {
		now := w.Now()
		disarmed = w.TimerAt(now.Add(time.Second), func() { fired = append(fired, "disarmed") })
		kept = w.TimerAt(now.Add(time.Second), func() { fired = append(fired, "kept") })
		w.Disarm(&disarmed)
		w.Disarm(&none)
	}))
	assert.Zero(t, disarmed)
	assert.Zero(t, none)
	assert.NotZero(t, kept)
	clock.Tick(t, e, time.Second)
	require.NoError(t, e.Execute(0, func(*engine.Worker) { assert.Equal(t, []string{"kept"}, fired) }))
}

// TestFireTimers: on a manual clock the worker's timers wait for the
// clock to move; FireTimers, through Execute, has fired every timer the
// move made due, on two workers, and none that is not due yet.
func TestFireTimers(t *testing.T) {
	clock := enginetest.NewClock()
	e := start(t, 2, engine.WithClock(clock.Now))
	var fired [2][]string // per worker, appended on its thread
	for i := range 2 {
		require.NoError(t, e.Execute(i, func(w *engine.Worker) {
			now := w.Now()
			w.TimerAt(now.Add(time.Second), func() { fired[i] = append(fired[i], "1s") })
			w.TimerAt(now.Add(time.Second+time.Millisecond), func() { fired[i] = append(fired[i], "1.001s") })
			w.TimerAt(now.Add(time.Hour), func() { fired[i] = append(fired[i], "1h") })
		}))
	}
	read := func(i int) (got []string) {
		require.NoError(t, e.Execute(i, func(*engine.Worker) { got = append(got, fired[i]...) }))
		return got
	}
	clock.Tick(t, e, time.Second-time.Millisecond)
	for i := range 2 {
		assert.Empty(t, read(i), "worker %d: nothing due", i)
	}
	clock.Tick(t, e, time.Millisecond)
	for i := range 2 {
		assert.Equal(t, []string{"1s"}, read(i), "worker %d: the timer due at the new time", i)
	}
	clock.Tick(t, e, 2*time.Hour) // many turns of the wheel in one move
	for i := range 2 {
		assert.Equal(t, []string{"1s", "1.001s", "1h"}, read(i), "worker %d", i)
	}
	require.NoError(t, e.Execute(0, func(w *engine.Worker) { assert.Zero(t, w.FireTimers(), "nothing left") }))
}

// recorder is a binding that accepts every stream and reports each frame
// its handler receives.
type recorder struct{ frames chan frame.FrameType }

func (r *recorder) Attach(*engine.Worker, *engine.BindingConfig) (engine.Handler, error) {
	return r, nil
}

func (r *recorder) NewStream(frame.FrameType, []byte) engine.MessageConsumer {
	return func(t frame.FrameType, _ []byte) { r.frames <- t }
}

func TestDetachAbortsAndResets(t *testing.T) {
	rec := &recorder{frames: make(chan frame.FrameType, 16)}
	cfg := &config.Config{Name: "test", Bindings: []*config.Binding{
		{Name: "app0", Type: "echo", Kind: "server"},
		{Name: "rec0", Type: "recorder", Kind: "server"},
	}}
	lookup := func(typ string) (engine.Binding, error) {
		if typ == "recorder" {
			return rec, nil
		}
		return binding.Factory(typ)
	}
	e, err := engine.New(cfg, engine.WithWorkers(2), engine.WithRingCapacity(1<<16), engine.WithPin(false),
		engine.WithLogger(quiet), engine.WithBindings(lookup))
	require.NoError(t, err)
	require.NoError(t, e.Start())
	defer func() { require.NoError(t, e.Stop(context.Background())) }()

	// The detached binding's own handlers see ABORT for the initial
	// direction and RESET for the reply, as if both peers had gone.
	r := newClient(e, 0, "rec0")
	r.begin(t, 1, "")
	assert.Equal(t, frame.FrameBegin, <-rec.frames)
	require.NoError(t, e.Detach("rec0"))
	got := []frame.FrameType{<-rec.frames, <-rec.frames}
	assert.ElementsMatch(t, []frame.FrameType{frame.FrameAbort, frame.FrameReset}, got)

	// Echo reacts to its synthesized ABORT by aborting its reply, so the
	// initiator learns the stream is gone.
	c := newClient(e, 0, "app0")
	c.begin(t, 1, "")
	c.expect(t, frame.FrameBegin)
	c.window(t, 1024)
	c.expect(t, frame.FrameWindow)
	require.NoError(t, e.Detach("app0"))
	assert.Equal(t, engine.ReplyID(c.initialID), c.expect(t, frame.FrameAbort).streamID)
	require.NoError(t, e.Execute(1, func(w *engine.Worker) {
		s, th := w.Streams()
		assert.Zero(t, s+th, "the detached binding's streams are forgotten")
	}))

	// A detached binding takes no new streams.
	c2 := newClient(e, 0, "app0")
	c2.begin(t, 1, "")
	c2.expect(t, frame.FrameReset)
}

func TestDispatchFromAnyGoroutine(t *testing.T) {
	e := start(t, 2)
	done := make(chan int, 2)
	for i := 0; i < 2; i++ {
		w := e.Worker(i)
		go w.Dispatch(func() { done <- w.Index() })
	}
	got := map[int]bool{<-done: true, <-done: true}
	assert.Equal(t, map[int]bool{0: true, 1: true}, got)
}

func TestMappedRings(t *testing.T) {
	dir := t.TempDir()
	e := start(t, 2, engine.WithDir(dir))
	for _, name := range []string{"data0", "data1"} {
		st, err := os.Stat(dir + "/" + name)
		require.NoError(t, err)
		assert.Greater(t, st.Size(), int64(1<<16))
	}
	c := newClient(e, 1, "app0")
	c.begin(t, 0, "mapped")
	assert.Equal(t, "mapped", c.expect(t, frame.FrameBegin).ext)
}

// TestWorkerRewindsRing checks that a worker whose ring runs empty moves
// it back to offset 0 (ring.Rewind), seen from outside through the ring
// file: with traffic now and then, frames keep to the start of the ring,
// in memory the caches hold, rather than cycling through all of it.
func TestWorkerRewindsRing(t *testing.T) {
	dir := t.TempDir()
	e := start(t, 1, engine.WithDir(dir))
	r, err := ring.Open(filepath.Join(dir, "data0"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.Close() })
	capacity := int64(r.Capacity())
	last := int64(0)
	for i := range 3 {
		newClient(e, 0, "app0").echo(t, 0, "rewind", "hello")
		// Parked is set just before the worker's last look at the ring, so
		// the condition is polled as a whole rather than read once.
		var head, tail int64
		if !assert.Eventually(t, func() bool {
			head, tail = r.ConsumerPosition(), r.ProducerPosition()
			return e.Worker(0).Parked() && head == tail && head%capacity == 0 && head > last
		}, 2*time.Second, time.Millisecond) {
			t.Fatalf("stream %d: the idle worker's ring is at head %d, tail %d (capacity %d); want both at the start of a lap after %d",
				i, head, tail, capacity, last)
		}
		last = head
	}
}

func TestBudgetsAcrossWorkers(t *testing.T) {
	e := start(t, 2)
	budgets := e.Budgets()
	var budgetID int64
	resumed := make(chan int, 1)
	require.NoError(t, e.Execute(0, func(w *engine.Worker) {
		budgetID = w.SupplyBudgetID()
		assert.Equal(t, int64(100), budgets.Credit(w, budgetID, 100))
	}))
	require.NoError(t, e.Execute(1, func(w *engine.Worker) {
		assert.Equal(t, int64(60), budgets.Claim(w, budgetID, 10, 60, nil))
		assert.Equal(t, int64(40), budgets.Claim(w, budgetID, 10, 60, func() { resumed <- w.Index() }))
		assert.Equal(t, int64(0), budgets.Claim(w, budgetID, 10, 60, nil), "less than the minimum is no claim")
	}))
	require.NoError(t, e.Execute(0, func(w *engine.Worker) { budgets.Credit(w, budgetID, 50) }))
	select {
	case i := <-resumed:
		assert.Equal(t, 1, i, "the resume runs on the debitor's worker")
	case <-time.After(5 * time.Second):
		t.Fatal("debitor was not resumed")
	}
	assert.Equal(t, int64(50), budgets.Remaining(budgetID))
}

func TestNewErrors(t *testing.T) {
	cfg := &config.Config{Name: "test", Bindings: []*config.Binding{{Name: "app0", Type: "nope", Kind: "server"}}}
	_, err := engine.New(cfg, engine.WithBindings(binding.Factory))
	assert.ErrorIs(t, err, binding.ErrUnknownType)
	_, err = engine.New(nil, engine.WithWorkers(engine.MaxWorkers+1))
	assert.Error(t, err)
}

func TestStreamMetrics(t *testing.T) {
	e := start(t, 2)
	c := newClient(e, 0, "app0")
	c.echo(t, 1, "", "hello")
	// A worker counts a frame it sends after handing it on, so the client
	// can read the echo's END before worker 1 has counted it: wait for
	// both workers' passes to end.
	c.barrier(t, 0)
	c.barrier(t, 1)

	got := map[string]int64{}
	for _, s := range e.Telemetry().Gather() {
		if b, _ := s.Labels.Get("binding"); b == "app0" {
			got[s.Name] = s.Value
		}
	}
	assert.Equal(t, int64(1), got[telemetry.StreamOpensReceived], "echo accepted one stream")
	assert.Equal(t, int64(1), got[telemetry.StreamOpensSent], "and opened its reply")
	assert.Equal(t, int64(5), got[telemetry.StreamDataReceived])
	assert.Equal(t, int64(5), got[telemetry.StreamDataSent])
	assert.Equal(t, int64(1), got[telemetry.StreamClosesReceived])
	assert.Equal(t, int64(1), got[telemetry.StreamClosesSent])
	assert.Equal(t, int64(0), got[telemetry.StreamActiveReceived])
	assert.Equal(t, int64(0), got[telemetry.StreamErrorsReceived])
}

// TestStreamActiveGauges closes streams in every way a direction can end
// and checks that the echo binding's active gauges come back to zero with
// its streams: a direction closed by RESET is forgotten by the engine, and
// whatever its sender sends after the RESET never arrives to be counted.
func TestStreamActiveGauges(t *testing.T) {
	gauges := func(e *engine.Engine) (sent, received, errorsSent, errorsReceived int64) {
		for _, s := range e.Telemetry().Gather() {
			if b, _ := s.Labels.Get("binding"); b != "app0" {
				continue
			}
			switch s.Name {
			case telemetry.StreamActiveSent:
				sent += s.Value
			case telemetry.StreamActiveReceived:
				received += s.Value
			case telemetry.StreamErrorsSent:
				errorsSent += s.Value
			case telemetry.StreamErrorsReceived:
				errorsReceived += s.Value
			}
		}
		return
	}
	for _, target := range []int{0, 1} {
		t.Run(fmt.Sprintf("reply reset, echo on worker %d", target), func(t *testing.T) {
			e := start(t, 2)
			c := newClient(e, 0, "app0")
			c.begin(t, target, "")
			c.expect(t, frame.FrameBegin)
			// The echo counts its reply active after sending its BEGIN.
			c.barrier(t, target)
			sent, received, _, _ := gauges(e)
			require.Equal(t, int64(1), sent, "the echo's reply is active")
			require.Equal(t, int64(1), received, "so is the initial stream it accepted")
			// The caller refuses the reply, as an mcp client that has its
			// answer does; the echo refuses the rest of the request, and
			// the END the caller sends anyway is dropped by the engine.
			c.frame(t, frame.FrameReset, engine.ReplyID(c.initialID))
			c.expect(t, frame.FrameReset)
			c.end(t)
			c.barrier(t, target)
			sent, received, errorsSent, errorsReceived := gauges(e)
			assert.Equal(t, int64(0), sent)
			assert.Equal(t, int64(0), received)
			assert.Equal(t, int64(1), errorsSent, "the echo's RESET")
			assert.Equal(t, int64(1), errorsReceived, "the caller's RESET")
		})
	}
	t.Run("abort", func(t *testing.T) {
		e := start(t, 2)
		c := newClient(e, 0, "app0")
		c.begin(t, 1, "")
		c.expect(t, frame.FrameBegin)
		c.frame(t, frame.FrameAbort, c.initialID)
		c.expect(t, frame.FrameAbort)
		c.barrier(t, 1)
		sent, received, _, _ := gauges(e)
		assert.Equal(t, int64(0), sent)
		assert.Equal(t, int64(0), received)
	})
	t.Run("many streams, half reset", func(t *testing.T) {
		e := start(t, 2)
		for i := range 20 {
			c := newClient(e, i%2, "app0")
			c.begin(t, (i/2)%2, "")
			c.expect(t, frame.FrameBegin)
			if i%2 == 0 {
				c.frame(t, frame.FrameReset, engine.ReplyID(c.initialID))
				c.expect(t, frame.FrameReset)
			} else {
				c.end(t)
				c.expect(t, frame.FrameEnd)
			}
		}
		c := newClient(e, 0, "app0")
		c.begin(t, 0, "")
		c.expect(t, frame.FrameBegin)
		c.barrier(t, 0)
		c.barrier(t, 1)
		sent, received, _, _ := gauges(e)
		assert.Equal(t, int64(1), sent, "only the last stream's reply is open")
		assert.Equal(t, int64(1), received)
	})
	t.Run("detach", func(t *testing.T) {
		e := start(t, 2)
		c := newClient(e, 0, "app0")
		c.begin(t, 0, "")
		c.expect(t, frame.FrameBegin)
		require.NoError(t, e.Detach("app0"))
		sent, received, _, _ := gauges(e)
		assert.Equal(t, int64(0), sent)
		assert.Equal(t, int64(0), received)
	})
}

// frame sends a frame of type t with no payload on stream id: an ABORT of
// the initial stream or a RESET of the reply.
func (c *client) frame(t *testing.T, typ frame.FrameType, id int64) {
	t.Helper()
	c.on(t, func(w *engine.Worker) {
		buf := w.WriteBuffer()
		var n int
		var err error
		switch typ {
		case frame.FrameAbort:
			var b frame.AbortBuilder
			n, err = b.Wrap(buf, 0, len(buf)).OriginID(c.originID).RoutedID(c.routedID).StreamID(id).
				Sequence(c.initial.Seq).Acknowledge(c.initial.Ack).Maximum(c.initial.Max).BuildLimit()
		case frame.FrameReset:
			var b frame.ResetBuilder
			n, err = b.Wrap(buf, 0, len(buf)).OriginID(c.originID).RoutedID(c.routedID).StreamID(id).
				Sequence(c.reply.Seq).Acknowledge(c.reply.Ack).Maximum(c.reply.Max).BuildLimit()
		default:
			t.Fatalf("frame: %v is not sent by this helper", typ)
		}
		require.NoError(t, err)
		require.NoError(t, w.Send(typ, buf[:n]))
	})
}

// barrier waits until worker i has finished the frames it was handling:
// the task runs after its current pass.
func (c *client) barrier(t *testing.T, i int) {
	t.Helper()
	require.NoError(t, c.e.Execute(i, func(*engine.Worker) {}))
}

// TestComponents configures a memory store, a test guard and a prometheus
// exporter, and uses them from two workers.
func TestComponents(t *testing.T) {
	src := `name: test
bindings:
  app0:
    type: echo
    kind: server
stores:
  cache0:
    type: memory
guards:
  guard0:
    type: test
    options:
      credentials: secret
      roles: [read]
telemetry:
  exporters:
    prom0:
      type: prometheus
      options:
        port: 0
`
	frags := append(binding.Fragments(), engine.ComponentFragments()...)
	schema, err := config.NewSchema(frags...)
	require.NoError(t, err)
	cfg, err := config.Load("test.yaml", []byte(src), schema)
	require.NoError(t, err)

	e, err := engine.New(cfg, engine.WithWorkers(2), engine.WithRingCapacity(1<<16), engine.WithPin(false),
		engine.WithLogger(quiet), engine.WithBindings(binding.Factory))
	require.NoError(t, err)
	require.NoError(t, e.Start())
	defer func() { require.NoError(t, e.Stop(context.Background())) }()

	stored := make(chan bool, 1)
	require.NoError(t, e.Execute(0, func(w *engine.Worker) {
		h, ok := w.Store("cache0")
		require.True(t, ok)
		h.PutIfAbsent("k", []byte("from-0"), time.Minute, func(_ []byte, ok bool) { stored <- ok })
	}))
	require.True(t, <-stored)
	value := make(chan string, 1)
	require.NoError(t, e.Execute(1, func(w *engine.Worker) {
		h, _ := w.Store("cache0")
		h.Get("k", func(v []byte, _ bool) {
			assert.Equal(t, 1, w.Index(), "completions run on the calling worker")
			value <- string(v)
		})
	}))
	assert.Equal(t, "from-0", <-value, "one store per name, shared by the workers")

	require.NoError(t, e.Execute(1, func(w *engine.Worker) {
		g, ok := w.Guard("guard0")
		require.True(t, ok)
		session := g.Reauthorize(0, 0, 0, "secret")
		assert.NotZero(t, session)
		assert.True(t, g.Verify(session, []string{"read"}))
		assert.False(t, g.Verify(session, []string{"write"}))
		assert.Zero(t, g.Reauthorize(0, 0, 0, "wrong"))
	}))
}

func TestBufferPool(t *testing.T) {
	e := start(t, 1, engine.WithBufferSlots(64))
	require.NoError(t, e.Execute(0, func(w *engine.Worker) {
		p := w.BufferPool()
		a, b := p.Acquire(1), p.Acquire(3)
		require.NotEqual(t, engine.NoSlot, a)
		require.NotEqual(t, a, b)
		copy(p.Buffer(a), "partial")
		assert.Equal(t, "partial", string(p.Buffer(a)[:7]))
		assert.Equal(t, 2, p.Acquired())
		p.Release(a)
		p.Release(b)
		assert.Equal(t, 0, p.Acquired())
		for i := 0; i < 64; i++ {
			require.NotEqual(t, engine.NoSlot, p.Acquire(int64(2*i+1)))
		}
		assert.Equal(t, engine.NoSlot, p.Acquire(999), "a full pool refuses")
	}))
}

// TestExternalBinding attaches a binding the configuration only names, as
// the engine-driven spec runner does.
func TestExternalBinding(t *testing.T) {
	rec := &recorder{frames: make(chan frame.FrameType, 4)}
	e := start(t, 2, engine.WithExternal("ext0", rec))
	id, ok := e.ResolveID("ext0")
	require.True(t, ok)
	appID, _ := e.ResolveID("app0")
	assert.NotEqual(t, appID, id)
	c := newClient(e, 0, "ext0")
	c.begin(t, 1, "")
	assert.Equal(t, frame.FrameBegin, <-rec.frames)

	_, err := engine.New(&config.Config{Name: "test", Bindings: []*config.Binding{{Name: "app0", Type: "echo", Kind: "server"}}},
		engine.WithExternal("app0", rec), engine.WithBindings(binding.Factory))
	assert.ErrorContains(t, err, "also declared")
}
