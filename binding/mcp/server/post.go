package server

import (
	"bytes"
	"github.com/sluicehq/sluice/binding/mcp/jsonrpc"
	"strconv"

	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/engine"
)

// post is a POST (Zilla's McpServer, the request side of its
// McpRequestStream): its body, held in a buffer slot or streaming through
// it (stream.go), the JSON-RPC message in it, and what the message made
// of it: an application request (ex, app.go), a subscriptions/listen
// (ls, listen.go), an initialize or a server/discover waiting for the
// application's lifecycle reply (wait), or an answer of the server's own.
type post struct {
	request
	state postState
	wait  uint8

	// Headers only a POST reads (2026-07-28).
	mcpMethodLen int // -1: longer than any method
	mcpNameLen   int
	mcpMethod    [maxMethod]byte
	mcpName      [maxName]byte
	// params holds the Mcp-Param headers (params.go).
	params paramHeaders

	// The body: held in a slot, or streaming through it.
	inSlot int
	inLen  int
	st     streamState

	// id holds the message's id, which res.id then names.
	id [maxID]byte

	ex   *exchange
	ls   *listen
	shim *shim // the legacy shim serving the call, from its first input_required result
	// round is the input_required round a 2026-07-28 call continues
	// (rounds.go), 0 for a first call.
	round uint8
	// rtrk follows a streaming body's params for their requestState
	// (rounds.go); kept for the POST's next use.
	rtrk *jsonrpc.Tracker

	// cbBase is the request's scheme, authority and path without its query,
	// which the URL of the elicitation callback starts with (elicit.go).
	baseLen int // -1: too long to keep
	cbBase  [maxBase]byte

	// remote is the client's address, which an initialize counts its
	// session against (limits.sessionsPerAddress); remoteLen is 0 when
	// the request named none, or one too long to be an address.
	remoteLen int
	remote    [maxRemote]byte
}

// maxBase bounds the scheme, authority and path a POST keeps.
const maxBase = 1024

// maxRemote bounds the client address a POST keeps: an IPv6 address with
// a zone fits.
const maxRemote = 64

// postState is a POST's own state.
type postState uint8

const (
	streamBody   postState = 1 << iota // the body outgrew its slot and streams through it
	cacheable                          // a list or read, whose 2026-07-28 result carries ttlMs and cacheScope (SEP-2549)
	cancellable                        // in the session's requests, for notifications/cancelled
	badMcpName                         // the Mcp-Name header did not decode
	hasClients                         // its response carried client requests (s2c.go)
	shimmable                          // a session's tools/call, prompts/get or resources/read: the legacy shim may serve it (shim.go)
	roundCounted                       // a 2026-07-28 tools/call, prompts/get or resources/read: its input_required rounds are counted (rounds.go)
	listsTools                         // a tools/list, whose result's x-mcp-header declarations are learned (params.go)
)

// What a POST waits for besides its own streams.
const (
	waitNone      uint8 = iota
	waitLifecycle       // initialize: the app's lifecycle reply
	waitDiscover        // server/discover: the app's capabilities
)

// postRef names a POST for a session, a discovery or a lifecycle. A post
// struct is reused, so gen tells whether it is still the same one.
type postRef struct {
	p   *post
	gen uint32
}

func (p *post) ref() postRef { return postRef{p: p, gen: p.gen} }

// live reports whether ref still names the POST it named.
func (ref postRef) live() bool { return ref.p != nil && ref.p.gen == ref.gen }

// release releases the POST ref names, if it still does: what a
// reference's holder calls after acting on it.
func (ref postRef) release() {
	if ref.live() {
		ref.p.release()
	}
}

// setup makes a new POST serve as its request's role; it has no slot
// yet.
func (p *post) setup(h *server) {
	p.init(h, p)
	p.inSlot = -1
}

// setPostHeaders keeps the 2026-07-28 headers the body must match.
func (p *post) setPostHeaders(sc *headerScan) {
	p.baseLen = appendBase(p.cbBase[:0], sc)
	p.remoteLen = 0
	if p.h.s.addrs != nil && len(sc.remote) <= len(p.remote) {
		p.remoteLen = copy(p.remote[:], sc.remote)
	}
	if sc.flags&hasMcpMethod != 0 {
		p.mcpMethodLen = copy(p.mcpMethod[:], sc.mcpMethod)
		if len(sc.mcpMethod) > len(p.mcpMethod) {
			p.mcpMethodLen = -1
		}
	}
	if sc.flags&hasMcpName != 0 {
		d, ok := decodeHeaderValue(p.mcpName[:0], sc.mcpName)
		p.mcpNameLen = len(d)
		if !ok {
			p.state |= badMcpName
		}
	}
	if sc.flags&hasMcpParam != 0 {
		p.params.keep(sc.ext, p.h.httpTypeID)
	}
}

// ended handles the body's end: a streaming body's tail, or the complete
// request.
func (p *post) ended() {
	switch {
	case p.state&streamBody != 0:
		p.endStream()
	case p.ex != nil && p.hdr.early != 0:
		// A streaming body refused after its exchange opened
		// (streamFailed): the answer waited for the body's end.
		p.answered()
	case p.wait == waitNone && p.ls == nil && p.ex == nil && !p.answered():
		p.onRequest()
	}
}

// window follows the response's window: a reply that streams through
// takes what it leaves.
func (p *post) window() {
	if p.streaming() {
		p.ex.grantApp()
	}
}

// gone handles the client leaving. A disconnect is not a cancellation
// (MCP.md §1.1 rule 6): an SSE response of a session goes on into the
// session's replay buffer, to be resumed with Last-Event-ID; a JSON
// response has no such future, so its application stream is cancelled.
func (p *post) gone() {
	if p.ls != nil {
		p.ls.end() // the subscription ends with its stream
	}
	if x := p.ex; x != nil && !x.Closed() || p.shimWaiting() {
		if p.res.mode == modeSSE && p.sess != nil && p.flags&stateless == 0 {
			p.flags |= detached
			return
		}
		if x != nil && !x.Closed() {
			x.cancel()
		}
		p.shimEnd()
	}
	if p.wait == waitDiscover {
		p.wait = waitNone // the discovery answers no one for it
	}
	// An initialize waiting for the app stays waiting: the lifecycle
	// reply ends the session the client never learned.
}

// release returns the POST to the free list once it is done. Every frame
// handler and dispatched function ends with it.
func (p *post) release() {
	if !p.done() || p.wait != waitNone || p.ls != nil && p.ls.lc != nil || p.ex != nil && !p.ex.Closed() || p.shimWaiting() {
		return
	}
	p.shim = nil
	p.doneInflight()
	p.freeIn()
	p.releaseStream()
	if x := p.ex; x != nil {
		p.ex = nil
		x.recycle()
	}
	if l := p.ls; l != nil {
		p.ls = nil
		l.recycle()
	}
	p.state, p.mcpMethodLen, p.mcpNameLen = 0, 0, 0
	p.params.reset()
	p.recycle()
	p.h.posts = append(p.h.posts, p)
}

func (p *post) doneInflight() {
	if p.state&cancellable != 0 {
		p.sess.removeInflight(p, p.gen)
		p.state &^= cancellable
	}
	if p.state&hasClients != 0 {
		p.endClientRequests()
	}
}

// streaming reports whether the application's reply outgrew its slot and
// streams through.
func (p *post) streaming() bool { return p.ex != nil && p.ex.state&resultStreams != 0 }

// body collects the body in a buffer slot, streams it on once it
// outgrows the slot, or drops it when the request is already answered.
func (p *post) body(b []byte) {
	h := p.h
	p.bodyLen += int64(len(b))
	if p.bodyLen > h.s.maxBody && p.hdr.early == 0 && p.res.mode == modeNone {
		// Beyond limits.body, and no content-length said so (that one is
		// answered at the body's end): answered at once, the rest
		// refused.
		p.tooLarge()
		return
	}
	if p.state&streamBody != 0 {
		p.streamMore(b)
		return
	}
	if p.hdr.early != 0 || p.res.mode != modeNone || p.In.Closed() {
		p.grantBody()
		return
	}
	if p.inSlot < 0 {
		p.inSlot = h.pool.Acquire(p.InitialID())
		if p.inSlot == engine.NoSlot {
			p.hdr.early = 503
			p.grantBody()
			return
		}
	}
	buf := h.pool.Buffer(p.inSlot)
	if p.inLen+len(b) > len(buf) {
		p.fail() // beyond the window granted
		return
	}
	p.inLen += copy(buf[p.inLen:], b)
	if p.inLen == len(buf) && (p.hdr.contentLength < 0 || p.hdr.contentLength > int64(p.inLen)) {
		// The slot is full and more is coming: stream.
		p.startStream()
	}
}

// grantBody offers the request stream the room its slot has.
func (p *post) grantBody() { p.grantIn(p.inLen) }

func (p *post) freeIn() {
	if p.inSlot >= 0 {
		p.h.pool.Release(p.inSlot)
		p.inSlot, p.inLen = -1, 0
	}
}

func (p *post) bodyBytes() []byte {
	if p.inSlot < 0 {
		return nil
	}
	return p.h.pool.Buffer(p.inSlot)[:p.inLen]
}

// onRequest handles the complete request, unless its headers decided
// the answer.
func (p *post) onRequest() {
	if !p.hdr.flags.acceptable() {
		p.transportError(406, codeTransport, "Not Acceptable: Client must accept both application/json and text/event-stream")
		return
	}
	p.post(p.bodyBytes())
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
func (p *post) post(body []byte) {
	// MCP.md §1.5: -32700 for a body that is not JSON at all. The same
	// scan finds the top-level members.
	t := &p.h.body
	if t.Track(body) != nil {
		p.transportError(400, codeParseError, "Parse error: Invalid JSON")
		return
	}
	if k := t.Kind(); k != jsonrpc.KindObject {
		p.transportError(400, codeInvalidRequest, notObject(k))
		return
	}
	if dup := envelopeDup(t.Duplicates()); dup != "" {
		p.duplicate(codeInvalidRequest, dup)
		return
	}
	m := messageOf(t, body)
	// The server reads strings as encoding/json does, a lone surrogate as
	// U+FFFD; the params it forwards say so, for readers that would keep
	// it (JavaScript's). The id is echoed as it was spelled.
	replaceLoneSurrogates(m.params)
	if string(m.jsonrpc) != `"2.0"` {
		p.transportError(400, codeInvalidRequest, `Invalid Request: jsonrpc must be "2.0"`)
		return
	}
	if m.id != nil && !p.setID(m.id) {
		return
	}
	if m.method == nil && (m.id == nil || m.result == nil && m.err == nil) {
		p.res.id = nil
		p.transportError(400, codeInvalidRequest, "Invalid Request: not a request, notification or response")
		return
	}
	p.dispatch(&m, m.method != nil && m.id != nil)
}

// envelopeDup returns the name of the first JSON-RPC member in d, the
// members a message held twice, or "". A second resultType, which no
// request has, is left to the application.
func envelopeDup(d jsonrpc.Members) string {
	for m := jsonrpc.MemberJSONRPC; m <= jsonrpc.MemberError; m++ {
		if d.Has(m) {
			return m.String()
		}
	}
	return ""
}

// duplicate refuses a message that holds a member twice, which the
// application or an upstream could read otherwise than the server did:
// 400 -32600 for a member of the envelope, without the id (which one
// would it be), or -32602 for one of params.
func (p *post) duplicate(code int, member string) {
	h := p.h
	msg := append(h.msg[:0], "Invalid Request: duplicate member "...)
	if code == codeInvalidRequest {
		p.res.id = nil
		msg = jsonrpc.AppendString(msg, member)
		p.transportErrorBytes(400, code, msg, nil)
		return
	}
	msg = append(msg[:0], "Invalid params: duplicate member "...)
	msg = jsonrpc.AppendString(msg, member)
	status := 200
	if p.flags&stateless != 0 {
		status = 400
	}
	p.transportErrorBytes(status, code, msg, nil)
}

// paramsDup returns the first member that params, or a member of it the
// gateway reads, holds twice, or "". These are what the server and the
// kinds behind it read or route on (a tool's name, a resource's uri, a
// completion's ref, _meta's protocol version and progress token, a
// list's cursor, a call's arguments, a retry's requestState).
func paramsDup(params []byte) string {
	// One walk over params, which may be large, finds _meta and ref too.
	var vals [len(readParams)][]byte
	if d := dupMemberValues(params, vals[:], readParams[:]); d != "" {
		return d
	}
	meta, ref := vals[paramMeta], vals[paramRef]
	if isObject(meta) {
		if d := dupMember(meta, "progressToken", "io.modelcontextprotocol/protocolVersion", "io.modelcontextprotocol/clientCapabilities"); d != "" {
			return d
		}
	}
	if isObject(ref) {
		return dupMember(ref, "type", "name", "uri")
	}
	return ""
}

// readParams are the params members the server, or a kind behind it,
// reads; paramMeta and paramRef index two of them.
var readParams = [...]string{"name", "uri", "cursor", "_meta", "ref", "arguments", "requestState", "inputResponses"}

const (
	paramMeta = 3
	paramRef  = 4
)

// setID keeps a request's id, answering 400 when it is not one.
func (p *post) setID(id []byte) bool {
	if !validID(id) || len(id) > len(p.id) {
		p.res.id = nil
		p.transportError(400, codeInvalidRequest, "Invalid Request: the id must be a string or an integer")
		return false
	}
	p.res.id = p.id[:copy(p.id[:], id)]
	return true
}

// dispatch routes a JSON-RPC message by era, session and method. A body
// that streams (streamBody) has only the start of its params, and only
// requests that open an application stream can take one.
func (p *post) dispatch(m *message, request bool) {
	h := p.h
	var method []byte
	if m.method != nil {
		var ok bool
		if !isString(m.method) {
			p.res.id = nil
			p.transportError(400, codeInvalidRequest, "Invalid Request: method must be a string")
			return
		}
		if method, ok = unquote(h.name[:0], m.method); !ok {
			p.rpcError(codeMethodNotFound, "Method not found")
			return
		}
	}
	if p.state&streamBody != 0 && (!request || mcp.LookupMethod(method) == nil) {
		p.tooLarge()
		return
	}
	switch ver := p.hdr.ver; {
	case ver == mcp.Version20260728 && h.s.versions.has(mcp.Version20260728):
		p.flags |= stateless
		p.postStateless(m, method, request)
		return
	case ver == mcp.VersionUnsupported || ver != mcp.VersionNone && !h.s.versions.has(ver):
		if p.hdr.flags&hasSessionID == 0 {
			p.unsupportedVersion2026()
			return
		}
	}
	if request && string(method) == "initialize" {
		p.initialize(m.params)
		return
	}
	s := p.session()
	if s == nil {
		return
	}
	if !p.versionOK() {
		return
	}
	if !request {
		if m.method == nil {
			p.clientResponse(m)
			return
		}
		switch string(method) {
		case "notifications/cancelled":
			p.cancel(m.params)
		case "notifications/progress":
			p.legProgress(m.params)
		}
		// MCP.md §1.1 rule 3: notifications and responses get 202.
		p.respondEmpty(202)
		return
	}
	mi := mcp.LookupMethod(method)
	if string(method) == "ping" || string(method) == "logging/setLevel" && s.serverCaps&capLogging == 0 {
		// Both answered here: ping by the spec, and logging/setLevel when
		// the application takes no log levels (it sends no log messages,
		// so every level is accepted).
		p.respondResult(emptyObject)
		return
	}
	if mi == nil || mi.Need != 0 && s.serverCaps&uint16(mi.Need) == 0 {
		p.rpcError(codeMethodNotFound, "Method not found")
		return
	}
	p.openRequest(mi, m.params)
}

// unsupportedVersion2026 answers a request without a session whose
// MCP-Protocol-Version the server does not speak, the 2026-07-28 way
// (MCP.md §3.3: -32022 with the supported and requested versions).
func (p *post) unsupportedVersion2026() {
	h := p.h
	data := append(h.aux[:0], `{"supported":[`...)
	data = h.s.versions.appendList(data, true, ",")
	data = append(data, `],"requested":`...)
	data = jsonrpc.AppendString(data, p.hdr.verRaw[:p.hdr.verLen])
	data = append(data, '}')
	p.transportErrorBytes(400, codeUnsupportedVer, append(h.msg[:0], "Unsupported protocol version"...), data)
}

// openRequest checks a request's params and opens its application stream.
func (p *post) openRequest(mi *mcp.Method, params []byte) {
	h := p.h
	streamed, isStateless := p.state&streamBody != 0, p.flags&stateless != 0
	if params == nil {
		params = emptyObject
	} else if !isObject(params) {
		p.rpcError(codeInvalidParams, "Invalid params: params must be an object")
		return
	} else if dup := paramsDup(params); !isStateless && dup != "" {
		// A 2026-07-28 request's were checked before its _meta was read.
		p.duplicate(codeInvalidParams, dup)
		return
	}
	if s := p.sess; s != nil && h.s.maxInflight > 0 && len(s.inflight) >= h.s.maxInflight {
		// limits.inflight: the session's requests wait for none of it.
		msg := append(h.msg[:0], "Too many requests in flight: the session's limit is "...)
		msg = strconv.AppendInt(msg, int64(h.s.maxInflight), 10)
		p.transportErrorBytes(200, codeTransport, msg, nil)
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
		v, ok := field(params, key)
		switch {
		case !ok && streamed && !isStateless:
			// Not in the head of a streaming body: the application
			// takes the one in the params (a null name).
		case !ok || !isString(v):
			if streamed {
				p.tooLarge()
				return
			}
			p.rpcError(codeInvalidParams, msg)
			return
		default:
			if name, ok = unquote(h.name[:0], v); !ok {
				p.rpcError(codeInvalidParams, "Invalid params: name or uri too long")
				return
			}
			if isStateless && !p.nameHeaderOK(name) {
				return
			}
			if isStateless && mi.Kind == mcp.McpBeginExKindToolsCall && !p.paramHeadersOK(name, params) {
				return
			}
		}
	}
	if mi.List {
		// MCP.md §1.4: an invalid cursor gets -32602; one that is not
		// even a string is invalid whatever the app would make of it.
		if c, ok := field(params, "cursor"); ok && !isString(c) {
			p.rpcError(codeInvalidParams, "Invalid params: cursor must be a string")
			return
		}
	}
	if mi.Kind == mcp.McpBeginExKindToolsList {
		p.state |= listsTools
	}
	switch mi.Kind {
	case mcp.McpBeginExKindToolsList, mcp.McpBeginExKindPromptsList, mcp.McpBeginExKindResourcesList,
		mcp.McpBeginExKindResourcesTemplatesList, mcp.McpBeginExKindResourcesRead:
		p.state |= cacheable
	}
	if isStateless && shimmableKind(mi.Kind) {
		p.state |= roundCounted
		if !streamed {
			p.readRound(params)
		} else if !p.startRoundScan(params) {
			return
		}
	}
	var sid []byte
	if s := p.sess; s != nil {
		if !streamed && shimmableKind(mi.Kind) {
			p.state |= shimmable
		}
		sid = s.appID
		if p.st.flags&idPending == 0 {
			s.addInflight(fnv64(p.res.id), p.ref())
			p.state |= cancellable
		}
	}
	if !p.openApp(mi.Kind, sid, name, params) {
		p.rpcError(codeInternalError, "Internal error")
	}
}

var emptyObject = []byte("{}")

// postStateless handles a 2026-07-28 POST (MCP.md §3.4).
func (p *post) postStateless(m *message, method []byte, isRequest bool) {
	h := p.h
	if !isRequest {
		p.respondEmpty(202)
		return
	}
	if p.hdr.flags&hasMcpMethod == 0 || p.mcpMethodLen < 0 || string(p.mcpMethod[:p.mcpMethodLen]) != string(method) {
		msg := append(h.msg[:0], "Header mismatch: "...)
		if p.hdr.flags&hasMcpMethod == 0 {
			msg = append(msg, "the Mcp-Method header is required"...)
		} else {
			msg = append(msg, "Mcp-Method header value '"...)
			msg = append(msg, p.mcpMethod[:max(p.mcpMethodLen, 0)]...)
			msg = append(msg, "' does not match body value '"...)
			msg = append(msg, method...)
			msg = append(msg, '\'')
		}
		p.transportErrorBytes(400, codeHeaderMismatch, msg, nil)
		return
	}
	// server/discover and subscriptions/listen are requests like any
	// other: their _meta is checked first (MCP.md §3.4).
	discover, listen := string(method) == "server/discover", string(method) == "subscriptions/listen"
	mi := mcp.LookupMethod(method)
	if !discover && !listen && (mi == nil || !mi.V20260728 || mi.Need != 0 && h.disc.known && h.disc.bits&uint16(mi.Need) == 0) {
		p.rpcError(codeMethodNotFound, "Method not found")
		return
	}
	params := m.params
	var meta, pv []byte
	ok := isObject(params)
	if ok {
		if dup := paramsDup(params); dup != "" {
			p.duplicate(codeInvalidParams, dup)
			return
		}
		meta, ok = field(params, "_meta")
	}
	if ok {
		pv, ok = field(meta, "io.modelcontextprotocol/protocolVersion")
	}
	if !ok || !isString(pv) {
		if p.state&streamBody != 0 {
			p.tooLarge() // _meta may follow the head: it cannot be checked
			return
		}
		p.rpcError(codeInvalidParams, `Invalid params: _meta["io.modelcontextprotocol/protocolVersion"] is required`)
		return
	}
	caps, ok := field(meta, "io.modelcontextprotocol/clientCapabilities")
	if !ok {
		if p.state&streamBody != 0 {
			p.tooLarge()
			return
		}
		p.rpcError(codeInvalidParams, `Invalid params: _meta["io.modelcontextprotocol/clientCapabilities"] is required`)
		return
	}
	if string(pv) != `"2026-07-28"` {
		msg := append(h.msg[:0], "Header mismatch: MCP-Protocol-Version header value '2026-07-28' does not match body value "...)
		msg = append(msg, pv...)
		p.transportErrorBytes(400, codeHeaderMismatch, msg, nil)
		return
	}
	switch {
	case discover:
		p.discover()
		return
	case listen:
		p.listen(params, caps)
		return
	}
	p.openRequest(mi, params)
}

// nameHeaderOK checks Mcp-Name against the body's name or uri.
func (p *post) nameHeaderOK(name []byte) bool {
	if p.hdr.flags&hasMcpName != 0 && p.state&badMcpName == 0 && bytes.Equal(p.mcpName[:p.mcpNameLen], name) {
		return true
	}
	h := p.h
	msg := append(h.msg[:0], "Header mismatch: "...)
	if p.hdr.flags&hasMcpName == 0 {
		msg = append(msg, "the Mcp-Name header is required"...)
	} else {
		msg = append(msg, "Mcp-Name header value '"...)
		msg = append(msg, p.mcpName[:p.mcpNameLen]...)
		msg = append(msg, "' does not match body value '"...)
		msg = append(msg, name...)
		msg = append(msg, '\'')
	}
	p.transportErrorBytes(400, codeHeaderMismatch, msg, nil)
	return false
}

// cancel handles notifications/cancelled (MCP.md §1.4): the request it
// names is cancelled with no response.
func (p *post) cancel(params []byte) {
	h := p.h
	s := p.sess
	id, ok := field(params, "requestId")
	if !ok || !validID(id) || p.cancelClientRequest(id) {
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
		ref.p.cancelled(ref.gen, id)
		ref.release()
	}
	clear(h.refs)
}

// cancelled cancels the request if it is still the one named: ABORT its
// application request and RESET the reply (MCP.md §1.6: close the
// response rather than wait for the app), and end the response without
// a JSON-RPC answer.
func (p *post) cancelled(gen uint32, id []byte) {
	if p.gen != gen || !bytes.Equal(p.res.id, id) {
		return
	}
	switch {
	case p.ex != nil && !p.ex.Closed():
		p.ex.cancel()
		p.shimEnd()
	case p.shimWaiting():
		p.shimEnd() // the requests out to the client are cancelled too
	default:
		return
	}
	if p.replyOver() {
		return
	}
	switch p.res.mode {
	case modeNone:
		p.res.mode = modeSSE
		p.beginReply(200, "text/event-stream", -1, nil)
		p.endReply()
	case modeSSE:
		p.endReply()
	default:
		p.abortReply()
	}
}

// initialize creates a session (MCP.md §1.4): the lifecycle stream opens
// with the client's capabilities, and the response waits for the app's.
func (p *post) initialize(params []byte) {
	h := p.h
	if !isObject(params) {
		p.rpcError(codeInvalidParams, "Invalid params: params must be an object")
		return
	}
	if dup := dupMember(params, "protocolVersion", "capabilities"); dup != "" {
		p.duplicate(codeInvalidParams, dup)
		return
	}
	pv, ok := field(params, "protocolVersion")
	if !ok || !isString(pv) {
		p.rpcError(codeInvalidParams, "Invalid params: protocolVersion must be a string")
		return
	}
	if c, ok := field(params, "capabilities"); ok && !isObject(c) {
		// Read as none, a session would open with a client that meant
		// something else (MCP's schema has an object; Zilla refuses it).
		p.rpcError(codeInvalidParams, "Invalid params: capabilities must be an object")
		return
	}
	if max := h.s.maxSessions; max > 0 && h.s.live.Load() >= max {
		// limits.sessions: the binding holds as many as it may. The
		// initializes in flight are not counted, so it may pass the
		// limit by as many.
		p.transportError(503, codeTransport, "Service Unavailable: too many sessions")
		return
	}
	requested, _ := unquote(h.msg[:0], pv)
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
		p.transportErrorBytes(200, codeInvalidParams, append(h.msg[:0], "Unsupported protocol version"...), data)
		return
	}
	// limits.sessionsPerAddress: the session counts against its client's
	// address from here until it is unpublished, or fails to start.
	addr, ok := h.s.addrs.acquire(p.remote[:p.remoteLen])
	if !ok {
		p.transportError(503, codeTransport, "Service Unavailable: too many sessions from this address")
		return
	}
	caps, _ := field(params, "capabilities")
	s := &session{id: h.table.newID(), version: ver, clientCaps: clientCapabilities(caps), addr: addr, owner: p.identity()}
	s.callback = p.callbackURL(nil)
	s.init = p.ref()
	p.sess = s
	p.wait = waitLifecycle
	// The session's GET stream may want every list_changed notification.
	s.lc = h.openLifecycle(s, p, []byte(s.id), s.clientCaps, capListChanged, false)
	if s.lc == nil {
		p.wait = waitNone
		s.init = postRef{}
		h.s.addrs.release(s)
		p.rpcError(codeInternalError, "Internal error")
		return
	}
	// The application has inactivity.timeout to answer (onExpiry).
	h.armExpiry(s)
}

// discover answers server/discover (MCP.md §3.4, §3.5) from the
// capabilities the application gave a transient lifecycle stream,
// cached per worker.
func (p *post) discover() {
	h := p.h
	if h.disc.known {
		p.respondDiscover()
		return
	}
	p.wait = waitDiscover
	if n := len(h.disc.waiting); n >= 64 && n&(n-1) == 0 {
		// Requests whose clients left stay listed until the answer:
		// at each power of two they are dropped, so that the list
		// holds at most twice the requests still waiting.
		h.disc.waiting = keepWaiting(h.disc.waiting, waitDiscover)
	}
	h.disc.waiting = append(h.disc.waiting, p.ref())
	if h.disc.lc == nil {
		h.disc.lc = h.openLifecycle(nil, p, nil, 0, 0, false)
		if h.disc.lc == nil {
			h.answerDiscovery()
			return
		}
		if h.disc.timeFn == nil {
			h.disc.timeFn = h.onDiscoveryTimeout
		}
		h.disc.timer = h.w.TimerAt(h.w.Now().Add(h.s.inactivity), h.disc.timeFn)
	}
}

// keepWaiting drops from refs, in place, those that no longer name a POST
// waiting as wait.
func keepWaiting(refs []postRef, wait uint8) []postRef {
	kept := refs[:0]
	for _, ref := range refs {
		if ref.live() && ref.p.wait == wait {
			kept = append(kept, ref)
		}
	}
	clear(refs[len(kept):])
	return kept
}

func (p *post) respondDiscover() {
	h := p.h
	b := p.appendHead(h.scratch[:0], "result")
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
	p.respondJSON(200, b)
}
