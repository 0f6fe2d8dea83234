package client

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strconv"
	"time"

	"github.com/sluicehq/sluice/binding/internal/streams"
	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/binding/mcp/jsonrpc"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/frame"
	"github.com/sluicehq/sluice/internal/freelist"
)

// paramsWindow is the credit a request's params get at a time.
const paramsWindow = 32 << 10

// exchange is one MCP request stream: its params become one JSON-RPC
// request POSTed upstream, whose answer comes back on the reply. Exchanges
// are recycled per worker, with their buffers.
type exchange struct {
	h  *handler
	fn engine.MessageConsumer
	ds downstream
	sessionWait

	kind      uint8
	method    []byte // the JSON-RPC method
	sid       []byte // the session id; nil: none
	hasSID    bool
	name      []byte // the tool or prompt name or resource uri; nil: none
	hasName   bool
	pt        jsonrpc.Tracker
	params    []byte
	id        int64
	c         *call
	rd        bodyReader
	status    int
	sse       bool
	lastID    []byte
	resumes   int
	answer    []byte
	ansOff    int
	idx       int       // in the worker's in-flight list, -1 when not
	deadline  time.Time // when the request times out
	bearer    []byte    // the response's WWW-Authenticate
	errBody   []byte    // a JSON-RPC error that came with an HTTP error
	scratch   []byte
	state     uint16
	cancelled bool

	// A guarded client's request (options.authorization): auth is where
	// it stands with the guard (authNone…authPending); gen tells a stale
	// guard completion from one for this use of the exchange.
	auth         uint8
	gen          uint32
	elicitWait   int64  // the request's timeout in ms, how long an elicitation may take
	elicitID     []byte // the elicitation the guard asked for
	corrID       []byte
	credential   []byte // the POST's authorization header value; empty: none
	guardSession int64  // a session the guard opened for the request; 0: none
	// elicitRelayed: the upstream's URL elicitation elicitID went down as
	// a CHALLENGE and is not complete yet.
	elicitRelayed bool

	// pend is the upstream call a stateless 2026-07-28 request relays
	// across input_required rounds (reverse.go); nil: none.
	pend *pending
	// settling: the round ends shortly, once the upstream's requests
	// that come together are in.
	settling bool
	// stateChecked: the params' requestState was verified (or there is
	// none to verify).
	stateChecked bool

	// phdrs are a tools/call's Mcp-Param headers, their values in pbuf.
	phdrs []paramHdr
	pbuf  []byte
	// sentParams: the tools/call went with Mcp-Param headers.
	sentParams bool
}

const (
	xParamsDone    uint16 = 1 << iota
	xWaiting              // for an upstream (re-)initialize
	xSent                 // the request went upstream
	xAnswered             // the answer is in x.answer
	xFailed               // the answer is an error object
	xRetried              // re-initialized once already
	xOver                 // nothing more to do but release
	xFree                 // in the worker's free list
	xParamsFetched        // waited for a fetch of the tools' Mcp-Param declarations
)

func (h *handler) newExchange() *exchange {
	x := freelist.Pop(&h.freeX)
	if x == nil {
		x = &exchange{h: h}
		x.fn = x.onFrame
		x.resumeFn = x.resume
	}
	x.kind, x.hasSID, x.hasName = 0, false, false
	x.gen++
	x.auth, x.elicitWait, x.guardSession, x.elicitRelayed = authNone, 0, 0, false
	x.elicitID, x.corrID, x.credential = x.elicitID[:0], x.corrID[:0], x.credential[:0]
	x.method, x.sid, x.name = x.method[:0], x.sid[:0], x.name[:0]
	x.params, x.answer, x.lastID, x.bearer, x.errBody = x.params[:0], x.answer[:0], x.lastID[:0], x.bearer[:0], x.errBody[:0]
	x.pt.Reset()
	x.u, x.snap, x.failGen, x.id, x.c, x.pend, x.settling, x.stateChecked = nil, snapshot{}, 0, 0, nil, nil, false, false
	x.status, x.sse, x.resumes, x.ansOff, x.idx, x.state, x.cancelled = 0, false, 0, 0, -1, 0, false
	return x
}

// onFrame receives the downstream's request and the throttle frames of
// the reply to it. A request that breaks flow control is cancelled, both
// ways; a malformed frame is dropped, unless it closed its direction.
func (x *exchange) onFrame(t frame.FrameType, buf []byte) {
	switch t {
	case frame.FrameBegin:
		if b, err := x.ds.OnBegin(buf); err == nil {
			x.onBegin(b.Extension())
		}
	case frame.FrameData:
		if d, err := x.ds.OnData(buf); streams.Received(err, x.violated) {
			x.onData(d.Payload())
		}
	case frame.FrameFlush:
		if f, err := x.ds.OnFlush(buf); streams.Received(err, x.violated) && (x.auth == authPending || x.elicitRelayed) {
			x.onFlush(f.Extension())
		}
	case frame.FrameEnd:
		_, _ = x.ds.OnEnd(buf) // In closes either way
		switch {
		case x.auth == authPending && x.state&xOver == 0:
			x.abandoned()
		case x.state&(xParamsDone|xOver) == 0:
			x.complete()
		}
	case frame.FrameAbort:
		_, _ = x.ds.OnAbort(buf) // In closes either way
		x.cancel("downstream aborted the request")
		x.ds.doAbort()
	case frame.FrameWindow:
		_, err := x.ds.OnWindow(buf)
		switch {
		case err == nil:
			x.flushAnswer()
		case !errors.Is(err, engine.ErrMalformedFrame):
			x.cancel("protocol violation")
			x.ds.doAbort()
		}
	case frame.FrameReset:
		_, _ = x.ds.OnReset(buf) // Out closes either way
		x.cancel("downstream cancelled the request")
		x.ds.doReset(nil)
	}
	x.release()
}

// violated cancels a request that broke flow control or frame order, and
// closes it both ways: streams.Received's fail for its DATA and FLUSH.
func (x *exchange) violated() {
	x.cancel("protocol violation")
	x.ds.doClose()
}

func (x *exchange) onBegin(ext []byte) {
	h := x.h
	ex := &h.mcpEx
	if !ex.TryWrap(ext, 0, len(ext)) || ex.TypeID() != h.mcpTypeID {
		x.refuse(-32600, "Invalid request: not an MCP application stream")
		return
	}
	x.kind = ex.Kind()
	method := mcp.KindMethod(x.kind)
	if method == nil && x.kind != mcp.McpBeginExKindRequest {
		x.refuse(-32601, "Method not found")
		return
	}
	var r mcp.RequestBegin
	r.Read(ex)
	switch x.kind {
	case mcp.McpBeginExKindToolsCall, mcp.McpBeginExKindPromptsGet, mcp.McpBeginExKindResourcesRead:
		// The name or uri the Mcp-Name header carries.
		x.name, x.hasName = append(x.name, r.Ident...), !r.IdentNull
	case mcp.McpBeginExKindRequest:
		if r.IdentNull || len(r.Ident) == 0 {
			x.refuse(-32600, "Invalid request: no method")
			return
		}
		x.method = append(x.method, r.Ident...)
	}
	if method != nil {
		x.method = append(x.method, method.Name...)
	}
	if h.s.routes != nil {
		if ri := h.refusal(x.kind, r.Ident, r.IdentNull, x.ds.In.Auth); ri != nil {
			x.refuseWith(ri)
			return
		}
	}
	x.sid, x.hasSID = append(x.sid, r.SessionID...), !r.SessionIDNull
	x.elicitWait = r.Timeout
	// The reply opens at once, as the toolkit's does, so the reply's
	// credit is usually there by the time the answer is.
	if !x.ds.doBegin(ex, 0) {
		x.refuse(-32603, "Internal error")
		return
	}
	h.arm(x)
	if x.hasSID {
		h.sh.mu.Lock()
		x.u = h.sh.sessions[string(x.sid)]
		h.sh.mu.Unlock()
		if x.u == nil {
			x.ds.doWindow(paramsWindow)
			x.fail(-32603, "Upstream session not found")
			return
		}
	} else {
		x.u = h.nullUpstream()
	}
	// A guarded client grants the params' window once the guard decided:
	// an elicitation it asks for reaches the client first.
	if h.guard == nil || x.authorize() {
		x.ds.doWindow(paramsWindow)
	}
}

// refuse refuses a request before reading it, with McpResetEx.error.
func (x *exchange) refuse(code int32, msg string) {
	x.refuseWith(&resetInfo{code: code, message: msg})
}

// refuseWith refuses a request before reading it, with ri's McpResetEx.
func (x *exchange) refuseWith(ri *resetInfo) {
	x.state |= xOver
	x.ds.doReset(ri) // the reply, not begun, is given up with it
	x.cancelTimer()
}

func (x *exchange) onData(p []byte) {
	if x.state&(xParamsDone|xOver) == 0 {
		takeValue(x, &x.ds, &x.params, &x.pt, p, "Parse error: invalid params")
	}
}

// complete goes upstream once the params object closed (or the
// downstream ended).
func (x *exchange) complete() {
	x.state |= xParamsDone
	if len(bytes.TrimSpace(x.params)) == 0 {
		x.params = append(x.params[:0], '{', '}')
	} else if !x.pt.Done() || x.pt.Kind() != jsonrpc.KindObject {
		x.fail(-32602, "Invalid params: not a JSON object")
		return
	}
	if x.state&xOver == 0 && x.auth == authNone {
		x.start()
	}
}

// proceed sends the request once the upstream session is ready; waited
// says it waited for an initialize, whose failure fails it.
func (x *exchange) proceed(waited bool) {
	if x.await(x.h, x, waited) {
		x.state |= xWaiting
	}
}

// resume runs when an initialize the request waits for is over.
func (x *exchange) resume() {
	if x.state&xWaiting == 0 || x.state&xOver != 0 {
		return
	}
	x.state &^= xWaiting
	x.proceed(true)
	x.release()
}

// send POSTs the request: the envelope around the params, with the
// session's headers, or for 2026-07-28 the Mcp-Method and Mcp-Name
// headers and _meta spliced into the params.
func (x *exchange) send() {
	h := x.h
	if x.snap.stateless && x.u.key != "" {
		switch {
		case x.kind == mcp.McpBeginExKindRequest && string(x.method) == "logging/setLevel":
			x.setLogLevel()
			return
		case x.kind == mcp.McpBeginExKindResourcesSubscribe || x.kind == mcp.McpBeginExKindResourcesUnsubscribe:
			x.subscribe(x.kind == mcp.McpBeginExKindResourcesSubscribe)
			return
		}
	}
	if x.pend == nil && !x.stateChecked && x.reverseEligible() && x.resumeRound() {
		return
	}
	x.state |= xSent
	x.id = h.sh.ids.Add(1)
	x.rd.reset(false)
	x.lastID, x.status, x.sse = x.lastID[:0], 0, false
	c := h.newCall(x)
	b := append(c.body[:0], `{"jsonrpc":"2.0","id":`...)
	b = strconv.AppendInt(b, x.id, 10)
	b = append(b, `,"method":"`...)
	b = append(b, x.method...)
	b = append(b, `","params":`...)
	rh := reqHead{method: "POST", sessionID: x.snap.sessionID, version: x.snap.version}
	if len(x.credential) > 0 {
		rh.bearer = x.credential
	}
	if x.snap.stateless {
		rh.sessionID = ""
		rh.mcpMethod = x.method
		b = x.spliceMeta(b)
		if x.kind == mcp.McpBeginExKindToolsCall || x.kind == mcp.McpBeginExKindPromptsGet || x.kind == mcp.McpBeginExKindResourcesRead {
			rh.mcpName = x.mcpName()
		}
		if x.kind == mcp.McpBeginExKindToolsCall {
			rh.params = x.paramHeaders()
			x.sentParams = len(rh.params) > 0
		}
	} else if hasMetaKey(x.params) {
		// A stateless client's capabilities stay: the worker's own
		// session declared them all, and the upstream reads what this
		// call's client takes from them.
		b = rewriteMeta(b, x.params, false, !x.hasSID, 0, nil)
	} else {
		b = append(b, x.params...)
	}
	b = append(b, '}')
	c.body = b
	x.c = c
	if !c.open(&rh, x.ds.Out.Trace) {
		x.c = nil
		x.fail(-32603, "Upstream unreachable: cannot open a stream")
	}
}

// metaPrefix starts the _meta keys of 2026-07-28 (SEP-2575).
var metaPrefix = []byte(`"io.modelcontextprotocol/`)

// hasMetaKey reports whether params may hold a key that starts with
// metaPrefix. It looks for the prefix's '/' first, which IndexByte finds
// in a few instructions where Contains tries the whole prefix at every
// byte: most params hold no '/' at all.
func hasMetaKey(params []byte) bool {
	return bytes.IndexByte(params, '/') >= 0 && bytes.Contains(params, metaPrefix)
}

const metaClientCaps = "io.modelcontextprotocol/clientCapabilities"

// spliceMeta appends the params for a 2026-07-28 upstream: the client's
// own protocolVersion and clientInfo merged into their _meta (added when
// absent), in place of any the downstream sent, with the downstream's
// clientCapabilities when it sent them (a 2026-07-28 client's, which the
// upstream needs to choose what it may ask for in an input_required
// result, SEP-2322), else those of the session's CLIENT_* bits.
func (x *exchange) spliceMeta(b []byte) []byte {
	caps, level := x.u.metaOf()
	return rewriteMeta(b, x.params, true, false, caps, level)
}

// metaLogLevel is the _meta member of a 2026-07-28 request that asks for
// log messages at a level, as logging/setLevel asks a 2025 session.
const metaLogLevel = "io.modelcontextprotocol/logLevel"

// setLogLevel serves a 2025-era session's logging/setLevel toward a
// stateless upstream, which has no such method: the session keeps the
// level, every later request of it carries it as _meta's logLevel, and
// the client gets the empty result at once.
func (x *exchange) setLogLevel() {
	level := jsonrpc.Lookup(x.params, "level")
	if !validLogLevel(level) {
		x.fail(-32602, "Invalid params: level must be one of debug, info, notice, warning, error, critical, alert, emergency")
		return
	}
	u := x.u
	u.mu.Lock()
	u.logLevel = append(u.logLevel[:0], level...)
	u.mu.Unlock()
	x.answerWith(emptyResult, false)
}

var emptyResult = []byte("{}")

// maxResourceSubscriptions bounds the resources one session subscribes to
// through a stateless upstream's subscriptions/listen.
const maxResourceSubscriptions = 256

// subscribe serves a 2025-era session's resources/subscribe (or, when on
// is false, unsubscribe) toward a stateless upstream, which has neither:
// the session keeps its uris, and its subscriptions/listen stream is
// opened again asking for them (resourceSubscriptions), on the worker
// that owns it; notifications/resources/updated then come on that
// stream. The client gets the empty result at once.
func (x *exchange) subscribe(on bool) {
	uri := jsonrpc.Lookup(x.params, "uri")
	if len(uri) < 2 || uri[0] != '"' {
		x.fail(-32602, "Invalid params: uri must be a string")
		return
	}
	u := x.u
	u.mu.Lock()
	at := -1
	for i, s := range u.resSubs {
		if string(s) == string(uri) {
			at = i
			break
		}
	}
	changed := false
	switch {
	case on && at < 0 && len(u.resSubs) < maxResourceSubscriptions:
		u.resSubs = append(u.resSubs, append([]byte(nil), uri...))
		changed = true
	case on && at < 0:
		u.mu.Unlock()
		x.fail(-32603, "Too many resource subscriptions in this session")
		return
	case !on && at >= 0:
		u.resSubs = append(u.resSubs[:at], u.resSubs[at+1:]...)
		changed = true
	}
	owner := u.owner
	u.mu.Unlock()
	if changed && owner != nil {
		owner.w.Dispatch(func() {
			if l := u.lc; l != nil && !l.over {
				l.openListen(l.listenCaps())
			}
		})
	}
	x.answerWith(emptyResult, false)
}

// validLogLevel reports whether v is the JSON text of one of RFC 5424's
// severities, the levels MCP logging takes.
func validLogLevel(v []byte) bool {
	switch string(v) {
	case `"debug"`, `"info"`, `"notice"`, `"warning"`, `"error"`, `"critical"`, `"alert"`, `"emergency"`:
		return true
	}
	return false
}

// rewriteMeta appends params with the io.modelcontextprotocol/ members of
// their top-level _meta dropped (a 2026-07-28 downstream's, which a
// session's upstream would read as a version mismatch), and with the
// gateway's own first when add is set, level (a log level's JSON text, nil
// for none) among them. keepCaps keeps the downstream's
// clientCapabilities; with add and no level, the downstream's own logLevel
// stays.
func rewriteMeta(b, p []byte, add, keepCaps bool, caps uint16, level []byte) []byte {
	m := jsonrpc.Lookup(p, "_meta")
	if len(m) < 2 || m[0] != '{' {
		if !add {
			return append(b, p...)
		}
		i := bytes.IndexByte(p, '{') + 1
		b = append(b, p[:i]...)
		b = append(b, `"_meta":{`...)
		b = appendMetaMembers(b, caps)
		b = appendLogLevel(b, level)
		b = append(b, '}')
		if len(bytes.TrimSpace(p[i:len(p)-1])) > 0 {
			b = append(b, ',')
		}
		return append(b, p[i:]...)
	}
	at := len(p) - len(m)
	for at >= 0 && &p[at] != &m[0] {
		at--
	}
	b = append(b, p[:at+1]...)
	n := 0
	if add {
		if cc := jsonrpc.Lookup(m, metaClientCaps); len(cc) > 0 && cc[0] == '{' {
			b = append(b, `"io.modelcontextprotocol/protocolVersion":"2026-07-28","`...)
			b = append(b, metaClientCaps...)
			b = append(b, `":`...)
			b = append(b, cc...)
			b = append(b, `,"io.modelcontextprotocol/clientInfo":{"name":"sluice","version":"devel"}`...)
		} else {
			b = appendMetaMembers(b, caps)
		}
		b = appendLogLevel(b, level)
		n++
	}
	// Copy _meta's other members.
	for f, i, ok := jsonrpc.NextField(m, 0); ok; f, i, ok = jsonrpc.NextField(m, i) {
		if !bytes.HasPrefix(f.Key, metaPrefix) || keepCaps && jsonrpc.KeyIs(f.Key, metaClientCaps) ||
			add && level == nil && jsonrpc.KeyIs(f.Key, metaLogLevel) {
			if n > 0 {
				b = append(b, ',')
			}
			b = append(append(append(b, f.Key...), ':'), f.Value...)
			n++
		}
	}
	b = append(b, '}')
	return append(b, p[at+len(m):]...)
}

// metaOf returns what the gateway's _meta of a request on u carries: the
// client's capabilities, and the log level its session set (nil: none).
func (u *upstream) metaOf() (uint16, []byte) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.clientCaps, u.logLevel
}

// appendLogLevel appends the _meta member logLevel for level, a log
// level's JSON text, when there is one.
func appendLogLevel(b, level []byte) []byte {
	if level == nil {
		return b
	}
	b = append(b, `,"`+metaLogLevel+`":`...)
	return append(b, level...)
}

// mcpName returns the Mcp-Name header: the name or uri, plain when it
// is printable ASCII, else =?base64?…?=.
func (x *exchange) mcpName() []byte {
	name := x.name
	if !x.hasName {
		key := "name"
		if x.kind == mcp.McpBeginExKindResourcesRead {
			key = "uri"
		}
		v := jsonrpc.Lookup(x.params, key)
		if len(v) < 2 || v[0] != '"' {
			return nil
		}
		name = unquote(x.scratch[:0], v)
		x.scratch = append(x.scratch[:0], name...)
		name = x.scratch
	}
	for _, c := range name {
		if c < 0x20 || c > 0x7e {
			b := append(x.h.scratch[:0], "=?base64?"...)
			b = base64.StdEncoding.AppendEncode(b, name)
			b = append(b, "?="...)
			x.h.scratch = b
			return b
		}
	}
	return name
}

// paramHeaders returns the Mcp-Param headers of a tools/call to a
// 2026-07-28 upstream (SEP-2243): each argument its tool declares with
// x-mcp-header, as the upstream listed the tool through this binding,
// mirrored when the call has it. A tool never listed here gets none.
func (x *exchange) paramHeaders() []paramHdr {
	name := x.name
	if !x.hasName {
		v := jsonrpc.Lookup(x.params, "name")
		if len(v) < 2 || v[0] != '"' {
			return nil
		}
		var err error
		if name, err = jsonrpc.Unquote(nil, v); err != nil {
			return nil
		}
	}
	decls := x.h.sh.params.Lookup(name)
	if len(decls) == 0 {
		return nil
	}
	args := jsonrpc.Lookup(x.params, "arguments")
	var ends [mcp.MaxParamHeaders]int
	b := x.pbuf[:0]
	x.phdrs = x.phdrs[:0]
	for _, d := range decls {
		v := mcp.ArgumentAt(args, d.Path)
		if v == nil {
			continue
		}
		var ok bool
		if b, ok = mcp.AppendParamValue(b, v); ok {
			ends[len(x.phdrs)] = len(b)
			x.phdrs = append(x.phdrs, paramHdr{name: d.Header})
		}
	}
	x.pbuf = b
	start := 0
	for i := range x.phdrs {
		x.phdrs[i].value = b[start:ends[i]]
		start = ends[i]
	}
	return x.phdrs
}

func (x *exchange) onResponse(c *call, status int) {
	h := x.h
	x.status = status
	x.sse = h.resp.sse
	x.bearer = append(x.bearer[:0], h.resp.auth...)
	x.rd.reset(x.sse)
	switch {
	case status == 404 || status == 400 && x.snap.sessionID != "" && !x.snap.stateless:
		// spec 2025-11-25 §Session Management: a client that gets 404 MUST
		// start a new session; server-everything answers 400 (MCP.md §1.6).
		if x.state&xRetried == 0 {
			x.state |= xRetried
			x.c = nil
			c.abort()
			x.state &^= xSent
			x.state |= xWaiting
			x.failGen = x.u.reinit(h, x.snap.gen, x.resumeFn)
			return
		}
	case (status == 401 || status == 403) && isBearer(x.bearer):
		x.c = nil
		c.abort()
		x.onBearer(status)
		return
	}
}

// onBearer relays an upstream's bearer challenge: a RESET with
// McpResetEx.bearer while the downstream request is still open, else an
// error with the ERROR outcome.
func (x *exchange) onBearer(status int) {
	if !x.ds.In.Closed() {
		ri := bearerReset(status, x.bearer)
		x.state |= xOver
		x.cancelTimer()
		x.ds.doReset(&ri)
		x.ds.doAbort()
		return
	}
	x.fail(-32001, "Upstream authorization failed")
}

// isBearer reports whether a WWW-Authenticate value is a Bearer challenge.
func isBearer(auth []byte) bool { return bytes.HasPrefix(bytes.ToLower(auth), []byte("bearer")) }

// bearerReset is the McpResetEx.bearer that relays an upstream's Bearer
// challenge auth, sent with status 401 (invalid token) or 403
// (insufficient scope): its realm, scope and resource_metadata, and
// invalid_request when the challenge names it. Its byte slices alias auth.
func bearerReset(status int, auth []byte) resetInfo {
	ri := resetInfo{bearer: true, bErr: mcp.McpBearerErrorInvalidToken}
	if status == 403 {
		ri.bErr = mcp.McpBearerErrorInsufficientScope
	}
	ri.realm = authParam(auth, "realm")
	ri.scope = authParam(auth, "scope")
	ri.meta = authParam(auth, "resource_metadata")
	if e := authParam(auth, "error"); string(e) == "invalid_request" {
		ri.bErr = mcp.McpBearerErrorInvalidRequest
	}
	return ri
}

// authParam returns a WWW-Authenticate parameter's value, unquoted.
func authParam(v []byte, name string) []byte {
	for i := 0; i < len(v); {
		j := bytes.Index(v[i:], []byte(name+"="))
		if j < 0 {
			return nil
		}
		k := i + j
		i = k + len(name) + 1
		if k > 0 && v[k-1] != ' ' && v[k-1] != ',' {
			continue
		}
		rest := v[i:]
		if len(rest) > 0 && rest[0] == '"' {
			if e := bytes.IndexByte(rest[1:], '"'); e >= 0 {
				return rest[1 : 1+e]
			}
			return rest[1:]
		}
		if e := bytes.IndexAny(rest, ", "); e >= 0 {
			return rest[:e]
		}
		return rest
	}
	return nil
}

func (x *exchange) onBody(c *call, p []byte) {
	h := x.h
	for (len(p) > 0 || x.rd.held()) && x.c == c {
		n, msg, err := x.rd.next(p, c.bodyOver())
		p = p[n:]
		if x.sse {
			if id := x.rd.p.LastID(); len(id) > 0 {
				x.lastID = append(x.lastID[:0], id...)
			}
		}
		if err != nil {
			abortCall(&x.c)
			x.fail(-32603, "Upstream sent an invalid response")
			return
		}
		if msg == nil {
			return
		}
		m := &h.msg
		if x.rd.decode(&h.tracker, msg, m) != nil {
			if !x.sse {
				abortCall(&x.c)
				x.fail(-32603, "Upstream sent an invalid response")
				return
			}
			continue
		}
		x.onMessage(c, m)
		if pd := x.pend; pd != nil && c != nil && pd.c == c {
			// The call became pending: the rest of the chunk is its.
			pd.onBody(c, p)
			x.drain()
			return
		}
	}
}

func (x *exchange) onMessage(c *call, m *message) {
	h := x.h
	if m.method != nil {
		method := m.method[1 : len(m.method)-1]
		if x.reverseEligible() {
			switch {
			case m.id != nil && isClientRequest(method):
				x.extend()
				x.onInputRequest(c, m.id, method, m.params)
				return
			case string(method) == "notifications/elicitation/complete":
				// A stateless client has no stream to take it on.
				x.extend()
				return
			}
		}
		switch string(method) {
		case "elicitation/create":
			if x.relayURLElicitation(m.id, m.params) {
				return
			}
		case "notifications/elicitation/complete":
			if x.relayElicitationComplete(m.params) {
				x.extend()
				return
			}
		}
		if m.id != nil {
			x.relayRequest(m.id, method, m.params)
			return
		}
		// A notification on the request's stream is the upstream working
		// on it: the timeout counts from the last one, so a long job
		// that reports progress is not cut off.
		x.extend()
		if string(method) == "notifications/progress" {
			x.onProgress(m.params)
			return
		}
		x.ds.notify(method, m.params)
		return
	}
	if !m.isResponse() || !bytes.Equal(m.id, strconv.AppendInt(h.idBuf[:0], x.id, 10)) {
		return
	}
	if x.status >= 300 {
		// An HTTP error's JSON-RPC error: relayed at the close.
		if m.err != nil && m.err[0] == '{' {
			x.errBody = append(x.errBody[:0], m.err...)
		}
		return
	}
	x.c = nil
	if c != nil {
		c.finish()
	}
	if m.result != nil && (m.err != nil || m.result[0] != '{') || m.err != nil && m.err[0] != '{' {
		// A response has one of result and error, a JSON-RPC error is an
		// object and so is every MCP result: the server kind adds members
		// to a result and reads an error's code.
		x.fail(-32603, "Upstream sent an invalid response")
		return
	}
	if x.kind == mcp.McpBeginExKindToolsList && m.err == nil {
		h.sh.params.Learn(m.result)
	}
	if x.reverseEligible() && x.bridgeResult(m.result, m.err) {
		return
	}
	switch {
	case m.err != nil:
		x.answerWith(m.err, true)
	case x.kind == mcp.McpBeginExKindToolsList && h.s.annotate:
		x.answer = h.s.appendWithSchemes(x.answer[:0], m.result)
		x.answered(false)
	default:
		x.answerWith(m.result, false)
	}
}

// onProgress relays notifications/progress as FLUSH McpFlushEx.progress,
// with the token's JSON text intact.
func (x *exchange) onProgress(params []byte) {
	token := jsonrpc.Lookup(params, "progressToken")
	if len(token) == 0 {
		return
	}
	progress, _ := number(jsonrpc.Lookup(params, "progress"))
	total, ok := number(jsonrpc.Lookup(params, "total"))
	if !ok {
		total = -1
	}
	var msg []byte
	if v := jsonrpc.Lookup(params, "message"); len(v) >= 2 && v[0] == '"' {
		msg = unquote(x.scratch[:0], v)
		if len(msg) > 0 && &msg[0] != &v[1] {
			x.scratch = msg
		}
		msg = msg[:len(msg):len(msg)]
		if msg == nil {
			msg = []byte{}
		}
	}
	x.ds.doFlush(flushProgress, token, msg, progress, total)
}

func (x *exchange) onClose(c *call, failed bool) {
	if !ownedCall(&x.c, c) {
		return
	}
	if x.state&(xAnswered|xOver) != 0 {
		return
	}
	switch {
	case x.wantsParams():
		x.awaitParams()
	case x.status >= 300 && len(x.errBody) > 0:
		x.answerWith(x.errBody, true)
	case x.status >= 300:
		x.scratch = append(append(x.scratch[:0], "Upstream HTTP status "...), strconv.Itoa(x.status)...)
		x.failBytes(-32603, x.scratch)
	case x.sse && len(x.lastID) > 0 && x.resumes < 2 && !x.snap.stateless && x.snap.sessionID != "":
		// spec 2025-11-25 §Resumability: a POST stream cut before its
		// response resumes with GET and Last-Event-ID.
		x.resumes++
		x.resumeGet()
	case x.status == 0:
		x.fail(-32603, "Upstream connection failed")
	default:
		x.fail(-32603, "Upstream ended the response without an answer")
	}
	x.release()
}

func (x *exchange) resumeGet() {
	h := x.h
	x.rd.reset(true)
	x.status = 0
	c := h.newCall(x)
	x.c = c
	if !c.open(&reqHead{method: "GET", sessionID: x.snap.sessionID, version: x.snap.version, lastEventID: x.lastID}, x.ds.Out.Trace) {
		x.c = nil
		x.fail(-32603, "Upstream unreachable: cannot resume")
	}
}

func (x *exchange) onTimeout() {
	x.cancelTimer()
	if x.state&(xAnswered|xOver) != 0 {
		return
	}
	switch x.auth {
	case authPending:
		x.elicitOver() // the user did not come back in time
		x.release()
		return
	case authAcquiring:
		x.reject()
		x.release()
		return
	}
	x.notifyCancelled("timeout")
	x.state &^= xWaiting
	x.fail(-32603, "Upstream timeout")
	x.release()
}

// cancel stops a request the downstream gave up: the upstream is told
// with notifications/cancelled and the HTTP stream aborted; no answer is
// sent afterwards.
func (x *exchange) cancel(reason string) {
	if x.state&xOver != 0 {
		return
	}
	x.state |= xOver
	x.state &^= xWaiting
	x.cancelTimer()
	if x.state&xAnswered == 0 {
		x.notifyCancelled(reason)
	}
	x.unpend(reason)
	abortCall(&x.c)
}

func (x *exchange) notifyCancelled(reason string) {
	if x.state&xSent == 0 || x.c == nil {
		return
	}
	h := x.h
	b := appendCancelled(x.scratch[:0], x.id, reason)
	if x.snap.stateless {
		b = append(b, `,"_meta":`...)
		caps, _ := x.u.metaOf()
		b = appendMeta(b, caps)
	}
	b = append(b, `}}`...)
	x.scratch = b
	postMessage(h, &x.snap, b)
	abortCall(&x.c)
}

// appendCancelled appends notifications/cancelled for the upstream's
// request id to b, its params left open for a _meta.
func appendCancelled(b []byte, id int64, reason string) []byte {
	b = append(b, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":`...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, `,"reason":`...)
	return jsonrpc.AppendString(b, reason)
}

// extend moves an armed request's deadline to a whole timeout from now.
func (x *exchange) extend() {
	if x.idx >= 0 {
		x.deadline = x.h.w.Now().Add(x.h.s.timeout)
	}
}

func (x *exchange) cancelTimer() {
	if x.idx >= 0 {
		x.h.disarm(x)
	}
}

// arm puts x on the worker's in-flight list with its deadline. One
// sweep timer serves the list: a timer per request would allocate.
func (h *handler) arm(x *exchange) {
	now := h.w.Now()
	x.deadline = now.Add(h.s.timeout)
	x.idx = len(h.inflight)
	h.inflight = append(h.inflight, x)
	if h.sweepTimer == 0 {
		h.sweepTimer = h.w.TimerAt(now.Add(h.sweepEvery()), h.sweepFn)
	}
}

func (h *handler) disarm(x *exchange) {
	i, last := x.idx, len(h.inflight)-1
	h.inflight[i] = h.inflight[last]
	h.inflight[i].idx = i
	h.inflight[last] = nil
	h.inflight = h.inflight[:last]
	x.idx = -1
}

// sweepEvery is the resolution of request timeouts.
func (h *handler) sweepEvery() time.Duration {
	return min(max(h.s.timeout/20, 10*time.Millisecond), 250*time.Millisecond)
}

// sweep times out the requests past their deadline.
func (h *handler) sweep() {
	h.sweepTimer = 0
	now := h.w.Now()
	for i := len(h.inflight) - 1; i >= 0; i-- {
		if i < len(h.inflight) && !now.Before(h.inflight[i].deadline) {
			h.inflight[i].onTimeout()
		}
	}
	if len(h.inflight) > 0 {
		h.sweepTimer = h.w.TimerAt(now.Add(h.sweepEvery()), h.sweepFn)
	}
}

// fail answers with a JSON-RPC error {code, message} and the ERROR
// outcome.
func (x *exchange) fail(code int32, msg string) {
	x.answer = jsonrpc.AppendError(x.answer[:0], int64(code), msg)
	x.answered(true)
}

// failBytes is fail with a message the exchange assembled in a buffer.
func (x *exchange) failBytes(code int32, msg []byte) {
	x.answer = jsonrpc.AppendError(x.answer[:0], int64(code), msg)
	x.answered(true)
}

// answerWith answers with p, a result or an error object.
func (x *exchange) answerWith(p []byte, failed bool) {
	x.answer = append(x.answer[:0], p...)
	x.answered(failed)
}

func (x *exchange) answered(failed bool) {
	if x.state&(xAnswered|xOver) != 0 {
		return
	}
	x.state |= xAnswered
	if failed {
		x.state |= xFailed
	}
	x.cancelTimer()
	abortCall(&x.c)
	x.unpend("the call ended")
	x.ansOff = 0
	x.flushAnswer()
}

// flushAnswer sends what the reply's credit allows of the answer, then
// END.
func (x *exchange) flushAnswer() {
	if x.state&xAnswered == 0 || x.state&xOver != 0 || x.ds.Out.Closed() {
		return
	}
	rest, ok := x.ds.doData(x.answer[x.ansOff:], true)
	if !ok {
		x.state |= xOver
		x.ds.doAbort()
		return
	}
	x.ansOff = len(x.answer) - len(rest)
	if len(rest) == 0 {
		x.state |= xOver
		x.ds.doEnd(x.state&xFailed != 0)
		if !x.ds.In.Closed() && x.state&xParamsDone == 0 {
			// An answer before all the params: the rest is not wanted.
			x.ds.doReset(nil)
		}
		x.release()
	}
}

// release recycles the exchange once both directions are over and no
// call, timer or initialize holds it.
func (x *exchange) release() {
	if !x.ds.Closed() || x.c != nil || x.idx >= 0 || x.state&xWaiting != 0 || x.h == nil {
		return
	}
	if x.state&xFree != 0 {
		return
	}
	if x.guardSession != 0 {
		x.h.guard.Deauthorize(x.guardSession)
		x.guardSession = 0
	}
	x.auth = authNone
	x.state |= xOver | xFree
	x.h.freeX = append(x.h.freeX, x)
}

// clientRequestWait is how long a request waits, at least, once its
// upstream asked the client something (elicitation, sampling, roots): a
// person may be answering. It is the server kind's longest default, that
// of an elicitation; the server kind answers the upstream when its own
// timeout runs out, and the upstream then answers the request.
const clientRequestWait = 10 * time.Minute

// relayRequest relays a request the upstream sent its client on the
// request's event stream: FLUSH McpClientRequestFlushEx on the reply, in
// parts when its params do not fit a frame. When the reply is gone, or
// the request cannot travel, the upstream is answered at once with an
// error, rather than left waiting.
func (x *exchange) relayRequest(id, method, params []byte) {
	if x.snap.stateless || !x.hasSID {
		// 2026-07-28 asks the client through input_required results, not
		// requests on the stream, and a request without a session has no
		// client to answer one: it is refused, with no wait for an answer
		// that cannot come.
		postError(x.h, &x.snap, id, -32601, "Method not found")
		return
	}
	if x.state&(xAnswered|xOver) != 0 || !x.ds.sendParts(flushClientRequest, id, method, params) {
		postError(x.h, &x.snap, id, -32603, undelivered(params))
		return
	}
	if x.idx >= 0 {
		x.deadline = x.h.w.Now().Add(max(x.h.s.timeout, clientRequestWait))
	}
}

// undelivered is why a request with params could not reach the client.
func undelivered(params []byte) string {
	if len(params) > mcp.MaxNotification {
		return "Request too large to relay to the client"
	}
	return "No stream open to the client"
}

// postError answers a request the upstream sent its client with the
// JSON-RPC error {code, message}.
// refuseRequest answers a request the upstream sent on the GET stream of
// a session no one client owns: a ping, which asks only whether the
// client is there, with an empty result (the gateway is, and go-sdk's
// KeepAlive closes a session whose ping fails), anything else with the
// error {code, msg}. A request on a call's stream is never answered with
// a result the client did not give (postError).
func refuseRequest(h *handler, s *snapshot, id, method []byte, code int32, msg string) {
	if string(method) != "ping" {
		postError(h, s, id, code, msg)
		return
	}
	b := append(h.scratch[:0], `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"result":{}}`...)
	h.scratch = b
	postMessage(h, s, b)
}

func postError(h *handler, s *snapshot, id []byte, code int32, msg string) {
	b := append(h.scratch[:0], `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"error":{"code":`...)
	b = strconv.AppendInt(b, int64(code), 10)
	b = append(b, `,"message":`...)
	b = strconv.AppendQuote(b, msg)
	b = append(b, `}}`...)
	h.scratch = b
	postMessage(h, s, b)
}
