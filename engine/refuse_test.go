package engine_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/binding"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/config"
	"github.com/sluicehq/sluice/engine/frame"
)

// refuser accepts every stream and refuses it with a RESET of the initial
// direction as soon as its BEGIN arrives. With answer set it first begins
// the reply (as a server answering 413 does), and ends the reply after the
// RESET.
type refuser struct {
	answer bool
	w      []*engine.Worker
}

func (r *refuser) Attach(w *engine.Worker, _ *engine.BindingConfig) (engine.Handler, error) {
	r.w[w.Index()] = w
	return r, nil
}

func (r *refuser) NewStream(_ frame.FrameType, begin []byte) engine.MessageConsumer {
	return func(t frame.FrameType, buf []byte) {
		if t != frame.FrameBegin {
			return
		}
		var h frame.Frame
		if !h.TryWrap(buf, 0, len(buf)) {
			panic("malformed BEGIN")
		}
		w := r.w[engine.ServerIndex(h.StreamID())]
		origin, routed, id := h.OriginID(), h.RoutedID(), h.StreamID()
		out := w.WriteBuffer()
		if r.answer {
			var b frame.BeginBuilder
			n, err := b.Wrap(out, 0, len(out)).OriginID(origin).RoutedID(routed).StreamID(engine.ReplyID(id)).
				Sequence(0).Acknowledge(0).Maximum(0).Affinity(0).BuildLimit()
			must(err, w.Send(frame.FrameBegin, out[:n]))
		}
		var rb frame.ResetBuilder
		n, err := rb.Wrap(out, 0, len(out)).OriginID(origin).RoutedID(routed).StreamID(id).
			Sequence(0).Acknowledge(0).Maximum(0).BuildLimit()
		must(err, w.Send(frame.FrameReset, out[:n]))
		if r.answer {
			var eb frame.EndBuilder
			n, err := eb.Wrap(out, 0, len(out)).OriginID(origin).RoutedID(routed).StreamID(engine.ReplyID(id)).
				Sequence(0).Acknowledge(0).Maximum(0).BuildLimit()
			must(err, w.Send(frame.FrameEnd, out[:n]))
		}
	}
}

func must(errs ...error) {
	for _, err := range errs {
		if err != nil {
			panic(err)
		}
	}
}

// openStreams returns the stream and throttle registrations of every
// worker, read on each worker's thread.
func openStreams(t *testing.T, e *engine.Engine) (streams, throttles int) {
	t.Helper()
	for i := range e.Workers() {
		require.NoError(t, e.Execute(i, func(w *engine.Worker) {
			s, th := w.Streams()
			streams += s
			throttles += th
		}))
	}
	return streams, throttles
}

func startRefuser(t *testing.T, answer bool) *engine.Engine {
	t.Helper()
	ref := &refuser{answer: answer, w: make([]*engine.Worker, 2)}
	cfg := &config.Config{Name: "test", Bindings: []*config.Binding{{Name: "ref0", Type: "refuser", Kind: "server"}}}
	lookup := func(typ string) (engine.Binding, error) {
		if typ == "refuser" {
			return ref, nil
		}
		return binding.Factory(typ)
	}
	return startWith(t, cfg, lookup)
}

// TestRefusedStreamIsForgotten: a receiver that RESETs a stream without
// ever beginning its reply gives the reply up, and neither side keeps a
// registration for it: not the receiver's throttle entry for the reply,
// nor the initiator's stream entry for it, which would otherwise stay for
// the worker's lifetime.
func TestRefusedStreamIsForgotten(t *testing.T) {
	e := startRefuser(t, false)
	for _, target := range []int{0, 1} { // same worker, then across workers
		for range 50 {
			c := newClient(e, 0, "ref0")
			c.begin(t, target, "")
			assert.Equal(t, c.initialID, c.expect(t, frame.FrameReset).streamID)
		}
	}
	require.Eventually(t, func() bool {
		s, th := openStreams(t, e)
		return s == 0 && th == 0
	}, 2*time.Second, 5*time.Millisecond, "refused streams left registrations behind")
}

// TestAnsweredRefusalKeepsItsReply: a receiver that begins its reply and
// then RESETs the initial stream still gets its reply through, and the
// stream is forgotten once the reply ends.
func TestAnsweredRefusalKeepsItsReply(t *testing.T) {
	e := startRefuser(t, true)
	for _, target := range []int{0, 1} {
		c := newClient(e, 0, "ref0")
		c.begin(t, target, "")
		// The reply's BEGIN and END travel on the initiator's stream
		// entry and the RESET on its throttle entry: one ring, in order.
		c.expect(t, frame.FrameBegin)
		c.expect(t, frame.FrameReset)
		c.expect(t, frame.FrameEnd)
	}
	require.Eventually(t, func() bool {
		s, th := openStreams(t, e)
		return s == 0 && th == 0
	}, 2*time.Second, 5*time.Millisecond)
}

// TestUnroutableStreamIsForgotten: the engine's own refusal of a BEGIN for
// no binding leaves the initiator nothing registered either.
func TestUnroutableStreamIsForgotten(t *testing.T) {
	e := start(t, 2)
	for _, target := range []int{0, 1} {
		c := newClient(e, 0, "nowhere")
		c.begin(t, target, "")
		c.expect(t, frame.FrameReset)
	}
	require.Eventually(t, func() bool {
		s, th := openStreams(t, e)
		return s == 0 && th == 0
	}, 2*time.Second, 5*time.Millisecond)
}
