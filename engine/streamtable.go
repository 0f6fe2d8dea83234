package engine

import "math/bits"

// streamTable maps a stream id to the entry of the handler that receives
// its frames, for one worker and one direction (data or throttle). It is
// an open-addressing table with linear probing and backward-shift
// deletion: no tombstones, so a worker that opens and closes millions of
// streams keeps its probe sequences as short as the live streams make
// them, and a lookup touches one or two adjacent cache lines where a Go
// map touches a control word, a group and often an overflow group. Stream
// ids are never 0, which marks an empty slot. Every frame a worker reads
// costs a lookup, every stream an insert and a delete each way: the Go
// maps were 7% of a gateway's CPU.
type streamTable struct {
	slots []streamSlot
	shift uint8 // 64 - log2(len(slots))
	n     int
}

type streamSlot struct {
	id int64
	e  entry
	// replied marks a reply id's entry once the reply has begun: a
	// RESET of the initial stream before then ends the reply too
	// (Worker.afterSend, Worker.handleRead).
	replied bool
}

const streamTableMin = 64

func newStreamTable() streamTable {
	return streamTable{slots: make([]streamSlot, streamTableMin), shift: 64 - 6}
}

// home is the slot where id's probe starts: Fibonacci hashing, so the
// sequential counters in stream ids spread over the table.
func (t *streamTable) home(id int64) int {
	return int((uint64(id) * 0x9e3779b97f4a7c15) >> t.shift)
}

// ref returns id's slot, or nil; the pointer is good until the next put
// or remove.
func (t *streamTable) ref(id int64) *streamSlot {
	if id == 0 {
		return nil
	}
	mask := len(t.slots) - 1
	for i := t.home(id); ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.id == id {
			return s
		}
		if s.id == 0 {
			return nil
		}
	}
}

// get returns id's entry.
func (t *streamTable) get(id int64) (entry, bool) {
	if s := t.ref(id); s != nil {
		return s.e, true
	}
	return entry{}, false
}

// put sets id's entry, replacing the one it had. Id 0 is the system
// stream, whose frames never reach a stream handler (an initial stream 1,
// which no worker allocates, would have reply id 0): it is not stored.
func (t *streamTable) put(id int64, e entry) {
	if id == 0 {
		return
	}
	if 4*(t.n+1) > 3*len(t.slots) {
		t.grow()
	}
	mask := len(t.slots) - 1
	for i := t.home(id); ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.id == id {
			s.e, s.replied = e, false
			return
		}
		if s.id == 0 {
			*s = streamSlot{id: id, e: e}
			t.n++
			return
		}
	}
}

// remove deletes id's entry and returns it, if there was one, and shifts
// back the entries whose probe passed through its slot.
func (t *streamTable) remove(id int64) (entry, bool) {
	e, _, ok := t.take(id)
	return e, ok
}

// take is remove that also reports whether the entry's direction had
// begun: an initial id's entry exists only once its BEGIN went, a reply
// id's from the initial BEGIN on, marked replied when the reply begins.
func (t *streamTable) take(id int64) (e entry, begun, ok bool) {
	if id == 0 {
		return entry{}, false, false
	}
	mask := len(t.slots) - 1
	i := t.home(id)
	for {
		s := &t.slots[i]
		if s.id == id {
			break
		}
		if s.id == 0 {
			return entry{}, false, false
		}
		i = (i + 1) & mask
	}
	removed, replied := t.slots[i].e, t.slots[i].replied
	t.n--
	for j := (i + 1) & mask; ; j = (j + 1) & mask {
		s := &t.slots[j]
		if s.id == 0 {
			break
		}
		// The entry at j may move to the hole at i only if its home is
		// not within (i, j] cyclically: its probe passed through i.
		if (j-t.home(s.id))&mask >= (j-i)&mask {
			t.slots[i] = *s
			i = j
		}
	}
	t.slots[i] = streamSlot{}
	return removed, replied || IsInitial(id), true
}

// removeUnreplied deletes reply id's entry if its reply has not begun.
func (t *streamTable) removeUnreplied(id int64) {
	if s := t.ref(id); s != nil && !s.replied {
		t.remove(id)
	}
}

// len returns the number of entries.
func (t *streamTable) len() int { return t.n }

// ids appends the ids of the entries that owner holds to dst.
func (t *streamTable) ids(dst []int64, owner int64) []int64 {
	for i := range t.slots {
		if s := &t.slots[i]; s.id != 0 && s.e.owner == owner {
			dst = append(dst, s.id)
		}
	}
	return dst
}

func (t *streamTable) grow() {
	old := t.slots
	size := 2 * len(old)
	t.slots = make([]streamSlot, size)
	t.shift = uint8(64 - bits.TrailingZeros(uint(size)))
	t.n = 0
	for i := range old {
		if s := &old[i]; s.id != 0 {
			t.put(s.id, s.e)
			t.ref(s.id).replied = s.replied
		}
	}
}
