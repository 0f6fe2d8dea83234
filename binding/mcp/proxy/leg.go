package proxy

import (
	"github.com/sluicehq/sluice/binding/mcp"
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
	l.out, l.in = engine.Flow{}, engine.Flow{}
	l.params, l.body, l.errCode, l.errMsg = nil, l.body[:0], 0, l.errMsg[:0]
	return l
}

func (h *Handler) putLeg(l *leg) {
	l.r, l.initialID, l.replyID, l.params = nil, 0, 0, nil
	if cap(l.body) > maxList {
		l.body = nil
	}
	if len(h.freeLegs) < 1024 {
		h.freeLegs = append(h.freeLegs, l)
	}
}

// begin opens the leg: the request's BEGIN, with the name or uri the
// route knows, to the route's exit.
func (l *leg) begin() bool {
	r := l.r
	h := r.h
	rt := &h.s.routes[l.route]
	l.initialID = h.w.SupplyInitialID(rt.exitID)
	l.replyID = engine.ReplyID(l.initialID)
	contentLength := int32(-1)
	switch {
	case l.params != nil:
		contentLength = int32(len(l.params))
	case !h.s.prefixed:
		contentLength = r.contentLength
	}
	ident, identNull := r.upIdent, r.identNull
	if r.kind == mcp.McpBeginExKindRequest {
		ident = r.ident
	}
	ext := h.requestBeginEx(r.kind, r.sid, r.sidNull, ident, identNull, contentLength, r.timeout)
	buf := h.w.WriteBuffer()
	b := h.beginB.Wrap(buf, 0, len(buf)).
		OriginID(h.id).RoutedID(rt.exitID).StreamID(l.initialID).
		Sequence(0).Acknowledge(0).Maximum(0).
		TraceID(r.traceID).Authorization(r.authorization).Affinity(0)
	if ext != nil {
		b.Extension(ext)
	}
	n, err := b.BuildLimit()
	if err == nil {
		err = h.w.NewStream(buf[:n], l.onFrame)
	}
	if err != nil {
		l.state |= legInClosed | legReplyClosed
		return false
	}
	return true
}

// onUp receives the route's reply frames and the throttle frames of the
// leg's request.
func (l *leg) onUp(t frame.FrameType, buf []byte) {
	r := l.r
	if r == nil {
		return
	}
	h := r.h
	if !h.header.TryWrap(buf, 0, len(buf)) {
		return
	}
	id := h.header.StreamID()
	if t.IsThrottle() {
		if id != l.initialID {
			return
		}
		switch t {
		case frame.FrameWindow:
			if h.window.TryWrap(buf, 0, len(buf)) {
				if l.out.OnWindow(&h.window) != nil {
					r.fail()
					break
				}
				if r.op == opCall {
					r.grant()
				}
				l.sendParams()
			}
		case frame.FrameReset:
			l.onReset(buf)
		case frame.FrameChallenge:
			if r.op == opCall && r.state&downInClosed == 0 {
				if h.forward(frame.FrameChallenge, buf, r.originID, h.id, r.initialID, &r.in) != nil {
					r.fail()
				}
			}
		}
		r.maybeRelease()
		return
	}
	if id != l.replyID {
		return
	}
	if r.op == opCall {
		l.onRelayReply(t, buf)
	} else {
		l.onCollectReply(t, buf)
	}
	r.maybeRelease()
}

// sendParams sends what the route's credit allows of the params, then
// END (for a call, once the downstream ended its request).
func (l *leg) sendParams() {
	r := l.r
	if l.state&legInClosed != 0 || l.params == nil && r.state&paramsDone == 0 {
		return
	}
	h := r.h
	rt := &h.s.routes[l.route]
	for l.sent < len(l.params) {
		rest := l.params[l.sent:]
		n := int(min(int64(len(rest)), l.out.Available()-int64(l.out.Pad), int64(h.maxPayload)))
		if n <= 0 {
			return
		}
		var flags frame.Flags
		if l.sent == 0 {
			flags |= frame.FlagDataInit
		}
		if n == len(rest) {
			flags |= frame.FlagDataFin
		}
		if h.doData(h.id, rt.exitID, l.initialID, r.traceID, r.authorization, &l.out, flags, rest[:n]) != nil {
			r.fail()
			return
		}
		l.sent += n
	}
	if r.op == opCall {
		r.releaseSlot()
		if r.state&downEnded == 0 {
			return
		}
	}
	l.state |= legInClosed
	if h.doEnd(h.id, rt.exitID, l.initialID, r.traceID, r.authorization, &l.out, nil) != nil {
		r.fail()
	}
}

// abortInitial aborts the leg's request while it is open.
func (l *leg) abortInitial() {
	if l.state&legInClosed != 0 || l.initialID == 0 {
		return
	}
	l.state |= legInClosed
	r := l.r
	h := r.h
	_ = h.doAbort(h.id, h.s.routes[l.route].exitID, l.initialID, r.traceID, r.authorization, &l.out)
}

// resetReply resets the leg's reply while it is open (or never opened:
// that releases the engine's registration of it).
func (l *leg) resetReply() {
	if l.state&legReplyClosed != 0 || l.initialID == 0 {
		return
	}
	l.state |= legReplyClosed
	r := l.r
	h := r.h
	_ = h.doReset(h.id, h.s.routes[l.route].exitID, l.replyID, r.traceID, r.authorization, &l.in, nil)
}

// onReset is the route refusing or dropping the leg's request. A call's
// refusal before its reply opened passes through to the downstream, with
// its McpResetEx, while the downstream's request is still open; after
// that it becomes the ERROR outcome. A fan-out leaves the route out.
func (l *leg) onReset(buf []byte) {
	r := l.r
	h := r.h
	l.state |= legInClosed
	l.errCode, l.errMsg = 0, l.errMsg[:0]
	if h.reset.TryWrap(buf, 0, len(buf)) {
		ext := h.reset.Extension()
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
	if l.state&legReplyOpened != 0 {
		return // the reply goes on: an ERROR outcome, typically
	}
	l.resetReply()
	switch {
	case r.state&(downInClosed|local) == 0:
		r.state |= downInClosed
		r.releaseSlot()
		if h.forward(frame.FrameReset, buf, r.originID, h.id, r.initialID, &r.in) != nil {
			r.fail()
		}
		// The downstream resets the reply it will never read.
	case r.state&local == 0:
		if l.errCode != 0 {
			r.respondError(l.errCode, l.errMsg, nil, nil)
		} else {
			r.respondError(codeInternalError, []byte("Internal error"), nil, nil)
		}
	}
}

// onRelayReply relays a call's reply: unchanged but for its ids, or, for
// resources/read with prefixes, collected and answered with the uris
// prefixed.
func (l *leg) onRelayReply(t frame.FrameType, buf []byte) {
	r := l.r
	h := r.h
	rt := &h.s.routes[l.route]
	if r.state&local != 0 && r.state&buffered == 0 {
		// The proxy answers by itself (the params were refused): the
		// route's reply is not wanted.
		if t == frame.FrameEnd || t == frame.FrameAbort {
			l.state |= legReplyClosed
		} else {
			l.resetReply()
		}
		return
	}
	switch t {
	case frame.FrameBegin:
		l.state |= legReplyOpened
		if r.state&downReplyClosed != 0 {
			l.resetReply()
			return
		}
		if err := h.forward(t, buf, r.originID, h.id, r.replyID, nil); err != nil {
			r.fail()
			return
		}
		r.state |= downReplyOpened
		if r.state&buffered != 0 {
			l.in.Seq, l.in.Ack = h.header.Sequence(), h.header.Acknowledge()
			l.grantReply()
		}
	case frame.FrameData:
		if r.state&buffered != 0 {
			l.collect(buf)
			return
		}
		if h.forward(t, buf, r.originID, h.id, r.replyID, nil) != nil {
			r.fail()
		}
	case frame.FrameFlush:
		var f *engine.Flow
		if r.state&buffered != 0 {
			f = &r.out
			if h.flush.TryWrap(buf, 0, len(buf)) {
				_ = l.in.OnFrame(h.flush.Sequence())
			}
		}
		if r.state&downReplyClosed == 0 && h.forward(t, buf, r.originID, h.id, r.replyID, f) != nil {
			r.fail()
		}
	case frame.FrameEnd:
		l.state |= legReplyClosed
		l.abortInitial() // a route that answered is done with the params
		if r.state&buffered != 0 {
			r.answer = r.answer[:0]
			if l.outcome(buf) == mcp.McpOutcomeError {
				r.state |= answerError
				r.answer = append(r.answer, l.body...)
			} else {
				r.answer = appendPrefixedURIs(r.answer, l.body, rt.uri)
			}
			r.respond()
			return
		}
		if r.state&downReplyClosed == 0 {
			r.state |= downReplyClosed
			if h.forward(t, buf, r.originID, h.id, r.replyID, nil) != nil {
				r.state |= downReplyClosed
			}
		}
	case frame.FrameAbort:
		l.state |= legReplyClosed
		l.abortInitial()
		if r.state&buffered != 0 {
			r.abortReply()
			return
		}
		if r.state&downReplyClosed == 0 {
			r.state |= downReplyClosed
			_ = h.forward(t, buf, r.originID, h.id, r.replyID, nil)
		}
	}
}

// onCollectReply collects a fan-out leg's reply.
func (l *leg) onCollectReply(t frame.FrameType, buf []byte) {
	r := l.r
	h := r.h
	switch t {
	case frame.FrameBegin:
		l.state |= legReplyOpened
		if l.state&legSettled != 0 {
			l.resetReply()
			return
		}
		l.in.Seq, l.in.Ack = h.header.Sequence(), h.header.Acknowledge()
		l.grantReply()
	case frame.FrameData:
		l.collect(buf)
	case frame.FrameFlush:
		if h.flush.TryWrap(buf, 0, len(buf)) {
			_ = l.in.OnFrame(h.flush.Sequence())
		}
	case frame.FrameEnd:
		l.state |= legReplyClosed
		l.abortInitial()
		if l.outcome(buf) == mcp.McpOutcomeError {
			r.settle(l, legError)
		} else {
			r.settle(l, 0)
		}
	case frame.FrameAbort:
		l.state |= legReplyClosed
		l.abortInitial()
		r.settle(l, legFailed)
	}
}

// collect appends a DATA's payload to the leg's body, within the list
// bound, and renews the reply's credit.
func (l *leg) collect(buf []byte) {
	r := l.r
	h := r.h
	if !h.data.TryWrap(buf, 0, len(buf)) || l.state&legSettled != 0 {
		return
	}
	if l.in.OnData(&h.data) != nil {
		l.failLeg()
		return
	}
	p := h.data.Payload()
	r.total += len(p)
	if r.total > maxList {
		l.failLeg()
		return
	}
	l.body = append(l.body, p...)
	l.grantReply()
}

// failLeg gives up on a leg: a call's reply is aborted, a fan-out's
// route left out.
func (l *leg) failLeg() {
	r := l.r
	l.resetReply()
	l.abortInitial()
	if r.op == opCall {
		r.state |= local
		r.respondError(codeInternalError, []byte("Internal error: result too large"), nil, nil)
		return
	}
	r.settle(l, legFailed)
}

func (l *leg) grantReply() {
	r := l.r
	h := r.h
	if l.in.Grant(legWindow) {
		if h.doWindow(h.id, h.s.routes[l.route].exitID, l.replyID, r.traceID, r.authorization, &l.in) != nil {
			l.failLeg()
		}
	}
}

// outcome reads the McpEndEx of an END; none reads as OK.
func (l *leg) outcome(buf []byte) mcp.McpOutcome {
	h := l.r.h
	if !h.end.TryWrap(buf, 0, len(buf)) {
		return mcp.McpOutcomeOk
	}
	ext := h.end.Extension()
	if h.endEx.TryWrap(ext, 0, len(ext)) && h.endEx.TypeID() == h.typeID {
		return h.endEx.Outcome()
	}
	return mcp.McpOutcomeOk
}
