package server

import (
	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/binding/mcp/jsonrpc"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/frame"
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

// openApp opens the request's application stream. sid is the session id
// of request streams, nil for none (2026-07-28); name is a tool or prompt
// name or a resource uri, for the kinds that carry one.
func (r *request) openApp(kind uint8, sid, name, params []byte) bool {
	h := r.h
	w := h.w
	r.appInitialID = w.SupplyInitialID(h.exitID)
	r.appReplyID = engine.ReplyID(r.appInitialID)
	buf := w.WriteBuffer()
	b := h.beginB.Wrap(buf, 0, len(buf)).
		OriginID(h.cfg.ID).RoutedID(h.exitID).StreamID(r.appInitialID).
		Sequence(0).Acknowledge(0).Maximum(0).
		TraceID(r.traceID).Authorization(r.authorization).
		Affinity(0)
	off, max, ok := b.ExtensionSlot()
	if !ok {
		return false
	}
	eb := h.mcpExB.Wrap(buf, off, max).TypeID(h.mcpTypeID)
	n := int32(len(params))
	if r.streamBody {
		n = -1 // not known yet
	}
	switch kind {
	case mcp.McpBeginExKindToolsList:
		setSID(eb.ToolsList(), sid)
	case mcp.McpBeginExKindToolsCall:
		setName(setSID(eb.ToolsCall(), sid), name).ContentLength(n)
	case mcp.McpBeginExKindPromptsList:
		setSID(eb.PromptsList(), sid)
	case mcp.McpBeginExKindPromptsGet:
		setName(setSID(eb.PromptsGet(), sid), name).ContentLength(n)
	case mcp.McpBeginExKindResourcesList:
		setSID(eb.ResourcesList(), sid)
	case mcp.McpBeginExKindResourcesRead:
		setURI(setSID(eb.ResourcesRead(), sid), name).ContentLength(n)
	case mcp.McpBeginExKindResourcesTemplatesList:
		setSID(eb.ResourcesTemplatesList(), sid)
	case mcp.McpBeginExKindResourcesSubscribe:
		setURI(setSID(eb.ResourcesSubscribe(), sid), name).ContentLength(n)
	case mcp.McpBeginExKindResourcesUnsubscribe:
		setURI(setSID(eb.ResourcesUnsubscribe(), sid), name).ContentLength(n)
	case mcp.McpBeginExKindRequest:
		setSID(eb.Request(), sid).MethodBytes(name).ContentLength(n)
	}
	limit, err := eb.BuildLimit()
	if err != nil {
		return false
	}
	m, err := b.ExtensionEnd(limit).BuildLimit()
	if err != nil {
		return false
	}
	if w.NewStream(buf[:m], r.onApp) != nil {
		return false
	}
	r.appOpen = true
	r.params, r.paramsSent = params, 0
	if r.streamBody {
		r.params = nil
	}
	return true
}

// setSID, setName and setURI set a field, null when the value is nil.
func setSID[B interface {
	SessionIDBytes(v []byte) B
	SessionIDNull() B
}](b B, sid []byte) B {
	return mcp.SetSessionID(b, sid, sid == nil)
}

// setName sets a name, null when a streaming body's head did not show it.
func setName[B interface {
	NameBytes(v []byte) B
	NameNull() B
}](b B, name []byte) B {
	return mcp.SetName(b, name, name == nil)
}

func setURI[B interface {
	URIBytes(v []byte) B
	URINull() B
}](b B, uri []byte) B {
	return mcp.SetURI(b, uri, uri == nil)
}

// onAppFrame handles the application stream: its reply, and the throttle
// of the request.
func (r *request) onAppFrame(t frame.FrameType, buf []byte) {
	h := r.h
	switch t {
	case frame.FrameWindow:
		if h.window.TryWrap(buf, 0, len(buf)) && h.window.StreamID() == r.appInitialID {
			if r.appOut.OnWindow(&h.window) != nil {
				r.appFailed()
				break
			}
			r.sendParams()
		}
	case frame.FrameReset:
		if h.reset.TryWrap(buf, 0, len(buf)) && h.reset.StreamID() == r.appInitialID {
			r.appInitialOver = true
			r.resetAppReply()
			r.onAppReset(h.reset.Extension())
		}
	case frame.FrameBegin:
		if h.begin.TryWrap(buf, 0, len(buf)) && h.begin.StreamID() == r.appReplyID {
			r.appIn.Seq, r.appIn.Ack = h.begin.Sequence(), h.begin.Acknowledge()
			r.grantApp()
		}
	case frame.FrameData:
		if h.data.TryWrap(buf, 0, len(buf)) && h.data.StreamID() == r.appReplyID {
			if r.appIn.OnData(&h.data) != nil {
				r.appFailed()
				break
			}
			r.onResult(h.data.Payload())
		}
	case frame.FrameFlush:
		if h.flush.TryWrap(buf, 0, len(buf)) && h.flush.StreamID() == r.appReplyID {
			_ = r.appIn.OnFrame(h.flush.Sequence())
			if ext := h.wholeNotification(&r.parts, h.flush.Extension()); ext != nil {
				r.onAppFlush(ext)
				r.parts.trim()
			}
		}
	case frame.FrameEnd:
		if h.end.TryWrap(buf, 0, len(buf)) && h.end.StreamID() == r.appReplyID {
			r.appReplyOver = true
			r.abortAppRequest() // an app that answers before reading all params is done with them
			outcome := mcp.McpOutcomeOk
			if ext := h.end.Extension(); h.endEx.TryWrap(ext, 0, len(ext)) && h.endEx.TypeID() == h.mcpTypeID {
				outcome = h.endEx.Outcome()
			}
			r.finish(outcome == mcp.McpOutcomeError)
		}
	case frame.FrameAbort:
		if h.abort.TryWrap(buf, 0, len(buf)) && h.abort.StreamID() == r.appReplyID {
			r.appReplyOver = true
			r.abortAppRequest()
			r.appError(codeInternalError, "Internal error")
		}
	}
	r.release()
}

// sendParams sends what the application's window allows of the params,
// then ends the request.
func (r *request) sendParams() {
	h := r.h
	if r.appInitialOver {
		return
	}
	max := len(h.w.WriteBuffer()) - frameRoom
	for {
		var p []byte
		if r.streamBody {
			p = r.paramsChunk()
		} else {
			p = r.params[r.paramsSent:]
		}
		if len(p) == 0 {
			break
		}
		n := int(min(r.appOut.Available()-int64(r.appOut.Pad), int64(len(p)), int64(max)))
		if n <= 0 {
			break
		}
		p = p[:n]
		buf := h.w.WriteBuffer()
		reserved := r.appOut.Send(n)
		m, err := h.dataB.Wrap(buf, 0, len(buf)).
			OriginID(h.cfg.ID).RoutedID(h.exitID).StreamID(r.appInitialID).
			Sequence(r.appOut.Seq - int64(reserved)).Acknowledge(r.appOut.Ack).Maximum(r.appOut.Max).
			TraceID(r.traceID).Authorization(r.authorization).
			Flags(3).BudgetID(r.appOut.Budget).Reserved(reserved).Payload(p).
			BuildLimit()
		if err == nil {
			err = h.w.Send(frame.FrameData, buf[:m])
		}
		if err != nil {
			r.appFailed()
			return
		}
		r.paramsSent += n
		r.st.sent += int64(n)
	}
	if r.streamBody {
		r.compactIn()
		if !r.paramsDone() {
			return
		}
	} else if r.paramsSent < len(r.params) {
		return
	}
	r.appInitialOver = true
	r.params = nil
	if !r.streamBody {
		r.freeIn()
	}
	buf := h.w.WriteBuffer()
	m, err := h.endB.Wrap(buf, 0, len(buf)).
		OriginID(h.cfg.ID).RoutedID(h.exitID).StreamID(r.appInitialID).
		Sequence(r.appOut.Seq).Acknowledge(r.appOut.Ack).Maximum(r.appOut.Max).
		TraceID(r.traceID).Authorization(r.authorization).
		BuildLimit()
	if err == nil {
		_ = h.w.Send(frame.FrameEnd, buf[:m])
	}
}

// abortAppRequest aborts the request side while it is still open.
func (r *request) abortAppRequest() {
	if !r.appOpen || r.appInitialOver {
		return
	}
	r.appInitialOver = true
	r.params = nil
	h := r.h
	buf := h.w.WriteBuffer()
	m, err := h.abortB.Wrap(buf, 0, len(buf)).
		OriginID(h.cfg.ID).RoutedID(h.exitID).StreamID(r.appInitialID).
		Sequence(r.appOut.Seq).Acknowledge(r.appOut.Ack).Maximum(r.appOut.Max).
		TraceID(r.traceID).Authorization(r.authorization).
		BuildLimit()
	if err == nil {
		_ = h.w.Send(frame.FrameAbort, buf[:m])
	}
}

// resetAppReply refuses the rest of the reply while it is still open.
func (r *request) resetAppReply() {
	if !r.appOpen || r.appReplyOver {
		return
	}
	r.appReplyOver = true
	h := r.h
	buf := h.w.WriteBuffer()
	m, err := h.resetB.Wrap(buf, 0, len(buf)).
		OriginID(h.cfg.ID).RoutedID(h.exitID).StreamID(r.appReplyID).
		Sequence(r.appIn.Seq).Acknowledge(r.appIn.Ack).Maximum(r.appIn.Max).
		TraceID(r.traceID).
		BuildLimit()
	if err == nil {
		_ = h.w.Send(frame.FrameReset, buf[:m])
	}
}

// cancelApp closes both sides of the application stream.
func (r *request) cancelApp() {
	r.abortAppRequest()
	r.resetAppReply()
	r.freeRes()
	r.doneInflight()
}

// appFailed handles a flow-control violation by the application.
func (r *request) appFailed() {
	r.cancelApp()
	r.appError(codeInternalError, "Internal error")
}

func (r *request) doneInflight() {
	if r.inflight {
		r.sess.removeInflight(r, r.gen)
		r.inflight = false
	}
}

// grantApp offers the reply its window. While the reply is held, that is
// the room its slot has; once it streams, what the network window and the
// queue leave.
func (r *request) grantApp() {
	if !r.appOpen || r.appReplyOver {
		return
	}
	h := r.h
	capacity := int64(h.pool.SlotCapacity())
	var room int64
	if !r.streaming {
		room = capacity - resHead - resTail
	} else {
		room = min(r.out.Available()-int64(r.out.Pad)-int64(r.queued()), capacity-int64(r.queued())-resTail)
		room = max(room, 0)
	}
	ack := r.appIn.Ack
	max := int32(room)
	if r.streaming {
		// The room shrinks by more than the bytes received when each
		// DATA forwarded costs the reply's padding too (a chunked
		// response's): the credit given stays given.
		ack = r.appIn.Seq
		max = r.appIn.Keep(ack, max)
	}
	if ack == r.appIn.Ack && max == r.appIn.Max {
		return
	}
	r.appIn.Ack, r.appIn.Max = ack, max
	buf := h.w.WriteBuffer()
	n, err := h.windowB.Wrap(buf, 0, len(buf)).
		OriginID(h.cfg.ID).RoutedID(h.exitID).StreamID(r.appReplyID).
		Sequence(r.appIn.Seq).Acknowledge(r.appIn.Ack).Maximum(r.appIn.Max).
		TraceID(r.traceID).BudgetID(0).Padding(0).
		BuildLimit()
	if err == nil {
		_ = h.w.Send(frame.FrameWindow, buf[:n])
	}
}

// onResult takes reply DATA.
func (r *request) onResult(p []byte) {
	h := r.h
	if r.outOver && !r.detached || len(p) == 0 {
		return
	}
	if r.streaming {
		r.streamResult(p)
		return
	}
	if r.resSlot < 0 {
		r.resSlot = h.pool.Acquire(r.appReplyID)
		if r.resSlot == engine.NoSlot {
			r.resSlot = -1
			r.cancelApp()
			r.appError(codeInternalError, "Internal error: no buffer for the result")
			return
		}
	}
	b := h.pool.Buffer(r.resSlot)
	room := len(b) - resHead - resTail - r.resLen
	if len(p) > room {
		// Beyond the window granted.
		r.appFailed()
		return
	}
	r.resLen += copy(b[resHead+r.resLen:], p)
	if r.resLen == len(b)-resHead-resTail {
		// The slot is full and the reply goes on: stream it.
		r.startStreaming()
	}
}

// onAppFlush takes progress and other notifications of the request.
func (r *request) onAppFlush(ext []byte) {
	h := r.h
	if !h.flushEx.TryWrap(ext, 0, len(ext)) || h.flushEx.TypeID() != h.mcpTypeID {
		return
	}
	kind := h.flushEx.Kind()
	if kind != mcp.McpFlushExKindProgress && kind != mcp.McpFlushExKindNotification || r.streaming && r.mode != modeSSE {
		return
	}
	if r.outOver && !r.detached {
		return
	}
	if kind == mcp.McpFlushExKindNotification {
		n := h.flushEx.Notification()
		if !n.HasMethod() || len(n.Method()) == 0 {
			return
		}
		r.startSSE()
		b := r.appendEventHead(h.scratch[:0])
		b = appendNotification(b, n)
		b = append(b, "\n\n"...)
		r.event(b)
		return
	}
	p := h.flushEx.Progress()
	if !p.HasToken() || len(p.Token()) == 0 {
		return
	}
	r.startSSE()
	b := r.appendEventHead(h.scratch[:0])
	b = append(b, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":`...)
	b = append(b, p.Token()...)
	b = append(b, `,"progress":`...)
	b = appendInt(b, p.Progress())
	if p.Total() >= 0 {
		b = append(b, `,"total":`...)
		b = appendInt(b, p.Total())
	}
	if p.HasMessage() {
		b = append(b, `,"message":`...)
		b = jsonrpc.AppendString(b, p.Message())
	}
	b = append(b, "}}\n\n"...)
	r.event(b)
}

// startSSE turns the response into an event stream, with a priming event
// first for sessions at 2025-11-25 (MCP.md §1.1 rule 7).
func (r *request) startSSE() {
	if r.mode == modeSSE {
		return
	}
	r.mode = modeSSE
	h := r.h
	if s := r.sess; s != nil {
		s.streams++
		r.stream = s.streams
	}
	r.beginReply(200, "text/event-stream", -1, nil)
	if r.sess != nil && r.sess.version >= mcp.Version20251125 {
		b := append(h.aux[:0], "id: "...)
		b = appendEventID(b, r.stream, 0)
		b = append(b, "\ndata: \n\n"...)
		r.write(b)
	}
}

// appendEventHead appends the fields of the next event on the response's
// SSE stream: its id when the stream belongs to a session.
func (r *request) appendEventHead(dst []byte) []byte {
	dst = append(dst, "event: message\n"...)
	if r.sess != nil && !r.stateless {
		r.seq++
		dst = append(dst, "id: "...)
		dst = appendEventID(dst, r.stream, r.seq)
		dst = append(dst, '\n')
	}
	return append(dst, "data: "...)
}

// event sends one event of the response's stream, and keeps it for replay
// in the session's buffer; a detached response's events go only there,
// and on to a GET stream that resumed this one.
func (r *request) event(b []byte) {
	if !r.detached {
		if !r.write(b) {
			r.h.w.Logger().Warn("mcp: event dropped: response queue full", "binding", r.h.cfg.Name)
		}
	}
	if s := r.sess; s != nil && !r.stateless {
		s.record(r.h, r.stream, r.seq, b)
	}
}

// startStreaming sends the held reply and lets the rest stream through.
func (r *request) startStreaming() {
	h := r.h
	r.streaming = true
	b := h.pool.Buffer(r.resSlot)
	start, end := resHead, resHead+r.resLen
	if r.stateless {
		// Too big to look for the app's own members: splice blindly.
		start = r.splice2026(b, start, end, true)
	}
	if r.mode == modeSSE {
		blankNewlines(b[start:end])
	}
	start = r.prependHead(b, start, "result")
	if r.mode == modeNone {
		r.mode = modeJSON
		r.beginReply(200, "application/json", -1, nil)
	}
	slot := r.resSlot
	r.resSlot, r.resLen = -1, 0
	r.writeSlot(slot, start, end)
	r.grantApp()
}

// streamResult sends reply DATA that streams through.
func (r *request) streamResult(p []byte) {
	h := r.h
	if r.mode == modeSSE {
		p = append(h.scratch[:0], p...)
		blankNewlines(p)
	}
	if !r.detached && !r.write(p) {
		r.cancelApp()
		r.abortReply()
		return
	}
	r.grantApp()
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
	if r.mode == modeSSE {
		head = r.appendEventHead(head)
	}
	head = r.appendHead(head, member)
	start -= len(head)
	copy(b[start:], head)
	return start
}

// finish completes the response once the reply has ended.
func (r *request) finish(isError bool) {
	h := r.h
	if r.st.idPending && !r.inOver {
		// A streaming body's id comes after its params: answer once it
		// has arrived.
		r.st.deferred, r.st.deferredE = true, isError
		return
	}
	r.doneInflight()
	if r.outOver && !r.detached {
		r.freeRes()
		return
	}
	if r.streaming {
		tail := append(h.aux[:0], '}')
		if r.mode == modeSSE {
			tail = append(tail, "\n\n"...)
		}
		if !r.detached {
			r.write(tail)
			r.endReply()
		}
		return
	}
	if r.resSlot < 0 {
		r.resSlot = h.pool.Acquire(r.appReplyID)
		if r.resSlot == engine.NoSlot {
			r.resSlot = -1
			r.appError(codeInternalError, "Internal error: no buffer for the result")
			return
		}
		if !isError {
			r.resLen = copy(h.pool.Buffer(r.resSlot)[resHead:], emptyObject)
		}
	}
	b := h.pool.Buffer(r.resSlot)
	start, end := resHead, resHead+r.resLen
	res := jsonrpc.TrimSpace(b[start:end])
	if len(res) == 0 || h.body.Track(res) != nil || isError && !isObject(res) {
		r.freeRes()
		r.appError(codeInternalError, "Internal error: the application's reply is not JSON")
		return
	}
	member, status := "result", 200
	if isError {
		member = "error"
		if r.stateless {
			bridgeError2026(res)
			status = errorStatus2026(res)
		}
	} else if r.stateless {
		start = r.splice2026(b, start, end, false)
	}
	if r.mode == modeSSE {
		blankNewlines(b[start:end])
	}
	start = r.prependHead(b, start, member)
	end += copy(b[end:], "}")
	if r.mode == modeSSE {
		end += copy(b[end:], "\n\n")
		if s := r.sess; s != nil && !r.stateless {
			s.record(r.h, r.stream, r.seq, b[start:end])
		}
	}
	slot := r.resSlot
	r.resSlot, r.resLen = -1, 0
	if r.detached {
		h.pool.Release(slot)
		return
	}
	if r.mode == modeNone {
		r.mode = modeJSON
		r.beginReply(status, "application/json", end-start, nil)
	}
	r.writeSlot(slot, start, end)
	r.endReply()
}

// bridgeError2026 rewrites, in place, an application's error whose code
// the 2026-07-28 era changed: -32002 "Resource not found" (up to
// 2025-11-25) is -32602 now (SEP-2164). An application written for either
// era then answers both; the two codes have the same length.
func bridgeError2026(errObj []byte) {
	if code := jsonrpc.Lookup(errObj, "code"); string(code) == "-32002" {
		copy(code, "-32602")
	}
}

// errorStatus2026 is the HTTP status of an application's error under
// 2026-07-28 (MCP.md §3.3, §3.4).
func errorStatus2026(errObj []byte) int {
	code := jsonrpc.Lookup(errObj, "code")
	if code == nil {
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
// the new start of b[start:end]. blind skips looking for the app's
// members, for a result too big to hold.
func (r *request) splice2026(b []byte, start, end int, blind bool) int {
	h := r.h
	i := jsonrpc.SkipSpace(b[:end], start)
	if i >= end || b[i] != '{' {
		return start
	}
	res := b[i:end]
	var typ, meta []byte
	metaAt := 0 // meta's offset in b
	hasType, hasMeta, hasTTL, hasScope := false, false, false, false
	if !blind {
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
	// An input_required result is no list or read to cache.
	cache := r.cacheable && (!hasType || string(typ) == `"complete"`)
	ins := h.aux[:0]
	if !hasType {
		ins = append(ins, `"resultType":"complete"`...)
	}
	if !hasMeta {
		ins = appendSep(ins)
		ins = append(ins, `"_meta":{"io.modelcontextprotocol/serverInfo":`...)
		ins = append(ins, h.serverInfo...)
		ins = append(ins, '}')
	}
	if cache && !hasTTL {
		ins = append(appendSep(ins), `"ttlMs":0`...)
	}
	if cache && !hasScope {
		ins = append(appendSep(ins), `"cacheScope":"public"`...)
	}
	if len(ins) == 0 {
		return start
	}
	if j := jsonrpc.SkipSpace(b[:end], i+1); blind || j < end && b[j] != '}' {
		ins = append(ins, ',')
	}
	return insertAt(b, start, i+1, ins)
}

// appendSep appends the comma between members, when dst has one already.
func appendSep(dst []byte) []byte {
	if len(dst) > 0 {
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

// onAppReset handles the application refusing the request (doc.go): a
// JSON-RPC error, or a bearer challenge (401, 403).
func (r *request) onAppReset(ext []byte) {
	h := r.h
	r.doneInflight()
	r.freeRes()
	if r.outOver && !r.detached {
		return
	}
	if !h.resetEx.TryWrap(ext, 0, len(ext)) || h.resetEx.TypeID() != h.mcpTypeID {
		r.appError(codeInternalError, "Internal error")
		return
	}
	switch h.resetEx.Kind() {
	case mcp.McpResetExKindError:
		e := h.resetEx.Error()
		msg := append(h.msg[:0], "Internal error"...)
		if e.HasMessage() {
			msg = append(h.msg[:0], e.Message()...)
		}
		r.appErrorBytes(int(e.Code()), msg)
	case mcp.McpResetExKindBearer:
		r.bearer(h.resetEx.Bearer())
	default:
		r.appError(codeInternalError, "Internal error")
	}
}

// bearer answers a bearer challenge: 401 for a missing or invalid token,
// 403 for too little scope (RFC 6750 §3.1), 400 for a malformed request,
// with the WWW-Authenticate header an OAuth-aware client acts on.
func (r *request) bearer(b mcp.McpBearerResetEx) {
	h := r.h
	status, code := 401, "invalid_token"
	switch b.Error() {
	case mcp.McpBearerErrorInsufficientScope:
		status, code = 403, "insufficient_scope"
	case mcp.McpBearerErrorInvalidRequest:
		status, code = 400, "invalid_request"
	}
	if r.mode != modeNone {
		// The head is out: the challenge can only be an error.
		r.appError(codeTransport, "Unauthorized")
		return
	}
	auth := append(h.aux[:0], "Bearer"...)
	sep := " "
	param := func(name string, v []byte) {
		auth = append(auth, sep...)
		auth = append(auth, name...)
		auth = append(auth, '=')
		auth = jsonrpc.AppendString(auth, v)
		sep = ", "
	}
	if b.HasRealm() {
		param("realm", b.Realm())
	}
	param("error", []byte(code))
	if b.HasScopes() {
		param("scope", b.Scopes())
	}
	if b.HasResourceMetadata() {
		param("resource_metadata", b.ResourceMetadata())
	}
	msg := append(h.msg[:0], "Unauthorized: "...)
	if status == 403 {
		msg = append(h.msg[:0], "Forbidden: "...)
	}
	msg = append(msg, code...)
	body := appendErrorBody(h.scratch[:0], r.id[:r.idLen], codeTransport, msg, nil)
	r.mode = modeLocal
	r.beginReply(status, "application/json", len(body), auth)
	r.write(body)
	r.endReply()
}

// appError answers the request with an error, as a JSON response or as
// the last event of its stream.
func (r *request) appError(code int, msg string) {
	r.appErrorBytes(code, append(r.h.msg[:0], msg...))
}

func (r *request) appErrorBytes(code int, msg []byte) {
	h := r.h
	if r.st.idPending && !r.inOver && !r.outOver {
		// The id comes after a streaming body's params: answer with it.
		r.st.errDeferred, r.st.errCode = true, code
		r.st.errLen = copy(r.st.errMsg[:], msg)
		r.skipParams()
		return
	}
	r.doneInflight()
	if r.outOver && !r.detached {
		return
	}
	if r.streaming && r.mode != modeSSE {
		// Part of a result is out: only an abrupt end tells the client.
		r.abortReply()
		return
	}
	if r.mode == modeNone {
		status := 200
		if r.stateless {
			switch code {
			case codeMethodNotFound:
				status = 404
			case codeHeaderMismatch, codeMissingCapabil, codeUnsupportedVer:
				status = 400
			}
		}
		r.transportErrorBytes(status, code, msg, nil)
		return
	}
	// An event stream: the error is its last event.
	e := r.appendEventHead(h.scratch[:0])
	e = appendErrorBody(e, r.id[:r.idLen], code, msg, nil)
	e = append(e, "\n\n"...)
	r.event(e)
	if !r.detached {
		r.endReply()
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
