package ring_test

import (
	"encoding/binary"
	"errors"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/engine/ring"
)

// record is one record as a handler saw it, copied out of the ring.
type record struct {
	msgType int32
	payload []byte
}

// drain reads everything committed, copying each record.
func drain(t *testing.T, r *ring.Ring) []record {
	t.Helper()
	var got []record
	h := func(msgType int32, payload []byte) {
		got = append(got, record{msgType, append([]byte{}, payload...)})
	}
	for r.Read(h, 1<<30) > 0 {
	}
	return got
}

// fill writes a pattern derived from seed into b, so that any byte out of
// place shows.
func fill(b []byte, seed uint64) {
	for i := range b {
		b[i] = byte(seed>>(8*(i%8))) ^ byte(i*131)
	}
}

func pattern(n int, seed uint64) []byte {
	b := make([]byte, n)
	fill(b, seed)
	return b
}

func newHeap(t testing.TB, capacity int) *ring.Ring {
	t.Helper()
	r, err := ring.NewHeap(capacity)
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.Close() })
	return r
}

func TestWriteRead(t *testing.T) {
	const capacity = 1024
	tests := []struct {
		name    string
		msgType int32
		length  int
	}{
		{"empty", 1, 0},
		{"one byte", 2, 1},
		{"seven", 3, 7},
		{"aligned", 0x40000002, 8},
		{"nine", 5, 9},
		{"frame header", 2, 68},
		{"max message", 0x7fffffff, capacity / 8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newHeap(t, capacity)
			payload := pattern(tt.length, uint64(tt.length))
			require.NoError(t, r.Write(tt.msgType, payload))

			span := (tt.length + ring.HeaderLength + 7) &^ 7
			assert.Equal(t, int64(span), r.ProducerPosition(), "record is aligned to 8")
			assert.Equal(t, span, r.Size())

			got := drain(t, r)
			require.Len(t, got, 1)
			assert.Equal(t, tt.msgType, got[0].msgType)
			assert.Equal(t, payload, got[0].payload)
			assert.Equal(t, int64(span), r.ConsumerPosition())
			assert.Zero(t, r.Size())
			assert.Equal(t, make([]byte, capacity), ring.Bytes(r)[:capacity], "consumed space is zeroed")
		})
	}
}

// TestLayout pins the bytes of one record against Agrona's RecordDescriptor:
// the length field holds HEADER_LENGTH + payload length (Agrona's write and
// tryClaim store recordLength = length + HEADER_LENGTH), then the type, then
// the payload, padded with zeros to ALIGNMENT = 8.
func TestLayout(t *testing.T) {
	const capacity = 1024
	r := newHeap(t, capacity)
	require.NoError(t, r.Write(7, []byte("abc")))

	b := ring.Bytes(r)
	want := []byte{
		11, 0, 0, 0, // length: 8-byte header + 3
		7, 0, 0, 0, // type
		'a', 'b', 'c', 0, 0, 0, 0, 0, // payload, zero pad to 16
	}
	assert.Equal(t, want, b[:16])
	assert.Equal(t, uint64(16), binary.LittleEndian.Uint64(b[capacity+ring.TailOffset:]), "tail")
	assert.Zero(t, binary.LittleEndian.Uint64(b[capacity+ring.HeadOffset:]), "head")

	require.Len(t, drain(t, r), 1)
	assert.Equal(t, make([]byte, 16), b[:16], "consumed record is zeroed")
	assert.Equal(t, uint64(16), binary.LittleEndian.Uint64(b[capacity+ring.HeadOffset:]), "head")
}

// TestTrailerLayout pins Agrona's RingBufferDescriptor: with CACHE_LINE_LENGTH
// 64, each field is preceded by 2*64 bytes, starting from offset 0.
func TestTrailerLayout(t *testing.T) {
	assert.Equal(t, 8, ring.HeaderLength)
	assert.Equal(t, 8, ring.Alignment)
	assert.Equal(t, int32(-1), ring.PaddingType)
	assert.Equal(t, 128, ring.TailOffset)
	assert.Equal(t, 256, ring.HeadCacheOffset)
	assert.Equal(t, 384, ring.HeadOffset)
	assert.Equal(t, 512, ring.CorrelationOffset)
	assert.Equal(t, 640, ring.HeartbeatOffset)
	assert.Equal(t, 768, ring.TrailerLength)

	const capacity = 256
	r := newHeap(t, capacity)
	b := ring.Bytes(r)
	require.Len(t, b, capacity+ring.TrailerLength)
	word := func(off int) uint64 { return binary.LittleEndian.Uint64(b[capacity+off:]) }

	assert.Equal(t, int64(0), r.NextCorrelationID())
	assert.Equal(t, int64(1), r.NextCorrelationID())
	assert.Equal(t, uint64(2), word(ring.CorrelationOffset))
	r.SetConsumerHeartbeat(1234)
	assert.Equal(t, uint64(1234), word(ring.HeartbeatOffset))
	assert.Equal(t, int64(1234), r.ConsumerHeartbeat())

	// Fill the ring so that a producer has to refresh its head cache.
	for r.Write(1, make([]byte, 24)) == nil {
	}
	drain(t, r)
	require.NoError(t, r.Write(1, make([]byte, 24)))
	assert.Equal(t, uint64(r.ProducerPosition()), word(ring.TailOffset))
	assert.Equal(t, uint64(r.ConsumerPosition()), word(ring.HeadOffset))
	assert.Equal(t, uint64(r.ConsumerPosition()), word(ring.HeadCacheOffset))
	assert.Zero(t, word(0), "the first 128 bytes are padding")
}

func TestErrors(t *testing.T) {
	r := newHeap(t, 512)
	tests := []struct {
		name    string
		msgType int32
		length  int
		want    error
		text    string
	}{
		{"zero type", 0, 1, ring.ErrType, "ring: message type must be positive"},
		{"padding type", ring.PaddingType, 1, ring.ErrType, "ring: message type must be positive"},
		{"negative type", -7, 1, ring.ErrType, "ring: message type must be positive"},
		{"too large", 1, 512/8 + 1, ring.ErrTooLarge, "ring: message too large"},
		{"negative length", 1, -1, ring.ErrLength, "ring: negative message length"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := r.Claim(tt.msgType, tt.length)
			require.ErrorIs(t, err, tt.want)
			assert.EqualError(t, err, tt.text)
			assert.Nil(t, c.Buf)
			if tt.length >= 0 {
				assert.ErrorIs(t, r.Write(tt.msgType, make([]byte, tt.length)), tt.want)
			}
			assert.Zero(t, r.ProducerPosition(), "nothing claimed")
		})
	}
	assert.EqualError(t, ring.ErrFull, "ring: full")
}

// twice doubles n at run time (on 32-bit platforms 2*MaxCapacity overflows
// int, which the compiler rejects as a constant).
func twice(n int) int { return n << 1 }

func TestCapacity(t *testing.T) {
	tests := []struct {
		name     string
		capacity int
		wantErr  bool
	}{
		{"min", ring.MinCapacity, false},
		{"64 KiB", 64 << 10, false},
		{"zero", 0, true},
		{"negative", -1024, true},
		{"below min", 32, true},
		{"not a power of two", 1000, true},
		{"above max", twice(ring.MaxCapacity), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := ring.NewHeap(tt.capacity)
			if tt.wantErr {
				require.ErrorIs(t, err, ring.ErrCapacity)
				assert.Nil(t, r)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.capacity, r.Capacity())
			assert.Equal(t, tt.capacity/8, r.MaxMessage())
			assert.Len(t, ring.Bytes(r), tt.capacity+ring.TrailerLength)
			require.NoError(t, r.Close())
		})
	}
}

// TestWrap pushes 100k records of sizes chosen to end at every alignment
// before the end of the region, so the ring wraps hundreds of times, each
// time with a padding record, and checks every record comes back whole and
// in order.
func TestWrap(t *testing.T) {
	const (
		capacity = 4096
		count    = 100_000
	)
	r := newHeap(t, capacity)
	var (
		next    uint64 // sequence of the next record to read
		wraps   int
		lastPos int64
	)
	check := func(msgType int32, payload []byte) {
		want := pattern(sizeOf(next, r.MaxMessage()), next)
		if msgType != int32(next%1000)+1 || string(payload) != string(want) {
			t.Fatalf("record %d: type %d, payload %x; want type %d, payload %x",
				next, msgType, payload, next%1000+1, want)
		}
		next++
	}
	buf := make([]byte, r.MaxMessage())
	for seq := uint64(0); seq < count; {
		n := sizeOf(seq, r.MaxMessage())
		fill(buf[:n], seq)
		err := r.Write(int32(seq%1000)+1, buf[:n])
		if errors.Is(err, ring.ErrFull) {
			r.Read(check, 7)
			continue
		}
		require.NoError(t, err)
		seq++
		if pos := r.ProducerPosition(); pos/capacity != lastPos/capacity {
			wraps++
		}
		lastPos = r.ProducerPosition()
	}
	for r.Read(check, 100) > 0 {
	}
	assert.Equal(t, uint64(count), next)
	assert.Zero(t, r.Size())
	assert.Greater(t, wraps, 1000)
}

// sizeOf is the payload size of record seq in the wrap tests: it cycles
// through lengths that are not multiples of 8 and through the maximum.
func sizeOf(seq uint64, maxMessage int) int {
	return int(seq*37) % (maxMessage + 1)
}

// TestReadAcrossWrap checks that one Read carries on past the padding at the
// end of the data region.
func TestReadAcrossWrap(t *testing.T) {
	r := newHeap(t, 256)
	// Move head and tail to 240: the next 24-byte record does not fit.
	for range 15 {
		require.NoError(t, r.Write(1, []byte("12345678")))
	}
	drain(t, r)
	require.Equal(t, int64(240), r.ConsumerPosition())

	require.NoError(t, r.Write(2, []byte("wrapped-0123456")))
	require.NoError(t, r.Write(3, []byte("x")))
	assert.Equal(t, int64(256+24+16), r.ProducerPosition(), "16 bytes of padding before the wrap")

	var types []int32
	n := r.Read(func(msgType int32, _ []byte) { types = append(types, msgType) }, 10)
	assert.Equal(t, 2, n, "padding is not counted")
	assert.Equal(t, []int32{2, 3}, types)
	assert.Equal(t, r.ProducerPosition(), r.ConsumerPosition())
	assert.Equal(t, make([]byte, 256), ring.Bytes(r)[:256])
}

func TestReadLimit(t *testing.T) {
	r := newHeap(t, 1024)
	for i := range 10 {
		require.NoError(t, r.Write(int32(i+1), []byte{byte(i)}))
	}
	var got []int32
	h := func(msgType int32, _ []byte) { got = append(got, msgType) }
	assert.Equal(t, 0, r.Read(h, 0))
	assert.Equal(t, 3, r.Read(h, 3))
	assert.Equal(t, int64(3*16), r.ConsumerPosition(), "head covers only what was read")
	assert.Equal(t, 7, r.Read(h, 100))
	assert.Equal(t, 0, r.Read(h, 100))
	assert.Equal(t, []int32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, got)
}

// TestReadHandsBackSpace: a handler that writes to the ring it is read
// from (a worker sending frames to itself) can go on writing through one
// long Read, far past the ring's capacity: consumed space goes back to
// producers as the batch goes, not only at its end.
func TestReadHandsBackSpace(t *testing.T) {
	const capacity = 1024
	r := newHeap(t, capacity)
	payload := pattern(112, 3) // 120-byte records
	for i := range 4 {
		require.NoError(t, r.Write(int32(i+1), payload))
	}
	written, refused := 0, 0
	h := func(msgType int32, p []byte) {
		require.Equal(t, payload, p)
		if err := r.Write(msgType+4, payload); err != nil {
			require.ErrorIs(t, err, ring.ErrFull)
			refused++
			return
		}
		written++
	}
	require.Equal(t, 40, r.Read(h, 40))
	assert.Zero(t, refused, "writes refused in the batch")
	assert.Equal(t, 40, written)
	assert.Greater(t, written*120, capacity, "the batch wrote more than the ring holds")
	rest := drain(t, r)
	require.Len(t, rest, 4, "what is left is the four records written last")
	for i, rec := range rest {
		assert.Equal(t, int32(41+i), rec.msgType)
		assert.Equal(t, payload, rec.payload)
	}
}

// TestFull fills the ring until it refuses, checks that the refusal changed
// nothing, drains it and writes again.
func TestFull(t *testing.T) {
	const capacity = 1024
	r := newHeap(t, capacity)
	payload := pattern(40, 9) // 48-byte records: 21 fit, 16 bytes stay free
	written := 0
	var err error
	for {
		if err = r.Write(int32(written+1), payload); err != nil {
			break
		}
		written++
	}
	require.ErrorIs(t, err, ring.ErrFull)
	require.Equal(t, capacity/48, written)
	require.Equal(t, written*48, r.Size())

	before := append([]byte{}, ring.Bytes(r)...)
	_, err = r.Claim(1, 40)
	require.ErrorIs(t, err, ring.ErrFull)
	require.ErrorIs(t, r.Write(1, payload), ring.ErrFull)
	require.NoError(t, r.Write(1, payload[:8]), "a record that fits is still taken")
	after := ring.Bytes(r)
	assert.Equal(t, before[:written*48], after[:written*48], "refused writes touch nothing")

	got := drain(t, r)
	require.Len(t, got, written+1)
	for i, rec := range got[:written] {
		assert.Equal(t, int32(i+1), rec.msgType)
		assert.Equal(t, payload, rec.payload)
	}
	assert.Equal(t, payload[:8], got[written].payload)

	// Now at 1024: the ring is empty again and takes the maximum at once.
	require.NoError(t, r.Write(1, make([]byte, r.MaxMessage())))
}

// TestFullAtWrap refuses a record that has to wrap while the head has not
// moved far enough from offset 0. Agrona still claims the padding to the
// end of the region, so the consumer can move on; the records before it are
// untouched and the next try succeeds once they are read.
func TestFullAtWrap(t *testing.T) {
	r := newHeap(t, 256)
	for range 15 { // 15 records of 16 bytes: tail at 240
		require.NoError(t, r.Write(1, []byte("12345678")))
	}
	var got []record
	h := func(msgType int32, p []byte) { got = append(got, record{msgType, append([]byte{}, p...)}) }
	require.Equal(t, 1, r.Read(h, 1)) // head at 16
	require.ErrorIs(t, r.Write(2, make([]byte, 24)), ring.ErrFull, "needs 32 at offset 0, head at 16")
	assert.Equal(t, int64(256), r.ProducerPosition(), "padding to the end was claimed")

	require.Equal(t, 14, r.Read(h, 100))
	require.Len(t, got, 15)
	for _, rec := range got {
		assert.Equal(t, record{1, []byte("12345678")}, rec)
	}
	require.NoError(t, r.Write(2, make([]byte, 24)))
	assert.Equal(t, int64(256+32), r.ProducerPosition())
}

func TestClaimCommit(t *testing.T) {
	r := newHeap(t, 1024)
	c, err := r.Claim(9, 13)
	require.NoError(t, err)
	require.Len(t, c.Buf, 13)
	require.Equal(t, 13, cap(c.Buf), "Buf cannot grow into the next record")
	copy(c.Buf, "in place, 13!")

	assert.Zero(t, r.Read(func(int32, []byte) { t.Fatal("uncommitted record was read") }, 10))
	r.Commit(c)
	got := drain(t, r)
	assert.Equal(t, []record{{9, []byte("in place, 13!")}}, got)
}

func TestAbort(t *testing.T) {
	r := newHeap(t, 1024)
	a, err := r.Claim(1, 20)
	require.NoError(t, err)
	b, err := r.Claim(2, 4)
	require.NoError(t, err)
	copy(a.Buf, "aborted, never seen!")
	copy(b.Buf, "kept")

	r.Commit(b)
	assert.Zero(t, r.Read(func(int32, []byte) { t.Fatal("read past an outstanding claim") }, 10))
	r.Abort(a)
	assert.Equal(t, []record{{2, []byte("kept")}}, drain(t, r))
	assert.Zero(t, r.Size(), "aborted space is consumed as padding")

	c, err := r.Claim(3, 0)
	require.NoError(t, err)
	r.Abort(c)
	assert.Empty(t, drain(t, r))
	assert.Equal(t, r.ProducerPosition(), r.ConsumerPosition())
}

func TestClaimMisuse(t *testing.T) {
	r := newHeap(t, 1024)
	c, err := r.Claim(1, 8)
	require.NoError(t, err)
	r.Commit(c)
	assert.PanicsWithValue(t, "ring: commit or abort of a claim that is not outstanding", func() { r.Commit(c) })
	assert.PanicsWithValue(t, "ring: commit or abort of a claim that is not outstanding", func() { r.Abort(c) })
	assert.PanicsWithValue(t, "ring: commit or abort of the zero Claim", func() { r.Commit(ring.Claim{}) })
	assert.Len(t, drain(t, r), 1)
}

// TestHandlerPanic checks Agrona's rule that a record whose handler fails
// is consumed: the next Read starts after it.
func TestHandlerPanic(t *testing.T) {
	r := newHeap(t, 1024)
	for i := range 3 {
		require.NoError(t, r.Write(int32(i+1), []byte("x")))
	}
	var got []int32
	assert.Panics(t, func() {
		r.Read(func(msgType int32, _ []byte) {
			got = append(got, msgType)
			if msgType == 2 {
				panic("handler failed")
			}
		}, 10)
	})
	assert.Equal(t, int64(32), r.ConsumerPosition())
	assert.Equal(t, make([]byte, 32), ring.Bytes(r)[:32])
	assert.Equal(t, []record{{3, []byte("x")}}, drain(t, r))
	assert.Equal(t, []int32{1, 2}, got)
}

func TestSize(t *testing.T) {
	r := newHeap(t, 1024)
	assert.Zero(t, r.Size())
	require.NoError(t, r.Write(1, make([]byte, 1)))
	assert.Equal(t, 16, r.Size())
	_, err := r.Claim(1, 100) // outstanding claims count
	require.NoError(t, err)
	assert.Equal(t, 16+112, r.Size())
}

// TestMultiProducer runs producers writing numbered records of varying size
// into a small ring while one consumer drains it: every record must arrive
// once, whole, and in its producer's order.
func TestMultiProducer(t *testing.T) {
	for _, producers := range []int{2, 3, 4} {
		t.Run(strconv.Itoa(producers)+" producers", func(t *testing.T) {
			const capacity = 4096
			perProducer := 20_000
			if testing.Short() {
				perProducer = 2_000
			}
			r := newHeap(t, capacity)

			var wg sync.WaitGroup
			for p := range producers {
				wg.Go(func() {
					buf := make([]byte, r.MaxMessage())
					for seq := 0; seq < perProducer; {
						n := 8 + (seq*29+p*7)%(r.MaxMessage()-7)
						binary.LittleEndian.PutUint32(buf, uint32(seq))
						binary.LittleEndian.PutUint32(buf[4:], uint32(p))
						fill(buf[8:n], uint64(seq))
						var err error
						if seq%3 == 0 {
							err = r.Write(int32(p+1), buf[:n])
						} else {
							var c ring.Claim
							if c, err = r.Claim(int32(p+1), n); err == nil {
								copy(c.Buf, buf[:n])
								r.Commit(c)
							}
						}
						if errors.Is(err, ring.ErrFull) {
							runtime.Gosched()
							continue
						}
						if err != nil {
							t.Error(err)
							return
						}
						seq++
					}
				})
			}

			next := make([]int, producers)
			total := 0
			var bad error
			check := func(msgType int32, payload []byte) {
				total++
				p := int(msgType) - 1
				seq := int(binary.LittleEndian.Uint32(payload))
				switch {
				case bad != nil:
				case p < 0 || p >= producers || int(binary.LittleEndian.Uint32(payload[4:])) != p:
					bad = errors.New("record from an unknown producer")
				case seq != next[p]:
					bad = errors.New("record out of order or lost")
				case len(payload) != 8+(seq*29+p*7)%(r.MaxMessage()-7) ||
					string(payload[8:]) != string(pattern(len(payload)-8, uint64(seq))):
					bad = errors.New("record payload corrupted")
				}
				next[p]++
			}
			done := make(chan struct{})
			go func() { wg.Wait(); close(done) }()
		drain:
			for total < producers*perProducer {
				// The consumer rewinds whenever it finds the ring empty, as
				// a worker does, racing the producers' claims.
				r.Rewind()
				if r.Read(check, 64) == 0 {
					select {
					case <-done: // a producer gave up: take what is left
						if r.Read(check, 1<<20) == 0 {
							break drain
						}
					default:
						runtime.Gosched()
					}
				}
			}
			<-done
			require.NoError(t, bad)
			assert.Zero(t, r.Read(check, 64))
			for p := range producers {
				assert.Equal(t, perProducer, next[p], "producer %d", p)
			}
			assert.Zero(t, r.Size())
		})
	}
}

// TestNoAllocs checks the hot path: Claim, Commit, Write and Read with a
// long-lived handler allocate nothing.
func TestNoAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	r := newHeap(t, 4096)
	payload := make([]byte, 64)
	var sum int
	h := func(_ int32, p []byte) { sum += len(p) }
	allocs := testing.AllocsPerRun(1000, func() {
		c, err := r.Claim(1, 64)
		if err != nil {
			panic(err)
		}
		r.Commit(c)
		if err := r.Write(2, payload); err != nil {
			panic(err)
		}
		r.Read(h, 10)
	})
	assert.Zero(t, allocs)
	assert.Equal(t, 2*1001*64, sum)
}

// TestReadCorrupt checks that a record length no producer could have written
// (from a damaged file) stops Read instead of panicking.
func TestReadCorrupt(t *testing.T) {
	tests := []struct {
		name   string
		length uint32
	}{
		{"past the end", 1025},
		{"huge", 0x7fffffff},
		{"shorter than a header", 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newHeap(t, 1024)
			require.NoError(t, r.Write(1, []byte("ok")))
			require.NoError(t, r.Write(1, []byte("damaged")))
			binary.LittleEndian.PutUint32(ring.Bytes(r)[16:], tt.length)
			assert.Equal(t, []record{{1, []byte("ok")}}, drain(t, r))
			assert.Equal(t, int64(16), r.ConsumerPosition())
		})
	}
}

// TestHeapAlignment checks that a heap ring starts on a 128-byte boundary,
// so the trailer slots sit on their own cache lines as in a mapping.
func TestHeapAlignment(t *testing.T) {
	for _, capacity := range []int{64, 128, 1024, 4096, 1 << 16, 1 << 20} {
		r := newHeap(t, capacity)
		b := ring.Bytes(r)
		assert.Zero(t, uintptr(unsafe.Pointer(&b[0]))%128)
		assert.Len(t, b, r.Capacity()+ring.TrailerLength)
		assert.Equal(t, len(b), cap(b), "no slack past the trailer")
	}
}

// TestCommitLength publishes less than was claimed: the record carries the
// bytes written, the rest of the claim is skipped as padding, and records
// claimed after it are read in order.
func TestCommitLength(t *testing.T) {
	tests := []struct {
		name    string
		claimed int
		length  int
	}{
		{name: "shorter by less than a word", claimed: 13, length: 10},
		{name: "shorter by many words", claimed: 100, length: 3},
		{name: "empty", claimed: 64, length: 0},
		{name: "whole claim", claimed: 24, length: 24},
		{name: "same aligned size", claimed: 15, length: 9},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newHeap(t, 1024)
			c, err := r.Claim(7, tt.claimed)
			require.NoError(t, err)
			next, err := r.Claim(8, 4)
			require.NoError(t, err)
			fill(c.Buf, 42)
			want := append([]byte{}, c.Buf[:tt.length]...)
			copy(next.Buf, "next")
			r.Commit(next)
			r.CommitLength(c, tt.length)
			assert.Equal(t, []record{{7, want}, {8, []byte("next")}}, drain(t, r))
			assert.Zero(t, r.Size())
			assert.Equal(t, r.ProducerPosition(), r.ConsumerPosition())
		})
	}
}

// TestCommitLengthAcrossWrap commits short records over and over, so that
// claims and their padding meet the end of the data region in every
// alignment.
func TestCommitLengthAcrossWrap(t *testing.T) {
	r := newHeap(t, 256)
	var got []record
	h := func(msgType int32, payload []byte) {
		got = append(got, record{msgType, append([]byte{}, payload...)})
	}
	for i := range 200 {
		claimed := 1 + i%31
		c, err := r.Claim(1, claimed)
		require.NoError(t, err, "claim %d", i)
		n := i % (claimed + 1)
		fill(c.Buf, uint64(i))
		r.CommitLength(c, n)
		got = got[:0]
		r.Read(h, 10)
		require.Equal(t, []record{{1, pattern(n, uint64(i))}}, got, "record %d", i)
	}
	assert.Zero(t, r.Size())
}

func TestCommitLengthMisuse(t *testing.T) {
	r := newHeap(t, 1024)
	c, err := r.Claim(1, 8)
	require.NoError(t, err)
	assert.PanicsWithValue(t, "ring: commit length outside the claim", func() { r.CommitLength(c, 9) })
	assert.PanicsWithValue(t, "ring: commit length outside the claim", func() { r.CommitLength(c, -1) })
	r.CommitLength(c, 8)
	assert.PanicsWithValue(t, "ring: commit or abort of a claim that is not outstanding", func() { r.CommitLength(c, 1) })
	assert.PanicsWithValue(t, "ring: commit or abort of the zero Claim", func() { r.CommitLength(ring.Claim{}, 0) })
	assert.Len(t, drain(t, r), 1)
}

// TestRewind checks that an empty ring moves to the start of its next lap,
// so the next record is written at offset 0, and that a ring holding any
// record, committed or only claimed, or already at a lap's start, stays.
func TestRewind(t *testing.T) {
	const capacity = 1024
	r := newHeap(t, capacity)
	assert.False(t, r.Rewind(), "a new ring is at the start of its first lap")

	require.NoError(t, r.Write(1, make([]byte, 40)))
	assert.False(t, r.Rewind(), "a committed record is waiting")
	drain(t, r)
	c, err := r.Claim(2, 8)
	require.NoError(t, err)
	assert.False(t, r.Rewind(), "a claimed record is waiting")
	r.Commit(c)
	assert.Len(t, drain(t, r), 1)
	assert.Equal(t, int64(48+16), r.ConsumerPosition())

	require.True(t, r.Rewind())
	assert.Equal(t, int64(capacity), r.ConsumerPosition())
	assert.Equal(t, int64(capacity), r.ProducerPosition())
	assert.Zero(t, r.Size())
	assert.False(t, r.Rewind(), "already at the start of a lap")

	// The next record lands at offset 0, and the whole capacity is free:
	// eight records of an eighth each (header included) fit, a ninth does
	// not.
	payload := pattern(capacity/8-ring.HeaderLength, 7)
	require.NoError(t, r.Write(3, payload))
	assert.Equal(t, int32(3), int32(binary.LittleEndian.Uint64(ring.Bytes(r)[0:])>>32), "record header at offset 0")
	for range 7 {
		require.NoError(t, r.Write(3, payload))
	}
	assert.ErrorIs(t, r.Write(3, payload), ring.ErrFull)
	got := drain(t, r)
	require.Len(t, got, 8)
	for _, rec := range got {
		assert.Equal(t, payload, rec.payload)
	}
	assert.Equal(t, int64(2*capacity), r.ConsumerPosition())
	assert.False(t, r.Rewind())
}
