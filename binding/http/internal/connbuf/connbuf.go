package connbuf

import "github.com/sluicehq/sluice/engine"

// Inbox holds a connection's received bytes until they are processed.
// The payload of the DATA being handled is read in place; what is left
// of it when the handling ends moves into a slot, and the next DATA's
// bytes join it there.
type Inbox struct {
	pool     *engine.BufferPool
	slot     int    // the slot held, or -1
	off, end int    // the slot's unprocessed bytes are [off:end]
	data     []byte // the unprocessed payload of the DATA being handled
}

// Init readies b to hold bytes from pool.
func (b *Inbox) Init(pool *engine.BufferPool) { *b = Inbox{pool: pool, slot: -1} }

// Bytes returns the bytes waiting to be processed. They are valid until
// the next Receive, Keep or Drop; Consume leaves them where they are, so
// views of a parsed head stay valid while it is handled.
func (b *Inbox) Bytes() []byte {
	if b.slot >= 0 {
		return b.pool.Buffer(b.slot)[b.off:b.end]
	}
	return b.data
}

// Consume drops the first n bytes waiting, which have been processed.
func (b *Inbox) Consume(n int) {
	if b.slot >= 0 {
		b.off += n
		return
	}
	b.data = b.data[n:]
}

// Held returns how many bytes wait in the slot: the part of the window
// granted that they still take.
func (b *Inbox) Held() int { return b.end - b.off }

// Handling reports whether the payload of a DATA is being read in place,
// between Receive and Keep: no slot was held when it came.
func (b *Inbox) Handling() bool { return b.data != nil }

// Grant sets the window in offers the sender of the bytes: a slot's
// worth, less the bytes held in the slot, which are acknowledged once
// processed. It reports whether a WINDOW is due (engine.Flow.WindowDue);
// when it is not, in is left as it was.
func (b *Inbox) Grant(in *engine.Flow) bool {
	ack, max := in.Seq-int64(b.Held()), int32(b.pool.SlotCapacity())
	if !in.WindowDue(ack, max, 0) {
		return false
	}
	in.Ack, in.Max = ack, max
	return true
}

// Offer grants s's sender the window the inbox has room for, as Grant
// does with s.In, and sends the WINDOW when one is due. The error is the
// WINDOW's; none when no WINDOW was due.
func (b *Inbox) Offer(s *engine.Stream) error {
	if !b.Grant(&s.In.Flow) {
		return nil
	}
	return s.Window()
}

// Settle ends the handling of a DATA as Keep does, the bytes left held
// for s's In, and then offers s's sender the room the inbox has as Offer
// does. It reports false when no slot was free or the ring refused the
// WINDOW; either way the connection cannot go on.
func (b *Inbox) Settle(s *engine.Stream) bool {
	return b.Keep(s.InID()) && b.Offer(s) == nil
}

// Receive takes the payload of a DATA: it joins the bytes held in the
// slot or, with none held, is read in place until Keep. It reports false
// when the slot has no room for it, which a sender within the window
// granted never causes.
func (b *Inbox) Receive(p []byte) bool {
	if b.slot < 0 {
		b.data = p
		return true
	}
	buf := b.pool.Buffer(b.slot)
	if b.off > 0 {
		b.end = copy(buf, buf[b.off:b.end])
		b.off = 0
	}
	if b.end+len(p) > len(buf) {
		return false
	}
	b.end += copy(buf[b.end:], p)
	return true
}

// Keep ends the handling of a DATA: a slot emptied is given back, and
// the bytes left unprocessed move into a slot taken for streamID. It
// reports false when no slot is free; those bytes are then dropped.
func (b *Inbox) Keep(streamID int64) bool {
	if b.slot >= 0 && b.off == b.end {
		b.pool.Release(b.slot)
		b.slot, b.off, b.end = -1, 0, 0
	}
	data := b.data
	b.data = nil
	if b.slot >= 0 || len(data) == 0 {
		return true
	}
	slot := b.pool.Acquire(streamID)
	if slot == engine.NoSlot {
		return false
	}
	b.slot, b.off, b.end = slot, 0, copy(b.pool.Buffer(slot), data)
	return true
}

// Drop gives the slot back and forgets every byte.
func (b *Inbox) Drop() {
	if b.slot >= 0 {
		b.pool.Release(b.slot)
	}
	b.slot, b.off, b.end, b.data = -1, 0, 0, nil
}

// Outbox holds a connection's bytes to send until the window admits
// them, in a slot taken when the first are queued.
type Outbox struct {
	pool *engine.BufferPool
	slot int // the slot held, or -1
	n    int // the slot's bytes waiting are [:n]
}

// Init readies b to hold bytes from pool.
func (b *Outbox) Init(pool *engine.BufferPool) { *b = Outbox{pool: pool, slot: -1} }

// Len returns how many bytes wait.
func (b *Outbox) Len() int { return b.n }

// Bytes returns the bytes waiting, valid until the next Queue, Sent or
// Drop.
func (b *Outbox) Bytes() []byte {
	if b.slot < 0 {
		return nil
	}
	return b.pool.Buffer(b.slot)[:b.n]
}

// Queue appends p to the bytes waiting, in a slot taken for streamID if
// none is held. It reports false when no slot is free or p does not fit.
func (b *Outbox) Queue(p []byte, streamID int64) bool {
	if b.slot < 0 {
		if b.slot = b.pool.Acquire(streamID); b.slot == engine.NoSlot {
			b.slot = -1
			return false
		}
	}
	buf := b.pool.Buffer(b.slot)
	if b.n+len(p) > len(buf) {
		if b.n == 0 {
			b.Drop()
		}
		return false
	}
	b.n += copy(buf[b.n:], p)
	return true
}

// Sent drops the first n bytes waiting, which have gone out, and gives
// the slot back once none is left.
func (b *Outbox) Sent(n int) {
	if b.slot < 0 {
		return
	}
	buf := b.pool.Buffer(b.slot)
	b.n = copy(buf, buf[n:b.n])
	if b.n == 0 {
		b.pool.Release(b.slot)
		b.slot = -1
	}
}

// Truncate keeps the first n bytes waiting and forgets the rest, giving
// the slot back when none is left.
func (b *Outbox) Truncate(n int) {
	if b.slot < 0 || n >= b.n {
		return
	}
	if b.n = max(n, 0); b.n == 0 {
		b.pool.Release(b.slot)
		b.slot = -1
	}
}

// Drop gives the slot back and forgets every byte.
func (b *Outbox) Drop() {
	if b.slot >= 0 {
		b.pool.Release(b.slot)
	}
	b.slot, b.n = -1, 0
}
