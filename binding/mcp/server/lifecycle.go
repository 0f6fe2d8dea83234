package server

import (
	"bytes"
	"github.com/sluicehq/sluice/binding/mcp/jsonrpc"
	"time"

	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/frame"
)

// lifecycle is a session's lifecycle stream (doc.go), the transient one
// that asks the application for its capabilities for server/discover (s
// nil, no listener), or a 2026-07-28 subscriptions/listen's (req, while
// that POST is still the one it names). It sends its initial direction
// (Out: BEGIN, END) and receives the application's reply (In: BEGIN, then
// FLUSHes). It lives on the worker that opened it.
type lifecycle struct {
	engine.Stream // Out: the lifecycle's BEGIN and END; In: the application's reply
	h             *server
	s             *session
	state         lcState
	req           postRef // the subscriptions/listen's POST
	parts         *noteParts
	onFrame       engine.MessageConsumer
}

// lcState is a lifecycle's own state.
type lcState uint8

const (
	lcListen  lcState = 1 << iota // a subscriptions/listen's, even once its POST left
	lcAborted                     // the reply ABORTed, the initial stream RESET, or the reply unreadable
)

// discovery is a worker's cache of the application's capabilities, for
// server/discover, and the requests waiting for them.
type discovery struct {
	known   bool
	bits    uint16
	lc      *lifecycle
	waiting []postRef
	timer   int64  // the application's time to answer lc: inactivity.timeout
	timeFn  func() // onDiscoveryTimeout
}

// openLifecycle opens a lifecycle stream: BEGIN McpBeginEx.lifecycle with
// the session id (nil for none), the client's capability bits, the
// session's elicitation callback URL as authCallback (as Zilla's server
// sends it, for a guard's redirect_uri) and the list_changed
// notifications wanted on it (subs). p is the POST that
// opens it, whose trace id and authorization it carries, and listen makes
// it that subscriptions/listen's.
func (h *server) openLifecycle(s *session, p *post, sid []byte, caps, subs uint16, listen bool) *lifecycle {
	w := h.w
	lc := &lifecycle{h: h, s: s}
	if listen {
		lc.state, lc.req = lcListen, p.ref()
	}
	lc.onFrame = lc.handle
	lc.Connect(w, h.cfg.ID, h.exitID, w.SupplyInitialID(h.exitID), lc.onFrame)
	lc.Out.Trace, lc.Out.Auth = p.Out.Trace, p.Out.Auth
	lc.In.Trace = p.Out.Trace
	err := lc.BeginWith(0, func(b *frame.BeginBuilder) {
		eb := h.exB.Begin.WrapSlot(b.ExtensionBuffer()).TypeID(h.mcpTypeID)
		lb := setSID(eb.Lifecycle(), sid).Capabilities(caps)
		if s != nil && len(s.callback) > 0 {
			lb.AuthCallbackBytes(s.callback)
		}
		lb.Subscriptions(subs)
		b.ExtensionDone(eb.BuildLimit())
	})
	if err != nil {
		return nil
	}
	return lc
}

func (lc *lifecycle) handle(t frame.FrameType, buf []byte) {
	h := lc.h
	switch t {
	case frame.FrameReset:
		rs, err := lc.OnReset(buf) // closes Out, and In when the reply had not begun
		lc.state |= lcAborted
		lc.resetReply()
		if err == nil && lc.refusedBearer(rs.Extension()) {
			return
		}
		lc.closed()
	case frame.FrameWindow:
		// The lifecycle sends nothing but its BEGIN and END; the credit
		// goes on the END.
		lc.OnWindow(buf)
	case frame.FrameBegin:
		b, err := lc.OnBegin(buf)
		if err != nil {
			break
		}
		if !lc.grant() {
			lc.fail()
			break
		}
		var caps uint16
		var sid []byte
		if ext := b.Extension(); h.mcpEx.TryWrap(ext, 0, len(ext)) && h.mcpEx.TypeID() == h.mcpTypeID &&
			h.mcpEx.Kind() == mcp.McpBeginExKindLifecycle {
			l := h.mcpEx.Lifecycle()
			caps = l.Capabilities()
			if l.HasSessionID() {
				sid = l.SessionID()
			}
		}
		lc.established(caps, sid)
	case frame.FrameData:
		if _, err := lc.OnData(buf); !malformed(err) && !lc.grant() {
			lc.fail()
		}
	case frame.FrameChallenge:
		if c, err := lc.OnChallenge(buf); err == nil && lc.s != nil {
			h.onLifecycleChallenge(lc.s, c.Extension())
		}
	case frame.FrameFlush:
		f, err := lc.OnFlush(buf)
		if malformed(err) {
			break
		}
		ext, dropped := h.wholeNotification(&lc.parts, f.Extension())
		if dropped != nil {
			h.answerDropped(lc.s, dropped, lc.Out.Trace, lc.Out.Auth)
		}
		switch {
		case ext == nil:
		case lc.s != nil:
			lc.s.notify(h, ext)
		case lc.state&lcListen != 0:
			if l := lc.listener(); l != nil {
				l.notify(ext)
				l.p.release()
			}
		}
		lc.parts.trim()
	case frame.FrameEnd:
		lc.OnEnd(buf) // closes In whatever it returns
		lc.end()
		lc.closed()
	case frame.FrameAbort:
		lc.OnAbort(buf) // closes In whatever it returns
		lc.state |= lcAborted
		lc.end()
		lc.closed()
	}
}

// grant offers the reply a slot's worth of window: the application has
// nothing to send on it but FLUSHes. It reports false when the ring
// refused the WINDOW, and the reply can no longer be read.
func (lc *lifecycle) grant() bool {
	lc.In.Grant(int32(lc.h.pool.SlotCapacity()))
	return lc.Window() == nil
}

// fail ends a lifecycle whose reply can no longer be read, as if the
// application had aborted it.
func (lc *lifecycle) fail() {
	lc.state |= lcAborted
	lc.end()
	lc.closed()
}

// end ends the lifecycle's initial side: the session is over. An END
// the ring refuses is only logged: the side is closed all the same.
func (lc *lifecycle) end() {
	if err := lc.End(nil); err != nil {
		lc.h.unsent(frame.FrameEnd, lc.OutID(), err)
	}
}

func (lc *lifecycle) resetReply() {
	if err := lc.Reset(nil); err != nil {
		lc.h.unsent(frame.FrameReset, lc.InID(), err)
	}
}

// established handles the application's lifecycle reply: its capability
// bits, and for a session the id its request streams carry.
func (lc *lifecycle) established(caps uint16, sid []byte) {
	h := lc.h
	s := lc.s
	if lc.state&lcListen != 0 {
		if l := lc.listener(); l != nil {
			l.established(caps, sid)
			l.p.release()
		} else {
			lc.end() // the client left while the application answered
		}
		return
	}
	if s == nil {
		h.disc.known, h.disc.bits = true, caps
		if h.disc.lc == lc { // not one given up (onDiscoveryTimeout)
			h.disc.lc = nil
			h.w.Disarm(&h.disc.timer)
		}
		lc.end()
		h.answerDiscovery()
		return
	}
	h.w.Disarm(&s.timerID) // the wait for this reply (onExpiry)
	s.serverCaps = caps
	s.appID = []byte(s.id)
	if len(sid) > 0 {
		s.appID = bytes.Clone(sid)
	}
	ref := s.init
	s.init = postRef{}
	if !ref.live() || ref.p.wait != waitLifecycle {
		h.s.addrs.release(s)
		lc.end()
		return
	}
	p := ref.p
	p.wait = waitNone
	if p.replyOver() {
		// The client left: it never learned the session id.
		h.s.addrs.release(s)
		lc.end()
		p.release()
		return
	}
	s.touch(h.w.Now().UnixNano())
	h.publish(s)
	h.armExpiry(s)
	h.w.Logger().Debug("mcp session established", "binding", h.cfg.Name, "version", s.version.String())
	b := p.appendHead(h.scratch[:0], "result")
	b = append(b, `{"protocolVersion":`...)
	b = jsonrpc.AppendString(b, s.version.String())
	b = append(b, `,"capabilities":`...)
	b = mcp.AppendServerCapabilities(b, mcp.McpCapabilities(caps))
	b = append(b, `,"serverInfo":`...)
	b = append(b, h.serverInfo...)
	b = append(b, "}}"...)
	p.flags |= withSession
	p.respondJSON(200, b)
	p.release()
}

// closed handles the end of the lifecycle from the application's side.
func (lc *lifecycle) closed() {
	h := lc.h
	s := lc.s
	if lc.state&lcListen != 0 {
		if l := lc.listener(); l != nil {
			l.closed(lc.In.Opening() && lc.state&lcAborted == 0)
			l.p.release()
		}
		lc.req = postRef{}
		return
	}
	if s == nil {
		if h.disc.lc == lc {
			h.disc.lc = nil
			h.w.Disarm(&h.disc.timer)
			h.answerDiscovery()
		}
		return
	}
	if s.init.p != nil {
		h.failInit(s, func(p *post) { p.rpcError(codeInternalError, "Internal error: the application refused the session") })
		return
	}
	if h.unpublish(s) {
		s.closed = true
		h.endSession(s)
	}
}

// failInit ends a session whose initialize the application did not
// answer: its client, if still there, gets answer's response.
func (h *server) failInit(s *session, answer func(p *post)) {
	ref := s.init
	s.init = postRef{}
	h.w.Disarm(&s.timerID)
	h.s.addrs.release(s)
	if ref.live() && ref.p.wait == waitLifecycle {
		ref.p.wait = waitNone
		answer(ref.p)
		ref.p.release()
	}
}

// refusedBearer answers the initialize of a session whose lifecycle the
// application refused with McpResetEx.bearer with that challenge (401,
// 403 or 400), as Zilla's server does, so that an OAuth-aware client
// learns where to get a token. It reports whether it answered.
func (lc *lifecycle) refusedBearer(ext []byte) bool {
	h, s := lc.h, lc.s
	if lc.state&lcListen != 0 || s == nil || s.init.p == nil {
		return false
	}
	if !h.resetEx.TryWrap(ext, 0, len(ext)) || h.resetEx.TypeID() != h.mcpTypeID || h.resetEx.Kind() != mcp.McpResetExKindBearer {
		return false
	}
	h.failInit(s, func(p *post) { p.bearer(h.resetEx.Bearer()) })
	return true
}

// armExpiry arms the session's inactivity timer.
func (h *server) armExpiry(s *session) {
	if s.timerFn == nil {
		s.timerFn = func() { h.onExpiry(s) }
	}
	idle := h.idleLimit(s)
	deadline := time.Unix(0, s.lastActive).Add(idle)
	if now := h.w.Now(); deadline.Before(now) {
		deadline = now.Add(idle)
	}
	s.timerID = h.w.TimerAt(deadline, s.timerFn)
}

// idleLimit is how long s may go without a request: inactivity.timeout,
// or inactivity.stream while its GET stream is its only use.
func (h *server) idleLimit(s *session) time.Duration {
	if s.get.g != nil && h.s.streamIdle > 0 {
		return max(h.s.streamIdle, h.s.inactivity)
	}
	return h.s.inactivity
}

// onExpiry ends a session idle for inactivity.timeout; one with requests
// in flight is in use, and is not idle. One whose only use is its GET
// stream is idle after inactivity.stream without a request, however the
// stream goes: its keep-alives say nothing of the client.
func (h *server) onExpiry(s *session) {
	s.timerID = 0
	if s.closed {
		return
	}
	if s.init.p != nil {
		// The application has not answered the initialize within
		// inactivity.timeout: the session it would start is given up.
		s.lc.resetReply()
		s.lc.end()
		h.failInit(s, func(p *post) {
			p.rpcError(codeInternalError, "Internal error: the application did not answer initialize in time")
		})
		return
	}
	now := h.w.Now()
	if len(s.inflight) > 0 || s.get.g != nil && h.s.streamIdle == 0 {
		s.touch(now.UnixNano())
	}
	if now.Sub(time.Unix(0, s.lastActive)) < h.idleLimit(s) {
		h.armExpiry(s)
		return
	}
	if h.unpublish(s) {
		s.closed = true
		h.w.Logger().Debug("mcp session expired", "binding", h.cfg.Name)
		h.endSession(s)
	}
}

// endSession ends an unpublished session: its lifecycle ENDs, its timer
// stops and its GET stream ends.
func (h *server) endSession(s *session) {
	h.endClientRequests(s)
	s.endElicits()
	s.replay.release(h)
	h.w.Disarm(&s.timerID)
	if s.lc != nil {
		s.lc.end()
	}
	get := s.get
	s.get, s.resume = getRef{}, 0
	if get.g == nil {
		return
	}
	get.g.end(get.gen)
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
		if h.upstreamCancelled(s, h.flushEx.Notification()) {
			return
		}
	case mcp.McpFlushExKindClientRequest:
		h.onClientRequest(s, nil, h.flushEx.ClientRequest())
		return
	case mcp.McpFlushExKindElicitComplete:
		c := h.flushEx.ElicitComplete()
		if c.HasID() {
			if e := s.elicits[string(c.ID())]; e != nil && e.req.p == nil {
				delete(s.elicits, e.id)
			}
			h.toStream(s, nil, appendElicitComplete(h.clientMsg[:0], c.ID()), false)
		}
		return
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
	b = appendEventID(b, nil, s.getSeq)
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
	s.replay.add(h, h.s.replay, 0, nil, s.getSeq, b)
	h.deliver(s.get, b, false)
}

// record keeps the last event of a POST stream's response res for
// replay, and sends it on to a GET stream that resumed that stream: the
// client resumed because it lost the POST's connection, whether or not
// the server has noticed yet. A stream without an id text cannot be
// resumed, so its events are not kept. kept tells an event other events
// may not crowd out (request.record).
func (s *session) record(h *server, res *response, b []byte, kept bool) {
	sid := res.streamID()
	if sid == nil {
		return
	}
	s.replay.add(h, h.s.replay, res.stream, sid, res.seq, b)
	if s.resume == res.stream {
		h.deliver(s.get, b, kept)
	}
}

// deliver sends an event to a GET stream; a kept one (request.record) may
// use the room other events leave it, as on a request's own stream.
func (h *server) deliver(get getRef, b []byte, kept bool) {
	if get.g != nil {
		get.g.deliver(get.gen, b, kept)
	}
}

// onDiscoveryTimeout gives up a discovery lifecycle the application has
// not answered within inactivity.timeout: the requests waiting for it get
// an error, and the next one opens another.
func (h *server) onDiscoveryTimeout() {
	h.disc.timer = 0
	lc := h.disc.lc
	if lc == nil {
		return
	}
	h.disc.lc = nil
	lc.resetReply()
	lc.end()
	h.answerDiscovery()
}

// answerDiscovery answers the requests waiting for the capabilities: with
// them when the application gave them, else with an internal error.
func (h *server) answerDiscovery() {
	waiting := h.disc.waiting
	for i, ref := range waiting {
		waiting[i] = postRef{}
		p := ref.p
		if !ref.live() || p.wait != waitDiscover {
			continue
		}
		p.wait = waitNone
		if !p.replyOver() {
			if h.disc.known {
				p.respondDiscover()
			} else {
				p.rpcError(codeInternalError, "Internal error: the application gave no capabilities")
			}
		}
		p.release()
	}
	h.disc.waiting = waiting[:0]
}
