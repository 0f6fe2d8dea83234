package server

import (
	"strconv"

	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/frame"
)

// The response side of an HTTP stream: a head (the reply BEGIN with its
// HttpBeginEx), body bytes sent as far as the http server's window allows
// with the rest queued in a buffer slot, and an END once the queue is out.

// frameRoom is what a DATA frame's header may take beyond its payload.
const frameRoom = 256

// beginReply sends the response head. length is the content-length, or -1
// for none (the http server then writes chunked); auth is a
// www-authenticate value or nil.
func (r *request) beginReply(status int, ctype string, length int, auth []byte) {
	if r.replyBegun || r.outOver {
		return
	}
	h := r.h
	buf := h.w.WriteBuffer()
	b := h.beginB.Wrap(buf, 0, len(buf)).
		OriginID(r.originID).RoutedID(r.routedID).StreamID(r.replyID).
		Sequence(r.out.Seq).Acknowledge(r.out.Ack).Maximum(r.out.Max).
		TraceID(r.traceID).Authorization(r.authorization).
		Affinity(0)
	off, max, ok := b.ExtensionSlot()
	if !ok {
		r.fail()
		return
	}
	eb := h.httpExB.Wrap(buf, off, max).TypeID(h.httpTypeID)
	hs := eb.Headers()
	hs.Item().Name(":status").Value(statusString(status))
	if ctype != "" {
		hs.Item().Name("content-type").Value(ctype)
	}
	if length >= 0 {
		var n [20]byte
		hs.Item().Name("content-length").ValueBytes(strconv.AppendInt(n[:0], int64(length), 10))
	}
	if r.hdrSession && r.sess != nil {
		hs.Item().Name("mcp-session-id").Value(r.sess.id)
	}
	if r.hdrAllow != "" {
		hs.Item().Name("allow").Value(r.hdrAllow)
	}
	if auth != nil {
		hs.Item().Name("www-authenticate").ValueBytes(auth)
	}
	limit, err := eb.BuildLimit()
	if err != nil {
		r.fail()
		return
	}
	n, err := b.ExtensionEnd(limit).BuildLimit()
	if err == nil {
		err = h.w.Send(frame.FrameBegin, buf[:n])
	}
	if err != nil {
		r.fail()
		return
	}
	r.replyBegun = true
}

// write sends p, queueing what the window does not take. It reports false
// when the queue has no room, and p was not sent.
func (r *request) write(p []byte) bool {
	if r.outOver || !r.replyBegun {
		return false
	}
	if r.q.n == 0 {
		p = p[r.sendWindowed(p):]
		if len(p) == 0 {
			return true
		}
	}
	return r.q.push(r.h, r.initialID, p)
}

// writeSlot sends slot[off:end] and gives the slot up: it becomes the
// queue when the window does not take it all and nothing was queued.
func (r *request) writeSlot(slot, off, end int) bool {
	h := r.h
	if r.outOver || !r.replyBegun {
		h.pool.Release(slot)
		return false
	}
	p := h.pool.Buffer(slot)[off:end]
	if r.q.n == 0 {
		sent := r.sendWindowed(p)
		if sent == len(p) || r.outOver {
			h.pool.Release(slot)
			return true
		}
		r.q.drop(h)
		r.q = outQueue{slot: slot, off: off + sent, n: len(p) - sent}
		return true
	}
	ok := r.q.push(h, r.initialID, p)
	h.pool.Release(slot)
	return ok
}

// sendWindowed sends what the window allows of p in DATA frames and
// returns how much it sent.
func (r *request) sendWindowed(p []byte) int {
	h := r.h
	max := len(h.w.WriteBuffer()) - frameRoom
	sent := 0
	for sent < len(p) && !r.outOver {
		n := int(min(r.out.Available()-int64(r.out.Pad), int64(len(p)-sent), int64(max)))
		if n <= 0 {
			break
		}
		if !r.sendData(p[sent : sent+n]) {
			break
		}
		sent += n
	}
	return sent
}

func (r *request) sendData(p []byte) bool {
	h := r.h
	buf := h.w.WriteBuffer()
	reserved := r.out.Send(len(p))
	n, err := h.dataB.Wrap(buf, 0, len(buf)).
		OriginID(r.originID).RoutedID(r.routedID).StreamID(r.replyID).
		Sequence(r.out.Seq - int64(reserved)).Acknowledge(r.out.Ack).Maximum(r.out.Max).
		TraceID(r.traceID).Authorization(r.authorization).
		Flags(3).BudgetID(r.out.Budget).Reserved(reserved).Payload(p).
		BuildLimit()
	if err == nil {
		err = h.w.Send(frame.FrameData, buf[:n])
	}
	if err != nil {
		r.fail()
		return false
	}
	return true
}

// flushOut sends what the window allows of the queue, and the END owed
// once it is empty.
func (r *request) flushOut() {
	h := r.h
	if r.q.n > 0 {
		sent := r.sendWindowed(r.q.bytes(h))
		r.q.off += sent
		r.q.n -= sent
		if r.q.n > 0 {
			return
		}
		r.q.drop(h)
	}
	if r.endPending {
		r.endReply()
	}
}

// queued returns the bytes waiting for window.
func (r *request) queued() int { return r.q.n }

// endReply ends the response once the queue is out.
func (r *request) endReply() {
	if r.outOver || !r.replyBegun {
		return
	}
	if r.q.n > 0 {
		r.endPending = true
		return
	}
	r.endPending = false
	r.outOver = true
	h := r.h
	buf := h.w.WriteBuffer()
	n, err := h.endB.Wrap(buf, 0, len(buf)).
		OriginID(r.originID).RoutedID(r.routedID).StreamID(r.replyID).
		Sequence(r.out.Seq).Acknowledge(r.out.Ack).Maximum(r.out.Max).
		TraceID(r.traceID).Authorization(r.authorization).
		BuildLimit()
	if err == nil {
		_ = h.w.Send(frame.FrameEnd, buf[:n])
	}
}

// abortReply cuts the response short. A response never begun cannot be
// aborted: the http server would wait for it; it gets a 500 instead.
func (r *request) abortReply() {
	if r.outOver {
		return
	}
	h := r.h
	r.q.drop(h)
	r.endPending = false
	if !r.replyBegun {
		if !r.inOver {
			// The client is still there (a failed app stream, say).
			r.mode = modeLocal
			r.beginReply(500, "", 0, nil)
			r.endReply()
			return
		}
		r.outOver = true
		return
	}
	r.outOver = true
	buf := h.w.WriteBuffer()
	n, err := h.abortB.Wrap(buf, 0, len(buf)).
		OriginID(r.originID).RoutedID(r.routedID).StreamID(r.replyID).
		Sequence(r.out.Seq).Acknowledge(r.out.Ack).Maximum(r.out.Max).
		TraceID(r.traceID).Authorization(r.authorization).
		BuildLimit()
	if err == nil {
		_ = h.w.Send(frame.FrameAbort, buf[:n])
	}
}

// push appends p to the queue, taking a slot for it when needed and
// moving to a buffer of its own when the slot cannot hold it; false past
// maxQueue.
func (q *outQueue) push(h *server, owner int64, p []byte) bool {
	if len(p) == 0 {
		return true
	}
	if q.n+len(p) > maxQueue {
		return false
	}
	if q.over != nil {
		if q.off > 0 && q.off+q.n+len(p) > cap(q.over) {
			q.over = q.over[:copy(q.over, q.over[q.off:q.off+q.n])]
			q.off = 0
		}
		q.over = append(q.over[:q.off+q.n], p...)
		q.n += len(p)
		return true
	}
	if q.slot < 0 {
		q.slot = h.pool.Acquire(owner)
		if q.slot == engine.NoSlot {
			q.slot = -1
			return false
		}
		q.off, q.n = 0, 0
	}
	b := h.pool.Buffer(q.slot)
	if q.off+q.n+len(p) > len(b) {
		if q.n+len(p) > len(b) {
			over := make([]byte, 0, 2*(q.n+len(p)))
			over = append(append(over, b[q.off:q.off+q.n]...), p...)
			h.pool.Release(q.slot)
			*q = outQueue{slot: -1, n: len(over), over: over}
			return true
		}
		copy(b, b[q.off:q.off+q.n])
		q.off = 0
	}
	q.n += copy(b[q.off+q.n:], p)
	return true
}

// bytes returns the queued bytes.
func (q *outQueue) bytes(h *server) []byte {
	if q.over != nil {
		return q.over[q.off : q.off+q.n]
	}
	return h.pool.Buffer(q.slot)[q.off : q.off+q.n]
}

// drop empties the queue and gives its slot back.
func (q *outQueue) drop(h *server) {
	if q.slot >= 0 {
		h.pool.Release(q.slot)
	}
	*q = outQueue{slot: -1}
}

func appendInt(dst []byte, v int64) []byte { return strconv.AppendInt(dst, v, 10) }
