package engine

import "math/bits"

// streamTable maps a stream id to the entry of the handler that receives
// its frames, for one worker and one direction (data or throttle).
//
// The ids the worker allocated itself, nearly all of them, sit in a
// direct-mapped array at their low bits: a worker's ids count up by two
// (SupplyInitialIDOn), and a stream's initial and reply ids differ only in
// the lowest bit, so the streams a request opens along a pipeline take
// neighbouring slots, and every frame's lookup is one load and one
// comparison. The hash table behind it (hashTable) takes the ids of other
// workers and the few of the worker's own whose slot a live stream of an
// earlier lap still holds (a long-lived connection's, say). The hash table
// alone would scatter consecutive ids (Fibonacci hashing), so that each
// frame's lookup touched a cache line of its own.
type streamTable struct {
	direct []streamSlot
	local  int // the worker whose ids go to direct (ClientIndex); -1: none
	// spilled counts the entries of local ids in hash, so that a lookup
	// that misses its direct slot probes hash only when one might be
	// there.
	spilled  int
	inDirect int // the entries in direct
	hash     hashTable
}

// directSlots is the size of the direct-mapped array: eight times the
// ids a worker's live requests span at 64 tools/calls in flight through
// the gateway (8 ids a call), so that a new id's slot is free unless a
// stream has outlived 2,048 newer ones.
const directSlots = 4096

func newStreamTable(local int) streamTable {
	return streamTable{direct: make([]streamSlot, directSlots), local: local, hash: newHashTable()}
}

// isDirect reports whether id is one of the table's worker's own.
func (t *streamTable) isDirect(id int64) bool { return ClientIndex(id) == t.local }

// ref returns id's slot, or nil; the pointer is good until the next put
// or remove.
func (t *streamTable) ref(id int64) *streamSlot {
	if id == 0 {
		return nil
	}
	if t.isDirect(id) {
		if s := &t.direct[id&(directSlots-1)]; s.id == id {
			return s
		}
		if t.spilled == 0 {
			return nil
		}
	}
	return t.hash.ref(id)
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
	if t.isDirect(id) {
		s := &t.direct[id&(directSlots-1)]
		switch {
		case s.id == id:
			s.e, s.replied = e, false
			return
		case s.id == 0:
			if t.spilled > 0 {
				if h := t.hash.ref(id); h != nil {
					h.e, h.replied = e, false
					return
				}
			}
			*s = streamSlot{id: id, e: e}
			t.inDirect++
			return
		}
		// An older live stream holds the slot.
		if t.hash.put(id, e) {
			t.spilled++
		}
		return
	}
	t.hash.put(id, e)
}

// remove deletes id's entry and returns it, if there was one.
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
	if t.isDirect(id) {
		if s := &t.direct[id&(directSlots-1)]; s.id == id {
			e, begun = s.e, s.replied || IsInitial(id)
			*s = streamSlot{}
			t.inDirect--
			return e, begun, true
		}
		if t.spilled == 0 {
			return entry{}, false, false
		}
		if e, begun, ok = t.hash.take(id); ok {
			t.spilled--
		}
		return e, begun, ok
	}
	return t.hash.take(id)
}

// removeUnreplied deletes reply id's entry if its reply has not begun.
func (t *streamTable) removeUnreplied(id int64) {
	if s := t.ref(id); s != nil && !s.replied {
		t.remove(id)
	}
}

// len returns the number of entries.
func (t *streamTable) len() int { return t.inDirect + t.hash.n }

// ids appends the ids of the entries that owner holds to dst.
func (t *streamTable) ids(dst []int64, owner int64) []int64 {
	for i := range t.direct {
		if s := &t.direct[i]; s.id != 0 && s.e.owner == owner {
			dst = append(dst, s.id)
		}
	}
	return t.hash.ids(dst, owner)
}

// hashTable is an open-addressing table with linear probing and
// backward-shift deletion: no tombstones, so a worker that opens and
// closes millions of streams keeps its probe sequences as short as the
// live streams make them, and a lookup touches one or two adjacent cache
// lines where a Go map touches a control word, a group and often an
// overflow group. Stream ids are never 0, which marks an empty slot.
type hashTable struct {
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

func newHashTable() hashTable {
	return hashTable{slots: make([]streamSlot, streamTableMin), shift: 64 - 6}
}

// home is the slot where id's probe starts: Fibonacci hashing, so the
// sequential counters in stream ids spread over the table.
func (t *hashTable) home(id int64) int {
	return int((uint64(id) * 0x9e3779b97f4a7c15) >> t.shift)
}

// ref returns id's slot, or nil; the pointer is good until the next put
// or take. id is not 0.
func (t *hashTable) ref(id int64) *streamSlot {
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

// put sets id's entry, replacing the one it had, and reports whether the
// entry is new. id is not 0.
func (t *hashTable) put(id int64, e entry) bool {
	if 4*(t.n+1) > 3*len(t.slots) {
		t.grow()
	}
	mask := len(t.slots) - 1
	for i := t.home(id); ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.id == id {
			s.e, s.replied = e, false
			return false
		}
		if s.id == 0 {
			*s = streamSlot{id: id, e: e}
			t.n++
			return true
		}
	}
}

// take deletes id's entry and returns it, if there was one, with whether
// its direction had begun (streamTable.take), and shifts back the entries
// whose probe passed through its slot. id is not 0.
func (t *hashTable) take(id int64) (e entry, begun, ok bool) {
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

// ids appends the ids of the entries that owner holds to dst.
func (t *hashTable) ids(dst []int64, owner int64) []int64 {
	for i := range t.slots {
		if s := &t.slots[i]; s.id != 0 && s.e.owner == owner {
			dst = append(dst, s.id)
		}
	}
	return dst
}

func (t *hashTable) grow() {
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
