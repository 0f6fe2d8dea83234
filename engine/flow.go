package engine

import (
	"errors"
	"fmt"

	"github.com/sluicehq/sluice/engine/frame"
)

// Flow is the credit of one stream direction, kept by its sender and its
// receiver alike (ZILLA.md §2): sequence is the sender's position,
// acknowledge the receiver's, maximum the window and padding the per-frame
// overhead the receiver reserves. A sender may write while
// sequence - acknowledge + reserved <= maximum.
type Flow struct {
	Seq    int64
	Ack    int64
	Max    int32
	Pad    int32
	Budget int64
	Min    int32
	Cap    uint8 // WINDOW capabilities, e.g. 1<<frame.CapabilityChallenge
}

// Flow-control protocol violations. A binding that sees one resets (as a
// receiver) or aborts (as a sender) the stream.
var (
	// ErrWindowOverrun reports DATA beyond the window the receiver granted.
	ErrWindowOverrun = errors.New("engine: data exceeds window")
	// ErrSequence reports a frame whose sequence or acknowledge went back.
	ErrSequence = errors.New("engine: sequence out of order")
)

// Available returns the bytes the sender may still reserve.
func (f *Flow) Available() int64 { return int64(f.Max) - (f.Seq - f.Ack) }

// Reserved returns what a DATA of n payload bytes reserves: n plus padding.
func (f *Flow) Reserved(n int) int32 { return int32(n) + f.Pad }

// CanSend reports whether a DATA of n payload bytes fits the window.
func (f *Flow) CanSend(n int) bool { return int64(f.Reserved(n)) <= f.Available() }

// Send charges a DATA of n payload bytes and returns its reserved value.
// The caller must have checked CanSend.
func (f *Flow) Send(n int) int32 {
	r := f.Reserved(n)
	if int64(r) > f.Available() {
		panic("internal error: engine: flow send beyond window")
	}
	f.Seq += int64(r)
	return r
}

// OnWindow applies a WINDOW received by the sender. Zilla's invariants:
// ack <= seq, ack never goes back and the window never shrinks below what
// is in flight.
func (f *Flow) OnWindow(w *frame.Window) error {
	ack, max := w.Acknowledge(), w.Maximum()
	if ack > w.Sequence() || w.Sequence() > f.Seq || ack < f.Ack || max < 0 {
		return fmt.Errorf("%w: window seq %d ack %d max %d, sent seq %d ack %d",
			ErrSequence, w.Sequence(), ack, max, f.Seq, f.Ack)
	}
	f.Ack, f.Max, f.Pad, f.Budget = ack, max, w.Padding(), w.BudgetID()
	f.Min, f.Cap = w.Minimum(), w.Capabilities()
	return nil
}

// OnData applies a DATA received by the receiver: it must continue the
// sequence and stay within the window granted.
func (f *Flow) OnData(d *frame.Data) error {
	return f.receive(d.Sequence(), d.Acknowledge(), d.Reserved())
}

// receive applies a frame received at seq that reserves reserved bytes:
// a DATA, or a FLUSH, which may reserve too.
func (f *Flow) receive(seq, ack int64, r int32) error {
	reserved := int64(r)
	if seq < f.Seq || ack > seq || reserved < 0 {
		return fmt.Errorf("%w: seq %d, expected at least %d", ErrSequence, seq, f.Seq)
	}
	if seq+reserved > f.Ack+int64(f.Max) {
		return fmt.Errorf("%w: seq %d + reserved %d > ack %d + max %d", ErrWindowOverrun, seq, reserved, f.Ack, f.Max)
	}
	f.Seq = seq + reserved
	return nil
}

// OnFrame advances the receiver's sequence past a FLUSH, END or ABORT.
func (f *Flow) OnFrame(seq int64) error {
	if seq < f.Seq {
		return fmt.Errorf("%w: seq %d, expected at least %d", ErrSequence, seq, f.Seq)
	}
	f.Seq = seq
	return nil
}

// Grant acknowledges everything received so far and sets the window the
// receiver offers; the caller then sends WINDOW with Seq, Ack and Max.
// It reports whether the window changed.
func (f *Flow) Grant(max int32) bool {
	changed := f.Ack != f.Seq || f.Max != max
	f.Ack, f.Max = f.Seq, max
	return changed
}

// Keep returns max, or more: enough that an offer of (ack, max) takes
// back none of the credit last offered (f.Ack + f.Max). A sender may
// already have used that credit with DATA still on its way, which a
// smaller offer would turn into a flow-control violation. A receiver that
// sizes its offer by its buffer's room can keep it so, when the room it
// counted shrinks by more than the bytes it received (the padding of
// what it forwards, say): the credit it gave was counted against the
// same buffer, less what has arrived since, so it still fits.
func (f *Flow) Keep(ack int64, max int32) int32 {
	if limit := f.Ack + int64(f.Max); ack+int64(max) < limit {
		return int32(limit - ack)
	}
	return max
}

// WindowDue reports whether a receiver whose offer is now (ack, max, pad)
// must send WINDOW, or may leave the sender on the window it last sent
// (f.Ack, f.Max, f.Pad). It must send when the padding changes, when the
// offer takes back credit, and when the sender has less than half of max
// left to send; otherwise the WINDOW can wait, as HTTP/2 implementations
// hold WINDOW_UPDATE until half the window is used. A receiver that waits
// keeps f.Ack and f.Max as they were, since they are what the sender goes
// by.
//
// Only a receiver whose sender cuts its DATA to whatever window it has
// may wait (tcp reading a socket, the http client forwarding a body, the
// mcp client's calls writing a request): a sender that needs room for a
// whole message before it writes would wait forever for a WINDOW that
// waits for it. The http server's and client's connection input, the http
// client's request bodies, the mcp client's replies and the bytes tcp
// writes to its sockets wait this way: 6 fewer WINDOW frames per
// tools/call through the gateway.
func (f *Flow) WindowDue(ack int64, max, pad int32) bool {
	if ack == f.Ack && max == f.Max && pad == f.Pad {
		return false
	}
	if pad != f.Pad || ack+int64(max) < f.Ack+int64(f.Max) {
		return true
	}
	left := f.Ack + int64(f.Max) - f.Seq
	return 2*left < int64(max)
}
