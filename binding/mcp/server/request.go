package server

import (
	"bytes"
	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/binding/mcp/jsonrpc"

	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/frame"
)

// Sizes of what a request keeps from its headers and body.
const (
	maxSessionID = 128  // longer ids are unknown sessions
	maxMethod    = 128  // a longer Mcp-Method header mismatches
	maxName      = 4096 // tool and prompt names, resource uris
	maxID        = 256  // a request id's JSON text
	maxEventID   = 64
)

// HTTP methods the endpoint serves.
const (
	methodOther uint8 = iota
	methodPost
	methodGet
	methodDelete
)

// Response modes.
const (
	modeNone  uint8 = iota // no response head sent yet
	modeJSON               // application/json
	modeSSE                // text/event-stream
	modeLocal              // a response the server wrote by itself
)

// What a request waits for besides its own streams.
const (
	waitNone      uint8 = iota
	waitLifecycle       // initialize: the app's lifecycle reply
	waitDiscover        // server/discover: the app's capabilities
	waitListen          // subscriptions/listen: the app's lifecycle reply
)

// request is one HTTP request and, for an MCP request, its application
// stream. It lives on the worker its HTTP stream arrived on, unless it
// names a session another worker owns: then it is relayed there (rl). The
// structs are reused, and gen tells a reference whether it still names
// the same request.
type request struct {
	h     *server
	gen   uint32
	freed bool // on the free list
	onNet engine.MessageConsumer
	onApp engine.MessageConsumer
	onKA  func()

	// The HTTP stream.
	originID, routedID     int64
	initialID, replyID     int64
	traceID, authorization int64
	in, out                engine.Flow
	inOver                 bool // END or ABORT received, or RESET sent
	outOver                bool // END or ABORT sent, or RESET received
	replyBegun             bool
	endPending             bool // END the reply once the queue drains
	q                      outQueue

	// Request headers.
	method        uint8
	acceptJSON    bool
	acceptSSE     bool
	acceptAny     bool
	ver           mcp.Version
	early         int // a status decided from the headers
	contentLength int64
	bodyLen       int64  // body bytes received
	held          int    // the status of a response held for the body's end
	earlyCode     int    // with early: the error's code and message, when set
	earlyMsg      string //
	hasSID        bool
	sidLen        int
	verLen        int
	hasHMethod    bool
	hMethodLen    int
	hasHName      bool
	hNameBad      bool
	hNameLen      int
	hasLastEvent  bool
	lastEventLen  int
	sid           [maxSessionID]byte
	verRaw        [32]byte
	hMethod       [maxMethod]byte
	lastEvent     [maxEventID]byte
	hName         [maxName]byte

	// The body: held in a slot, or streaming through it.
	inSlot     int
	inLen      int
	streamBody bool
	st         streamState

	// The JSON-RPC message and where it went.
	id        [maxID]byte
	idLen     int
	sess      *session
	inflight  bool
	stateless bool
	waiting   uint8
	// cacheable: a 2026-07-28 list or read, whose result carries ttlMs
	// and cacheScope (SEP-2549).
	cacheable bool
	// lc is a subscriptions/listen's lifecycle stream, and subs the
	// list_changed bits it asked for, then those agreed.
	lc   *lifecycle
	subs uint16
	// rl relays the request to the worker that owns its session.
	rl *relay
	// hdrSession adds mcp-session-id to the response head; hdrAllow adds
	// allow.
	hdrSession bool
	hdrAllow   string

	// The application stream.
	appOpen        bool
	appInitialID   int64
	appReplyID     int64
	appOut, appIn  engine.Flow
	appInitialOver bool
	appReplyOver   bool
	params         []byte
	paramsSent     int

	// The response.
	mode      uint8
	stream    uint32 // the SSE stream's number in the session's event ids
	seq       uint32 // the last event id's sequence on that stream
	resSlot   int    // the app's reply, at resHead
	resLen    int
	streaming bool // the app's reply outgrew its slot and streams through
	get       bool // the session's GET stream
	detached  bool // the client left an SSE response; events go to replay
	kaID      int64
	parts     *noteParts // a notification of the app's reply arriving in parts
}

// outQueue holds response bytes waiting for the network window: in a
// buffer slot, slot[off:off+n], and once they outgrow it in a buffer of
// the request's own, over[off:off+n], up to maxQueue. Events are not
// flow-controlled (FLUSH carries no credit), so a tool that logs faster
// than its client reads fills the queue; a slot alone (32 KiB) dropped
// events, the tool's answer with them, in bursts of a few hundred log
// lines.
type outQueue struct {
	slot   int
	off, n int
	over   []byte // the queue once it left the slot; nil before
}

// maxQueue bounds the bytes a response holds for a client that reads
// slower than its events come; past it events are dropped with a warning.
const maxQueue = 8 << 20

func (r *request) reset() {
	h, gen, onNet, onApp, onKA := r.h, r.gen, r.onNet, r.onApp, r.onKA
	// The arrays are left as they are: their lengths say what is valid.
	r.originID, r.routedID, r.initialID, r.replyID = 0, 0, 0, 0
	r.traceID, r.authorization = 0, 0
	r.in, r.out = engine.Flow{}, engine.Flow{}
	r.inOver, r.outOver, r.replyBegun, r.endPending = false, false, false, false
	r.q = outQueue{slot: -1}
	r.method, r.acceptJSON, r.acceptSSE, r.acceptAny = methodOther, false, false, false
	r.ver, r.early, r.contentLength = mcp.VersionNone, 0, -1
	r.bodyLen, r.earlyCode, r.earlyMsg, r.held = 0, 0, "", 0
	r.hasSID, r.sidLen, r.verLen = false, 0, 0
	r.hasHMethod, r.hMethodLen, r.hasHName, r.hNameBad, r.hNameLen = false, 0, false, false, 0
	r.hasLastEvent, r.lastEventLen = false, 0
	r.inSlot, r.inLen, r.streamBody, r.st = -1, 0, false, streamState{}
	r.idLen, r.sess, r.inflight, r.stateless, r.waiting = 0, nil, false, false, waitNone
	r.cacheable, r.lc, r.subs, r.rl = false, nil, 0, nil
	r.hdrSession, r.hdrAllow = false, ""
	r.appOpen, r.appInitialID, r.appReplyID = false, 0, 0
	r.appOut, r.appIn = engine.Flow{}, engine.Flow{}
	r.appInitialOver, r.appReplyOver = false, false
	r.params, r.paramsSent = nil, 0
	r.mode, r.stream, r.seq, r.resSlot, r.resLen = modeNone, 0, 0, -1, 0
	r.streaming, r.get, r.detached, r.kaID = false, false, false, 0
	r.h, r.gen, r.onNet, r.onApp, r.onKA = h, gen, onNet, onApp, onKA
	r.freed = false
	if r.parts != nil {
		r.parts.drop()
		r.parts.trim()
	}
	if r.onKA == nil {
		r.onKA = r.keepalive
	}
}

// done reports whether nothing more can happen to the request.
func (r *request) done() bool {
	return r.inOver && r.outOver && r.waiting == waitNone && !r.get && r.lc == nil &&
		(!r.appOpen || r.appInitialOver && r.appReplyOver)
}

// release returns the request to the free list once it is done. Every
// frame handler and dispatched function ends with it.
func (r *request) release() {
	if r.freed || !r.done() {
		return
	}
	h := r.h
	if r.inflight {
		r.sess.removeInflight(r, r.gen)
		r.inflight = false
	}
	if r.kaID != 0 {
		h.w.Cancel(r.kaID)
		r.kaID = 0
	}
	r.freeIn()
	r.freeRes()
	r.releaseStream()
	r.q.drop(h)
	r.gen++
	r.freed = true
	r.sess = nil
	r.params = nil
	h.free = append(h.free, r)
}

func (r *request) freeIn() {
	if r.inSlot >= 0 {
		r.h.pool.Release(r.inSlot)
		r.inSlot, r.inLen = -1, 0
	}
}

func (r *request) freeRes() {
	if r.resSlot >= 0 {
		r.h.pool.Release(r.resSlot)
		r.resSlot, r.resLen = -1, 0
	}
}

// ref names the request for a session or a discovery.
func (r *request) ref() streamRef { return streamRef{r: r, gen: r.gen} }

// releaseRef releases the request ref names, if it still does: what a
// reference's holder calls after acting on it.
func (ref streamRef) release() {
	if ref.r.gen == ref.gen {
		ref.r.release()
	}
}

// onNetFrame handles the HTTP stream: the request's frames, and the
// throttle of the response.
func (r *request) onNetFrame(t frame.FrameType, buf []byte) {
	if r.rl != nil {
		r.rl.fromNet(t, buf)
		return
	}
	h := r.h
	switch t {
	case frame.FrameBegin:
		if h.begin.TryWrap(buf, 0, len(buf)) {
			r.traceID, r.authorization = h.begin.TraceID(), h.begin.Authorization()
			r.in.Seq, r.in.Ack = h.begin.Sequence(), h.begin.Acknowledge()
			r.onHeaders(h.begin.Extension())
			if r.hasSID && h.workers > 1 && r.toOwner(buf) {
				return
			}
			r.grantIn()
		}
	case frame.FrameData:
		if h.data.TryWrap(buf, 0, len(buf)) {
			if r.in.OnData(&h.data) != nil {
				r.fail()
				break
			}
			r.onBody(h.data.Payload())
		}
	case frame.FrameEnd:
		r.inOver = true
		switch {
		case r.held != 0:
			r.sendHeld()
		case r.streamBody:
			r.endStream()
		case !r.outOver && r.mode == modeNone && r.waiting == waitNone && !r.appOpen:
			r.onRequest()
		}
	case frame.FrameAbort:
		r.inOver = true
		r.onGone()
	case frame.FrameFlush:
		if h.flush.TryWrap(buf, 0, len(buf)) {
			_ = r.in.OnFrame(h.flush.Sequence())
		}
	case frame.FrameWindow:
		if h.window.TryWrap(buf, 0, len(buf)) && h.window.StreamID() == r.replyID {
			if r.out.OnWindow(&h.window) != nil {
				r.fail()
				break
			}
			r.flushOut()
			if r.streaming {
				r.grantApp()
			}
		}
	case frame.FrameReset:
		r.outOver = true
		r.q.drop(h)
		r.onGone()
	}
	r.release()
}

// onHeaders reads the request headers: what routes the request, and the
// checks that need no body (Origin, method, size).
func (r *request) onHeaders(ext []byte) {
	h := r.h
	it, ok := httpHeaders(ext, h.httpTypeID)
	if !ok {
		r.early = 400
		return
	}
	var authority, origin []byte
	hasOrigin := false
	for name, v, ok := it.next(); ok; name, v, ok = it.next() {
		switch string(name) {
		case ":method":
			switch string(v) {
			case "POST":
				r.method = methodPost
			case "GET":
				r.method = methodGet
			case "DELETE":
				r.method = methodDelete
			}
		case ":authority":
			authority = v
		case "host":
			if authority == nil {
				authority = v
			}
		case "accept":
			json, sse, any := scanAccept(v)
			r.acceptJSON = r.acceptJSON || json
			r.acceptSSE = r.acceptSSE || sse
			r.acceptAny = r.acceptAny || any
		case "content-length":
			if n, ok := parseUint(v); ok {
				r.contentLength = n
			}
		case "mcp-session-id":
			r.hasSID = true
			r.sidLen = copy(r.sid[:], v)
			if len(v) > len(r.sid) {
				r.sidLen = -1 // no session has such an id
			}
		case "mcp-protocol-version":
			r.ver = mcp.ParseVersion(v)
			r.verLen = copy(r.verRaw[:], v)
		case "origin":
			origin, hasOrigin = v, true
		case "last-event-id":
			r.hasLastEvent = len(v) <= len(r.lastEvent)
			r.lastEventLen = copy(r.lastEvent[:], v)
		case "mcp-method":
			r.hasHMethod = true
			r.hMethodLen = copy(r.hMethod[:], v)
			if len(v) > len(r.hMethod) {
				r.hMethodLen = -1
			}
		case "mcp-name":
			r.hasHName = true
			d, ok := decodeHeaderValue(r.hName[:0], v)
			r.hNameLen, r.hNameBad = len(d), !ok
		}
	}
	switch {
	case !h.hostAllowed(authority):
		// DNS-rebinding protection: a request naming another host than
		// the ones the server answers for.
		r.early = 403
	case hasOrigin && !h.originAllowed(origin, authority):
		r.early = 403
	case r.method == methodOther:
		r.early = 405
	case r.method == methodPost && r.contentLength > h.s.maxBody:
		r.early = 413
	}
}

// hostAllowed checks Host (:authority) against the hosts option, when set.
func (h *server) hostAllowed(authority []byte) bool {
	if len(h.s.hosts) == 0 {
		return true
	}
	for _, a := range h.s.hosts {
		if asciiEqualFold(a, authority) {
			return true
		}
	}
	return false
}

// originAllowed validates Origin (MCP.md §1.3, DNS rebinding protection):
// an origin the options list, or one naming the host the request was sent
// to when that host is trusted (trustedHost). A same-host Origin alone
// proves nothing: a rebound name (evil.example resolving to 127.0.0.1)
// sends Host and Origin alike.
func (h *server) originAllowed(origin, authority []byte) bool {
	if h.s.anyOrigin {
		return true
	}
	o := origin
	if len(o) > 0 && o[len(o)-1] == '/' {
		o = o[:len(o)-1]
	}
	for _, a := range h.s.origins {
		if asciiEqualFold(a, o) {
			return true
		}
	}
	i := bytes.Index(o, []byte("://"))
	if i <= 0 || authority == nil || !asciiEqualFold(o[i+3:], authority) {
		return false
	}
	return h.trustedHost(authority)
}

// trustedHost reports whether a same-host Origin may be trusted: when
// options.hosts is set, Host has been checked against it already; else
// only a loopback name (localhost, 127.0.0.1, [::1], any port) is.
func (h *server) trustedHost(authority []byte) bool {
	if len(h.s.hosts) > 0 {
		return true
	}
	host := authority
	if j := bytes.LastIndexByte(host, ':'); j >= 0 && !bytes.HasSuffix(host, []byte("]")) {
		host = host[:j]
	}
	return asciiEqualFold(host, []byte("localhost")) || string(host) == "127.0.0.1" || string(host) == "[::1]"
}

func parseUint(v []byte) (int64, bool) {
	if len(v) == 0 || len(v) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range v {
		if !isDigit(c) {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// onBody collects the body in a buffer slot, streams it on once it
// outgrows the slot, or drops it when the request is already answered.
func (r *request) onBody(p []byte) {
	h := r.h
	r.bodyLen += int64(len(p))
	if r.bodyLen > h.s.maxBody && r.method == methodPost && r.early == 0 && r.mode == modeNone {
		// Beyond limits.body, and no content-length said so (that one is
		// answered at the body's end): answered at once, the rest
		// refused.
		r.tooLarge()
		return
	}
	if r.streamBody {
		r.streamMore(p)
		return
	}
	if r.early != 0 || r.method != methodPost || r.mode != modeNone || r.inOver {
		r.grantIn()
		return
	}
	if r.inSlot < 0 {
		r.inSlot = h.pool.Acquire(r.initialID)
		if r.inSlot == engine.NoSlot {
			r.inSlot = -1
			r.early = 503
			r.grantIn()
			return
		}
	}
	b := h.pool.Buffer(r.inSlot)
	if r.inLen+len(p) > len(b) {
		r.fail() // beyond the window granted
		return
	}
	r.inLen += copy(b[r.inLen:], p)
	if r.inLen == len(b) && (r.contentLength < 0 || r.contentLength > int64(r.inLen)) {
		// The slot is full and more is coming: stream.
		r.startStream()
	}
}

// grantIn offers the request stream its window: the room its slot has, or
// everything received when the body is dropped.
func (r *request) grantIn() {
	if r.inOver {
		return
	}
	h := r.h
	max := int32(h.pool.SlotCapacity())
	ack := r.in.Seq - int64(r.inLen)
	if ack == r.in.Ack && max == r.in.Max {
		return
	}
	r.in.Ack, r.in.Max = ack, max
	buf := h.w.WriteBuffer()
	n, err := h.windowB.Wrap(buf, 0, len(buf)).
		OriginID(r.originID).RoutedID(r.routedID).StreamID(r.initialID).
		Sequence(r.in.Seq).Acknowledge(r.in.Ack).Maximum(r.in.Max).
		TraceID(r.traceID).BudgetID(0).Padding(0).
		BuildLimit()
	if err == nil {
		_ = h.w.Send(frame.FrameWindow, buf[:n])
	}
}

// resetIn refuses the rest of the request.
func (r *request) resetIn() {
	if r.inOver {
		return
	}
	r.inOver = true
	h := r.h
	buf := h.w.WriteBuffer()
	n, err := h.resetB.Wrap(buf, 0, len(buf)).
		OriginID(r.originID).RoutedID(r.routedID).StreamID(r.initialID).
		Sequence(r.in.Seq).Acknowledge(r.in.Ack).Maximum(r.in.Max).
		TraceID(r.traceID).
		BuildLimit()
	if err == nil {
		_ = h.w.Send(frame.FrameReset, buf[:n])
	}
}

// fail tears the request down after a protocol violation on one of its
// streams.
func (r *request) fail() {
	r.resetIn()
	r.abortReply()
	r.onGone()
}

// onGone handles the client leaving: its request aborted or its response
// reset. A disconnect is not a cancellation (MCP.md §1.1 rule 6): an SSE
// response of a session goes on into the session's replay buffer, to be
// resumed with Last-Event-ID; a JSON response has no such future, so its
// application stream is cancelled.
func (r *request) onGone() {
	if !r.outOver {
		r.abortReply()
	}
	r.resetIn()
	r.q.drop(r.h)
	if r.get {
		r.unregisterGet()
	}
	if r.waiting == waitListen || r.lc != nil {
		r.endListen() // the subscription ends with its stream
	}
	if r.appOpen && !(r.appInitialOver && r.appReplyOver) {
		if r.mode == modeSSE && r.sess != nil && !r.stateless {
			r.detached = true
			return
		}
		r.cancelApp()
	}
	if r.waiting == waitDiscover {
		r.waiting = waitNone // the discovery answers no one for it
	}
	// An initialize waiting for the app stays waiting: the lifecycle
	// reply ends the session the client never learned.
}

// onRequest handles the complete request.
func (r *request) onRequest() {
	h := r.h
	if r.early != 0 {
		r.respondEarly()
		return
	}
	switch r.method {
	case methodPost:
		if !r.acceptAny && !(r.acceptJSON && r.acceptSSE) {
			r.transportError(406, codeTransport, "Not Acceptable: Client must accept both application/json and text/event-stream")
			return
		}
		r.post(r.body())
	case methodGet:
		r.openGet()
	case methodDelete:
		r.deleteSession()
	}
	_ = h
}

func (r *request) body() []byte {
	if r.inSlot < 0 {
		return nil
	}
	return r.h.pool.Buffer(r.inSlot)[:r.inLen]
}

// respondEarly answers what the headers decided.
func (r *request) respondEarly() {
	if r.earlyMsg != "" {
		r.transportError(r.early, r.earlyCode, r.earlyMsg)
		return
	}
	switch r.early {
	case 403:
		r.transportError(403, codeTransport, "Forbidden: Origin not allowed")
	case 405:
		r.methodNotAllowed()
	case 413:
		r.transportError(413, codeTransport, "Payload Too Large: the request body exceeds the limit")
	case 503:
		r.transportError(503, codeTransport, "Service Unavailable: no buffer for the request body")
	default:
		r.transportError(400, codeTransport, "Bad Request: malformed request")
	}
}

// methodNotAllowed answers 405 with the methods the endpoint takes.
func (r *request) methodNotAllowed() {
	switch {
	case r.ver == mcp.Version20260728:
		r.hdrAllow = "POST"
	case r.h.s.get:
		r.hdrAllow = "GET, POST, DELETE"
	default:
		r.hdrAllow = "POST, DELETE"
	}
	r.transportError(405, codeTransport, "Method Not Allowed")
}

// message is a JSON-RPC message's top-level members.
type message struct {
	jsonrpc, id, method, params, result, err []byte
}

// notObject is the Invalid Request message for a body whose value is of
// kind k rather than an object.
func notObject(k jsonrpc.Kind) string {
	if k == jsonrpc.KindArray {
		// 2025-03-26 allowed batches; 2025-06-18 removed them. The server
		// does not take them, in any version.
		return "Invalid Request: batch requests are not supported"
	}
	return "Invalid Request: a JSON-RPC message must be an object"
}

// messageOf returns the members of body that t has tracked whole. Keys
// count as they decode ("\u0069d" is "id"), and a repeated member's last
// value counts.
func messageOf(t *jsonrpc.Tracker, body []byte) message {
	return message{
		jsonrpc: t.Member(jsonrpc.MemberJSONRPC).Bytes(body),
		id:      t.Member(jsonrpc.MemberID).Bytes(body),
		method:  t.Member(jsonrpc.MemberMethod).Bytes(body),
		params:  t.Member(jsonrpc.MemberParams).Bytes(body),
		result:  t.Member(jsonrpc.MemberResult).Bytes(body),
		err:     t.Member(jsonrpc.MemberError).Bytes(body),
	}
}

// post handles a POST body: one JSON-RPC message (MCP.md §1.1).
func (r *request) post(body []byte) {
	// MCP.md §1.5: -32700 for a body that is not JSON at all. The same
	// scan finds the top-level members.
	t := &r.h.body
	if t.Track(body) != nil {
		r.transportError(400, codeParseError, "Parse error: Invalid JSON")
		return
	}
	if k := t.Kind(); k != jsonrpc.KindObject {
		r.transportError(400, codeInvalidRequest, notObject(k))
		return
	}
	m := messageOf(t, body)
	if string(m.jsonrpc) != `"2.0"` {
		r.transportError(400, codeInvalidRequest, `Invalid Request: jsonrpc must be "2.0"`)
		return
	}
	if m.id != nil && !r.setID(m.id) {
		return
	}
	if m.method == nil && (m.id == nil || m.result == nil && m.err == nil) {
		r.idLen = 0
		r.transportError(400, codeInvalidRequest, "Invalid Request: not a request, notification or response")
		return
	}
	r.dispatch(&m, m.method != nil && m.id != nil)
}

// setID keeps a request's id, answering 400 when it is not one.
func (r *request) setID(id []byte) bool {
	if !validID(id) || len(id) > len(r.id) {
		r.idLen = 0
		r.transportError(400, codeInvalidRequest, "Invalid Request: the id must be a string or an integer")
		return false
	}
	r.idLen = copy(r.id[:], id)
	return true
}

// dispatch routes a JSON-RPC message by era, session and method. A body
// that streams (r.streamBody) has only the start of its params, and only
// requests that open an application stream can take one.
func (r *request) dispatch(m *message, request bool) {
	h := r.h
	var method []byte
	if m.method != nil {
		var err error
		if !isString(m.method) {
			r.idLen = 0
			r.transportError(400, codeInvalidRequest, "Invalid Request: method must be a string")
			return
		}
		if method, err = jsonrpc.UnquoteTo(h.name[:0], m.method); err != nil {
			r.rpcError(codeMethodNotFound, "Method not found")
			return
		}
	}
	if r.streamBody && (!request || mcp.LookupMethod(method) == nil) {
		r.tooLarge()
		return
	}
	switch {
	case r.ver == mcp.Version20260728 && h.s.versions.has(mcp.Version20260728):
		r.stateless = true
		r.postStateless(m, method, request)
		return
	case r.ver == mcp.VersionUnsupported || r.ver != mcp.VersionNone && !h.s.versions.has(r.ver):
		if !r.hasSID {
			r.unsupportedVersion2026()
			return
		}
	}
	if request && string(method) == "initialize" {
		r.initialize(m.params)
		return
	}
	s := r.session()
	if s == nil {
		return
	}
	if !r.versionOK() {
		return
	}
	if !request {
		if m.method != nil && string(method) == "notifications/cancelled" {
			r.cancel(m.params)
		}
		// MCP.md §1.1 rule 3: notifications and responses get 202.
		r.respondEmpty(202)
		return
	}
	mi := mcp.LookupMethod(method)
	if string(method) == "ping" || string(method) == "logging/setLevel" && s.serverCaps&capLogging == 0 {
		// Both answered here: ping by the spec, and logging/setLevel when
		// the application takes no log levels (it sends no log messages,
		// so every level is accepted).
		r.respondResult(emptyObject)
		return
	}
	if mi == nil || mi.Need != 0 && s.serverCaps&uint16(mi.Need) == 0 {
		r.rpcError(codeMethodNotFound, "Method not found")
		return
	}
	r.openRequest(mi, m.params)
}

// session finds the session a stateful request names, answering 400 when
// it names none and 404 when it is unknown or ended (MCP.md §1.3).
func (r *request) session() *session {
	h := r.h
	if !r.hasSID {
		r.idLen = 0
		r.transportError(400, codeTransport, "Bad Request: Mcp-Session-Id header is required")
		return nil
	}
	var s *session
	if r.sidLen > 0 {
		s = h.table.lookup(r.sid[:r.sidLen])
	}
	if s == nil {
		r.idLen = 0
		r.transportError(404, codeSessionNotFound, "Session not found")
		return nil
	}
	s.touch(h.w.Now().UnixNano())
	r.sess = s
	return s
}

// versionOK checks MCP-Protocol-Version on a session's request: absent
// means 2025-03-26 (MCP.md §1.3), an unsupported one gets 400.
func (r *request) versionOK() bool {
	h := r.h
	if r.ver == mcp.VersionNone || r.ver != mcp.VersionUnsupported && h.s.versions.has(r.ver) && r.ver != mcp.Version20260728 {
		return true
	}
	msg := append(h.msg[:0], "Bad Request: Unsupported protocol version: "...)
	msg = append(msg, r.verRaw[:r.verLen]...)
	msg = append(msg, " (supported versions: "...)
	msg = h.s.versions.appendList(msg, false, ", ")
	msg = append(msg, ')')
	r.idLen = 0
	r.transportErrorBytes(400, codeTransport, msg, nil)
	return false
}

// unsupportedVersion2026 answers a request without a session whose
// MCP-Protocol-Version the server does not speak, the 2026-07-28 way
// (MCP.md §3.3: -32022 with the supported and requested versions).
func (r *request) unsupportedVersion2026() {
	h := r.h
	data := append(h.aux[:0], `{"supported":[`...)
	data = h.s.versions.appendList(data, true, ",")
	data = append(data, `],"requested":`...)
	data = jsonrpc.AppendString(data, r.verRaw[:r.verLen])
	data = append(data, '}')
	r.transportErrorBytes(400, codeUnsupportedVer, append(h.msg[:0], "Unsupported protocol version"...), data)
}

// openRequest checks a request's params and opens its application stream.
func (r *request) openRequest(mi *mcp.Method, params []byte) {
	h := r.h
	if params == nil {
		params = emptyObject
	} else if !isObject(params) {
		r.rpcError(codeInvalidParams, "Invalid params: params must be an object")
		return
	}
	var name []byte
	if mi.Kind == mcp.McpBeginExKindRequest {
		name = append(h.name[:0], mi.Name...) // the generic kind's method
	}
	switch mi.Param {
	case mcp.ParamName, mcp.ParamURI:
		key, msg := "name", "Invalid params: name must be a string"
		if mi.Param == mcp.ParamURI {
			key, msg = "uri", "Invalid params: uri must be a string"
		}
		v := jsonrpc.Lookup(params, key)
		switch {
		case v == nil && r.streamBody && !r.stateless:
			// Not in the head of a streaming body: the application
			// takes the one in the params (a null name).
		case !isString(v):
			if r.streamBody {
				r.tooLarge()
				return
			}
			r.rpcError(codeInvalidParams, msg)
			return
		default:
			var err error
			if name, err = jsonrpc.UnquoteTo(h.name[:0], v); err != nil {
				r.rpcError(codeInvalidParams, "Invalid params: name or uri too long")
				return
			}
			if r.stateless && !r.nameHeaderOK(name) {
				return
			}
		}
	}
	if mi.List {
		// MCP.md §1.4: an invalid cursor gets -32602; one that is not
		// even a string is invalid whatever the app would make of it.
		if c := jsonrpc.Lookup(params, "cursor"); c != nil && !isString(c) {
			r.rpcError(codeInvalidParams, "Invalid params: cursor must be a string")
			return
		}
	}
	switch mi.Kind {
	case mcp.McpBeginExKindToolsList, mcp.McpBeginExKindPromptsList, mcp.McpBeginExKindResourcesList,
		mcp.McpBeginExKindResourcesTemplatesList, mcp.McpBeginExKindResourcesRead:
		r.cacheable = r.stateless
	}
	var sid []byte
	if s := r.sess; s != nil {
		sid = s.appID
		if !r.st.idPending {
			s.addInflight(fnv64(r.id[:r.idLen]), r.ref())
			r.inflight = true
		}
	}
	if !r.openApp(mi.Kind, sid, name, params) {
		r.rpcError(codeInternalError, "Internal error")
	}
}

var emptyObject = []byte("{}")

// respondEmpty answers with status and no body (202, DELETE's 200).
func (r *request) respondEmpty(status int) {
	r.mode = modeLocal
	r.beginReply(status, "", 0, nil)
	r.endReply()
}

// respondJSON answers with a JSON body the server wrote. While the
// request's body is still arriving (a streaming body refused), the answer
// waits in the queue for its end: a client busy sending may not read a
// response sent before, and the http server would have to close the
// connection after it.
func (r *request) respondJSON(status int, body []byte) {
	r.mode = modeLocal
	if !r.inOver && r.bodyLen <= r.h.s.maxBody {
		if r.q.push(r.h, r.initialID, body) {
			r.held = status
			return
		}
	}
	r.beginReply(status, "application/json", len(body), nil)
	r.write(body)
	r.endReply()
}

// sendHeld sends a response held for the body's end.
func (r *request) sendHeld() {
	status := r.held
	r.held = 0
	r.beginReply(status, "application/json", r.q.n, nil)
	r.flushOut()
	r.endReply()
}

// respondResult answers the request with a result the server wrote.
func (r *request) respondResult(result []byte) {
	h := r.h
	b := r.appendHead(h.scratch[:0], "result")
	b = append(b, result...)
	b = append(b, '}')
	r.respondJSON(200, b)
}

// appendHead appends {"jsonrpc":"2.0","id":<id>,"<member>": .
func (r *request) appendHead(dst []byte, member string) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = append(dst, r.id[:r.idLen]...)
	dst = append(dst, `,"`...)
	dst = append(dst, member...)
	return append(dst, `":`...)
}

// rpcError answers a request with a JSON-RPC error of the server's own.
// The HTTP status follows the era: 200 before 2026-07-28, whose errors
// carry their own statuses (MCP.md §3.4: 404 for an unknown method, 400
// for a request the transport rejects).
func (r *request) rpcError(code int, msg string) {
	status := 200
	if r.stateless {
		status = 400
		if code == codeMethodNotFound {
			status = 404
		}
	}
	r.transportErrorBytes(status, code, append(r.h.msg[:0], msg...), nil)
}

// transportError answers with status and a JSON-RPC error, with the
// request's id when it is known.
func (r *request) transportError(status, code int, msg string) {
	r.transportErrorBytes(status, code, append(r.h.msg[:0], msg...), nil)
}

func (r *request) transportErrorBytes(status, code int, msg, data []byte) {
	h := r.h
	b := appendErrorBody(h.scratch[:0], r.id[:r.idLen], code, msg, data)
	r.respondJSON(status, b)
}

// appendErrorBody appends a JSON-RPC error response: with the id when
// there is one, else with "id":null last, as the SDKs write it.
func appendErrorBody(dst, id []byte, code int, msg, data []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0",`...)
	if len(id) > 0 {
		dst = append(dst, `"id":`...)
		dst = append(dst, id...)
		dst = append(dst, ',')
	}
	dst = append(dst, `"error":{"code":`...)
	dst = appendInt(dst, int64(code))
	dst = append(dst, `,"message":`...)
	dst = jsonrpc.AppendString(dst, msg)
	if len(data) > 0 {
		dst = append(dst, `,"data":`...)
		dst = append(dst, data...)
	}
	dst = append(dst, '}')
	if len(id) == 0 {
		dst = append(dst, `,"id":null`...)
	}
	return append(dst, '}')
}
