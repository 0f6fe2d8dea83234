package proxy

import (
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
	r.startLegs()
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
		if known && mask&(1<<uint(i)) == 0 {
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

// startLegs opens every leg at once, under one timer.
func (r *request) startLegs() {
	h := r.h
	r.state |= started
	r.open = len(r.legs)
	for _, l := range r.legs {
		if !l.begin() {
			r.settle(l, legFailed)
		}
	}
	if r.open > 0 {
		r.timer = h.w.TimerAt(h.w.Now().Add(fanoutTimeout), r.onTimeout)
	}
}

// timedOut leaves out the routes that have not answered.
func (r *request) timedOut() {
	r.timer = 0
	if r.state&released != 0 {
		return
	}
	for _, l := range r.legs {
		if l.state&legSettled == 0 {
			l.abortInitial()
			l.resetReply()
			r.h.log.Warn("route did not answer in time", "toolkit", r.h.s.routes[l.route].toolkit)
			r.settle(l, legFailed)
		}
	}
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
		disarm(r.h.w, &r.timer)
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
			h.log.Warn("route left out", "toolkit", h.s.routes[l.route].toolkit, "method", methodName(r.kind, r.ident),
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
	out, next, bad := appendMerged(r.answer[:0], lk, h.s.routes, h.s.prefixed, parts, h.cursors[:0])
	for _, i := range bad {
		h.log.Warn("route's list result has no "+lk.key, "toolkit", h.s.routes[i].toolkit)
	}
	if len(next) > 0 {
		out = append(out, `,"nextCursor":"`...)
		out, h.scratch = appendCursor(out, h.scratch, r.kind, h.s.fingerprint, next)
		out = append(out, '"')
	}
	out = appendCacheHints(out, lk, parts)
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
