package engine

import (
	"errors"
	"fmt"

	"github.com/sluicehq/sluice/engine/frame"
)

// Stream is one stream as a binding sees it: the direction it sends (Out)
// and the one it receives (In), each with its flow, trace id,
// authorization and state. Its senders build, send and account for each
// frame and its receive helpers check and record what arrives, so that
// every binding shares one implementation of the frame lifecycle.
//
// A binding that serves a stream calls [Stream.Accept] in its NewStream;
// one that opens a stream calls [Stream.Connect] and then [Stream.Begin].
// A Stream belongs to the worker that serves it and is used only on that
// worker's thread. Frames are built in [Worker.WriteBuffer], so the bytes
// handed to a sender must not alias it.
type Stream struct {
	w        *Worker
	sender   MessageConsumer // the initiator's consumer, for its BEGIN
	originID int64
	routedID int64
	outID    int64

	// Out is the direction the binding sends: DATA it sends is charged
	// to Out's flow, and the WINDOW it receives credits it.
	Out Direction
	// In is the direction the binding receives: DATA it receives is
	// checked against In's flow, and the WINDOW it sends offers In.Max.
	In Direction
}

// Direction is one direction of a [Stream]: its credit, the trace id and
// authorization that the frames the binding sends on it or against it
// carry, and its lifecycle state. The binding sets Trace and Auth; the
// receive helpers leave them alone.
type Direction struct {
	Flow
	Trace int64
	Auth  int64
	state dirState
}

// dirState holds one direction's lifecycle bits, laid out as one nibble
// of [StreamState].
type dirState uint8

const (
	opening dirState = 1 << iota // BEGIN sent or received
	opened                       // WINDOW sent or received
	closing                      // END or ABORT wanted (or done)
	closed                       // END, ABORT or RESET done, or refused
)

// Opening reports whether the direction's BEGIN has been sent or received.
func (d *Direction) Opening() bool { return d.state&opening != 0 }

// Opened reports whether a WINDOW has been exchanged on the direction.
func (d *Direction) Opened() bool { return d.state&opened != 0 }

// Closing reports whether the direction is closing or closed: a binding
// marks it with SetClosing when it wants to END but still has data to
// send.
func (d *Direction) Closing() bool { return d.state&closing != 0 }

// Closed reports whether the direction is done: ended, aborted, reset, or
// given up after the ring refused one of its frames. No frame is sent on
// or against a closed direction.
func (d *Direction) Closed() bool { return d.state&closed != 0 }

// SetClosing marks the direction as closing, as Zilla's closing state
// does, for a binding that ends it once its pending data is out.
func (d *Direction) SetClosing() { d.state |= closing }

func (d *Direction) close() { d.state |= closing | closed }

// StreamState is the lifecycle of both directions of a stream in one
// byte, with Zilla's bit layout (ZILLA.md §2 "State helpers", HttpState):
// the reply's bits in the low nibble, the initial's in the high.
type StreamState uint8

// The StreamState bits.
const (
	ReplyOpening   StreamState = 0x01
	ReplyOpened    StreamState = 0x02
	ReplyClosing   StreamState = 0x04
	ReplyClosed    StreamState = 0x08
	InitialOpening StreamState = 0x10
	InitialOpened  StreamState = 0x20
	InitialClosing StreamState = 0x40
	InitialClosed  StreamState = 0x80
)

var streamStateNames = [...]string{
	"REPLY_OPENING", "REPLY_OPENED", "REPLY_CLOSING", "REPLY_CLOSED",
	"INITIAL_OPENING", "INITIAL_OPENED", "INITIAL_CLOSING", "INITIAL_CLOSED",
}

// Has reports whether all of v's bits are set in s.
func (s StreamState) Has(v StreamState) bool { return s&v == v }

// Closed reports whether both directions are closed.
func (s StreamState) Closed() bool { return s.Has(InitialClosed | ReplyClosed) }

// String lists the bits set, for logs and test failures.
func (s StreamState) String() string {
	if s == 0 {
		return "0"
	}
	var out string
	for i, name := range streamStateNames {
		if s&(1<<i) != 0 {
			if out != "" {
				out += "|"
			}
			out += name
		}
	}
	return out
}

// Stream errors. The senders return them without sending anything.
var (
	// ErrStreamClosed reports a frame for a direction that is closed.
	ErrStreamClosed = errors.New("engine: stream direction closed")
	// ErrStreamState reports a frame out of its direction's lifecycle: a
	// second BEGIN, or DATA, FLUSH, END or ABORT before BEGIN.
	ErrStreamState = errors.New("engine: frame out of order for the stream direction")
	// ErrMalformedFrame reports a received frame whose fields do not fit
	// its length.
	ErrMalformedFrame = errors.New("engine: malformed frame")
)

// streamFrames are the builders every Stream of a worker shares: a
// stream's frames are built one at a time on the worker's thread.
type streamFrames struct {
	begin     frame.BeginBuilder
	data      frame.DataBuilder
	flush     frame.FlushBuilder
	end       frame.EndBuilder
	abort     frame.AbortBuilder
	reset     frame.ResetBuilder
	challenge frame.ChallengeBuilder
}

// Accept prepares s for a stream routed to the binding, from the ids of
// the initial BEGIN that NewStream was offered: s receives the initial
// direction and sends the reply.
func (s *Stream) Accept(w *Worker, originID, routedID, initialID int64) {
	*s = Stream{w: w, originID: originID, routedID: routedID, outID: ReplyID(initialID)}
}

// Connect prepares s for a stream the binding opens to routedID, with an
// id from [Worker.SupplyInitialID]: s sends the initial direction and
// receives the reply. Begin sends its BEGIN through [Worker.NewStream],
// which makes sender the consumer of the reply and of the initial
// direction's throttle frames.
func (s *Stream) Connect(w *Worker, originID, routedID, initialID int64, sender MessageConsumer) {
	*s = Stream{w: w, sender: sender, originID: originID, routedID: routedID, outID: initialID}
}

// Worker returns the worker the stream belongs to.
func (s *Stream) Worker() *Worker { return s.w }

// OriginID returns the binding id of the stream's initiator.
func (s *Stream) OriginID() int64 { return s.originID }

// RoutedID returns the binding id of the stream's target.
func (s *Stream) RoutedID() int64 { return s.routedID }

// OutID returns the id of the direction the binding sends.
func (s *Stream) OutID() int64 { return s.outID }

// InID returns the id of the direction the binding receives.
func (s *Stream) InID() int64 { return s.outID ^ 1 }

// InitialID returns the id of the stream's initial direction.
func (s *Stream) InitialID() int64 { return s.outID | 1 }

// ReplyID returns the id of the stream's reply direction.
func (s *Stream) ReplyID() int64 { return s.outID &^ 1 }

// Initiator reports whether the binding opened the stream (Connect), and
// so sends its initial direction.
func (s *Stream) Initiator() bool { return IsInitial(s.outID) }

// State returns both directions' lifecycle with Zilla's initial and reply
// bits.
func (s *Stream) State() StreamState {
	initial, reply := s.Out.state, s.In.state
	if !s.Initiator() {
		initial, reply = reply, initial
	}
	return StreamState(initial)<<4 | StreamState(reply)
}

// Closed reports whether both directions are closed: the binding may
// forget the stream.
func (s *Stream) Closed() bool { return s.Out.Closed() && s.In.Closed() }

// Begin opens Out with BEGIN, affinity 0 and extension ext.
func (s *Stream) Begin(ext []byte) error { return s.begin(0, ext, nil) }

// BeginWith opens Out with BEGIN and affinity, and lets fill write the
// rest of the frame in place (the extension, with ExtensionSlot and
// ExtensionEnd for a typed one); a nil fill writes no extension.
func (s *Stream) BeginWith(affinity int64, fill func(*frame.BeginBuilder)) error {
	return s.begin(affinity, nil, fill)
}

func (s *Stream) begin(affinity int64, ext []byte, fill func(*frame.BeginBuilder)) error {
	if s.Out.state&closed != 0 {
		return ErrStreamClosed
	}
	if s.Out.state&opening != 0 {
		return ErrStreamState
	}
	w := s.w
	buf := w.writeBuf
	b := w.frames.begin.Wrap(buf, 0, len(buf)).
		OriginID(s.originID).RoutedID(s.routedID).StreamID(s.outID).
		Sequence(s.Out.Seq).Acknowledge(s.Out.Ack).Maximum(s.Out.Max).
		TraceID(s.Out.Trace).Authorization(s.Out.Auth).
		Affinity(affinity)
	if fill != nil {
		fill(b)
	} else if len(ext) > 0 {
		b.Extension(ext)
	}
	n, err := b.BuildLimit()
	if err != nil {
		return buildError(frame.FrameBegin, err)
	}
	if s.Initiator() {
		err = w.NewStream(buf[:n], s.sender)
	} else {
		err = w.Send(frame.FrameBegin, buf[:n])
	}
	if err != nil {
		s.refusedOut()
		return err
	}
	s.Out.state |= opening
	return nil
}

// Data sends payload on Out with flags and extension ext, reserving
// len(payload) plus Out's padding, and charges Out's flow. A nil payload
// is sent as null. A DATA that does not fit Out's window is not sent:
// Data returns ErrWindowOverrun.
func (s *Stream) Data(flags frame.Flags, payload, ext []byte) error {
	return s.data(flags, s.Out.Reserved(len(payload)), payload, ext, nil)
}

// DataWith sends a DATA on Out that reserves reserved bytes, with flags,
// and lets fill write its payload and extension in place (PayloadReserve,
// ExtensionSlot); a nil fill sends a null payload. It is Data for a
// binding that chooses what a DATA reserves, such as a relay passing on
// what it received, or writes the payload in place.
func (s *Stream) DataWith(flags frame.Flags, reserved int32, fill func(*frame.DataBuilder)) error {
	return s.data(flags, reserved, nil, nil, fill)
}

func (s *Stream) data(flags frame.Flags, reserved int32, payload, ext []byte, fill func(*frame.DataBuilder)) error {
	if err := s.sendable(); err != nil {
		return err
	}
	if reserved < 0 || int64(reserved) > s.Out.Available() {
		return ErrWindowOverrun
	}
	w := s.w
	buf := w.writeBuf
	if fill == nil {
		h := s.outHeader()
		if n := frame.PutData(buf, &h, flags, s.Out.Budget, reserved, payload, ext); n > 0 {
			return s.sendData(buf[:n], reserved)
		}
		// Too long for the write buffer: the builder says why.
	}
	b := w.frames.data.Wrap(buf, 0, len(buf)).
		OriginID(s.originID).RoutedID(s.routedID).StreamID(s.outID).
		Sequence(s.Out.Seq).Acknowledge(s.Out.Ack).Maximum(s.Out.Max).
		TraceID(s.Out.Trace).Authorization(s.Out.Auth).
		Flags(uint8(flags)).BudgetID(s.Out.Budget).Reserved(reserved)
	switch {
	case fill != nil:
		fill(b)
	case payload == nil:
		b.PayloadNull()
	default:
		b.Payload(payload)
	}
	if len(ext) > 0 {
		b.Extension(ext)
	}
	n, err := b.BuildLimit()
	if err != nil {
		return buildError(frame.FrameData, err)
	}
	return s.sendData(buf[:n], reserved)
}

// sendData sends the DATA frame f on Out, which reserves reserved.
func (s *Stream) sendData(f []byte, reserved int32) error {
	if err := s.w.Send(frame.FrameData, f); err != nil {
		s.refusedOut()
		return err
	}
	s.Out.Seq += int64(reserved)
	return nil
}

// outHeader is the header of the next frame on Out.
func (s *Stream) outHeader() frame.Header {
	return frame.Header{
		OriginID: s.originID, RoutedID: s.routedID, StreamID: s.outID,
		Sequence: s.Out.Seq, Acknowledge: s.Out.Ack, Maximum: s.Out.Max,
		TraceID: s.Out.Trace, Authorization: s.Out.Auth,
	}
}

// Flush sends a FLUSH on Out with extension ext, reserving nothing.
func (s *Stream) Flush(ext []byte) error { return s.flush(0, ext, nil) }

// FlushWith sends a FLUSH on Out that reserves reserved bytes, charged
// like DATA, and lets fill write its extension in place.
func (s *Stream) FlushWith(reserved int32, fill func(*frame.FlushBuilder)) error {
	return s.flush(reserved, nil, fill)
}

func (s *Stream) flush(reserved int32, ext []byte, fill func(*frame.FlushBuilder)) error {
	if err := s.sendable(); err != nil {
		return err
	}
	if reserved < 0 || int64(reserved) > s.Out.Available() {
		return ErrWindowOverrun
	}
	w := s.w
	buf := w.writeBuf
	b := w.frames.flush.Wrap(buf, 0, len(buf)).
		OriginID(s.originID).RoutedID(s.routedID).StreamID(s.outID).
		Sequence(s.Out.Seq).Acknowledge(s.Out.Ack).Maximum(s.Out.Max).
		TraceID(s.Out.Trace).Authorization(s.Out.Auth).
		BudgetID(s.Out.Budget).Reserved(reserved)
	if fill != nil {
		fill(b)
	} else if len(ext) > 0 {
		b.Extension(ext)
	}
	n, err := b.BuildLimit()
	if err != nil {
		return buildError(frame.FrameFlush, err)
	}
	if err := w.Send(frame.FrameFlush, buf[:n]); err != nil {
		s.refusedOut()
		return err
	}
	s.Out.Seq += int64(reserved)
	return nil
}

// End closes Out in order with END and extension ext. Ending a closed
// direction does nothing, so a binding need not guard its closes.
func (s *Stream) End(ext []byte) error { return s.end(ext, nil) }

// EndWith is End with fill writing the rest of the frame in place: the
// budget id and reserved, which default to 0, and the extension.
func (s *Stream) EndWith(fill func(*frame.EndBuilder)) error { return s.end(nil, fill) }

func (s *Stream) end(ext []byte, fill func(*frame.EndBuilder)) error {
	if s.Out.state&closed != 0 {
		return nil
	}
	if s.Out.state&opening == 0 {
		return ErrStreamState
	}
	w := s.w
	buf := w.writeBuf
	if fill == nil {
		h := s.outHeader()
		if n := frame.PutEnd(buf, &h, ext); n > 0 {
			return s.closeOut(frame.FrameEnd, buf[:n])
		}
		// Too long for the write buffer: the builder says why.
	}
	b := w.frames.end.Wrap(buf, 0, len(buf)).
		OriginID(s.originID).RoutedID(s.routedID).StreamID(s.outID).
		Sequence(s.Out.Seq).Acknowledge(s.Out.Ack).Maximum(s.Out.Max).
		TraceID(s.Out.Trace).Authorization(s.Out.Auth)
	if fill != nil {
		fill(b)
	} else if len(ext) > 0 {
		b.Extension(ext)
	}
	n, err := b.BuildLimit()
	if err != nil {
		return buildError(frame.FrameEnd, err)
	}
	return s.closeOut(frame.FrameEnd, buf[:n])
}

// Abort closes Out abruptly with ABORT and extension ext. Aborting a
// closed direction does nothing.
func (s *Stream) Abort(ext []byte) error { return s.abort(ext, nil) }

// AbortWith is Abort with fill writing the extension in place.
func (s *Stream) AbortWith(fill func(*frame.AbortBuilder)) error { return s.abort(nil, fill) }

func (s *Stream) abort(ext []byte, fill func(*frame.AbortBuilder)) error {
	if s.Out.state&closed != 0 {
		return nil
	}
	if s.Out.state&opening == 0 {
		return ErrStreamState
	}
	w := s.w
	buf := w.writeBuf
	b := w.frames.abort.Wrap(buf, 0, len(buf)).
		OriginID(s.originID).RoutedID(s.routedID).StreamID(s.outID).
		Sequence(s.Out.Seq).Acknowledge(s.Out.Ack).Maximum(s.Out.Max).
		TraceID(s.Out.Trace).Authorization(s.Out.Auth)
	if fill != nil {
		fill(b)
	} else if len(ext) > 0 {
		b.Extension(ext)
	}
	n, err := b.BuildLimit()
	if err != nil {
		return buildError(frame.FrameAbort, err)
	}
	return s.closeOut(frame.FrameAbort, buf[:n])
}

// Forgo closes Out before it has begun, without a frame, for a binding
// that will never open it now: a target whose peer closed the initial
// direction before the reply began, or an initiator whose BEGIN could not
// be built. The engine forgets Out's registration as an ABORT would. Once
// Out has begun or closed, Forgo does nothing: End or Abort closes it.
func (s *Stream) Forgo() {
	if s.Out.state&(opening|closed) == 0 {
		s.refusedOut()
	}
}

// closeOut sends the END or ABORT built in buf. Out is closed whether the
// ring takes it or not: a refused close is not tried again.
func (s *Stream) closeOut(t frame.FrameType, buf []byte) error {
	s.Out.close()
	if err := s.w.Send(t, buf); err != nil {
		s.w.afterSend(frame.FrameAbort, s.outID)
		return err
	}
	return nil
}

// Window sends a WINDOW against In with In's flow as it stands: the
// binding sets In.Ack and In.Max (Flow.Grant, Flow.Keep), In.Pad,
// In.Budget, In.Min and In.Cap first. A WINDOW against a closed
// direction is not sent.
func (s *Stream) Window() error {
	if s.In.state&closed != 0 {
		return nil
	}
	w := s.w
	buf := w.writeBuf
	h := frame.Header{
		OriginID: s.originID, RoutedID: s.routedID, StreamID: s.InID(),
		Sequence: s.In.Seq, Acknowledge: s.In.Ack, Maximum: s.In.Max,
		TraceID: s.In.Trace, Authorization: s.In.Auth,
	}
	n := frame.PutWindow(buf, &h, s.In.Budget, s.In.Pad, s.In.Min, s.In.Cap)
	if n == 0 {
		return buildError(frame.FrameWindow, errShortBuffer)
	}
	if err := w.Send(frame.FrameWindow, buf[:n]); err != nil {
		s.refusedIn()
		return err
	}
	s.In.state |= opened
	return nil
}

// Reset refuses In with RESET and extension ext. Resetting a closed
// direction does nothing. A target that resets the initial direction
// before it has begun the reply gives the reply up too (see the package
// doc), so Out closes with it.
func (s *Stream) Reset(ext []byte) error { return s.reset(ext, nil) }

// ResetWith is Reset with fill writing the extension in place.
func (s *Stream) ResetWith(fill func(*frame.ResetBuilder)) error { return s.reset(nil, fill) }

func (s *Stream) reset(ext []byte, fill func(*frame.ResetBuilder)) error {
	if s.In.state&closed != 0 {
		return nil
	}
	w := s.w
	buf := w.writeBuf
	b := w.frames.reset.Wrap(buf, 0, len(buf)).
		OriginID(s.originID).RoutedID(s.routedID).StreamID(s.InID()).
		Sequence(s.In.Seq).Acknowledge(s.In.Ack).Maximum(s.In.Max).
		TraceID(s.In.Trace).Authorization(s.In.Auth)
	if fill != nil {
		fill(b)
	} else if len(ext) > 0 {
		b.Extension(ext)
	}
	n, err := b.BuildLimit()
	if err != nil {
		return buildError(frame.FrameReset, err)
	}
	s.closeIn()
	if err := w.Send(frame.FrameReset, buf[:n]); err != nil {
		w.afterSend(frame.FrameReset, s.InID())
		return err
	}
	return nil
}

// AbortElseReset aborts Out; when the ring refuses the ABORT, it resets
// In instead, so that the peer learns of the end one way or the other.
func (s *Stream) AbortElseReset() {
	if s.Abort(nil) != nil {
		s.ResetElseAbort()
	}
}

// ResetElseAbort resets In; when the ring refuses the RESET, it aborts
// Out instead (see AbortElseReset). Each ends once a direction is closed,
// since closing a closed direction sends nothing and succeeds.
func (s *Stream) ResetElseAbort() {
	if s.Reset(nil) != nil {
		s.AbortElseReset()
	}
}

// Challenge sends a CHALLENGE against In with extension ext, asking its
// sender to act (authorize again, say).
func (s *Stream) Challenge(ext []byte) error { return s.challenge(ext, nil) }

// ChallengeWith is Challenge with fill writing the extension in place.
func (s *Stream) ChallengeWith(fill func(*frame.ChallengeBuilder)) error {
	return s.challenge(nil, fill)
}

func (s *Stream) challenge(ext []byte, fill func(*frame.ChallengeBuilder)) error {
	if s.In.state&closed != 0 {
		return ErrStreamClosed
	}
	w := s.w
	buf := w.writeBuf
	b := w.frames.challenge.Wrap(buf, 0, len(buf)).
		OriginID(s.originID).RoutedID(s.routedID).StreamID(s.InID()).
		Sequence(s.In.Seq).Acknowledge(s.In.Ack).Maximum(s.In.Max).
		TraceID(s.In.Trace).Authorization(s.In.Auth)
	if fill != nil {
		fill(b)
	} else if len(ext) > 0 {
		b.Extension(ext)
	}
	n, err := b.BuildLimit()
	if err != nil {
		return buildError(frame.FrameChallenge, err)
	}
	if err := w.Send(frame.FrameChallenge, buf[:n]); err != nil {
		s.refusedIn()
		return err
	}
	return nil
}

// sendable reports why Out cannot carry DATA or FLUSH, if it cannot.
func (s *Stream) sendable() error {
	switch {
	case s.Out.state&closed != 0:
		return ErrStreamClosed
	case s.Out.state&opening == 0:
		return ErrStreamState
	}
	return nil
}

// refusedOut gives Out up after the ring refused one of its frames, and
// retires the engine's registration for it as an ABORT would: the peer
// cannot be told, so the binding must not go on as if it had been.
func (s *Stream) refusedOut() {
	s.Out.close()
	if s.Initiator() && s.Out.state&opening == 0 {
		// The initial BEGIN never went out: there is no stream, and
		// nothing was registered for it.
		s.In.close()
		return
	}
	s.w.afterSend(frame.FrameAbort, s.outID)
}

// refusedIn gives In up after the ring refused a throttle frame against
// it, and retires the engine's registration for it as a RESET would.
func (s *Stream) refusedIn() {
	s.closeIn()
	s.w.afterSend(frame.FrameReset, s.InID())
}

// closeIn closes In on a RESET sent (or given up). A target that has not
// begun the reply gives it up with the initial direction: the engine
// forgets it on both sides (afterSend).
func (s *Stream) closeIn() {
	s.In.close()
	if !s.Initiator() && s.Out.state&opening == 0 {
		s.Out.close()
	}
}

// errShortBuffer reports a write buffer too short for a fixed-size frame,
// which a worker's never is.
var errShortBuffer = errors.New("buffer too short")

func buildError(t frame.FrameType, err error) error {
	return fmt.Errorf("engine: build %s: %w", t, err)
}

// OnBegin records the BEGIN that opens In: its sequence and acknowledge
// start In's flow. The returned view aliases buf.
func (s *Stream) OnBegin(buf []byte) (frame.Begin, error) {
	var b frame.Begin
	if !b.TryWrap(buf, 0, len(buf)) {
		return frame.Begin{}, ErrMalformedFrame
	}
	if s.In.state&(opening|closed) != 0 {
		return b, ErrStreamState
	}
	s.In.Seq, s.In.Ack = b.Sequence(), b.Acknowledge()
	s.In.state |= opening
	return b, nil
}

// OnData checks a DATA received on In against In's window and charges
// it; ErrSequence and ErrWindowOverrun report a sender that broke flow
// control, which the binding answers by resetting In. The returned view
// aliases buf.
func (s *Stream) OnData(buf []byte) (frame.Data, error) {
	var d frame.Data
	if !d.TryWrap(buf, 0, len(buf)) {
		return frame.Data{}, ErrMalformedFrame
	}
	if err := s.receivable(); err != nil {
		return d, err
	}
	return d, s.In.receive(d.Sequence(), d.Acknowledge(), d.Reserved())
}

// OnFlush checks a FLUSH received on In and charges what it reserves, as
// OnData does. The returned view aliases buf.
func (s *Stream) OnFlush(buf []byte) (frame.Flush, error) {
	var f frame.Flush
	if !f.TryWrap(buf, 0, len(buf)) {
		return frame.Flush{}, ErrMalformedFrame
	}
	if err := s.receivable(); err != nil {
		return f, err
	}
	return f, s.In.receive(f.Sequence(), f.Acknowledge(), f.Reserved())
}

// OnEnd closes In on the END received; an error reports an END out of
// order, but In is closed all the same, since the engine has retired it.
// The returned view aliases buf.
func (s *Stream) OnEnd(buf []byte) (frame.End, error) {
	var e frame.End
	if !e.TryWrap(buf, 0, len(buf)) {
		s.In.close()
		return frame.End{}, ErrMalformedFrame
	}
	return e, s.onClose(e.Sequence())
}

// OnAbort closes In on the ABORT received, as OnEnd does. The returned
// view aliases buf.
func (s *Stream) OnAbort(buf []byte) (frame.Abort, error) {
	var a frame.Abort
	if !a.TryWrap(buf, 0, len(buf)) {
		s.In.close()
		return frame.Abort{}, ErrMalformedFrame
	}
	return a, s.onClose(a.Sequence())
}

func (s *Stream) onClose(seq int64) error {
	err := s.receivable()
	s.In.close()
	if err != nil {
		return err
	}
	return s.In.OnFrame(seq)
}

// receivable reports why In cannot carry DATA, FLUSH, END or ABORT, if it
// cannot.
func (s *Stream) receivable() error {
	switch {
	case s.In.state&closed != 0:
		return ErrStreamClosed
	case s.In.state&opening == 0:
		return ErrStreamState
	}
	return nil
}

// OnWindow credits Out with the WINDOW received against it and marks it
// opened; ErrSequence reports a WINDOW that breaks Zilla's invariants
// (Flow.OnWindow). A WINDOW for a closed direction changes nothing. The
// returned view aliases buf.
func (s *Stream) OnWindow(buf []byte) (frame.Window, error) {
	var win frame.Window
	if !win.TryWrap(buf, 0, len(buf)) {
		return frame.Window{}, ErrMalformedFrame
	}
	if s.Out.state&closed != 0 {
		return win, nil
	}
	if err := s.Out.OnWindow(&win); err != nil {
		return win, err
	}
	s.Out.state |= opened
	return win, nil
}

// OnReset closes Out on the RESET received against it. An initiator
// whose initial direction is reset before the reply began gives the
// reply up too: the engine has forgotten it. The returned view aliases
// buf.
func (s *Stream) OnReset(buf []byte) (frame.Reset, error) {
	s.Out.close()
	if s.Initiator() && s.In.state&opening == 0 {
		s.In.close()
	}
	var r frame.Reset
	if !r.TryWrap(buf, 0, len(buf)) {
		return frame.Reset{}, ErrMalformedFrame
	}
	return r, nil
}

// OnChallenge reads a CHALLENGE received against Out; what it asks is
// the binding's to decide. The returned view aliases buf.
func (s *Stream) OnChallenge(buf []byte) (frame.Challenge, error) {
	var c frame.Challenge
	if !c.TryWrap(buf, 0, len(buf)) {
		return frame.Challenge{}, ErrMalformedFrame
	}
	return c, nil
}
