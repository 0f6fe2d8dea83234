package server

import (
	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/binding/mcp/jsonrpc"
	"github.com/sluicehq/sluice/internal/freelist"
)

// subscriptions/listen (MCP.md §3.4; SEP-2575), 2026-07-28 only: a POST
// whose response stays open as an event stream of change notifications,
// the stateless successor of a session's GET stream. Each listen opens a
// lifecycle stream of its own, with a null session id, the client's
// capability bits and the list_changed notifications it asked for; the
// application's reply says which of them it can send (its capability
// bits), and those are the ones agreed. Resource-URI subscriptions
// (notifications.resourceSubscriptions) are not taken.

// listen is a subscriptions/listen, the role its POST (p) takes: the
// lifecycle stream it opened (lc, until either side ends it) and the
// list_changed bits it asked for, then those agreed (subs). Until the
// application's reply, the POST has no response yet.
type listen struct {
	p    *post
	lc   *lifecycle
	subs uint16
}

// recycle puts the listen on the free list: its POST is done with it.
func (l *listen) recycle() {
	h := l.p.h
	*l = listen{}
	h.listens = append(h.listens, l)
}

// listen starts a subscriptions/listen: params.notifications names what
// the client wants (go-sdk v1.8.0 refuses a listen without it, -32602),
// and caps is its _meta clientCapabilities.
func (p *post) listen(params, caps []byte) {
	h := p.h
	n, ok := field(params, "notifications")
	if !ok || !isObject(n) {
		p.rpcError(codeInvalidParams, "Invalid params: missing required 'notifications' field")
		return
	}
	var subs uint16
	for m, i, ok := jsonrpc.NextField(n, 0); ok; m, i, ok = jsonrpc.NextField(n, i) {
		if string(m.Value) != "true" {
			continue
		}
		for _, k := range mcp.ListChanges() {
			if jsonrpc.KeyIs(m.Key, k.Listen) {
				subs |= uint16(k.Bit)
			}
		}
	}
	l := freelist.Pop(&h.listens)
	if l == nil {
		l = new(listen)
	}
	l.p, l.subs = p, subs
	l.lc = h.openLifecycle(nil, p, nil, clientCapabilities(caps), subs, true)
	if l.lc == nil {
		l.recycle()
		p.rpcError(codeInternalError, "Internal error")
		return
	}
	p.ls = l
}

// listener returns the subscriptions/listen the lifecycle still belongs
// to, or nil once that one has left it.
func (lc *lifecycle) listener() *listen {
	if ref := lc.req; ref.live() && ref.p.ls != nil && ref.p.ls.lc == lc {
		return ref.p.ls
	}
	return nil
}

// established takes the application's lifecycle reply: what it can send
// decides what is agreed. With nothing agreed the subscription is over at
// once, its result the answer; otherwise the response becomes an event
// stream that opens with the acknowledgement (SEP-2575: "MUST be the
// first message").
func (l *listen) established(caps uint16) {
	p := l.p
	h := p.h
	l.subs &= caps & capListChanged
	if p.replyOver() {
		l.end()
		return
	}
	if l.subs == 0 {
		l.end()
		b := p.appendHead(h.scratch[:0], "result")
		b = l.appendResult(b)
		p.respondJSON(200, append(b, '}'))
		return
	}
	p.startSSE()
	b := p.appendEventHead(h.scratch[:0])
	b = append(b, `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"notifications":{`...)
	first := true
	for _, k := range mcp.ListChanges() {
		if l.subs&uint16(k.Bit) == 0 {
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
	b = l.appendMeta(b)
	b = append(b, "}}\n\n"...)
	p.event(b)
	p.flags |= eventStream
	p.armKeepalive()
}

// notify turns a lifecycle FLUSH into a notification on the listen
// stream, for a kind agreed only: a server MUST NOT push a notification
// the client did not ask for.
func (l *listen) notify(ext []byte) {
	p := l.p
	h := p.h
	if p.res.mode != modeSSE || p.replyOver() {
		return
	}
	if !h.flushEx.TryWrap(ext, 0, len(ext)) || h.flushEx.TypeID() != h.mcpTypeID {
		return
	}
	kind := h.flushEx.Kind()
	for _, k := range mcp.ListChanges() {
		if k.Flush != kind || l.subs&uint16(k.Bit) == 0 {
			continue
		}
		b := p.appendEventHead(h.scratch[:0])
		b = append(b, `{"jsonrpc":"2.0","method":`...)
		b = jsonrpc.AppendString(b, k.Method)
		b = append(b, `,"params":{"_meta":`...)
		b = l.appendMeta(b)
		b = append(b, "}}\n\n"...)
		p.event(b)
	}
}

// closed handles the application ending the lifecycle: a refusal before
// its reply (the POST has no response yet) is an error; an END after it
// ends the subscription gracefully, with its result as the stream's last
// event; an ABORT cuts the stream short.
func (l *listen) closed(ended bool) {
	p := l.p
	h := p.h
	l.lc = nil
	p.endEvents()
	if p.res.mode == modeNone {
		if !p.replyOver() {
			p.rpcError(codeInternalError, "Internal error: the application refused the subscription")
		}
		return
	}
	if p.replyOver() || p.res.mode != modeSSE {
		return
	}
	if !ended {
		p.abortReply()
		return
	}
	b := p.appendEventHead(h.scratch[:0])
	b = p.appendHead(b, "result")
	b = l.appendResult(b)
	b = append(b, "}\n\n"...)
	if p.answerEvent(b) {
		p.endReply()
	}
}

// end ends the subscription's lifecycle stream and leaves it: what the
// application sends on it from now on goes nowhere.
func (l *listen) end() {
	lc := l.lc
	if lc == nil {
		return
	}
	l.lc, lc.req = nil, postRef{}
	l.p.endEvents()
	lc.end()
}

// appendResult appends the SubscriptionsListenResult: the subscription's
// id and the server's identity.
func (l *listen) appendResult(dst []byte) []byte {
	dst = append(dst, `{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":`...)
	dst = append(dst, l.p.res.id...)
	dst = append(dst, `,"io.modelcontextprotocol/serverInfo":`...)
	dst = append(dst, l.p.h.serverInfo...)
	return append(dst, "}}"...)
}

// appendMeta appends the _meta object of the listen stream's
// notifications: the subscription id, which is the listen request's id
// as the client sent it (go-sdk v1.8.0).
func (l *listen) appendMeta(dst []byte) []byte {
	dst = append(dst, `{"io.modelcontextprotocol/subscriptionId":`...)
	dst = append(dst, l.p.res.id...)
	return append(dst, '}')
}
