package server

import (
	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/binding/mcp/jsonrpc"
)

// subscriptions/listen (MCP.md §3.4; SEP-2575), 2026-07-28 only: a POST
// whose response stays open as an event stream of change notifications,
// the stateless successor of a session's GET stream. Each listen opens a
// lifecycle stream of its own, with a null session id, the client's
// capability bits and the list_changed notifications it asked for; the
// application's reply says which of them it can send (its capability
// bits), and those are the ones agreed. Resource-URI subscriptions
// (notifications.resourceSubscriptions) are not taken.

// listen starts a subscriptions/listen: params.notifications names what
// the client wants (go-sdk v1.8.0 refuses a listen without it, -32602),
// and caps is its _meta clientCapabilities.
func (r *request) listen(params, caps []byte) {
	h := r.h
	n := jsonrpc.Lookup(params, "notifications")
	if !isObject(n) {
		r.rpcError(codeInvalidParams, "Invalid params: missing required 'notifications' field")
		return
	}
	var subs uint16
	for f, i, ok := jsonrpc.NextField(n, 0); ok; f, i, ok = jsonrpc.NextField(n, i) {
		if string(f.Value) != "true" {
			continue
		}
		for _, k := range mcp.ListChanges() {
			if jsonrpc.KeyIs(f.Key, k.Listen) {
				subs |= uint16(k.Bit)
			}
		}
	}
	r.subs = subs
	r.waiting = waitListen
	r.lc = h.openLifecycle(nil, r, nil, clientCapabilities(caps), subs, true)
	if r.lc == nil {
		r.waiting = waitNone
		r.rpcError(codeInternalError, "Internal error")
	}
}

// listener returns the subscriptions/listen request the lifecycle still
// belongs to, or nil once that one has left it.
func (lc *lifecycle) listener() *request {
	if r := lc.req; r != nil && r.gen == lc.reqGen && r.lc == lc {
		return r
	}
	return nil
}

// listenEstablished takes the application's lifecycle reply: what it can
// send decides what is agreed. With nothing agreed the subscription is
// over at once, its result the answer; otherwise the response becomes an
// event stream that opens with the acknowledgement (SEP-2575: "MUST be the
// first message").
func (r *request) listenEstablished(caps uint16) {
	h := r.h
	r.waiting = waitNone
	r.subs &= caps & capListChanged
	if r.outOver {
		r.endListen()
		return
	}
	if r.subs == 0 {
		r.endListen()
		b := r.appendHead(h.scratch[:0], "result")
		b = r.appendListenResult(b)
		r.respondJSON(200, append(b, '}'))
		return
	}
	r.startSSE()
	b := r.appendEventHead(h.scratch[:0])
	b = append(b, `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"notifications":{`...)
	first := true
	for _, k := range mcp.ListChanges() {
		if r.subs&uint16(k.Bit) == 0 {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, '"')
		b = append(b, k.Listen...)
		b = append(b, `":true`...)
	}
	b = append(b, `},"_meta":`...)
	b = r.appendSubscriptionMeta(b)
	b = append(b, "}}\n\n"...)
	r.event(b)
	r.armKeepalive()
}

// listenNotify turns a lifecycle FLUSH into a notification on the listen
// stream, for a kind agreed only: a server MUST NOT push a notification
// the client did not ask for.
func (r *request) listenNotify(ext []byte) {
	h := r.h
	if r.waiting == waitListen || r.mode != modeSSE || r.outOver {
		return
	}
	if !h.flushEx.TryWrap(ext, 0, len(ext)) || h.flushEx.TypeID() != h.mcpTypeID {
		return
	}
	kind := h.flushEx.Kind()
	for _, k := range mcp.ListChanges() {
		if k.Flush != kind || r.subs&uint16(k.Bit) == 0 {
			continue
		}
		b := r.appendEventHead(h.scratch[:0])
		b = append(b, `{"jsonrpc":"2.0","method":`...)
		b = jsonrpc.AppendString(b, k.Method)
		b = append(b, `,"params":{"_meta":`...)
		b = r.appendSubscriptionMeta(b)
		b = append(b, "}}\n\n"...)
		r.event(b)
	}
}

// listenClosed handles the application ending the lifecycle: a refusal
// before its reply is an error; an END after it ends the subscription
// gracefully, with its result as the stream's last event; an ABORT cuts
// the stream short.
func (r *request) listenClosed(ended bool) {
	h := r.h
	r.lc = nil
	if r.kaID != 0 {
		h.w.Cancel(r.kaID)
		r.kaID = 0
	}
	if r.waiting == waitListen {
		r.waiting = waitNone
		if !r.outOver {
			r.rpcError(codeInternalError, "Internal error: the application refused the subscription")
		}
		return
	}
	if r.outOver || r.mode != modeSSE {
		return
	}
	if !ended {
		r.abortReply()
		return
	}
	b := r.appendEventHead(h.scratch[:0])
	b = r.appendHead(b, "result")
	b = r.appendListenResult(b)
	b = append(b, "}\n\n"...)
	r.event(b)
	r.endReply()
}

// endListen ends the subscription's lifecycle stream and leaves it: what
// the application sends on it from now on goes nowhere.
func (r *request) endListen() {
	lc := r.lc
	if r.waiting == waitListen {
		r.waiting = waitNone
	}
	if lc == nil {
		return
	}
	r.lc, lc.req = nil, nil
	if r.kaID != 0 {
		r.h.w.Cancel(r.kaID)
		r.kaID = 0
	}
	lc.end()
}

// appendListenResult appends the SubscriptionsListenResult: the
// subscription's id and the server's identity.
func (r *request) appendListenResult(dst []byte) []byte {
	dst = append(dst, `{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":`...)
	dst = append(dst, r.id[:r.idLen]...)
	dst = append(dst, `,"io.modelcontextprotocol/serverInfo":`...)
	dst = append(dst, r.h.serverInfo...)
	return append(dst, "}}"...)
}

// appendSubscriptionMeta appends the _meta object of the listen stream's
// notifications: the subscription id, which is the listen request's id
// as the client sent it (go-sdk v1.8.0).
func (r *request) appendSubscriptionMeta(dst []byte) []byte {
	dst = append(dst, `{"io.modelcontextprotocol/subscriptionId":`...)
	dst = append(dst, r.id[:r.idLen]...)
	return append(dst, '}')
}
