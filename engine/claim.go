package engine

import (
	"errors"
	"fmt"

	"github.com/sluicehq/sluice/engine/frame"
	"github.com/sluicehq/sluice/engine/ring"
)

// FrameClaim is room for one frame, reserved by [Worker.Claim] in the ring
// of the worker that serves the frame's stream, to be written there in
// place. It is the zero-copy twin of [Worker.Send]: where Send copies a
// frame built in [Worker.WriteBuffer] into the ring, a claim lets the
// frame be built in the ring itself, and lets a binding read a socket
// straight into a DATA payload:
//
//	c, err := w.Claim(frame.FrameData, streamID, frame.DataPayloadOffset+max)
//	if err != nil {
//		return err // ring.ErrFull: try again once the ring drains
//	}
//	n, err := unix.Read(fd, c.Buf[frame.DataPayloadOffset:])
//	if n <= 0 {
//		c.Abort()
//		return err
//	}
//	limit, err := db.Wrap(c.Buf, 0, len(c.Buf)).StreamID(streamID)…PayloadReserve(n) … BuildLimit()
//	return c.Commit(limit)
//
// Exactly one of Commit or Abort must follow each successful Claim, soon:
// the target worker cannot read past an outstanding claim. A FrameClaim
// belongs to the worker that made it and must not be copied once used.
type FrameClaim struct {
	// Buf is the claimed room, as long as the size claimed. It aliases the
	// target ring: write the frame from Buf[0], and do not touch Buf after
	// Commit or Abort.
	Buf []byte

	claim  ring.Claim
	sender *Worker
	target *Worker
	t      frame.FrameType
	id     int64
}

// ErrClaim reports a claim used wrongly: committed twice, committed with a
// length outside the claim or a frame for another stream.
var ErrClaim = errors.New("engine: frame claim misused")

// Claim reserves size bytes for one frame of type t on stream streamID, in
// the ring of the worker that serves it, which is where [Worker.Send]
// would copy the same frame. size must hold at least the frame header and
// at most [Worker.MaxFrame] bytes; a full ring refuses with ring.ErrFull.
func (w *Worker) Claim(t frame.FrameType, streamID int64, size int) (FrameClaim, error) {
	if !t.Valid() {
		return FrameClaim{}, fmt.Errorf("engine: claim: frame type %s", t)
	}
	if size < frame.HeaderSize {
		return FrameClaim{}, fmt.Errorf("engine: claim: %d bytes cannot hold a frame header", size)
	}
	target := w.engine.workers[targetIndex(streamID, t.IsThrottle())]
	if !w.backlogs[target.index].empty() {
		// Frames for target wait in the backlog: a claim would pass
		// them. The caller tries again once they have drained.
		return FrameClaim{}, ring.ErrFull
	}
	c, err := target.ring.Claim(int32(t), size)
	if err != nil {
		w.refused(target, err)
		return FrameClaim{}, err
	}
	return FrameClaim{Buf: c.Buf, claim: c, sender: w, target: target, t: t, id: streamID}, nil
}

// Commit publishes the frame written in Buf[:n] to the worker that serves
// its stream; the claimed room past n is skipped as padding. The frame's
// stream id must be the one claimed for. As with [Worker.Send], the
// frame is counted in the sender's stream metrics and the sender's
// registration retires with the END or ABORT (or RESET) it sends. A frame
// that does not check out is withdrawn and reported with [ErrClaim].
func (c *FrameClaim) Commit(n int) error {
	if c.target == nil {
		return fmt.Errorf("%w: commit of an empty or finished claim", ErrClaim)
	}
	w, target := c.sender, c.target
	if n < frame.HeaderSize || n > len(c.Buf) {
		c.Abort()
		return fmt.Errorf("%w: commit of %d bytes", ErrClaim, n)
	}
	buf := c.Buf[:n]
	if !w.header.TryWrap(buf, 0, n) || w.header.StreamID() != c.id {
		c.Abort()
		return fmt.Errorf("%w: the frame is not for stream %#x", ErrClaim, c.id)
	}
	t, id, throttle := c.t, c.id, c.t.IsThrottle()
	// Count before publishing: once committed the bytes belong to the
	// target's consumer, which may already be reading them.
	w.bindingMetrics(senderID(id, w.header.OriginID(), w.header.RoutedID(), throttle)).sent(t, buf)
	target.ring.CommitLength(c.claim, n)
	*c = FrameClaim{}
	if target.parked.Load() {
		target.poller.wake()
	}
	w.afterSend(t, id)
	return nil
}

// Abort withdraws the claim: its room becomes padding the target skips.
// Aborting a finished claim does nothing.
func (c *FrameClaim) Abort() {
	if c.target != nil {
		c.target.ring.Abort(c.claim)
	}
	*c = FrameClaim{}
}

// MaxFrame returns the largest frame a binding may send or claim: the
// slot capacity, which bounds the write buffer and the buffer pool's
// slots, or less when the rings are too small for it.
func (w *Worker) MaxFrame() int { return min(w.engine.opts.SlotCapacity, w.ring.MaxMessage()) }
