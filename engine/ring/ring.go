package ring

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/sluicehq/sluice/internal/atomicx"
)

// Handler receives one record from [Ring.Read]. The payload aliases the
// ring: it is valid only until the handler returns; copy it to keep it.
type Handler func(msgType int32, payload []byte)

// Ring is a many-to-one ring buffer over heap or memory-mapped bytes, in
// Agrona's ManyToOneRingBuffer format. Any number of goroutines (or processes
// sharing the file) may produce; exactly one goroutine may consume.
//
// A Ring must not be copied; use the *Ring that [NewHeap], [Map] or [Open]
// returns.
type Ring struct {
	// buf is the data region followed by the trailer. For a mapped ring it
	// is the whole mapping.
	buf      []byte
	capacity int
	mask     int
	maxMsg   int

	// The trailer words, resolved once. They point into buf, which is shared
	// memory (possibly with other processes), so they cannot be ordinary Go
	// fields: a typed atomic pointer is laid over the 8-aligned bytes.
	tail        *atomic.Int64
	headCache   *atomic.Int64
	head        *atomic.Int64
	correlation *atomic.Int64
	heartbeat   *atomic.Int64

	// unmap releases a mapped ring's memory; nil for a heap ring.
	unmap func([]byte) error
}

// Claim is space reserved by [Ring.Claim] for one record. Fill Buf, then
// pass the Claim to exactly one of [Ring.Commit] or [Ring.Abort].
//
// A Claim is 32 bytes, so the compiler keeps it in registers when it is
// returned and passed on (larger structs go through memory, and the copies
// cost a store-forwarding stall on every frame).
type Claim struct {
	// Buf is the record's payload, exactly as long as the length that was
	// claimed, with no spare capacity. It aliases the ring: write the frame
	// into it in place, and do not touch it after Commit or Abort. Commit
	// and Abort take the record length from cap(Buf): Buf[:n] is fine, but
	// do not move its start or replace it.
	Buf []byte

	off     int32 // offset of the record header in the data region
	msgType int32 // the record's type; 0 in the zero Claim
}

// NewHeap returns a ring whose data region of capacity bytes, plus the
// trailer, lives on the Go heap. Capacity must be a power of two in
// [MinCapacity, MaxCapacity].
func NewHeap(capacity int) (*Ring, error) {
	if !checkCapacity(capacity) {
		return nil, fmt.Errorf("ring: capacity %d: %w", capacity, ErrCapacity)
	}
	// Allocate words rather than bytes so the memory is 8-aligned for the
	// 64-bit atomics on every platform, and over-allocate so the buffer can
	// start on a 128-byte boundary: the trailer's slots then fall on their
	// own cache lines, as they do in a page-aligned mapping. The Go heap
	// does not move objects, so the alignment holds.
	const lineAlign = 128
	size := capacity + TrailerLength
	words := make([]uint64, (size+lineAlign)/8)
	all := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(words))), len(words)*8)
	shift := int(-uintptr(unsafe.Pointer(&all[0])) & (lineAlign - 1))
	return newRing(all[shift:shift+size:shift+size], capacity), nil
}

// newRing lays a ring over buf, which holds capacity data bytes plus the
// trailer and starts 8-aligned.
func newRing(buf []byte, capacity int) *Ring {
	r := &Ring{
		buf:      buf,
		capacity: capacity,
		mask:     capacity - 1,
		maxMsg:   capacity / 8,
	}
	r.tail = r.word(capacity + TailOffset)
	r.headCache = r.word(capacity + HeadCacheOffset)
	r.head = r.word(capacity + HeadOffset)
	r.correlation = r.word(capacity + CorrelationOffset)
	r.heartbeat = r.word(capacity + HeartbeatOffset)
	return r
}

// word returns the int64 at off in buf as an atomic. Offsets are always
// multiples of 8 (record headers, trailer slots) and buf starts 8-aligned,
// so the atomic is correctly aligned. unsafe is needed because the bytes are
// shared memory, written by other goroutines and possibly other processes,
// which only atomics may touch concurrently; Go has no safe way to view
// bytes as an atomic word.
func (r *Ring) word(off int) *atomic.Int64 {
	return (*atomic.Int64)(unsafe.Pointer(&r.buf[off]))
}

// Capacity returns the size of the data region in bytes.
func (r *Ring) Capacity() int { return r.capacity }

// MaxMessage returns the largest payload a record may carry: Capacity/8.
func (r *Ring) MaxMessage() int { return r.maxMsg }

// Claim reserves room for a record of msgType with a payload of length bytes
// and returns it; the record stays invisible to the consumer until
// [Ring.Commit]. Claims from many goroutines may be outstanding at once,
// but the consumer cannot pass an uncommitted record, so commit promptly.
//
// It returns [ErrType] unless msgType > 0, [ErrLength] for a negative
// length, [ErrTooLarge] when length > MaxMessage, and [ErrFull] when the
// ring has no room; it never blocks.
func (r *Ring) Claim(msgType int32, length int) (Claim, error) {
	off, err := r.reserve(msgType, length)
	if err != nil {
		return Claim{}, err
	}
	// The negative length marks the record claimed, for the checks of
	// Commit and Abort; the consumer stops at it as it does at 0.
	atomicx.StoreRelease(r.word(off), header(int32(-(HeaderLength+length)), msgType))
	end := off + HeaderLength + length
	return Claim{Buf: r.buf[off+HeaderLength : end : end], off: int32(off), msgType: msgType}, nil
}

// Commit publishes a claimed record to the consumer.
//
// It panics if c is not an outstanding claim of r (the zero Claim, or one
// already committed or aborted): reusing a claim could publish space that
// now belongs to another producer.
func (r *Ring) Commit(c Claim) {
	w := r.word(int(c.off))
	recLen := int32(cap(c.Buf) + HeaderLength)
	if c.msgType == 0 || w.Load() != header(-recLen, c.msgType) {
		misuse(c)
	}
	// Store the positive length with the type: the release store the
	// consumer's load of the header synchronizes with, so the payload is
	// visible once the consumer sees a positive length.
	atomicx.StoreRelease(w, header(recLen, c.msgType))
}

// CommitLength publishes the first length bytes of a claimed record's
// payload as the record, for a producer that claimed room for the most it
// might write and wrote less (a socket read into the payload, say). The
// claimed space past the record, if any, becomes one padding record that
// the consumer skips, so the record keeps its place and no other producer
// is disturbed. length may be anything from 0 to len(c.Buf).
//
// It panics like [Ring.Commit] if c is not outstanding, and for a length
// outside the claim.
func (r *Ring) CommitLength(c Claim, length int) {
	w := r.word(int(c.off))
	claimed := cap(c.Buf)
	if c.msgType == 0 || w.Load() != header(-int32(claimed+HeaderLength), c.msgType) {
		misuse(c)
	}
	if length < 0 || length > claimed {
		panic("ring: commit length outside the claim")
	}
	// Both ends are 8-aligned, so the rest is 0 or at least a header.
	used := align(HeaderLength + length)
	if rest := align(HeaderLength+claimed) - used; rest > 0 {
		// The padding is stored before the record is published: the
		// consumer reaches it only through the record's release store.
		atomicx.StoreRelease(r.word(int(c.off)+used), header(int32(rest), PaddingType))
	}
	atomicx.StoreRelease(w, header(int32(HeaderLength+length), c.msgType))
}

// Abort withdraws a claimed record: it becomes padding, which the consumer
// skips. It panics like [Ring.Commit] if c is not outstanding.
func (r *Ring) Abort(c Claim) {
	w := r.word(int(c.off))
	recLen := int32(cap(c.Buf) + HeaderLength)
	if c.msgType == 0 || w.Load() != header(-recLen, c.msgType) {
		misuse(c)
	}
	atomicx.StoreRelease(w, header(recLen, PaddingType))
}

// misuse panics for a Commit or Abort of a claim that is not outstanding:
// its header no longer holds the negative length and type Claim stored.
// This is a broken invariant of the caller, like unlocking an unlocked
// mutex, and going on could publish another producer's half-built record.
func misuse(c Claim) {
	if c.msgType == 0 {
		panic("ring: commit or abort of the zero Claim")
	}
	panic("ring: commit or abort of a claim that is not outstanding")
}

// Write copies payload into a new record of msgType: Claim, copy, Commit.
// It returns the errors of [Ring.Claim].
func (r *Ring) Write(msgType int32, payload []byte) error {
	length := len(payload)
	off, err := r.reserve(msgType, length)
	if err != nil {
		return err
	}
	recLen := HeaderLength + length
	copy(r.buf[off+HeaderLength:off+recLen], payload)
	// No claim store first, as Claim makes: the header is 0 until this
	// release store, and the consumer stops at 0 as at a claimed record.
	atomicx.StoreRelease(r.word(off), header(int32(recLen), msgType))
	return nil
}

// reserve checks a record of msgType with a payload of length bytes and
// claims room for it. It returns the offset of the header in the data
// region, where the consumer reads 0 (an unwritten record) until the
// producer stores the header.
//
// The claim follows Agrona's ManyToOneRingBuffer.claimCapacity: check the
// space against the shared head cache, refresh the cache from the real head
// only when that looks full, then move the tail with compare-and-swap. A
// record never straddles the end of the data region; when it does not fit
// there, the rest of the region becomes one padding record and the record
// starts at offset 0. If it does not fit at offset 0 either, the padding is
// still claimed, so that the consumer can move past the end, and reserve
// reports ErrFull, as Agrona does since 1.12 (real-logic/agrona#239).
func (r *Ring) reserve(msgType int32, length int) (int, error) {
	if msgType <= 0 {
		return 0, ErrType
	}
	if uint(length) > uint(r.maxMsg) {
		if length < 0 {
			return 0, ErrLength
		}
		return 0, ErrTooLarge
	}
	recLen := HeaderLength + length
	required := align(recLen)
	capacity, mask := r.capacity, r.mask
	head := r.headCache.Load()
	for {
		tail := r.tail.Load()
		if required > capacity-int(tail-head) {
			head = r.head.Load()
			if required > capacity-int(tail-head) {
				return 0, ErrFull
			}
			r.headCache.Store(head)
		}
		newTail := tail + int64(required)
		tailIndex := int(tail) & mask
		off := tailIndex
		padding := 0
		if toEnd := capacity - tailIndex; required > toEnd {
			// The record goes at offset 0, which the head must have passed.
			// head and tail share a lap here: otherwise tail-head, checked
			// above, would leave less than required bytes free.
			off = 0
			if required > int(head)&mask {
				head = r.head.Load()
				if required > int(head)&mask {
					off = -1
					newTail = tail
				}
				r.headCache.Store(head)
			}
			padding = toEnd
			newTail += int64(padding)
		}
		if !r.tail.CompareAndSwap(tail, newTail) {
			continue
		}
		if padding != 0 {
			// Agrona stores -padding, the type, then +padding. One 64-bit
			// store publishes length and type together, so the negative
			// step is unnecessary: there is no payload to fill in between.
			r.word(tailIndex).Store(header(int32(padding), PaddingType))
			if off < 0 {
				return 0, ErrFull
			}
		}
		return off, nil
	}
}

// Read hands up to limit committed records to handler, oldest first, and
// returns how many it handed over. Padding is skipped and not counted. Read
// stops early at the first record still being written, so it may return
// fewer than limit, or 0 for an empty ring. It never blocks.
//
// Only one goroutine may call Read. The payload passed to handler is valid
// only during that call: the consumed space is zeroed and handed back to
// producers before Read returns. Pass a long-lived func value (for example a
// method value stored once in a field), not a fresh closure per call, so
// that Read does not allocate.
//
// As in Agrona, the consumed bytes are zeroed and the head is published
// with a release store at the end of a Read, not once per record; but
// also whenever the consumed bytes not yet handed back reach the largest
// record's size (an eighth of the capacity). A handler may write to the
// ring it is read from (a worker sends frames to itself): without the
// early hand-back, a batch that carries large frames and writes large
// frames in turn would find the ring full of space it has already
// consumed.
// If handler panics, the records up to and including the one it panicked
// on count as consumed.
func (r *Ring) Read(handler Handler, limit int) int {
	buf, capacity := r.buf, r.capacity
	head := r.head.Load()
	start := int(head) & r.mask // first consumed byte not yet zeroed
	pos := start                // next record
	zeroed := 0                 // consumed bytes already zeroed (before a wrap)
	defer func() {
		clear(buf[start:pos])
		if n := zeroed + pos - start; n > 0 {
			atomicx.StoreRelease(r.head, head+int64(n))
		}
	}()
	n := 0
	for n < limit {
		if pos == capacity {
			clear(buf[start:pos])
			zeroed += pos - start
			start, pos = 0, 0
		}
		w := r.word(pos).Load()
		length := int(int32(w))
		// A length below HeaderLength is unwritten (0) or still claimed
		// (negative). A record running past the end of the data region can
		// only come from a corrupt file; stop rather than panic.
		if uint(length-HeaderLength) > uint(capacity-pos-HeaderLength) {
			break
		}
		rec := pos
		pos += align(length)
		if msgType := int32(w >> 32); msgType != PaddingType {
			n++
			handler(msgType, buf[rec+HeaderLength:rec+length:rec+length])
		}
		if consumed := zeroed + pos - start; consumed >= r.maxMsg {
			clear(buf[start:pos])
			head += int64(consumed)
			atomicx.StoreRelease(r.head, head)
			start, zeroed = pos, 0
		}
	}
	return n
}

// Size returns the number of bytes claimed but not yet consumed, records and
// padding together. Under concurrent use it is a snapshot that may be stale
// by the time it returns.
func (r *Ring) Size() int {
	headAfter := r.head.Load()
	for {
		headBefore := headAfter
		tail := r.tail.Load()
		headAfter = r.head.Load()
		if headAfter == headBefore {
			return int(min(max(tail-headAfter, 0), int64(r.capacity)))
		}
	}
}

// ProducerPosition returns the tail: the total number of bytes ever claimed.
func (r *Ring) ProducerPosition() int64 { return r.tail.Load() }

// ConsumerPosition returns the head: the total number of bytes ever consumed.
func (r *Ring) ConsumerPosition() int64 { return r.head.Load() }

// NextCorrelationID returns a value unique among all users of the ring,
// from the counter in the trailer.
func (r *Ring) NextCorrelationID() int64 { return r.correlation.Add(1) - 1 }

// SetConsumerHeartbeat records the consumer's liveness time (for example
// Unix milliseconds) in the trailer, for producers and tools to check.
func (r *Ring) SetConsumerHeartbeat(t int64) { r.heartbeat.Store(t) }

// ConsumerHeartbeat returns the time last given to SetConsumerHeartbeat.
func (r *Ring) ConsumerHeartbeat() int64 { return r.heartbeat.Load() }

// Close releases the ring's memory: a mapped ring is unmapped (the file
// stays). No other method may run during or after Close; the Ring and every
// payload and Claim.Buf from it are invalid afterwards. Closing twice is a
// no-op.
func (r *Ring) Close() error {
	buf, unmap := r.buf, r.unmap
	*r = Ring{}
	if unmap == nil || buf == nil {
		return nil
	}
	if err := unmap(buf); err != nil {
		return fmt.Errorf("ring: unmap: %w", err)
	}
	return nil
}

// Rewind moves an empty ring's head and tail together to the start of the
// next lap, so that the next records are written at offset 0. It reports
// whether it moved them; it does nothing to a ring holding any record, claimed
// or committed, or already at the start of a lap.
//
// Only the consumer may call it, between reads. Why: a ring cycles its whole
// data region, so a worker whose ring is many megabytes writes each frame
// into memory no cache holds; rewound whenever it empties, a lightly loaded
// ring keeps to its first few kilobytes, which stay in the CPU's caches.
//
// The bytes from the tail to the end of the lap are zero (unclaimed), so
// skipping them needs no padding record: the tail moves with one
// compare-and-swap, which a producer racing it makes fail (the ring is then
// not empty), and the head follows. A producer that read the old head in
// between sees at most the free space it really has: the region before the
// old head's offset in the new lap.
func (r *Ring) Rewind() bool {
	head := r.head.Load()
	if int(head)&r.mask == 0 || r.tail.Load() != head {
		return false
	}
	lap := (head | int64(r.mask)) + 1
	if !r.tail.CompareAndSwap(head, lap) {
		return false
	}
	atomicx.StoreRelease(r.head, lap)
	return true
}
