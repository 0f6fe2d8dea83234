package server

import "github.com/sluicehq/sluice/binding/mcp"

// getStream is a GET: the session's event stream (MCP.md §1.1 "GET
// rules"; Zilla's McpEventStream). While it stands (eventStream) the
// session names it (session.get), and the session's notifications and
// the events of a POST stream it resumed go on it, with keep-alives when
// it is idle.
type getStream struct {
	request
	lastEventLen int // -1: longer than any event id
	lastEvent    [maxEventID]byte
	// callback: the GET is of the elicitation callback, whose URL cb
	// keeps (elicit.go); cbLen -1: too long to keep.
	isCB  bool
	cbLen int
	cb    [maxCallbackURL]byte
	// isPRM: the GET asks for the protected resource metadata (auth.go).
	isPRM bool
}

// getRef names a GET stream for its session. A getStream struct is
// reused, so gen tells whether it is still the same one.
type getRef struct {
	g   *getStream
	gen uint32
}

func (g *getStream) ref() getRef { return getRef{g: g, gen: g.gen} }

// release releases the GET stream ref names, if it still does.
func (ref getRef) release() {
	if ref.g.gen == ref.gen {
		ref.g.release()
	}
}

// setup makes a new GET stream serve as its request's role.
func (g *getStream) setup(h *server) { g.init(h, g) }

// setLastEventID keeps Last-Event-ID, which resumes a stream (MCP.md
// §1.2); one longer than any id the server writes (maxEventID: a
// stream's id text, ':' and a uint32) resumes none.
func (g *getStream) setLastEventID(v []byte) {
	g.lastEventLen = copy(g.lastEvent[:], v)
	if len(v) > len(g.lastEvent) {
		g.lastEventLen = -1
	}
}

// body drops a GET's body.
func (g *getStream) body(p []byte) { g.drain(p) }

// ended opens the stream once the request is complete.
func (g *getStream) ended() {
	if g.isCB {
		g.callback()
		return
	}
	if g.isPRM {
		g.servePRM()
		return
	}
	if !g.answered() {
		g.open()
	}
}

func (g *getStream) window() {}

// gone forgets the stream when the client leaves it.
func (g *getStream) gone() {
	if g.flags&eventStream == 0 {
		return
	}
	g.endEvents()
	if s := g.sess; s != nil && s.get == g.ref() {
		s.get, s.resume = getRef{}, 0
		// The client was there until its stream ended: the session's
		// inactivity.timeout runs from now, time to resume it.
		s.touch(g.h.w.Now().UnixNano())
	}
}

// release returns the GET stream to the free list once it is done.
func (g *getStream) release() { putRole(&g.request, &g.h.gets, g) }

// open opens the session's GET stream (MCP.md §1.1 "GET rules"),
// replaying after Last-Event-ID (§1.2).
func (g *getStream) open() {
	h := g.h
	if g.hdr.ver == mcp.Version20260728 || !h.s.get {
		g.methodNotAllowed()
		return
	}
	if g.hdr.flags&(acceptsSSE|acceptsAny) == 0 {
		g.transportError(406, codeTransport, "Not Acceptable: Client must accept text/event-stream")
		return
	}
	s := g.session()
	if s == nil || !g.versionOK() {
		return
	}
	var stream, after uint32
	resuming := false
	if g.lastEventLen > 0 {
		var sid []byte
		if sid, after, resuming = parseEventID(g.lastEvent[:g.lastEventLen]); resuming {
			stream, resuming = s.findStream(sid)
		}
	}
	b := h.scratch[:0]
	if s.get.g != nil {
		g.transportError(409, codeTransport, "Conflict: Only one SSE stream is allowed per session")
		return
	}
	s.get = g.ref()
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
	g.flags |= eventStream
	g.res.mode = modeSSE
	g.beginReply(200, "text/event-stream", -1, nil)
	if resuming {
		g.write(b)
	} else if s.version >= mcp.Version20251125 {
		p := append(h.aux[:0], "id: "...)
		p = appendEventID(p, nil, priming)
		p = append(p, "\ndata: \n\n"...)
		g.write(p)
	}
	g.armKeepalive()
	if !s.gotGet {
		s.gotGet = true
		h.sendEarly(s)
	}
}

// deliver sends an event of the session on the stream, if it is still
// the one of generation gen; kept tells one other events may not crowd
// out (request.record).
func (g *getStream) deliver(gen uint32, b []byte, kept bool) {
	if g.gen != gen || g.flags&eventStream == 0 || g.replyOver() {
		return
	}
	if !g.writeQueued(b, !kept) {
		g.droppedEvent(kept)
	}
}

// end ends the stream when its session ends.
func (g *getStream) end(gen uint32) {
	if g.gen != gen || g.flags&eventStream == 0 {
		return
	}
	g.endEvents()
	g.endReply()
}
