package server

import (
	"bytes"
	"log/slog"
	"net/url"

	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/binding/mcp/jsonrpc"
	"github.com/sluicehq/sluice/engine/frame"
)

// URL-mode elicitation (doc.go "URL-mode elicitation"; Zilla's
// McpElicitation). The application asks for it with a CHALLENGE
// McpChallengeEx.elicitCreate{id, url, message, correlationId} on a
// request's stream or on the session's lifecycle. The client is sent
// elicitation/create with mode "url" on that request's response (turned
// into an event stream) or on the session's GET stream. When the URL's
// redirect_uri is the binding's own callback (the binding brokers it),
// its state becomes "<sessionId>.<elicitationId>.<state>" and the
// elicitation is registered in its session until the callback comes:
// GET <callback>?…&state=… then sends the application FLUSH
// elicitCallback with the callback URL, its state as the upstream made
// it, and answers 200; an unknown, completed or expired one gets 410.
//
// A request's END toward the application waits while one of its brokered
// elicitations is pending, so that the application sees BEGIN, the
// params, FLUSH elicitCallback, END. With a correlationId the
// elicitation/create is a request the client answers: the answer goes to
// the application as FLUSH elicitResponse{correlationId, action}. FLUSH
// elicitComplete from the application becomes
// notifications/elicitation/complete.
//
// Nothing of this is made before a session's first elicitation: its
// table stays nil, and an exchange pays one nil test when it is recycled.

// callbackOK and callbackGone are the callback's plain-text answers; the
// 410 says nothing of why, so that it tells nothing of other sessions.
const (
	callbackOK   = "Authorization complete, you may close this tab."
	callbackGone = "Authorization session expired or unknown."
)

// codeURLRequired is the error of a request whose upstream needs a URL
// elicitation the client did not declare it takes (MCP's
// URLElicitationRequiredError).
const codeURLRequired = -32042

// maxCallbackURL bounds the callback URL a GET keeps; a longer one is
// unknown.
const maxCallbackURL = 4096

// elicitation is a brokered URL-mode elicitation, pending its callback.
type elicitation struct {
	id    string
	state string  // the URL's state as the upstream made it
	corr  []byte  // the correlationId, nil for none
	req   postRef // the request that asked it; p nil: the session's lifecycle
	x     *exchange
}

// challengeURL reports whether ext is a CHALLENGE elicitCreate of the mcp
// type; the view stays in h.challengeEx.
func (h *server) challengeURL(ext []byte) bool {
	return h.challengeEx.TryWrap(ext, 0, len(ext)) && h.challengeEx.TypeID() == h.mcpTypeID &&
		h.challengeEx.Kind() == mcp.McpChallengeExKindElicitCreate
}

// onChallenge takes a CHALLENGE of the application on a request's stream.
func (x *exchange) onChallenge(ext []byte) {
	p := x.p
	h := p.h
	if !h.challengeURL(ext) {
		return
	}
	ec := h.challengeEx.ElicitCreate()
	s := p.sess
	if !ec.HasID() || len(ec.ID()) == 0 || !ec.HasURL() || s == nil || x.elicit != nil ||
		p.replyOver() && p.flags&detached == 0 || p.res.mode != modeNone && p.res.mode != modeSSE {
		h.w.Logger().Warn("mcp server: URL elicitation refused", "binding", h.cfg.Name)
		x.cancel()
		p.appError(codeInternalError, "Internal error: elicitation refused")
		return
	}
	cb := p.callbackURL(h.aux[:0])
	h.aux = cb
	broker := brokered(ec.URL(), cb)
	if broker && !plainID(ec.ID()) {
		h.w.Logger().Warn("mcp server: URL elicitation refused: its id does not fit a state", "binding", h.cfg.Name)
		x.cancel()
		p.appError(codeInternalError, "Internal error: elicitation refused")
		return
	}
	target := ec.URL()
	if broker {
		target = rewriteState(h.msg[:0], target, s.id, ec.ID())
		h.msg = target
	}
	if s.clientCaps&uint16(mcp.McpCapabilitiesClientElicitationUrl) == 0 {
		// The URL-required answer: the client learns the URL in the
		// error's data, and the request ends. The data is MCP's
		// {"elicitations":[…]}, which clients parse, where Zilla writes the
		// bare array.
		data := append(h.scratch[len(h.scratch):], `{"elicitations":[{"mode":"url","elicitationId":`...)
		data = jsonrpc.AppendString(data, ec.ID())
		data = append(data, `,"url":`...)
		data = jsonrpc.AppendString(data, target)
		if ec.HasMessage() && len(ec.Message()) > 0 {
			data = append(data, `,"message":`...)
			data = jsonrpc.AppendString(data, ec.Message())
		}
		data = append(data, "}]}"...)
		data = append([]byte(nil), data...) // scratch composes the answer
		x.cancel()
		p.urlRequired(data)
		return
	}
	if broker {
		e := &elicitation{id: string(ec.ID()), req: p.ref(), x: x}
		e.state = string(stateOf(ec.URL()))
		if ec.HasCorrelationID() && len(ec.CorrelationID()) > 0 {
			e.corr = append([]byte(nil), ec.CorrelationID()...)
		}
		if !s.addElicit(e) {
			h.w.Logger().Warn("mcp server: URL elicitation refused: its id is pending already", "binding", h.cfg.Name)
			x.cancel()
			p.appError(codeInternalError, "Internal error: elicitation refused")
			return
		}
		x.elicit = e
	}
	if broker {
		x.state |= waitCallback
	}
	p.startSSE()
	if h.sendElicitCreate(s, p, ec, target) {
		x.state |= waitAnswer
	}
}

// sendElicitCreate sends the client elicitation/create for ec, with url
// as the client sees it, on p's response (nil: the GET stream): a request
// it answers when ec has a correlationId, else a notification as Zilla
// sends it. It reports whether the client owes an answer.
func (h *server) sendElicitCreate(s *session, p *post, ec mcp.McpElicitCreateChallengeEx, target []byte) bool {
	var r *clientRequest
	if ec.HasCorrelationID() && len(ec.CorrelationID()) > 0 {
		t := s.clients
		if t == nil {
			t = &clientRequests{}
			s.clients = t
		}
		if len(t.pending) < maxClientRequests {
			r = t.add(h, s)
			r.kind, r.up, r.start = clientElicitationURL, append(r.up[:0], ec.CorrelationID()...), h.w.Now()
			if p != nil {
				r.origin = p.ref()
				p.state |= hasClients
			}
		}
	}
	msg := append(h.clientMsg[:0], `{"jsonrpc":"2.0",`...)
	if r != nil {
		msg = append(msg, `"id":`...)
		msg = r.appendID(msg)
		msg = append(msg, ',')
	}
	msg = append(msg, `"method":"elicitation/create","params":{"mode":"url","elicitationId":`...)
	msg = jsonrpc.AppendString(msg, ec.ID())
	msg = append(msg, `,"url":`...)
	msg = jsonrpc.AppendString(msg, target)
	if ec.HasMessage() {
		msg = append(msg, `,"message":`...)
		msg = jsonrpc.AppendString(msg, ec.Message())
	}
	msg = append(msg, "}}"...)
	h.clientMsg = msg
	if m := h.clientMetrics(clientElicitationURL); m != nil {
		m.requests.Inc()
	}
	if r == nil {
		h.toStream(s, p, msg, true)
		h.logClient(slog.LevelDebug, "delivered", s, ec.ID(), "elicitation", "mode", "url")
		return false
	}
	h.toClient(r, msg, true)
	r.timerID = h.w.TimerAt(r.start.Add(h.s.elicitTimeout), r.timerFn)
	h.logClient(slog.LevelDebug, "delivered", s, r.appendID(h.aux[:0]), "elicitation", "mode", "url", "upstream_id", string(r.up))
	return true
}

// toStream sends msg on p's event stream, or on the session's GET stream
// when p is nil; request tells a request to the client, which other
// events may not crowd out (request.sendEvent).
func (h *server) toStream(s *session, p *post, msg []byte, request bool) {
	if p != nil {
		if p.res.mode != modeSSE || p.replyOver() && p.flags&detached == 0 {
			return
		}
		b := p.appendEventHead(h.scratch[:0])
		b = append(b, msg...)
		b = append(b, "\n\n"...)
		p.sendEvent(b, request)
		return
	}
	s.getSeq++
	b := append(h.scratch[:0], "event: message\nid: "...)
	b = appendEventID(b, nil, s.getSeq)
	b = append(b, "\ndata: "...)
	b = append(b, msg...)
	b = append(b, "\n\n"...)
	s.replay.add(h, h.s.replay, 0, nil, s.getSeq, b)
	h.deliver(s.get, b, request)
}

// urlRequired answers the request with the URL-required error, data its
// elicitations.
func (p *post) urlRequired(data []byte) {
	msg := append(p.h.msg[:0], "URL elicitation required"...)
	if p.res.mode == modeNone {
		p.doneInflight()
		p.transportErrorBytes(200, codeURLRequired, msg, data)
		return
	}
	e := p.appendEventHead(p.h.scratch[:0])
	e = appendErrorBody(e, p.res.id, codeURLRequired, msg, data)
	e = append(e, "\n\n"...)
	p.doneInflight()
	if p.answerEvent(e) && p.flags&detached == 0 {
		p.endReply()
	}
}

// onElicitComplete takes FLUSH elicitComplete on a request's reply: the
// client is told, and the elicitation is no longer pending.
func (x *exchange) onElicitComplete(c mcp.McpElicitCompleteFlushEx) {
	p := x.p
	h := p.h
	if !c.HasID() {
		return
	}
	if e := x.elicit; e == nil || e.id == string(c.ID()) {
		if x.state&waitCallback != 0 {
			// Completed before its callback came: the application gave up
			// waiting (its timeout), so an ABORT after it is a time-out.
			x.state |= elicitTimedOut
		}
		x.dropElicit()
		x.elicitDone(waitCallback | waitAnswer)
	}
	if p.sess == nil || p.replyOver() && p.flags&detached == 0 || p.res.mode != modeSSE {
		return
	}
	h.toStream(p.sess, p, appendElicitComplete(h.clientMsg[:0], c.ID()), false)
}

// appendElicitComplete appends notifications/elicitation/complete for id.
func appendElicitComplete(dst, id []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","method":"notifications/elicitation/complete","params":{"elicitationId":`...)
	dst = jsonrpc.AppendString(dst, id)
	return append(dst, "}}"...)
}

// dropElicit forgets the exchange's brokered elicitation.
func (x *exchange) dropElicit() {
	e := x.elicit
	x.elicit = nil
	if e == nil {
		return
	}
	if s := x.p.sess; s != nil && s.elicits[e.id] == e {
		delete(s.elicits, e.id)
	}
}

// elicitDone notes that what the request's elicitation awaited (bits)
// came, and sends the END that waited for it once nothing else does.
func (x *exchange) elicitDone(bits exState) {
	x.state &^= bits
	if x.state&(endHeld|waitCallback|waitAnswer) != endHeld {
		return
	}
	x.state &^= endHeld
	if x.Out.Closed() {
		return
	}
	if err := x.End(nil); err != nil {
		x.failed()
	}
}

// addElicit registers e in the session; false when its id is pending, or
// when the session has as many pending as it may have client requests.
func (s *session) addElicit(e *elicitation) bool {
	if s.elicits == nil {
		s.elicits = map[string]*elicitation{}
	}
	if _, ok := s.elicits[e.id]; ok || len(s.elicits) >= maxClientRequests {
		return false
	}
	s.elicits[e.id] = e
	return true
}

// endElicits forgets the session's elicitations as it ends.
func (s *session) endElicits() {
	for id, e := range s.elicits {
		if e.x != nil && e.x.elicit == e {
			e.x.elicit = nil
		}
		delete(s.elicits, id)
	}
}

// elicitResponse sends the application the client's answer to a URL
// elicitation: FLUSH elicitResponse on the stream of the request that
// asked it. It reports whether that stream could take it.
func (h *server) elicitResponse(r *clientRequest, action mcp.McpElicitAction) bool {
	var out flusher
	var x *exchange
	switch {
	case r.origin.p == nil:
		if r.s.lc == nil || r.s.lc.Out.Closed() {
			return false
		}
		out = r.s.lc
	case !r.origin.live() || r.origin.p.ex == nil || r.origin.p.ex.Out.Closed():
		return false
	default:
		x = r.origin.p.ex
		out = x
	}
	eb := h.exB.Flush.Wrap(h.elicitBuf(len(r.up)), 0, len(h.elicitExt)).TypeID(h.mcpTypeID)
	eb.ElicitResponse().CorrelationIDBytes(r.up).Action(action)
	if !h.elicitFlush(out, x, eb) {
		return false
	}
	if x != nil {
		switch action {
		case mcp.McpElicitActionDecline:
			x.state |= elicitDeclined
		case mcp.McpElicitActionCancel:
			x.state |= elicitTimedOut
		}
		x.elicitDone(waitAnswer)
	}
	return true
}

// elicitBuf returns the buffer an elicitation FLUSH's extension is built
// in, with room for n bytes of strings.
func (h *server) elicitBuf(n int) []byte {
	if len(h.elicitExt) < n+256 {
		h.elicitExt = make([]byte, n+256)
	}
	return h.elicitExt
}

// elicitFlush sends out the FLUSH whose extension eb built. On a request
// whose params are still on their way (x, its END not yet due) it waits
// until they are out, so that the application sees BEGIN, the params,
// the FLUSHes, END.
func (h *server) elicitFlush(out flusher, x *exchange, eb *mcp.McpFlushExBuilder) bool {
	limit, err := eb.BuildLimit()
	if err != nil {
		h.w.Logger().Warn("mcp server: elicitation FLUSH not built", "binding", h.cfg.Name, "error", err)
		return false
	}
	ext := h.elicitExt[:limit]
	if x != nil && x.state&endHeld == 0 {
		x.deferred = append(x.deferred, append([]byte(nil), ext...))
		return true
	}
	if err := out.Flush(ext); err != nil {
		h.unsent(frame.FrameFlush, out.OutID(), err)
		return false
	}
	return true
}

// sendDeferred sends the elicitation FLUSHes that waited for the params.
func (x *exchange) sendDeferred() bool {
	for i, ext := range x.deferred {
		if err := x.Flush(ext); err != nil {
			x.p.h.unsent(frame.FrameFlush, x.OutID(), err)
			return false
		}
		x.deferred[i] = nil
	}
	x.deferred = x.deferred[:0]
	return true
}

// flusher is an application stream the server sends a FLUSH on: a
// request's or a lifecycle's.
type flusher interface {
	Flush(ext []byte) error
	OutID() int64
}

// elicitAction reads the action of a client's answer to elicitation/create.
func elicitAction(result []byte) mcp.McpElicitAction {
	a, _ := field(result, "action")
	switch string(a) {
	case `"accept"`:
		return mcp.McpElicitActionAccept
	case `"decline"`:
		return mcp.McpElicitActionDecline
	}
	return mcp.McpElicitActionCancel
}

// callback answers a GET of the elicitation callback: the elicitation its
// state names, in the session the state names, gets FLUSH elicitCallback
// with the callback URL, its state as the upstream made it.
func (g *getStream) callback() {
	h := g.h
	if g.hdr.early != 0 {
		g.respondEarly()
		return
	}
	status, body := 410, callbackGone
	if g.cbLen > 0 {
		u := g.cb[:g.cbLen]
		if e, s := h.findElicit(u); e != nil && h.elicitCallback(s, e, u) {
			status, body = 200, callbackOK
		}
	}
	h.logClient(slog.LevelDebug, "callback", nilSession, nil, "elicitation", "status", status)
	g.res.mode = modeLocal
	g.beginReply(status, "text/plain", len(body), nil)
	g.write(append(h.scratch[:0], body...))
	g.endReply()
}

// nilSession names no session in a log line.
var nilSession = &session{}

// findElicit finds the pending elicitation a callback URL's state names:
// "<sessionId>.<elicitationId>.<state>", with the state the upstream made.
// Session ids may hold dots, so each dot is tried as the session id's end.
// A URL that gives its state twice names none: the upstream, sent the
// URL, could read the other one.
func (h *server) findElicit(u []byte) (*elicitation, *session) {
	st, ok := mcp.QueryParamOnce(u, "state")
	if !ok {
		return nil, nil
	}
	for i := bytes.IndexByte(st, '.'); i > 0; {
		s := h.table.lookup(st[:i])
		if s != nil && s.elicits != nil {
			rest := st[i+1:]
			if j := bytes.IndexByte(rest, '.'); j > 0 {
				e := s.elicits[string(rest[:j])]
				if e != nil && e.state == string(rest[j+1:]) {
					return e, s
				}
			}
		}
		n := bytes.IndexByte(st[i+1:], '.')
		if n < 0 {
			break
		}
		i += 1 + n
	}
	return nil, nil
}

// elicitCallback sends the application FLUSH elicitCallback for e, and
// the request's END that waited for it; e completes once. It reports
// whether the application's stream could take it.
func (h *server) elicitCallback(s *session, e *elicitation, u []byte) bool {
	delete(s.elicits, e.id)
	var out flusher
	var x *exchange
	switch {
	case e.req.p == nil:
		if s.lc == nil || s.lc.Out.Closed() {
			return false
		}
		out = s.lc
	case e.req.live() && e.req.p.ex == e.x && e.x != nil && !e.x.Out.Closed():
		x = e.x
		out = x
		x.elicit = nil
	default:
		return false
	}
	target := stripState(h.msg[:0], u, len(s.id)+len(e.id)+2)
	h.msg = target
	eb := h.exB.Flush.Wrap(h.elicitBuf(len(target)+len(e.corr)), 0, len(h.elicitExt)).TypeID(h.mcpTypeID)
	cb := eb.ElicitCallback().URLBytes(target)
	if e.corr != nil {
		cb.CorrelationIDBytes(e.corr)
	}
	if !h.elicitFlush(out, x, eb) {
		return false
	}
	if x != nil {
		x.elicitDone(waitCallback)
	}
	return true
}

// callbackURL appends the URL of the binding's elicitation callback for
// the request: its scheme and authority, its path without the query, and
// the callback's path.
func (p *post) callbackURL(dst []byte) []byte {
	if p.baseLen < 0 {
		return dst
	}
	dst = append(dst, p.cbBase[:p.baseLen]...)
	return append(dst, p.h.s.callback...)
}

// brokered reports whether an elicitation URL's redirect_uri is the
// binding's own callback cb: then the binding serves its callback.
func brokered(u, cb []byte) bool {
	v, ok := mcp.QueryParam(u, "redirect_uri")
	if !ok || len(cb) == 0 {
		return false
	}
	d, err := url.QueryUnescape(string(v))
	return err == nil && d == string(cb)
}

// stateOf returns the raw state of URL u, empty when it has none.
func stateOf(u []byte) []byte {
	v, _ := mcp.QueryParam(u, "state")
	return v
}

// rewriteState appends u with its state prefixed by "<sid>.<eid>.", so
// that the callback names its session and elicitation; a URL without a
// state gets one of just that prefix.
func rewriteState(dst, u []byte, sid string, eid []byte) []byte {
	start, _, ok := mcp.QueryParamSpan(u, "state")
	if !ok {
		dst = append(dst, u...)
		if bytes.IndexByte(u, '?') < 0 {
			dst = append(dst, '?')
		} else {
			dst = append(dst, '&')
		}
		dst = append(dst, "state="...)
		return appendStatePrefix(dst, sid, eid)
	}
	dst = append(dst, u[:start]...)
	dst = appendStatePrefix(dst, sid, eid)
	return append(dst, u[start:]...)
}

func appendStatePrefix(dst []byte, sid string, eid []byte) []byte {
	dst = append(dst, sid...)
	dst = append(dst, '.')
	dst = append(dst, eid...)
	return append(dst, '.')
}

// plainID reports whether an elicitation or session id can go into a
// URL's state as it is: unreserved characters but the dot, which
// separates the state's parts.
func plainID(id []byte) bool {
	for _, c := range id {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', isDigit(c), c == '-', c == '_', c == '~':
		default:
			return false
		}
	}
	return len(id) > 0
}

// stripState appends u with n bytes taken off the front of its state:
// the "<sid>.<eid>." the binding put there, so that the state is the
// upstream's again.
func stripState(dst, u []byte, n int) []byte {
	start, end, ok := mcp.QueryParamSpan(u, "state")
	if !ok || end-start < n {
		return append(dst, u...)
	}
	dst = append(dst, u[:start]...)
	return append(dst, u[start+n:]...)
}

// appendBase writes into dst (of capacity maxBase) the scheme ("https"
// when the request names none), authority and path without its query of
// the request sc scanned; it returns their length, -1 when they do not
// fit or the request names no authority.
func appendBase(dst []byte, sc *headerScan) int {
	path := sc.path
	if q := bytes.IndexByte(path, '?'); q >= 0 {
		path = path[:q]
	}
	scheme := sc.scheme
	if len(scheme) == 0 {
		scheme = []byte("https")
	}
	if len(sc.authority) == 0 || len(scheme)+3+len(sc.authority)+len(path) > cap(dst) {
		return -1
	}
	dst = append(dst, scheme...)
	dst = append(dst, "://"...)
	dst = append(dst, sc.authority...)
	dst = append(dst, path...)
	return len(dst)
}

// isCallback reports whether a GET's path, without its query, is the
// elicitation callback's: it ends with the callback's path.
func (h *server) isCallback(path []byte) bool {
	if q := bytes.IndexByte(path, '?'); q >= 0 {
		path = path[:q]
	}
	return bytes.HasSuffix(path, []byte(h.s.callback))
}

// setCallback keeps a callback GET's URL as the client sent it, and names
// the session its state names, so that a GET on another worker than the
// session's is relayed to its owner.
func (g *getStream) setCallback(sc *headerScan) {
	g.cbLen = -1
	n := len(sc.scheme) + 3 + len(sc.authority) + len(sc.path)
	if len(sc.scheme) == 0 || len(sc.authority) == 0 || n > len(g.cb) {
		return
	}
	b := append(g.cb[:0], sc.scheme...)
	b = append(b, "://"...)
	b = append(b, sc.authority...)
	b = append(b, sc.path...)
	g.cbLen = len(b)
	st, ok := mcp.QueryParamOnce(sc.path, "state")
	if !ok {
		return
	}
	for i := bytes.IndexByte(st, '.'); i > 0; {
		if g.h.table.ownerOf(st[:i]) >= 0 {
			sc.sid = st[:i]
			sc.flags |= hasSessionID
			return
		}
		n := bytes.IndexByte(st[i+1:], '.')
		if n < 0 {
			return
		}
		i += 1 + n
	}
}

// onLifecycleChallenge takes a CHALLENGE of the application on session s's
// lifecycle: the elicitation goes to the client on the GET stream, and
// its callback comes back on the lifecycle. The callback URL is the one
// of the request that initialized the session.
func (h *server) onLifecycleChallenge(s *session, ext []byte) {
	if !h.challengeURL(ext) {
		return
	}
	ec := h.challengeEx.ElicitCreate()
	if !ec.HasID() || len(ec.ID()) == 0 || !ec.HasURL() ||
		s.clientCaps&uint16(mcp.McpCapabilitiesClientElicitationUrl) == 0 {
		h.logClient(slog.LevelWarn, "error", s, ec.ID(), "elicitation", "mode", "url", "reason", "the client did not declare the capability")
		return
	}
	target := ec.URL()
	if len(s.callback) > 0 && brokered(target, s.callback) && plainID(ec.ID()) {
		e := &elicitation{id: string(ec.ID()), state: string(stateOf(target))}
		if ec.HasCorrelationID() && len(ec.CorrelationID()) > 0 {
			e.corr = append([]byte(nil), ec.CorrelationID()...)
		}
		if s.addElicit(e) {
			target = rewriteState(h.msg[:0], target, s.id, ec.ID())
			h.msg = target
		}
	}
	h.sendElicitCreate(s, nil, ec, target)
}
