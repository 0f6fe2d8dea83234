// Package ring is a many-to-one ring buffer of typed records in Agrona's
// ManyToOneRingBuffer format, over heap memory or a memory-mapped file.
//
// Every worker owns one [Ring] as its inbound queue (ARCHITECTURE.md §4): any
// goroutine may write frames into it, and the worker alone reads them. The
// bytes follow Agrona's RingBufferDescriptor and RecordDescriptor exactly, so
// a ring mapped from <engine-dir>/data<N> with [Map] can be read from another
// process with [Open], and Agrona tooling can read it too. A full ring
// refuses a write with [ErrFull]; it never blocks and never drops.
//
// # Record format
//
// The data region is capacity bytes, a power of two. Records are laid out
// back to back, each starting on an 8-byte boundary, little-endian:
//
//	offset 0  int32  length   header plus payload, not counting the alignment
//	                          gap; negative while a Claim is outstanding, 0 for
//	                          space not yet written (and for a Write's record
//	                          until its header is stored)
//	offset 4  int32  msgType  > 0; -1 (PaddingType) marks padding
//	offset 8  length-8 bytes of payload, then zeros up to the next multiple of 8
//
// A record never wraps. When one does not fit before the end of the data
// region, the rest of the region becomes a padding record and the record
// starts at offset 0. The largest payload is capacity/8 ([Ring.MaxMessage]).
//
// Producers move the tail with compare-and-swap, fill the payload, then store
// the length (with the type) as a release: the consumer, which loads the
// header with acquire semantics, never sees a half-written record. A
// [Ring.Claim], whose payload its caller fills later, first stores the
// negative length and the type, which [Ring.Commit] and [Ring.Abort] check;
// [Ring.Write] skips that store, as the header reads 0 until it commits. The
// header is stored as one little-endian int64, so length and type change
// together even for a reader that loads them as two int32s, as Agrona does.
// The consumer zeroes the bytes it has consumed and publishes the head with
// a release store, once per [Ring.Read]. The release stores are
// internal/atomicx's StoreRelease rather than sync/atomic's Store, a full
// barrier; the atomicx package doc says why they are release stores and
// when the portable ones are built.
//
// Beyond Agrona, the consumer may [Ring.Rewind] an empty ring: head and tail
// jump together to the start of the next lap (one compare-and-swap on the
// tail, which fails if a producer claimed first), so that the next records
// are written from offset 0. A worker does this whenever its ring runs
// empty: otherwise a lightly loaded ring of many megabytes writes every
// frame into memory no cache holds. The file format is unchanged; a reader
// sees only positions that skip the rest of a lap, as they do at a wrap.
//
// # Trailer
//
// The trailer, [TrailerLength] = 768 bytes, follows the data region. Its
// int64 fields each sit alone on a 128-byte slot (two cache lines); the
// offsets below are from the end of the data region:
//
//	  0  padding
//	128  tail        bytes ever claimed by producers    (TailOffset)
//	256  head cache  producers' copy of the head        (HeadCacheOffset)
//	384  head        bytes ever consumed                (HeadOffset)
//	512  correlation counter for unique ids             (CorrelationOffset)
//	640  consumer heartbeat time                        (HeartbeatOffset)
//
// A mapped file is therefore capacity+768 bytes long, and a fresh one is all
// zeros.
//
// # Usage
//
// Build a frame in place: claim, fill, commit. Nothing is copied, and the
// record reaches the consumer only at Commit.
//
//	c, err := r.Claim(int32(frame.FrameData), n)
//	if err != nil {
//		return err // ErrFull: the ring refuses; apply back-pressure
//	}
//	// A flyweight builder writes the frame straight into the record.
//	if _, err := db.Wrap(c.Buf, 0, n).StreamID(id).Payload(p).BuildLimit(); err != nil {
//		r.Abort(c) // the record becomes padding
//		return err
//	}
//	r.Commit(c)
//
// A producer that does not know the length in advance (a socket read
// straight into the payload) claims the most it may write and publishes
// what it wrote with [Ring.CommitLength]; the rest of the claim becomes
// padding:
//
//	c, _ := r.Claim(int32(frame.FrameData), dataHeader+max)
//	n, err := unix.Read(fd, c.Buf[dataHeader:])
//	// … write the header for n bytes into c.Buf[:dataHeader] …
//	r.CommitLength(c, dataHeader+n)
//
// [Ring.Write] claims, copies and commits in one call. The consumer drains in
// bounded batches with a handler it keeps for the ring's lifetime:
//
//	w.onRecord = w.handle // once: a method value allocates when it is made
//	for {
//		if r.Read(w.onRecord, 256) == 0 {
//			idle()
//		}
//	}
//
// The payload given to the handler aliases the ring and is valid only until
// the handler returns.
package ring
