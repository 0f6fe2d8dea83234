package proxy

import (
	"errors"

	"github.com/sluicehq/sluice/binding"
	"github.com/sluicehq/sluice/binding/internal/streams"
	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/binding/mcp/jsonrpc"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/frame"
	"github.com/sluicehq/sluice/internal/freelist"
)

func (h *Handler) getLeg(r *request, route int) *leg {
	l := freelist.Pop(&h.freeLegs)
	if l == nil {
		l = &leg{}
		l.onFrame = l.onUp
	}
	l.r, l.route, l.state, l.sent = r, route, 0, 0
	l.params, l.body, l.errCode, l.errMsg = nil, l.body[:0], 0, l.errMsg[:0]
	return l
}

func (h *Handler) putLeg(l *leg) {
	l.r, l.params = nil, nil
	if cap(l.body) > maxList {
		l.body = nil
	}
	if len(h.freeLegs) < 1024 {
		h.freeLegs = append(h.freeLegs, l)
	}
}

// begin opens the leg: the request's BEGIN, with the name or uri the
// route knows, to the route's exit. The leg's frames carry the request's
// trace id and authorization.
func (l *leg) begin() bool {
	r := l.r
	h := r.h
	exitID := h.s.routes[l.route].exitID
	l.Connect(h.w, h.id, exitID, h.w.SupplyInitialID(exitID), l.onFrame)
	auth := h.routeAuth(r.internal, l.route, r.authorization)
	l.Out.Trace, l.Out.Auth = r.traceID, auth
	l.In.Trace, l.In.Auth = r.traceID, auth
	contentLength := int32(-1)
	switch {
	case l.params != nil:
		contentLength = int32(len(l.params))
	case !h.s.prefixed:
		contentLength = r.contentLength
	}
	ident, identNull := r.upIdent, r.identNull
	switch r.kind {
	case mcp.McpBeginExKindRequest:
		ident = r.ident
	case mcp.McpBeginExKindClientResponse:
		// Its result or error object goes up unchanged.
		return l.Begin(h.clientResponseBeginEx(r, r.upIdent, r.respError, r.contentLength)) == nil
	}
	return l.Begin(h.requestBeginEx(r.kind, r.sid, r.sidNull, ident, identNull, contentLength, r.timeout)) == nil
}

// onUp receives the route's reply frames and the throttle frames of the
// leg's request.
func (l *leg) onUp(t frame.FrameType, buf []byte) {
	r := l.r
	if r == nil {
		return
	}
	switch t {
	case frame.FrameWindow:
		if _, err := l.OnWindow(buf); streams.Received(err, r.fail) {
			if r.op == opCall {
				r.grant()
			}
			l.sendParams()
		}
	case frame.FrameReset:
		// Out closes either way; a malformed RESET carries no error.
		if rs, err := l.OnReset(buf); err == nil {
			l.onReset(&rs)
		} else {
			l.onReset(nil)
		}
	case frame.FrameChallenge:
		c, err := l.OnChallenge(buf)
		if err == nil && r.op == opCall && !r.In.Closed() {
			r.pause() // a person answers it, in their own time
			if relayChallenge(&r.Stream, &c, r.h.downChallenge(c.Extension(), l.route)) != nil {
				r.fail()
			}
		}
	default:
		l.onReply(t, buf)
	}
	r.maybeRelease()
}

// sendParams sends what the route's credit allows of the params, then
// END (for a call, once the downstream ended its request).
func (l *leg) sendParams() {
	r := l.r
	if l.Out.Closed() || l.params == nil && r.state&paramsDone == 0 {
		return
	}
	if !r.sendRest(&l.Stream, l.params, &l.sent) {
		return // the rest when the route's credit comes
	}
	if r.op == opCall {
		r.releaseSlot()
		if r.state&downEnded == 0 {
			return
		}
	}
	if l.End(nil) != nil {
		r.fail()
	}
}

// abortInitial aborts the leg's request while it is open, or resets its
// reply when the ring refuses the ABORT.
func (l *leg) abortInitial() { l.AbortElseReset() }

// resetReply resets the leg's reply while it is open, or aborts its
// request when the ring refuses the RESET.
func (l *leg) resetReply() { l.ResetElseAbort() }

// onReset is the route refusing or dropping the leg's request (rs is nil
// when its RESET was malformed). A call's refusal before its reply opened
// passes through to the downstream, with its McpResetEx, while the
// downstream's request is still open; after that it becomes the ERROR
// outcome. A fan-out leaves the route out.
func (l *leg) onReset(rs *frame.Reset) {
	r := l.r
	h := r.h
	l.errCode, l.errMsg = 0, l.errMsg[:0]
	if rs != nil {
		ext := rs.Extension()
		if h.resetEx.TryWrap(ext, 0, len(ext)) && h.resetEx.TypeID() == h.typeID && h.resetEx.Kind() == mcp.McpResetExKindError {
			e := h.resetEx.Error()
			l.errCode = e.Code()
			l.errMsg = append(l.errMsg, e.Message()...)
		}
	}
	if r.op != opCall {
		l.resetReply()
		r.settle(l, legFailed)
		return
	}
	if l.In.Opening() {
		return // the reply goes on: an ERROR outcome, typically
	}
	// The reply had not begun: OnReset gave it up with the request.
	switch {
	case !r.In.Closed() && r.state&local == 0:
		// The refusal passes through; the downstream's reply, not begun
		// either, is given up with it.
		r.releaseSlot()
		if relayReset(&r.Stream, rs) != nil {
			r.fail()
		}
	case r.state&local == 0:
		if l.errCode != 0 {
			r.respondError(l.errCode, l.errMsg, nil, nil)
		} else {
			r.respondError(jsonrpc.CodeInternalError, []byte("Internal error"), nil, nil)
		}
	}
}

// relays reports whether the leg's reply is passed on to the downstream
// as it comes: a call's (rewritten on the way, with rewriting).
func (l *leg) relays() bool { return l.r.op == opCall }

// onReply receives a frame of the route's reply: relayed for a call,
// collected for a fan-out.
// A malformed END or ABORT ends the reply as an ABORT would; a reply
// that breaks flow control or frame order fails.
func (l *leg) onReply(t frame.FrameType, buf []byte) {
	r := l.r
	if r.op == opCall && r.state&local != 0 {
		// The proxy answers by itself (the params were refused): the
		// route's reply is not wanted.
		l.unwanted(t, buf)
		return
	}
	if r.op == opCall {
		r.touch()
	}
	var err error
	switch t {
	case frame.FrameBegin:
		var b frame.Begin
		if b, err = l.OnBegin(buf); err == nil {
			l.onReplyBegin(&b)
		}
	case frame.FrameData:
		var d frame.Data
		if d, err = l.OnData(buf); err == nil {
			l.onReplyData(&d)
		}
	case frame.FrameFlush:
		var f frame.Flush
		if f, err = l.OnFlush(buf); err == nil {
			l.onReplyFlush(&f)
		}
	case frame.FrameEnd:
		var e frame.End
		if e, err = l.OnEnd(buf); err == nil {
			l.onReplyEnd(&e)
		} else if errors.Is(err, engine.ErrMalformedFrame) {
			l.onReplyAbort(nil)
			return
		}
	case frame.FrameAbort:
		var a frame.Abort
		if a, err = l.OnAbort(buf); err == nil {
			l.onReplyAbort(&a)
		} else if errors.Is(err, engine.ErrMalformedFrame) {
			l.onReplyAbort(nil)
			return
		}
	}
	if binding.Violation(err) {
		if l.relays() {
			r.fail()
		} else {
			l.failLeg()
		}
	}
}

// onReplyFlush relays a FLUSH of the route's reply: a call's as it came,
// a clientRequest with its id rewritten for the route. A fan-out relays
// only clientRequests (a request the route's server sends while it
// answers), opening the downstream reply early for them. A clientRequest
// that comes once the downstream reply is over is answered with an error
// (refuseClientRequest).
func (l *leg) onReplyFlush(f *frame.Flush) {
	r := l.r
	h := r.h
	if r.Out.Closed() {
		h.refuseClientRequest(l.route, r.sid, r.sidNull, f.Extension(), f.TraceID(), f.Authorization(), endedRequest)
		return
	}
	if r.op == opCall {
		ok, err := h.relayClientRequest(&r.Stream, f, l.route, r.sid, r.sidNull)
		if ok {
			r.pause()
		} else {
			ok, err = h.relayCancelled(&r.Stream, f, l.route)
		}
		if !ok {
			err = relayFlush(&r.Stream, f)
		}
		if err != nil {
			r.fail()
		}
		return
	}
	if !isClientRequest(h, f) {
		return
	}
	if l.state&legSettled != 0 || !r.Out.Opening() && !r.beginReply() {
		h.refuseClientRequest(l.route, r.sid, r.sidNull, f.Extension(), f.TraceID(), f.Authorization(), endedRequest)
		return
	}
	if _, err := h.relayClientRequest(&r.Stream, f, l.route, r.sid, r.sidNull); err != nil {
		r.fail()
	}
}

// isClientRequest reports whether f carries McpFlushEx clientRequest.
func isClientRequest(h *Handler, f *frame.Flush) bool {
	ext := f.Extension()
	return h.flushEx.TryWrap(ext, 0, len(ext)) && h.flushEx.TypeID() == h.typeID &&
		h.flushEx.Kind() == mcp.McpFlushExKindClientRequest
}

// unwanted closes a reply the proxy does not read: reset, unless it
// ended by itself.
func (l *leg) unwanted(t frame.FrameType, buf []byte) {
	switch t {
	case frame.FrameEnd:
		_, _ = l.OnEnd(buf)
	case frame.FrameAbort:
		_, _ = l.OnAbort(buf)
	default:
		l.resetReply()
	}
}

func (l *leg) onReplyBegin(b *frame.Begin) {
	r := l.r
	switch {
	case r.op != opCall:
		if l.state&legSettled != 0 {
			l.resetReply()
			return
		}
		l.grantReply()
	case r.Out.Closed():
		l.resetReply()
	case r.kind == mcp.McpBeginExKindClientResponse:
		// The reply names the downstream's id, not the route's.
		if relayBeginWith(&r.Stream, b, r.h.clientResponseReplyEx(r, b)) != nil {
			r.fail()
		}
	case relayBegin(&r.Stream, b) != nil:
		r.fail()
	}
}

func (l *leg) onReplyData(d *frame.Data) {
	switch {
	case !l.relays():
		l.collect(d)
	case l.r.state&rewriting != 0:
		l.rewriteData(d)
	case relayData(&l.r.Stream, d) != nil:
		l.r.fail()
	default:
		l.r.dataOut = true
	}
}

func (l *leg) onReplyEnd(e *frame.End) {
	r := l.r
	l.abortInitial() // a route that answered is done with the params
	if r.state&rewriting != 0 {
		l.closeURI()
	}
	switch {
	case r.op != opCall:
		if l.outcome(e) == mcp.McpOutcomeError {
			r.settle(l, legError)
		} else {
			r.settle(l, 0)
		}
	case r.state&rewriting != 0 && len(r.held) > 0 && !r.Out.Closed():
		// The END goes once the bytes before it have.
		r.state |= endHeld
		r.endExt = append(r.endExt[:0], e.Extension()...)
		r.endTrace, r.endAuth = e.TraceID(), e.Authorization()
	case !r.Out.Closed() && relayEnd(&r.Stream, e) != nil:
		r.fail()
	}
}

// onReplyAbort ends the route's reply abruptly (a is nil when it came as
// a malformed END or ABORT).
func (l *leg) onReplyAbort(a *frame.Abort) {
	r := l.r
	l.abortInitial()
	switch {
	case r.op != opCall:
		r.settle(l, legFailed)
	case !r.Out.Closed() && relayAbort(&r.Stream, a) != nil:
		r.resetDown(0, "")
	}
}

// collect appends a DATA's payload to the leg's body, within the list
// bound, and renews the reply's credit.
func (l *leg) collect(d *frame.Data) {
	r := l.r
	if l.state&legSettled != 0 {
		return
	}
	p := d.Payload()
	r.total += len(p)
	if r.total > maxList {
		l.failLeg()
		return
	}
	l.body = append(l.body, p...)
	l.grantReply()
}

// failLeg gives up on a fan-out's leg: its route is left out.
func (l *leg) failLeg() {
	l.resetReply()
	l.abortInitial()
	l.r.settle(l, legFailed)
}

func (l *leg) grantReply() {
	if l.In.Grant(legWindow) && l.Window() != nil {
		l.failLeg()
	}
}

// outcome reads the McpEndEx of an END; none reads as OK.
func (l *leg) outcome(e *frame.End) mcp.McpOutcome {
	h := l.r.h
	ext := e.Extension()
	if h.endEx.TryWrap(ext, 0, len(ext)) && h.endEx.TypeID() == h.typeID {
		return h.endEx.Outcome()
	}
	return mcp.McpOutcomeOk
}

// Relays. A frame the proxy passes on between a call's downstream and
// its route keeps what it carries: flags, reserved, affinity, extension,
// trace id and authorization. Its ids and flow are those of the stream it
// goes on, whose direction carries the frame's trace id and authorization
// for as long as it is sent (passOn).

// relayBegin opens s's Out with the route's reply BEGIN b, from b's
// sequence and acknowledge: the reply's DATA keeps its sequence on the
// way through.
func relayBegin(s *engine.Stream, b *frame.Begin) error {
	return relayBeginWith(s, b, b.Extension())
}

// relayBeginWith is relayBegin with extension ext in place of b's.
func relayBeginWith(s *engine.Stream, b *frame.Begin, ext []byte) error {
	s.Out.Seq, s.Out.Ack = b.Sequence(), b.Acknowledge()
	return passOn(&s.Out, b.TraceID(), b.Authorization(), func() error {
		return s.BeginWith(b.Affinity(), func(fb *frame.BeginBuilder) { fb.Extension(ext) })
	})
}

// relayData passes DATA d on as it came, a null payload null.
func relayData(s *engine.Stream, d *frame.Data) error {
	payload, ext := d.Payload(), d.Extension()
	return passOn(&s.Out, d.TraceID(), d.Authorization(), func() error {
		return s.DataWith(frame.Flags(d.Flags()), d.Reserved(), func(b *frame.DataBuilder) {
			if d.HasPayload() {
				b.Payload(payload)
			} else {
				b.PayloadNull()
			}
			b.Extension(ext)
		})
	})
}

func relayFlush(s *engine.Stream, f *frame.Flush) error {
	return relayFlushExt(s, f, f.Extension())
}

// relayFlushExt passes f on up s with extension ext in place of f's own.
func relayFlushExt(s *engine.Stream, f *frame.Flush, ext []byte) error {
	return passOn(&s.Out, f.TraceID(), f.Authorization(), func() error {
		return s.FlushWith(f.Reserved(), func(b *frame.FlushBuilder) { b.Extension(ext) })
	})
}

func relayEnd(s *engine.Stream, e *frame.End) error {
	return passOn(&s.Out, e.TraceID(), e.Authorization(), func() error { return s.End(e.Extension()) })
}

// relayAbort aborts s's Out with a's extension; a nil a is an ABORT
// without one.
func relayAbort(s *engine.Stream, a *frame.Abort) error {
	if a == nil {
		return s.Abort(nil)
	}
	return passOn(&s.Out, a.TraceID(), a.Authorization(), func() error { return s.Abort(a.Extension()) })
}

// relayWindow offers s's In, the reply the proxy relays, what the
// downstream's WINDOW w offers for it (src's Out, which w credited), less
// what is still on its way through.
func relayWindow(s, src *engine.Stream, w *frame.Window) error {
	s.In.Ack = s.In.Seq - (src.Out.Seq - src.Out.Ack)
	s.In.Max, s.In.Pad, s.In.Budget = src.Out.Max, src.Out.Pad, src.Out.Budget
	s.In.Min, s.In.Cap = src.Out.Min, src.Out.Cap
	return passOn(&s.In, w.TraceID(), w.Authorization(), s.Window)
}

// relayReset resets s's In with rs's extension; a nil rs is a RESET
// without one.
func relayReset(s *engine.Stream, rs *frame.Reset) error {
	if rs == nil {
		return s.Reset(nil)
	}
	return passOn(&s.In, rs.TraceID(), rs.Authorization(), func() error { return s.Reset(rs.Extension()) })
}

// relayChallenge passes c on down s with extension ext (c's own, or the
// one downChallenge made of it).
func relayChallenge(s *engine.Stream, c *frame.Challenge, ext []byte) error {
	return passOn(&s.In, c.TraceID(), c.Authorization(), func() error { return s.Challenge(ext) })
}

// passOn runs send, a relayed frame's sender, with d carrying the trace
// id and authorization the frame came with, and then its own again.
func passOn(d *engine.Direction, trace, auth int64, send func() error) error {
	t, a := d.Trace, d.Auth
	d.Trace, d.Auth = trace, auth
	err := send()
	d.Trace, d.Auth = t, a
	return err
}
