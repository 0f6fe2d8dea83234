package proxy

import (
	"time"

	"github.com/sluicehq/sluice/binding"
	"github.com/sluicehq/sluice/binding/internal/streams"
	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/binding/mcp/jsonrpc"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/frame"
)

// lifecycleTimeout bounds how long a session's lifecycle waits for its
// routes' replies; a route that has not replied by then is left out.
const lifecycleTimeout = 10 * time.Second

// serverBits are the capabilities a route's lifecycle reply declares
// that the proxy passes on (ORed over the routes).
const serverBits = uint16(mcp.ServerCapabilities)

// lifecycle is one session's lifecycle stream, fanned out to a lifecycle
// stream per route with the same session id and client capabilities. Its
// Stream receives the downstream's lifecycle (In) and sends the reply
// (Out); every frame the proxy makes for it carries the trace id and
// authorization of its BEGIN.
type lifecycle struct {
	engine.Stream
	h            *Handler
	sid          []byte
	sidNull      bool
	caps         uint16
	subs         uint16 // the list_changed notifications the opener wants
	authCallback []byte
	hasCallback  bool
	registered   bool // the session is in the shared table
	legs         []*lifecycleLeg
	held         []heldRequest // clientRequests before the reply opened
	heldBytes    int
	waiting      int
	unauthorized int // routes its opener may not reach (guarded.go)
	timer        int64
	// Per route: why it is out of the session, when it may be opened
	// again, and the backoff that set that time (see revive).
	why     []string
	retryAt []time.Time
	backoff []time.Duration
	// internal is the cache's hydrate lifecycle, which the proxy opened to
	// itself: it is not held by the cache's gate, and its routes'
	// list_changed notifications reach it.
	internal bool
}

// lifecycleLeg is the lifecycle stream to one route: its Stream sends the
// proxy's lifecycle (Out) and receives the route's reply (In).
type lifecycleLeg struct {
	engine.Stream
	l     *lifecycle
	route int
	caps  uint16
	// revival is a leg the session opened again after the route was out
	// of it; timer bounds its wait for the route's reply.
	revival bool
	timer   int64
}

func newLifecycle(h *Handler, b *frame.Begin) engine.MessageConsumer {
	l := &lifecycle{h: h, internal: b.OriginID() == h.id}
	l.Accept(h.w, b.OriginID(), h.id, b.StreamID())
	l.Out.Trace, l.Out.Auth = b.TraceID(), b.Authorization()
	l.In.Trace, l.In.Auth = b.TraceID(), b.Authorization()
	return l.onDown
}

// onDown receives the downstream's lifecycle and the throttle frames of
// the reply to it. A flow-control violation tears the session down.
func (l *lifecycle) onDown(t frame.FrameType, buf []byte) {
	switch t {
	case frame.FrameWindow:
		_, err := l.OnWindow(buf)
		streams.Received(err, l.fail)
	case frame.FrameReset:
		_, _ = l.OnReset(buf) // Out closes either way
		for _, g := range l.legs {
			g.resetReply()
		}
		l.resetDown(nil)
		l.done()
	case frame.FrameBegin:
		if b, err := l.OnBegin(buf); err == nil {
			l.onBegin(&b)
		}
	case frame.FrameData:
		if _, err := l.OnData(buf); streams.Received(err, l.fail) {
			l.grant()
		}
	case frame.FrameFlush:
		if f, err := l.OnFlush(buf); streams.Received(err, l.fail) {
			l.relayFlush(&f)
		}
	case frame.FrameEnd:
		_, _ = l.OnEnd(buf) // In closes either way
		for _, g := range l.legs {
			g.end()
		}
		l.endReply()
		l.done()
	case frame.FrameAbort:
		// In closes either way, so fail tears down all but it.
		_, _ = l.OnAbort(buf)
		l.fail()
	}
}

// relayFlush passes a client's step (an elicitation response) on to
// every route that opened the session; an elicitCallback whose state
// carries a route's toolkit prefix goes to that route alone, without it.
func (l *lifecycle) relayFlush(f *frame.Flush) {
	route, ext := l.h.upCallback(f.Extension())
	for _, g := range l.legs {
		if route >= 0 && g.route != route {
			continue
		}
		if !g.Out.Closed() && g.In.Opening() && relayFlushExt(&g.Stream, f, ext) != nil {
			g.resetReply()
		}
	}
}

func (l *lifecycle) onBegin(b *frame.Begin) {
	h := l.h
	ext := b.Extension()
	if !h.beginEx.TryWrap(ext, 0, len(ext)) {
		return
	}
	v := h.beginEx.Lifecycle()
	l.sidNull = !v.HasSessionID()
	l.sid = append([]byte(nil), v.SessionID()...)
	l.caps = v.Capabilities()
	l.subs = v.Subscriptions()
	l.hasCallback = v.HasAuthCallback()
	l.authCallback = append([]byte(nil), v.AuthCallback()...)
	if c := h.cache; c != nil && !l.internal && !c.open {
		// The cache's gate holds the session until every cached list has
		// settled, so that its first list is served from the cache.
		c.waiting = append(c.waiting, l)
		return
	}
	l.start()
}

// start opens the session's lifecycle to every route.
func (l *lifecycle) start() {
	h := l.h
	if l.In.Closed() || l.Out.Closed() {
		return
	}
	n := len(h.s.routes)
	l.why, l.retryAt, l.backoff = make([]string, n), make([]time.Time, n), make([]time.Duration, n)
	for i := range h.s.routes {
		g := &lifecycleLeg{l: l, route: i}
		l.legs = append(l.legs, g)
		if !h.allowed(i, h.routeAuth(l.internal, i, l.Out.Auth)) {
			// Out of the session from the start; a request its caller
			// may make of the route opens it (revive.go).
			l.routeOut(i, "the session's caller is not authorized for the route")
			l.unauthorized++
			continue
		}
		if g.begin() {
			l.waiting++
		}
	}
	if l.waiting == 0 {
		l.settled()
		return
	}
	l.timer = h.w.TimerAt(h.w.Now().Add(lifecycleTimeout), l.timedOut)
}

// timedOut leaves out the routes that have not replied.
func (l *lifecycle) timedOut() {
	l.timer = 0
	for _, g := range l.legs {
		if !g.In.Opening() && !g.In.Closed() {
			l.h.log.Warn("route did not open the session in time", "route", l.h.s.routes[g.route].label())
			l.routeOut(g.route, "the route did not open the session within "+lifecycleTimeout.String())
			g.abort()
			g.resetReply()
			l.legSettled()
		}
	}
}

// legSettled counts a route's reply (or refusal); the last one lets the
// downstream's reply open.
func (l *lifecycle) legSettled() {
	l.waiting--
	if l.waiting == 0 {
		l.h.w.Disarm(&l.timer)
		l.settled()
	}
}

// settled replies to the downstream with the session id it gave and the
// OR of the server capabilities of the routes that accepted; when none
// did, the downstream's lifecycle is refused.
func (l *lifecycle) settled() {
	h := l.h
	if l.In.Closed() || l.Out.Closed() {
		return
	}
	var caps uint16
	var logging, down uint64
	accepted := 0
	for _, g := range l.legs {
		if !g.In.Opening() || g.In.Closed() {
			down |= 1 << uint(g.route)
		} else {
			accepted++
			caps |= g.caps & serverBits
			if g.caps&uint16(mcp.McpCapabilitiesServerLogging) != 0 {
				logging |= 1 << uint(g.route)
			}
		}
	}
	if accepted == 0 && l.unauthorized == len(l.legs) {
		// A caller who may reach no route gets a Bearer challenge, which
		// the server answers 401 (no token) or 403 (too few roles) with
		// the roles the routes ask for as its scope.
		code := mcp.McpBearerErrorInsufficientScope
		if l.Out.Auth == 0 {
			code = mcp.McpBearerErrorInvalidToken
		}
		b := h.exB.Reset.Wrap(h.extBuf, 0, len(h.extBuf)).TypeID(h.typeID).Bearer()
		if h.s.scopes != "" {
			b.Scopes(h.s.scopes)
		}
		n, err := b.Error(code).BuildLimit()
		if err != nil {
			n = 0
		}
		l.resetDown(h.extBuf[:n])
		return
	}
	if accepted == 0 {
		h.log.Warn("no route accepted the session")
		// The RESET gives up the reply, not begun, too.
		l.resetDown(h.errorResetEx(jsonrpc.CodeInternalError, "Internal error: no route accepted the session"))
		return
	}
	if !l.sidNull {
		h.sessions.put(l.sid, logging, down, h.w, l)
		l.registered = true
	}
	b := h.exB.Begin.Wrap(h.extBuf, 0, len(h.extBuf)).TypeID(h.typeID)
	mcp.SetSessionID(b.Lifecycle(), l.sid, l.sidNull).Capabilities(caps)
	n, err := b.BuildLimit()
	if err != nil || l.Begin(h.extBuf[:n]) != nil {
		l.fail()
		return
	}
	l.grant()
	if h.cache != nil && !l.internal {
		h.cache.track(l)
	}
	held := l.held
	l.held, l.heldBytes = nil, 0
	for _, q := range held {
		if g := l.legs[q.route]; g.In.Closed() || !g.In.Opening() {
			continue // the route is out of the session
		}
		if _, err := h.sendClientRequests(&l.Stream, q.ext, q.reserved, q.trace, q.auth, q.route, l.sid, l.sidNull); err != nil {
			l.fail()
			return
		}
	}
}

// hold keeps a route's clientRequest FLUSH until the downstream reply
// opens, within maxHeld and maxHeldBytes; past them it is answered with
// an error.
func (l *lifecycle) hold(g *lifecycleLeg, f *frame.Flush) {
	ext := f.Extension()
	if len(l.held) >= maxHeld || l.heldBytes+len(ext) > maxHeldBytes {
		l.h.refuseClientRequest(g.route, l.sid, l.sidNull, ext, f.TraceID(), f.Authorization(),
			"Internal error: too many requests to the client before its session opened")
		return
	}
	l.heldBytes += len(ext)
	l.held = append(l.held, heldRequest{route: g.route, ext: append([]byte(nil), ext...),
		reserved: f.Reserved(), trace: f.TraceID(), auth: f.Authorization()})
}

func (l *lifecycle) grant() {
	l.In.Grant(lifecycleWindow)
	if l.Window() != nil {
		l.fail()
	}
}

// onFlush turns a route's lifecycle FLUSH into the downstream's: the list
// changes as they are, resourcesUpdated with the route's prefix on its
// uri (a FLUSH of the proxy's own), a clientRequest with its id naming the
// route, notifications and the rest passed through. A clientRequest that
// comes before the downstream reply opened waits for it (hold); other
// FLUSHes then are dropped. One that comes once the session is closed is
// answered with an error (refuseClientRequest).
func (l *lifecycle) onFlush(g *lifecycleLeg, f *frame.Flush) {
	h := l.h
	if l.Out.Closed() || !l.Out.Opening() && l.In.Closed() {
		h.refuseClientRequest(g.route, l.sid, l.sidNull, f.Extension(), f.TraceID(), f.Authorization(), closedSession)
		return
	}
	if !l.Out.Opening() {
		if isClientRequest(h, f) {
			l.hold(g, f)
		}
		return
	}
	if ok, err := h.relayClientRequest(&l.Stream, f, g.route, l.sid, l.sidNull); ok {
		if err != nil {
			l.fail()
		}
		return
	}
	if ok, err := h.relayCancelled(&l.Stream, f, g.route); ok {
		if err != nil {
			l.fail()
		}
		return
	}
	ext := f.Extension()
	if h.cache != nil && !l.internal {
		if _, cached := h.cache.cachedFlush(ext); cached {
			return // the cache tells the session once the new list is stored
		}
	}
	if h.s.prefixed && h.flushEx.TryWrap(ext, 0, len(ext)) && h.flushEx.TypeID() == h.typeID &&
		h.flushEx.Kind() == mcp.McpFlushExKindResourcesUpdated {
		v := h.flushEx.ResourcesUpdated()
		uri := h.s.routes[g.route].appendURI(h.scratch[:0], v.URI())
		h.scratch = uri
		c := h.exB.Flush.Wrap(h.extBuf, 0, len(h.extBuf)).TypeID(h.typeID).ResourcesUpdated()
		if v.HasID() {
			c.IDBytes(v.ID())
		} else {
			c.IDNull()
		}
		c.URIBytes(uri)
		n, err := h.exB.Flush.BuildLimit()
		if err != nil {
			return
		}
		if l.Flush(h.extBuf[:n]) != nil {
			l.fail()
		}
		return
	}
	if relayFlush(&l.Stream, f) != nil {
		l.fail()
	}
}

// endReply ends the downstream reply if it has begun, and otherwise gives
// it up: it will not open now. When the ring refuses the END, the
// lifecycle is reset: the downstream learns of the end one way or the
// other.
func (l *lifecycle) endReply() {
	if streams.EndReply(&l.Stream) != nil {
		l.resetDown(nil)
	}
}

// abortReply aborts the downstream reply as endReply ends it.
func (l *lifecycle) abortReply() {
	if streams.AbortReply(&l.Stream) != nil {
		l.resetDown(nil)
	}
}

// resetDown resets the downstream's lifecycle, with extension ext; when
// the ring refuses the RESET, the reply is aborted.
func (l *lifecycle) resetDown(ext []byte) {
	if l.Reset(ext) != nil {
		l.abortReply()
	}
}

// fail tears the session down after a protocol violation or a refused
// send.
func (l *lifecycle) fail() {
	for _, g := range l.legs {
		g.abort()
		g.resetReply()
	}
	l.resetDown(nil)
	l.abortReply()
	l.done()
}

// done forgets the session once the downstream's lifecycle is over.
func (l *lifecycle) done() {
	l.h.w.Disarm(&l.timer)
	if l.h.cache != nil {
		l.h.cache.untrack(l)
	}
	if l.registered {
		l.registered = false
		l.h.sessions.remove(l.sid)
	}
}

// begin opens the lifecycle stream to the leg's route, with the opener's
// session id, capabilities, auth callback and subscriptions.
func (g *lifecycleLeg) begin() bool {
	l := g.l
	h := l.h
	exitID := h.s.routes[g.route].exitID
	g.Connect(h.w, h.id, exitID, h.w.SupplyInitialID(exitID), g.onUp)
	auth := h.routeAuth(l.internal, g.route, l.Out.Auth)
	g.Out.Trace, g.Out.Auth = l.Out.Trace, auth
	g.In.Trace, g.In.Auth = l.Out.Trace, auth
	b := h.exB.Begin.Wrap(h.extBuf, 0, len(h.extBuf)).TypeID(h.typeID)
	c := mcp.SetSessionID(b.Lifecycle(), l.sid, l.sidNull).Capabilities(l.caps)
	if l.hasCallback {
		c.AuthCallbackBytes(l.authCallback)
	} else {
		c.AuthCallbackNull()
	}
	// Every route gets the opener's subscriptions: only the bits a route
	// advertised matter to it, and a route that has none to relay sends
	// no FLUSH.
	c.Subscriptions(l.subs)
	n, err := b.BuildLimit()
	if err != nil {
		g.Forgo()
		return false
	}
	return g.Begin(h.extBuf[:n]) == nil
}

// onUp receives a route's lifecycle reply and the throttle frames of the
// proxy's lifecycle stream to it.
func (g *lifecycleLeg) onUp(t frame.FrameType, buf []byte) {
	l := g.l
	h := l.h
	switch t {
	case frame.FrameWindow:
		if _, err := g.OnWindow(buf); binding.Violation(err) {
			g.abort()
		}
	case frame.FrameReset:
		pending := !g.In.Opening() && !g.In.Closed()
		why := "the route refused the session"
		if rs, err := g.OnReset(buf); err == nil { // Out closes either way, and a reply not begun with it
			ext := rs.Extension()
			if h.resetEx.TryWrap(ext, 0, len(ext)) && h.resetEx.TypeID() == h.typeID && h.resetEx.Kind() == mcp.McpResetExKindError {
				e := h.resetEx.Error()
				if m := e.Message(); len(m) > 0 {
					why = string(m)
				}
			}
		}
		g.resetReply()
		switch {
		case pending && g.revival:
			l.reviveFailed(g, why)
		case pending:
			h.log.Warn("route refused the session", "route", h.s.routes[g.route].label(), "reason", why)
			l.routeOut(g.route, why)
			l.legSettled()
		default:
			l.legOut(g, why)
		}
	case frame.FrameChallenge:
		if c, err := g.OnChallenge(buf); err == nil && !l.In.Closed() && relayChallenge(&l.Stream, &c, h.downChallenge(c.Extension(), g.route)) != nil {
			l.fail()
		}
	case frame.FrameBegin:
		b, err := g.OnBegin(buf)
		if err != nil {
			return
		}
		ext := b.Extension()
		if h.beginEx.TryWrap(ext, 0, len(ext)) && h.beginEx.Kind() == mcp.McpBeginExKindLifecycle {
			v := h.beginEx.Lifecycle()
			g.caps = v.Capabilities()
		}
		g.grant()
		if l.In.Closed() || l.Out.Closed() {
			g.end()
		}
		if g.revival {
			l.reviveDone(g)
			return
		}
		l.legSettled()
	case frame.FrameData:
		if _, err := g.OnData(buf); err == nil {
			g.grant()
		}
	case frame.FrameFlush:
		if f, err := g.OnFlush(buf); err == nil {
			l.onFlush(g, &f)
		}
	case frame.FrameEnd:
		// A route's end alone does not end the session: its part is over,
		// until the session's next request for the route opens it again.
		_, _ = g.OnEnd(buf)
		g.end()
		l.legOut(g, "the route ended the session")
	case frame.FrameAbort:
		_, _ = g.OnAbort(buf)
		g.abort()
		l.legOut(g, "the route dropped the session")
	}
}

func (g *lifecycleLeg) grant() {
	if g.In.Grant(lifecycleWindow) && g.Window() != nil {
		g.abort()
	}
}

// end, abort and resetReply close a direction of the route's lifecycle
// while it is open. When the ring refuses the frame, the other direction
// closes instead: the route learns of the end one way or the other.
// A leg never opened (a route its opener may not reach) has no worker,
// and nothing to close.
func (g *lifecycleLeg) end() {
	if g.Worker() != nil && g.End(nil) != nil {
		g.resetReply()
	}
}

func (g *lifecycleLeg) abort() {
	if g.Worker() != nil {
		g.AbortElseReset()
	}
}

func (g *lifecycleLeg) resetReply() {
	if g.Worker() != nil {
		g.ResetElseAbort()
	}
}

// legOut notes that a route which had accepted the session left it while
// the session goes on: the session's next request for the route opens it
// again.
func (l *lifecycle) legOut(g *lifecycleLeg, why string) {
	if !l.registered || l.In.Closed() || l.Out.Closed() || l.legs[g.route] != g || g.revival && !g.In.Opening() {
		return
	}
	l.h.log.Warn("route left the session", "route", l.h.s.routes[g.route].label(), "session", string(l.sid), "reason", why)
	l.routeOut(g.route, why)
	l.h.sessions.markDown(l.sid, g.route)
	if l.internal && l.h.cache != nil {
		l.h.cache.hy.routeLeft()
	}
}
