// Package streams holds the small policies over [engine.Stream] that
// several binding kinds share: how a handler accepts a stream from its
// BEGIN, which received frames a stream handles, and how the reply of a
// stream a binding accepted is closed whether or not it has begun.
//
// Each helper is small enough to inline, so that a kind's frame handler
// pays no call for it:
//
//	if d, err := r.OnData(buf); streams.Received(err, r.fail) {
//		r.onData(&d)
//	}
//	if streams.AbortReply(&r.Stream) != nil {
//		r.resetDown(0, "")
//	}
package streams
