// Package test is the test binding: a transparent proxy kind that
// engine-driven spec scripts put between the script playing the initiator
// and the script playing the exit, in the manner of Zilla's engine test
// binding.
//
// Each initial BEGIN routed to the binding opens a new stream to its exit,
// and the binding serves both streams with [engine.Stream], as Zilla's
// test binding pairs a source and a target. Every frame one side sends is
// sent on to the other with the fields it came with: BEGIN (traceId,
// authorization, affinity and extension), DATA (flags, reserved, payload
// — null stays null, empty stays empty — and extension), FLUSH, END and
// ABORT in the initial direction; the same frames of the exit's reply
// back to the initiator; and the throttle frames WINDOW (acknowledge,
// maximum, padding, budgetId, minimum, capabilities), RESET and
// CHALLENGE against the matching stream on the other side. BEGIN's
// redirectedId is not passed on, since it names a stream of the previous
// hop; REDIRECT and foreign SIGNAL frames are not forwarded.
//
// Sequence and acknowledge are each stream's own, and DATA reserves what
// it reserved, so as long as both peers keep to flow control (ZILLA.md
// §2) the positions on either side are the ones the other peer wrote: the
// initiator sees exactly the window the exit granted and the exit sees
// exactly the positions the initiator wrote. A frame that breaks flow
// control, or that the ring refuses, fails the stream: every direction
// still open is reset at its sender and aborted at its receiver. Closing
// follows the peers: END and ABORT close a direction, RESET closes the
// one it travels against, and a RESET from an exit that has not begun its
// reply, such as the engine's answer to a refused stream, reaches the
// initiator as it is. The engine forgets each registration as the frames
// that close it pass, so a stream both peers close leaves nothing behind.
//
// The delay option holds the BEGIN back: the binding schedules a SIGNAL
// to its own stream with [engine.Worker.SignalAt], which reaches it
// through the worker's ring, and only then opens the stream to the exit,
// followed by the frames that arrived meanwhile, in order. A RESET of the
// reply during the delay releases the BEGIN at once, since the engine has
// then forgotten the registration the SIGNAL is addressed to. The delay
// is a Go duration ("50ms") or an ISO-8601 duration ("PT0.05S").
//
//	bindings:
//	  app0:
//	    type: test
//	    kind: proxy
//	    options:
//	      delay: 50ms
//	    exit: app1
package test
