package engine

// NoSlot is returned by BufferPool.Acquire when every slot is taken.
const NoSlot = -1

// BufferPool is a worker's pool of fixed-size slots for partial messages: a
// binding that must hold bytes across frames (a request line split over two
// DATA, say) parks them in a slot instead of allocating. It belongs to one
// worker and is not safe for concurrent use.
type BufferPool struct {
	slotSize int
	mem      []byte
	free     []int32
	owner    []int64 // the stream id holding each slot, 0 when free
}

func newBufferPool(slots, slotSize int) *BufferPool {
	p := &BufferPool{
		slotSize: slotSize,
		mem:      make([]byte, slots*slotSize),
		free:     make([]int32, slots),
		owner:    make([]int64, slots),
	}
	for i := range p.free {
		p.free[i] = int32(slots - 1 - i)
	}
	return p
}

// SlotCapacity returns the size of each slot.
func (p *BufferPool) SlotCapacity() int { return p.slotSize }

// Acquire takes a free slot for streamID, or returns NoSlot.
func (p *BufferPool) Acquire(streamID int64) int {
	n := len(p.free)
	if n == 0 {
		return NoSlot
	}
	slot := p.free[n-1]
	p.free = p.free[:n-1]
	p.owner[slot] = streamID
	return int(slot)
}

// Buffer returns slot's bytes. They stay valid until the slot is released.
func (p *BufferPool) Buffer(slot int) []byte {
	off := slot * p.slotSize
	return p.mem[off : off+p.slotSize : off+p.slotSize]
}

// Release returns slot to the pool. Releasing a free slot is a bug.
func (p *BufferPool) Release(slot int) {
	if p.owner[slot] == 0 {
		panic("internal error: engine: buffer slot released twice")
	}
	p.owner[slot] = 0
	p.free = append(p.free, int32(slot))
}

// Acquired returns the number of slots in use.
func (p *BufferPool) Acquired() int { return len(p.owner) - len(p.free) }
