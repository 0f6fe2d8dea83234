package server

import (
	"bytes"

	"github.com/sluicehq/sluice/binding/mcp/jsonrpc"
)

// Bodies larger than a buffer slot (32 KiB by default) stream: the
// request's params go to the application as they arrive instead of being
// held whole. The slot then works as a pipe. What comes before the params
// is held and scanned by a jsonrpc.Tracker, which goes on following the
// message to its end: the method must precede the params (so the request
// can be routed before they pass), and whatever the params' head does not
// show in its first slot (a tool's name, 2026-07-28's _meta) cannot be
// checked, so such a request is refused with 413. An id after the params
// is picked up from the tail, which the slot holds again; the response
// waits for it. The application sees contentLength -1 and, when the name
// is not in the head, a null name (it takes the one in the params).

// streamState is a streaming body's progress, in offsets from the body's
// first byte.
type streamState struct {
	trk        *jsonrpc.Tracker
	slotBase   int64 // the body offset of the slot's first byte
	sent       int64 // params bytes sent to the application end here
	paramsEnd  int64 // where the params end, 0 until known
	msgDone    bool  // the message is complete; only whitespace may follow
	idPending  bool  // the id comes after the params
	rpcPending bool  // so does the jsonrpc member
	deferred   bool  // the reply ended before the id was known
	deferredE  bool  // …with the ERROR outcome
	// An error the application answered with before the id was known.
	errDeferred bool
	errCode     int
	errLen      int
	errMsg      [256]byte
}

// tracker takes a tracker from the worker's pool.
func (h *server) tracker() *jsonrpc.Tracker {
	if n := len(h.trackers); n > 0 {
		t := h.trackers[n-1]
		h.trackers = h.trackers[:n-1]
		t.Reset()
		return t
	}
	return jsonrpc.NewTracker(jsonrpc.Options{MaxDepth: maxJSONDepth, RejectDuplicates: true})
}

// tooLarge answers 413: at once, refusing the rest, for a body beyond
// limits.body; at the body's end for one that cannot be streamed.
func (r *request) tooLarge() {
	r.streamFailed(413, codeTransport, "Payload Too Large: the request body exceeds the limit")
}

// streamFailed ends a request whose body cannot go on: its application
// stream is cancelled and the client gets status, once the body has been
// read to its end (a client still sending may not read an answer sent
// before), or at once when the body is beyond limits.body; or an abrupt
// end when the response has begun.
func (r *request) streamFailed(status, code int, msg string) {
	r.cancelApp()
	r.freeIn()
	r.streamBody = false
	if r.mode != modeNone || r.outOver {
		r.abortReply()
		r.resetIn()
		return
	}
	r.idLen = 0
	if r.inOver || r.bodyLen > r.h.s.maxBody {
		r.transportError(status, code, msg)
		r.resetIn()
		return
	}
	r.early, r.earlyCode, r.earlyMsg = status, code, msg
	r.grantIn()
}

// startStream turns a body that filled its slot into a streaming one.
func (r *request) startStream() {
	h := r.h
	b := h.pool.Buffer(r.inSlot)[:r.inLen]
	t := h.tracker()
	r.st = streamState{trk: t}
	r.streamBody = true
	n, done, err := t.Feed(b)
	if err != nil {
		r.streamFailed(400, codeParseError, "Parse error: Invalid JSON")
		return
	}
	if done {
		r.st.msgDone = true
		if !onlySpace(b[n:]) {
			r.streamFailed(400, codeParseError, "Parse error: Invalid JSON")
		}
		// A message that fits its slot, with whitespace beyond: it is
		// read whole at the END.
		r.streamBody = false
		return
	}
	if k := t.Kind(); k != jsonrpc.KindObject {
		r.streamFailed(400, codeInvalidRequest, notObject(k))
		return
	}
	params, method := t.Member(jsonrpc.MemberParams), t.Member(jsonrpc.MemberMethod)
	if params.Start == 0 {
		r.tooLarge()
		return
	}
	if !method.Complete() || method.Start > params.Start {
		r.streamFailed(400, codeInvalidRequest, "Invalid Request: in a large body, method must come before params")
		return
	}
	var m message
	m.method = method.Bytes(b)
	m.params = b[params.Start:]
	if params.Complete() {
		m.params = params.Bytes(b)
		r.st.paramsEnd = params.End
	}
	if v := t.Member(jsonrpc.MemberJSONRPC); v.Complete() {
		if string(v.Bytes(b)) != `"2.0"` {
			r.streamFailed(400, codeInvalidRequest, `Invalid Request: jsonrpc must be "2.0"`)
			return
		}
	} else {
		r.st.rpcPending = true
	}
	if id := t.Member(jsonrpc.MemberID); id.Complete() {
		if id := id.Bytes(b); !validID(id) || len(id) > len(r.id) {
			r.streamFailed(400, codeInvalidRequest, "Invalid Request: the id must be a string or an integer")
			return
		}
		r.idLen = copy(r.id[:], id.Bytes(b))
	} else {
		r.st.idPending = true
	}
	r.st.sent = params.Start
	r.dispatch(&m, true)
	if !r.appOpen {
		// Answered already (an error): the rest is read and dropped.
		r.streamBody = false
		r.freeIn()
		r.grantIn()
		return
	}
	r.sendParams()
}

func onlySpace(b []byte) bool { return jsonrpc.SkipSpace(b, 0) == len(b) }

// streamMore takes the next bytes of a streaming body.
func (r *request) streamMore(p []byte) {
	h := r.h
	b := h.pool.Buffer(r.inSlot)
	if r.inLen+len(p) > len(b) {
		r.fail() // beyond the window granted
		return
	}
	copy(b[r.inLen:], p)
	r.inLen += len(p)
	t := r.st.trk
	if r.st.msgDone {
		if !onlySpace(p) {
			r.streamFailed(400, codeParseError, "Parse error: Invalid JSON")
		}
		r.compactIn()
		return
	}
	n, done, err := t.Feed(p)
	if err != nil {
		r.streamFailed(400, codeParseError, "Parse error: Invalid JSON")
		return
	}
	if done {
		r.st.msgDone = true
		if !onlySpace(p[n:]) {
			r.streamFailed(400, codeParseError, "Parse error: Invalid JSON")
			return
		}
	}
	if r.st.paramsEnd == 0 && t.ParamsDone() {
		r.st.paramsEnd = t.Member(jsonrpc.MemberParams).End
	}
	if r.appInitialOver {
		r.skipParams()
	} else {
		r.sendParams()
	}
	if r.inLen == len(b) && r.st.paramsEnd != 0 && r.st.sent == r.st.paramsEnd {
		// The tail after the params fills the slot: nothing drains it.
		r.tooLarge()
	}
}

// paramsChunk returns the params bytes that can be sent next: after what
// was sent, up to the params' end or what has arrived.
func (r *request) paramsChunk() []byte {
	end := r.st.slotBase + int64(r.inLen)
	if r.st.paramsEnd != 0 {
		end = min(end, r.st.paramsEnd)
	}
	if r.st.sent >= end {
		return nil
	}
	b := r.h.pool.Buffer(r.inSlot)
	return b[r.st.sent-r.st.slotBase : end-r.st.slotBase]
}

// skipParams drops the params that arrive after the application stopped
// taking them (it refused the request): the body is still read, for an id
// that may follow them.
func (r *request) skipParams() {
	if !r.streamBody || r.inSlot < 0 {
		return
	}
	r.st.sent += int64(len(r.paramsChunk()))
	r.compactIn()
}

// paramsDone reports whether every params byte has been sent.
func (r *request) paramsDone() bool {
	return r.st.paramsEnd != 0 && r.st.sent == r.st.paramsEnd
}

// compactIn drops the slot's bytes that are no longer needed: those sent
// to the application, or all of them once the message is complete, its id
// known and its params sent.
func (r *request) compactIn() {
	b := r.h.pool.Buffer(r.inSlot)
	keep := r.st.sent
	if r.st.msgDone && !r.st.idPending && !r.st.rpcPending && r.paramsDone() {
		// Nothing after the params is wanted; params the application's
		// window has not taken yet are kept until it does.
		keep = r.st.slotBase + int64(r.inLen)
	}
	drop := int(keep - r.st.slotBase)
	if drop <= 0 {
		return
	}
	r.inLen = copy(b, b[drop:r.inLen])
	r.st.slotBase = keep
	r.grantIn()
}

// endStream handles the END of a streaming body: the message must be
// complete, and an id or jsonrpc member after the params is read from the
// tail.
func (r *request) endStream() {
	t := r.st.trk
	if err := t.Finish(); err != nil {
		r.streamFailed(400, codeParseError, "Parse error: Invalid JSON")
		return
	}
	tail := func(rng jsonrpc.Range) []byte {
		if !rng.Complete() || rng.Start < r.st.slotBase || r.inSlot < 0 {
			return nil
		}
		b := r.h.pool.Buffer(r.inSlot)
		return b[rng.Start-r.st.slotBase : rng.End-r.st.slotBase]
	}
	if r.st.rpcPending {
		if v := tail(t.Member(jsonrpc.MemberJSONRPC)); !bytes.Equal(v, []byte(`"2.0"`)) {
			r.streamFailed(400, codeInvalidRequest, `Invalid Request: jsonrpc must be "2.0"`)
			return
		}
		r.st.rpcPending = false
	}
	if r.st.idPending {
		id := tail(t.Member(jsonrpc.MemberID))
		if id == nil || !validID(id) || len(id) > len(r.id) {
			r.streamFailed(400, codeInvalidRequest, "Invalid Request: the id must be a string or an integer")
			return
		}
		r.idLen = copy(r.id[:], id)
		r.st.idPending = false
		if s := r.sess; s != nil && !r.stateless && r.appOpen && !(r.appInitialOver && r.appReplyOver) {
			s.addInflight(fnv64(r.id[:r.idLen]), r.ref())
			r.inflight = true
		}
	}
	r.compactIn()
	switch {
	case r.st.deferred:
		r.st.deferred = false
		r.finish(r.st.deferredE)
	case r.st.errDeferred:
		r.st.errDeferred = false
		r.appErrorBytes(r.st.errCode, append(r.h.msg[:0], r.st.errMsg[:r.st.errLen]...))
	}
}

// releaseStream gives the tracker back.
func (r *request) releaseStream() {
	if r.st.trk != nil {
		r.h.trackers = append(r.h.trackers, r.st.trk)
	}
	r.st = streamState{}
	r.streamBody = false
}
