package server

import (
	"bytes"
	"errors"

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
	trk       *jsonrpc.Tracker
	slotBase  int64 // the body offset of the slot's first byte
	sent      int64 // params bytes sent to the application end here
	fixed     int64 // params bytes whose lone surrogates are rewritten end here
	paramsEnd int64 // where the params end, 0 until known
	flags     streamFlags
	// A stateless call's params, followed for their requestState
	// (rounds.go): their body offset, the bytes post.rtrk has taken, and
	// the state's sum.
	rbase int64
	rfed  int64
	rsum  stateSum
	// An error the application answered with before the id was known
	// (errDeferred).
	errCode int
	errLen  int
	errMsg  [256]byte
}

// reset forgets a streaming body; errMsg is as good as empty once
// errLen is 0.
func (st *streamState) reset() {
	st.trk, st.slotBase, st.sent, st.fixed, st.paramsEnd, st.rbase, st.rfed = nil, 0, 0, 0, 0, 0, 0
	st.flags, st.errCode, st.errLen = 0, 0, 0
}

// streamFlags is where a streaming body's message stands.
type streamFlags uint8

const (
	msgDone       streamFlags = 1 << iota // the message is complete; only whitespace may follow
	idPending                             // the id comes after the params
	rpcPending                            // so does the jsonrpc member
	deferred                              // the reply ended before the id was known
	deferredError                         // …with the ERROR outcome
	errDeferred                           // the application answered with an error before the id was known
	roundScan                             // the params are followed for their requestState (rounds.go)
	roundScanned                          // … and post.rtrk holds what was found
)

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
func (p *post) tooLarge() {
	p.streamFailed(413, codeTransport, "Payload Too Large: the request body exceeds the limit")
}

// streamFailed ends a request whose body cannot go on: its application
// stream is cancelled and the client gets status, once the body has been
// read to its end (a client still sending may not read an answer sent
// before), or at once when the body is beyond limits.body; or an abrupt
// end when the response has begun.
func (p *post) streamFailed(status, code int, msg string) {
	if p.ex != nil {
		p.ex.cancel()
	}
	p.doneInflight()
	p.freeIn()
	p.state &^= streamBody
	if p.res.mode != modeNone || p.replyOver() {
		p.abortReply()
		p.resetIn()
		return
	}
	p.res.id = nil
	if p.In.Closed() || p.bodyLen > p.h.s.maxBody {
		p.transportError(status, code, msg)
		p.resetIn()
		return
	}
	p.hdr.early, p.hdr.earlyCode, p.hdr.earlyMsg = status, code, msg
	p.grantBody()
}

// streamParseFailed refuses a streaming body its tracker rejected: a
// member of the envelope given twice is an Invalid Request, as in a body
// held whole; anything else is not JSON.
func (p *post) streamParseFailed(err error) {
	var se *jsonrpc.SyntaxError
	if errors.As(err, &se) && se.Member() != "" {
		msg := append(p.h.aux[:0], "Invalid Request: duplicate member "...)
		msg = jsonrpc.AppendString(msg, se.Member())
		p.streamFailed(400, codeInvalidRequest, string(msg))
		return
	}
	p.streamFailed(400, codeParseError, "Parse error: Invalid JSON")
}

// startStream turns a body that filled its slot into a streaming one.
func (p *post) startStream() {
	h := p.h
	b := h.pool.Buffer(p.inSlot)[:p.inLen]
	t := h.tracker()
	p.st.reset()
	p.st.trk = t
	p.state |= streamBody
	done, ok := p.feed(b)
	if done {
		// A message that fits its slot, with whitespace beyond: it is
		// read whole at the END.
		p.state &^= streamBody
	}
	if done || !ok {
		return
	}
	switch t.Kind() {
	case jsonrpc.KindObject:
	case jsonrpc.KindArray:
		p.streamFailed(400, codeInvalidRequest, "Invalid Request: batch requests are not supported")
		return
	default:
		p.streamFailed(400, codeInvalidRequest, "Invalid Request: a JSON-RPC message must be an object")
		return
	}
	params, method := t.Member(jsonrpc.MemberParams), t.Member(jsonrpc.MemberMethod)
	if params.Start == 0 {
		p.tooLarge()
		return
	}
	if !method.Complete() || method.Start > params.Start {
		p.streamFailed(400, codeInvalidRequest, "Invalid Request: in a large body, method must come before params")
		return
	}
	var m message
	m.method = method.Bytes(b)
	m.params = b[params.Start:]
	if params.Complete() {
		m.params = params.Bytes(b)
		p.st.paramsEnd = params.End
	}
	if v := t.Member(jsonrpc.MemberJSONRPC); v.Complete() {
		if string(v.Bytes(b)) != `"2.0"` {
			p.streamFailed(400, codeInvalidRequest, `Invalid Request: jsonrpc must be "2.0"`)
			return
		}
	} else {
		p.st.flags |= rpcPending
	}
	if id := t.Member(jsonrpc.MemberID); id.Complete() {
		if id := id.Bytes(b); !validID(id) || len(id) > len(p.id) {
			p.streamFailed(400, codeInvalidRequest, "Invalid Request: the id must be a string or an integer")
			return
		}
		p.res.id = p.id[:copy(p.id[:], id.Bytes(b))]
	} else {
		p.st.flags |= idPending
	}
	p.st.sent, p.st.fixed = params.Start, params.Start
	p.dispatch(&m, true)
	if p.ex == nil {
		// Answered already (an error): the rest is read and dropped.
		p.state &^= streamBody
		p.freeIn()
		p.grantBody()
		return
	}
	p.ex.sendParams()
}

// feed gives b to the body's tracker: done when the message ended in b,
// ok false when the body failed and was answered (a syntax error, or
// more than whitespace after the message).
func (p *post) feed(b []byte) (done, ok bool) {
	n, done, err := p.st.trk.Feed(b)
	if err != nil {
		p.streamParseFailed(err)
		return false, false
	}
	if done {
		p.st.flags |= msgDone
		if !onlySpace(b[n:]) {
			p.streamFailed(400, codeParseError, "Parse error: Invalid JSON")
			return true, false
		}
	}
	return done, true
}

func onlySpace(b []byte) bool { return len(jsonrpc.TrimSpace(b)) == 0 }

// streamMore takes the next bytes of a streaming body.
func (p *post) streamMore(more []byte) {
	h := p.h
	b := h.pool.Buffer(p.inSlot)
	if p.inLen+len(more) > len(b) {
		p.fail() // beyond the window granted
		return
	}
	copy(b[p.inLen:], more)
	p.inLen += len(more)
	t := p.st.trk
	if p.st.flags&msgDone != 0 {
		if !onlySpace(more) {
			p.streamFailed(400, codeParseError, "Parse error: Invalid JSON")
		}
		p.compactIn()
		return
	}
	if _, ok := p.feed(more); !ok || !p.scanRound(more) {
		return
	}
	if p.st.paramsEnd == 0 && t.ParamsDone() {
		p.st.paramsEnd = t.Member(jsonrpc.MemberParams).End
	}
	if p.ex.Out.Closed() {
		p.skipParams()
	} else {
		p.ex.sendParams()
	}
	if p.inLen == len(b) && p.st.paramsEnd != 0 && p.st.sent == p.st.paramsEnd {
		// The tail after the params fills the slot: nothing drains it.
		p.tooLarge()
	}
}

// paramsChunk returns the params bytes that can be sent next: after what
// was sent, up to the params' end or what has arrived, short of an escape
// that what arrived may cut (fixParams).
func (p *post) paramsChunk() []byte {
	end := p.st.slotBase + int64(p.inLen)
	final := false
	if p.st.paramsEnd != 0 && end >= p.st.paramsEnd {
		end, final = p.st.paramsEnd, true
	}
	p.fixParams(end, final)
	end = min(end, p.st.fixed)
	if p.st.sent >= end {
		return nil
	}
	b := p.h.pool.Buffer(p.inSlot)
	return b[p.st.sent-p.st.slotBase : end-p.st.slotBase]
}

// fixParams rewrites the lone surrogate escapes of the params that
// arrived, up to end, as a body held whole has them rewritten (post):
// the application reads what the server read. An escape that end may cut
// waits for the next bytes, or for the params' end (final).
func (p *post) fixParams(end int64, final bool) {
	if p.st.fixed >= end {
		return
	}
	b := p.h.pool.Buffer(p.inSlot)
	if from, to := p.stateSpan(); from > 0 && from < end && (to == 0 || to > p.st.fixed) {
		// The requestState goes as it came (replaceLoneSurrogates). Its
		// opening quote starts no escape, so what is before it is final.
		if p.st.fixed < from {
			jsonrpc.ReplaceLoneSurrogatesPart(b[p.st.fixed-p.st.slotBase:from-p.st.slotBase], true)
		}
		if to == 0 || to >= end {
			p.st.fixed = end
			return
		}
		p.st.fixed = to
	}
	done, _ := jsonrpc.ReplaceLoneSurrogatesPart(b[p.st.fixed-p.st.slotBase:end-p.st.slotBase], final)
	p.st.fixed += int64(done)
}

// skipParams drops the params that arrive after the application stopped
// taking them (it refused the request): the body is still read, for an id
// that may follow them.
func (p *post) skipParams() {
	if p.state&streamBody == 0 || p.inSlot < 0 {
		return
	}
	p.st.sent += int64(len(p.paramsChunk()))
	p.compactIn()
}

// paramsDone reports whether every params byte has been sent.
func (p *post) paramsDone() bool {
	return p.st.paramsEnd != 0 && p.st.sent == p.st.paramsEnd
}

// compactIn drops the slot's bytes that are no longer needed: those sent
// to the application, or all of them once its params are sent and its id
// and jsonrpc known, the tracker having read what follows the params.
func (p *post) compactIn() {
	b := p.h.pool.Buffer(p.inSlot)
	keep := p.st.sent
	if p.st.flags&(idPending|rpcPending) == 0 && p.paramsDone() {
		// Nothing after the params is wanted; params the application's
		// window has not taken yet are kept until it does.
		keep = p.st.slotBase + int64(p.inLen)
	}
	drop := int(keep - p.st.slotBase)
	if drop <= 0 {
		return
	}
	p.inLen = copy(b, b[drop:p.inLen])
	p.st.slotBase = keep
	p.grantBody()
}

// endStream handles the END of a streaming body: the message must be
// complete, and an id or jsonrpc member after the params is read from the
// tail.
func (p *post) endStream() {
	t := p.st.trk
	if err := t.Finish(); err != nil {
		p.streamFailed(400, codeParseError, "Parse error: Invalid JSON")
		return
	}
	tail := func(rng jsonrpc.Range) []byte {
		if !rng.Complete() || rng.Start < p.st.slotBase || p.inSlot < 0 {
			return nil
		}
		b := p.h.pool.Buffer(p.inSlot)
		return b[rng.Start-p.st.slotBase : rng.End-p.st.slotBase]
	}
	if p.st.flags&rpcPending != 0 {
		if v := tail(t.Member(jsonrpc.MemberJSONRPC)); !bytes.Equal(v, []byte(`"2.0"`)) {
			p.streamFailed(400, codeInvalidRequest, `Invalid Request: jsonrpc must be "2.0"`)
			return
		}
		p.st.flags &^= rpcPending
	}
	if p.st.flags&idPending != 0 {
		id := tail(t.Member(jsonrpc.MemberID))
		if id == nil || !validID(id) || len(id) > len(p.id) {
			p.streamFailed(400, codeInvalidRequest, "Invalid Request: the id must be a string or an integer")
			return
		}
		p.res.id = p.id[:copy(p.id[:], id)]
		p.st.flags &^= idPending
		if s := p.sess; s != nil && p.flags&stateless == 0 && p.ex != nil && !p.ex.Closed() {
			s.addInflight(fnv64(p.res.id), p.ref())
			p.state |= cancellable
		}
	}
	p.compactIn()
	switch {
	case p.st.flags&deferred != 0:
		p.st.flags &^= deferred
		p.ex.finish(p.st.flags&deferredError != 0)
	case p.st.flags&errDeferred != 0:
		p.st.flags &^= errDeferred
		p.appErrorBytes(p.st.errCode, append(p.h.msg[:0], p.st.errMsg[:p.st.errLen]...))
	}
}

// releaseStream gives the tracker back.
func (p *post) releaseStream() {
	if p.st.trk != nil {
		p.h.trackers = append(p.h.trackers, p.st.trk)
	}
	p.st.reset()
	p.state &^= streamBody
}
