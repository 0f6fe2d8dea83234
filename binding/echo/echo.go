package echo

import (
	"encoding/json"

	"github.com/sluicehq/sluice/binding"
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

// Handler is echo attached to one worker. Its builders and readers are
// reused for every frame of every stream it serves.
type Handler struct {
	w   *engine.Worker
	cfg *engine.BindingConfig

	begin   frame.Begin
	data    frame.Data
	end     frame.End
	abort   frame.Abort
	flush   frame.Flush
	window  frame.Window
	beginB  frame.BeginBuilder
	dataB   frame.DataBuilder
	endB    frame.EndBuilder
	abortB  frame.AbortBuilder
	flushB  frame.FlushBuilder
	windowB frame.WindowBuilder
	resetB  frame.ResetBuilder
}

// NewStream accepts every stream: echo has no routes.
func (h *Handler) NewStream(t frame.FrameType, buf []byte) engine.MessageConsumer {
	if !h.begin.TryWrap(buf, 0, len(buf)) {
		return nil
	}
	s := &stream{
		h:         h,
		originID:  h.begin.OriginID(),
		routedID:  h.begin.RoutedID(),
		initialID: h.begin.StreamID(),
		replyID:   engine.ReplyID(h.begin.StreamID()),
	}
	return s.onMessage
}

// stream echoes one stream. The initial direction is received and the
// reply direction sent; each DATA reserves on the reply exactly what it
// reserved on the initial, so the credit echo grants upstream mirrors the
// credit it was granted downstream.
type stream struct {
	h         *Handler
	originID  int64
	routedID  int64
	initialID int64
	replyID   int64
	initial   engine.Flow // received
	reply     engine.Flow // sent
	state     uint8
}

const (
	initialClosed uint8 = 1 << iota
	replyClosed
)

func (s *stream) onMessage(t frame.FrameType, buf []byte) {
	h := s.h
	switch t {
	case frame.FrameBegin:
		if h.begin.TryWrap(buf, 0, len(buf)) {
			s.initial.Seq, s.initial.Ack = h.begin.Sequence(), h.begin.Acknowledge()
			s.doBegin(h.begin.TraceID(), h.begin.Authorization(), h.begin.Affinity(), h.begin.Extension())
		}
	case frame.FrameData:
		if h.data.TryWrap(buf, 0, len(buf)) {
			s.onData(&h.data)
		}
	case frame.FrameFlush:
		if h.flush.TryWrap(buf, 0, len(buf)) {
			s.doFlush(&h.flush)
		}
	case frame.FrameEnd:
		if h.end.TryWrap(buf, 0, len(buf)) {
			s.state |= initialClosed
			s.doEnd(h.end.TraceID(), h.end.Extension())
		}
	case frame.FrameAbort:
		if h.abort.TryWrap(buf, 0, len(buf)) {
			s.state |= initialClosed
			s.doAbort(h.abort.TraceID(), h.abort.Extension())
		}
	case frame.FrameWindow:
		if h.window.TryWrap(buf, 0, len(buf)) {
			s.onReplyWindow(&h.window)
		}
	case frame.FrameReset:
		s.state |= replyClosed
		if s.state&initialClosed == 0 {
			s.state |= initialClosed
			s.doReset()
		}
	case frame.FrameChallenge:
		// Echo makes no decisions a challenge could change.
	}
}

func (s *stream) onData(d *frame.Data) {
	if err := s.initial.OnData(d); err != nil {
		s.doReset()
		s.doAbort(d.TraceID(), nil)
		return
	}
	h := s.h
	buf := h.w.WriteBuffer()
	b := h.dataB.Wrap(buf, 0, len(buf)).
		OriginID(s.originID).RoutedID(s.routedID).StreamID(s.replyID).
		Sequence(s.reply.Seq).Acknowledge(s.reply.Ack).Maximum(s.reply.Max).
		TraceID(d.TraceID()).Authorization(d.Authorization()).
		Flags(d.Flags()).BudgetID(s.reply.Budget).Reserved(d.Reserved())
	if d.HasPayload() {
		b.Payload(d.Payload())
	} else {
		b.PayloadNull()
	}
	n, err := b.Extension(d.Extension()).BuildLimit()
	if err == nil {
		err = h.w.Send(frame.FrameData, buf[:n])
	}
	if err != nil {
		s.doReset()
		return
	}
	s.reply.Seq += int64(d.Reserved())
}

func (s *stream) onReplyWindow(w *frame.Window) {
	if err := s.reply.OnWindow(w); err != nil {
		s.doReset()
		return
	}
	if s.state&initialClosed != 0 {
		return
	}
	// Offer upstream what downstream offers, less what is still in flight.
	inFlight := s.reply.Seq - s.reply.Ack
	s.initial.Ack = s.initial.Seq - inFlight
	s.initial.Max = s.reply.Max
	s.initial.Pad = s.reply.Pad
	h := s.h
	buf := h.w.WriteBuffer()
	n, err := h.windowB.Wrap(buf, 0, len(buf)).
		OriginID(s.originID).RoutedID(s.routedID).StreamID(s.initialID).
		Sequence(s.initial.Seq).Acknowledge(s.initial.Ack).Maximum(s.initial.Max).
		TraceID(w.TraceID()).Authorization(w.Authorization()).
		BudgetID(0).Padding(s.initial.Pad).Minimum(w.Minimum()).Capabilities(w.Capabilities()).
		BuildLimit()
	if err == nil {
		_ = h.w.Send(frame.FrameWindow, buf[:n])
	}
}

func (s *stream) doBegin(traceID, authorization, affinity int64, ext []byte) {
	h := s.h
	buf := h.w.WriteBuffer()
	n, err := h.beginB.Wrap(buf, 0, len(buf)).
		OriginID(s.originID).RoutedID(s.routedID).StreamID(s.replyID).
		Sequence(s.reply.Seq).Acknowledge(s.reply.Ack).Maximum(s.reply.Max).
		TraceID(traceID).Authorization(authorization).
		Affinity(affinity).Extension(ext).
		BuildLimit()
	if err == nil {
		err = h.w.Send(frame.FrameBegin, buf[:n])
	}
	if err != nil {
		s.doReset()
	}
}

func (s *stream) doFlush(f *frame.Flush) {
	if err := s.initial.OnFrame(f.Sequence()); err != nil {
		s.doReset()
		return
	}
	h := s.h
	buf := h.w.WriteBuffer()
	n, err := h.flushB.Wrap(buf, 0, len(buf)).
		OriginID(s.originID).RoutedID(s.routedID).StreamID(s.replyID).
		Sequence(s.reply.Seq).Acknowledge(s.reply.Ack).Maximum(s.reply.Max).
		TraceID(f.TraceID()).Authorization(f.Authorization()).
		BudgetID(s.reply.Budget).Reserved(f.Reserved()).Extension(f.Extension()).
		BuildLimit()
	if err == nil {
		err = h.w.Send(frame.FrameFlush, buf[:n])
	}
	if err == nil {
		s.reply.Seq += int64(f.Reserved())
	}
}

func (s *stream) doEnd(traceID int64, ext []byte) { s.doClose(frame.FrameEnd, traceID, ext) }

func (s *stream) doAbort(traceID int64, ext []byte) { s.doClose(frame.FrameAbort, traceID, ext) }

// doClose ends the reply with END or ABORT, once.
func (s *stream) doClose(t frame.FrameType, traceID int64, ext []byte) {
	if s.state&replyClosed != 0 {
		return
	}
	s.state |= replyClosed
	h := s.h
	buf := h.w.WriteBuffer()
	var n int
	var err error
	if t == frame.FrameEnd {
		n, err = h.endB.Wrap(buf, 0, len(buf)).
			OriginID(s.originID).RoutedID(s.routedID).StreamID(s.replyID).
			Sequence(s.reply.Seq).Acknowledge(s.reply.Ack).Maximum(s.reply.Max).
			TraceID(traceID).Extension(ext).
			BuildLimit()
	} else {
		n, err = h.abortB.Wrap(buf, 0, len(buf)).
			OriginID(s.originID).RoutedID(s.routedID).StreamID(s.replyID).
			Sequence(s.reply.Seq).Acknowledge(s.reply.Ack).Maximum(s.reply.Max).
			TraceID(traceID).Extension(ext).
			BuildLimit()
	}
	if err == nil {
		_ = h.w.Send(t, buf[:n])
	}
}

func (s *stream) doReset() {
	h := s.h
	buf := h.w.WriteBuffer()
	n, err := h.resetB.Wrap(buf, 0, len(buf)).
		OriginID(s.originID).RoutedID(s.routedID).StreamID(s.initialID).
		Sequence(s.initial.Seq).Acknowledge(s.initial.Ack).Maximum(s.initial.Max).
		BuildLimit()
	if err == nil {
		_ = h.w.Send(frame.FrameReset, buf[:n])
	}
	s.state |= initialClosed
}

var (
	_ engine.Binding = Binding{}
	_ engine.Handler = (*Handler)(nil)
)
