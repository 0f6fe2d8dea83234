package streams

import (
	"github.com/sluicehq/sluice/binding"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/frame"
)

// Accept reads buf, the BEGIN of a stream a handler is offered, with
// begin (the handler's reused flyweight) and accepts the stream as s. It
// reports false, and s is left alone, when buf is not a BEGIN: the
// handler refuses the stream.
func Accept(s *engine.Stream, w *engine.Worker, begin *frame.Begin, buf []byte) bool {
	if !begin.TryWrap(buf, 0, len(buf)) {
		return false
	}
	s.Accept(w, begin.OriginID(), begin.RoutedID(), begin.StreamID())
	return true
}

// Received reports whether a frame a receive helper of engine.Stream
// checked (err) is to be handled. A malformed frame is only dropped; one
// that breaks flow control or frame order also calls fail, which tears
// the stream down.
func Received(err error, fail func()) bool {
	if err != nil {
		dropped(err, fail)
		return false
	}
	return true
}

// ReceivedOpen is Received for a kind that drops a frame coming after its
// direction closed, as it drops a malformed one (binding.Breach): only a
// breach of order or flow control on an open direction calls fail.
func ReceivedOpen(err error, fail func()) bool {
	if err != nil {
		droppedOpen(err, fail)
		return false
	}
	return true
}

func droppedOpen(err error, fail func()) {
	if binding.Breach(err) {
		fail()
	}
}

// dropped is Received's path for a frame it does not take, kept apart so
// that Received inlines into every frame handler.
func dropped(err error, fail func()) {
	if binding.Violation(err) {
		fail()
	}
}

// EndReply ends s's reply (Out) if it has begun, and otherwise gives it
// up with Forgo: it will not open now, and END may not come before
// BEGIN. It returns the error of an END the ring refused, after which the
// caller resets the initial direction so that the peer learns of the end
// one way or the other.
func EndReply(s *engine.Stream) error {
	if !s.Out.Opening() {
		s.Forgo()
		return nil
	}
	return s.End(nil)
}

// AbortReply aborts s's reply as EndReply ends it.
func AbortReply(s *engine.Stream) error {
	if !s.Out.Opening() {
		s.Forgo()
		return nil
	}
	return s.Abort(nil)
}
