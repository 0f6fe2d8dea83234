package streams

import (
	"github.com/sluicehq/sluice/binding"
	"github.com/sluicehq/sluice/engine"
)

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
