package server

import (
	"bytes"

	"github.com/sluicehq/sluice/binding/internal/streams"
	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/binding/mcp/jsonrpc"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/frame"
	"github.com/sluicehq/sluice/internal/freelist"
)

// An MCP request's application stream (doc.go has the contract): BEGIN
// with the McpBeginEx of its kind, DATA the params object, END. The reply
// is BEGIN, progress FLUSHes, DATA the bare result (or, with an END
// outcome ERROR, the error object), END.
//
// The reply's DATA is held in a buffer slot, at resHead, until its END: the
// outcome decides between "result" and "error", 2026-07-28 splices members
// into the result, and the head of the response goes in the room kept in
// front of it, so the whole response leaves from the slot without a copy.
// A reply that outgrows the slot streams through instead (doc.go).

const (
	// resHead is the room kept in front of the reply for the response's
	// head: SSE fields, the JSON-RPC envelope with the id, and what
	// 2026-07-28 splices into the result.
	resHead = 1536
	// resTail is the room kept after it for the envelope's close.
	resTail = 16
)

// exchange is an MCP request's application stream (Zilla's
// McpRequestStream), opened by its POST (p): the request it sends on Out
// (BEGIN, the params, END) and the reply it receives on In. The reply's
// result goes out on the POST's response.
type exchange struct {
	engine.Stream // Out: the request; In: the reply
	p             *post
	onApp         engine.MessageConsumer
	state         exState
	params        []byte
	paramsSent    int
	resSlot       int // the app's reply, at resHead
	resLen        int
	parts         *noteParts   // a notification of the app's reply arriving in parts
	elicit        *elicitation // its brokered URL elicitation, pending its callback (elicit.go)
	deferred      [][]byte     // elicitation FLUSH extensions waiting for the params to be out
	tail          *resultTail  // a 2026-07-28 result that streams, followed to its end (tail.go)
}

// exState is an exchange's own state.
type exState uint8

const (
	resultStreams  exState = 1 << iota // the app's reply outgrew its slot and streams through
	endHeld                            // the params are out, their END waits for an elicitation
	waitCallback                       // a brokered URL elicitation awaits its callback
	waitAnswer                         // a URL elicitation awaits the client's answer
	elicitDeclined                     // the client declined the URL elicitation
	elicitTimedOut                     // the client cancelled it, or did not answer in time
	tailSplice                         // the streaming result's closing brace is still to come (tail.go)
)

// openApp opens the request's application stream. sid is the session id
// of request streams, nil for none (2026-07-28); name is a tool or prompt
// name or a resource uri, for the kinds that carry one.
func (p *post) openApp(kind uint8, sid, name, params []byte) bool {
	h := p.h
	w := h.w
	x := freelist.Pop(&h.exchanges)
	if x == nil {
		x = &exchange{resSlot: -1}
		x.onApp = x.onAppFrame
	}
	x.p = p
	x.Connect(w, h.cfg.ID, h.exitID, w.SupplyInitialID(h.exitID), x.onApp)
	// The request's frames carry the HTTP request's trace id and
	// authorization; the reply's WINDOW and RESET its trace id.
	x.Out.Trace, x.Out.Auth = p.Out.Trace, p.Out.Auth
	x.In.Trace = p.Out.Trace
	n := int32(len(params))
	if p.state&streamBody != 0 {
		n = -1 // not known yet
	}
	err := x.BeginWith(0, func(b *frame.BeginBuilder) {
		b.ExtensionDone(h.requestBeginEx(h.exB.Begin.WrapSlot(b.ExtensionBuffer()), kind, sid, name, n, p.requestTimeout()))
	})
	if err != nil {
		x.recycle()
		return false
	}
	p.ex = x
	x.params, x.paramsSent = params, 0
	if p.state&streamBody != 0 {
		x.params = nil
	}
	return true
}

// requestTimeout is the McpBeginEx timeout of the request's application
// stream, in ms: how long the application may hold it on a person, as
// Zilla's server sets it. It is elicitation.timeout for a session whose
// client takes URL elicitation, and 0 (no person to wait for) otherwise.
func (p *post) requestTimeout() int64 {
	if s := p.sess; s != nil && s.clientCaps&uint16(mcp.McpCapabilitiesClientElicitationUrl) != 0 {
		return p.h.s.elicitTimeout.Milliseconds()
	}
	return 0
}

// requestBeginEx writes the McpBeginEx of a request of kind with eb,
// wrapped where it goes, and returns its limit. A nil sid or name is
// null, but a generic request always names its method.
func (h *server) requestBeginEx(eb *mcp.McpBeginExBuilder, kind uint8, sid, name []byte, n int32, timeout int64) (int, error) {
	eb.TypeID(h.mcpTypeID)
	r := mcp.RequestBegin{
		SessionID: sid, SessionIDNull: sid == nil,
		Ident: name, IdentNull: name == nil && kind != mcp.McpBeginExKindRequest,
		ContentLength: n, Timeout: timeout,
	}
	r.Build(eb, kind)
	return eb.BuildLimit()
}

// recycle lets go of what the exchange holds and puts it on the free
// list: its POST is done with it.
func (x *exchange) recycle() {
	h := x.p.h
	if x.elicit != nil {
		x.dropElicit()
	}
	x.deferred = x.deferred[:0]
	x.freeRes()
	x.params, x.paramsSent, x.state = nil, 0, 0
	if x.parts != nil {
		x.parts.drop()
		x.parts.trim()
	}
	x.p = nil
	h.exchanges = append(h.exchanges, x)
}

// setSID sets a session id, null when sid is nil.
func setSID[B interface {
	SessionIDBytes(v []byte) B
	SessionIDNull() B
}](b B, sid []byte) B {
	return mcp.SetSessionID(b, sid, sid == nil)
}

// onAppFrame handles the application stream: its reply, and the throttle
// of the request.
func (x *exchange) onAppFrame(t frame.FrameType, buf []byte) {
	p := x.p
	h := p.h
	switch t {
	case frame.FrameWindow:
		if _, err := x.OnWindow(buf); streams.Received(err, x.failed) {
			x.sendParams()
		}
	case frame.FrameReset:
		var ext []byte
		if r, err := x.OnReset(buf); err == nil { // closes Out whatever it returns
			ext = r.Extension()
		}
		x.resetReply()
		x.onReset(ext)
	case frame.FrameBegin:
		if _, err := x.OnBegin(buf); err == nil {
			x.grantApp()
		}
	case frame.FrameData:
		if d, err := x.OnData(buf); streams.Received(err, x.failed) {
			x.onResult(d.Payload())
		}
	case frame.FrameChallenge:
		if c, err := x.OnChallenge(buf); err == nil {
			x.onChallenge(c.Extension())
		}
	case frame.FrameFlush:
		f, err := x.OnFlush(buf)
		if malformed(err) {
			break
		}
		ext, dropped := h.wholeNotification(&x.parts, f.Extension())
		if dropped != nil {
			h.answerDropped(x.p.sess, dropped, x.Out.Trace, x.Out.Auth)
		}
		if ext != nil {
			x.onFlush(ext)
			x.parts.trim()
		}
	case frame.FrameEnd:
		e, err := x.OnEnd(buf) // closes In whatever it returns
		if x.state&endHeld != 0 {
			// The application answered without the elicitation's end:
			// the params were whole.
			x.dropElicit()
			x.elicitDone(waitCallback | waitAnswer)
		}
		x.abortRequest() // an app that answers before reading all params is done with them
		outcome := mcp.McpOutcomeOk
		if !malformed(err) {
			if ext := e.Extension(); h.endEx.TryWrap(ext, 0, len(ext)) && h.endEx.TypeID() == h.mcpTypeID {
				outcome = h.endEx.Outcome()
			}
		}
		x.finish(outcome == mcp.McpOutcomeError)
	case frame.FrameAbort:
		x.OnAbort(buf) // closes In whatever it returns
		x.abortRequest()
		switch {
		case x.state&elicitDeclined != 0:
			p.appError(codeTransport, "Authorization declined")
		case x.state&elicitTimedOut != 0:
			p.appError(codeTransport, "Authorization timed out")
		default:
			p.appError(codeInternalError, "Internal error")
		}
	}
	if p.over() {
		p.release()
	}
}

// sendParams sends what the application's window allows of the params,
// then ends the request.
func (x *exchange) sendParams() {
	p := x.p
	if x.Out.Closed() || x.state&endHeld != 0 {
		return
	}
	streamed := p.state&streamBody != 0
	max := len(p.h.w.WriteBuffer()) - frameRoom
	for {
		var b []byte
		if streamed {
			b = p.paramsChunk()
		} else {
			b = x.params[x.paramsSent:]
		}
		if len(b) == 0 {
			break
		}
		n := int(min(x.Out.Available()-int64(x.Out.Pad), int64(len(b)), int64(max)))
		if n <= 0 {
			break
		}
		if err := x.Data(wholeData, b[:n], nil); err != nil {
			x.failed()
			return
		}
		x.paramsSent += n
		p.st.sent += int64(n)
	}
	if streamed {
		p.compactIn()
		if !p.paramsDone() {
			return
		}
	} else if x.paramsSent < len(x.params) {
		return
	}
	x.params = nil
	if !streamed && p.state&shimmable == 0 {
		p.freeIn() // a call the shim may serve keeps its params for a retry
	}
	if x.state&(waitCallback|waitAnswer) != 0 || len(x.deferred) > 0 {
		// The application hears of the elicitation's callback and answer
		// after the params and before the END.
		x.state |= endHeld
		if !x.sendDeferred() {
			x.failed()
			return
		}
		x.elicitDone(0)
		return
	}
	if err := x.End(nil); err != nil {
		x.failed() // the application never learns the params ended
	}
}

// abortRequest aborts the request side while it is still open. An ABORT
// the ring refuses is only logged: the request side is closed all the
// same.
func (x *exchange) abortRequest() {
	if x.Out.Closed() {
		return
	}
	x.params = nil
	if err := x.Abort(nil); err != nil {
		x.p.h.unsent(frame.FrameAbort, x.OutID(), err)
	}
}

// resetReply refuses the rest of the reply while it is still open.
func (x *exchange) resetReply() {
	if err := x.Reset(nil); err != nil {
		x.p.h.unsent(frame.FrameReset, x.InID(), err)
	}
}

// cancel closes both sides of the application stream.
func (x *exchange) cancel() {
	x.abortRequest()
	x.resetReply()
	x.freeRes()
	x.p.doneInflight()
}

// failed handles a flow-control violation by the application, or a frame
// to it the ring refused.
func (x *exchange) failed() {
	x.cancel()
	x.p.appError(codeInternalError, "Internal error")
}

func (x *exchange) freeRes() {
	if x.resSlot >= 0 {
		x.p.h.pool.Release(x.resSlot)
		x.resSlot, x.resLen = -1, 0
	}
}

// grantApp offers the reply its window. While the reply is held, that is
// the room its slot has; once it streams, what the network window and the
// queue leave.
func (x *exchange) grantApp() {
	if x.In.Closed() {
		return
	}
	p := x.p
	capacity := int64(p.h.pool.SlotCapacity())
	streams := x.state&resultStreams != 0
	var room int64
	if !streams {
		room = capacity - resHead - resTail
	} else {
		room = min(p.Out.Available()-int64(p.Out.Pad)-int64(p.queued()), capacity-int64(p.queued())-resTail)
		room = max(room, 0)
	}
	ack := x.In.Ack
	max := int32(room)
	if streams {
		// The room shrinks by more than the bytes received when each
		// DATA forwarded costs the reply's padding too (a chunked
		// response's): the credit given stays given.
		ack = x.In.Seq
		max = x.In.Keep(ack, max)
	}
	if ack == x.In.Ack && max == x.In.Max {
		return
	}
	x.In.Ack, x.In.Max = ack, max
	if err := x.Window(); err != nil {
		x.failed()
	}
}

// onResult takes reply DATA.
func (x *exchange) onResult(b []byte) {
	p := x.p
	h := p.h
	if p.replyOver() && p.flags&detached == 0 || len(b) == 0 {
		return
	}
	if x.state&resultStreams != 0 {
		x.streamResult(b)
		return
	}
	if x.resSlot < 0 {
		x.resSlot = h.pool.Acquire(x.ReplyID())
		if x.resSlot == engine.NoSlot {
			x.cancel()
			p.appError(codeInternalError, "Internal error: no buffer for the result")
			return
		}
	}
	buf := h.pool.Buffer(x.resSlot)
	room := len(buf) - resHead - resTail - x.resLen
	if len(b) > room {
		// Beyond the window granted.
		x.failed()
		return
	}
	x.resLen += copy(buf[resHead+x.resLen:], b)
	if x.resLen == len(buf)-resHead-resTail {
		// The slot is full and the reply goes on: stream it.
		x.startStreaming()
	}
}

// onFlush takes progress and other notifications of the request.
func (x *exchange) onFlush(ext []byte) {
	p := x.p
	h := p.h
	if !h.flushEx.TryWrap(ext, 0, len(ext)) || h.flushEx.TypeID() != h.mcpTypeID {
		return
	}
	kind := h.flushEx.Kind()
	switch kind {
	case mcp.McpFlushExKindClientRequest:
		h.onClientRequest(p.sess, p, h.flushEx.ClientRequest())
		return
	case mcp.McpFlushExKindElicitComplete:
		x.onElicitComplete(h.flushEx.ElicitComplete())
		return
	}
	if kind != mcp.McpFlushExKindProgress && kind != mcp.McpFlushExKindNotification || x.state&resultStreams != 0 && p.res.mode != modeSSE {
		return
	}
	if p.replyOver() && p.flags&detached == 0 {
		return
	}
	if kind == mcp.McpFlushExKindNotification {
		n := h.flushEx.Notification()
		if !n.HasMethod() || len(n.Method()) == 0 || h.upstreamCancelled(p.sess, n) {
			return
		}
		p.startSSE()
		b := p.appendEventHead(h.scratch[:0])
		b = appendNotification(b, n)
		b = append(b, "\n\n"...)
		p.event(b)
		return
	}
	pr := h.flushEx.Progress()
	if !pr.HasToken() || len(pr.Token()) == 0 {
		return
	}
	p.startSSE()
	b := p.appendEventHead(h.scratch[:0])
	b = append(b, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":`...)
	b = append(b, pr.Token()...)
	b = append(b, `,"progress":`...)
	b = appendInt(b, pr.Progress())
	if pr.Total() >= 0 {
		b = append(b, `,"total":`...)
		b = appendInt(b, pr.Total())
	}
	if pr.HasMessage() {
		b = append(b, `,"message":`...)
		b = jsonrpc.AppendString(b, pr.Message())
	}
	b = append(b, "}}\n\n"...)
	p.event(b)
}

// startStreaming sends the held reply and lets the rest stream through.
func (x *exchange) startStreaming() {
	p := x.p
	h := p.h
	x.state |= resultStreams
	b := h.pool.Buffer(x.resSlot)
	start, end := resHead, resHead+x.resLen
	at := -1
	if p.flags&stateless != 0 {
		// Too big to hold: what splice2026 adds goes in at the end, once
		// the members the result has are known.
		if x.tail == nil {
			x.tail = new(resultTail)
		}
		x.tail.reset(p.state&cacheable != 0, h.s.rounds)
		x.state |= tailSplice
		if at = x.tail.feed(b[start:end]); at >= 0 {
			x.state &^= tailSplice
		}
	}
	if p.res.mode == modeSSE {
		blankNewlines(b[start:end])
	}
	body := start
	start = p.prependHead(b, start, "result")
	if p.res.mode == modeNone {
		p.res.mode = modeJSON
		p.beginReply(200, "application/json", -1, nil)
	}
	slot := x.resSlot
	x.resSlot, x.resLen = -1, 0
	if at >= 0 {
		// The closing brace came in the slot: the result filled it exactly,
		// or ended in whitespace that did.
		ok := x.tailOK() && p.write(b[start:body+at]) && p.write(h.appendTail(h.aux[:0], x.tail)) && p.write(b[body+at:end])
		h.pool.Release(slot)
		if !ok && p.flags&detached == 0 {
			x.cancel()
			p.abortReply()
			return
		}
	} else if !p.writeSlot(slot, start, end) && p.flags&detached == 0 {
		x.cancel()
		p.abortReply()
		return
	}
	x.grantApp()
}

// tailOK takes the end of a result that streamed, which x.tail followed
// to its closing brace. It reports false, and the reply is cut short
// rather than finished, when the result has two readings (resultType, or
// an input_required result's inputRequests or requestState, named twice)
// or is an input_required result past inputRequired.maxRounds; otherwise
// it records the round an input_required result's requestState issues.
func (x *exchange) tailOK() bool {
	p, rt := x.p, x.tail
	dup := rt.t.Duplicates()
	if dup.Has(jsonrpc.MemberResultType) {
		return false
	}
	if p.state&roundCounted == 0 || !isInputRequired(rt.resultType()) {
		return true
	}
	if dup.Has(jsonrpc.MemberRequestState) || rt.t.KeysTwice().Has(jsonrpc.KeyInputRequests) {
		return false
	}
	round, ok := p.nextRound()
	if !ok {
		return false
	}
	if k, ok := rt.state.sum(&rt.t); ok {
		p.recordRound(k, round)
	}
	return true
}

// streamResult sends reply DATA that streams through.
func (x *exchange) streamResult(b []byte) {
	if x.state&tailSplice != 0 {
		if at := x.tail.feed(b); at >= 0 {
			x.state &^= tailSplice
			if !x.tailOK() {
				x.cancel()
				x.p.abortReply()
				return
			}
			if !x.sendResult(b[:at]) || !x.sendResult(x.p.h.appendTail(x.p.h.aux[:0], x.tail)) {
				return
			}
			b = b[at:]
		}
	}
	if x.sendResult(b) {
		x.grantApp()
	}
}

// sendResult sends b, a part of a result that streams through, and
// reports whether it could.
func (x *exchange) sendResult(b []byte) bool {
	p := x.p
	if len(b) == 0 {
		return true
	}
	if p.res.mode == modeSSE {
		b = append(p.h.scratch[:0], b...)
		blankNewlines(b)
	}
	if p.flags&detached == 0 && !p.write(b) {
		x.cancel()
		p.abortReply()
		return false
	}
	return true
}

// blankNewlines turns the line breaks of valid JSON, which can only be
// whitespace between tokens, into spaces, so the JSON is one SSE data line.
func blankNewlines(b []byte) {
	for i, c := range b {
		if c == '\n' || c == '\r' {
			b[i] = ' '
		}
	}
}

// prependHead writes the response's head in front of b[start:]: the SSE
// fields and the JSON-RPC envelope up to member, and returns the new start.
func (r *request) prependHead(b []byte, start int, member string) int {
	h := r.h
	head := h.aux[:0]
	if r.res.mode == modeSSE {
		head = r.appendEventHead(head)
	}
	head = r.appendHead(head, member)
	start -= len(head)
	copy(b[start:], head)
	return start
}

// finish completes the response once the reply has ended.
func (x *exchange) finish(isError bool) {
	p := x.p
	h := p.h
	if p.st.flags&idPending != 0 && !p.In.Closed() {
		// A streaming body's id comes after its params: answer once it
		// has arrived.
		p.st.flags |= deferred
		if isError {
			p.st.flags |= deferredError
		}
		return
	}
	p.doneInflight()
	isDetached := p.flags&detached != 0
	if p.replyOver() && !isDetached {
		x.freeRes()
		return
	}
	if x.state&resultStreams != 0 {
		tail := append(h.aux[:0], '}')
		if p.res.mode == modeSSE {
			tail = append(tail, "\n\n"...)
		}
		if !isDetached {
			p.write(tail)
			p.endReply()
		}
		return
	}
	if x.resSlot < 0 {
		x.resSlot = h.pool.Acquire(x.ReplyID())
		if x.resSlot == engine.NoSlot {
			p.appError(codeInternalError, "Internal error: no buffer for the result")
			return
		}
		if !isError {
			x.resLen = copy(h.pool.Buffer(x.resSlot)[resHead:], emptyObject)
		}
	}
	b := h.pool.Buffer(x.resSlot)
	start, end := resHead, resHead+x.resLen
	res := jsonrpc.TrimSpace(b[start:end])
	top := &h.body
	if p.state&cacheable != 0 && !isError {
		top = h.trackList(res)
	} else if len(res) > 0 && h.body.Track(res) != nil {
		top = nil
	}
	if len(res) == 0 || top == nil || isError && !isObject(res) {
		x.freeRes()
		p.appError(codeInternalError, "Internal error: the application's reply is not JSON")
		return
	}
	if !isError && top.Duplicates().Has(jsonrpc.MemberResultType) {
		// The client and the server could each take a different one.
		x.freeRes()
		p.appError(codeInternalError, "Internal error: the application's result names resultType twice")
		return
	}
	isStateless := p.flags&stateless != 0
	if p.state&listsTools != 0 && !isError {
		h.s.params.Learn(res)
	}
	if p.state&shimmable != 0 && !isError && isInputRequired(top.Member(jsonrpc.MemberResultType).Bytes(res)) {
		// A 2025-era client cannot take it: the legacy shim fulfils it
		// (shim.go).
		x.inputRequired(res)
		return
	}
	if p.state&roundCounted != 0 && !isError && isInputRequired(top.Member(jsonrpc.MemberResultType).Bytes(res)) {
		if msg := p.countRound(res); msg != "" {
			x.freeRes()
			p.appError(codeInternalError, msg)
			return
		}
	}
	member, status := "result", 200
	if isError {
		member = "error"
		if isStateless {
			bridgeError2026(res)
			status = errorStatus2026(res)
		}
	} else if isStateless {
		start = h.splice2026(b, start, end, p.state&cacheable != 0, top)
	} else if typ := top.Member(jsonrpc.MemberResultType).Bytes(res); p.state&cacheable != 0 || typ != nil && jsonrpc.KeyIs(typ, "complete") {
		// A 2026-07-28 application's result toward a 2025-era client
		// (a list's may have lost its resultType to the proxy's merge).
		start = h.strip2026(b, start, end, top)
	}
	if p.res.mode == modeSSE {
		blankNewlines(b[start:end])
	}
	start = p.prependHead(b, start, member)
	end += copy(b[end:], "}")
	if p.res.mode == modeSSE {
		end += copy(b[end:], "\n\n")
		if s := p.sess; s != nil && !isStateless {
			s.record(h, &p.res, b[start:end], true)
		}
	}
	slot := x.resSlot
	x.resSlot, x.resLen = -1, 0
	if isDetached {
		h.pool.Release(slot)
		return
	}
	if p.res.mode == modeNone {
		p.res.mode = modeJSON
		p.beginReply(status, "application/json", end-start, nil)
	}
	if !p.writeSlot(slot, start, end) {
		// No room for the answer: an end would read as complete.
		p.abortReply()
		return
	}
	p.endReply()
}

// maxLast bounds the list reply a worker keeps to compare the next with.
const maxLast = 64 << 10

// trackList reads a list's or a read's result with h.lists, unless it has
// the bytes of the one h.lists read last; it returns h.lists, or nil when
// res is not JSON.
func (h *server) trackList(res []byte) *jsonrpc.Tracker {
	if h.lastOK && bytes.Equal(res, h.last) {
		return &h.lists
	}
	h.lastOK = false
	if len(res) == 0 || h.lists.Track(res) != nil {
		return nil
	}
	if len(res) <= maxLast {
		h.last, h.lastOK = append(h.last[:0], res...), true
	}
	return &h.lists
}

// bridgeError2026 rewrites, in place, an application's error whose code
// the 2026-07-28 era changed: -32002 "Resource not found" (up to
// 2025-11-25) is -32602 now (SEP-2164). An application written for either
// era then answers both; the two codes have the same length.
func bridgeError2026(errObj []byte) {
	if code, ok := field(errObj, "code"); ok && string(code) == "-32002" {
		copy(code, "-32602")
	}
}

// errorStatus2026 is the HTTP status of an application's error under
// 2026-07-28 (MCP.md §3.3, §3.4).
func errorStatus2026(errObj []byte) int {
	code, ok := field(errObj, "code")
	if !ok {
		return 200
	}
	switch string(code) {
	case "-32601":
		return 404
	case "-32020", "-32021", "-32022":
		return 400
	}
	return 200
}

// splice2026 adds what every 2026-07-28 result carries (MCP.md §3.1,
// §3.4): "resultType":"complete" unless the app set a resultType (such as
// input_required), and _meta["io.modelcontextprotocol/serverInfo"], in
// the app's _meta when it has one; and, for a list or read (cacheable),
// SEP-2549's "ttlMs":0 and "cacheScope":"public" where the app set none
// (0: immediately stale; an absent scope means public, but the schema
// requires the member). The members go in after the object's opening
// brace, by moving what is before it into the room in front. It returns
// the new start of b[start:end]. top, when not nil, is the Tracker that
// has just validated the result: a result without _meta then needs no
// walk over its values, whose keys top knows. A result too big to hold
// gets the same members at its end instead (resultTail).
func (h *server) splice2026(b []byte, start, end int, cacheable bool, top *jsonrpc.Tracker) int {
	i := jsonrpc.SkipSpace(b[:end], start)
	if i >= end || b[i] != '{' {
		return start
	}
	res := b[i:end]
	var typ, meta []byte
	metaAt := 0 // meta's offset in b
	hasType, hasMeta, hasTTL, hasScope := false, false, false, false
	if top != nil && !top.Keys().Has(jsonrpc.KeyMeta) {
		// The Tracker ran over res from its first byte, so its ranges
		// are offsets in res.
		keys := top.Keys()
		typ = top.Member(jsonrpc.MemberResultType).Bytes(res)
		hasType, hasTTL, hasScope = typ != nil, keys.Has(jsonrpc.KeyTTLMs), keys.Has(jsonrpc.KeyCacheScope)
	} else {
		// One scan of the result's top level.
		for f, j, ok := jsonrpc.NextField(res, 0); ok; f, j, ok = jsonrpc.NextField(res, j) {
			switch {
			case jsonrpc.KeyIs(f.Key, "resultType"):
				typ, hasType = f.Value, true
			case jsonrpc.KeyIs(f.Key, "_meta"):
				meta, hasMeta, metaAt = f.Value, true, i+j-len(f.Value)
			case jsonrpc.KeyIs(f.Key, "ttlMs"):
				hasTTL = true
			case jsonrpc.KeyIs(f.Key, "cacheScope"):
				hasScope = true
			}
		}
		if hasMeta && isObject(meta) {
			if jsonrpc.Lookup(meta, "io.modelcontextprotocol/serverInfo") == nil {
				ins := append(h.aux[:0], `"io.modelcontextprotocol/serverInfo":`...)
				ins = append(ins, h.serverInfo...)
				if j := jsonrpc.SkipSpace(meta, 1); meta[j] != '}' {
					ins = append(ins, ',')
				}
				start = insertAt(b, start, metaAt+1, ins)
				i -= len(ins)
			}
		}
	}
	ins := h.appendSpliced(h.aux[:0], hasType, typ, hasMeta, hasTTL, hasScope, cacheable)
	if len(ins) == 0 {
		return start
	}
	if j := jsonrpc.SkipSpace(b[:end], i+1); j < end && b[j] != '}' {
		ins = append(ins, ',')
	}
	return insertAt(b, start, i+1, ins)
}

// appendSpliced appends, comma-separated, the members a 2026-07-28
// result lacks, given which it has (typ is its resultType's JSON text):
// "resultType":"complete", _meta with the serverInfo, and for a list or
// read that is complete, "ttlMs":0 and "cacheScope":"public".
func (h *server) appendSpliced(ins []byte, hasType bool, typ []byte, hasMeta, hasTTL, hasScope, cacheable bool) []byte {
	n := len(ins)
	sep := func(b []byte) []byte {
		if len(b) > n {
			b = append(b, ',')
		}
		return b
	}
	// An input_required result is no list or read to cache.
	cache := cacheable && (!hasType || string(typ) == `"complete"`)
	if !hasType {
		ins = append(ins, `"resultType":"complete"`...)
	}
	if !hasMeta {
		ins = sep(ins)
		ins = append(ins, `"_meta":{"io.modelcontextprotocol/serverInfo":`...)
		ins = append(ins, h.serverInfo...)
		ins = append(ins, '}')
	}
	if cache && !hasTTL {
		ins = append(sep(ins), `"ttlMs":0`...)
	}
	if cache && !hasScope {
		ins = append(sep(ins), `"cacheScope":"public"`...)
	}
	return ins
}

// strip2026 removes, in place, what a 2026-07-28 result carries that a
// 2025-era client has no use for: resultType, ttlMs, cacheScope and
// _meta's io.modelcontextprotocol/serverInfo (with the _meta, when nothing
// else is in it). The result, b[start:end], is a valid object; what is
// left of it is moved to end at end, and the new start returned. A result
// with none of them is left as it is. Only a result with resultType, or
// of a list or read, comes here, so a 2025 application's tools/call
// results cost nothing. top, when not nil, is the Tracker that has just
// validated the result (see has2026Members).
func (h *server) strip2026(b []byte, start, end int, top *jsonrpc.Tracker) int {
	i := jsonrpc.SkipSpace(b[:end], start)
	if i >= end || b[i] != '{' {
		return start
	}
	res := b[i:end]
	if !has2026Members(res, top) {
		return start
	}
	out := append(h.aux[:0], '{')
	for f, j, ok := jsonrpc.NextField(res, 0); ok; f, j, ok = jsonrpc.NextField(res, j) {
		switch {
		case jsonrpc.KeyIs(f.Key, "resultType"), jsonrpc.KeyIs(f.Key, "ttlMs"), jsonrpc.KeyIs(f.Key, "cacheScope"):
			continue
		case jsonrpc.KeyIs(f.Key, "_meta") && isObject(f.Value):
			mark := len(out)
			out = appendMemberSep(out)
			out = append(out, f.Key...)
			out = append(out, ":{"...)
			for g, k, ok := jsonrpc.NextField(f.Value, 0); ok; g, k, ok = jsonrpc.NextField(f.Value, k) {
				if jsonrpc.KeyIs(g.Key, "io.modelcontextprotocol/serverInfo") {
					continue
				}
				out = appendMember(out, g)
			}
			if out[len(out)-1] == '{' {
				out = out[:mark] // no member kept
				continue
			}
			out = append(out, '}')
			continue
		}
		out = appendMember(out, f)
	}
	out = append(out, '}')
	h.aux = out
	if len(out) > end-start {
		return start // cannot happen: only members go
	}
	start = end - len(out)
	copy(b[start:end], out)
	return start
}

// has2026Members reports whether res, a result object, has a member
// strip2026 removes. top, when not nil, is the Tracker that has just
// validated res: its members and noted keys tell the top level's keys
// without a walk over the values (a cached tools/list is a kilobyte or
// more of them), and only a _meta needs a look inside.
func has2026Members(res []byte, top *jsonrpc.Tracker) bool {
	if top != nil {
		keys := top.Keys()
		switch {
		case top.Members().Has(jsonrpc.MemberResultType), keys.Has(jsonrpc.KeyTTLMs), keys.Has(jsonrpc.KeyCacheScope):
			return true
		case !keys.Has(jsonrpc.KeyMeta):
			return false
		}
	}
	for f, j, ok := jsonrpc.NextField(res, 0); ok; f, j, ok = jsonrpc.NextField(res, j) {
		switch {
		case jsonrpc.KeyIs(f.Key, "resultType"), jsonrpc.KeyIs(f.Key, "ttlMs"), jsonrpc.KeyIs(f.Key, "cacheScope"):
			return true
		case jsonrpc.KeyIs(f.Key, "_meta") && isObject(f.Value) && jsonrpc.Lookup(f.Value, "io.modelcontextprotocol/serverInfo") != nil:
			return true
		}
	}
	return false
}

// appendMemberSep appends the comma before an object's next member, when
// dst, an object's text so far, has a member already.
// appendMember appends f as an object's member to dst, which holds the
// object so far: a comma first unless it is the first member.
func appendMember(dst []byte, f jsonrpc.Field) []byte {
	dst = appendMemberSep(dst)
	dst = append(dst, f.Key...)
	dst = append(dst, ':')
	return append(dst, f.Value...)
}

func appendMemberSep(dst []byte) []byte {
	if dst[len(dst)-1] != '{' {
		dst = append(dst, ',')
	}
	return dst
}

// insertAt inserts ins before b[pos], moving b[start:pos] left into the
// room in front, and returns the new start.
func insertAt(b []byte, start, pos int, ins []byte) int {
	n := len(ins)
	copy(b[start-n:], b[start:pos])
	copy(b[pos-n:pos], ins)
	return start - n
}

// onReset handles the application refusing the request (doc.go): a
// JSON-RPC error, or a bearer challenge (401, 403).
func (x *exchange) onReset(ext []byte) {
	p := x.p
	h := p.h
	p.doneInflight()
	x.freeRes()
	if p.replyOver() && p.flags&detached == 0 {
		return
	}
	if !h.resetEx.TryWrap(ext, 0, len(ext)) || h.resetEx.TypeID() != h.mcpTypeID {
		p.appError(codeInternalError, "Internal error")
		return
	}
	switch h.resetEx.Kind() {
	case mcp.McpResetExKindError:
		e := h.resetEx.Error()
		msg := append(h.msg[:0], "Internal error"...)
		if e.HasMessage() {
			msg = append(h.msg[:0], e.Message()...)
		}
		p.appErrorBytes(int(e.Code()), msg)
	case mcp.McpResetExKindBearer:
		p.bearer(h.resetEx.Bearer())
	default:
		p.appError(codeInternalError, "Internal error")
	}
}

// bearer answers a bearer challenge: 401 for a missing or invalid token,
// 403 for too little scope (RFC 6750 §3.1), 400 for a malformed request,
// with the WWW-Authenticate header an OAuth-aware client acts on.
func (p *post) bearer(b mcp.McpBearerResetEx) {
	status, code := 401, bearerInvalidToken
	switch b.Error() {
	case mcp.McpBearerErrorInsufficientScope:
		status, code = 403, bearerInsufficientScope
	case mcp.McpBearerErrorInvalidRequest:
		status, code = 400, bearerInvalidRequest
	}
	if p.res.mode != modeNone {
		// The head is out: the challenge can only be an error.
		p.appError(codeTransport, "Unauthorized")
		return
	}
	var realm, scopes, rm []byte
	if b.HasRealm() {
		realm = b.Realm()
	}
	if b.HasScopes() {
		scopes = b.Scopes()
	}
	if b.HasResourceMetadata() {
		rm = b.ResourceMetadata()
	}
	p.challenge(status, code, realm, scopes, rm)
}

// appError answers the request with an error, as a JSON response or as
// the last event of its stream.
func (p *post) appError(code int, msg string) {
	p.appErrorBytes(code, append(p.h.msg[:0], msg...))
}

func (p *post) appErrorBytes(code int, msg []byte) {
	h := p.h
	if p.st.flags&idPending != 0 && !p.In.Closed() && !p.replyOver() {
		// The id comes after a streaming body's params: answer with it.
		p.st.flags |= errDeferred
		p.st.errCode = code
		p.st.errLen = copy(p.st.errMsg[:], msg)
		p.skipParams()
		return
	}
	p.doneInflight()
	if p.replyOver() && p.flags&detached == 0 {
		return
	}
	if p.streaming() && p.res.mode != modeSSE {
		// Part of a result is out: only an abrupt end tells the client.
		p.abortReply()
		return
	}
	if p.res.mode == modeNone {
		status := 200
		if p.flags&stateless != 0 {
			switch code {
			case codeMethodNotFound:
				status = 404
			case codeHeaderMismatch, codeMissingCapabil, codeUnsupportedVer:
				status = 400
			}
		}
		p.transportErrorBytes(status, code, msg, nil)
		return
	}
	// An event stream: the error is its last event.
	e := p.appendEventHead(h.scratch[:0])
	e = appendErrorBody(e, p.res.id, code, msg, nil)
	e = append(e, "\n\n"...)
	if p.answerEvent(e) && p.flags&detached == 0 {
		p.endReply()
	}
}

// appendNotification appends a relayed notification's JSON-RPC message:
// its method and, when it has them, its params as they came.
func appendNotification(dst []byte, n mcp.McpNotificationFlushEx) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","method":`...)
	dst = jsonrpc.AppendString(dst, n.Method())
	if n.HasParams() && len(n.Params()) > 0 {
		dst = append(dst, `,"params":`...)
		dst = append(dst, n.Params()...)
	}
	return append(dst, '}')
}
