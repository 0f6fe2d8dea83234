package client

import (
	"bytes"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/sluicehq/sluice/binding/internal/streams"
	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/binding/mcp/jsonrpc"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/frame"
)

// upstream is one session with the upstream server, for one downstream
// session (or one worker's requests without a session). It is shared by
// the workers of the engine: requests of a session arrive on any worker.
// Its fields are guarded by mu; its lifecycle and GET stream belong to
// the owner worker.
type upstream struct {
	sh  *shared
	key string

	mu      sync.Mutex
	state   uint8
	gen     uint64 // bumped at each (re-)initialize
	failGen uint64 // bumped when an initialize fails
	failMsg string
	// failStatus and failAuth are the status (401 or 403) and the
	// WWW-Authenticate Bearer challenge of an initialize the upstream
	// refused for its authorization; 0 and nil for another failure.
	failStatus int
	failAuth   []byte
	sessionID  string
	version    string
	stateless  bool
	caps       uint16
	clientCaps uint16
	// logLevel is the level a 2025-era session set with logging/setLevel
	// (its JSON text) for a stateless upstream, nil until it does.
	logLevel []byte
	// resSubs are the resource uris (JSON text) a 2025-era session
	// subscribed to with resources/subscribe on a stateless upstream; its
	// subscriptions/listen stream asks for them.
	resSubs [][]byte
	waiters []waiter

	owner *handler   // the worker of the lifecycle and the GET stream
	lc    *lifecycle // nil for a worker's null-session upstream

	// authCallback is the lifecycle's McpLifecycleBeginEx.authCallback,
	// where a user's browser comes back to after an authorization the
	// guard asks for; set before the upstream is shared, then only read.
	authCallback string
}

// upstream states.
const (
	upNew uint8 = iota
	upIniting
	upReady
	upClosed
)

// waiter is a stream waiting for an initialize: fn runs on w.
type waiter struct {
	w  *engine.Worker
	fn func()
}

// snapshot is what a request needs of its upstream session.
type snapshot struct {
	gen       uint64
	sessionID string
	version   string
	stateless bool
	caps      uint16
}

// acquire returns the session's snapshot when it is ready. Otherwise it
// queues fn to run on h's worker when the (re-)initialize it starts or
// joins is over, and returns the failure generation to check then.
func (u *upstream) acquire(h *handler, fn func()) (snapshot, bool, uint64) {
	u.mu.Lock()
	switch u.state {
	case upReady:
		s := snapshot{u.gen, u.sessionID, u.version, u.stateless, u.caps}
		u.mu.Unlock()
		return s, true, 0
	case upClosed:
		fg := u.failGen
		u.mu.Unlock()
		return snapshot{}, false, fg + 1 // already failed
	}
	fg := u.failGen
	u.waiters = append(u.waiters, waiter{h.w, fn})
	start := u.state == upNew
	u.state = upIniting
	u.mu.Unlock()
	if start {
		startInit(h, u)
	}
	return snapshot{}, false, fg
}

// sessionUser is a stream that sends on the upstream session once it is
// ready: an exchange (a request) or a response (an answer to one).
type sessionUser interface {
	send()
	fail(code int32, msg string)
}

// sessionWait is what a sessionUser keeps to wait for its upstream
// session: the session, its snapshot once ready, the failure generation
// to check after a wait, and the resume callback the wait runs.
type sessionWait struct {
	u        *upstream
	snap     snapshot
	failGen  uint64
	resumeFn func()
}

// await sends s once the session is ready, at once if it is, and fails
// s when an initialize failed: since the one s waited for began when
// waited, or the one s would join now. Otherwise it reports that s waits:
// resumeFn runs on h's worker when the initialize is over.
func (w *sessionWait) await(h *handler, s sessionUser, waited bool) bool {
	if waited {
		if failed, msg := w.u.failedSince(w.failGen); failed {
			s.fail(-32603, msg)
			return false
		}
	}
	snap, ok, fg := w.u.acquire(h, w.resumeFn)
	if ok {
		w.snap = snap
		s.send()
		return false
	}
	w.failGen = fg
	if failed, msg := w.u.failedSince(fg); failed {
		s.fail(-32603, msg)
		return false
	}
	return true
}

// failedSince reports whether an initialize failed (or the session was
// closed) since failure generation fg, and why.
func (u *upstream) failedSince(fg uint64) (bool, string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.state == upClosed {
		return true, "Upstream session closed"
	}
	return u.failGen != fg, u.failMsg
}

// reinit starts a new upstream session after the one of generation gen
// was lost (404, or 400 with a session), unless another request already
// did; fn runs when it is ready.
func (u *upstream) reinit(h *handler, gen uint64, fn func()) uint64 {
	u.mu.Lock()
	fg := u.failGen
	if u.state == upClosed {
		u.mu.Unlock()
		return fg + 1
	}
	u.waiters = append(u.waiters, waiter{h.w, fn})
	start := u.state == upNew || u.state == upReady && u.gen == gen
	if u.state == upReady && u.gen != gen {
		// Already re-initialized: go at once.
		ws := u.waiters
		u.waiters = nil
		u.mu.Unlock()
		wake(ws)
		return fg
	}
	u.state = upIniting
	u.mu.Unlock()
	if start {
		startInit(h, u)
	}
	return fg
}

func wake(ws []waiter) {
	for _, w := range ws {
		w.w.Dispatch(w.fn)
	}
}

// ready records a new upstream session and wakes its waiters.
func (u *upstream) ready(op *initOp) {
	u.mu.Lock()
	if u.state == upClosed {
		u.mu.Unlock()
		op.deleteSession()
		return
	}
	u.state = upReady
	u.gen++
	u.sessionID, u.version, u.stateless, u.caps = op.sessionID, op.version, op.stateless, op.caps
	ws := u.waiters
	u.waiters = nil
	lc, owner := u.lc, u.owner
	u.mu.Unlock()
	wake(ws)
	sh := u.sh
	sh.mu.Lock()
	sh.caps, sh.capsKnown = op.caps, true
	sh.mu.Unlock()
	if lc != nil {
		owner.w.Dispatch(lc.onReady)
	}
}

// failed records a failed initialize: its waiters get an error, and the
// next request tries again. status and auth are a Bearer challenge's
// (failStatus, failAuth), or 0 and nil.
func (u *upstream) failed(msg string, status int, auth []byte) {
	u.mu.Lock()
	if u.state != upClosed {
		u.state = upNew
	}
	u.failGen++
	u.failMsg = msg
	u.failStatus, u.failAuth = status, append(u.failAuth[:0], auth...)
	ws := u.waiters
	u.waiters = nil
	lc, owner := u.lc, u.owner
	u.mu.Unlock()
	wake(ws)
	if lc != nil {
		owner.w.Dispatch(lc.onReady)
	}
}

// close ends the session for good, and returns what DELETE needs.
func (u *upstream) close() (sessionID, version string, stateless bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.state = upClosed
	ws := u.waiters
	u.waiters = nil
	defer wake(ws)
	return u.sessionID, u.version, u.stateless
}

// initOp (re-)initializes an upstream session on one worker:
// server/discover when 2026-07-28 is offered and not yet known, else
// initialize and notifications/initialized.
type initOp struct {
	h      *handler
	u      *upstream
	step   uint8
	rd     bodyReader
	done   bool  // the step's response was read
	c      *call // the step's call while it runs
	timer  int64 // the step's deadline: the binding's timeout
	timeFn func()

	status    int
	auth      []byte // the step's WWW-Authenticate
	sessionID string
	version   string
	stateless bool
	caps      uint16
	errMsg    string
	// legacyServed: server/discover listed the legacy version as well.
	legacyServed bool
	// served2026: discovery told that the upstream serves 2026-07-28
	// statelessly, with capabilities caps2026, while this op initializes
	// a 2025 session with it.
	served2026 bool
	caps2026   uint16
	// getWait: the op waits for the GET stream of the worker's own
	// session to open before the session is ready (awaitGet).
	getWait bool
}

const (
	stepDiscover uint8 = iota
	stepInitialize
	stepInitialized
)

func startInit(h *handler, u *upstream) {
	op := &initOp{h: h, u: u}
	op.timeFn = op.onTimeout
	sh := h.sh
	sh.mu.Lock()
	disc, caps, legacy := sh.discovery, sh.caps, sh.legacyServed
	sh.mu.Unlock()
	switch {
	case h.s.stateless && disc == 0:
		op.post(stepDiscover)
	case h.s.stateless && disc == 1 && legacy && u.key != "":
		op.served2026, op.caps2026 = true, caps
		op.initialize()
	case h.s.stateless && disc == 1:
		op.stateless, op.version, op.caps = true, v20260728, caps
		u.ready(op)
	default:
		op.initialize()
	}
}

func (op *initOp) initialize() {
	if op.h.s.legacy == "" {
		op.u.failed("Upstream does not serve protocol version 2026-07-28, the only one offered", 0, nil)
		return
	}
	op.post(stepInitialize)
}

// post sends the step's request.
func (op *initOp) post(step uint8) {
	h := op.h
	op.step, op.done, op.status = step, false, 0
	c := h.newCall(op)
	b := c.body[:0]
	rh := reqHead{method: "POST"}
	u := op.u
	u.mu.Lock()
	clientCaps := u.clientCaps
	u.mu.Unlock()
	if u.lc == nil && step == stepInitialize {
		// A worker's own session serves stateless 2026-07-28 clients,
		// whose capabilities come with each request: it declares all a
		// client may have, and each request to the client is checked
		// against its call's capabilities (reverse.go).
		clientCaps = reverseCaps
	}
	switch step {
	case stepDiscover:
		rh.version, rh.mcpMethod = v20260728, []byte("server/discover")
		b = append(b, `{"jsonrpc":"2.0","id":`...)
		b = strconv.AppendInt(b, h.sh.ids.Add(1), 10)
		b = append(b, `,"method":"server/discover","params":{"_meta":`...)
		b = appendMeta(b, clientCaps)
		b = append(b, `}}`...)
	case stepInitialize:
		b = append(b, `{"jsonrpc":"2.0","id":`...)
		b = strconv.AppendInt(b, h.sh.ids.Add(1), 10)
		b = append(b, `,"method":"initialize","params":{"protocolVersion":"`...)
		b = append(b, h.s.legacy...)
		b = append(b, `","capabilities":`...)
		b = appendClientCaps(b, clientCaps)
		b = append(b, `,"clientInfo":{"name":"sluice","version":"devel"}}}`...)
	case stepInitialized:
		rh.sessionID, rh.version = op.sessionID, op.version
		b = append(b, `{"jsonrpc":"2.0","method":"notifications/initialized"}`...)
	}
	c.body = b
	if !c.open(&rh, h.w.SupplyTraceID()) {
		op.fail("Upstream unreachable: cannot open a stream to " + h.s.authority)
		return
	}
	op.c = c
	op.timer = h.w.TimerAt(h.w.Now().Add(h.s.timeout), op.timeFn)
}

// onTimeout fails a step the upstream has not answered within the
// binding's timeout: its call is dropped, the requests waiting for the
// session fail, and the next one tries again.
func (op *initOp) onTimeout() {
	op.timer = 0
	if op.step > stepInitialized {
		return
	}
	step := op.step
	abortCall(&op.c)
	op.fail("Upstream timeout: no answer to " + stepMethods[step] + " within " + op.h.s.timeout.String())
}

// stepMethods names each step's request.
var stepMethods = [...]string{stepDiscover: "server/discover", stepInitialize: "initialize", stepInitialized: "notifications/initialized"}

func (op *initOp) onResponse(c *call, status int) {
	op.status = status
	h := op.h
	op.auth = append(op.auth[:0], h.resp.auth...)
	if op.step == stepInitialize && h.resp.sessionID != nil {
		op.sessionID = string(h.resp.sessionID)
	}
	op.rd.reset(h.resp.sse)
}

func (op *initOp) onBody(c *call, p []byte) {
	h := op.h
	for (len(p) > 0 || op.rd.held()) && !op.done {
		n, msg, err := op.rd.next(p, c.bodyOver())
		p = p[n:]
		if err != nil {
			op.errMsg = "Upstream sent an invalid response: " + err.Error()
			op.done = true
			c.abort()
			op.closeStep(true)
			return
		}
		if msg == nil {
			return
		}
		var m message
		if op.rd.decode(&h.tracker, msg, &m) != nil || !m.isResponse() {
			continue // notifications before the response
		}
		op.done = true
		op.onResult(&m)
		if op.step == stepInitialize || op.step == stepDiscover {
			// An SSE stream may stay open: the answer is in.
			c.abort()
			op.closeStep(false)
		}
		return
	}
}

func (op *initOp) onResult(m *message) {
	switch op.step {
	case stepDiscover:
		if m.result == nil {
			return
		}
		vs := jsonrpc.Lookup(m.result, "supportedVersions")
		if bytes.Contains(vs, []byte(`"`+v20260728+`"`)) {
			op.stateless, op.version = true, v20260728
			op.caps = capsOf(jsonrpc.Lookup(m.result, "capabilities"))
			op.legacyServed = op.h.s.legacy != "" && bytes.Contains(vs, []byte(`"`+op.h.s.legacy+`"`))
		}
	case stepInitialize:
		if m.result == nil {
			op.errMsg = "Upstream refused initialize: " + string(truncate(m.err, 200))
			return
		}
		v := jsonrpc.Lookup(m.result, "protocolVersion")
		if len(v) >= 2 && v[0] == '"' {
			op.version = string(v[1 : len(v)-1])
		}
		op.caps = capsOf(jsonrpc.Lookup(m.result, "capabilities"))
	}
}

func (op *initOp) onClose(c *call, failed bool) {
	op.closeStep(failed)
}

// closeStep moves on once a step's call is over.
func (op *initOp) closeStep(failed bool) {
	if op.step > stepInitialized {
		return
	}
	op.c = nil
	op.h.w.Disarm(&op.timer)
	step := op.step
	op.step = stepInitialized + 1 // nothing more from this call
	switch step {
	case stepDiscover:
		if !op.done && op.status == 0 {
			op.fail("Upstream unreachable at " + op.h.s.authority)
			return
		}
		sh := op.h.sh
		sh.mu.Lock()
		if op.stateless {
			sh.discovery, sh.caps, sh.capsKnown, sh.legacyServed = 1, op.caps, true, op.legacyServed
		} else {
			sh.discovery = 2
		}
		sh.mu.Unlock()
		if op.stateless && !(op.legacyServed && op.u.key != "") {
			op.u.ready(op)
			return
		}
		// A 2025-era downstream session speaks 2025 to an upstream that
		// serves it, so that its session-scoped methods keep working.
		op.served2026, op.caps2026 = op.stateless, op.caps
		op.stateless, op.version, op.caps = false, "", 0
		op.initialize()
	case stepInitialize:
		switch {
		case op.errMsg != "":
			op.fail(op.errMsg)
		case !op.done && op.status == 0:
			op.fail("Upstream unreachable at " + op.h.s.authority)
		case (op.status == 401 || op.status == 403) && isBearer(op.auth):
			// The lifecycle relays the challenge (McpResetEx.bearer), as a
			// request's does, so that the server in front answers with it.
			op.failWith("Upstream refused initialize with HTTP status "+strconv.Itoa(op.status), op.status, op.auth)
		case !op.done || op.status != 200:
			op.fail("Upstream refused initialize with HTTP status " + strconv.Itoa(op.status))
		case op.served2026 && op.sessionID == "":
			op.statelessLegacy()
		default:
			op.post(stepInitialized)
		}
	case stepInitialized:
		if op.u.key == "" && op.sessionID != "" {
			op.awaitGet()
			return
		}
		op.u.ready(op)
	}
}

// awaitGet opens the GET stream of the worker's own session (the one
// requests without a session id use) and makes the session ready once
// the stream's response has come, or failed, or getOpenWait has passed
// (an upstream may hold a GET's head back until its first event). An
// upstream sends on that stream the requests to its client that belong
// to no call (the TypeScript SDK does, for one made without a related
// request); with no GET stream open yet, the TypeScript SDK drops such a
// request and waits out its timeout for the answer, and so would the
// first call, sent the moment the session was ready, that made one.
func (op *initOp) awaitGet() {
	h := op.h
	op.getWait = true
	op.timer = h.w.TimerAt(h.w.Now().Add(min(getOpenWait, h.s.timeout)), op.getTimeout)
	h.openNullGet(op)
}

// getOpenWait bounds how long the worker's own session waits for its GET
// stream to open before it serves requests all the same.
const getOpenWait = 2 * time.Second

func (op *initOp) getTimeout() {
	op.timer = 0
	op.getOpened()
}

// getOpened makes the session ready, once, when its GET stream's wait is
// over.
func (op *initOp) getOpened() {
	if !op.getWait {
		return
	}
	op.getWait = false
	op.h.w.Disarm(&op.timer)
	op.u.ready(op)
}

// statelessLegacy serves a 2025-era session at 2026-07-28 after all: the
// upstream answered its initialize without a session id, so it keeps no
// 2025 session and could never ask the session's client anything (go-sdk's
// stateless servers fail such requests), while at 2026-07-28 it returns
// input_required results, which the server kind's shim turns into requests
// to the client. The session's logging/setLevel and resources/subscribe
// are then served as toward a 2026-07-28-only upstream, and the binding's
// later sessions skip the initialize.
func (op *initOp) statelessLegacy() {
	sh := op.h.sh
	sh.mu.Lock()
	sh.legacyServed = false
	sh.mu.Unlock()
	op.stateless, op.version, op.caps = true, v20260728, op.caps2026
	op.u.ready(op)
}

func (op *initOp) fail(msg string) { op.failWith(msg, 0, nil) }

// failWith ends the op with a failure, a Bearer challenge's when status
// is 401 or 403 (upstream.failed).
func (op *initOp) failWith(msg string, status int, auth []byte) {
	op.step = stepInitialized + 1
	op.c = nil
	op.h.w.Disarm(&op.timer)
	op.u.failed(msg, status, auth)
}

// deleteSession ends an upstream session nobody wants any more.
func (op *initOp) deleteSession() {
	if !op.stateless && op.sessionID != "" {
		postDelete(op.h, op.sessionID, op.version)
	}
}

// discard is the sink of calls whose answer does not matter.
type discard struct{}

func (discard) onResponse(*call, int) {}
func (discard) onBody(*call, []byte)  {}
func (discard) onClose(*call, bool)   {}

var discardSink = discard{}

func postDelete(h *handler, sessionID, version string) {
	c := h.newCall(discardSink)
	if c.open(&reqHead{method: "DELETE", sessionID: sessionID, version: version}, h.w.SupplyTraceID()) {
		c.expireIn(h.s.timeout)
	}
}

// postMessage sends one notification or response upstream, unanswered.
func postMessage(h *handler, s *snapshot, body []byte) {
	c := h.newCall(discardSink)
	c.body = append(c.body[:0], body...)
	rh := reqHead{method: "POST", sessionID: s.sessionID, version: s.version}
	if s.stateless {
		rh.sessionID = ""
	}
	if c.open(&rh, h.w.SupplyTraceID()) {
		c.expireIn(h.s.timeout)
	}
}

// capsOf maps an upstream result's capabilities object to its server
// capability bits.
func capsOf(c []byte) uint16 {
	return uint16(mcp.ParseServerCapabilities(c))
}

// appendClientCaps writes the client capabilities object of bits.
func appendClientCaps(b []byte, bits uint16) []byte {
	return mcp.AppendClientCapabilities(b, mcp.McpCapabilities(bits))
}

// appendMeta writes the _meta members a 2026-07-28 request carries,
// without the braces' surrounding: {"io.modelcontextprotocol/…":…}.
func appendMeta(b []byte, clientCaps uint16) []byte {
	b = append(b, '{')
	b = appendMetaMembers(b, clientCaps)
	return append(b, '}')
}

func appendMetaMembers(b []byte, clientCaps uint16) []byte {
	b = append(b, `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":`...)
	b = appendClientCaps(b, clientCaps)
	return append(b, `,"io.modelcontextprotocol/clientInfo":{"name":"sluice","version":"devel"}`...)
}

func truncate(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}

// lifecycle is one downstream session's lifecycle stream, on its owner
// worker: it (re-)initializes the upstream session, keeps its GET stream
// and relays the upstream's notifications as FLUSHes on its reply.
type lifecycle struct {
	h    *handler
	ds   downstream
	u    *upstream
	key  string
	null bool // a lifecycle without a session id
	caps uint16
	// subs are the list_changed bits the opener wants relayed
	// (McpLifecycleBeginEx.subscriptions).
	subs uint16
	over bool
	get  *getStream
	// the McpBeginEx of the downstream BEGIN, kept for the reply.
	ex []byte
}

// onFrame receives the downstream's lifecycle and the throttle frames of
// the reply to it. A lifecycle whose sender breaks flow control ends the
// session, both ways.
func (l *lifecycle) onFrame(t frame.FrameType, buf []byte) {
	switch t {
	case frame.FrameBegin:
		if b, err := l.ds.OnBegin(buf); err == nil {
			l.onBegin(b.Extension())
		}
	case frame.FrameData:
		if _, err := l.ds.OnData(buf); streams.Received(err, l.violated) {
			l.ds.doWindow(8192)
		}
	case frame.FrameFlush:
		_, _ = l.ds.OnFlush(buf) // the lifecycle carries nothing the client reads
	case frame.FrameEnd:
		_, _ = l.ds.OnEnd(buf) // In closes either way
		l.teardown()
		l.endReply()
	case frame.FrameAbort:
		_, _ = l.ds.OnAbort(buf) // In closes either way
		l.teardown()
		l.ds.doAbort()
	case frame.FrameWindow:
		_, _ = l.ds.OnWindow(buf) // the reply carries FLUSHes only, which reserve nothing
	case frame.FrameReset:
		_, _ = l.ds.OnReset(buf) // Out closes either way
		l.teardown()
		l.ds.doReset(nil)
	}
}

// violated ends the session of a lifecycle whose sender broke flow
// control, both ways.
func (l *lifecycle) violated() {
	l.teardown()
	l.ds.doClose()
}

// endReply ends the reply once the downstream ended its lifecycle. A
// reply that has not begun (the upstream session was not ready) begins
// first, without capabilities, so that the downstream sees it end: END
// may not come before BEGIN.
func (l *lifecycle) endReply() {
	if !l.ds.replied() && l.ex != nil && l.h.mcpEx.TryWrap(l.ex, 0, len(l.ex)) {
		l.ds.doBegin(&l.h.mcpEx, 0)
	}
	l.ds.doEnd(false)
}

// onBegin starts the upstream session of a downstream one; a lifecycle
// without a session id (the server kind's transient stream for
// server/discover) is answered with the upstream's capabilities.
func (l *lifecycle) onBegin(ext []byte) {
	h := l.h
	ex := &h.mcpEx
	if !ex.TryWrap(ext, 0, len(ext)) {
		l.over = true
		l.ds.doReset(&resetInfo{code: -32600, message: "Invalid request: not an MCP application stream"})
		return
	}
	if h.s.routes != nil {
		if ri := h.refusal(mcp.McpBeginExKindLifecycle, nil, true, l.ds.In.Auth); ri != nil {
			l.over = true
			l.ds.doReset(ri)
			return
		}
	}
	l.ex = bytes.Clone(ext)
	v := ex.Lifecycle()
	l.caps = v.Capabilities()
	l.subs = v.Subscriptions() & listChangedBits
	if !v.HasSessionID() {
		l.null = true
		sh := h.sh
		sh.mu.Lock()
		caps, known, stateless := sh.caps, sh.capsKnown, sh.discovery == 1
		sh.mu.Unlock()
		// Without subscriptions the answer is the capabilities; with them,
		// a stateless upstream needs only its subscriptions/listen, and a
		// session's upstream the worker's session and its GET stream.
		if known && (l.subs == 0 || stateless) {
			if l.ds.doBegin(ex, caps) {
				l.ds.doWindow(8192)
				if l.subs != 0 {
					l.openListen(caps)
				}
			}
			return
		}
		l.u = h.nullUpstream()
		if _, ok, _ := l.u.acquire(h, l.onReady); ok {
			l.onReady()
		}
		return
	}
	l.key = string(v.SessionID())
	u := &upstream{sh: h.sh, key: l.key, owner: h, lc: l, clientCaps: l.caps, state: upIniting}
	if v.HasAuthCallback() {
		u.authCallback = string(v.AuthCallback())
	}
	l.u = u
	sh := h.sh
	sh.mu.Lock()
	old := sh.sessions[l.key]
	sh.sessions[l.key] = u
	sh.mu.Unlock()
	if old != nil {
		old.close()
	}
	startInit(h, u)
}

// nullUpstream returns the worker's upstream for requests without a
// session id, created on first use.
func (h *handler) nullUpstream() *upstream {
	if h.null == nil {
		h.null = &upstream{sh: h.sh, owner: h}
	}
	return h.null
}

// onReady runs on the owner when an initialize is over.
func (l *lifecycle) onReady() {
	if l.over {
		return
	}
	u := l.u
	u.mu.Lock()
	state, caps, stateless := u.state, u.caps, u.stateless
	var ri resetInfo
	switch {
	case state == upReady:
	case u.failStatus != 0:
		ri = bearerReset(u.failStatus, bytes.Clone(u.failAuth)) // failAuth is u.mu's
	default:
		ri = resetInfo{code: -32603, message: u.failMsg}
	}
	u.mu.Unlock()
	if state != upReady {
		if !l.ds.replied() {
			l.over = true
			l.ds.doReset(&ri)
			l.ds.doAbort()
			if !l.null {
				l.unregister()
			}
		}
		return
	}
	if !l.ds.replied() {
		if !l.h.mcpEx.TryWrap(l.ex, 0, len(l.ex)) || !l.ds.doBegin(&l.h.mcpEx, caps) {
			l.teardown()
			return
		}
		l.ds.doWindow(8192)
	}
	switch {
	case stateless:
		// 2026-07-28 has no GET stream: list changes come on a
		// subscriptions/listen stream, kept while the lifecycle lives.
		if l.get == nil || !l.get.listen || l.get.stopped {
			l.openListen(caps)
		}
	case l.null && l.subs != 0:
		l.joinNullGet()
	case !l.null:
		l.openGet()
	}
}

// joinNullGet has a lifecycle without a session id that subscribed to
// list changes read them from the GET stream of the worker's upstream
// session, which every such lifecycle of the worker shares: an upstream
// allows one GET stream per session (go-sdk answers another 409), so one
// per lifecycle would leave all but the first without their changes.
func (l *lifecycle) joinNullGet() {
	l.h.nullLs = append(l.h.nullLs, l)
	l.h.openNullGet(nil)
}

// openNullGet opens the GET stream of the worker's upstream session
// unless it is open, opening or waiting to reopen. The session's
// initialize opens it (op, whose session is not ready yet: see
// awaitGet), and it stays open while the session lives, so that the
// upstream's requests to the client reach the gateway, which refuses
// them at once (no one client of the session is the one asked), and so
// that a listen that comes later does not wait for (or race) a new one.
func (h *handler) openNullGet(op *initOp) {
	if g := h.nullGet; g != nil && !g.stopped && (g.c != nil || g.timer != 0) {
		if op == nil {
			return
		}
		g.stop() // a stream of the session before, which this one replaces
	}
	g := &getStream{l: &lifecycle{h: h, u: h.nullUpstream(), null: true}, shared: true}
	g.reopenFn = g.reopen
	h.nullGet = g
	if op == nil {
		g.open()
		return
	}
	g.opened = op.getOpened
	g.openSession(op.sessionID, op.version)
}

// leaveNullGet takes an ending lifecycle off the shared GET stream's.
func (l *lifecycle) leaveNullGet() {
	h := l.h
	if i := slices.Index(h.nullLs, l); i >= 0 {
		h.nullLs = slices.Delete(h.nullLs, i, i+1) // clears the slot it frees
	}
}

// fanOut relays a message of the shared GET stream to every lifecycle on
// it, each taking the list changes it subscribed to. A request is
// answered once, with an error, as a lifecycle without a session id
// answers it (no one client is the one asked).
func (h *handler) fanOut(g *getStream, m *message) {
	switch {
	case m.method == nil:
		// a response replayed on a resumed stream: no request waits here
	case m.id != nil:
		g.l.relayRequest(m.id, m.method[1:len(m.method)-1], m.params)
	default:
		for _, l := range h.nullLs {
			l.onMessage(m)
		}
	}
}

// resourceSubs appends to dst the resource uris the lifecycle's session
// subscribed to (resources/subscribe on a stateless upstream). A
// lifecycle without an upstream of its own (a transient one answered
// from what discovery told) has none.
func (l *lifecycle) resourceSubs(dst [][]byte) [][]byte {
	u := l.u
	if u == nil {
		return dst
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	return append(dst, u.resSubs...)
}

// listenCaps returns the upstream's capability bits, which say what its
// subscriptions/listen stream can ask for.
func (l *lifecycle) listenCaps() uint16 {
	l.u.mu.Lock()
	defer l.u.mu.Unlock()
	return l.u.caps
}

func (l *lifecycle) unregister() {
	sh := l.h.sh
	sh.mu.Lock()
	if sh.sessions[l.key] == l.u {
		delete(sh.sessions, l.key)
	}
	sh.mu.Unlock()
}

// teardown ends the upstream session: the GET stream stops, DELETE goes
// upstream and the session leaves the table.
func (l *lifecycle) teardown() {
	if l.over {
		return
	}
	l.over = true
	if l.get != nil {
		l.get.stop()
		l.get = nil
	}
	if l.null {
		l.leaveNullGet()
		return
	}
	l.unregister()
	sid, ver, stateless := l.u.close()
	if !stateless && sid != "" {
		postDelete(l.h, sid, ver)
	}
}

// backoff bounds the GET and listen streams' reconnections: the attempts
// in a row that fail before one delivers a message.
const (
	getRetries = 5
	getBackoff = 100 * time.Millisecond
)

// listChangedBits are the McpCapabilities bits of the list_changed
// notifications, server capabilities and subscriptions alike.
const listChangedBits = uint16(mcp.ListChangedCapabilities)

// getStream is a session's GET event stream or, for a stateless
// (2026-07-28) upstream, a subscriptions/listen stream, on the
// lifecycle's worker.
type getStream struct {
	l        *lifecycle
	c        *call
	rd       bodyReader
	lastID   []byte
	attempts int
	timer    int64
	stopped  bool
	status   int
	reopenFn func()
	uris     [][]byte // the resource uris of the last subscriptions/listen
	// listen: a POST subscriptions/listen for the subs bits, rather than
	// a GET.
	listen bool
	subs   uint16
	// opened, when set, is told once that the stream's response came or
	// that it failed first (awaitGet).
	opened func()
	// shared: the worker's session's GET stream, which the lifecycles
	// without a session id share (joinNullGet); l is a lifecycle of its
	// own, without a downstream, whose handler and upstream they all have.
	shared bool
}

func (l *lifecycle) openGet() {
	if l.get != nil {
		l.get.stop()
	}
	g := &getStream{l: l}
	g.reopenFn = g.reopen
	l.get = g
	g.open()
}

// openListen opens a subscriptions/listen stream for the lifecycle's
// subscriptions that the upstream advertised (caps); none when it
// advertised none of them.
func (l *lifecycle) openListen(caps uint16) {
	if l.get != nil {
		l.get.stop()
		l.get = nil
	}
	subs := l.subs & caps
	if subs == 0 && len(l.resourceSubs(nil)) == 0 {
		return
	}
	g := &getStream{l: l, listen: true, subs: subs}
	g.reopenFn = g.reopen
	l.get = g
	g.open()
}

// postListen POSTs subscriptions/listen (SEP-2575): the notifications of
// the subs bits, with the lifecycle's client capabilities in _meta.
func (g *getStream) postListen() {
	l := g.l
	h := l.h
	g.status = 0
	g.c = h.newCall(g)
	b := append(g.c.body[:0], `{"jsonrpc":"2.0","id":`...)
	b = strconv.AppendInt(b, h.sh.ids.Add(1), 10)
	b = append(b, `,"method":"subscriptions/listen","params":{"notifications":{`...)
	n := len(b)
	for _, k := range mcp.ListChanges() {
		if g.subs&uint16(k.Bit) != 0 {
			if len(b) > n {
				b = append(b, ',')
			}
			b = append(b, '"')
			b = append(b, k.Listen...)
			b = append(b, `":true`...)
		}
	}
	if uris := l.resourceSubs(g.uris[:0]); len(uris) > 0 {
		g.uris = uris
		if len(b) > n {
			b = append(b, ',')
		}
		b = append(b, `"resourceSubscriptions":[`...)
		for i, uri := range uris {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, uri...)
		}
		b = append(b, ']')
	}
	b = append(b, `},"_meta":`...)
	b = appendMeta(b, l.caps)
	b = append(b, `}}`...)
	g.c.body = b
	rh := reqHead{method: "POST", version: v20260728, mcpMethod: listenMethod}
	if !g.c.open(&rh, h.w.SupplyTraceID()) {
		g.c = nil
		g.retry()
	}
}

var listenMethod = []byte("subscriptions/listen")

func (g *getStream) open() {
	if g.stopped {
		return
	}
	if g.listen {
		g.postListen()
		return
	}
	u := g.l.u
	u.mu.Lock()
	state, sid, ver := u.state, u.sessionID, u.version
	u.mu.Unlock()
	if state != upReady || sid == "" {
		g.tellOpened()
		return
	}
	g.openSession(sid, ver)
}

// openSession GETs the event stream of session sid.
func (g *getStream) openSession(sid, ver string) {
	h := g.l.h
	g.status = 0
	g.c = h.newCall(g)
	rh := reqHead{method: "GET", sessionID: sid, version: ver}
	if len(g.lastID) > 0 {
		rh.lastEventID = g.lastID
	}
	if !g.c.open(&rh, h.w.SupplyTraceID()) {
		g.c = nil
		g.tellOpened()
		g.retry()
	}
}

// tellOpened tells the one waiting for the stream to open (opened) that
// the wait is over.
func (g *getStream) tellOpened() {
	if fn := g.opened; fn != nil {
		g.opened = nil
		fn()
	}
}

func (g *getStream) stop() {
	g.tellOpened()
	g.stopped = true
	g.l.h.w.Disarm(&g.timer)
	abortCall(&g.c)
}

func (g *getStream) reopen() {
	g.timer = 0
	g.open()
}

func (g *getStream) retry() {
	if g.stopped || g.attempts >= getRetries {
		return
	}
	g.attempts++
	d := getBackoff << (g.attempts - 1)
	g.timer = g.l.h.w.TimerAt(g.l.h.w.Now().Add(d), g.reopenFn)
}

func (g *getStream) onResponse(c *call, status int) {
	g.tellOpened()
	g.status = status
	sse := g.l.h.resp.sse
	g.rd.reset(sse)
	if g.listen {
		switch {
		case status == 200:
			// An event stream, or a JSON answer (an error) read as one
			// message that ends the listen.
		case status >= 500 || status == 429:
			g.c = nil
			c.abort()
			g.retry()
		default:
			// 4xx: the upstream does not listen (-32601 with 404), or
			// refuses the request; asking again would get the same.
			g.stopped = true
			g.c = nil
			c.abort()
		}
		return
	}
	if status == 409 {
		// Another GET stream of the session is still held upstream (one
		// just closed, not yet released): asked again after a backoff.
		g.c = nil
		c.abort()
		g.retry()
		return
	}
	if status != 200 || !sse {
		// 405: the upstream has no GET stream, which is fine; 404 or 400:
		// the session is gone, and the next request re-initializes.
		g.stopped = true
		g.c = nil
		c.abort()
	}
}

func (g *getStream) onBody(c *call, p []byte) {
	h := g.l.h
	for len(p) > 0 || g.rd.held() {
		n, msg, err := g.rd.next(p, c.bodyOver())
		p = p[n:]
		if err != nil {
			g.c = nil
			c.abort()
			g.retry()
			return
		}
		if id := g.rd.p.LastID(); len(id) > 0 {
			g.lastID = append(g.lastID[:0], id...)
		}
		if msg == nil {
			return
		}
		var m message
		if g.rd.decode(&h.tracker, msg, &m) != nil {
			continue
		}
		if g.listen && m.id != nil && m.method != nil {
			continue // 2026-07-28 has no server→client requests on a listen
		}
		if g.listen && m.method == nil {
			// The listen's response: an error, or the upstream ending the
			// subscription; a refusal is not retried.
			g.c = nil
			c.abort()
			if m.err != nil {
				g.stopped = true
				return
			}
			g.retry()
			return
		}
		g.attempts = 0
		if g.listen && string(m.method) == `"notifications/subscriptions/acknowledged"` {
			continue // the listen is open: nothing to relay
		}
		if g.shared {
			h.fanOut(g, &m)
			continue
		}
		g.l.onMessage(&m)
	}
}

func (g *getStream) onClose(c *call, failed bool) {
	g.tellOpened()
	if ownedCall(&g.c, c) {
		g.retry()
	}
}

// onMessage relays a message of the GET stream.
func (l *lifecycle) onMessage(m *message) {
	h := l.h
	if m.method == nil {
		return // a response replayed on a resumed stream: no request waits here
	}
	method := m.method[1 : len(m.method)-1]
	if l.relayLifecycleElicitation(method, m.id, m.params) {
		return
	}
	if m.id != nil {
		l.relayRequest(m.id, method, m.params)
		return
	}
	switch string(method) {
	case "notifications/tools/list_changed":
		if l.wants(mcp.McpCapabilitiesServerToolsListChanged) {
			l.ds.doFlush(flushToolsListChanged, nil, nil, 0, 0)
		}
	case "notifications/prompts/list_changed":
		if l.wants(mcp.McpCapabilitiesServerPromptsListChanged) {
			l.ds.doFlush(flushPromptsListChanged, nil, nil, 0, 0)
		}
	case "notifications/resources/list_changed":
		if l.wants(mcp.McpCapabilitiesServerResourcesListChanged) {
			l.ds.doFlush(flushResourcesListChanged, nil, nil, 0, 0)
		}
	case "notifications/resources/updated":
		uri := jsonrpc.Lookup(m.params, "uri")
		if len(uri) >= 2 {
			l.ds.doFlush(flushResourcesUpdated, unquote(h.scratch[:0], uri), nil, 0, 0)
		}
	default:
		l.ds.notify(method, m.params)
	}
}

// wants reports whether a list change of bit goes down: a lifecycle
// without a session id gets only those it subscribed to (it may share the
// worker's upstream session, and its GET stream, with others); a session's
// gets them all.
func (l *lifecycle) wants(bit mcp.McpCapabilities) bool {
	return !l.null || l.subs&uint16(bit) != 0
}

// relayRequest relays a request the upstream sent its client on the GET
// stream: FLUSH McpClientRequestFlushEx on the lifecycle's reply. A
// lifecycle without a session id shares the worker's upstream session
// with others, so no one client is the one asked: the upstream is
// answered by refuseRequest (a ping with an empty result). A request that
// cannot travel to the lifecycle's client is answered with an error.
func (l *lifecycle) relayRequest(id, method, params []byte) {
	if !l.null && l.ds.sendParts(flushClientRequest, id, method, params) {
		return
	}
	u := l.u
	u.mu.Lock()
	s := snapshot{u.gen, u.sessionID, u.version, u.stateless, u.caps}
	u.mu.Unlock()
	if l.null {
		refuseRequest(l.h, &s, id, method, -32603, undelivered(params))
		return
	}
	postError(l.h, &s, id, -32603, undelivered(params))
}

// unquote returns the contents of the JSON string b (with its quotes).
func unquote(dst, b []byte) []byte {
	out, err := jsonrpc.Unquote(dst, b)
	if err != nil {
		return append(dst, b[1:len(b)-1]...)
	}
	return out
}
