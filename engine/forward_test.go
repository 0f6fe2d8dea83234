package engine_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/binding"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/config"
	"github.com/sluicehq/sluice/engine/frame"
	"github.com/sluicehq/sluice/engine/telemetry"
)

// forwarder hands every stream on to the binding named exit
// (engine.Worker.Forward), or keeps it, answering with RESET, when the
// hand-over is refused. It counts the frames it sees itself.
type forwarder struct {
	exit   string
	w      []*engine.Worker
	frames int
	kept   int
}

func (f *forwarder) Attach(w *engine.Worker, _ *engine.BindingConfig) (engine.Handler, error) {
	f.w[w.Index()] = w
	return f, nil
}

func (f *forwarder) NewStream(_ frame.FrameType, begin []byte) engine.MessageConsumer {
	var h frame.Frame
	if !h.TryWrap(begin, 0, len(begin)) {
		return nil
	}
	w := f.w[engine.ServerIndex(h.StreamID())]
	if exit, ok := w.ResolveID(f.exit); ok {
		if fn := w.Forward(exit, begin); fn != nil {
			return fn
		}
	}
	f.kept++
	return func(frame.FrameType, []byte) { f.frames++ }
}

// fwdName names the i-th forwarder, and its binding type.
func fwdName(i int) string { return fmt.Sprintf("fwd%d", i) }

// startForwarders runs fwd0 → fwd1 → … → fwd<n-1> → exit, each a forwarder
// to the next, beside an echo binding app0, on two workers.
func startForwarders(t *testing.T, n int, exit string) (*engine.Engine, []*forwarder) {
	t.Helper()
	cfg := &config.Config{Name: "test", Bindings: []*config.Binding{{Name: "app0", Type: "echo", Kind: "server"}}}
	fs := make([]*forwarder, n)
	for i := range fs {
		next := exit
		if i+1 < n {
			next = fwdName(i + 1)
		}
		fs[i] = &forwarder{exit: next, w: make([]*engine.Worker, 2)}
		cfg.Bindings = append(cfg.Bindings, &config.Binding{Name: fwdName(i), Type: fwdName(i), Kind: "proxy"})
	}
	lookup := func(typ string) (engine.Binding, error) {
		for i, f := range fs {
			if typ == fwdName(i) {
				return f, nil
			}
		}
		return binding.Factory(typ)
	}
	return startWith(t, cfg, lookup), fs
}

// bindingMetric reads one of a binding's stream metrics, summed over the
// workers.
func bindingMetric(e *engine.Engine, name, metric string) int64 {
	for _, s := range e.Telemetry().Gather() {
		if b, _ := s.Labels.Get("binding"); b == name && s.Name == metric {
			return s.Value
		}
	}
	return 0
}

// TestForwardHandsStreamToExit: a stream routed to a binding that forwards
// it is served by the exit as if routed there, through a chain of
// forwarders too; the stream is the exit's (its metrics), the forwarders
// see none of its frames, and it leaves no registration behind.
func TestForwardHandsStreamToExit(t *testing.T) {
	e, fs := startForwarders(t, 3, "app0")
	for _, target := range []int{0, 1} {
		newClient(e, 0, "fwd0").echo(t, target, "ext", "hello")
	}
	for i, f := range fs {
		assert.Zero(t, f.kept, "fwd%d kept a stream", i)
		assert.Zero(t, f.frames, "fwd%d saw a frame", i)
	}
	assert.Equal(t, int64(2), bindingMetric(e, "app0", telemetry.StreamOpensReceived), "the exit accepted both streams")
	assert.Equal(t, int64(10), bindingMetric(e, "app0", telemetry.StreamDataReceived))
	assert.Equal(t, int64(2), bindingMetric(e, "app0", telemetry.StreamClosesReceived))
	for i := range fs {
		assert.Zero(t, bindingMetric(e, fwdName(i), telemetry.StreamOpensReceived), "fwd%d is charged with a stream", i)
	}
	require.Eventually(t, func() bool {
		s, th := openStreams(t, e)
		return s == 0 && th == 0
	}, 2*time.Second, 5*time.Millisecond, "forwarded streams left registrations behind")
}

// TestForwardRefused: a hand-over to a binding not attached, or one more
// than the chain may make, is refused, and the forwarding binding keeps
// the stream with the BEGIN as it came.
func TestForwardRefused(t *testing.T) {
	t.Run("unknown exit", func(t *testing.T) {
		e, fs := startForwarders(t, 1, "nowhere")
		c := newClient(e, 0, "fwd0")
		c.begin(t, 1, "")
		c.end(t)
		require.Eventually(t, func() bool {
			var kept, frames int
			require.NoError(t, e.Execute(1, func(*engine.Worker) { kept, frames = fs[0].kept, fs[0].frames }))
			return kept == 1 && frames == 2
		}, 2*time.Second, 5*time.Millisecond, "fwd0 keeps the stream and gets its BEGIN and END")
		assert.Equal(t, int64(1), bindingMetric(e, "fwd0", telemetry.StreamOpensReceived))
	})
	t.Run("a cycle", func(t *testing.T) {
		// fwd0 → fwd1 → fwd0 → …: after eight hand-overs, the last to
		// fwd0, fwd0 may not hand on again and keeps the stream.
		e, fs := startForwarders(t, 2, "fwd0")
		c := newClient(e, 0, "fwd0")
		c.begin(t, 1, "")
		require.Eventually(t, func() bool {
			var kept int
			require.NoError(t, e.Execute(1, func(*engine.Worker) { kept = fs[0].kept + fs[1].kept }))
			return kept == 1
		}, 2*time.Second, 5*time.Millisecond)
		var kept0, kept1 int
		require.NoError(t, e.Execute(1, func(*engine.Worker) { kept0, kept1 = fs[0].kept, fs[1].kept }))
		assert.Equal(t, 1, kept0, "after 8 hand-overs fwd0 may not hand on")
		assert.Zero(t, kept1)
		assert.Equal(t, int64(1), bindingMetric(e, "fwd0", telemetry.StreamOpensReceived), "the stream is fwd0's")
		assert.Zero(t, bindingMetric(e, "fwd1", telemetry.StreamOpensReceived))
	})
}
