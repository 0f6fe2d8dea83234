package proxy

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/binding/mcp/jsonrpc"
	"github.com/sluicehq/sluice/engine"
)

// Backoff of a route's revival in a session: after a failed attempt the
// next waits reviveBackoff, doubling up to maxReviveBackoff; the first
// attempt after the session's start waits for nothing.
const (
	reviveBackoff    = time.Second
	maxReviveBackoff = 30 * time.Second
)

// sessionTable is shared by the workers of one engine for one proxy (the
// provisioned instance's), by session id: the routes whose lifecycle
// declared SERVER_LOGGING, for logging/setLevel, and the routes out of
// the session (that refused it, did not answer in time, or ended their
// part), so that a request on any worker can have the session's
// lifecycle, on its own worker, open the route again before it goes
// there.
type sessionTable struct {
	mu       sync.Mutex
	sessions map[string]*sessionEntry
	// down counts the sessions with a route out: while there are none,
	// requests do not take the lock.
	down atomic.Int32
}

type sessionEntry struct {
	logging  uint64
	down     uint64 // routes out of the session
	reviving uint64 // routes the lifecycle is opening again
	w        *engine.Worker
	l        *lifecycle // only used on w
	waiters  []reviveWaiter
}

// reviveWaiter is a request waiting, on worker w, for a route to be back
// in its session; done runs on w.
type reviveWaiter struct {
	route int
	w     *engine.Worker
	done  func(ok bool, why string)
}

func newSessionTable() *sessionTable {
	return &sessionTable{sessions: map[string]*sessionEntry{}}
}

// put registers a session whose lifecycle l, on worker w, has replied.
func (t *sessionTable) put(sid []byte, logging, down uint64, w *engine.Worker, l *lifecycle) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if old, ok := t.sessions[string(sid)]; ok && old.down != 0 {
		t.down.Add(-1)
	}
	t.sessions[string(sid)] = &sessionEntry{logging: logging, down: down, w: w, l: l}
	if down != 0 {
		t.down.Add(1)
	}
}

// remove forgets a session; the requests waiting for one of its routes
// are told it has ended.
func (t *sessionTable) remove(sid []byte) {
	t.mu.Lock()
	e, ok := t.sessions[string(sid)]
	if ok {
		delete(t.sessions, string(sid))
		if e.down != 0 {
			t.down.Add(-1)
		}
	}
	t.mu.Unlock()
	if ok {
		for _, q := range e.waiters {
			q.w.Dispatch(func() { q.done(false, "the session has ended") })
		}
	}
}

// logging returns the routes with SERVER_LOGGING for the session, and
// whether the session is known.
func (t *sessionTable) logging(sid []byte) (uint64, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.sessions[string(sid)]
	if !ok {
		return 0, false
	}
	return e.logging, true
}

// markDown notes that route left a registered session.
func (t *sessionTable) markDown(sid []byte, route int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e, ok := t.sessions[string(sid)]; ok {
		if e.down == 0 {
			t.down.Add(1)
		}
		e.down |= 1 << uint(route)
		e.logging &^= 1 << uint(route)
	}
}

// revive reports whether route is out of session sid; if so, done will
// run on w once the session's lifecycle has tried to open it again (ok)
// or knows it cannot now (why). One attempt serves every request that
// waits for it.
func (t *sessionTable) revive(sid []byte, route int, w *engine.Worker, done func(ok bool, why string)) bool {
	if t.down.Load() == 0 || route >= 64 {
		return false
	}
	t.mu.Lock()
	e, ok := t.sessions[string(sid)]
	bit := uint64(1) << uint(route)
	if !ok || e.down&bit == 0 {
		t.mu.Unlock()
		return false
	}
	e.waiters = append(e.waiters, reviveWaiter{route: route, w: w, done: done})
	start := e.reviving&bit == 0
	e.reviving |= bit
	t.mu.Unlock()
	if start {
		l := e.l
		e.w.Dispatch(func() { l.revive(route) })
	}
	return true
}

// revived ends an attempt to open route again in session sid: the route
// is back (ok, with SERVER_LOGGING when logging) or still out (why), and
// each request that waited for it is told on its own worker.
func (t *sessionTable) revived(sid []byte, route int, ok, logging bool, why string) {
	bit := uint64(1) << uint(route)
	t.mu.Lock()
	e, found := t.sessions[string(sid)]
	if !found {
		t.mu.Unlock()
		return
	}
	e.reviving &^= bit
	if ok {
		e.down &^= bit
		if e.down == 0 {
			t.down.Add(-1)
		}
		if logging {
			e.logging |= bit
		}
	}
	var done []reviveWaiter
	kept := e.waiters[:0]
	for _, q := range e.waiters {
		if q.route == route {
			done = append(done, q)
		} else {
			kept = append(kept, q)
		}
	}
	clear(e.waiters[len(kept):])
	e.waiters = kept
	t.mu.Unlock()
	for _, q := range done {
		q.w.Dispatch(func() { q.done(ok, why) })
	}
}

// revive opens the session's lifecycle to route again, on the session's
// worker, unless its backoff has not run out.
func (l *lifecycle) revive(route int) {
	h := l.h
	if l.In.Closed() || l.Out.Closed() || !l.registered || route >= len(l.legs) {
		h.sessions.revived(l.sid, route, false, false, "the session has ended")
		return
	}
	now := h.w.Now()
	if at := l.retryAt[route]; now.Before(at) {
		// The wait is rounded up, so that a client that waits as long as
		// it is told finds the backoff run out.
		wait := at.Sub(now)
		if r := wait.Truncate(time.Millisecond); r < wait {
			wait = r + time.Millisecond
		}
		h.sessions.revived(l.sid, route, false, false, l.why[route]+" (next attempt in "+wait.String()+")")
		return
	}
	h.log.Info("opening the session to the route again", "route", h.s.routes[route].label(), "session", string(l.sid))
	g := &lifecycleLeg{l: l, route: route, revival: true}
	l.legs[route] = g
	if !g.begin() {
		l.reviveFailed(g, "cannot open a stream to the route")
		return
	}
	g.timer = h.w.TimerAt(now.Add(lifecycleTimeout), func() {
		g.timer = 0
		if !g.In.Opening() && !g.In.Closed() {
			g.abort()
			g.resetReply()
			l.reviveFailed(g, "the route did not open the session within "+lifecycleTimeout.String())
		}
	})
}

// reviveDone notes a revived route's reply: it is back in the session.
func (l *lifecycle) reviveDone(g *lifecycleLeg) {
	h := l.h
	h.w.Disarm(&g.timer)
	l.retryAt[g.route], l.backoff[g.route] = time.Time{}, 0
	h.log.Info("route back in the session", "route", h.s.routes[g.route].label(), "session", string(l.sid))
	h.sessions.revived(l.sid, g.route, true, g.caps&uint16(mcp.McpCapabilitiesServerLogging) != 0, "")
}

// reviveFailed notes a failed revival and sets the route's next attempt.
func (l *lifecycle) reviveFailed(g *lifecycleLeg, why string) {
	h := l.h
	h.w.Disarm(&g.timer)
	g.revival = false
	b := max(reviveBackoff, 2*l.backoff[g.route])
	b = min(b, maxReviveBackoff)
	l.backoff[g.route] = b
	l.retryAt[g.route] = h.w.Now().Add(b)
	l.why[g.route] = why
	h.log.Warn("route still out of the session", "route", h.s.routes[g.route].label(), "session", string(l.sid), "reason", why, "retry", b)
	h.sessions.revived(l.sid, g.route, false, false, why)
}

// routeOut notes why a route is out of the session, from its lifecycle's
// refusal (McpResetEx error) or end.
func (l *lifecycle) routeOut(route int, why string) {
	l.why[route] = why
}

// unavailableMessage is the error a request gets when its route is out of
// its session.
func (h *Handler) unavailableMessage(route int, why string) []byte {
	return []byte("Route " + h.s.routes[route].label() + " is unavailable: " + why)
}

// relay opens the call's leg once its route is in the request's session:
// a route out of it is opened again first, and the call answered with
// why when it cannot be.
func (r *request) relay() {
	h := r.h
	if r.sidNull || h.sessions.down.Load() == 0 || !h.sessions.revive(r.sid, r.route, h.w, r.afterRevive(nil)) {
		r.openRelay()
	}
}

// afterRevive makes the completion of a revival a request waits for: a
// call's (l nil) opens its leg or answers why not; a list's notes the
// route out and starts the legs once the last revival is done.
func (r *request) afterRevive(l *leg) func(ok bool, why string) {
	gen := r.gen
	return func(ok bool, why string) {
		if r.gen != gen || r.state&released != 0 {
			return
		}
		h := r.h
		defer r.maybeRelease()
		if l != nil {
			if !ok {
				h.routeMetrics(l.route).unavailable.Add(1)
				l.state |= legDown
				l.errCode = jsonrpc.CodeInternalError
				l.errMsg = append(l.errMsg[:0], h.unavailableMessage(l.route, why)...)
			}
			if r.reviving--; r.reviving == 0 && !r.Out.Closed() {
				r.startLegs()
			}
			return
		}
		if r.Out.Closed() || r.state&local != 0 {
			return
		}
		if ok {
			r.openRelay()
			return
		}
		h.routeMetrics(r.route).unavailable.Add(1)
		r.refuseAnswer(jsonrpc.CodeInternalError, string(h.unavailableMessage(r.route, why)))
	}
}

// reviveLegs has the routes of a list that are out of the request's
// session opened again, and starts the legs once every one is back or
// known to be out.
func (r *request) reviveLegs() {
	h := r.h
	r.reviving = 0
	if !r.sidNull && h.sessions.down.Load() != 0 {
		for _, l := range r.legs {
			l.state |= legIdle
		}
		for _, l := range r.legs {
			if h.sessions.revive(r.sid, l.route, h.w, r.afterRevive(l)) {
				r.reviving++
			}
		}
	}
	if r.reviving == 0 {
		r.startLegs()
	}
}

// refuseAnswer answers a call with an error of the proxy's own while the
// downstream may still hold its params: the reply opens first (a RESET
// before it would give it up), then the request is reset with the error,
// and the reply carries it too.
func (r *request) refuseAnswer(code int32, msg string) {
	if !r.In.Closed() {
		if !r.Out.Opening() && !r.Out.Closed() && !r.beginReply() {
			return
		}
		r.resetDown(code, msg)
	}
	r.respondError(code, []byte(msg), nil, nil)
}

// forgo closes a leg that was never opened, sending nothing: a list's
// leg for a route that stays out of the session, or whose request ended
// while it waited.
func (l *leg) forgo() {
	h := l.r.h
	exitID := h.s.routes[l.route].exitID
	l.Connect(h.w, h.id, exitID, h.w.SupplyInitialID(exitID), l.onFrame)
	l.Forgo()
	l.state &^= legIdle
}
