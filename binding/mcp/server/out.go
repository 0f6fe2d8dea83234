package server

import (
	"strconv"

	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/binding/mcp/jsonrpc"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/frame"
	"github.com/sluicehq/sluice/engine/telemetry"
)

// The response writer every role shares: the response goes out on the
// request stream's Out direction as a head (the reply BEGIN with its
// HttpBeginEx), body bytes sent as far as the http server's window allows
// with the rest queued in a buffer slot, and an END once the queue is
// out. The body is a JSON response or an event stream, whose events the
// session keeps for replay; a standing event stream gets keep-alives.

// Response modes.
const (
	modeNone  uint8 = iota // no response head sent yet
	modeJSON               // application/json
	modeSSE                // text/event-stream
	modeLocal              // a response the server wrote by itself
)

// response is what the response writer keeps besides the Out direction
// it writes on.
type response struct {
	q     outQueue
	mode  uint8
	held  int    // the status of a response held for the body's end
	allow string // the allow header of a 405
	// id is the JSON-RPC id the response answers (aliasing its POST's),
	// nil for none.
	id []byte
	// stream is the event stream's number in its session, and seq the
	// last event's sequence on it.
	stream, seq uint32
	// sid is the event stream's id text, which its event ids start with
	// (appendStreamID): sidLen 0 while the request's id is not known,
	// -1 when it makes no id text and the events go without ids.
	sidLen int
	sid    [maxStreamID]byte
	kaID   int64
	onKA   func()
	// dropped counts the events the response dropped: the first is
	// logged, all are counted in mcp.server.events.dropped.
	dropped int
}

// outQueue holds response bytes waiting for the network window: in a
// buffer slot, slot[off:off+n], and once they outgrow it in a buffer of
// the request's own, over[off:off+n], up to maxQueue. Events are not
// flow-controlled (FLUSH carries no credit), so a tool that logs faster
// than its client reads fills the queue.
type outQueue struct {
	slot   int
	off, n int
	over   []byte // the queue once it left the slot; nil before
}

// maxQueue bounds the bytes a response holds for a client that reads
// slower than its events come. Events stop short of it, past eventLimit,
// and are dropped with a warning: the rest is kept for the answer, which
// no event may crowd out.
const maxQueue = 8 << 20

// eventLimit is what a response may queue with an event that does not
// answer the request: maxQueue less room for an answer, which is at most
// a buffer slot (a held result) with the members the server adds, and
// at least half of maxQueue whatever the engine's slots.
func (h *server) eventLimit() int { return max(maxQueue-2*h.pool.SlotCapacity(), maxQueue/2) }

// frameRoom is what a DATA frame's header may take beyond its payload.
const frameRoom = 256

// wholeData flags a DATA as a whole message: the server sends each DATA
// of a response or of params as one.
const wholeData = frame.FlagDataInit | frame.FlagDataFin

// replyOver reports whether nothing more goes on the response: it ended,
// was aborted or reset, or will never begin.
func (r *request) replyOver() bool { return r.Out.Closed() || r.flags&replyDropped != 0 }

// beginReply sends the response head. length is the content-length, or -1
// for none (the http server then writes chunked); auth is a
// www-authenticate value or nil.
func (r *request) beginReply(status int, ctype string, length int, auth []byte) {
	if r.Out.Opening() || r.replyOver() {
		return
	}
	h := r.h
	err := r.BeginWith(0, func(b *frame.BeginBuilder) {
		hw := newHeaderWriter(b.ExtensionBuffer())
		hw.add(":status", statusString(status))
		if ctype != "" {
			hw.add("content-type", ctype)
		}
		if length >= 0 {
			var n [20]byte
			hw.addBytes("content-length", strconv.AppendInt(n[:0], int64(length), 10))
		}
		if r.flags&withSession != 0 && r.sess != nil {
			hw.add("mcp-session-id", r.sess.id)
		}
		if r.res.allow != "" {
			hw.add("allow", r.res.allow)
		}
		if auth != nil {
			hw.addBytes("www-authenticate", auth)
		}
		if status == 413 {
			// A body too large may still be coming: the connection
			// closes rather than read the rest (RFC 9110 §15.5.14).
			hw.add("connection", "close")
		}
		b.ExtensionDone(hw.finish(h.httpTypeID))
	})
	if err != nil {
		r.fail()
	}
}

// write sends p, queueing what the window does not take. It reports false
// when the queue has no room, and p was not sent.
func (r *request) write(p []byte) bool { return r.writeQueued(p, false) }

// writeQueued is write, with the bounds of an event (outQueue.push) when
// event is true.
func (r *request) writeQueued(p []byte, event bool) bool {
	if r.Out.Closed() || !r.Out.Opening() {
		return false
	}
	if r.res.q.n == 0 {
		p = p[r.sendWindowed(p):]
		if len(p) == 0 {
			return true
		}
	}
	return r.res.q.push(r.h, r.InitialID(), p, event)
}

// writeSlot sends slot[off:end] and gives the slot up: it becomes the
// queue when the window does not take it all and nothing was queued.
func (r *request) writeSlot(slot, off, end int) bool {
	h := r.h
	if r.Out.Closed() || !r.Out.Opening() {
		h.pool.Release(slot)
		return false
	}
	p := h.pool.Buffer(slot)[off:end]
	q := &r.res.q
	if q.n == 0 {
		sent := r.sendWindowed(p)
		if sent == len(p) || r.Out.Closed() {
			h.pool.Release(slot)
			return true
		}
		q.drop(h)
		*q = outQueue{slot: slot, off: off + sent, n: len(p) - sent}
		return true
	}
	ok := q.push(h, r.InitialID(), p, false)
	h.pool.Release(slot)
	return ok
}

// sendWindowed sends what the window allows of p in DATA frames and
// returns how much it sent. A DATA the ring refuses fails the request.
func (r *request) sendWindowed(p []byte) int {
	max := len(r.h.w.WriteBuffer()) - frameRoom
	sent := 0
	for sent < len(p) && !r.Out.Closed() {
		n := int(min(r.Out.Available()-int64(r.Out.Pad), int64(len(p)-sent), int64(max)))
		if n <= 0 {
			break
		}
		if err := r.Data(wholeData, p[sent:sent+n], nil); err != nil {
			r.fail()
			break
		}
		sent += n
	}
	return sent
}

// flushOut sends what the window allows of the queue, and the END owed
// once it is empty.
func (r *request) flushOut() {
	h := r.h
	q := &r.res.q
	if q.n > 0 {
		sent := r.sendWindowed(q.bytes(h))
		q.off += sent
		q.n -= sent
		if q.n > 0 {
			return
		}
		q.drop(h)
	}
	if r.Out.Closing() {
		r.endReply()
	}
}

// queued returns the bytes waiting for window.
func (r *request) queued() int { return r.res.q.n }

// endReply ends the response once the queue is out: until then Out is
// only closing.
func (r *request) endReply() {
	if r.Out.Closed() || !r.Out.Opening() {
		return
	}
	if r.res.q.n > 0 {
		r.Out.SetClosing()
		return
	}
	if err := r.End(nil); err != nil {
		r.h.unsent(frame.FrameEnd, r.OutID(), err)
	}
}

// abortReply cuts the response short. A response never begun cannot be
// aborted: the http server would wait for it; it gets a 500 instead, or,
// when the request is over already, none at all.
func (r *request) abortReply() {
	if r.replyOver() {
		return
	}
	r.res.q.drop(r.h)
	if !r.Out.Opening() {
		if !r.In.Closed() {
			// The client is still there (a failed app stream, say).
			r.res.mode = modeLocal
			r.beginReply(500, "", 0, nil)
			r.endReply()
			return
		}
		r.flags |= replyDropped
		return
	}
	if err := r.Abort(nil); err != nil {
		r.h.unsent(frame.FrameAbort, r.OutID(), err)
	}
}

// respondEmpty answers with status and no body (202, DELETE's 200).
func (r *request) respondEmpty(status int) {
	r.res.mode = modeLocal
	r.beginReply(status, "", 0, nil)
	r.endReply()
}

// respondJSON answers with a JSON body the server wrote. While the
// request's body is still arriving (a streaming body refused), the answer
// waits in the queue for its end: a client busy sending may not read a
// response sent before, and the http server would have to close the
// connection after it.
func (r *request) respondJSON(status int, body []byte) {
	r.res.mode = modeLocal
	if !r.In.Closed() && r.bodyLen <= r.h.s.maxBody {
		if r.res.q.push(r.h, r.InitialID(), body, false) {
			r.res.held = status
			return
		}
	}
	r.beginReply(status, "application/json", len(body), nil)
	r.write(body)
	r.endReply()
}

// sendHeld sends a response held for the body's end.
func (r *request) sendHeld() {
	status := r.res.held
	r.res.held = 0
	r.beginReply(status, "application/json", r.res.q.n, nil)
	r.flushOut()
	r.endReply()
}

// respondResult answers the request with a result the server wrote.
func (r *request) respondResult(result []byte) {
	b := r.appendHead(r.h.scratch[:0], "result")
	b = append(b, result...)
	b = append(b, '}')
	r.respondJSON(200, b)
}

// appendHead appends {"jsonrpc":"2.0","id":<id>,"<member>": .
func (r *request) appendHead(dst []byte, member string) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = append(dst, r.res.id...)
	dst = append(dst, `,"`...)
	dst = append(dst, member...)
	return append(dst, `":`...)
}

// rpcError answers a request with a JSON-RPC error of the server's own.
// The HTTP status follows the era: 200 before 2026-07-28, whose errors
// carry their own statuses (MCP.md §3.4: 404 for an unknown method, 400
// for a request the transport rejects).
func (r *request) rpcError(code int, msg string) {
	status := 200
	if r.flags&stateless != 0 {
		status = 400
		if code == codeMethodNotFound {
			status = 404
		}
	}
	r.transportErrorBytes(status, code, append(r.h.msg[:0], msg...), nil)
}

// transportError answers with status and a JSON-RPC error, with the
// request's id when it is known.
func (r *request) transportError(status, code int, msg string) {
	r.transportErrorBytes(status, code, append(r.h.msg[:0], msg...), nil)
}

func (r *request) transportErrorBytes(status, code int, msg, data []byte) {
	b := appendErrorBody(r.h.scratch[:0], r.res.id, code, msg, data)
	r.respondJSON(status, b)
}

// appendErrorBody appends a JSON-RPC error response: with the id when
// there is one, else with "id":null last, as the SDKs write it.
func appendErrorBody(dst, id []byte, code int, msg, data []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0",`...)
	if len(id) > 0 {
		dst = append(dst, `"id":`...)
		dst = append(dst, id...)
		dst = append(dst, ',')
	}
	dst = append(dst, `"error":{"code":`...)
	dst = appendInt(dst, int64(code))
	dst = append(dst, `,"message":`...)
	dst = jsonrpc.AppendString(dst, msg)
	if len(data) > 0 {
		dst = append(dst, `,"data":`...)
		dst = append(dst, data...)
	}
	dst = append(dst, '}')
	if len(id) == 0 {
		dst = append(dst, `,"id":null`...)
	}
	return append(dst, '}')
}

// startSSE turns the response into an event stream, with a priming event
// first for sessions at 2025-11-25 (MCP.md §1.1 rule 7).
func (r *request) startSSE() {
	if r.res.mode == modeSSE {
		return
	}
	r.res.mode = modeSSE
	h := r.h
	if s := r.sess; s != nil {
		s.streams++
		r.res.stream = s.streams
	}
	r.beginReply(200, "text/event-stream", -1, nil)
	if r.sess == nil || r.sess.version < mcp.Version20251125 {
		return
	}
	if sid := r.res.makeStreamID(); sid != nil {
		b := append(h.aux[:0], "id: "...)
		b = appendEventID(b, sid, 0)
		b = append(b, "\ndata: \n\n"...)
		r.write(b)
	}
}

// makeStreamID returns the id text of the response's event stream, made
// from the request's id the first time it is known; nil for none.
func (res *response) makeStreamID() []byte {
	if res.sidLen == 0 && res.id != nil {
		sid, ok := appendStreamID(res.sid[:0], res.id)
		res.sidLen = len(sid)
		if !ok {
			res.sidLen = -1
		}
	}
	return res.streamID()
}

// streamID returns the id text of the response's event stream, nil while
// it has none.
func (res *response) streamID() []byte {
	if res.sidLen <= 0 {
		return nil
	}
	return res.sid[:res.sidLen]
}

// appendEventHead appends the fields of the next event on the response's
// event stream: its id when the stream belongs to a session and has an
// id text.
func (r *request) appendEventHead(dst []byte) []byte {
	dst = append(dst, "event: message\n"...)
	if r.sess != nil && r.flags&stateless == 0 {
		r.res.seq++
		if sid := r.res.makeStreamID(); sid != nil {
			dst = append(dst, "id: "...)
			dst = appendEventID(dst, sid, r.res.seq)
			dst = append(dst, '\n')
		}
	}
	return append(dst, "data: "...)
}

// event sends one event of the response's stream, and keeps it for replay
// in the session's buffer; a detached response's events go only there,
// and on to a GET stream that resumed this one. An event the queue has no
// room for, short of the answer's, is dropped with a warning.
func (r *request) event(b []byte) { r.sendEvent(b, false) }

// sendEvent is event, and with kept for a request to the client: like an
// answer, it may use the room other events leave, since the upstream
// waits for what the client makes of it, and a session has at most
// maxClientRequests.
func (r *request) sendEvent(b []byte, kept bool) {
	if r.flags&detached == 0 && !r.writeQueued(b, !kept) {
		r.droppedEvent(kept)
	}
	r.record(b, kept)
}

// droppedEvent notes an event the response's queue had no room for: the
// first of the response is logged, each is counted.
func (r *request) droppedEvent(kept bool) {
	h := r.h
	if r.res.dropped == 0 {
		h.w.Logger().Warn("mcp: events dropped: the client reads slower than they come", "binding", h.cfg.Name,
			"queued", r.res.q.n, "request", kept)
	}
	r.res.dropped++
	if h.droppedEvents == nil {
		h.droppedEvents = h.w.Metrics().Counter(metricEventsDropped,
			telemetry.MustLabels("namespace", h.cfg.Namespace, "binding", h.cfg.Name))
	}
	h.droppedEvents.Add(1)
}

// The metrics of the response queues: the events dropped for clients
// that read slower than they came, and the bytes queued beyond slots.
const (
	metricEventsDropped = "mcp.server.events.dropped"
	metricQueued        = "mcp.server.queued"
	metricReplay        = "mcp.server.replay"
)

func init() {
	telemetry.Describe(metricEventsDropped, telemetry.KindCounter, telemetry.UnitNone,
		"The number of events a response dropped for a client that read slower than they came.")
	telemetry.Describe(metricQueued, telemetry.KindGauge, telemetry.UnitBytes,
		"The bytes the responses of a worker hold for slow clients beyond their buffer slots.")
	telemetry.Describe(metricReplay, telemetry.KindGauge, telemetry.UnitBytes,
		"The bytes the sessions of a worker keep for replay (Last-Event-ID).")
}

// answerEvent sends the event that answers the request, the stream's
// last, with the room events leave it. It reports false, with the
// response cut short, in the one case the answer still finds no room (one
// larger than that room): a stream that ended without its answer would
// read as complete.
func (r *request) answerEvent(b []byte) bool {
	r.record(b, true) // first: a client cut short resumes to find it
	if r.flags&detached == 0 && !r.write(b) {
		r.abortReply()
		return false
	}
	return true
}

// record keeps an event of a session's stream for replay; kept tells one
// other events may not crowd out (an answer, a request to the client).
func (r *request) record(b []byte, kept bool) {
	if s := r.sess; s != nil && r.flags&stateless == 0 {
		s.record(r.h, &r.res, b, kept)
	}
}

// armKeepalive arms the keep-alive of a standing event stream.
func (r *request) armKeepalive() {
	h := r.h
	r.res.kaID = h.w.TimerAt(h.w.Now().Add(h.s.keepalive), r.res.onKA)
}

// keepalive writes an SSE comment on an idle standing event stream: a
// GET stream or a subscriptions/listen. A stream whose bearer token has
// expired ends instead (auth.go).
func (r *request) keepalive() {
	r.res.kaID = 0
	if r.flags&eventStream == 0 || r.replyOver() {
		return
	}
	if r.tokenExpired() {
		r.role.gone()
		r.endEvents()
		r.endReply()
		r.role.release()
		return
	}
	if r.res.q.n == 0 {
		r.write(keepaliveComment)
	}
	r.armKeepalive()
	r.role.release()
}

var keepaliveComment = []byte(":\n\n")

// endEvents ends the standing event stream: no more keep-alives, and the
// request may be released once its response is over.
func (r *request) endEvents() {
	r.flags &^= eventStream
	r.stopKeepalive()
}

func (r *request) stopKeepalive() {
	r.h.w.Disarm(&r.res.kaID)
}

// push appends p to the queue, taking a slot for it when needed and
// moving to a buffer of its own when the slot cannot hold it. It reports
// false past maxQueue bytes queued, and for an event (one that does not
// answer a request) past eventLimit, or when its buffer would take the
// worker past maxWorkerQueue.
func (q *outQueue) push(h *server, owner int64, p []byte, event bool) bool {
	if len(p) == 0 {
		return true
	}
	limit := maxQueue
	if event {
		limit = h.eventLimit()
	}
	if q.n+len(p) > limit {
		return false
	}
	if q.over != nil {
		switch {
		case q.off+q.n+len(p) <= cap(q.over):
		case q.n+len(p) <= cap(q.over):
			q.over = q.over[:copy(q.over, q.over[q.off:q.off+q.n])]
			q.off = 0
		default:
			return q.grow(h, q.over[q.off:q.off+q.n], p, event)
		}
		q.over = append(q.over[:q.off+q.n], p...)
		q.n += len(p)
		return true
	}
	if q.slot < 0 {
		q.slot = h.pool.Acquire(owner)
		if q.slot == engine.NoSlot {
			return false
		}
		q.off, q.n = 0, 0
	}
	b := h.pool.Buffer(q.slot)
	if q.off+q.n+len(p) > len(b) {
		if q.n+len(p) > len(b) {
			return q.grow(h, b[q.off:q.off+q.n], p, event)
		}
		copy(b, b[q.off:q.off+q.n])
		q.off = 0
	}
	q.n += copy(b[q.off+q.n:], p)
	return true
}

// maxWorkerQueue bounds the bytes a worker's response queues hold in
// buffers of their own, beyond its buffer slots, for events: many clients
// that read slowly cannot make it hold maxQueue each. An answer may go
// past it, by at most a few slots per response.
const maxWorkerQueue = 64 << 20

// grow moves the queue, held then p, to a buffer of its own twice their
// size, up to maxQueue, giving up its slot or its smaller buffer.
func (q *outQueue) grow(h *server, held, p []byte, event bool) bool {
	size := min(2*(len(held)+len(p)), maxQueue)
	old := cap(q.over)
	if event && h.queuedOver.n-old+size > maxWorkerQueue {
		return false
	}
	over := make([]byte, 0, size)
	over = append(append(over, held...), p...)
	if q.slot >= 0 {
		h.pool.Release(q.slot)
	}
	h.queuedOver.add(h, metricQueued, size-old)
	*q = outQueue{slot: -1, n: len(over), over: over}
	return true
}

// heldBytes counts bytes a worker holds for its clients beyond its buffer
// slots, and shows them in a gauge, looked up on first use.
type heldBytes struct {
	n     int
	gauge *telemetry.Gauge
}

// add adds n bytes, to the gauge metric of h's binding too.
func (b *heldBytes) add(h *server, metric string, n int) {
	if n == 0 {
		return
	}
	b.n += n
	if b.gauge == nil {
		b.gauge = h.w.Metrics().Gauge(metric, telemetry.MustLabels("namespace", h.cfg.Namespace, "binding", h.cfg.Name))
	}
	b.gauge.Add(int64(n))
}

// bytes returns the queued bytes.
func (q *outQueue) bytes(h *server) []byte {
	if q.over != nil {
		return q.over[q.off : q.off+q.n]
	}
	return h.pool.Buffer(q.slot)[q.off : q.off+q.n]
}

// drop empties the queue and gives its slot or buffer back.
func (q *outQueue) drop(h *server) {
	if q.slot >= 0 {
		h.pool.Release(q.slot)
	}
	h.queuedOver.add(h, metricQueued, -cap(q.over))
	*q = outQueue{slot: -1}
}

func appendInt(dst []byte, v int64) []byte { return strconv.AppendInt(dst, v, 10) }
