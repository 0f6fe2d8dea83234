package echo

import (
	"encoding/json"
	"errors"

	"github.com/sluicehq/sluice/binding"
	"github.com/sluicehq/sluice/binding/internal/streams"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/frame"
)

func init() {
	binding.Register(binding.Info{
		Type:    "echo",
		Kinds:   []string{"server"},
		Options: json.RawMessage(`{"type": "object", "additionalProperties": false}`),
		New:     func() engine.Binding { return Binding{} },
	})
}

// Binding is the echo binding type.
type Binding struct{}

// Attach returns the echo handler for one worker.
func (Binding) Attach(w *engine.Worker, cfg *engine.BindingConfig) (engine.Handler, error) {
	return &Handler{w: w, cfg: cfg}, nil
}

// Handler is echo attached to one worker.
type Handler struct {
	w     *engine.Worker
	cfg   *engine.BindingConfig
	begin frame.Begin
}

// NewStream accepts every stream: echo has no routes.
func (h *Handler) NewStream(t frame.FrameType, buf []byte) engine.MessageConsumer {
	s := new(stream)
	if !streams.Accept(&s.Stream, h.w, &h.begin, buf) {
		return nil
	}
	return s.onMessage
}

// stream echoes one stream. The initial direction is received (In) and
// the reply direction sent (Out); each DATA reserves on the reply exactly
// what it reserved on the initial, so the credit echo grants upstream
// mirrors the credit it was granted downstream. Every frame echo sends
// carries the trace id and authorization of the frame it answers.
type stream struct {
	engine.Stream
}

func (s *stream) onMessage(t frame.FrameType, buf []byte) {
	switch t {
	case frame.FrameBegin:
		if b, err := s.OnBegin(buf); err == nil {
			s.mirror(b.TraceID(), b.Authorization())
			ext := b.Extension()
			if s.BeginWith(b.Affinity(), func(fb *frame.BeginBuilder) { fb.Extension(ext) }) != nil {
				_ = s.Reset(nil)
			}
		}
	case frame.FrameData:
		d, err := s.OnData(buf)
		switch {
		case err == nil:
			s.onData(&d)
		case !errors.Is(err, engine.ErrMalformedFrame):
			// The sender broke flow control: refuse its direction and
			// abort the echo of it.
			s.mirror(d.TraceID(), d.Authorization())
			_ = s.Reset(nil)
			_ = s.Abort(nil)
		}
	case frame.FrameFlush:
		f, err := s.OnFlush(buf)
		switch {
		case err == nil:
			s.mirror(f.TraceID(), f.Authorization())
			ext := f.Extension()
			_ = s.FlushWith(f.Reserved(), func(fb *frame.FlushBuilder) { fb.Extension(ext) })
		case !errors.Is(err, engine.ErrMalformedFrame):
			_ = s.Reset(nil)
		}
	case frame.FrameEnd:
		if e, err := s.OnEnd(buf); !errors.Is(err, engine.ErrMalformedFrame) {
			s.mirror(e.TraceID(), e.Authorization())
			_ = s.End(e.Extension())
		}
	case frame.FrameAbort:
		if a, err := s.OnAbort(buf); !errors.Is(err, engine.ErrMalformedFrame) {
			s.mirror(a.TraceID(), a.Authorization())
			_ = s.Abort(a.Extension())
		}
	case frame.FrameWindow:
		if w, err := s.OnWindow(buf); err == nil {
			s.onReplyWindow(&w)
		} else if !errors.Is(err, engine.ErrMalformedFrame) {
			_ = s.Reset(nil)
		}
	case frame.FrameReset:
		if r, err := s.OnReset(buf); err == nil {
			s.mirror(r.TraceID(), r.Authorization())
		}
		_ = s.Reset(nil)
	case frame.FrameChallenge:
		// Echo makes no decisions a challenge could change.
	}
}

// mirror has the frames echo sends next, each way, carry the trace id and
// authorization of the frame they answer.
func (s *stream) mirror(traceID, authorization int64) {
	s.Out.Trace, s.Out.Auth = traceID, authorization
	s.In.Trace, s.In.Auth = traceID, authorization
}

func (s *stream) onData(d *frame.Data) {
	s.mirror(d.TraceID(), d.Authorization())
	payload, ext := d.Payload(), d.Extension()
	err := s.DataWith(frame.Flags(d.Flags()), d.Reserved(), func(b *frame.DataBuilder) {
		if payload == nil {
			b.PayloadNull()
		} else {
			b.Payload(payload)
		}
		b.Extension(ext)
	})
	if err != nil {
		_ = s.Reset(nil)
	}
}

func (s *stream) onReplyWindow(w *frame.Window) {
	if s.In.Closed() {
		return
	}
	// Offer upstream what downstream offers, less what is still in flight.
	inFlight := s.Out.Seq - s.Out.Ack
	s.In.Ack = s.In.Seq - inFlight
	s.In.Max = s.Out.Max
	s.In.Pad = s.Out.Pad
	s.In.Min, s.In.Cap = w.Minimum(), w.Capabilities()
	s.mirror(w.TraceID(), w.Authorization())
	_ = s.Window()
}

var (
	_ engine.Binding = Binding{}
	_ engine.Handler = (*Handler)(nil)
)
