package engine

import (
	"time"

	"github.com/sluicehq/sluice/internal/freelist"
)

// wheelSlots is the number of slots of a timer wheel; a power of two.
const wheelSlots = 512

// timerWheel is a hashed timing wheel owned by one worker: scheduling and
// expiry are O(1) per timer, and a timer further out than one turn of the
// wheel simply stays in its slot until its tick comes round. Zilla's
// workers use Agrona's DeadlineTimerWheel the same way (ZILLA.md §3).
type timerWheel struct {
	tick   time.Duration
	start  time.Time
	cursor int64 // the last tick expired
	slots  [wheelSlots][]*timer
	byID   map[int64]*timer
	count  int
	// dead counts cancelled timers still in their slots (cancel takes a
	// timer out of its slot, but not out of one expire has detached to
	// fire): expire visits the slots it passes while there are any, armed
	// timers or not, so that they come back to free.
	dead int
	// floor is a tick no armed timer precedes: wait scans from it rather
	// than from the cursor. schedule lowers it; cancel and expire leave it,
	// since removing a timer cannot make an earlier one.
	floor int64
	// free holds timers no slot or byID refers to any more, for
	// schedule to reuse: a timer a connection arms and cancels per
	// request costs no allocation once the wheel has turned.
	free []*timer
}

type timer struct {
	id   int64
	tick int64
	fire func()
}

func newTimerWheel(tick time.Duration, now time.Time) *timerWheel {
	return &timerWheel{tick: tick, start: now, byID: map[int64]*timer{}}
}

func (w *timerWheel) tickOf(t time.Time) int64 {
	d := t.Sub(w.start)
	n := int64(d / w.tick)
	if d%w.tick != 0 {
		n++ // never fire early
	}
	return n
}

// schedule arms fire at deadline under id.
func (w *timerWheel) schedule(id int64, deadline time.Time, fire func()) {
	tick := max(w.tickOf(deadline), w.cursor+1)
	t := freelist.Pop(&w.free)
	if t == nil {
		t = new(timer)
	}
	*t = timer{id: id, tick: tick, fire: fire}
	slot := &w.slots[tick&(wheelSlots-1)]
	*slot = append(*slot, t)
	w.byID[id] = t
	if w.count == 0 || tick < w.floor {
		w.floor = tick
	}
	w.count++
}

// maxFreeTimers bounds the free list, so that a burst of timers does not
// stay allocated for good.
const maxFreeTimers = 4096

// release keeps t, which nothing refers to any more, for reuse.
func (w *timerWheel) release(t *timer) {
	if len(w.free) < maxFreeTimers {
		w.free = append(w.free, t)
	}
}

// cancel disarms the timer id, reporting whether it was armed. The timer
// leaves its slot at once and goes back to free, so that a timer armed and
// cancelled per request is reused by the next one whatever the rate; one
// in a slot that expire has detached to fire (a timer cancelled by
// another's callback) is only marked, and expire frees it.
func (w *timerWheel) cancel(id int64) bool {
	t, ok := w.byID[id]
	if !ok {
		return false
	}
	delete(w.byID, id)
	t.fire = nil
	w.count--
	slot := &w.slots[t.tick&(wheelSlots-1)]
	for i, s := range *slot {
		if s == t {
			items := *slot
			copy(items[i:], items[i+1:]) // the slot's order is the firing order
			items[len(items)-1] = nil
			*slot = items[:len(items)-1]
			w.release(t)
			return true
		}
	}
	w.dead++
	return true
}

// expire fires the timers due at now, at most limit of them, and returns
// how many fired.
func (w *timerWheel) expire(now time.Time, limit int) int {
	if w.count == 0 && w.dead == 0 {
		w.cursor = max(w.cursor, int64(now.Sub(w.start)/w.tick))
		return 0
	}
	nowTick := int64(now.Sub(w.start) / w.tick)
	fired := 0
	steps := min(nowTick-w.cursor, wheelSlots)
	for s := int64(1); s <= steps && fired < limit; s++ {
		slot := &w.slots[(w.cursor+s)&(wheelSlots-1)]
		// Detach the slot: a timer that fires may schedule into it.
		items := *slot
		*slot = nil
		kept := items[:0]
		for _, t := range items {
			switch {
			case t.fire == nil: // cancelled
				w.dead--
				w.release(t)
			case t.tick <= nowTick && fired < limit:
				delete(w.byID, t.id)
				w.count--
				fired++
				fire := t.fire
				t.fire = nil
				w.release(t)
				fire()
			default:
				kept = append(kept, t)
			}
		}
		clear(items[len(kept):])
		*slot = append(kept, *slot...)
		if fired >= limit {
			// Resume from this slot next time.
			w.cursor += s - 1
			return fired
		}
	}
	w.cursor = nowTick
	return fired
}

// pending reports whether any timer is armed.
func (w *timerWheel) pending() bool { return w.count > 0 }

// wait returns how long from now until the wheel next has a timer to
// fire, for a parked worker's epoll timeout: the deadline of the earliest
// timer within one turn of the wheel, or one turn when every armed timer
// is further out (such a timer stays in its slot until its tick comes
// round, so the worker need only look once a turn). It is 0 when a timer
// is already due, and -1 when none is armed.
func (w *timerWheel) wait(now time.Time) time.Duration {
	if w.count == 0 {
		return -1
	}
	next := w.cursor + wheelSlots
	for tick := max(w.cursor+1, w.floor); tick <= w.cursor+wheelSlots; tick++ {
		found := false
		for _, t := range w.slots[tick&(wheelSlots-1)] {
			if t.fire != nil && t.tick <= tick {
				found = true
				break
			}
		}
		if found {
			next = tick
			break
		}
	}
	w.floor = next // nothing armed before it: the scan just looked
	d := w.start.Add(time.Duration(next) * w.tick).Sub(now)
	return max(d, 0)
}
