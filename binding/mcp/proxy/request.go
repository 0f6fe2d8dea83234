package proxy

import (
	"time"

	"github.com/sluicehq/sluice/binding"
	"github.com/sluicehq/sluice/binding/internal/streams"
	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/binding/mcp/jsonrpc"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/frame"
	"github.com/sluicehq/sluice/internal/freelist"
)

// codeRequestTimeout is the JSON-RPC error of a request its route did
// not answer in time, the code the MCP SDKs give a request timeout.
const codeRequestTimeout int32 = -32001

// What a request does with its routes.
const (
	opCall     uint8 = iota // one route, by the name's prefix; the reply relayed
	opList                  // every route at once; the results merged
	opSetLevel              // logging/setLevel: every route with SERVER_LOGGING
	opUnknown               // a generic request the proxy does not route
)

// request is one downstream request stream and what the proxy does for
// it: one leg (a call) or one leg per route (a list, logging/setLevel).
// Its Stream receives the downstream's request (In) and sends the reply
// (Out), relayed from the route or the proxy's own answer.
type request struct {
	engine.Stream
	h             *Handler
	traceID       int64 // the BEGIN's, on the frames the proxy makes for the request
	authorization int64
	kind          uint8
	op            uint8
	state         uint32

	sid           []byte // the session id; sidNull when it had none
	sidNull       bool
	ident         []byte // the BEGIN's name, uri or method
	identNull     bool
	contentLength int32
	timeout       int64

	// The params arriving in a slot of the worker's pool, and once they
	// outgrow it, in spill (up to maxParams); spill is empty until then.
	slot   int
	have   int
	spill  []byte
	scan   jsonrpc.Tracker // finds where the params end
	params []byte          // once complete (and rewritten for the route)

	route   int
	upIdent []byte // the name or uri the route knows, or a clientResponse's route id
	upBuf   []byte // a clientResponse's route id, or a ui:// uri upstream (resolve)
	legs    []*leg
	open    int // legs not yet settled
	total   int // bytes the legs collected
	entries []cursorEntry
	cbuf    []byte // the decoded cursor the entries point into
	// rewritten holds the params of the call execute_tool makes.
	rewritten []byte
	timer     int64
	// A call's timeout: wait, the route's for the method (0: none armed),
	// and the deadline the route's next frame must come by, pushed back by
	// each frame of its reply; zero while a request to the client the
	// reply carried is out (paused).
	wait     time.Duration
	deadline time.Time
	dataOut  bool // the call's reply has relayed DATA
	reviving int  // routes a list waits to have back in its session
	// gen tells a request apart from its reuse, for a completion that
	// comes back from another worker (revive).
	gen uint32

	respError uint8 // a clientResponse's error flag

	// A prefixed route's tools/call, prompts/get or resources/read reply
	// (rewriting):
	// uris finds the resource uris in it (resultURIs), at where they are
	// in a DATA,
	// and held keeps what waits for the downstream's credit, prefixes put
	// in. The route's END waits behind held (endHeld), its extension in
	// endExt and its trace id and authorization in endTrace and endAuth.
	uris              jsonrpc.PathScanner
	at                []int
	held              []byte
	uriAt             int // where in held an open uri's text begins (uriOpen)
	endExt            []byte
	endTrace, endAuth int64

	answer    []byte // the proxy's own answer on the downstream reply
	answerOff int
	// shared, when set, is the answer instead: a cached list's bytes,
	// which the cache never writes again once made.
	shared []byte
	// internal is a request of the cache's hydrater, which the proxy
	// opened to itself: it goes to the routes, never to the cache.
	internal bool

	onFrame   engine.MessageConsumer
	onTimeout func()
}

const (
	downEnded   uint32 = 1 << iota // END received: forwarded once the params went up
	paramsDone                     // the params are complete
	local                          // the proxy answers the reply itself
	answerReady                    // answer holds all of it: END follows the last byte
	answerError                    // the answer is an error object: END outcome ERROR
	started                        // the legs are open
	released
	rewriting // a call whose reply's resource uris get the route's prefix
	endHeld   // the route's END waits for held to go
	uriOpen   // held ends in a uri's text that may yet be ui:// (uriAt)
)

// leg is the proxy's stream to one route for a request: its Stream sends
// the request (Out) and receives the route's reply (In).
type leg struct {
	engine.Stream
	r       *request
	route   int
	state   uint16
	params  []byte // what goes up: a view of the request's slot, or pbuf
	pbuf    []byte
	sent    int
	body    []byte // the reply collected
	errCode int32
	errMsg  []byte
	// deadline is when a fan-out leaves the route out.
	deadline time.Time
	onFrame  engine.MessageConsumer
}

const (
	legSettled uint16 = 1 << iota // its part of a fan-out is known
	legFailed                     // RESET, ABORT, timeout: left out
	legError                      // ERROR outcome: body is the error object
	legDown                       // out of the session and not back: not opened
	legIdle                       // not opened yet: the list waits for a revival
)

func (h *Handler) newRequest(b *frame.Begin) engine.MessageConsumer {
	r := freelist.Pop(&h.freeRequests)
	if r == nil {
		r = &request{h: h}
		r.onFrame = r.onDown
		r.onTimeout = r.timedOut
	}
	r.Accept(h.w, b.OriginID(), h.id, b.StreamID())
	r.traceID, r.authorization = b.TraceID(), b.Authorization()
	r.own()
	r.state, r.slot, r.have, r.params, r.route, r.upIdent = 0, engine.NoSlot, 0, nil, -1, nil
	r.dropSpill()
	r.legs, r.open, r.total, r.entries, r.timer = r.legs[:0], 0, 0, r.entries[:0], 0
	r.wait, r.deadline, r.dataOut = 0, time.Time{}, false
	r.gen++
	r.answer, r.answerOff, r.shared = r.answer[:0], 0, nil
	r.held = r.held[:0]
	r.internal = b.OriginID() == h.id
	r.scan.Reset()
	return r.onFrame
}

// own has the frames the proxy makes for the request, both ways, carry
// the trace id and authorization of its BEGIN; a relayed frame carries
// its own for the time it is sent (relayBegin and the other relays).
func (r *request) own() {
	r.Out.Trace, r.Out.Auth = r.traceID, r.authorization
	r.In.Trace, r.In.Auth = r.traceID, r.authorization
}

// onDown receives the downstream's request frames and the throttle
// frames of the reply to it. A flow-control violation tears the request
// down; a malformed frame is dropped, unless it closed its direction.
func (r *request) onDown(t frame.FrameType, buf []byte) {
	if r.state&released != 0 {
		return
	}
	switch t {
	case frame.FrameBegin:
		if b, err := r.OnBegin(buf); err == nil {
			r.onBegin(&b)
		}
	case frame.FrameData:
		if d, err := r.OnData(buf); streams.Received(err, r.fail) {
			r.onData(&d)
		}
	case frame.FrameFlush:
		if f, err := r.OnFlush(buf); streams.Received(err, r.fail) {
			r.onDownFlush(&f)
		}
	case frame.FrameEnd:
		if _, err := r.OnEnd(buf); err != nil {
			r.fail()
		} else {
			r.onEnd()
		}
	case frame.FrameAbort:
		_, _ = r.OnAbort(buf) // In closes either way
		r.onAbort()
	case frame.FrameWindow:
		if w, err := r.OnWindow(buf); streams.Received(err, r.fail) {
			r.onReplyWindow(&w)
		}
	case frame.FrameReset:
		// Out closes either way; a malformed RESET is not relayed.
		if rs, err := r.OnReset(buf); err == nil {
			r.onReplyReset(&rs)
		} else {
			r.onReplyReset(nil)
		}
	}
	r.maybeRelease()
}

func (r *request) onBegin(b *frame.Begin) {
	h := r.h
	ext := b.Extension()
	ex := &h.beginEx
	if !ex.TryWrap(ext, 0, len(ext)) {
		r.refuse(jsonrpc.CodeInvalidRequest, "Invalid request: not an MCP application stream")
		return
	}
	if ex.Kind() == mcp.McpBeginExKindClientResponse {
		r.onClientResponse(ex)
		return
	}
	if !r.readBegin(ex) {
		r.refuse(jsonrpc.CodeMethodNotFound, "Method not found")
		return
	}
	if !r.acquireSlot() {
		return
	}
	// A call whose BEGIN names it opens its route at once, and lets the
	// params in only when the route grants its window: a route that
	// refuses before reading (RESET with McpResetEx) then finds the
	// downstream's request still open, and the refusal passes through.
	if r.op == opCall && !r.identNull && r.kind != mcp.McpBeginExKindRequest && !h.holdsCall(r.kind, r.ident) {
		route, up, ok := h.resolve(isURIKind(r.kind), r.kind, r.ident, r.authorization, &r.upBuf)
		if ok {
			r.route, r.upIdent = route, up
			r.relay()
			return
		}
	}
	r.grant()
}

// onClientResponse opens the route's stream for a clientResponse whose
// id names it, the params (the result or error object) following once the
// route grants its window; an id the proxy did not make is refused.
func (r *request) onClientResponse(ex *mcp.McpBeginEx) {
	h := r.h
	r.kind, r.op = mcp.McpBeginExKindClientResponse, opCall
	if !r.readClientResponse(ex) {
		h.log.Warn("client response refused: its id names no route's request", "session", string(r.sid), "id", string(r.ident))
		r.refuse(jsonrpc.CodeInvalidRequest, "Invalid request: unknown response id")
		return
	}
	if !r.acquireSlot() {
		return
	}
	r.openRelay()
}

// acquireSlot takes the buffer slot the request's relay uses; with the
// pool exhausted the request is refused, "Server busy".
func (r *request) acquireSlot() bool {
	r.slot = r.h.pool.Acquire(r.InitialID())
	if r.slot == engine.NoSlot {
		r.refuse(jsonrpc.CodeInternalError, "Server busy")
		return false
	}
	return true
}

// readBegin notes the BEGIN's session, name or uri, contentLength and
// timeout, and decides the request's op; false for a kind the proxy does
// not know.
func (r *request) readBegin(ex *mcp.McpBeginEx) bool {
	r.kind = ex.Kind()
	r.op = opCall
	var b mcp.RequestBegin
	if !b.Read(ex) {
		return false
	}
	r.timeout, r.contentLength = b.Timeout, b.ContentLength
	r.sidNull, r.identNull = b.SessionIDNull, b.IdentNull
	r.sid = append(r.sid[:0], b.SessionID...)
	r.ident = append(r.ident[:0], b.Ident...)
	switch r.kind {
	case mcp.McpBeginExKindToolsList, mcp.McpBeginExKindPromptsList,
		mcp.McpBeginExKindResourcesList, mcp.McpBeginExKindResourcesTemplatesList:
		r.op = opList
	case mcp.McpBeginExKindToolsCall, mcp.McpBeginExKindPromptsGet, mcp.McpBeginExKindResourcesRead:
		if r.h.s.prefixed {
			r.state |= rewriting
			r.uris.Reset(resultURIs(r.kind))
		}
	case mcp.McpBeginExKindRequest:
		switch string(r.ident) {
		case "completion/complete":
			r.op = opCall
		case "logging/setLevel":
			r.op = opSetLevel
		default:
			r.op = opUnknown
		}
	}
	return true
}

// checked reports whether the request is a tools/call whose arguments
// options.tools checks: it goes to its route once its params are whole.
func (r *request) checked() bool {
	return r.kind == mcp.McpBeginExKindToolsCall && r.h.s.validate
}

// holdsCall reports whether a call of kind whose BEGIN names name waits
// for its params before any route sees it: a search tool's, which the
// proxy answers, or a tools/call whose arguments options.tools checks.
func (h *Handler) holdsCall(kind uint8, name []byte) bool {
	if kind != mcp.McpBeginExKindToolsCall {
		return false
	}
	return h.s.validate || h.s.cache != nil && h.s.cache.tools.metaOf(name) != metaNone
}

// isURIKind reports whether a request kind names a resource uri rather
// than a tool or prompt name.
func isURIKind(kind uint8) bool {
	m := mcp.KindMethod(kind)
	return m != nil && m.Param == mcp.ParamURI
}

// grant lets the params in, once: the slot's room.
func (r *request) grant() {
	if r.In.Opened() || r.In.Closed() || r.slot == engine.NoSlot {
		return
	}
	r.In.Grant(int32(r.h.pool.SlotCapacity()))
	if r.Window() != nil {
		r.fail()
	}
}

func (r *request) onData(d *frame.Data) {
	if r.state&paramsDone != 0 || r.slot == engine.NoSlot {
		return // bytes after the params
	}
	p := d.Payload()
	// Params that are not JSON end where the stream does: the route's
	// server judges them.
	n, done, _ := r.scan.Feed(p)
	if done {
		p = p[:n] // the rest follows the params
	}
	if !r.take(p) {
		r.tooLarge()
		return
	}
	if done || r.contentLength >= 0 && r.have >= int(r.contentLength) {
		r.onParams()
		return
	}
	if len(r.spill) > 0 {
		// Params beyond the slot stream on into the spill: the
		// downstream (the mcp server, which cuts its DATA to any
		// window) gets credit again once half of it is used.
		capacity := int32(r.h.pool.SlotCapacity())
		if r.In.WindowDue(r.In.Seq, capacity, 0) {
			r.In.Ack, r.In.Max = r.In.Seq, capacity
			if r.Window() != nil {
				r.fail()
			}
		}
	}
}

// maxParams bounds the params a request buffers (the mcp server in front
// bounds its request bodies too, by limits.body: 1 MiB by default).
const maxParams = 16 << 20

// take stores p after the params received so far: in the slot while they
// fit, then in the spill. It reports false beyond maxParams.
func (r *request) take(p []byte) bool {
	if len(r.spill) == 0 {
		room := r.h.pool.Buffer(r.slot)[r.have:]
		if len(p) < len(room) || len(p) == len(room) && r.contentLength >= 0 && r.have+len(p) >= int(r.contentLength) {
			r.have += copy(room, p)
			return true
		}
		// p is at least the slot's room, so the spill is never empty.
		r.spill = append(r.spill[:0], r.h.pool.Buffer(r.slot)[:r.have]...)
	}
	if r.have+len(p) > maxParams {
		return false
	}
	r.spill = append(r.spill, p...)
	r.have += len(p)
	return true
}

// buffered returns the params received so far.
func (r *request) buffered() []byte {
	if len(r.spill) > 0 {
		return r.spill[:r.have]
	}
	return r.h.pool.Buffer(r.slot)[:r.have]
}

func (r *request) onEnd() {
	r.state |= downEnded
	if r.state&paramsDone == 0 && r.slot != engine.NoSlot {
		r.onParams()
		return
	}
	if r.op == opCall && len(r.legs) == 1 {
		r.legs[0].sendParams()
	}
}

// onAbort is a cancellation: the route's request is aborted and its
// reply reset; a proxy-made answer stops.
func (r *request) onAbort() {
	r.releaseSlot()
	if r.op == opCall && len(r.legs) == 1 {
		l := r.legs[0]
		l.abortInitial()
		if r.state&local != 0 {
			l.resetReply()
			r.abortReply()
		}
		return
	}
	r.cancelLegs()
	r.abortReply()
}

// onDownFlush relays a FLUSH of the downstream's request (an
// elicitation step) to the route.
func (r *request) onDownFlush(f *frame.Flush) {
	if r.op != opCall || len(r.legs) != 1 {
		return
	}
	l := r.legs[0]
	ext := f.Extension()
	if route, up := r.h.upCallback(ext); route == l.route {
		ext = up
	}
	if !l.Out.Closed() && relayFlushExt(&l.Stream, f, ext) != nil {
		r.fail()
	}
}

// onReplyWindow passes the downstream's credit for a relayed reply on to
// the route, or sends what it allows of the proxy's own answer.
func (r *request) onReplyWindow(w *frame.Window) {
	if r.state&local == 0 && len(r.legs) == 1 {
		l := r.legs[0]
		if r.state&rewriting != 0 {
			r.sendHeld()
			if l.In.Opening() && !l.In.Closed() && !r.Out.Closed() && l.offerRewritten(&r.Stream, w) != nil {
				r.fail()
			}
			return
		}
		if l.In.Opening() && !l.In.Closed() && relayWindow(&l.Stream, &r.Stream, w) != nil {
			r.fail()
		}
		return
	}
	r.flushAnswer()
}

// onReplyReset passes the downstream's RESET of a relayed reply on to the
// route (rs is nil when it was malformed), or stops the legs.
func (r *request) onReplyReset(rs *frame.Reset) {
	if r.op == opCall && len(r.legs) == 1 {
		l := r.legs[0]
		if rs != nil && r.state&local == 0 && l.In.Opening() && !l.In.Closed() {
			if relayReset(&l.Stream, rs) != nil {
				l.abortInitial()
			}
		} else {
			l.resetReply()
		}
		if r.In.Closed() {
			l.abortInitial()
		}
		return
	}
	r.cancelLegs()
}

// onParams runs once the params are complete: a call is routed (and its
// params rewritten), a list or logging/setLevel fans out.
func (r *request) onParams() {
	r.state |= paramsDone
	h := r.h
	r.params = r.buffered()
	switch r.op {
	case opList:
		if h.cache != nil && !r.internal && h.cachedReach(r.authorization) && h.cache.serve(r) {
			return
		}
		r.startList()
	case opSetLevel:
		r.startSetLevel()
	case opUnknown:
		r.respondError(jsonrpc.CodeMethodNotFound, []byte("Method not found"), nil, nil)
	case opCall:
		switch r.kind {
		case mcp.McpBeginExKindRequest:
			r.routeCompletion()
			return
		case mcp.McpBeginExKindClientResponse:
			// A result or error object goes to the route as it is.
			r.legs[0].params = r.params
			r.legs[0].sendParams()
			return
		}
		key := "name"
		if isURIKind(r.kind) {
			key = "uri"
		}
		if r.route < 0 {
			name := r.ident
			if r.identNull {
				name = nil
				if vs, ve, ok := member(r.params, key); ok && r.params[vs] == '"' {
					name, _ = jsonrpc.Unquote(nil, r.params[vs:ve])
				}
			}
			m := r.metaOf(name)
			if (m != metaNone || r.checked()) && h.cache.hold(r) {
				return
			}
			if m != metaNone {
				r.metaCall(m)
				return
			}
			route, up, ok := h.resolve(isURIKind(r.kind), r.kind, name, r.authorization, &r.upBuf)
			if !ok {
				r.respondUnknown(name)
				return
			}
			if r.checked() && !r.argumentsValid(name) {
				return
			}
			if !r.stripParams(0, key, route) {
				r.respondUnknown(name)
				return
			}
			r.route, r.upIdent = route, up
			r.relay()
			return
		}
		if !r.stripParams(0, key, r.route) {
			// The route has the BEGIN but not yet a byte of the params.
			r.cancelLegs()
			r.respondUnknown(r.ident)
			return
		}
		r.legs[0].params = r.params
		r.legs[0].sendParams()
	}
}

// stripParams removes the route's prefix from the string member key of
// the object at r.params[base:], shifting the rest of the params left in
// the slot. It reports false when the member does not spell the prefix
// out (it escapes one of its characters, say): the route was chosen by the
// name decoded, and the route would read the prefix as part of the name.
func (r *request) stripParams(base int, key string, route int) bool {
	h := r.h
	if !h.s.prefixed {
		return true
	}
	rt := &h.s.routes[route]
	prefix := rt.name
	obj := r.params[base:]
	vs, ve, ok := member(obj, key)
	if !ok || obj[vs] != '"' {
		return false
	}
	vs++ // past the quote
	if key == "uri" {
		prefix = rt.uri
		if cut, decided := rawURICut(obj[vs : ve-1]); decided {
			vs += cut // ui://<toolkit>+…
		}
	}
	if ve-1-vs < len(prefix) || string(obj[vs:vs+len(prefix)]) != string(prefix) {
		return false
	}
	at := base + vs
	n := copy(r.params[at:], r.params[at+len(prefix):])
	r.params = r.params[:at+n]
	return true
}

// routeCompletion routes completion/complete by params.ref: a prompt's
// name or a resource's uri, carrying the route's prefix.
func (r *request) routeCompletion() {
	h := r.h
	rs, re, ok := member(r.params, "ref")
	if !ok || r.params[rs] != '{' {
		r.respondError(jsonrpc.CodeInvalidParams, []byte("Invalid params: ref is required"), nil, nil)
		return
	}
	ref := r.params[rs:re]
	key, kind := "name", mcp.McpBeginExKindPromptsGet
	if ts, te, ok := member(ref, "type"); ok && string(ref[ts:te]) == `"ref/resource"` {
		key, kind = "uri", mcp.McpBeginExKindResourcesRead
	}
	var name []byte
	if vs, ve, ok := member(ref, key); ok && ref[vs] == '"' {
		name, _ = jsonrpc.Unquote(nil, ref[vs:ve])
	}
	route, _, ok := h.resolve(key == "uri", kind, name, r.authorization, &r.upBuf)
	if !ok || !r.stripParams(rs, key, route) {
		if key == "uri" {
			r.respondError(mcp.CodeResourceNotFound, []byte("Resource not found"), []byte("uri"), name)
		} else {
			r.respondUnknownName("Unknown prompt: ", name)
		}
		return
	}
	r.route = route
	r.relay()
}

// openRelay opens the call's one leg, to r.route.
func (r *request) openRelay() {
	l := r.h.getLeg(r, r.route)
	r.legs = append(r.legs, l)
	r.open = 1
	r.state |= started
	if r.state&paramsDone != 0 {
		l.params = r.params
	}
	if !l.begin() {
		r.legs = r.legs[:0]
		r.h.putLeg(l)
		r.respondError(jsonrpc.CodeInternalError, []byte("Internal error"), nil, nil)
		return
	}
	if r.kind != mcp.McpBeginExKindClientResponse {
		r.armCall()
	}
}

// armCall starts the call's timeout, the route's for its method.
func (r *request) armCall() {
	h := r.h
	r.wait = h.s.routes[r.route].timeoutOf(r.kind, r.ident)
	r.deadline = h.w.Now().Add(r.wait)
	if r.timer == 0 {
		r.timer = h.w.TimerAt(r.deadline, r.onTimeout)
	}
}

// touch gives the route another timeout from now: a frame of its reply
// came. It re-arms a paused timeout.
func (r *request) touch() {
	if r.wait == 0 || r.Out.Closed() {
		return
	}
	h := r.h
	r.deadline = h.w.Now().Add(r.wait)
	if r.timer == 0 {
		r.timer = h.w.TimerAt(r.deadline, r.onTimeout)
	}
}

// pause stops the call's timeout while a request the route sent the
// client is out: the person or model answering it has the server kind's
// elicitation.timeout or sampling.timeout. The route's next frame
// re-arms it.
func (r *request) pause() { r.deadline = time.Time{} }

// callTimedOut answers a call whose route sent nothing for its timeout:
// -32001 naming the route, or, when part of the route's result has
// already gone down, an ABORT of the reply. The route's request is
// aborted and its reply reset.
func (r *request) callTimedOut() {
	h := r.h
	if r.deadline.IsZero() || r.Out.Closed() || r.state&local != 0 || len(r.legs) != 1 {
		return
	}
	if now := h.w.Now(); now.Before(r.deadline) {
		r.timer = h.w.TimerAt(r.deadline, r.onTimeout)
		return
	}
	msg := h.timeoutMessage(r.route, r.kind, r.ident, r.wait)
	h.log.Warn("route did not answer in time", "route", h.s.routes[r.route].label(), "method", methodName(r.kind, r.ident), "timeout", r.wait)
	h.routeMetrics(r.route).timeouts.Add(1)
	l := r.legs[0]
	l.abortInitial()
	l.resetReply()
	r.state |= local
	if r.Out.Opening() && r.dataOut {
		r.resetDown(0, "")
		r.abortReply()
	} else {
		r.refuseAnswer(codeRequestTimeout, msg)
	}
}

// respondUnknown answers a call whose name or uri no route serves, with
// the error the toolkit gives for one it does not have.
func (r *request) respondUnknown(name []byte) {
	switch r.kind {
	case mcp.McpBeginExKindToolsCall:
		r.respondUnknownName("Unknown tool: ", name)
	case mcp.McpBeginExKindPromptsGet:
		r.respondUnknownName("Unknown prompt: ", name)
	default:
		r.respondError(mcp.CodeResourceNotFound, []byte("Resource not found"), []byte("uri"), name)
	}
}

func (r *request) respondUnknownName(what string, name []byte) {
	h := r.h
	msg := append(h.scratch[:0], what...)
	msg = append(msg, name...)
	h.scratch = msg
	r.respondError(jsonrpc.CodeInvalidParams, msg, nil, nil)
}

// respondError answers with a JSON-RPC error object and outcome ERROR. A
// clientResponse has no answer of its own: it is refused with RESET and
// McpResetEx while the downstream's stream is open, else its reply is
// aborted.
func (r *request) respondError(code int32, msg []byte, dataKey, dataValue []byte) {
	if r.kind == mcp.McpBeginExKindClientResponse {
		r.state |= local
		r.releaseSlot()
		if !r.In.Closed() {
			r.resetDown(code, string(msg))
		}
		if !r.Out.Closed() {
			r.abortReply()
		}
		return
	}
	r.state |= answerError
	r.answer = appendError(r.answer[:0], code, msg, dataKey, dataValue)
	r.shared = nil
	r.respond()
}

// respondShared answers with bytes the request does not own (a cached
// list), sent as they are.
func (r *request) respondShared(b []byte) {
	r.shared = b
	r.respond()
}

// respond sends r.answer on the downstream reply, opening it if need be.
func (r *request) respond() {
	r.state |= local | answerReady
	r.releaseSlot()
	if r.Out.Closed() || !r.Out.Opening() && !r.beginReply() {
		return
	}
	r.flushAnswer()
}

// beginReply opens the downstream reply with the request's McpBeginEx.
func (r *request) beginReply() bool {
	h := r.h
	if r.Begin(h.requestBeginEx(r.kind, r.sid, r.sidNull, r.ident, r.identNull, -1, 0)) != nil {
		r.fail()
		return false
	}
	return true
}

// sendRest sends msg[*off:] on s as far as its credit allows, advancing
// *off, and reports whether all of msg has gone. A DATA the ring refuses
// fails the request.
func (r *request) sendRest(s *engine.Stream, msg []byte, off *int) bool {
	n, err := binding.SendFragments(s, msg[*off:], *off == 0, true, r.h.maxPayload)
	*off += n
	if err != nil {
		r.fail()
		return false
	}
	return *off == len(msg)
}

// flushAnswer sends what the reply's credit allows of the proxy's own
// answer, then END once all of it went.
func (r *request) flushAnswer() {
	h := r.h
	if !r.Out.Opening() || r.Out.Closed() || r.state&answerReady == 0 {
		return
	}
	msg := r.answer
	if r.shared != nil {
		msg = r.shared
	}
	if !r.sendRest(&r.Stream, msg, &r.answerOff) {
		return // the rest when the reply's credit comes
	}
	var ext []byte
	if r.state&answerError != 0 {
		ext = h.errorEndEx()
	}
	if r.End(ext) != nil {
		r.fail()
	}
}

// tooLarge refuses params that outgrow the slot: the downstream's
// request is reset with the error, and the reply carries it too. The
// reply begins first: a RESET before it would give it up.
func (r *request) tooLarge() {
	if r.kind == mcp.McpBeginExKindClientResponse {
		r.cancelLegs()
		r.respondError(jsonrpc.CodeInvalidParams, []byte("Invalid params: too large"), nil, nil)
		return
	}
	if !r.Out.Opening() && !r.Out.Closed() && !r.beginReply() {
		return
	}
	r.resetDown(jsonrpc.CodeInvalidParams, "Invalid params: too large")
	r.cancelLegs()
	r.respondError(jsonrpc.CodeInvalidParams, []byte("Invalid params: too large"), nil, nil)
}

// refuse refuses the request before reading it, with RESET carrying
// McpResetEx.error; the reply, not begun, is given up with it.
func (r *request) refuse(code int32, msg string) {
	r.resetDown(code, msg)
}

// resetDown resets the downstream's request, with McpResetEx.error when
// code is not 0. When the ring refuses the RESET, the reply is aborted:
// the downstream learns of the end one way or the other.
func (r *request) resetDown(code int32, msg string) {
	if r.In.Closed() {
		return
	}
	var ext []byte
	if code != 0 {
		ext = r.h.errorResetEx(code, msg)
	}
	if r.Reset(ext) != nil {
		r.abortReply()
	}
}

// abortReply aborts the downstream reply if it has begun, and otherwise
// gives it up: it will not open now. When the ring refuses the ABORT, the
// request is reset (see resetDown).
func (r *request) abortReply() {
	if streams.AbortReply(&r.Stream) != nil {
		r.resetDown(0, "")
	}
}

// fail tears the request down after a protocol violation or a refused
// send: every direction still open is reset or aborted.
func (r *request) fail() {
	r.resetDown(0, "")
	r.abortReply()
	r.cancelLegs()
	r.releaseSlot()
}

// cancelLegs aborts every leg's request and resets its reply.
func (r *request) cancelLegs() {
	for _, l := range r.legs {
		if l.state&legIdle != 0 {
			l.forgo()
		}
		l.abortInitial()
		l.resetReply()
		if l.state&legSettled == 0 {
			l.state |= legSettled | legFailed
			r.open--
		}
	}
}

func (r *request) releaseSlot() {
	if r.slot != engine.NoSlot {
		r.h.pool.Release(r.slot)
		r.slot = engine.NoSlot
		r.params = nil
	}
	r.dropSpill()
}

// dropSpill empties the spill, keeping its buffer for the next request
// unless it grew past maxKeptSpill: a rare large request does not pin it.
func (r *request) dropSpill() {
	if cap(r.spill) > maxKeptSpill {
		r.spill = nil
	}
	r.spill = r.spill[:0]
}

// maxKeptSpill is the largest spill a free request keeps for the next.
const maxKeptSpill = 256 << 10

// maybeRelease returns the request to the worker's free list once every
// direction of it and of its legs is closed: the engine then holds no
// registration that could deliver a late frame to it.
func (r *request) maybeRelease() {
	if r.state&released != 0 || !r.Closed() {
		return
	}
	for _, l := range r.legs {
		if !l.Closed() {
			return
		}
	}
	h := r.h
	r.state |= released
	h.w.Disarm(&r.timer)
	r.releaseSlot()
	for _, l := range r.legs {
		h.putLeg(l)
	}
	clear(r.legs)
	r.legs = r.legs[:0]
	if cap(r.answer) > maxList {
		r.answer = nil
	}
	if cap(r.rewritten) > maxKeptSpill {
		r.rewritten = nil
	}
	if cap(r.held) > maxKeptSpill {
		r.held = nil
	}
	r.shared = nil
	if len(h.freeRequests) < 1024 {
		h.freeRequests = append(h.freeRequests, r)
	}
}

// requestBeginEx builds a request kind's McpBeginEx into extBuf.
func (h *Handler) requestBeginEx(kind uint8, sid []byte, sidNull bool, ident []byte, identNull bool, contentLength int32, timeout int64) []byte {
	b := h.exB.Begin.Wrap(h.extBuf, 0, len(h.extBuf)).TypeID(h.typeID)
	r := mcp.RequestBegin{
		SessionID: sid, SessionIDNull: sidNull,
		Ident: ident, IdentNull: identNull,
		ContentLength: contentLength, Timeout: timeout,
	}
	if !r.Build(b, kind) {
		return nil
	}
	n, err := b.BuildLimit()
	if err != nil {
		return nil
	}
	return h.extBuf[:n]
}
