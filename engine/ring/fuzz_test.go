package ring_test

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/sluicehq/sluice/engine/ring"
)

var writeCorpus = flag.Bool("write-corpus", false, "write the seed corpus under testdata/fuzz")

// The fuzz operations. Each takes the op byte plus the operand bytes listed.
const (
	opClaim  = iota // size, type: Claim; a small type byte gives type 0 (ErrType)
	opWrite         // size, type: Write
	opCommit        // which: commit an outstanding claim
	opAbort         // which: abort an outstanding claim
	opRead          // limit: Read, or Rewind when the limit byte's high bit is set
	opCount
)

// entry is one claimed record in the model, in ring order.
type entry struct {
	msgType int32
	payload []byte
	state   int // claimed, committed or aborted
	claim   ring.Claim
}

const (
	claimed = iota
	committed
	aborted
)

// FuzzRing drives one ring with a byte string read as a list of operations
// and checks it against a model: every Read returns exactly the committed
// records, in order, up to the first one still claimed; Claim refuses
// exactly when Agrona's rule says the record does not fit, and moves the tail
// as that rule says; space outside [head, tail) is always zero; nothing
// panics.
func FuzzRing(f *testing.F) {
	seeds := [][]byte{
		{},
		// capacity 64: claim, commit, read.
		{0, opClaim, 5, 1, opCommit, 0, opRead, 4},
		// capacity 128: writes that wrap, with reads between.
		{1, opWrite, 13, 7, opWrite, 16, 7, opRead, 1, opWrite, 16, 9, opWrite, 11, 9,
			opRead, 7, opWrite, 16, 2, opWrite, 16, 3, opWrite, 16, 4, opRead, 7},
		// capacity 256: interleaved claims, an abort, a commit out of order,
		// a refusal while full, a bad type and an oversize message.
		{2, opClaim, 20, 1, opClaim, 32, 2, opClaim, 7, 3, opCommit, 1, opRead, 5,
			opAbort, 0, opRead, 5, opClaim, 0, 0, opClaim, 33, 1, opWrite, 32, 3,
			opWrite, 32, 3, opWrite, 32, 3, opWrite, 32, 3, opWrite, 32, 3, opRead, 2,
			opCommit, 0, opRead, 9, opWrite, 32, 5, opRead, 9},
		// capacity 512: zero-length records and limits of 0.
		{3, opWrite, 0, 1, opClaim, 0, 2, opRead, 0, opCommit, 0, opRead, 0, opRead, 3},
		// capacity 64: fill it, refuse, read one, write again.
		{0, opWrite, 8, 1, opWrite, 8, 1, opWrite, 8, 1, opWrite, 8, 1, opWrite, 8, 1,
			opRead, 1, opWrite, 8, 1, opRead, 7},
		// capacity 64: rewinds of a new ring, of a ring holding a record
		// and of a drained one, then records from offset 0 to a wrap.
		{0, opRead, 0x80, opWrite, 8, 1, opRead, 0x80, opRead, 4, opRead, 0x80, opRead, 0x80,
			opWrite, 16, 1, opWrite, 16, 2, opRead, 1, opWrite, 8, 3, opRead, 7, opRead, 0x81},
		// Found by the fuzzer: a wrap refused for want of room at offset 0,
		// and a wrap that fits only once the stale head cache is refreshed.
		[]byte("1008A0200112002002002000000"),
		[]byte("0800200800118002700000172000011200200200"),
	}
	for i, s := range seeds {
		f.Add(s)
		if *writeCorpus {
			dir := filepath.Join("testdata", "fuzz", "FuzzRing")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				f.Fatal(err)
			}
			body := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", s)
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("seed-%d", i)), []byte(body), 0o644); err != nil {
				f.Fatal(err)
			}
		}
	}
	f.Fuzz(func(t *testing.T, ops []byte) {
		next := func() int {
			if len(ops) == 0 {
				return 0
			}
			b := ops[0]
			ops = ops[1:]
			return int(b)
		}
		r, err := ring.NewHeap(ring.MinCapacity << (next() % 4))
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		m := &model{t: t, r: r}
		for len(ops) > 0 {
			switch next() % opCount {
			case opClaim:
				m.claim(next(), next(), false)
			case opWrite:
				m.claim(next(), next(), true)
			case opCommit:
				m.finish(next(), committed)
			case opAbort:
				m.finish(next(), aborted)
			case opRead:
				if b := next(); b&0x80 != 0 {
					m.rewind()
				} else {
					m.read(b % 8)
				}
			}
			m.checkZero()
		}
		for _, e := range m.entries {
			if e.state == claimed {
				m.finish(0, committed) // the oldest outstanding claim
			}
		}
		m.read(1 << 20)
		if r.Size() != 0 {
			t.Fatalf("drained ring has size %d", r.Size())
		}
		m.checkZero()
	})
}

type model struct {
	t       *testing.T
	r       *ring.Ring
	entries []entry // claimed and not yet consumed, in ring order
	seq     int
}

// claim claims (or writes) a record with a size and type taken from the
// operand bytes: sizes run a little past MaxMessage and type 0 shows up.
func (m *model) claim(sizeByte, typeByte int, write bool) {
	t, r := m.t, m.r
	size := sizeByte % (r.MaxMessage() + 3)
	msgType := int32(typeByte % 5)
	m.seq++
	payload := bytes.Repeat([]byte{byte(m.seq)}, size)

	capacity := int64(r.Capacity())
	head, tail := r.ConsumerPosition(), r.ProducerPosition()
	required := int64(ring.HeaderLength+size+ring.Alignment-1) &^ (ring.Alignment - 1)
	toEnd := capacity - tail%capacity
	fits := required <= capacity-(tail-head) && (required <= toEnd || required <= head%capacity)

	var (
		c   ring.Claim
		err error
	)
	if write {
		err = r.Write(msgType, payload)
	} else {
		c, err = r.Claim(msgType, size)
	}
	switch {
	case msgType <= 0:
		m.want(err, ring.ErrType, tail)
		return
	case size > r.MaxMessage():
		m.want(err, ring.ErrTooLarge, tail)
		return
	case !fits:
		wantTail := tail
		if required <= capacity-(tail-head) && required > toEnd {
			wantTail += toEnd // Agrona pads to the end even when it refuses
		}
		m.want(err, ring.ErrFull, wantTail)
		return
	}
	if err != nil {
		t.Fatalf("claim of %d bytes with %d of %d used, head %d: %v", required, tail-head, capacity, head, err)
	}
	wantTail := tail + required
	if required > toEnd {
		wantTail += toEnd
	}
	if got := r.ProducerPosition(); got != wantTail {
		t.Fatalf("tail %d after claiming %d at %d; want %d", got, required, tail, wantTail)
	}
	e := entry{msgType: msgType, payload: payload, state: committed}
	if !write {
		if len(c.Buf) != size || cap(c.Buf) != size {
			t.Fatalf("claim of %d gave len %d cap %d", size, len(c.Buf), cap(c.Buf))
		}
		copy(c.Buf, payload)
		e.state, e.claim = claimed, c
	}
	m.entries = append(m.entries, e)
}

func (m *model) want(got, want error, wantTail int64) {
	m.t.Helper()
	if !errors.Is(got, want) {
		m.t.Fatalf("got error %v, want %v", got, want)
	}
	if tail := m.r.ProducerPosition(); tail != wantTail {
		m.t.Fatalf("tail %d after a refused claim, want %d", tail, wantTail)
	}
}

// finish commits or aborts the which'th outstanding claim, if any.
func (m *model) finish(which, state int) {
	var open []int
	for i, e := range m.entries {
		if e.state == claimed {
			open = append(open, i)
		}
	}
	if len(open) == 0 {
		return
	}
	e := &m.entries[open[which%len(open)]]
	if state == committed {
		m.r.Commit(e.claim)
	} else {
		m.r.Abort(e.claim)
	}
	e.state = state
}

// read reads up to limit records and checks them against the model.
func (m *model) read(limit int) {
	t := m.t
	var want []entry
	consumed := 0
	for _, e := range m.entries {
		if len(want) == limit || e.state == claimed {
			break
		}
		consumed++
		if e.state == committed {
			want = append(want, e)
		}
	}
	got := 0
	n := m.r.Read(func(msgType int32, payload []byte) {
		if got >= len(want) {
			t.Fatalf("read record %d, want only %d", got+1, len(want))
		}
		if msgType != want[got].msgType || !bytes.Equal(payload, want[got].payload) {
			t.Fatalf("record %d: type %d payload %x; want type %d payload %x",
				got, msgType, payload, want[got].msgType, want[got].payload)
		}
		got++
	}, limit)
	if n != got || n != len(want) {
		t.Fatalf("Read returned %d after %d records; want %d", n, got, len(want))
	}
	m.entries = m.entries[consumed:]
	if len(m.entries) == 0 && m.r.Size() != 0 {
		// Only padding can be left: a refused claim's, which Read has not
		// reached because it stopped at the limit.
		if limit > len(want) {
			t.Fatalf("size %d after reading everything", m.r.Size())
		}
	}
}

// rewind calls Rewind, which must move head and tail to the next lap's
// start exactly when the ring is empty (no record claimed, committed or
// padding) and not already at a lap's start.
func (m *model) rewind() {
	capacity := int64(m.r.Capacity())
	head, tail := m.r.ConsumerPosition(), m.r.ProducerPosition()
	want := head == tail && head%capacity != 0
	if got := m.r.Rewind(); got != want {
		m.t.Fatalf("Rewind at head %d, tail %d: %v, want %v", head, tail, got, want)
	}
	wantPos := head
	if want {
		wantPos = (head/capacity + 1) * capacity
	}
	if h, tl := m.r.ConsumerPosition(), m.r.ProducerPosition(); h != wantPos || tl != max(tail, wantPos) {
		m.t.Fatalf("after Rewind at head %d, tail %d: head %d, tail %d", head, tail, h, tl)
	}
}

// checkZero checks that every byte of the data region outside [head, tail)
// is zero: the consumer zeroes what it consumes.
func (m *model) checkZero() {
	b := ring.Bytes(m.r)
	capacity := int64(m.r.Capacity())
	head, tail := m.r.ConsumerPosition(), m.r.ProducerPosition()
	for pos := tail; pos < head+capacity; pos++ {
		if v := b[pos%capacity]; v != 0 {
			m.t.Fatalf("byte %d (position %d) is %d outside [head %d, tail %d)", pos%capacity, pos, v, head, tail)
		}
	}
}
