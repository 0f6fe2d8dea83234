package binding_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/binding"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/frame"
	"github.com/sluicehq/sluice/internal/enginetest"
)

// fragmenter answers each stream with answer, sent with SendFragments in
// frames of at most 4 bytes as the credit comes, then END.
type fragmenter struct {
	w      *engine.Worker
	answer []byte
}

type fragmentStream struct {
	engine.Stream
	f    *fragmenter
	sent int
}

func (f *fragmenter) Attach(w *engine.Worker, _ *engine.BindingConfig) (engine.Handler, error) {
	f.w = w
	return f, nil
}

func (f *fragmenter) NewStream(_ frame.FrameType, buf []byte) engine.MessageConsumer {
	var b frame.Begin
	if !b.TryWrap(buf, 0, len(buf)) {
		return nil
	}
	s := &fragmentStream{f: f}
	s.Accept(f.w, b.OriginID(), b.RoutedID(), b.StreamID())
	return s.onFrame
}

func (s *fragmentStream) onFrame(t frame.FrameType, buf []byte) {
	switch t {
	case frame.FrameBegin:
		if _, err := s.OnBegin(buf); err == nil && s.Begin(nil) == nil {
			s.In.Grant(1024)
			_ = s.Window()
		}
	case frame.FrameData:
		_, _ = s.OnData(buf)
	case frame.FrameEnd:
		_, _ = s.OnEnd(buf)
	case frame.FrameWindow:
		if _, err := s.OnWindow(buf); err != nil || s.sent == len(s.f.answer) {
			return
		}
		n, err := binding.SendFragments(&s.Stream, s.f.answer[s.sent:], s.sent == 0, true, 4)
		s.sent += n
		if err == nil && s.sent == len(s.f.answer) {
			err = s.End(nil)
		}
		if err != nil {
			_ = s.Abort(nil)
		}
	}
}

// TestSendFragments: an answer larger than both the frame size and the
// credit goes whole, in order, over several windows.
func TestSendFragments(t *testing.T) {
	cfg, err := enginetest.Load("fragments.yaml", "name: test\nbindings: {}\n", "driver", "app")
	require.NoError(t, err)
	answer := []byte("the answer, in more frames than one window admits")
	e := enginetest.Run(t, enginetest.New(t, cfg, engine.WithWorkers(1),
		engine.WithExternal("driver", enginetest.Refuse{}), engine.WithExternal("app", &fragmenter{answer: answer})))
	origin, _ := e.ResolveID("driver")
	target, _ := e.ResolveID("app")
	c := enginetest.NewCaller(e.Worker(0), origin, target, nil, []byte("ask"), 10)
	require.True(t, c.Call(t, enginetest.NewTimer(), 1))
	assert.Equal(t, string(answer), string(c.Reply()))
}

// TestViolationBreach: a malformed frame is neither; a frame out of order
// or beyond the window is both; one after its direction closed is a
// Violation but not a Breach.
func TestViolationBreach(t *testing.T) {
	tests := []struct {
		name              string
		err               error
		violation, breach bool
	}{
		{name: "taken", err: nil},
		{name: "malformed", err: engine.ErrMalformedFrame},
		{name: "closed", err: engine.ErrStreamClosed, violation: true},
		{name: "state", err: engine.ErrStreamState, violation: true, breach: true},
		{name: "overrun", err: engine.ErrWindowOverrun, violation: true, breach: true},
		{name: "sequence", err: engine.ErrSequence, violation: true, breach: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.violation, binding.Violation(tt.err))
			assert.Equal(t, tt.breach, binding.Breach(tt.err))
		})
	}
}
