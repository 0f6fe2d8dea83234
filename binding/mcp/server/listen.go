package server

import (
	"bytes"
	"slices"

	"github.com/sluicehq/sluice/binding/internal/streams"
	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/binding/mcp/jsonrpc"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/frame"
	"github.com/sluicehq/sluice/internal/freelist"
)

// subscriptions/listen (MCP.md §3.4; SEP-2575), 2026-07-28 only: a POST
// whose response stays open as an event stream of change notifications,
// the stateless successor of a session's GET stream. Each listen opens a
// lifecycle stream of its own, with a null session id, the client's
// capability bits and the list_changed notifications it asked for; the
// application's reply says which of them it can send (its capability
// bits), and those are the ones agreed. Resource-URI subscriptions
// (notifications.resourceSubscriptions) give the lifecycle a session id
// of its own, minted as a session's is but never a session of the
// server's, and become one resources/subscribe request stream each with
// that id once the application's reply says it takes subscriptions: the
// uris whose request it answers (not with the ERROR outcome) are the ones
// agreed, and its FLUSH resourcesUpdated{uri} for one of them becomes
// notifications/resources/updated on the stream. So an application
// serves a listen's subscriptions as it serves a session's: the proxy
// routes each uri to its route, and the mcp client subscribes upstream,
// in a 2025 session of the listen's own or on its own listen toward a
// 2026-07-28 upstream. The lifecycle's END, when the listen ends, ends
// them all.

// listen is a subscriptions/listen, the role its POST (p) takes: the
// lifecycle stream it opened (lc, until either side ends it) and the
// list_changed bits it asked for, then those agreed (subs). Until the
// application's reply, the POST has no response yet.
type listen struct {
	p    *post
	lc   *lifecycle
	subs uint16
	// uris are the resource uris asked for (resourceSubscriptions), each
	// once, as their JSON strings; agreed[i] is set once the
	// application has subscribed uris[i]. sid is the lifecycle's session
	// id, which the subscribe streams carry; rsubs are the subscriptions
	// under way: while there are any, the listen is not yet acknowledged.
	uris   [][]byte
	agreed []bool
	sid    []byte
	next   int // the next uri to subscribe
	rsubs  []*resourceSub
	// early notes what the application sent before the acknowledgement
	// (its FLUSHes may overtake the answers to the subscriptions): the
	// list_changed bits, and in earlyURIs[i] an update of uris[i]. They
	// follow the acknowledgement, for what is agreed.
	early     uint16
	earlyURIs []bool
	// timer bounds the wait for the subscriptions' answers:
	// inactivity.timeout, as for the application's other answers.
	timer  int64
	timeFn func()
}

// maxListenResources bounds the resource uris one listen subscribes to,
// and maxListenURI each uri's length.
const (
	maxListenResources = 256
	maxListenURI       = 2048
)

// recycle puts the listen on the free list: its POST is done with it.
func (l *listen) recycle() {
	h := l.p.h
	uris, agreed, rsubs, early, timeFn := l.uris[:0], l.agreed[:0], l.rsubs[:0], l.earlyURIs[:0], l.timeFn
	clear(uris[:cap(uris)])
	clear(rsubs[:cap(rsubs)])
	*l = listen{uris: uris, agreed: agreed, rsubs: rsubs, earlyURIs: early, timeFn: timeFn}
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
	// A member given twice reads two ways ("true" first or last): refused.
	if dup := dupMember(n, listenKeys...); dup != "" {
		p.duplicate(codeInvalidParams, dup)
		return
	}
	l := freelist.Pop(&h.listens)
	if l == nil {
		l = new(listen)
	}
	l.p = p
	for m, i, ok := jsonrpc.NextField(n, 0); ok; m, i, ok = jsonrpc.NextField(n, i) {
		if jsonrpc.KeyIs(m.Key, "resourceSubscriptions") {
			if msg := l.takeURIs(m.Value); msg != "" {
				l.recycle()
				p.rpcError(codeInvalidParams, msg)
				return
			}
			continue
		}
		if string(m.Value) != "true" {
			continue
		}
		for _, k := range mcp.ListChanges() {
			if jsonrpc.KeyIs(m.Key, k.Listen) {
				l.subs |= uint16(k.Bit)
			}
		}
	}
	if len(l.uris) > 0 {
		l.sid = []byte(h.table.newID())
	}
	l.lc = h.openLifecycle(nil, p, l.sid, clientCapabilities(caps), l.subs, true)
	if l.lc == nil {
		l.recycle()
		p.rpcError(codeInternalError, "Internal error")
		return
	}
	p.ls = l
}

// listenKeys are the members of a listen's notifications the server reads.
var listenKeys = []string{"toolsListChanged", "promptsListChanged", "resourcesListChanged", "resourceSubscriptions"}

// takeURIs takes resourceSubscriptions, an array of uri strings, each
// once, and returns why it cannot ("" when it can).
func (l *listen) takeURIs(v []byte) string {
	if len(v) == 0 || v[0] != '[' {
		return "Invalid params: resourceSubscriptions must be an array of strings"
	}
	for e, i, ok := jsonrpc.NextElement(v, 0); ok; e, i, ok = jsonrpc.NextElement(v, i) {
		if !isString(e) {
			return "Invalid params: resourceSubscriptions must be an array of strings"
		}
		uri, err := jsonrpc.Unquote(nil, e)
		switch {
		case err != nil:
			return "Invalid params: resourceSubscriptions must be an array of strings"
		case len(uri) == 0 || len(uri) > maxListenURI:
			return "Invalid params: a resource uri is empty or too long"
		}
		if slices.ContainsFunc(l.uris, func(u []byte) bool { return bytes.Equal(u, uri) }) {
			continue
		}
		if len(l.uris) == maxListenResources {
			return "Invalid params: too many resourceSubscriptions"
		}
		l.uris = append(l.uris, uri)
		l.agreed = append(l.agreed, false)
		l.earlyURIs = append(l.earlyURIs, false)
	}
	return ""
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
func (l *listen) established(caps uint16, sid []byte) {
	p := l.p
	l.subs &= caps & capListChanged
	if p.replyOver() {
		l.end()
		return
	}
	if len(sid) > 0 {
		l.sid = append(l.sid[:0], sid...) // the id the application's streams of it carry
	}
	if len(l.uris) > 0 && caps&uint16(mcp.McpCapabilitiesServerResourcesSubscribe) != 0 {
		if l.timeFn == nil {
			l.timeFn = l.onTimeout
		}
		if l.subscribeMore() {
			return // acknowledged once the application has answered them
		}
	}
	l.acknowledge()
}

// maxSubscribing bounds the subscriptions of one listen under way at
// once, each of which may hold a buffer slot in the application.
const maxSubscribing = 8

// subscribeMore opens the next uris' subscriptions, up to maxSubscribing
// under way, and reports whether any is. The application has
// inactivity.timeout from each answer for the next one.
func (l *listen) subscribeMore() bool {
	for len(l.rsubs) < maxSubscribing && l.next < len(l.uris) {
		i := l.next
		l.next++
		if rs := l.subscribe(i); rs != nil {
			l.rsubs = append(l.rsubs, rs)
		}
	}
	h := l.p.h
	h.w.Disarm(&l.timer)
	if len(l.rsubs) == 0 {
		return false
	}
	l.timer = h.w.TimerAt(h.w.Now().Add(h.s.inactivity), l.timeFn)
	return true
}

// acknowledge answers the listen once what is agreed is known: with
// nothing agreed the subscription is over at once, its result the answer;
// otherwise the response becomes an event stream that opens with the
// acknowledgement (SEP-2575: "MUST be the first message"), which names
// what is agreed.
func (l *listen) acknowledge() {
	p := l.p
	h := p.h
	if p.replyOver() {
		l.end()
		return
	}
	agreed := slices.Contains(l.agreed, true)
	if l.subs == 0 && !agreed {
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
	if agreed {
		if !first {
			b = append(b, ',')
		}
		b = append(b, `"resourceSubscriptions":[`...)
		first = true
		for i, uri := range l.uris {
			if !l.agreed[i] {
				continue
			}
			if !first {
				b = append(b, ',')
			}
			first = false
			b = jsonrpc.AppendString(b, uri)
		}
		b = append(b, ']')
	}
	b = append(b, `},"_meta":`...)
	b = l.appendMeta(b)
	b = append(b, "}}\n\n"...)
	p.event(b)
	p.flags |= eventStream
	p.armKeepalive()
	for _, k := range mcp.ListChanges() {
		if l.early&l.subs&uint16(k.Bit) != 0 {
			l.listChanged(k.Method)
		}
	}
	for i, e := range l.earlyURIs {
		if e && l.agreed[i] {
			l.updated(i)
		}
	}
}

// notify turns a lifecycle FLUSH into a notification on the listen
// stream, for a kind agreed only: a server MUST NOT push a notification
// the client did not ask for.
func (l *listen) notify(ext []byte) {
	p := l.p
	h := p.h
	if p.replyOver() || !h.flushEx.TryWrap(ext, 0, len(ext)) || h.flushEx.TypeID() != h.mcpTypeID {
		return
	}
	kind := h.flushEx.Kind()
	if kind == mcp.McpFlushExKindClientRequest {
		l.answerClientRequest(h.flushEx.ClientRequest())
		return
	}
	if kind == mcp.McpFlushExKindResourcesUpdated {
		u := h.flushEx.ResourcesUpdated()
		uri := u.URI()
		i := slices.IndexFunc(l.uris, func(v []byte) bool { return bytes.Equal(v, uri) })
		switch {
		case i < 0:
		case len(l.rsubs) > 0:
			l.earlyURIs[i] = true
		case l.agreed[i] && p.res.mode == modeSSE:
			l.updated(i)
		}
		return
	}
	for _, k := range mcp.ListChanges() {
		if k.Flush != kind {
			continue
		}
		switch {
		case len(l.rsubs) > 0:
			l.early |= uint16(k.Bit)
		case l.subs&uint16(k.Bit) != 0 && p.res.mode == modeSSE:
			l.listChanged(k.Method)
		}
	}
}

// answerClientRequest answers a request the application sends the
// client of the listen's session (an upstream's, on the 2025 session the
// mcp client keeps for the listen): 2026-07-28 has no requests on a
// listen, so no client can be asked (mcp.Answers.Unasked). Of a request
// in parts, the first answers.
func (l *listen) answerClientRequest(c mcp.McpClientRequestFlushEx) {
	p := l.p
	if !c.HasID() || len(c.ID()) == 0 || c.Start() > 0 {
		return
	}
	p.h.answers.Unasked(p.h.exitID, l.sid, c.ID(), c.Method(), p.Out.Trace, p.Out.Auth)
}

// updated sends notifications/resources/updated for uris[i].
func (l *listen) updated(i int) {
	p := l.p
	b := p.appendEventHead(p.h.scratch[:0])
	b = append(b, `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":`...)
	b = jsonrpc.AppendString(b, l.uris[i])
	b = append(b, `,"_meta":`...)
	b = l.appendMeta(b)
	b = append(b, "}}\n\n"...)
	p.event(b)
}

// listChanged sends the list_changed notification method.
func (l *listen) listChanged(method string) {
	p := l.p
	b := p.appendEventHead(p.h.scratch[:0])
	b = append(b, `{"jsonrpc":"2.0","method":`...)
	b = jsonrpc.AppendString(b, method)
	b = append(b, `,"params":{"_meta":`...)
	b = l.appendMeta(b)
	b = append(b, "}}\n\n"...)
	p.event(b)
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
	l.dropSubs()
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

// subscribe opens the resources/subscribe request stream for uris[i],
// nil when the ring refuses it.
func (l *listen) subscribe(i int) *resourceSub {
	p := l.p
	h := p.h
	w := h.w
	rs := &resourceSub{l: l, i: i, srv: h}
	rs.onFrame = rs.handle
	rs.params = append(rs.params, `{"uri":`...)
	rs.params = jsonrpc.AppendString(rs.params, l.uris[i])
	rs.params = append(rs.params, '}')
	rs.Connect(w, h.cfg.ID, h.exitID, w.SupplyInitialID(h.exitID), rs.onFrame)
	rs.Out.Trace, rs.Out.Auth = p.Out.Trace, p.Out.Auth
	rs.In.Trace = p.Out.Trace
	err := rs.BeginWith(0, func(b *frame.BeginBuilder) {
		b.ExtensionDone(h.requestBeginEx(h.exB.Begin.WrapSlot(b.ExtensionBuffer()),
			mcp.McpBeginExKindResourcesSubscribe, l.sid, l.uris[i], int32(len(rs.params)), 0))
	})
	if err != nil {
		return nil
	}
	return rs
}

// subscribed takes the application's answer to the subscription of
// uris[i]: ok unless it refused or failed it. Once all are answered, the
// listen is acknowledged.
func (l *listen) subscribed(rs *resourceSub, ok bool) {
	l.agreed[rs.i] = ok
	if j := slices.Index(l.rsubs, rs); j >= 0 {
		l.rsubs = slices.Delete(l.rsubs, j, j+1) // clears the slot it frees
	}
	if !l.subscribeMore() {
		l.acknowledge()
	}
	l.p.release()
}

// onTimeout acknowledges a listen whose application has not answered a
// subscription within inactivity.timeout: those under way are given up,
// and they and those not yet made are not agreed.
func (l *listen) onTimeout() {
	l.timer = 0
	if len(l.rsubs) == 0 {
		return
	}
	l.dropSubs()
	l.acknowledge()
	l.p.release()
}

// dropSubs gives up the subscriptions under way and those not yet made.
func (l *listen) dropSubs() {
	l.p.h.w.Disarm(&l.timer)
	for _, rs := range l.rsubs {
		rs.drop()
	}
	clear(l.rsubs)
	l.rsubs, l.next = l.rsubs[:0], len(l.uris)
}

// resourceSub is the resources/subscribe request stream a listen opens
// for one of its uris (Out: BEGIN, the params {"uri":…}, END; In: the
// application's reply, whose END outcome says whether it subscribed). It
// needs no timeout of its own: the mcp client answers a subscription
// within its request timeout, and a listen that goes first drops it.
type resourceSub struct {
	engine.Stream
	l       *listen // nil once dropped or answered
	srv     *server
	i       int
	params  []byte
	sent    bool
	onFrame engine.MessageConsumer
}

func (rs *resourceSub) handle(t frame.FrameType, buf []byte) {
	h := rs.srv
	switch t {
	case frame.FrameWindow:
		if _, err := rs.OnWindow(buf); streams.Received(err, func() { rs.done(false) }) && !rs.sent {
			rs.send()
		}
	case frame.FrameBegin:
		if _, err := rs.OnBegin(buf); err == nil {
			rs.In.Grant(int32(h.pool.SlotCapacity()))
			if rs.Window() != nil {
				rs.done(false)
			}
		}
	case frame.FrameData:
		_, _ = rs.OnData(buf) // the bare result, {}
	case frame.FrameFlush:
		_, _ = rs.OnFlush(buf)
	case frame.FrameEnd:
		e, err := rs.OnEnd(buf)
		ok := err == nil
		if ext := e.Extension(); ok && h.endEx.TryWrap(ext, 0, len(ext)) && h.endEx.TypeID() == h.mcpTypeID {
			ok = h.endEx.Outcome() != mcp.McpOutcomeError
		}
		rs.done(ok)
	case frame.FrameAbort:
		_, _ = rs.OnAbort(buf)
		rs.done(false)
	case frame.FrameReset:
		_, _ = rs.OnReset(buf)
		rs.done(false)
	}
}

// send sends the params and ends the request, once the window allows.
func (rs *resourceSub) send() {
	if int64(len(rs.params)) > rs.Out.Available()-int64(rs.Out.Pad) {
		return
	}
	rs.sent = true
	if rs.Data(wholeData, rs.params, nil) != nil || rs.End(nil) != nil {
		rs.done(false)
	}
}

// done reports the answer to the listen, once, unless it was dropped.
func (rs *resourceSub) done(ok bool) {
	l := rs.l
	if l == nil {
		return
	}
	rs.l = nil
	l.subscribed(rs, ok)
}

// drop lets the subscription go: its listen has ended. Its request is
// aborted and its reply reset, which the application takes as the end of
// its part.
func (rs *resourceSub) drop() {
	rs.l = nil
	if !rs.Out.Closed() {
		_ = rs.Abort(nil)
	}
	if !rs.In.Closed() {
		_ = rs.Reset(nil)
	}
}
