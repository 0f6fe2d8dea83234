package server

import (
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"strconv"

	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/binding/mcp/jsonrpc"
)

// The legacy shim (doc.go's "The legacy shim"): a 2025-era client cannot
// use an input_required result, so when the application answers a session's
// tools/call, prompts/get or resources/read with one, the server fulfils it
// itself. Each of its inputRequests becomes a real request to the client
// (s2c.go's machinery, under an id "s2c-<n>") on the call's own response;
// once every one is answered, the call is made again on a new application
// stream, its params the client's plus inputResponses (the answers by key)
// and the upstream's requestState byte for byte. Its reply is read the same
// way, round after round, until a final result reaches the client under
// the call's own id.
//
// Nothing of this exists for a call whose result is complete: the shim's
// state is made at its first input_required result. A call the shim may
// serve keeps its body's slot until its reply ends, since a retry repeats
// the params.

// shim is the legacy shim's state for one call.
type shim struct {
	mi      *mcp.Method
	orig    []byte // the call's params as the client sent them
	rounds  int
	state   []byte // the round's requestState, its JSON text as the upstream sent it; nil: none
	legs    []shimLeg
	waiting int    // legs not answered yet
	params  []byte // a retry's params
}

// shimLeg is one of a round's inputRequests.
type shimLeg struct {
	key    []byte // its key, as JSON text
	method string
	req    []byte // the input request, as JSON text
	answer []byte // the client's result, as JSON text
}

// shimmableKind reports whether a request of kind may end in input_required:
// tools/call, prompts/get and resources/read.
func shimmableKind(kind uint8) bool {
	switch kind {
	case mcp.McpBeginExKindToolsCall, mcp.McpBeginExKindPromptsGet, mcp.McpBeginExKindResourcesRead:
		return true
	}
	return false
}

// isInputRequired reports whether a result's resultType (its JSON text,
// nil when it has none) is "input_required".
func isInputRequired(typ []byte) bool {
	return typ != nil && jsonrpc.KeyIs(typ, "input_required")
}

// inputRequired takes over a call whose application answered res, an
// input_required result: it starts the shim's next round. The exchange is
// done with; res lives in its slot.
func (x *exchange) inputRequired(res []byte) {
	p := x.p
	h := p.h
	sh := p.shim
	if sh == nil {
		sh = &shim{}
		if !sh.start(p) {
			x.freeRes()
			p.appError(codeInternalError, "Internal error: the call's params are gone")
			return
		}
		p.shim = sh
	}
	p.freeIn()
	reqs, state, twice := inputRequiredParts(res)
	sh.rounds++
	bad := ""
	switch {
	case twice:
		bad = "it names inputRequests or requestState twice"
	case reqs != nil && !isObject(reqs):
		bad = "inputRequests is not an object"
	case state != nil && !isString(state):
		bad = "requestState is not a string"
	case state == nil && (reqs == nil || emptyObjectJSON(reqs)):
		bad = "it has neither inputRequests nor requestState"
	}
	sh.state = append(sh.state[:0], state...)
	sh.legs = sh.legs[:0]
	if bad == "" && reqs != nil {
		bad = sh.parseLegs(reqs)
	}
	x.freeRes()
	p.ex = nil
	x.recycle()
	if bad != "" {
		p.shimEnd()
		p.appError(codeInternalError, "Internal error: the upstream's input_required result is malformed: "+bad)
		return
	}
	if sh.rounds > h.s.maxRounds {
		p.shimFail(codeInternalError, roundsExceeded(h.s.maxRounds))
		return
	}
	p.trackInflight()
	if len(sh.legs) == 0 {
		// requestState alone: the upstream shed load; it is asked again
		// at once.
		p.shimRetry()
		return
	}
	p.shimAsk()
}

// inputRequiredParts returns the inputRequests and requestState members
// of an input_required result, nil for one absent or null, the last of
// two as encoding/json reads them; twice reports either named twice.
func inputRequiredParts(res []byte) (reqs, state []byte, twice bool) {
	for f, j, ok := jsonrpc.NextField(res, 0); ok; f, j, ok = jsonrpc.NextField(res, j) {
		switch {
		case jsonrpc.KeyIs(f.Key, "inputRequests"):
			twice = twice || reqs != nil
			reqs = f.Value
		case jsonrpc.KeyIs(f.Key, "requestState"):
			twice = twice || state != nil
			state = f.Value
		}
	}
	if string(reqs) == "null" {
		reqs = nil
	}
	if string(state) == "null" {
		state = nil
	}
	return reqs, state, twice
}

// roundsExceeded is the error of a call past inputRequired.maxRounds
// (max) input_required results, the shim's and a 2026-07-28 call's alike.
func roundsExceeded(max int) string {
	return "input_required rounds exceeded: the upstream asked for input more than " +
		strconv.Itoa(max) + " times in one call (inputRequired.maxRounds)"
}

// emptyObjectJSON reports whether obj, an object, has no members.
func emptyObjectJSON(obj []byte) bool {
	_, _, ok := jsonrpc.NextField(obj, 0)
	return !ok
}

// start takes the call's params and method from the POST's body, which the
// server kept for this.
func (sh *shim) start(p *post) bool {
	h := p.h
	body := p.bodyBytes()
	if body == nil || h.body.Track(body) != nil {
		return false
	}
	m := messageOf(&h.body, body)
	method, ok := unquote(h.name[:0], m.method)
	if !ok {
		return false
	}
	sh.mi = mcp.LookupMethod(method)
	if sh.mi == nil {
		return false
	}
	params := m.params
	if params == nil {
		params = emptyObject
	}
	sh.orig = append(sh.orig[:0], params...)
	return true
}

// parseLegs reads a round's inputRequests into its legs, or says what is
// wrong with them.
func (sh *shim) parseLegs(reqs []byte) string {
	for f, j, ok := jsonrpc.NextField(reqs, 0); ok; f, j, ok = jsonrpc.NextField(reqs, j) {
		if !isObject(f.Value) {
			return "an input request is not an object"
		}
		m, ok := field(f.Value, "method")
		if !ok || !isString(m) {
			return "an input request has no method"
		}
		var method string
		switch {
		case jsonrpc.KeyIs(m, "elicitation/create"):
			method = "elicitation/create"
		case jsonrpc.KeyIs(m, "sampling/createMessage"):
			method = "sampling/createMessage"
		case jsonrpc.KeyIs(m, "roots/list"):
			method = "roots/list"
		default:
			return "an input request's method is none of elicitation/create, sampling/createMessage and roots/list"
		}
		if params, ok := field(f.Value, "params"); ok && !isObject(params) && string(params) != "null" {
			return "an input request's params are not an object"
		}
		if _, ok := mcp.ClientRequestNeed([]byte(method), legParams(f.Value)); !ok {
			return "an input request's params name no one mode"
		}
		for i := range sh.legs {
			if sameKey(sh.legs[i].key, f.Key) {
				return "an input request's key is given twice"
			}
		}
		sh.legs = append(sh.legs, shimLeg{key: append([]byte(nil), f.Key...), method: method, req: append([]byte(nil), f.Value...)})
	}
	return ""
}

// shimAsk sends the client each of the round's requests, once it is known
// that the client can take them all.
func (p *post) shimAsk() {
	h := p.h
	s := p.sess
	sh := p.shim
	for i := range sh.legs {
		kind, _ := lookupClientKind([]byte(sh.legs[i].method))
		params := legParams(sh.legs[i].req)
		if takes, _ := s.takes([]byte(sh.legs[i].method), params); !takes {
			if data := urlRequiredData(kind, params); data != nil {
				// The 2025-era way to ask for a URL elicitation of a client
				// that does not take it as a request (seed 001).
				p.shimEnd()
				p.urlRequired(data)
				return
			}
			p.shimFail(codeInternalError, "The upstream needs the client's "+families[kind]+
				" capability for "+sh.legs[i].method+", which the client did not declare")
			return
		}
	}
	t := s.clients
	if t == nil {
		t = &clientRequests{}
		s.clients = t
	}
	if len(t.pending)+len(sh.legs) > maxClientRequests {
		p.shimFail(codeInternalError, "Internal error: too many requests outstanding")
		return
	}
	p.startSSE()
	sh.waiting = len(sh.legs)
	for i := range sh.legs {
		leg := &sh.legs[i]
		kind, _ := lookupClientKind([]byte(leg.method))
		params, _ := field(leg.req, "params")
		r := t.add(h, s)
		r.kind, r.start, r.origin, r.sh, r.leg = kind, h.w.Now(), p.ref(), sh, i
		p.state |= hasClients
		msg := append(h.clientMsg[:0], `{"jsonrpc":"2.0","id":`...)
		msg = r.appendID(msg)
		msg = append(msg, `,"method":"`...)
		msg = append(msg, leg.method...)
		msg = append(msg, `","params":`...)
		at := len(msg)
		msg = appendLegParams(msg, kind, params, r)
		blankNewlines(msg[at:])
		msg = append(msg, '}')
		h.clientMsg = msg
		h.toClient(r, msg, true)
		r.timerID = h.w.TimerAt(r.start.Add(h.s.roundTimeout), r.timerFn)
		if m := h.clientMetrics(kind); m != nil {
			m.requests.Inc()
		}
		h.logClient(slog.LevelDebug, "delivered", s, r.appendID(h.aux[:0]), leg.method, "shim_key", string(leg.key))
	}
}

// legParams returns the params of an input request, nil when it has none
// or null.
func legParams(req []byte) []byte {
	params, _ := field(req, "params")
	if string(params) == "null" {
		return nil
	}
	return params
}

// sameKey reports whether two raw JSON object keys decode to the same
// name.
func sameKey(a, b []byte) bool {
	name, err := jsonrpc.Unquote(nil, a)
	return err == nil && jsonrpc.KeyIs(b, string(name))
}

// urlRequiredData returns the -32042 error data for a URL-mode
// elicitation's params ({"elicitations":[{"mode":"url",…}]}, with an
// elicitationId made for it when it has none), nil for any other request.
func urlRequiredData(kind clientKind, params []byte) []byte {
	if !isURLMode(kind, params) {
		return nil
	}
	data := append([]byte(nil), `{"elicitations":[`...)
	data = appendLegParams(data, kind, params, nil)
	return append(data, "]}"...)
}

// isURLMode reports whether a request of kind with params is a URL-mode
// elicitation.
func isURLMode(kind clientKind, params []byte) bool {
	if kind != clientElicitation {
		return false
	}
	mode, ok := field(params, "mode")
	return ok && jsonrpc.KeyIs(mode, "url")
}

// appendLegParams appends an input request's params (nil or null: none),
// giving a URL-mode elicitation the elicitationId the 2025-11-25 wire
// requires when the upstream gave none. For a leg r (nil: the params go in
// an error's data, not in a request) _meta.progressToken is r's own id,
// replacing any the upstream wrote, so that the client's progress on the
// leg names it (seed 004: progress from the client resets the leg's
// timeout).
func appendLegParams(dst []byte, kind clientKind, params []byte, r *clientRequest) []byte {
	if string(params) == "null" {
		params = nil
	}
	dst = append(dst, '{')
	if isURLMode(kind, params) {
		if _, ok := field(params, "elicitationId"); !ok {
			var id [16]byte
			rand.Read(id[:])
			dst = append(dst, `"elicitationId":"`...)
			dst = hex.AppendEncode(dst, id[:])
			dst = append(dst, '"')
		}
	}
	for f, j, ok := jsonrpc.NextField(params, 0); ok; f, j, ok = jsonrpc.NextField(params, j) {
		if r != nil && jsonrpc.KeyIs(f.Key, "_meta") {
			continue
		}
		dst = appendMember(dst, f)
	}
	if r != nil {
		dst = appendMemberSep(dst)
		dst = append(dst, `"_meta":{"progressToken":`...)
		dst = r.appendID(dst)
		if meta, ok := field(params, "_meta"); ok && isObject(meta) {
			for f, j, ok := jsonrpc.NextField(meta, 0); ok; f, j, ok = jsonrpc.NextField(meta, j) {
				if jsonrpc.KeyIs(f.Key, "progressToken") {
					continue
				}
				dst = appendMember(dst, f)
			}
		}
		dst = append(dst, '}')
	}
	return append(dst, '}')
}

// legProgress handles the client's notifications/progress: progress on a
// request of the shim (its progressToken is the request's id) restarts
// that request's inputRequired.roundTimeout, as seed 004's legs reset
// their timeout on progress. Progress naming anything else is ignored.
func (p *post) legProgress(params []byte) {
	tok, ok := field(params, "progressToken")
	if !ok {
		return
	}
	r := p.sess.clients.find(tok)
	if r == nil || r.sh == nil {
		return
	}
	h := p.h
	h.w.Disarm(&r.timerID)
	r.timerID = h.w.TimerAt(h.w.Now().Add(h.s.roundTimeout), r.timerFn)
}

// shimAnswer takes the client's answer to leg i of the round: its result,
// or an error, which fails the call. The last answer makes the retry.
func (p *post) shimAnswer(i int, isErr bool, data []byte) {
	sh := p.shim
	if sh == nil || i >= len(sh.legs) || sh.waiting == 0 {
		return
	}
	leg := &sh.legs[i]
	if isErr {
		msg := "The client answered " + leg.method + " with an error"
		if m, ok := field(data, "message"); ok {
			if u, ok := unquote(p.h.msg[:0], m); ok {
				msg += ": " + string(u)
			}
		}
		p.shimFail(codeInternalError, msg)
		return
	}
	leg.answer = append(leg.answer[:0], data...)
	sh.waiting--
	if sh.waiting == 0 {
		p.shimRetry()
	}
}

// shimRetry makes the call again: the client's params without any
// inputResponses or requestState of their own, then the round's.
func (p *post) shimRetry() {
	h := p.h
	sh := p.shim
	b := append(sh.params[:0], '{')
	for f, j, ok := jsonrpc.NextField(sh.orig, 0); ok; f, j, ok = jsonrpc.NextField(sh.orig, j) {
		if jsonrpc.KeyIs(f.Key, "inputResponses") || jsonrpc.KeyIs(f.Key, "requestState") {
			continue
		}
		b = appendMember(b, f)
	}
	if len(sh.legs) > 0 {
		b = appendMemberSep(b)
		b = append(b, `"inputResponses":{`...)
		for i, leg := range sh.legs {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, leg.key...)
			b = append(b, ':')
			b = append(b, leg.answer...)
		}
		b = append(b, '}')
	}
	if len(sh.state) > 0 {
		b = appendMemberSep(b)
		b = append(b, `"requestState":`...)
		b = append(b, sh.state...)
	}
	sh.params = append(b, '}')
	var name []byte
	switch sh.mi.Param {
	case mcp.ParamName, mcp.ParamURI:
		key := "name"
		if sh.mi.Param == mcp.ParamURI {
			key = "uri"
		}
		v, _ := field(sh.orig, key)
		name, _ = unquote(h.name[:0], v)
	}
	var sid []byte
	if s := p.sess; s != nil {
		sid = s.appID
	}
	if !p.openApp(sh.mi.Kind, sid, name, sh.params) {
		p.shimFail(codeInternalError, "Internal error")
	}
}

// trackInflight makes the call one the client's notifications/cancelled
// can name again while the shim serves it.
func (p *post) trackInflight() {
	if s := p.sess; s != nil && p.state&cancellable == 0 {
		s.addInflight(fnv64(p.res.id), p.ref())
		p.state |= cancellable
	}
}

// shimFail ends the call the shim serves with an error: a tools/call gets
// a tool result with isError (the model reads why), prompts/get and
// resources/read a JSON-RPC error. Requests still out to the client are
// cancelled.
func (p *post) shimFail(code int, msg string) {
	h := p.h
	isTool := p.shim != nil && p.shim.mi.Kind == mcp.McpBeginExKindToolsCall
	h.w.Logger().Info("mcp legacy shim: call failed", "binding", h.cfg.Name, "reason", msg)
	p.shimEnd()
	if !isTool {
		p.appError(code, msg)
		return
	}
	res := append(h.aux[:0], `{"content":[{"type":"text","text":`...)
	res = jsonrpc.AppendString(res, msg)
	res = append(res, `}],"isError":true}`...)
	h.aux = res
	p.doneInflight()
	if p.replyOver() && p.flags&detached == 0 {
		return
	}
	if p.res.mode == modeNone {
		p.respondResult(res)
		return
	}
	b := p.appendEventHead(h.scratch[:0])
	b = p.appendHead(b, "result")
	b = append(b, res...)
	b = append(b, "}\n\n"...)
	if p.answerEvent(b) && p.flags&detached == 0 {
		p.endReply()
	}
}

// shimEnd forgets the shim's state; requests it has out to the client are
// cancelled.
func (p *post) shimEnd() {
	if p.shim == nil {
		return
	}
	p.shim.waiting = 0
	p.doneInflight()
	p.shim = nil
}

// shimWaiting reports whether the shim waits for the client's answers.
func (p *post) shimWaiting() bool { return p.shim != nil && p.shim.waiting > 0 }

// shimLegOver handles a request of the shim the client will not answer:
// it timed out, the client cancelled it, or the session ended. The call
// fails.
func (h *server) shimLegOver(r *clientRequest, code int, msg string) {
	ref := r.origin
	r.s.clients.cancel(r)
	if !ref.live() || ref.p.shim == nil {
		return
	}
	ref.p.shimFail(code, msg)
	ref.release()
}
