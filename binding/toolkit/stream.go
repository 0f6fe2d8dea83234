package toolkit

import (
	"bytes"
	"encoding/binary"
	"time"

	"github.com/sluicehq/sluice/binding"
	"github.com/sluicehq/sluice/binding/internal/streams"
	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/binding/mcp/jsonrpc"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/frame"
	"github.com/sluicehq/sluice/internal/freelist"
)

// signalStep is the id of the SIGNAL that marks the next step of a
// long-running operation; its contextId is the step's number.
const signalStep int32 = 1

// stream is one MCP application stream: a session's lifecycle, or one
// request. The initial direction is received (In) and the reply sent
// (Out); every frame the toolkit sends on either carries the BEGIN's
// trace id and authorization, the frames its timers send included.
type stream struct {
	engine.Stream

	h     *Handler
	kind  uint8 // the McpBeginEx kind
	state uint8
	sent  bool // the answer's first DATA went out

	// The request arriving: its buffer slot holds the BEGIN's name or uri
	// (identLen bytes; identNull when it had none), then the params.
	slot          int
	identLen      int
	identNull     bool
	have          int   // params bytes in the slot
	contentLength int32 // the BEGIN's, -1 when unknown
	// trk follows the params to their end: an MCP server may wait for the
	// reply before it ends its side.
	trk *jsonrpc.Tracker

	// The answer's bytes that wait for reply credit.
	pending []byte

	// A long-running operation under way: the step last done and the
	// SIGNAL that brings the next.
	run      plan
	step     int
	start    time.Time
	cancelID int64
}

// The stream's own state; whether each direction is open or closed is
// the Stream's.
const (
	answered  uint8 = 1 << iota // the params are complete and the answer under way
	failed                      // the answer is an error object: END carries outcome ERROR
	lifecycle                   // the stream is a session's lifecycle
)

// onMessage takes the server's frames. One that does not parse, or comes
// after its direction closed, is dropped; one that breaks flow control
// fails the stream.
func (s *stream) onMessage(t frame.FrameType, buf []byte) {
	switch t {
	case frame.FrameBegin:
		if b, err := s.OnBegin(buf); err == nil {
			s.onBegin(&b)
		}
	case frame.FrameData:
		if d, err := s.OnData(buf); streams.ReceivedOpen(err, s.fail) {
			s.onData(&d)
		}
	case frame.FrameFlush:
		// Nothing the server flushes (elicitation steps) concerns the
		// toolkit; the sequence still has to stay in order.
		_, err := s.OnFlush(buf)
		streams.ReceivedOpen(err, s.fail)
	case frame.FrameEnd:
		if _, err := s.OnEnd(buf); streams.ReceivedOpen(err, s.fail) {
			s.onEnd()
		}
	case frame.FrameAbort:
		s.OnAbort(buf) // closes In whatever it returns
		s.onAbort()
	case frame.FrameWindow:
		if _, err := s.OnWindow(buf); streams.ReceivedOpen(err, s.fail) {
			s.onWindow()
		}
	case frame.FrameReset:
		s.OnReset(buf) // closes Out whatever it returns
		s.onReset()
	case frame.FrameSignal:
		if s.h.signal.TryWrap(buf, 0, len(buf)) {
			s.onSignal(&s.h.signal)
		}
	case frame.FrameChallenge:
		// A resume challenge on a lifecycle: the toolkit sends no
		// notifications, so it has none to replay.
	}
}

func (s *stream) onBegin(b *frame.Begin) {
	h := s.h
	s.Out.Trace, s.Out.Auth = b.TraceID(), b.Authorization()
	s.In.Trace, s.In.Auth = s.Out.Trace, s.Out.Auth
	ext := b.Extension()
	ex := &h.beginEx
	if !ex.TryWrap(ext, 0, len(ext)) || ex.TypeID() != h.typeID {
		code, msg := unserved(ext, h.typeID)
		s.refuse(code, msg)
		return
	}
	s.kind = ex.Kind()
	if s.kind == mcp.McpBeginExKindLifecycle {
		s.state |= lifecycle
		if s.doBegin(ex) {
			s.doWindow(lifecycleWindow)
		}
		return
	}
	ident, null, contentLength := requestIdent(ex)
	slot := h.pool.Acquire(s.InitialID())
	if slot == engine.NoSlot {
		s.refuse(jsonrpc.CodeInternalError, "Server busy")
		return
	}
	room := h.pool.Buffer(slot)
	if len(ident) >= len(room) {
		h.pool.Release(slot)
		s.refuse(jsonrpc.CodeInvalidParams, "Invalid params: name or uri too long")
		return
	}
	s.slot, s.identLen, s.identNull, s.contentLength = slot, copy(room, ident), null, contentLength
	if s.trk = freelist.Pop(&h.trackers); s.trk == nil {
		s.trk = new(jsonrpc.Tracker)
	}
	// The reply opens at once, before the window that lets the params
	// in, so the server's reply credit is usually there by the time the
	// answer is.
	if s.doBegin(ex) {
		s.doWindow(int32(len(room) - s.identLen))
	}
}

// unserved returns the error that refuses a BEGIN the toolkit does not
// serve: a request kind the McpBeginEx union does not have (a newer
// server's), or no McpBeginEx at all.
func unserved(ext []byte, typeID int32) (int32, string) {
	const kindOff = frame.ExtensionPrefixSize
	if len(ext) > kindOff && int32(binary.LittleEndian.Uint32(ext[8:])) == typeID &&
		ext[kindOff] > mcp.McpBeginExKindResourcesUnsubscribe {
		return jsonrpc.CodeMethodNotFound, "Method not found"
	}
	return jsonrpc.CodeInvalidRequest, "Invalid request: not an MCP application stream"
}

// requestIdent returns a request's name or uri, whether it was null, and
// its contentLength. A generic request's method is not kept: the toolkit
// answers it Method not found.
func requestIdent(ex *mcp.McpBeginEx) ([]byte, bool, int32) {
	var r mcp.RequestBegin
	if ex.Kind() == mcp.McpBeginExKindRequest || !r.Read(ex) {
		return nil, true, -1
	}
	return r.Ident, r.IdentNull, r.ContentLength
}

func (s *stream) onData(d *frame.Data) {
	if s.state&lifecycle != 0 {
		s.doWindow(lifecycleWindow)
		return
	}
	if s.state&answered != 0 || s.slot == engine.NoSlot {
		return // bytes after the params, or of a stream being torn down
	}
	p := d.Payload()
	room := s.h.pool.Buffer(s.slot)[s.identLen+s.have:]
	if len(p) > len(room) {
		s.tooLarge()
		return
	}
	copy(room, p)
	// Params that are not JSON, or not an object or array, end with the
	// stream: the answer refuses them then.
	n, done, _ := s.trk.Feed(p)
	if k := s.trk.Kind(); done && (k == jsonrpc.KindObject || k == jsonrpc.KindArray) {
		s.have += n
		s.answer()
		return
	}
	s.have += len(p)
	switch {
	case s.contentLength >= 0 && s.have >= int(s.contentLength):
		s.answer()
	case len(p) == len(room):
		// The slot is full and the params go on: the window granted
		// is spent, so the server could never finish them.
		s.tooLarge()
	}
}

func (s *stream) onEnd() {
	switch {
	case s.state&lifecycle != 0:
		// The session is over.
		s.doEnd()
	case s.state&answered == 0 && s.slot != engine.NoSlot:
		s.answer()
	}
}

// onAbort is a cancellation: the server aborts the request's initial
// stream and resets its reply. Everything stops and nothing more is sent;
// a lifecycle's reply is aborted in turn.
func (s *stream) onAbort() {
	if s.state&lifecycle != 0 {
		s.doAbort()
		return
	}
	s.stop()
}

// onReset stops the answer and resets the initial stream, unless it is
// closed already.
func (s *stream) onReset() {
	s.stop()
	s.doReset(0, "")
}

// onWindow sends what of the answer waits for the credit the WINDOW
// brought.
func (s *stream) onWindow() {
	if len(s.pending) == 0 || s.Out.Closed() {
		return
	}
	rest := s.doData(s.pending)
	if s.Out.Closed() {
		return
	}
	if len(rest) > 0 {
		s.pending = s.pending[:copy(s.pending, rest)]
		return
	}
	s.pending = nil
	s.doEnd()
}

// tooLarge refuses params that outgrow the buffer slot. The server is
// still sending, so its initial stream is reset with the error; the reply
// carries the same error, as any other.
func (s *stream) tooLarge() {
	s.doReset(jsonrpc.CodeInvalidParams, "Invalid params: too large")
	s.releaseSlot()
	s.state |= answered | failed
	h := s.h
	h.resp.fail(jsonrpc.CodeInvalidParams, "Invalid params: too large")
	s.doAnswer(h.resp.out)
}

// answer answers the request once its params are complete.
func (s *stream) answer() {
	h := s.h
	s.state |= answered
	buf := h.pool.Buffer(s.slot)
	var ident []byte
	if !s.identNull {
		ident = buf[:s.identLen]
	}
	oc, p := h.resp.respond(s.kind, ident, buf[s.identLen:s.identLen+s.have])
	s.releaseSlot()
	switch oc {
	case outcomeLong:
		s.run = p
		s.run.token = bytes.Clone(p.token)
		s.start = h.w.Now()
		if s.run.token == nil {
			// Without a progress token no notification goes out: wait
			// for the last step only.
			s.step = s.run.steps - 1
		}
		s.schedule()
	case outcomeError:
		s.state |= failed
		s.doAnswer(h.resp.out)
	default:
		s.doAnswer(h.resp.out)
	}
}

// schedule asks for the SIGNAL of the next step, at its share of the
// duration from the start, so the steps do not drift.
func (s *stream) schedule() {
	h := s.h
	next := s.step + 1
	at := s.start.Add(time.Duration(int64(s.run.duration) * int64(next) / int64(s.run.steps)))
	s.cancelID = h.w.SignalAt(at, s.OriginID(), s.RoutedID(), s.ReplyID(), s.Out.Trace, signalStep, int32(next))
}

func (s *stream) onSignal(sig *frame.Signal) {
	if sig.SignalID() != signalStep || sig.CancelID() != s.cancelID || s.cancelID == 0 || s.Out.Closed() {
		return
	}
	s.cancelID = 0
	s.step++
	if s.run.token != nil && !s.doProgress() {
		return
	}
	if s.step < s.run.steps {
		s.schedule()
		return
	}
	h := s.h
	h.resp.out = appendLongResult(h.resp.out[:0], &s.run)
	s.run.token = nil
	s.doAnswer(h.resp.out)
}

// stop ends the work for a stream that is torn down: its timer, its slot
// and the answer it was sending.
func (s *stream) stop() {
	s.h.w.Disarm(&s.cancelID)
	s.releaseSlot()
	s.pending = nil
	s.run.token = nil
}

func (s *stream) releaseSlot() {
	if s.slot != engine.NoSlot {
		s.h.pool.Release(s.slot)
		s.slot = engine.NoSlot
	}
	if s.trk != nil {
		s.trk.Reset()
		s.h.trackers = append(s.h.trackers, s.trk)
		s.trk = nil
	}
}

// fail tears down a stream after a protocol violation or a refused send:
// the initial stream is reset and the reply aborted.
func (s *stream) fail() {
	s.stop()
	s.doReset(0, "")
	s.doAbort()
}

// refuse refuses a request before reading it, with RESET carrying
// McpResetEx.error; the reply is never opened, and the RESET gives it up
// (engine.Stream.Reset).
func (s *stream) refuse(code int32, msg string) {
	s.doReset(code, msg)
}

// doAnswer sends the answer in h.resp.out (or any bytes) on the reply as
// credit allows, then END.
func (s *stream) doAnswer(out []byte) {
	rest := s.doData(out)
	if s.Out.Closed() {
		return
	}
	if len(rest) > 0 {
		s.pending = append(s.pending[:0], rest...)
		return
	}
	s.doEnd()
}

// doData sends as much of p as the reply's credit allows, in frames of at
// most maxPayload bytes, and returns the rest: the first fragment is
// flagged INIT and the last FIN.
func (s *stream) doData(p []byte) []byte {
	n, err := binding.SendFragments(&s.Stream, p, !s.sent, true, s.h.maxPayload)
	if n > 0 {
		s.sent = true
	}
	if err != nil {
		s.fail()
		return nil
	}
	return p[n:]
}

// doBegin opens the reply with the McpBeginEx of the request's kind; a
// lifecycle's carries the session id and the toolkit's capabilities.
func (s *stream) doBegin(ex *mcp.McpBeginEx) bool {
	h := s.h
	err := s.BeginWith(0, func(b *frame.BeginBuilder) {
		b.ExtensionDone(h.replyBeginEx(h.exB.Begin.WrapSlot(b.ExtensionBuffer()), ex))
	})
	if err != nil {
		s.fail()
		return false
	}
	return true
}

// replyBeginEx writes the reply's McpBeginEx with b, wrapped where it
// goes: the request's kind, session id and name or uri, with
// contentLength unknown. The toolkit serves no generic request, so it has
// no reply for one.
func (h *Handler) replyBeginEx(b *mcp.McpBeginExBuilder, ex *mcp.McpBeginEx) (int, error) {
	b.TypeID(h.typeID)
	if ex.Kind() != mcp.McpBeginExKindRequest {
		mcp.BuildReply(b, ex, serverCapabilities)
	}
	return b.BuildLimit()
}

// doProgress sends the progress notification of the step just done, a
// FLUSH with McpFlushEx.progress, and reports whether it went out.
func (s *stream) doProgress() bool {
	h := s.h
	msg := append(h.resp.out[:0], "Step "...)
	msg = appendInt(msg, int64(s.step))
	msg = append(msg, " of "...)
	msg = appendInt(msg, int64(s.run.steps))
	h.resp.out = msg
	err := s.FlushWith(0, func(b *frame.FlushBuilder) {
		h.exB.Flush.WrapSlot(b.ExtensionBuffer()).TypeID(h.typeID).
			Progress().ID("").TokenBytes(s.run.token).
			Progress(int64(s.step)).Total(int64(s.run.steps)).MessageBytes(msg)
		b.ExtensionDone(h.exB.Flush.BuildLimit())
	})
	if err != nil {
		s.fail()
		return false
	}
	return true
}

// doWindow grants the initial direction max bytes beyond what it sent.
func (s *stream) doWindow(maximum int32) {
	s.In.Grant(maximum)
	if err := s.Window(); err != nil {
		s.fail()
	}
}

// doEnd ends the reply, with McpEndEx outcome ERROR after an error object.
func (s *stream) doEnd() {
	h := s.h
	err := s.EndWith(func(b *frame.EndBuilder) {
		b.BudgetID(s.Out.Budget).Reserved(0)
		if s.state&failed == 0 {
			return
		}
		b.ExtensionDone(h.exB.End.WrapSlot(b.ExtensionBuffer()).TypeID(h.typeID).Outcome(mcp.McpOutcomeError).BuildLimit())
	})
	if err != nil {
		s.stop()
	}
}

// doAbort aborts the reply, if it is open. The stream is being torn down,
// so an ABORT the ring refuses is only logged: the reply is closed all
// the same.
func (s *stream) doAbort() {
	if !s.Out.Opening() {
		return
	}
	if err := s.Abort(nil); err != nil {
		s.h.w.Logger().Warn("toolkit: abort not sent", "stream", s.OutID(), "err", err)
	}
}

// doReset resets the initial stream, unless it is closed, with
// McpResetEx.error{code, msg} unless code is 0. A RESET the ring refuses
// is only logged: the initial stream is closed all the same.
func (s *stream) doReset(code int32, msg string) {
	h := s.h
	err := s.ResetWith(func(b *frame.ResetBuilder) {
		if code == 0 {
			return
		}
		h.exB.Reset.WrapSlot(b.ExtensionBuffer()).TypeID(h.typeID).Error().Code(code).Message(msg)
		b.ExtensionDone(h.exB.Reset.BuildLimit())
	})
	if err != nil {
		h.w.Logger().Warn("toolkit: reset not sent", "stream", s.InID(), "err", err)
	}
}
