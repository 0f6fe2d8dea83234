package mcp_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/binding/internal/streams"
	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/frame"
	"github.com/sluicehq/sluice/internal/enginetest"
)

// answerApp is an application that takes answer streams: it records what
// comes on them, and with grant it grants credit and, once the answer is
// in, replies and ends, as an upstream that took the answer does.
type answerApp struct {
	w      *engine.Worker
	grant  bool
	frames []frame.FrameType
	ext    []byte
	data   []byte
}

func (a *answerApp) Attach(w *engine.Worker, _ *engine.BindingConfig) (engine.Handler, error) {
	a.w = w
	return a, nil
}

func (a *answerApp) NewStream(_ frame.FrameType, buf []byte) engine.MessageConsumer {
	s := &answerStream{a: a}
	var b frame.Begin
	if !streams.Accept(&s.Stream, a.w, &b, buf) {
		return nil
	}
	return s.onFrame
}

type answerStream struct {
	engine.Stream
	a *answerApp
}

func (s *answerStream) onFrame(t frame.FrameType, buf []byte) {
	a := s.a
	a.frames = append(a.frames, t)
	switch t {
	case frame.FrameBegin:
		b, err := s.OnBegin(buf)
		if err != nil {
			return
		}
		a.ext = append(a.ext[:0], b.Extension()...)
		if a.grant {
			s.In.Grant(8192)
			_ = s.Window()
		}
	case frame.FrameData:
		if d, err := s.OnData(buf); err == nil {
			a.data = append(a.data, d.Payload()...)
		}
	case frame.FrameEnd:
		_, _ = s.OnEnd(buf)
		_ = s.Begin(nil)
		_ = s.End(nil)
	case frame.FrameAbort:
		_, _ = s.OnAbort(buf)
	}
}

// TestAnswers: an answer goes to its application as BEGIN
// clientResponse{sessionId, id, error, contentLength}, the error object as
// DATA once credit allows, and END; it is over once the application
// replies. One its application never takes (no credit, no reply) is
// aborted after AnswerTimeout rather than held for ever.
func TestAnswers(t *testing.T) {
	for _, grant := range []bool{true, false} {
		cfg, err := enginetest.Load("answers.yaml", "name: test\nbindings: {}\n", "driver", "app")
		require.NoError(t, err)
		clock := enginetest.NewClock()
		app := &answerApp{grant: grant}
		e := enginetest.Run(t, enginetest.New(t, cfg, engine.WithWorkers(1), engine.WithClock(clock.Now),
			engine.WithExternal("driver", enginetest.Refuse{}), engine.WithExternal("app", app)))
		origin, _ := e.ResolveID("driver")
		exit, _ := e.ResolveID("app")
		var answers mcp.Answers
		var typeID int32
		opened := func() (n int) {
			require.NoError(t, e.Execute(0, func(*engine.Worker) { n = answers.Opened() }))
			return n
		}
		require.NoError(t, e.Execute(0, func(w *engine.Worker) {
			typeID = w.Labels().Supply("mcp")
			answers.Init(w, origin, typeID, "driver")
			require.True(t, answers.Error(exit, []byte("s1"), []byte("7"), -32603, "Client session closed", 0, 0))
		}))
		enginetest.Settle(t, e)
		enginetest.Settle(t, e)
		var got [3]any
		require.NoError(t, e.Execute(0, func(*engine.Worker) {
			var ex mcp.McpBeginEx
			require.True(t, ex.TryWrap(app.ext, 0, len(app.ext)))
			v := ex.ClientResponse()
			got = [3]any{string(v.SessionID()), string(v.ID()), v.Error()}
			assert.EqualValues(t, len(`{"code":-32603,"message":"Client session closed"}`), v.ContentLength())
		}))
		assert.Equal(t, [3]any{"s1", "7", uint8(1)}, got)
		if grant {
			enginetest.Settle(t, e)
			require.NoError(t, e.Execute(0, func(*engine.Worker) {
				assert.Equal(t, `{"code":-32603,"message":"Client session closed"}`, string(app.data))
				assert.Equal(t, []frame.FrameType{frame.FrameBegin, frame.FrameData, frame.FrameEnd}, app.frames)
			}))
			assert.Zero(t, opened(), "an answer its application took is over")
			continue
		}
		assert.Equal(t, 1, opened(), "the answer waits for credit")
		clock.Tick(t, e, mcp.AnswerTimeout-1)
		assert.Equal(t, 1, opened(), "the answer waits until AnswerTimeout")
		clock.Tick(t, e, 1)
		enginetest.Settle(t, e)
		assert.Zero(t, opened(), "an answer not taken in time is given up")
		require.NoError(t, e.Execute(0, func(*engine.Worker) {
			// The answer aborted, and its reply, never begun, reset.
			assert.Equal(t, []frame.FrameType{frame.FrameBegin, frame.FrameAbort, frame.FrameReset}, app.frames)
		}))
	}
}
