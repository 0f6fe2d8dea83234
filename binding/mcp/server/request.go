package server

import (
	"bytes"
	"errors"
	"github.com/sluicehq/sluice/binding/http/h1"

	"github.com/sluicehq/sluice/binding/internal/streams"
	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/frame"
)

// Sizes of what a request keeps from its headers and body.
const (
	maxSessionID = 128  // longer ids are unknown sessions
	maxMethod    = 128  // a longer Mcp-Method header mismatches
	maxName      = 4096 // tool and prompt names, resource uris
	maxID        = 256  // a request id's JSON text
	maxEventID   = maxStreamID + 11
)

// HTTP methods the endpoint serves.
const (
	methodOther uint8 = iota
	methodPost
	methodGet
	methodDelete
)

// request is one HTTP request's stream, as every role shares it: the
// request arriving on In, the response written on Out by the response
// writer (out.go), the headers that route it and the session it names.
// It lives on the worker its HTTP stream arrived on, unless it names a
// session another worker owns: then it is relayed there (rl).
//
// Each role type embeds it and serves as its role, taking what concerns
// the request's method and message. The structs are reused, and gen
// tells a reference whether it still names the same request.
type request struct {
	engine.Stream // In: the request; Out: the response
	h             *server
	role          role
	onNet         engine.MessageConsumer
	gen           uint32
	flags         reqFlags
	hdr           headers
	bodyLen       int64 // body bytes received
	sess          *session
	rl            *relay // relays the request to the worker that owns its session
	res           response
	// guardSess is the guard session its bearer token opened, which the
	// request's application streams carry as their authorization; 0 for
	// none. The request releases it when it is recycled.
	guardSess int64
}

// role is what a request's stream asks of the role that serves it.
type role interface {
	// body takes the request's body bytes, in order.
	body(p []byte)
	// ended takes the request's END: the request is complete.
	ended()
	// window follows a WINDOW of the response, once the queue moved.
	window()
	// gone follows the client leaving, or the stream failing: the request
	// aborted or reset, the response aborted or reset.
	gone()
	// release gives the role back to its free list once it is done.
	release()
}

var (
	_ role = (*post)(nil)
	_ role = (*getStream)(nil)
	_ role = (*deleteRequest)(nil)
)

// reqFlags is a request's state besides its stream's directions, whose
// open and closed bits are its engine.Stream's.
type reqFlags uint8

const (
	freed        reqFlags = 1 << iota // on its free list
	relayed                           // carried to its session's owner by rl
	stateless                         // 2026-07-28: of no session
	withSession                       // the response head carries mcp-session-id
	detached                          // the client left an SSE response; its events go on into replay
	eventStream                       // a standing event stream (GET, subscriptions/listen): keep-alives go on it
	replyDropped                      // the request ended abruptly before the reply began: none will
)

// headers is what a request's headers say that every role reads; a
// role keeps the ones only it reads itself.
type headers struct {
	method        uint8
	flags         headerFlags
	ver           mcp.Version
	early         int         // a status decided from the headers
	earlyCode     int         // with early: the error's code and message, when set
	earlyMsg      string      //
	bearer        bearerError // with early: a Bearer challenge to answer with
	contentLength int64
	sidLen        int // -1: longer than any session's id
	verLen        int
	sid           [maxSessionID]byte
	verRaw        [32]byte
}

// headerFlags says which headers a request had, and what its Accept
// takes.
type headerFlags uint8

const (
	hasSessionID headerFlags = 1 << iota
	hasMcpMethod
	hasMcpName
	acceptsJSON
	acceptsSSE
	acceptsAny  // */*
	hasMcpParam // a Mcp-Param-* header (SEP-2243)
	noGuard     // the elicitation callback or the protected resource metadata: no token is asked
)

// base returns the request a role embeds.
func (r *request) base() *request { return r }

// init makes a new request r serve as role.
func (r *request) init(h *server, role role) {
	r.h, r.role = h, role
	r.onNet = r.onNetFrame
	r.res.onKA = r.keepalive
	r.res.q.slot = -1
}

// over reports whether the request's stream is done with: both
// directions closed (or the reply given up) and no event stream standing
// on it; or, for a relayed request, the relay done.
func (r *request) over() bool {
	if r.flags&relayed != 0 {
		return r.rl == nil
	}
	return r.In.Closed() && (r.Out.Closed() || r.flags&replyDropped != 0) && r.flags&eventStream == 0
}

// done reports whether the request's role may go back to its free list:
// its stream is over and it is not there yet.
func (r *request) done() bool { return r.flags&freed == 0 && r.over() }

// answered reports whether the complete request has its answer already,
// or gets it now from what its headers decided.
func (r *request) answered() bool {
	if r.replyOver() || r.res.mode != modeNone {
		return true
	}
	if r.hdr.early != 0 {
		r.respondEarly()
		return true
	}
	return false
}

// recycle lets go of what the request holds, as its role goes back to
// its free list, and leaves it ready for its next request, for which
// Accept resets the stream and setHeaders the headers' other fields; the
// arrays are left as they are, their lengths saying what is valid.
// References to the request no longer name it.
func (r *request) recycle() {
	r.stopKeepalive()
	r.res.q.drop(r.h)
	r.gen++
	r.flags = freed
	r.hdr.ver, r.hdr.earlyCode, r.hdr.earlyMsg = mcp.VersionNone, 0, ""
	r.hdr.sidLen, r.hdr.verLen = 0, 0
	r.bodyLen, r.sess, r.rl = 0, nil, nil
	r.hdr.bearer = bearerNone
	if r.guardSess != 0 {
		r.h.guard.Deauthorize(r.guardSess)
		r.guardSess = 0
	}
	res := &r.res
	res.mode, res.held, res.allow, res.id, res.stream, res.seq = modeNone, 0, "", nil, 0, 0
	res.sidLen, res.dropped = 0, 0
}

// onNetFrame handles the HTTP stream: the request's frames, and the
// throttle of the response. What concerns the request's role goes to it,
// and every frame ends with its release, once it is done: the role's
// release is asked only once the stream is over, which it needs first.
func (r *request) onNetFrame(t frame.FrameType, buf []byte) {
	if r.rl != nil {
		r.rl.fromNet(t, buf)
		return
	}
	switch t {
	case frame.FrameBegin:
		b, err := r.OnBegin(buf)
		if err != nil {
			break
		}
		// The response carries the request's trace id and authorization;
		// the request's WINDOW and RESET its trace id. NewStream has read
		// the headers.
		r.Out.Trace, r.Out.Auth = b.TraceID(), b.Authorization()
		r.In.Trace = r.Out.Trace
		if r.hdr.flags&hasSessionID != 0 && r.h.workers > 1 && r.toOwner(buf) {
			return
		}
		if r.h.guard != nil && r.hdr.early == 0 && r.hdr.flags&noGuard == 0 {
			r.authorize(b.Extension())
		}
		r.grantIn(0)
	case frame.FrameData:
		// A DATA beyond the window granted fails the request.
		if d, err := r.OnData(buf); streams.Received(err, r.fail) {
			r.role.body(d.Payload())
		}
	case frame.FrameEnd:
		r.OnEnd(buf) // closes In whatever it returns
		if r.res.held != 0 {
			r.sendHeld()
		} else {
			r.role.ended()
		}
	case frame.FrameAbort:
		r.OnAbort(buf) // closes In whatever it returns
		r.gone()
	case frame.FrameFlush:
		r.OnFlush(buf) // a FLUSH of the request carries nothing the server takes
	case frame.FrameWindow:
		if _, err := r.OnWindow(buf); streams.Received(err, r.fail) {
			r.flushOut()
			r.role.window()
		}
	case frame.FrameReset:
		r.OnReset(buf) // closes Out whatever it returns
		r.res.q.drop(r.h)
		r.gone()
	}
	if r.over() {
		r.role.release()
	}
}

// headerScan is what one pass over a request's headers finds, before
// its role is picked: what every role keeps, and the values that only
// some roles read, which alias the BEGIN's extension.
type headerScan struct {
	method  uint8
	flags   headerFlags
	early   int
	badHost bool // early is 403 for the Host, not the Origin
	// twice names a header the request gave more than once, of those
	// that take one value: "" for none.
	twice         string
	contentLength int64
	sid, ver      []byte
	// Mcp-Method and Mcp-Name (a POST's, 2026-07-28) and Last-Event-ID
	// (a GET's), when they came.
	mcpMethod, mcpName, lastEventID []byte
	// :scheme, :authority and :path, for the elicitation callback.
	scheme, authority, path []byte
	// remote is the client's address (Sluice's :remote-address), for
	// limits.sessionsPerAddress.
	remote []byte
	// ext is the headers' extension, read again for Mcp-Param headers.
	ext []byte
}

// scanHeaders reads a request's headers (the HttpBeginEx ext): what
// routes the request, and the checks that need no body (Origin, method,
// size).
func (h *server) scanHeaders(ext []byte, sc *headerScan) {
	sc.contentLength = -1
	it, ok := httpHeaders(ext, h.httpTypeID)
	if !ok {
		sc.early = 400
		return
	}
	var authority, origin []byte
	hasOrigin := false
	contentTypes, jsonBody := 0, false
	var seen singletons
	for name, v, ok := it.next(); ok; name, v, ok = it.next() {
		switch string(name) {
		case ":method":
			sc.method = parseMethod(v)
		case ":authority":
			authority = v
		case ":scheme":
			sc.scheme = v
		case ":path":
			sc.path = v
		case ":remote-address":
			sc.remote = v
		case "host":
			if authority == nil {
				authority = v
			}
		case "accept":
			json, sse, any := scanAccept(v)
			if json {
				sc.flags |= acceptsJSON
			}
			if sse {
				sc.flags |= acceptsSSE
			}
			if any {
				sc.flags |= acceptsAny
			}
		case "content-type":
			contentTypes++
			jsonBody = isJSONMediaType(v)
		case "content-length":
			if n, ok := parseUint(v); ok {
				sc.contentLength = n
			}
		case "mcp-session-id":
			sc.once(&seen, sidSeen, "Mcp-Session-Id")
			sc.flags |= hasSessionID
			sc.sid = v
		case "mcp-protocol-version":
			sc.once(&seen, verSeen, "MCP-Protocol-Version")
			sc.ver = v
		case "origin":
			sc.once(&seen, originSeen, "Origin")
			origin, hasOrigin = v, true
		case "authorization":
			sc.once(&seen, authSeen, "Authorization")
		case "last-event-id":
			sc.once(&seen, lastEventSeen, "Last-Event-ID")
			sc.lastEventID = v
		case "mcp-method":
			sc.once(&seen, methodSeen, "Mcp-Method")
			sc.flags |= hasMcpMethod
			sc.mcpMethod = v
		case "mcp-name":
			sc.once(&seen, nameSeen, "Mcp-Name")
			sc.flags |= hasMcpName
			sc.mcpName = v
		default:
			if isParamHeader(name) {
				sc.flags |= hasMcpParam
			}
		}
	}
	sc.ext = ext
	sc.authority = authority
	switch {
	case sc.twice != "":
		// Components that read the first, the last or both joined would
		// each read another request (RFC 9110 §5.3).
		sc.early = 400
	case !h.hostAllowed(authority):
		// DNS-rebinding protection: a request naming another host than
		// the ones the server answers for.
		sc.early, sc.badHost = 403, true
	case hasOrigin && !h.originAllowed(origin, authority):
		sc.early = 403
	case sc.method == methodOther:
		sc.early = 405
	case sc.method == methodPost && sc.contentLength > h.s.maxBody:
		sc.early = 413
	case sc.method == methodPost && (contentTypes != 1 || !jsonBody) && sc.flags.acceptable():
		// As the SDKs do: a body that is not declared JSON (a form or a
		// text/plain POST, which a browser sends without preflight) is
		// not read. An Accept the server cannot answer gets its 406
		// first, as in the TypeScript SDK.
		sc.early = 415
	}
}

// singletons are the headers the server reads that take one value, as
// bits of those a request gave.
type singletons uint8

const (
	sidSeen singletons = 1 << iota
	verSeen
	originSeen
	lastEventSeen
	methodSeen
	nameSeen
	authSeen
)

// once notes a header that takes one value in seen, and its display name
// in twice the first time one comes again.
func (sc *headerScan) once(seen *singletons, bit singletons, display string) {
	if *seen&bit != 0 && sc.twice == "" {
		sc.twice = display
	}
	*seen |= bit
}

// acceptable reports whether a POST's Accept takes both the answers the
// server may give: JSON and an event stream.
func (f headerFlags) acceptable() bool {
	return f&acceptsAny != 0 || f&(acceptsJSON|acceptsSSE) == acceptsJSON|acceptsSSE
}

// isJSONMediaType reports whether a Content-Type value's media type, the
// type/subtype before any parameter, is application/json (RFC 9110
// §8.3.1: compared without regard to case). Parameters such as charset
// are ignored, as the SDKs ignore them.
func isJSONMediaType(v []byte) bool {
	if i := bytes.IndexByte(v, ';'); i >= 0 {
		v = v[:i]
	}
	return h1.EqualFold(trimOWS(v), "application/json")
}

// setHeaders keeps what the headers say that every role reads.
func (r *request) setHeaders(sc *headerScan) {
	r.hdr.method, r.hdr.flags, r.hdr.early, r.hdr.contentLength = sc.method, sc.flags, sc.early, sc.contentLength
	switch {
	case sc.twice != "":
		r.hdr.earlyCode, r.hdr.earlyMsg = codeTransport, "Bad Request: "+sc.twice+" header given twice"
	case sc.badHost:
		r.hdr.earlyCode, r.hdr.earlyMsg = codeTransport, "Forbidden: Host not allowed"
	}
	if sc.flags&hasSessionID != 0 {
		r.hdr.sidLen = copy(r.hdr.sid[:], sc.sid)
		if len(sc.sid) > len(r.hdr.sid) {
			r.hdr.sidLen = -1 // no session has such an id
		}
	}
	if sc.ver != nil {
		r.hdr.ver = mcp.ParseVersion(sc.ver)
		r.hdr.verLen = copy(r.hdr.verRaw[:], sc.ver)
	}
}

// hostAllowed checks Host (:authority) against the hosts option, when set.
func (h *server) hostAllowed(authority []byte) bool {
	if len(h.s.hosts) == 0 {
		return true
	}
	for _, a := range h.s.hosts {
		if h1.EqualFold(a, authority) {
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
		if h1.EqualFold(a, o) {
			return true
		}
	}
	i := bytes.Index(o, []byte("://"))
	if i <= 0 || authority == nil || !h1.EqualFold(o[i+3:], authority) {
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
	return h1.EqualFold(host, "localhost") || string(host) == "127.0.0.1" || string(host) == "[::1]"
}

// parseMethod reads a request's :method: POST, GET, DELETE, or
// methodOther for any other.
func parseMethod(v []byte) uint8 {
	switch string(v) {
	case "POST":
		return methodPost
	case "GET":
		return methodGet
	case "DELETE":
		return methodDelete
	}
	return methodOther
}

// parseUint reads a decimal of at most 18 digits, which an int64 holds.
func parseUint(v []byte) (int64, bool) {
	n, ok := parseDigits(v, 18)
	return int64(n), ok
}

// parseDigits reads v as a decimal of 1 to max digits (max at most 19,
// which a uint64 holds), nothing else.
func parseDigits(v []byte, max int) (uint64, bool) {
	if len(v) == 0 || len(v) > max {
		return 0, false
	}
	var n uint64
	for _, c := range v {
		if !isDigit(c) {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	return n, true
}

// drain takes body bytes the request has no use for: a GET's or a
// DELETE's, read and dropped.
func (r *request) drain(p []byte) {
	r.bodyLen += int64(len(p))
	r.grantIn(0)
}

// grantIn offers the request stream its window: the room its slot has,
// held bytes of it taken, or everything received when the body is
// dropped. A WINDOW the ring refuses leaves the request unreadable: it
// fails.
func (r *request) grantIn(held int) {
	if r.In.Closed() {
		return
	}
	max := int32(r.h.pool.SlotCapacity())
	ack := r.In.Seq - int64(held)
	if ack == r.In.Ack && max == r.In.Max {
		return
	}
	r.In.Ack, r.In.Max = ack, max
	if err := r.Window(); err != nil {
		r.fail()
	}
}

// resetIn refuses the rest of the request. A RESET the ring refuses is
// only logged: the request is closed all the same.
func (r *request) resetIn() {
	if err := r.Reset(nil); err != nil {
		r.h.unsent(frame.FrameReset, r.InID(), err)
	}
}

// fail tears the request down after a protocol violation on one of its
// streams.
func (r *request) fail() {
	r.resetIn()
	r.abortReply()
	r.gone()
}

// gone handles the client leaving: its request aborted or its response
// reset. What goes on (an SSE response of a session, into replay) is the
// role's to say.
func (r *request) gone() {
	r.abortReply()
	r.resetIn()
	r.res.q.drop(r.h)
	r.role.gone()
}

// respondEarly answers what the headers decided.
func (r *request) respondEarly() {
	if r.hdr.bearer != bearerNone {
		r.challenge(r.hdr.early, r.hdr.bearer, nil, nil, nil)
		return
	}
	if r.hdr.earlyMsg != "" {
		r.transportError(r.hdr.early, r.hdr.earlyCode, r.hdr.earlyMsg)
		return
	}
	switch r.hdr.early {
	case 403:
		r.transportError(403, codeTransport, "Forbidden: Origin not allowed")
	case 405:
		r.methodNotAllowed()
	case 413:
		r.transportError(413, codeTransport, "Payload Too Large: the request body exceeds the limit")
	case 415:
		r.transportError(415, codeTransport, "Unsupported Media Type: Content-Type must be application/json")
	case 503:
		r.transportError(503, codeTransport, "Service Unavailable: no buffer for the request body")
	default:
		r.transportError(400, codeTransport, "Bad Request: malformed request")
	}
}

// methodNotAllowed answers 405 with the methods the endpoint takes.
func (r *request) methodNotAllowed() {
	switch {
	case r.hdr.ver == mcp.Version20260728:
		r.res.allow = "POST"
	case r.h.s.get:
		r.res.allow = "GET, POST, DELETE"
	default:
		r.res.allow = "POST, DELETE"
	}
	r.transportError(405, codeTransport, "Method Not Allowed")
}

// session finds the session a stateful request names, answering 400 when
// it names none and 404 when it is unknown or ended (MCP.md §1.3).
func (r *request) session() *session {
	h := r.h
	if r.hdr.flags&hasSessionID == 0 {
		r.res.id = nil
		r.transportError(400, codeTransport, "Bad Request: Mcp-Session-Id header is required")
		return nil
	}
	var s *session
	if r.hdr.sidLen > 0 {
		s = h.table.lookup(r.hdr.sid[:r.hdr.sidLen])
	}
	if s == nil || !r.owns(s) {
		r.res.id = nil
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
	ver := r.hdr.ver
	if ver == mcp.VersionNone || ver != mcp.VersionUnsupported && h.s.versions.has(ver) && ver != mcp.Version20260728 {
		return true
	}
	msg := append(h.msg[:0], "Bad Request: Unsupported protocol version: "...)
	msg = append(msg, r.hdr.verRaw[:r.hdr.verLen]...)
	msg = append(msg, " (supported versions: "...)
	msg = h.s.versions.appendList(msg, false, ", ")
	msg = append(msg, ')')
	r.res.id = nil
	r.transportErrorBytes(400, codeTransport, msg, nil)
	return false
}

// malformed reports whether a receive helper refused a frame that does
// not parse: one to drop, rather than a breach of flow control or frame
// order.
func malformed(err error) bool { return err != nil && errors.Is(err, engine.ErrMalformedFrame) }

// unsent logs a closing frame the ring refused: the direction is closed
// all the same, and nothing more can be sent on it.
func (h *server) unsent(t frame.FrameType, id int64, err error) {
	h.w.Logger().Warn("mcp server: frame not sent", "binding", h.cfg.Name, "frame", t, "stream", id, "err", err)
}
