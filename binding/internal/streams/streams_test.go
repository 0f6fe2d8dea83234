package streams_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/binding/internal/streams"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/frame"
	"github.com/sluicehq/sluice/internal/enginetest"
)

// TestReceived runs both receive policies over each kind of receive
// error: they differ only on a frame that comes after its direction
// closed, which Received fails on and ReceivedOpen drops.
func TestReceived(t *testing.T) {
	tests := []struct {
		name         string
		err          error
		want         bool
		fail, failOp bool // whether Received and ReceivedOpen call fail
	}{
		{"taken", nil, true, false, false},
		{"malformed is dropped", fmt.Errorf("data: %w", engine.ErrMalformedFrame), false, false, false},
		{"out of order fails", engine.ErrStreamState, false, true, true},
		{"after close", engine.ErrStreamClosed, false, true, false},
	}
	policies := []struct {
		name string
		fn   func(error, func()) bool
	}{{"Received", streams.Received}, {"ReceivedOpen", streams.ReceivedOpen}}
	for _, tt := range tests {
		for i, p := range policies {
			t.Run(p.name+"/"+tt.name, func(t *testing.T) {
				failed := false
				assert.Equal(t, tt.want, p.fn(tt.err, func() { failed = true }))
				assert.Equal(t, []bool{tt.fail, tt.failOp}[i], failed)
			})
		}
	}
}

// TestAcceptRefuses offers Accept what is not a BEGIN: it refuses it and
// leaves the stream unaccepted.
func TestAcceptRefuses(t *testing.T) {
	var s engine.Stream
	var b frame.Begin
	assert.False(t, streams.Accept(&s, nil, &b, []byte{1, 2, 3}))
	assert.Zero(t, s.OutID())
	assert.Nil(t, s.Worker())
}

func TestReceivedAllocs(t *testing.T) {
	r := &receiver{}
	allocs := testing.AllocsPerRun(100, func() {
		if streams.Received(nil, r.fail) {
			r.taken++
		}
	})
	assert.Zero(t, allocs)
	assert.Positive(t, r.taken)
	assert.Zero(t, r.failed)
}

type receiver struct{ taken, failed int }

func (r *receiver) fail() { r.failed++ }

// closer accepts each stream and, at its BEGIN, closes the reply with
// EndReply or AbortReply, having begun it or not. Without a reply it
// resets the request first, as the kinds do when they refuse a stream,
// so that the caller sees the stream over: the close then must send
// nothing.
type closer struct {
	w     *engine.Worker
	begin bool
	abort bool

	err   error
	state engine.StreamState
}

type closerStream struct {
	engine.Stream
	c *closer
}

func (c *closer) Attach(w *engine.Worker, _ *engine.BindingConfig) (engine.Handler, error) {
	c.w = w
	return c, nil
}

func (c *closer) NewStream(_ frame.FrameType, buf []byte) engine.MessageConsumer {
	var b frame.Begin
	s := &closerStream{c: c}
	if !streams.Accept(&s.Stream, c.w, &b, buf) {
		return nil
	}
	return s.onFrame
}

func (s *closerStream) onFrame(t frame.FrameType, buf []byte) {
	c := s.c
	if t != frame.FrameBegin {
		return
	}
	if _, err := s.OnBegin(buf); err != nil {
		return
	}
	if c.begin && s.Begin(nil) != nil {
		c.err = s.Abort(nil)
		return
	}
	if !c.begin {
		_ = s.Reset(nil)
	}
	if c.abort {
		c.err = streams.AbortReply(&s.Stream)
	} else {
		c.err = streams.EndReply(&s.Stream)
	}
	c.state = s.State()
}

func TestCloseReply(t *testing.T) {
	tests := []struct {
		name         string
		begin, abort bool
		wantOK       bool // the caller saw the reply END
	}{
		{"end a begun reply", true, false, true},
		{"abort a begun reply", true, true, false},
		{"end sends nothing for a reply not begun", false, false, false},
		{"abort sends nothing for a reply not begun", false, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := enginetest.Load("streams.yaml", "name: test\nbindings: {}\n", "driver", "app")
			require.NoError(t, err)
			c := &closer{begin: tt.begin, abort: tt.abort}
			e := enginetest.Run(t, enginetest.New(t, cfg, engine.WithWorkers(1),
				engine.WithExternal("driver", enginetest.Refuse{}), engine.WithExternal("app", c)))
			origin, _ := e.ResolveID("driver")
			target, _ := e.ResolveID("app")
			caller := enginetest.NewCaller(e.Worker(0), origin, target, nil, []byte("ask"), 10)
			assert.Equal(t, tt.wantOK, caller.Call(t, enginetest.NewTimer(), 1))
			require.NoError(t, c.err)
			assert.True(t, c.state.Has(engine.ReplyClosed), "the reply is closed: %v", c.state)
			assert.Equal(t, tt.begin, c.state.Has(engine.ReplyOpening), "the reply began only when the binding began it: %v", c.state)
		})
	}
}
