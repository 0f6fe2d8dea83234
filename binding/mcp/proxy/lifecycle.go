package proxy

import (
	"sync"
	"time"

	"github.com/sluicehq/sluice/binding/mcp"
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
// stream per route with the same session id and client capabilities.
type lifecycle struct {
	h             *Handler
	originID      int64
	initialID     int64
	replyID       int64
	traceID       int64
	authorization int64
	sid           []byte
	sidNull       bool
	caps          uint16
	subs          uint16 // the list_changed notifications the opener wants
	authCallback  []byte
	hasCallback   bool
	state         uint16
	in            engine.Flow // the downstream's initial direction, received
	out           engine.Flow // the downstream reply, sent
	legs          []*lifecycleLeg
	waiting       int
	timer         int64
}

const (
	lcInClosed    uint16 = 1 << iota // END or ABORT received, or RESET sent
	lcReplyOpened                    // reply BEGIN sent
	lcReplyClosed                    // END or ABORT sent, or RESET received
	lcRegistered                     // the session is in the shared table
)

// lifecycleLeg is the lifecycle stream to one route.
type lifecycleLeg struct {
	l         *lifecycle
	route     int
	initialID int64
	replyID   int64
	out       engine.Flow // sent
	in        engine.Flow // received
	state     uint16
	caps      uint16
}

func newLifecycle(h *Handler, b *frame.Begin) engine.MessageConsumer {
	l := &lifecycle{
		h: h, originID: b.OriginID(), initialID: b.StreamID(), replyID: engine.ReplyID(b.StreamID()),
		traceID: b.TraceID(), authorization: b.Authorization(),
	}
	return l.onDown
}

func (l *lifecycle) onDown(t frame.FrameType, buf []byte) {
	h := l.h
	if !h.header.TryWrap(buf, 0, len(buf)) {
		return
	}
	id := h.header.StreamID()
	if t.IsThrottle() {
		if id != l.replyID {
			return
		}
		switch t {
		case frame.FrameWindow:
			if h.window.TryWrap(buf, 0, len(buf)) && l.out.OnWindow(&h.window) != nil {
				l.fail()
			}
		case frame.FrameReset:
			l.state |= lcReplyClosed
			for _, g := range l.legs {
				g.resetReply()
			}
			l.resetDown()
			l.done()
		}
		return
	}
	if id != l.initialID {
		return
	}
	switch t {
	case frame.FrameBegin:
		if h.begin.TryWrap(buf, 0, len(buf)) {
			l.onBegin(&h.begin)
		}
	case frame.FrameData:
		if h.data.TryWrap(buf, 0, len(buf)) {
			if l.in.OnData(&h.data) != nil {
				l.fail()
				return
			}
			l.grant()
		}
	case frame.FrameFlush:
		if h.flush.TryWrap(buf, 0, len(buf)) && l.in.OnFrame(h.flush.Sequence()) != nil {
			l.fail()
			return
		}
		// A client's step (an elicitation response) goes to every route.
		for _, g := range l.legs {
			if g.state&lcInClosed == 0 && g.state&lcReplyOpened != 0 {
				_ = h.forward(frame.FrameFlush, buf, h.id, h.s.routes[g.route].exitID, g.initialID, &g.out)
			}
		}
	case frame.FrameEnd:
		l.state |= lcInClosed
		for _, g := range l.legs {
			g.end()
		}
		l.endReply()
		l.done()
	case frame.FrameAbort:
		l.state |= lcInClosed
		for _, g := range l.legs {
			g.abort()
			g.resetReply()
		}
		l.abortReply()
		l.done()
	}
}

func (l *lifecycle) onBegin(b *frame.Begin) {
	h := l.h
	l.in.Seq, l.in.Ack = b.Sequence(), b.Acknowledge()
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
	for i := range h.s.routes {
		g := &lifecycleLeg{l: l, route: i}
		l.legs = append(l.legs, g)
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
		if g.state&(lcReplyOpened|lcReplyClosed) == 0 {
			l.h.log.Warn("route did not open the session in time", "toolkit", l.h.s.routes[g.route].toolkit)
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
		if l.timer != 0 {
			l.h.w.Cancel(l.timer)
			l.timer = 0
		}
		l.settled()
	}
}

// settled replies to the downstream with the session id it gave and the
// OR of the server capabilities of the routes that accepted; when none
// did, the downstream's lifecycle is refused.
func (l *lifecycle) settled() {
	h := l.h
	if l.state&(lcInClosed|lcReplyClosed) != 0 {
		return
	}
	var caps uint16
	var logging uint64
	accepted := 0
	for _, g := range l.legs {
		if g.state&lcReplyOpened != 0 && g.state&lcReplyClosed == 0 {
			accepted++
			caps |= g.caps & serverBits
			if g.caps&uint16(mcp.McpCapabilitiesServerLogging) != 0 {
				logging |= 1 << uint(g.route)
			}
		}
	}
	if accepted == 0 {
		h.log.Warn("no route accepted the session")
		l.state |= lcReplyClosed
		ext := h.errorResetEx(codeInternalError, "Internal error: no route accepted the session")
		l.state |= lcInClosed
		_ = h.doReset(l.originID, h.id, l.initialID, l.traceID, l.authorization, &l.in, ext)
		return
	}
	if !l.sidNull {
		h.sessions.put(l.sid, logging)
		l.state |= lcRegistered
	}
	b := h.beginExB.Wrap(h.extBuf, 0, len(h.extBuf)).TypeID(h.typeID)
	mcp.SetSessionID(b.Lifecycle(), l.sid, l.sidNull).Capabilities(caps)
	n, err := b.BuildLimit()
	if err != nil {
		l.fail()
		return
	}
	buf := h.w.WriteBuffer()
	m, err := h.beginB.Wrap(buf, 0, len(buf)).
		OriginID(l.originID).RoutedID(h.id).StreamID(l.replyID).
		Sequence(0).Acknowledge(0).Maximum(0).
		TraceID(l.traceID).Authorization(l.authorization).Affinity(0).
		Extension(h.extBuf[:n]).
		BuildLimit()
	if err == nil {
		err = h.w.Send(frame.FrameBegin, buf[:m])
	}
	if err != nil {
		l.fail()
		return
	}
	l.state |= lcReplyOpened
	l.grant()
}

func (l *lifecycle) grant() {
	if l.state&lcInClosed != 0 {
		return
	}
	h := l.h
	l.in.Grant(lifecycleWindow)
	if h.doWindow(l.originID, h.id, l.initialID, l.traceID, l.authorization, &l.in) != nil {
		l.fail()
	}
}

// onFlush turns a route's lifecycle FLUSH into the downstream's: the list
// changes as they are, resourcesUpdated with the route's prefix on its
// uri, notifications and the rest passed through.
func (l *lifecycle) onFlush(g *lifecycleLeg, buf []byte) {
	h := l.h
	if l.state&(lcReplyOpened|lcReplyClosed) != lcReplyOpened || !h.flush.TryWrap(buf, 0, len(buf)) {
		return
	}
	ext := h.flush.Extension()
	if h.s.prefixed && h.flushEx.TryWrap(ext, 0, len(ext)) && h.flushEx.TypeID() == h.typeID &&
		h.flushEx.Kind() == mcp.McpFlushExKindResourcesUpdated {
		v := h.flushEx.ResourcesUpdated()
		uri := append(append(h.scratch[:0], h.s.routes[g.route].uri...), v.URI()...)
		h.scratch = uri
		c := h.flushExB.Wrap(h.extBuf, 0, len(h.extBuf)).TypeID(h.typeID).ResourcesUpdated()
		if v.HasID() {
			c.IDBytes(v.ID())
		} else {
			c.IDNull()
		}
		c.URIBytes(uri)
		n, err := h.flushExB.BuildLimit()
		if err != nil {
			return
		}
		if h.doFlush(l.originID, h.id, l.replyID, l.traceID, l.authorization, &l.out, h.extBuf[:n]) != nil {
			l.fail()
		}
		return
	}
	if h.forward(frame.FrameFlush, buf, l.originID, h.id, l.replyID, &l.out) != nil {
		l.fail()
	}
}

func (l *lifecycle) endReply() {
	if l.state&lcReplyClosed != 0 {
		return
	}
	l.state |= lcReplyClosed
	if l.state&lcReplyOpened == 0 {
		return
	}
	h := l.h
	_ = h.doEnd(l.originID, h.id, l.replyID, l.traceID, l.authorization, &l.out, nil)
}

func (l *lifecycle) abortReply() {
	if l.state&lcReplyClosed != 0 {
		return
	}
	l.state |= lcReplyClosed
	if l.state&lcReplyOpened == 0 {
		return
	}
	h := l.h
	_ = h.doAbort(l.originID, h.id, l.replyID, l.traceID, l.authorization, &l.out)
}

func (l *lifecycle) resetDown() {
	if l.state&lcInClosed != 0 {
		return
	}
	l.state |= lcInClosed
	h := l.h
	_ = h.doReset(l.originID, h.id, l.initialID, l.traceID, l.authorization, &l.in, nil)
}

// fail tears the session down after a protocol violation or a refused
// send.
func (l *lifecycle) fail() {
	for _, g := range l.legs {
		g.abort()
		g.resetReply()
	}
	l.resetDown()
	l.abortReply()
	l.done()
}

// done forgets the session once the downstream's lifecycle is over.
func (l *lifecycle) done() {
	if l.timer != 0 {
		l.h.w.Cancel(l.timer)
		l.timer = 0
	}
	if l.state&lcRegistered != 0 {
		l.state &^= lcRegistered
		l.h.sessions.remove(l.sid)
	}
}

func (g *lifecycleLeg) begin() bool {
	l := g.l
	h := l.h
	rt := &h.s.routes[g.route]
	g.initialID = h.w.SupplyInitialID(rt.exitID)
	g.replyID = engine.ReplyID(g.initialID)
	b := h.beginExB.Wrap(h.extBuf, 0, len(h.extBuf)).TypeID(h.typeID)
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
		return false
	}
	buf := h.w.WriteBuffer()
	m, err := h.beginB.Wrap(buf, 0, len(buf)).
		OriginID(h.id).RoutedID(rt.exitID).StreamID(g.initialID).
		Sequence(0).Acknowledge(0).Maximum(0).
		TraceID(l.traceID).Authorization(l.authorization).Affinity(0).
		Extension(h.extBuf[:n]).
		BuildLimit()
	if err == nil {
		err = h.w.NewStream(buf[:m], g.onUp)
	}
	if err != nil {
		g.state |= lcInClosed | lcReplyClosed
		return false
	}
	return true
}

// onUp receives a route's lifecycle reply and the throttle frames of the
// proxy's lifecycle stream to it.
func (g *lifecycleLeg) onUp(t frame.FrameType, buf []byte) {
	l := g.l
	h := l.h
	if !h.header.TryWrap(buf, 0, len(buf)) {
		return
	}
	id := h.header.StreamID()
	if t.IsThrottle() {
		if id != g.initialID {
			return
		}
		switch t {
		case frame.FrameWindow:
			if h.window.TryWrap(buf, 0, len(buf)) && g.out.OnWindow(&h.window) != nil {
				g.abort()
			}
		case frame.FrameReset:
			g.state |= lcInClosed
			pending := g.state&(lcReplyOpened|lcReplyClosed) == 0
			g.resetReply()
			if pending {
				h.log.Warn("route refused the session", "toolkit", h.s.routes[g.route].toolkit)
				l.legSettled()
			}
		case frame.FrameChallenge:
			if l.state&lcInClosed == 0 {
				_ = h.forward(frame.FrameChallenge, buf, l.originID, h.id, l.initialID, &l.in)
			}
		}
		return
	}
	if id != g.replyID {
		return
	}
	switch t {
	case frame.FrameBegin:
		if g.state&lcReplyClosed != 0 {
			return
		}
		g.state |= lcReplyOpened
		g.in.Seq, g.in.Ack = h.header.Sequence(), h.header.Acknowledge()
		if h.begin.TryWrap(buf, 0, len(buf)) {
			ext := h.begin.Extension()
			if h.beginEx.TryWrap(ext, 0, len(ext)) && h.beginEx.Kind() == mcp.McpBeginExKindLifecycle {
				v := h.beginEx.Lifecycle()
				g.caps = v.Capabilities()
			}
		}
		g.grant()
		if l.state&(lcInClosed|lcReplyClosed) != 0 {
			g.end()
		}
		l.legSettled()
	case frame.FrameData:
		if h.data.TryWrap(buf, 0, len(buf)) && g.in.OnData(&h.data) == nil {
			g.grant()
		}
	case frame.FrameFlush:
		if h.flush.TryWrap(buf, 0, len(buf)) {
			_ = g.in.OnFrame(h.flush.Sequence())
		}
		l.onFlush(g, buf)
	case frame.FrameEnd, frame.FrameAbort:
		// A route's end alone does not end the session: its part is over.
		g.state |= lcReplyClosed
		if t == frame.FrameEnd {
			g.end()
		} else {
			g.abort()
		}
	}
}

func (g *lifecycleLeg) grant() {
	l := g.l
	h := l.h
	if g.in.Grant(lifecycleWindow) {
		_ = h.doWindow(h.id, h.s.routes[g.route].exitID, g.replyID, l.traceID, l.authorization, &g.in)
	}
}

func (g *lifecycleLeg) end() {
	if g.state&lcInClosed != 0 || g.initialID == 0 {
		return
	}
	g.state |= lcInClosed
	l := g.l
	h := l.h
	_ = h.doEnd(h.id, h.s.routes[g.route].exitID, g.initialID, l.traceID, l.authorization, &g.out, nil)
}

func (g *lifecycleLeg) abort() {
	if g.state&lcInClosed != 0 || g.initialID == 0 {
		return
	}
	g.state |= lcInClosed
	l := g.l
	h := l.h
	_ = h.doAbort(h.id, h.s.routes[g.route].exitID, g.initialID, l.traceID, l.authorization, &g.out)
}

func (g *lifecycleLeg) resetReply() {
	if g.state&lcReplyClosed != 0 || g.initialID == 0 {
		return
	}
	g.state |= lcReplyClosed
	l := g.l
	h := l.h
	_ = h.doReset(h.id, h.s.routes[g.route].exitID, g.replyID, l.traceID, l.authorization, &g.in, nil)
}

// sessionTable is shared by the workers of one engine for one proxy (the
// provisioned instance's): the routes whose lifecycle declared
// SERVER_LOGGING, by session id, for logging/setLevel, which may arrive
// on another worker than the session's lifecycle.
type sessionTable struct {
	mu       sync.Mutex
	sessions map[string]uint64
}

func (t *sessionTable) put(sid []byte, logging uint64) {
	t.mu.Lock()
	t.sessions[string(sid)] = logging
	t.mu.Unlock()
}

func (t *sessionTable) remove(sid []byte) {
	t.mu.Lock()
	delete(t.sessions, string(sid))
	t.mu.Unlock()
}

// logging returns the routes with SERVER_LOGGING for the session, and
// whether the session is known.
func (t *sessionTable) logging(sid []byte) (uint64, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	m, ok := t.sessions[string(sid)]
	return m, ok
}
