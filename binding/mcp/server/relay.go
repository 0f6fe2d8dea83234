package server

import (
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/frame"
)

// relay carries an HTTP request stream that names a session another
// worker owns to that worker, and the owner's answer back (doc.go). It
// opens a stream of its own to this server binding on the owner, with
// stream id target bits naming the owner, that begins with the request's
// BEGIN; from then on every frame of either stream goes on unchanged on
// the other but for its ids. Flow control passes through: the http server
// and the owner's server grant each other credit through the relay, which
// keeps no window of its own.
//
// Each frame is rewritten in place, in the record the worker is reading,
// which is the relay's until its handler returns, and sent on: relaying
// costs a ring write per frame and no copy besides.
type relay struct {
	h *server
	r *request // the request whose HTTP stream this is

	// The HTTP stream, as the http server opened it on this worker.
	originID, routedID int64
	initialID, replyID int64
	// The stream to the owner.
	ownerInitialID, ownerReplyID int64

	// What the relay has seen of each direction, the same on both
	// streams: it is done when both are over.
	initialOver bool
	replyOver   bool
	replyBegun  bool

	onOwner engine.MessageConsumer
}

// toOwner relays the request to the worker that owns the session it
// names, when that is another worker, and reports whether it did. begin
// is the request's BEGIN, whose headers have been read. A request that
// came through a relay is served where it arrived, and so is one whose
// session id names no worker of the engine: the session lookup answers it
// with 404.
func (r *request) toOwner(begin []byte) bool {
	h := r.h
	if r.hdr.sidLen <= 0 || r.OriginID() == h.cfg.ID {
		return false
	}
	owner := h.table.ownerOf(r.hdr.sid[:r.hdr.sidLen])
	if owner < 0 || owner >= h.workers || owner == h.w.Index() {
		return false
	}
	rl := h.allocRelay()
	if !rl.open(r, owner, begin) {
		h.relays = append(h.relays, rl)
		r.hdr.early, r.hdr.earlyCode, r.hdr.earlyMsg = 503, codeTransport, "Service Unavailable: the session's worker took no request"
		return false
	}
	r.rl = rl
	r.flags |= relayed
	return true
}

func (h *server) allocRelay() *relay {
	if n := len(h.relays); n > 0 {
		rl := h.relays[n-1]
		h.relays = h.relays[:n-1]
		return rl
	}
	rl := &relay{h: h}
	rl.onOwner = rl.fromOwner
	return rl
}

// open opens the stream to owner with the request's BEGIN.
func (rl *relay) open(r *request, owner int, begin []byte) bool {
	h := rl.h
	rl.r = r
	rl.originID, rl.routedID, rl.initialID, rl.replyID = r.OriginID(), r.RoutedID(), r.InitialID(), r.ReplyID()
	rl.ownerInitialID = h.w.SupplyInitialIDOn(owner)
	rl.ownerReplyID = engine.ReplyID(rl.ownerInitialID)
	rl.initialOver, rl.replyOver, rl.replyBegun = false, false, false
	f := &h.hdr
	if !f.TryWrap(begin, 0, len(begin)) {
		return false
	}
	f.SetOriginID(h.cfg.ID)
	f.SetRoutedID(h.cfg.ID)
	f.SetStreamID(rl.ownerInitialID)
	return h.w.NewStream(begin, rl.onOwner) == nil
}

// fromNet relays a frame of the HTTP stream to the owner: the request's
// frames, and the throttle frames of its response.
func (rl *relay) fromNet(t frame.FrameType, buf []byte) {
	h := rl.h
	if !rl.retarget(buf, rl.replyID, h.cfg.ID, h.cfg.ID, rl.ownerInitialID, rl.ownerReplyID) {
		return
	}
	switch t {
	case frame.FrameEnd, frame.FrameAbort:
		rl.initialOver = true
	case frame.FrameReset:
		rl.replyOver = true
	}
	rl.send(t, buf)
}

// fromOwner relays a frame of the owner's stream to the http server: the
// response's frames, and the throttle frames of the request.
func (rl *relay) fromOwner(t frame.FrameType, buf []byte) {
	if !rl.retarget(buf, rl.ownerReplyID, rl.originID, rl.routedID, rl.initialID, rl.replyID) {
		return
	}
	switch t {
	case frame.FrameBegin:
		rl.replyBegun = true
	case frame.FrameEnd, frame.FrameAbort:
		rl.replyOver = true
	case frame.FrameReset:
		// A RESET before the reply began gives the reply up with the
		// request (engine.Worker.afterSend), on both streams.
		rl.initialOver = true
		rl.replyOver = rl.replyOver || !rl.replyBegun
	}
	rl.send(t, buf)
}

// retarget rewrites the frame in buf, in place, for the other stream:
// onto its replyID when the frame is on reply, else onto its initialID,
// from originID to routedID. It reports false for a malformed frame.
func (rl *relay) retarget(buf []byte, reply, originID, routedID, initialID, replyID int64) bool {
	f := &rl.h.hdr
	if !f.TryWrap(buf, 0, len(buf)) {
		return false
	}
	id := initialID
	if f.StreamID() == reply {
		id = replyID
	}
	f.SetOriginID(originID)
	f.SetRoutedID(routedID)
	f.SetStreamID(id)
	return true
}

// send sends a rewritten frame, and recycles the relay once both
// directions are over. A frame that neither ring nor backlog takes ends
// both streams.
func (rl *relay) send(t frame.FrameType, buf []byte) {
	h := rl.h
	if err := h.w.Send(t, buf); err != nil {
		h.w.Logger().Warn("mcp: relay to the session's worker failed", "binding", h.cfg.Name, "err", err)
		if !rl.fail() {
			return // the streams are still registered: keep the relay
		}
	}
	if rl.initialOver && rl.replyOver {
		rl.done()
	}
}

// fail ends both streams both ways, whatever the relay saw of them: a
// frame for a direction already over is dropped by its receiver. It
// reports whether every frame went.
func (rl *relay) fail() bool {
	h := rl.h
	rl.initialOver, rl.replyOver = true, true
	ok := rl.frame(frame.FrameReset, rl.originID, rl.routedID, rl.initialID)
	ok = rl.frame(frame.FrameAbort, h.cfg.ID, h.cfg.ID, rl.ownerInitialID) && ok
	if rl.replyBegun {
		ok = rl.frame(frame.FrameAbort, rl.originID, rl.routedID, rl.replyID) && ok
	}
	return rl.frame(frame.FrameReset, h.cfg.ID, h.cfg.ID, rl.ownerReplyID) && ok
}

func (rl *relay) frame(t frame.FrameType, originID, routedID, id int64) bool {
	h := rl.h
	buf := h.w.WriteBuffer()
	var n int
	var err error
	if t == frame.FrameAbort {
		n, err = h.abortB.Wrap(buf, 0, len(buf)).OriginID(originID).RoutedID(routedID).StreamID(id).
			Sequence(0).Acknowledge(0).Maximum(0).BuildLimit()
	} else {
		n, err = h.resetB.Wrap(buf, 0, len(buf)).OriginID(originID).RoutedID(routedID).StreamID(id).
			Sequence(0).Acknowledge(0).Maximum(0).BuildLimit()
	}
	return err == nil && h.w.Send(t, buf[:n]) == nil
}

// done hands the request back, its HTTP stream over, and the relay to
// the free list.
func (rl *relay) done() {
	h, r := rl.h, rl.r
	rl.r = nil
	h.relays = append(h.relays, rl)
	r.rl = nil
	r.role.release()
}
