package proxy

import (
	"strconv"
	"time"

	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/binding/mcp/jsonrpc"
)

// startList fans a list request out to its routes at once: every route,
// or those the cursor names, each with its own cursor.
func (r *request) startList() {
	h := r.h
	routes := h.s.routes
	r.entries = r.entries[:0]
	if cs, ce, ok := member(r.params, "cursor"); ok && string(r.params[cs:ce]) != "null" && string(r.params[cs:ce]) != `""` {
		if r.params[cs] != '"' {
			r.respondError(jsonrpc.CodeInvalidParams, []byte("Invalid cursor"), nil, nil)
			return
		}
		var err error
		r.entries, r.cbuf, err = decodeCursor(r.params[cs+1:ce-1], r.cbuf, r.kind, h.s.fingerprint, len(routes), r.entries)
		if err != nil {
			r.respondError(jsonrpc.CodeInvalidParams, []byte("Invalid cursor"), nil, nil)
			return
		}
	} else {
		for i := range routes {
			r.entries = append(r.entries, cursorEntry{route: i})
		}
	}
	for _, e := range r.entries {
		if !h.allowed(e.route, h.routeAuth(r.internal, e.route, r.authorization)) {
			continue
		}
		l := h.getLeg(r, e.route)
		l.pbuf = append(l.pbuf[:0], '{')
		if e.cursor != nil {
			l.pbuf = append(l.pbuf, `"cursor":"`...)
			l.pbuf = append(l.pbuf, e.cursor...)
			l.pbuf = append(l.pbuf, '"')
		}
		l.pbuf = append(l.pbuf, '}')
		l.params = l.pbuf
		r.legs = append(r.legs, l)
	}
	if len(r.legs) == 0 {
		// No route the caller may reach: an empty list.
		r.finishFanout()
		return
	}
	r.reviveLegs()
}

// startSetLevel fans logging/setLevel out to the routes whose lifecycle
// for the session declared SERVER_LOGGING (every route when the session
// is not known here), with the params as they came.
func (r *request) startSetLevel() {
	h := r.h
	mask, known := uint64(0), false
	if !r.sidNull {
		mask, known = h.sessions.logging(r.sid)
	}
	for i := range h.s.routes {
		if known && mask&(1<<uint(i)) == 0 || !h.allowed(i, r.authorization) {
			continue
		}
		l := h.getLeg(r, i)
		l.params = r.params
		r.legs = append(r.legs, l)
	}
	if len(r.legs) == 0 {
		r.respondResult(emptyResult)
		return
	}
	r.startLegs()
}

var emptyResult = []byte("{}")

// startLegs opens every leg at once, each with its route's timeout for
// the method, under one timer armed for the earliest.
func (r *request) startLegs() {
	h := r.h
	r.state |= started
	r.open = len(r.legs)
	now := h.w.Now()
	for _, l := range r.legs {
		l.state &^= legIdle
		l.deadline = now.Add(h.s.routes[l.route].timeoutOf(r.kind, r.ident))
		if l.state&legDown != 0 {
			l.forgo()
			r.settle(l, legFailed)
			continue
		}
		if !l.begin() {
			r.settle(l, legFailed)
		}
	}
	r.armFanout()
}

// armFanout arms the fan-out's timer for the earliest deadline of the
// routes that have not answered.
func (r *request) armFanout() {
	if r.open <= 0 || r.timer != 0 || r.Out.Closed() {
		return
	}
	var first time.Time
	for _, l := range r.legs {
		if l.state&legSettled == 0 && (first.IsZero() || l.deadline.Before(first)) {
			first = l.deadline
		}
	}
	if !first.IsZero() {
		r.timer = r.h.w.TimerAt(first, r.onTimeout)
	}
}

// timedOut is the request's timer: a call's timeout, or a fan-out's,
// which leaves out the routes whose time has run out with -32001 naming
// each.
func (r *request) timedOut() {
	r.timer = 0
	if r.state&released != 0 {
		return
	}
	if r.op == opCall {
		r.callTimedOut()
		r.maybeRelease()
		return
	}
	h := r.h
	now := h.w.Now()
	for _, l := range r.legs {
		if l.state&legSettled == 0 && !now.Before(l.deadline) {
			l.abortInitial()
			l.resetReply()
			d := h.s.routes[l.route].timeoutOf(r.kind, r.ident)
			h.log.Warn("route did not answer in time", "route", h.s.routes[l.route].label(), "method", methodName(r.kind, r.ident), "timeout", d)
			h.routeMetrics(l.route).timeouts.Add(1)
			l.errCode = codeRequestTimeout
			l.errMsg = append(l.errMsg[:0], h.timeoutMessage(l.route, r.kind, r.ident, d)...)
			r.settle(l, legFailed)
		}
	}
	r.armFanout()
	r.maybeRelease()
}

// settle notes a leg's part of a fan-out; the last one finishes it.
func (r *request) settle(l *leg, how uint16) {
	if l.state&legSettled != 0 {
		return
	}
	l.state |= legSettled | how
	r.open--
	if r.open == 0 && !r.Out.Closed() {
		r.h.w.Disarm(&r.timer)
		r.finishFanout()
	}
}

// finishFanout answers once every leg is settled: the merged list, or {}
// for logging/setLevel; when every route failed, the first one's error.
func (r *request) finishFanout() {
	h := r.h
	var failed *leg
	ok := 0
	for _, l := range r.legs {
		if l.state&(legFailed|legError) != 0 || r.op == opList && !validate(l.body) {
			h.log.Warn("route left out", "route", h.s.routes[l.route].label(), "method", methodName(r.kind, r.ident),
				"code", l.errCode, "message", string(l.errMsg))
			if failed == nil {
				failed = l
			}
			continue
		}
		ok++
	}
	if ok == 0 && failed != nil {
		r.failWith(failed)
		return
	}
	if r.op != opList {
		r.respondResult(emptyResult)
		return
	}
	parts := make([]part, 0, ok)
	for _, l := range r.legs {
		if l.state&(legFailed|legError) == 0 && validate(l.body) {
			parts = append(parts, part{route: l.route, body: l.body})
		}
	}
	lk := listKindOf(r.kind)
	var view *toolsView
	if r.kind == mcp.McpBeginExKindToolsList && h.s.cache != nil && !r.internal {
		view = h.s.cache.tools
	}
	out, next, bad, shadowed := appendMerged(r.answer[:0], lk, h.s.routes, h.s.prefixed, parts, h.cursors[:0], view)
	for _, i := range bad {
		h.log.Warn("route's list result has no "+lk.key, "toolkit", h.s.routes[i].toolkit)
	}
	if shadowed > 0 && !h.shadowLogged {
		h.shadowLogged = true
		h.log.Warn("list items left out: an earlier item has their name (logged once)", "method", methodName(r.kind, r.ident), "items", shadowed)
	}
	if len(next) > 0 {
		out = append(out, `,"nextCursor":"`...)
		out, h.scratch = appendCursor(out, h.scratch, r.kind, h.s.fingerprint, next)
		out = append(out, '"')
	}
	out = appendCacheHints(out, lk, parts)
	if ok < len(r.legs) {
		out = r.appendMissing(out)
	}
	out = append(out, '}')
	h.cursors = next[:0]
	r.answer = out
	if len(out) > maxList {
		r.respondError(jsonrpc.CodeInternalError, []byte("Internal error: list too large"), nil, nil)
		return
	}
	r.respond()
}

// failWith answers with a failed route's error: its ERROR outcome's
// object, its McpResetEx error, or -32603.
func (r *request) failWith(l *leg) {
	switch {
	case l.state&legError != 0 && len(l.body) > 0:
		r.state |= answerError
		r.answer = append(r.answer[:0], l.body...)
		r.respond()
	case l.errCode != 0:
		r.respondError(l.errCode, l.errMsg, nil, nil)
	default:
		r.respondError(jsonrpc.CodeInternalError, []byte("Internal error"), nil, nil)
	}
}

// respondResult answers with a fixed result.
func (r *request) respondResult(result []byte) {
	r.answer, r.shared = append(r.answer[:0], result...), nil
	r.respond()
}

// methodName names a request kind for logs: ident is the generic kind's
// method.
func methodName(kind uint8, ident []byte) string {
	if m := mcp.KindMethod(kind); m != nil {
		return m.Name
	}
	if kind == mcp.McpBeginExKindRequest {
		return string(ident)
	}
	return "request"
}

// metaMissing is the _meta member a merged list carries when routes were
// left out of it: each one's route label and error.
const metaMissing = "sluice/missingRoutes"

// appendMissing marks a merged list that left routes out: a _meta member
// naming each (its route, the error code and message), the metric, so
// that a client and an operator can tell a partial list from a whole one.
func (r *request) appendMissing(dst []byte) []byte {
	h := r.h
	dst = append(dst, `,"_meta":{"`+metaMissing+`":[`...)
	n := 0
	for _, l := range r.legs {
		if l.state&(legFailed|legError) == 0 && validate(l.body) {
			continue
		}
		h.routeMetrics(l.route).partial.Add(1)
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		code, msg := l.failure()
		dst = append(dst, `{"route":`...)
		dst = jsonrpc.AppendString(dst, []byte(h.s.routes[l.route].label()))
		dst = append(dst, `,"code":`...)
		dst = appendInt(dst, int64(code))
		dst = append(dst, `,"message":`...)
		dst = jsonrpc.AppendString(dst, msg)
		dst = append(dst, '}')
	}
	return append(dst, "]}"...)
}

// failure is why a fan-out left the leg out: its refusal's or timeout's
// error, the message of the error object it answered, or what was wrong
// with its result.
func (l *leg) failure() (int32, []byte) {
	switch {
	case l.errCode != 0:
		return l.errCode, l.errMsg
	case l.state&legError != 0:
		code, msg := int32(jsonrpc.CodeInternalError), []byte("Internal error")
		if cs, ce, ok := member(l.body, "code"); ok {
			if v, err := strconv.ParseInt(string(l.body[cs:ce]), 10, 32); err == nil {
				code = int32(v)
			}
		}
		if ms, me, ok := member(l.body, "message"); ok && l.body[ms] == '"' {
			if m, err := jsonrpc.Unquote(nil, l.body[ms:me]); err == nil {
				msg = m
			}
		}
		return code, msg
	case l.state&legFailed != 0:
		return jsonrpc.CodeInternalError, []byte("Internal error: the route dropped the request")
	}
	return jsonrpc.CodeInternalError, []byte("Internal error: the route's result is not a list")
}
