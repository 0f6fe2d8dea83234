package client

import (
	"bytes"
	"strconv"
	"sync"
	"time"

	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/binding/mcp/jsonrpc"
)

// The reverse bridge: a 2026-07-28 client (a request without a session
// id) calls a tool, prompt or resource of an upstream that speaks 2025
// only, through the worker's own upstream session. A request the upstream
// sends its client on the call's event stream cannot reach a stateless
// client, so the client kind ends the round with an input_required result
// that carries it, keeps the upstream call open as a pending entry, and
// continues it when the client retries with inputResponses and the
// requestState it issued. See doc.go, "Input required rounds".

// reverseCaps are the client capabilities a worker's own session declares
// upstream: every request to the client is checked against those of the
// call it came on instead. It declares MCP Apps views too: a client that
// does not render one still reads the tool's content.
const reverseCaps = uint16(mcp.McpCapabilitiesClientRoots | mcp.McpCapabilitiesClientSampling |
	mcp.McpCapabilitiesClientElicitationForm | mcp.McpCapabilitiesClientElicitationUrl |
	mcp.McpCapabilitiesClientExtensionUi)

// asked is a request the upstream sent its client during a pending call,
// not answered yet.
type asked struct {
	id     []byte // the upstream's id, JSON text
	key    string // its inputRequests key, unique in the entry
	method []byte
	params []byte // nil: none
}

// pending is an upstream call held open between input_required rounds.
// The call and its reader belong to the owner worker; the rest is under
// mu, since the retry that continues the call may arrive on any worker.
// Messages the upstream sends go into queue, and the exchange attached to
// the entry (the current round's downstream request) drains them on its
// own worker. Past maxQueued bytes queued, the call offers the upstream no
// more credit until the queue drains to half of it.
type pending struct {
	handle    uint64
	owner     *handler
	snap      snapshot
	callID    int64
	principal string
	expireFn  func()
	resumeFn  func()

	// The owner's.
	c     *call
	rd    bodyReader
	timer int64

	mu       sync.Mutex
	round    uint32    // the round whose state may attach next
	attached *exchange // the downstream request relaying the call; nil between rounds
	xgen     uint32    // attached's generation
	queue    [][]byte  // messages not yet drained; a nil one: the stream ended
	queued   int       // the bytes of the messages in queue
	held     bool      // queued passed maxQueued: the call's credit is held back
	asked    []asked
	deadline time.Time // between rounds, when the entry is dropped
	dropped  bool
}

// reverseKind reports whether x's method may end with input_required.
func (x *exchange) reverseKind() bool {
	switch x.kind {
	case mcp.McpBeginExKindToolsCall, mcp.McpBeginExKindPromptsGet, mcp.McpBeginExKindResourcesRead:
		return true
	}
	return false
}

// resumeEarly checks a stateless request's requestState before it takes
// an upstream session, when the upstream is known to speak 2025 only: a
// retry that continues a pending call then needs no session of its own
// worker. It reports whether it took the request over.
func (x *exchange) resumeEarly() bool {
	if x.hasSID || !x.reverseKind() {
		return false
	}
	sh := x.h.sh
	sh.mu.Lock()
	stateful := !x.h.s.stateless || sh.discovery == 2
	sh.mu.Unlock()
	if !stateful {
		return false
	}
	x.stateChecked = true
	return x.resumeRound()
}

// reverseEligible reports whether x is a stateless 2026-07-28 request of
// a method that may end with input_required, going to a session's
// upstream.
func (x *exchange) reverseEligible() bool {
	return !x.hasSID && !x.snap.stateless && x.snap.sessionID != "" && x.reverseKind()
}

// isClientRequest reports a method a request to the client may carry in
// an input_required result (SEP-2322's InputRequest).
func isClientRequest(method []byte) bool {
	switch string(method) {
	case "elicitation/create", "sampling/createMessage", "roots/list":
		return true
	}
	return false
}

// principal is what a state is bound to: the identity the client kind's
// guard gives the request's authorization, else nothing.
func (x *exchange) principal() []byte {
	if g := x.h.guard; g != nil && x.ds.In.Auth != 0 {
		return []byte(g.Identity(x.ds.In.Auth))
	}
	return nil
}

// takesInput reports whether the call's client declared, in its params'
// _meta clientCapabilities, what a request of method with params needs
// (fail closed), as mcp.ClientRequestNeed reads it; valid is false when
// the params give no single reading of that.
func (x *exchange) takesInput(method, params []byte) (takes, valid bool) {
	need, ok := mcp.ClientRequestNeed(method, params)
	if !ok {
		return false, false
	}
	caps := mcp.McpCapabilities(0)
	if m := jsonrpc.Lookup(x.params, "_meta"); len(m) > 0 && m[0] == '{' {
		if cc := jsonrpc.Lookup(m, metaClientCaps); len(cc) > 0 && cc[0] == '{' {
			caps = mcp.ParseClientCapabilities(cc)
		}
	}
	return need == 0 || caps&need != 0, true
}

// maxAsked bounds the requests a pending call waits on the client for;
// past it the upstream's request is answered -32603 at once, as the
// server kind bounds a session's.
const maxAsked = 64

// onInputRequest takes a request the upstream sent its client during a
// reverse-bridged call: the first makes the call pending (moving the call
// to the entry), and each is kept to go down in the round's
// input_required result.
func (x *exchange) onInputRequest(c *call, id, method, params []byte) {
	h := x.h
	switch takes, valid := x.takesInput(method, params); {
	case !valid:
		postError(h, &x.snap, id, -32602, "Invalid params")
		return
	case !takes:
		postError(h, &x.snap, id, -32601, "Method not found")
		return
	}
	key, ok := inputKey(id)
	if !ok {
		postError(h, &x.snap, id, -32600, "Invalid Request")
		return
	}
	p := x.pend
	if p != nil {
		p.mu.Lock()
		n := len(p.asked)
		key, ok = p.uniqueKey(key, id)
		p.mu.Unlock()
		switch {
		case n >= maxAsked:
			postError(h, &x.snap, id, -32603, "Internal error: too many requests outstanding")
			return
		case !ok:
			// A JSON-RPC id names one request outstanding: an answer to
			// this one could not be told from the other's.
			postError(h, &x.snap, id, -32600, "Invalid Request: id already in use")
			return
		}
	}
	if p == nil {
		if int(h.npending.Load()) >= h.s.maxPending {
			postError(h, &x.snap, id, -32603, "Internal error: too many calls awaiting input")
			x.fail(-32603, "Server busy: too many calls awaiting input")
			return
		}
		p = &pending{owner: h, snap: x.snap, callID: x.id, principal: string(x.principal()), attached: x, xgen: x.gen}
		p.expireFn, p.resumeFn = p.expire, p.resume
		p.handle = h.sh.handles.Add(1)
		h.npending.Add(1)
		h.sh.mu.Lock()
		h.sh.pending[p.handle] = p
		h.sh.mu.Unlock()
		// The call and its reader, mid-stream, go to the entry.
		p.c, x.c = c, nil
		c.sink = p
		p.rd, x.rd = x.rd, p.rd
		x.pend = p
	}
	a := asked{id: append([]byte(nil), id...), key: key, method: append([]byte(nil), method...)}
	if params != nil {
		a.params = append([]byte(nil), params...)
	}
	p.mu.Lock()
	p.asked = append(p.asked, a)
	p.mu.Unlock()
}

// onResponse, onBody and onClose receive the pending call on the owner:
// its messages are queued for the attached exchange.
func (p *pending) onResponse(*call, int) {}

func (p *pending) onBody(c *call, b []byte) {
	h := p.owner
	for (len(b) > 0 || p.rd.held()) && p.c == c {
		n, msg, err := p.rd.next(b, c.bodyOver())
		b = b[n:]
		if err != nil {
			abortCall(&p.c)
			p.push(nil)
			return
		}
		if msg == nil {
			return
		}
		m := &h.msg
		if p.rd.decode(&h.tracker, msg, m) != nil {
			continue
		}
		p.push(append([]byte(nil), msg...))
		if m.isResponse() && bytes.Equal(m.id, strconv.AppendInt(h.idBuf[:0], p.callID, 10)) {
			p.c = nil
			c.finish()
			return
		}
	}
}

func (p *pending) onClose(c *call, _ bool) {
	if ownedCall(&p.c, c) {
		p.push(nil)
	}
}

// push queues msg (nil: the stream ended) and wakes the attached exchange.
func (p *pending) push(msg []byte) {
	p.mu.Lock()
	if p.dropped {
		p.mu.Unlock()
		return
	}
	p.queue = append(p.queue, msg)
	p.queued += len(msg)
	over := p.queued >= maxQueued
	if over {
		p.held = true
	}
	x, gen := p.attached, p.xgen
	p.mu.Unlock()
	if over && p.c != nil {
		p.c.held = true
	}
	if x != nil {
		x.h.w.Dispatch(func() {
			if x.gen == gen && x.pend == p {
				x.drain()
				x.release()
			}
		})
	}
}

// maxQueued bounds the bytes of upstream messages a pending call queues,
// between rounds or ahead of a slow client, before it stops offering the
// upstream credit: the upstream waits, rather than the gateway holding
// whatever it sends for up to a round timeout.
const maxQueued = 256 << 10

// resume offers the upstream credit again, on the owner, once the queue
// has drained below half of maxQueued (and has not filled up since).
func (p *pending) resume() {
	p.mu.Lock()
	held := p.held
	p.mu.Unlock()
	if !held && p.c != nil && p.c.held {
		p.c.held = false
		p.c.grant()
	}
}

// drain relays what the pending call queued to x, on x's worker: the
// notifications, the final answer, and the requests to the client, which
// end the round with input_required once the queue is empty.
func (x *exchange) drain() {
	h := x.h
	for x.pend != nil && x.state&(xAnswered|xOver) == 0 {
		p := x.pend
		p.mu.Lock()
		if p.attached != x || len(p.queue) == 0 {
			n := len(p.asked)
			p.mu.Unlock()
			if n > 0 {
				x.settle()
			}
			return
		}
		msg := p.queue[0]
		p.queue[0] = nil
		p.queue = p.queue[1:]
		p.queued -= len(msg)
		resume := p.held && p.queued < maxQueued/2
		if resume {
			p.held = false
		}
		p.mu.Unlock()
		if resume {
			p.owner.w.Dispatch(p.resumeFn)
		}
		if msg == nil {
			x.fail(-32603, "Upstream ended the response without an answer")
			return
		}
		m := &h.msg
		if decode(&h.tracker, msg, m) == nil {
			x.onMessage(nil, m)
		}
	}
}

// roundSettle is how long a round waits, from the first request to the
// client the upstream sends, for more before it ends: an upstream that
// asks several things at once (go-sdk's fulfils a handler's input
// requests concurrently) sends them in quick succession, and they go down
// in one input_required result.
const roundSettle = 20 * time.Millisecond

// settle ends x's round once roundSettle has passed since the upstream's
// first request of the round, on x's worker.
func (x *exchange) settle() {
	if x.settling {
		return
	}
	x.settling = true
	gen, p := x.gen, x.pend
	x.h.w.TimerAt(x.h.w.Now().Add(roundSettle), func() {
		if x.gen != gen || x.pend != p || !x.settling {
			return
		}
		x.settling = false
		if x.state&(xAnswered|xOver) == 0 {
			x.drain()
			if x.pend == p && x.state&(xAnswered|xOver) == 0 {
				x.endRound()
			}
		}
		x.release()
	})
}

// endRound ends x's round with an input_required result carrying the
// requests the upstream is waiting on, and a state for the retry.
func (x *exchange) endRound() {
	h := x.h
	p := x.pend
	now := h.w.Now()
	p.mu.Lock()
	p.round++
	p.attached = nil
	p.deadline = now.Add(h.s.roundTimeout)
	st := reqState{kind: statePending, instance: h.sh.instanceID, handle: p.handle, callID: p.callID, round: p.round, expiry: p.deadline.UnixMilli()}
	b := append(x.answer[:0], `{"resultType":"input_required","inputRequests":{`...)
	for i, a := range p.asked {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonrpc.AppendString(b, a.key)
		b = append(b, `:{"method":`...)
		b = jsonrpc.AppendString(b, a.method)
		if a.params != nil {
			b = append(b, `,"params":`...)
			b = append(b, a.params...)
		}
		b = append(b, '}')
	}
	p.mu.Unlock()
	b = append(b, `},"requestState":"`...)
	b = h.issuer().encode(b, &st, []byte(p.principal))
	b = append(b, `"}`...)
	x.pend = nil
	x.answer = b
	x.answered(false)
	if p.owner == h {
		p.arm()
	} else {
		p.owner.w.Dispatch(p.arm)
	}
}

// inputKey returns the inputRequests key of a request with the upstream
// id id: a string id decoded, a number's text. ok is false for an id that
// is neither.
func inputKey(id []byte) (string, bool) {
	if len(id) > 0 && id[0] == '"' {
		k, err := jsonrpc.Unquote(nil, id)
		return string(k), err == nil
	}
	return string(id), len(id) > 0 && (id[0] == '-' || id[0] >= '0' && id[0] <= '9')
}

// uniqueKey returns key, or one made from it that no request the entry
// waits on has, for a request with the upstream id id (ids 7 and "7"
// both key "7"); ok is false when a request the entry waits on has the
// same id. Under p.mu.
func (p *pending) uniqueKey(key string, id []byte) (string, bool) {
	taken := func(k string) bool {
		for _, a := range p.asked {
			if a.key == k {
				return true
			}
		}
		return false
	}
	for _, a := range p.asked {
		if a.key == key && sameID(a.id, id) {
			return key, false
		}
	}
	k := key
	for n := 2; taken(k); n++ {
		k = key + "#" + strconv.Itoa(n)
	}
	return k, true
}

// sameID reports whether two JSON-RPC ids are the same: two strings that
// decode alike, or two numbers of the same text.
func sameID(a, b []byte) bool {
	if len(a) == 0 || len(b) == 0 || (a[0] == '"') != (b[0] == '"') {
		return false
	}
	ka, _ := inputKey(a)
	kb, _ := inputKey(b)
	return ka == kb
}

// arm runs the entry's round timer on the owner.
func (p *pending) arm() {
	p.mu.Lock()
	at, dropped := p.deadline, p.dropped
	p.mu.Unlock()
	if dropped || p.timer != 0 {
		return
	}
	p.timer = p.owner.w.TimerAt(at, p.expireFn)
}

// expire drops the entry when no retry came within the round timeout:
// the upstream's requests are answered -32001 and the call cancelled.
func (p *pending) expire() {
	h := p.owner
	p.timer = 0
	now := h.w.Now()
	p.mu.Lock()
	if p.dropped {
		p.mu.Unlock()
		return
	}
	if p.attached != nil || now.Before(p.deadline) {
		at := p.deadline
		if p.attached != nil {
			at = now.Add(h.s.roundTimeout)
		}
		p.mu.Unlock()
		p.timer = h.w.TimerAt(at, p.expireFn)
		return
	}
	p.mu.Unlock()
	p.drop("the client did not retry in time")
}

// drop ends the entry on the owner: it leaves the table, the requests
// still waiting upstream are answered -32001, and the call is cancelled.
func (p *pending) drop(reason string) {
	h := p.owner
	p.mu.Lock()
	if p.dropped {
		p.mu.Unlock()
		return
	}
	p.dropped = true
	left := p.asked
	p.asked, p.queue, p.attached = nil, nil, nil
	p.mu.Unlock()
	p.unregister()
	for _, a := range left {
		postError(h, &p.snap, a.id, -32001, "Request cancelled: "+reason)
	}
	if p.c != nil {
		b := append(appendCancelled(h.scratch[:0], p.callID, reason), `}}`...)
		h.scratch = b
		postMessage(h, &p.snap, b)
		abortCall(&p.c)
	}
	h.w.Disarm(&p.timer)
}

func (p *pending) unregister() {
	sh := p.owner.sh
	sh.mu.Lock()
	if sh.pending[p.handle] == p {
		delete(sh.pending, p.handle)
		p.owner.npending.Add(-1)
	}
	sh.mu.Unlock()
}

// unpend lets go of x's pending call when x ends other than by a round:
// with its final answer the entry is done; otherwise (a failure, a
// cancel) the call is dropped.
func (x *exchange) unpend(reason string) {
	p := x.pend
	if p == nil {
		return
	}
	x.pend = nil
	if p.owner == x.h {
		p.drop(reason)
	} else {
		p.owner.w.Dispatch(func() { p.drop(reason) })
	}
}

// resumeRound handles a retry that carries a requestState, before
// anything goes upstream: it reports whether it took the request over
// (answered it, or attached it to its pending call); false sends x
// upstream as usual, its params rewritten when the state says so.
func (x *exchange) resumeRound() bool {
	rs := jsonrpc.Lookup(x.params, "requestState")
	if rs == nil {
		return false
	}
	h := x.h
	if len(rs) < 2 || rs[0] != '"' {
		x.refuseState("not a string")
		return true
	}
	enc := unquote(nil, rs)
	st, err := h.decodeState(enc, x.principal(), h.w.Now())
	if err != nil {
		x.refuseState(err.Error())
		return true
	}
	switch st.kind {
	case stateReplay:
		x.params = stripMembers(nil, x.params, "requestState", "inputResponses")
		return false
	case stateUpstream:
		b := stripMembers(nil, x.params, "requestState")
		x.params = appendMember(b, "requestState", jsonrpc.AppendString(nil, st.inner))
		return false
	}
	if st.instance != h.sh.instanceID {
		x.refuseState(errStateElsewhere.Error())
		return true
	}
	h.sh.mu.Lock()
	p := h.sh.pending[st.handle]
	h.sh.mu.Unlock()
	if p == nil || p.callID != st.callID {
		x.refuseState("no call awaits it: finished, expired or already dropped")
		return true
	}
	p.mu.Lock()
	if p.dropped || p.attached != nil || p.round != st.round {
		p.mu.Unlock()
		x.refuseState("already used")
		return true
	}
	p.attached, p.xgen = x, x.gen
	// The answers the retry carries go upstream; requests it left
	// unanswered are asked again.
	responses := jsonrpc.Lookup(x.params, "inputResponses")
	left := p.asked[:0]
	var answers [][]byte
	for _, a := range p.asked {
		var v []byte
		if responses != nil {
			v = lookupKey(responses, a.key)
		}
		if len(v) == 0 || v[0] != '{' {
			left = append(left, a)
			continue
		}
		b := append([]byte(`{"jsonrpc":"2.0","id":`), a.id...)
		b = append(b, `,"result":`...)
		b = append(b, v...)
		answers = append(answers, append(b, '}'))
	}
	p.asked = left
	p.mu.Unlock()
	x.pend, x.id, x.snap = p, p.callID, p.snap
	x.state |= xSent
	for _, b := range answers {
		postMessage(h, &p.snap, b)
	}
	x.drain()
	return true
}

// lookupKey returns the member of obj named key, or nil: nil too when
// obj names it twice, so that the request it would answer is asked again
// rather than answered with one of two readings.
func lookupKey(obj []byte, key string) []byte {
	if v, twice := jsonrpc.LookupUnique(obj, key); !twice {
		return v
	}
	return nil
}

// refuseState answers a retry whose requestState the gateway will not
// honour: -32602 with the reason in data; nothing goes upstream.
func (x *exchange) refuseState(reason string) {
	b := append(x.answer[:0], `{"code":-32602,"message":"Invalid requestState","data":{"reason":`...)
	b = strconv.AppendQuote(b, reason)
	b = append(b, `}}`...)
	x.answer = b
	x.answered(true)
}

// stripMembers appends obj without its top-level members named names.
func stripMembers(dst, obj []byte, names ...string) []byte {
	dst = append(dst, '{')
	n := 0
	for f, i, ok := jsonrpc.NextField(obj, 0); ok; f, i, ok = jsonrpc.NextField(obj, i) {
		skip := false
		for _, name := range names {
			if jsonrpc.KeyIs(f.Key, name) {
				skip = true
			}
		}
		if skip {
			continue
		}
		if n > 0 {
			dst = append(dst, ',')
		}
		dst = append(append(append(dst, f.Key...), ':'), f.Value...)
		n++
	}
	return append(dst, '}')
}

// appendMember adds the member name: value to obj, an object that ends
// in its closing brace.
func appendMember(obj []byte, name string, value []byte) []byte {
	obj = bytes.TrimRight(obj[:len(obj)-1], " \t\r\n")
	if len(obj) > 0 && obj[len(obj)-1] != '{' {
		obj = append(obj, ',')
	}
	obj = jsonrpc.AppendString(obj, name)
	obj = append(obj, ':')
	obj = append(obj, value...)
	return append(obj, '}')
}

// bridgeResult rewrites, for a 2026-07-28 client of a 2025 upstream, a
// final answer the client could not use as it is: a -32042 (URL
// elicitation required) becomes input_required with its URL elicitations,
// and the requestState of an upstream's own input_required result is
// wrapped in one the gateway issues. It reports whether it answered x.
func (x *exchange) bridgeResult(result, errObj []byte) bool {
	h := x.h
	now := h.w.Now()
	st := reqState{instance: h.sh.instanceID, callID: x.id, expiry: now.Add(h.s.roundTimeout).UnixMilli()}
	if errObj != nil {
		if code := jsonrpc.Lookup(errObj, "code"); string(code) != "-32042" {
			return false
		}
		els := jsonrpc.Lookup(jsonrpc.Lookup(errObj, "data"), "elicitations")
		if takes, _ := x.takesInput([]byte("elicitation/create"), []byte(`{"mode":"url"}`)); len(els) == 0 || els[0] != '[' || !takes {
			return false
		}
		b := append(x.answer[:0], `{"resultType":"input_required","inputRequests":{`...)
		keys := map[string]bool{}
		n := 0
		for _, el := range arrayElems(els) {
			if len(el) == 0 || el[0] != '{' {
				continue
			}
			key := ""
			if id := jsonrpc.Lookup(el, "elicitationId"); len(id) >= 2 && id[0] == '"' {
				key = string(unquote(nil, id))
			}
			for i := n + 1; key == "" || keys[key]; i++ {
				key = "url-elicitation-" + strconv.Itoa(i)
			}
			keys[key] = true
			if n > 0 {
				b = append(b, ',')
			}
			b = jsonrpc.AppendString(b, key)
			b = append(b, `:{"method":"elicitation/create","params":`...)
			b = append(b, el...)
			b = append(b, '}')
			n++
		}
		if n == 0 {
			return false
		}
		st.kind = stateReplay
		b = append(b, `},"requestState":"`...)
		b = h.issuer().encode(b, &st, x.principal())
		x.answer = append(b, `"}`...)
		x.answered(false)
		return true
	}
	// An upstream's own input_required result: a 2025 session's carries
	// no resultType (go-sdk's, from a handler it already re-ran once),
	// its inputRequests say what it is.
	typ, twice1 := jsonrpc.LookupUnique(result, "resultType")
	ir, twice2 := jsonrpc.LookupUnique(result, "inputRequests")
	rs, twice3 := jsonrpc.LookupUnique(result, "requestState")
	switch {
	case twice1 || twice2 || twice3:
		// Which of two the client would read is its parser's choice: the
		// gateway, which wraps the state, cannot know.
		x.fail(-32603, "Internal error: the upstream's result names resultType, inputRequests or requestState twice")
		return true
	case string(typ) == `"input_required"`:
	case typ == nil && len(ir) > 0 && ir[0] == '{':
	default:
		return false
	}
	if rs != nil && (len(rs) < 2 || rs[0] != '"') {
		return false
	}
	b := stripMembers(x.answer[:0], result, "requestState", "resultType")
	b = appendMember(b, "resultType", []byte(`"input_required"`))
	if rs != nil {
		st.kind = stateUpstream
		st.inner = unquote(nil, rs)
		if len(st.inner) > maxInnerState {
			return false
		}
		enc := h.issuer().encode(nil, &st, x.principal())
		b = appendMember(b, "requestState", jsonrpc.AppendString(nil, enc))
	}
	x.answer = b
	x.answered(false)
	return true
}

// arrayElems returns the elements of a JSON array's text.
func arrayElems(arr []byte) [][]byte {
	var out [][]byte
	var t jsonrpc.Tracker
	i := jsonrpc.SkipSpace(arr, 1)
	for i < len(arr) && arr[i] != ']' {
		t.Reset()
		n, done, err := t.Feed(arr[i:])
		if err != nil {
			return out
		}
		if !done {
			if t.Finish() != nil {
				return out
			}
			n = len(arr) - i
		}
		out = append(out, bytes.TrimSpace(arr[i:i+n]))
		i = jsonrpc.SkipSpace(arr, i+n)
		if i < len(arr) && arr[i] == ',' {
			i = jsonrpc.SkipSpace(arr, i+1)
		}
	}
	return out
}

var _ sink = (*pending)(nil)
