package engine

import (
	"encoding/binary"
	"errors"
	"time"

	"github.com/sluicehq/sluice/engine/frame"
	"github.com/sluicehq/sluice/engine/ring"
)

// A worker's backlog holds the frames a full ring refused, one queue per
// target worker, and moves them into the target's ring, in order, as it
// drains: on each pass of the sender's loop, which parks for at most
// backlogRetry while anything waits. Send then fails only when the backlog
// too is full (maxBacklog), so a ring sized below what is in flight slows
// streams down rather than losing their frames: a binding does not check
// every frame it sends (WINDOW, END), and losing one would hang its
// stream.
//
// Order holds per sender and target: once a target's queue is not empty,
// every frame for that target joins it, and Claim refuses (ring.ErrFull,
// which its callers take as "try again on the next pass") until it has
// drained.

// backlogRetry is how long a worker with a backlog parks at most.
const backlogRetry = time.Millisecond

// backlogHeader is a queued frame's type and length, before its bytes.
const backlogHeader = 8

type backlog struct {
	buf []byte // queued frames: type, length, bytes
	off int    // the first not yet moved
}

func (b *backlog) empty() bool { return b.off == len(b.buf) }

// maxBacklog bounds the bytes a worker queues for all targets: twice its
// ring.
func (w *Worker) maxBacklog() int { return 2 * w.ring.Capacity() }

// enqueue queues frame t for target, or reports false when the backlog is
// full.
func (w *Worker) enqueue(target *Worker, t frame.FrameType, buf []byte) bool {
	if w.backlogged+backlogHeader+len(buf) > w.maxBacklog() {
		return false
	}
	b := &w.backlogs[target.index]
	b.buf = binary.LittleEndian.AppendUint32(b.buf, uint32(t))
	b.buf = binary.LittleEndian.AppendUint32(b.buf, uint32(len(buf)))
	b.buf = append(b.buf, buf...)
	w.backlogged += backlogHeader + len(buf)
	w.backlogWarn(target)
	return true
}

// drainBacklog moves queued frames into their targets' rings while they
// take them, and returns how many it moved.
func (w *Worker) drainBacklog() int {
	if w.backlogged == 0 {
		return 0
	}
	moved := 0
	for i := range w.backlogs {
		b := &w.backlogs[i]
		if b.empty() {
			continue
		}
		target := w.engine.workers[i]
		n := 0
		for !b.empty() {
			t := int32(binary.LittleEndian.Uint32(b.buf[b.off:]))
			size := int(binary.LittleEndian.Uint32(b.buf[b.off+4:]))
			rec := b.buf[b.off+backlogHeader : b.off+backlogHeader+size]
			if err := target.ring.Write(t, rec); err != nil {
				if !errors.Is(err, ring.ErrFull) {
					// Cannot happen: the frame fitted the ring when
					// it was queued. Drop it rather than block the rest.
					w.log.Error("engine: a queued frame was refused", "target", target.index, "err", err)
				} else {
					break
				}
			}
			b.off += backlogHeader + size
			w.backlogged -= backlogHeader + size
			n++
		}
		if b.empty() {
			if cap(b.buf) > 1<<20 {
				b.buf = nil
			} else {
				b.buf = b.buf[:0]
			}
			b.off = 0
		}
		if n > 0 && target.parked.Load() {
			target.poller.wake()
		}
		moved += n
	}
	return moved
}

// backlogWarn warns, at most once a second per worker, that frames wait
// for a full ring.
func (w *Worker) backlogWarn(target *Worker) {
	now := w.engine.clock()
	if now.Sub(w.lastBacklogWarn) < time.Second {
		return
	}
	w.lastBacklogWarn = now
	w.log.Warn("engine: a worker's ring is full: frames wait in the sender's backlog; raise the ring capacity if this recurs",
		"target", target.index, "capacity", target.ring.Capacity(), "backlog", w.backlogged)
}
