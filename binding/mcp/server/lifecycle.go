package server

import (
	"bytes"
	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/binding/mcp/jsonrpc"
	"time"

	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/frame"
)

// lifecycle is a session's lifecycle stream (doc.go), the transient one
// that asks the application for its capabilities for server/discover (s
// and req nil), or a 2026-07-28 subscriptions/listen's (req, while that
// request is still the one of generation reqGen). It lives on the worker
// that opened it.
type lifecycle struct {
	h                  *server
	s                  *session
	listen             bool // a subscriptions/listen's, even once req left
	req                *request
	reqGen             uint32
	initialID, replyID int64
	traceID            int64
	in                 engine.Flow
	initialOver        bool
	replyOver          bool
	replyBegun         bool
	aborted            bool // the reply ABORTed, or the initial stream RESET
	parts              *noteParts
	onFrame            engine.MessageConsumer
}

// discovery is a worker's cache of the application's capabilities, for
// server/discover, and the requests waiting for them.
type discovery struct {
	known   bool
	bits    uint16
	lc      *lifecycle
	waiting []streamRef
}

// openLifecycle opens a lifecycle stream: BEGIN McpBeginEx.lifecycle with
// the session id (nil for none), the client's capability bits and the
// list_changed notifications wanted on it (subs). req is the request that
// opens it, and listen makes it that subscriptions/listen request's.
func (h *server) openLifecycle(s *session, req *request, sid []byte, caps, subs uint16, listen bool) *lifecycle {
	w := h.w
	traceID, authorization := req.traceID, req.authorization
	lc := &lifecycle{h: h, s: s, traceID: traceID, listen: listen}
	if listen {
		lc.req, lc.reqGen = req, req.gen
	}
	lc.onFrame = lc.handle
	lc.initialID = w.SupplyInitialID(h.exitID)
	lc.replyID = engine.ReplyID(lc.initialID)
	buf := w.WriteBuffer()
	b := h.beginB.Wrap(buf, 0, len(buf)).
		OriginID(h.cfg.ID).RoutedID(h.exitID).StreamID(lc.initialID).
		Sequence(0).Acknowledge(0).Maximum(0).
		TraceID(traceID).Authorization(authorization).
		Affinity(0)
	off, max, ok := b.ExtensionSlot()
	if !ok {
		return nil
	}
	eb := h.mcpExB.Wrap(buf, off, max).TypeID(h.mcpTypeID)
	setSID(eb.Lifecycle(), sid).Capabilities(caps).Subscriptions(subs)
	limit, err := eb.BuildLimit()
	if err != nil {
		return nil
	}
	n, err := b.ExtensionEnd(limit).BuildLimit()
	if err != nil || w.NewStream(buf[:n], lc.onFrame) != nil {
		return nil
	}
	return lc
}

func (lc *lifecycle) handle(t frame.FrameType, buf []byte) {
	h := lc.h
	switch t {
	case frame.FrameReset:
		if h.reset.TryWrap(buf, 0, len(buf)) && h.reset.StreamID() == lc.initialID {
			lc.initialOver, lc.aborted = true, true
			lc.resetReply()
			lc.closed()
		}
	case frame.FrameBegin:
		if h.begin.TryWrap(buf, 0, len(buf)) && h.begin.StreamID() == lc.replyID {
			lc.replyBegun = true
			lc.in.Seq, lc.in.Ack = h.begin.Sequence(), h.begin.Acknowledge()
			lc.grant()
			var caps uint16
			var sid []byte
			if ext := h.begin.Extension(); h.mcpEx.TryWrap(ext, 0, len(ext)) && h.mcpEx.TypeID() == h.mcpTypeID &&
				h.mcpEx.Kind() == mcp.McpBeginExKindLifecycle {
				l := h.mcpEx.Lifecycle()
				caps = l.Capabilities()
				if l.HasSessionID() {
					sid = l.SessionID()
				}
			}
			lc.established(caps, sid)
		}
	case frame.FrameData:
		if h.data.TryWrap(buf, 0, len(buf)) && h.data.StreamID() == lc.replyID {
			_ = lc.in.OnData(&h.data)
			lc.grant()
		}
	case frame.FrameFlush:
		if h.flush.TryWrap(buf, 0, len(buf)) && h.flush.StreamID() == lc.replyID {
			_ = lc.in.OnFrame(h.flush.Sequence())
			ext := h.wholeNotification(&lc.parts, h.flush.Extension())
			switch {
			case ext == nil:
			case lc.s != nil:
				lc.s.notify(h, ext)
			case lc.listen:
				if r := lc.listener(); r != nil {
					r.listenNotify(ext)
					r.release()
				}
			}
			lc.parts.trim()
		}
	case frame.FrameEnd:
		if h.end.TryWrap(buf, 0, len(buf)) && h.end.StreamID() == lc.replyID {
			lc.replyOver = true
			lc.end()
			lc.closed()
		}
	case frame.FrameAbort:
		if h.abort.TryWrap(buf, 0, len(buf)) && h.abort.StreamID() == lc.replyID {
			lc.replyOver, lc.aborted = true, true
			lc.end()
			lc.closed()
		}
	}
}

// grant offers the reply a slot's worth of window: the application has
// nothing to send on it but FLUSHes.
func (lc *lifecycle) grant() {
	h := lc.h
	lc.in.Ack, lc.in.Max = lc.in.Seq, int32(h.pool.SlotCapacity())
	buf := h.w.WriteBuffer()
	n, err := h.windowB.Wrap(buf, 0, len(buf)).
		OriginID(h.cfg.ID).RoutedID(h.exitID).StreamID(lc.replyID).
		Sequence(lc.in.Seq).Acknowledge(lc.in.Ack).Maximum(lc.in.Max).
		TraceID(lc.traceID).BudgetID(0).Padding(0).
		BuildLimit()
	if err == nil {
		_ = h.w.Send(frame.FrameWindow, buf[:n])
	}
}

// end ends the lifecycle's initial side: the session is over.
func (lc *lifecycle) end() {
	if lc.initialOver {
		return
	}
	lc.initialOver = true
	h := lc.h
	buf := h.w.WriteBuffer()
	n, err := h.endB.Wrap(buf, 0, len(buf)).
		OriginID(h.cfg.ID).RoutedID(h.exitID).StreamID(lc.initialID).
		Sequence(0).Acknowledge(0).Maximum(0).
		TraceID(lc.traceID).
		BuildLimit()
	if err == nil {
		_ = h.w.Send(frame.FrameEnd, buf[:n])
	}
}

func (lc *lifecycle) resetReply() {
	if lc.replyOver {
		return
	}
	lc.replyOver = true
	h := lc.h
	buf := h.w.WriteBuffer()
	n, err := h.resetB.Wrap(buf, 0, len(buf)).
		OriginID(h.cfg.ID).RoutedID(h.exitID).StreamID(lc.replyID).
		Sequence(lc.in.Seq).Acknowledge(lc.in.Ack).Maximum(lc.in.Max).
		TraceID(lc.traceID).
		BuildLimit()
	if err == nil {
		_ = h.w.Send(frame.FrameReset, buf[:n])
	}
}

// established handles the application's lifecycle reply: its capability
// bits, and for a session the id its request streams carry.
func (lc *lifecycle) established(caps uint16, sid []byte) {
	h := lc.h
	s := lc.s
	if lc.listen {
		if r := lc.listener(); r != nil {
			r.listenEstablished(caps)
			r.release()
		} else {
			lc.end() // the client left while the application answered
		}
		return
	}
	if s == nil {
		h.disc.known, h.disc.bits, h.disc.lc = true, caps, nil
		lc.end()
		h.answerDiscovery()
		return
	}
	s.serverCaps = caps
	s.appID = []byte(s.id)
	if len(sid) > 0 {
		s.appID = bytes.Clone(sid)
	}
	r := s.initReq
	s.initReq = nil
	if r == nil || r.gen != s.initGen || r.waiting != waitLifecycle {
		lc.end()
		return
	}
	r.waiting = waitNone
	if r.outOver {
		// The client left: it never learned the session id.
		lc.end()
		r.release()
		return
	}
	s.touch(h.w.Now().UnixNano())
	h.table.add(s)
	h.armExpiry(s)
	h.w.Logger().Debug("mcp session established", "binding", h.cfg.Name, "version", s.version.String())
	b := r.appendHead(h.scratch[:0], "result")
	b = append(b, `{"protocolVersion":`...)
	b = jsonrpc.AppendString(b, s.version.String())
	b = append(b, `,"capabilities":`...)
	b = mcp.AppendServerCapabilities(b, mcp.McpCapabilities(caps))
	b = append(b, `,"serverInfo":`...)
	b = append(b, h.serverInfo...)
	b = append(b, "}}"...)
	r.hdrSession = true
	r.respondJSON(200, b)
	r.release()
}

// closed handles the end of the lifecycle from the application's side.
func (lc *lifecycle) closed() {
	h := lc.h
	s := lc.s
	if lc.listen {
		if r := lc.listener(); r != nil {
			r.listenClosed(lc.replyBegun && !lc.aborted)
			r.release()
		}
		lc.req = nil
		return
	}
	if s == nil {
		if h.disc.lc == lc {
			h.disc.lc = nil
			h.answerDiscovery()
		}
		return
	}
	if r := s.initReq; r != nil {
		s.initReq = nil
		if r.gen == s.initGen && r.waiting == waitLifecycle {
			r.waiting = waitNone
			r.rpcError(codeInternalError, "Internal error: the application refused the session")
			r.release()
		}
		return
	}
	if h.table.remove(s) {
		s.closed = true
		h.endSession(s)
	}
}

// armExpiry arms the session's inactivity timer.
func (h *server) armExpiry(s *session) {
	if s.timerFn == nil {
		s.timerFn = func() { h.onExpiry(s) }
	}
	deadline := time.Unix(0, s.lastActive).Add(h.s.inactivity)
	if now := h.w.Now(); deadline.Before(now) {
		deadline = now.Add(h.s.inactivity)
	}
	s.timerID = h.w.TimerAt(deadline, s.timerFn)
}

// onExpiry ends a session idle for inactivity.timeout; one with a GET
// stream or requests in flight is in use, and is not idle.
func (h *server) onExpiry(s *session) {
	s.timerID = 0
	if s.closed {
		return
	}
	now := h.w.Now()
	if s.busy() {
		s.touch(now.UnixNano())
	}
	if now.Sub(time.Unix(0, s.lastActive)) < h.s.inactivity {
		h.armExpiry(s)
		return
	}
	if h.table.remove(s) {
		s.closed = true
		h.w.Logger().Debug("mcp session expired", "binding", h.cfg.Name)
		h.endSession(s)
	}
}

// endSession ends an unpublished session: its lifecycle ENDs, its timer
// stops and its GET stream ends.
func (h *server) endSession(s *session) {
	if s.timerID != 0 {
		h.w.Cancel(s.timerID)
		s.timerID = 0
	}
	if s.lc != nil {
		s.lc.end()
	}
	get := s.get
	s.get, s.resume = streamRef{}, 0
	if get.r == nil {
		return
	}
	get.r.endGet(get.gen)
	get.release()
}

// notify turns a lifecycle FLUSH into a notification on the session's
// GET stream (MCP.md §1.4).
func (s *session) notify(h *server, ext []byte) {
	if !h.flushEx.TryWrap(ext, 0, len(ext)) || h.flushEx.TypeID() != h.mcpTypeID {
		return
	}
	var method string
	var uri []byte
	switch kind := h.flushEx.Kind(); kind {
	case mcp.McpFlushExKindResourcesUpdated:
		method = "notifications/resources/updated"
		u := h.flushEx.ResourcesUpdated()
		uri = u.URI()
	case mcp.McpFlushExKindNotification:
	default:
		for _, k := range mcp.ListChanges() {
			if k.Flush == kind {
				method = k.Method
			}
		}
		if method == "" {
			return
		}
	}
	s.getSeq++
	b := append(h.scratch[:0], "event: message\nid: "...)
	b = appendEventID(b, 0, s.getSeq)
	b = append(b, "\ndata: "...)
	if h.flushEx.Kind() == mcp.McpFlushExKindNotification {
		b = appendNotification(b, h.flushEx.Notification())
	} else {
		b = append(b, `{"jsonrpc":"2.0","method":`...)
		b = jsonrpc.AppendString(b, method)
		if uri != nil {
			b = append(b, `,"params":{"uri":`...)
			b = jsonrpc.AppendString(b, uri)
			b = append(b, '}')
		}
		b = append(b, '}')
	}
	b = append(b, "\n\n"...)
	s.replay.add(h.s.replay, 0, s.getSeq, b)
	h.deliver(s.get, b)
}

// record keeps an event of a POST stream for replay, and sends it on to
// a GET stream that resumed that stream: the client resumed because it
// lost the POST's connection, whether or not the server has noticed yet.
func (s *session) record(h *server, stream, seq uint32, b []byte) {
	s.replay.add(h.s.replay, stream, seq, b)
	if s.resume == stream {
		h.deliver(s.get, b)
	}
}

// deliver sends an event to a GET stream.
func (h *server) deliver(get streamRef, b []byte) {
	if get.r != nil {
		get.r.deliverEvent(get.gen, b)
	}
}

func (r *request) deliverEvent(gen uint32, b []byte) {
	if r.gen != gen || !r.get || r.outOver {
		return
	}
	if !r.write(b) {
		r.h.w.Logger().Warn("mcp: notification dropped: GET stream queue full", "binding", r.h.cfg.Name)
	}
}

// openGet opens the session's GET stream (MCP.md §1.1 "GET rules"),
// replaying after Last-Event-ID (§1.2).
func (r *request) openGet() {
	h := r.h
	if r.ver == mcp.Version20260728 || !h.s.get {
		r.methodNotAllowed()
		return
	}
	if !r.acceptSSE && !r.acceptAny {
		r.transportError(406, codeTransport, "Not Acceptable: Client must accept text/event-stream")
		return
	}
	s := r.session()
	if s == nil || !r.versionOK() {
		return
	}
	var stream, after uint32
	resuming := false
	if r.hasLastEvent {
		stream, after, resuming = parseEventID(r.lastEvent[:r.lastEventLen])
	}
	b := h.scratch[:0]
	if s.get.r != nil {
		r.transportError(409, codeTransport, "Conflict: Only one SSE stream is allowed per session")
		return
	}
	s.get = r.ref()
	if resuming {
		s.replay.each(stream, after, func(d []byte) {
			if len(b)+len(d) <= cap(b) {
				b = append(b, d...)
			}
		})
		if stream != 0 {
			s.resume = stream
		}
	}
	priming := s.getSeq
	r.get = true
	r.mode = modeSSE
	r.beginReply(200, "text/event-stream", -1, nil)
	if resuming {
		r.write(b)
	} else if s.version >= mcp.Version20251125 {
		p := append(h.aux[:0], "id: "...)
		p = appendEventID(p, 0, priming)
		p = append(p, "\ndata: \n\n"...)
		r.write(p)
	}
	r.armKeepalive()
}

func (r *request) armKeepalive() {
	h := r.h
	r.kaID = h.w.TimerAt(h.w.Now().Add(h.s.keepalive), r.onKA)
}

// keepalive writes an SSE comment on an idle GET or subscriptions/listen
// stream.
func (r *request) keepalive() {
	r.kaID = 0
	if !r.get && r.lc == nil || r.outOver {
		return
	}
	if r.q.n == 0 {
		r.write(keepaliveComment)
	}
	r.armKeepalive()
	r.release()
}

var keepaliveComment = []byte(":\n\n")

// endGet ends the GET stream when its session ends.
func (r *request) endGet(gen uint32) {
	if r.gen != gen || !r.get {
		return
	}
	r.get = false
	if r.kaID != 0 {
		r.h.w.Cancel(r.kaID)
		r.kaID = 0
	}
	r.endReply()
}

// unregisterGet forgets the GET stream when the client leaves it.
func (r *request) unregisterGet() {
	r.get = false
	if r.kaID != 0 {
		r.h.w.Cancel(r.kaID)
		r.kaID = 0
	}
	if s := r.sess; s != nil && s.get.r == r && s.get.gen == r.gen {
		s.get, s.resume = streamRef{}, 0
	}
}

// deleteSession ends a session on DELETE (MCP.md §1.1).
func (r *request) deleteSession() {
	h := r.h
	if r.ver == mcp.Version20260728 {
		r.methodNotAllowed()
		return
	}
	s := r.session()
	if s == nil || !r.versionOK() {
		return
	}
	if h.table.remove(s) {
		s.closed = true
		h.endSession(s)
	}
	r.respondEmpty(200)
}

// cancel handles notifications/cancelled (MCP.md §1.4): the request it
// names is cancelled with no response.
func (r *request) cancel(params []byte) {
	h := r.h
	s := r.sess
	id := jsonrpc.Lookup(params, "requestId")
	if !validID(id) {
		return
	}
	hash := fnv64(id)
	// Cancelling a request takes it out of s.inflight: the matches are
	// collected first.
	refs := h.refs[:0]
	for _, e := range s.inflight {
		if e.hash == hash {
			refs = append(refs, e.ref)
		}
	}
	h.refs = refs
	for _, ref := range refs {
		ref.r.cancelled(ref.gen, id)
		ref.release()
	}
	clear(h.refs)
}

// cancelled cancels the request if it is still the one named: ABORT its
// application request and RESET the reply (MCP.md §1.6: close the
// response rather than wait for the app), and end the response without
// a JSON-RPC answer.
func (r *request) cancelled(gen uint32, id []byte) {
	if r.gen != gen || !bytes.Equal(r.id[:r.idLen], id) || !r.appOpen || r.appInitialOver && r.appReplyOver {
		return
	}
	r.cancelApp()
	if r.outOver {
		return
	}
	switch r.mode {
	case modeNone:
		r.mode = modeSSE
		r.beginReply(200, "text/event-stream", -1, nil)
		r.endReply()
	case modeSSE:
		r.endReply()
	default:
		r.abortReply()
	}
}

// initialize creates a session (MCP.md §1.4): the lifecycle stream opens
// with the client's capabilities, and the response waits for the app's.
func (r *request) initialize(params []byte) {
	h := r.h
	if !isObject(params) {
		r.rpcError(codeInvalidParams, "Invalid params: params must be an object")
		return
	}
	pv := jsonrpc.Lookup(params, "protocolVersion")
	if !isString(pv) {
		r.rpcError(codeInvalidParams, "Invalid params: protocolVersion must be a string")
		return
	}
	requested, _ := jsonrpc.UnquoteTo(h.msg[:0], pv)
	// The server echoes a version it supports, else offers its latest.
	ver := mcp.ParseVersion(requested)
	if ver == mcp.Version20260728 || !h.s.versions.has(ver) {
		ver = mcp.VersionUnsupported
		for v := mcp.Version20251125; v >= mcp.Version20250326; v-- {
			if h.s.versions.has(v) {
				ver = v
				break
			}
		}
	}
	if ver == mcp.VersionUnsupported {
		data := append(h.aux[:0], `{"supported":[`...)
		data = h.s.versions.appendList(data, true, ",")
		data = append(data, `],"requested":`...)
		data = append(data, pv...)
		data = append(data, '}')
		r.transportErrorBytes(200, codeInvalidParams, append(h.msg[:0], "Unsupported protocol version"...), data)
		return
	}
	caps := jsonrpc.Lookup(params, "capabilities")
	s := &session{id: h.table.newID(), version: ver, clientCaps: clientCapabilities(caps)}
	s.initReq, s.initGen = r, r.gen
	r.sess = s
	r.waiting = waitLifecycle
	// The session's GET stream may want every list_changed notification.
	s.lc = h.openLifecycle(s, r, []byte(s.id), s.clientCaps, capListChanged, false)
	if s.lc == nil {
		r.waiting = waitNone
		s.initReq = nil
		r.rpcError(codeInternalError, "Internal error")
	}
}

// postStateless handles a 2026-07-28 POST (MCP.md §3.4).
func (r *request) postStateless(m *message, method []byte, isRequest bool) {
	h := r.h
	if !isRequest {
		r.respondEmpty(202)
		return
	}
	if !r.hasHMethod || r.hMethodLen < 0 || string(r.hMethod[:r.hMethodLen]) != string(method) {
		msg := append(h.msg[:0], "Header mismatch: "...)
		if !r.hasHMethod {
			msg = append(msg, "the Mcp-Method header is required"...)
		} else {
			msg = append(msg, "Mcp-Method header value '"...)
			msg = append(msg, r.hMethod[:max(r.hMethodLen, 0)]...)
			msg = append(msg, "' does not match body value '"...)
			msg = append(msg, method...)
			msg = append(msg, '\'')
		}
		r.transportErrorBytes(400, codeHeaderMismatch, msg, nil)
		return
	}
	// server/discover and subscriptions/listen are requests like any
	// other: their _meta is checked first (MCP.md §3.4).
	discover, listen := string(method) == "server/discover", string(method) == "subscriptions/listen"
	mi := mcp.LookupMethod(method)
	if !discover && !listen && (mi == nil || !mi.V20260728 || mi.Need != 0 && h.disc.known && h.disc.bits&uint16(mi.Need) == 0) {
		r.rpcError(codeMethodNotFound, "Method not found")
		return
	}
	params := m.params
	var meta, pv []byte
	if isObject(params) {
		meta = jsonrpc.Lookup(params, "_meta")
	}
	if meta != nil {
		pv = jsonrpc.Lookup(meta, "io.modelcontextprotocol/protocolVersion")
	}
	if !isString(pv) {
		if r.streamBody {
			r.tooLarge() // _meta may follow the head: it cannot be checked
			return
		}
		r.rpcError(codeInvalidParams, `Invalid params: _meta["io.modelcontextprotocol/protocolVersion"] is required`)
		return
	}
	caps := jsonrpc.Lookup(meta, "io.modelcontextprotocol/clientCapabilities")
	if caps == nil {
		if r.streamBody {
			r.tooLarge()
			return
		}
		r.rpcError(codeInvalidParams, `Invalid params: _meta["io.modelcontextprotocol/clientCapabilities"] is required`)
		return
	}
	if string(pv) != `"2026-07-28"` {
		msg := append(h.msg[:0], "Header mismatch: MCP-Protocol-Version header value '2026-07-28' does not match body value "...)
		msg = append(msg, pv...)
		r.transportErrorBytes(400, codeHeaderMismatch, msg, nil)
		return
	}
	switch {
	case discover:
		r.discover()
		return
	case listen:
		r.listen(params, caps)
		return
	}
	r.openRequest(mi, params)
}

// nameHeaderOK checks Mcp-Name against the body's name or uri.
func (r *request) nameHeaderOK(name []byte) bool {
	if r.hasHName && !r.hNameBad && bytes.Equal(r.hName[:r.hNameLen], name) {
		return true
	}
	h := r.h
	msg := append(h.msg[:0], "Header mismatch: "...)
	if !r.hasHName {
		msg = append(msg, "the Mcp-Name header is required"...)
	} else {
		msg = append(msg, "Mcp-Name header value '"...)
		msg = append(msg, r.hName[:r.hNameLen]...)
		msg = append(msg, "' does not match body value '"...)
		msg = append(msg, name...)
		msg = append(msg, '\'')
	}
	r.transportErrorBytes(400, codeHeaderMismatch, msg, nil)
	return false
}

// discover answers server/discover (MCP.md §3.4, §3.5) from the
// capabilities the application gave a transient lifecycle stream,
// cached per worker.
func (r *request) discover() {
	h := r.h
	if h.disc.known {
		r.respondDiscover()
		return
	}
	r.waiting = waitDiscover
	h.disc.waiting = append(h.disc.waiting, r.ref())
	if h.disc.lc == nil {
		h.disc.lc = h.openLifecycle(nil, r, nil, 0, 0, false)
		if h.disc.lc == nil {
			h.answerDiscovery()
		}
	}
}

func (r *request) respondDiscover() {
	h := r.h
	b := r.appendHead(h.scratch[:0], "result")
	b = append(b, `{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":`...)
	b = append(b, h.serverInfo...)
	// SEP-2549: DiscoverResult carries the caching hints too, as go-sdk
	// v1.8.0 writes them (MCP.md §3.5).
	b = append(b, `},"ttlMs":0,"cacheScope":"public","supportedVersions":[`...)
	b = h.s.versions.appendList(b, true, ",")
	b = append(b, `],"capabilities":`...)
	// 2026-07-28 removed resources/subscribe (MCP.md §3.4).
	b = mcp.AppendServerCapabilities(b, mcp.McpCapabilities(h.disc.bits)&^mcp.McpCapabilitiesServerResourcesSubscribe)
	b = append(b, "}}"...)
	r.respondJSON(200, b)
}

// answerDiscovery answers the requests waiting for the capabilities: with
// them when the application gave them, else with an internal error.
func (h *server) answerDiscovery() {
	waiting := h.disc.waiting
	for i, ref := range waiting {
		waiting[i] = streamRef{}
		r := ref.r
		if r.gen != ref.gen || r.waiting != waitDiscover {
			continue
		}
		r.waiting = waitNone
		if !r.outOver {
			if h.disc.known {
				r.respondDiscover()
			} else {
				r.rpcError(codeInternalError, "Internal error: the application gave no capabilities")
			}
		}
		r.release()
	}
	h.disc.waiting = waiting[:0]
}
