package engine

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestTimerWheelWait checks the epoll timeout a parked worker takes from
// its timers: none armed, the earliest within a turn, one due, one beyond
// a turn (a turn at most), and cancelled timers ignored.
func TestTimerWheelWait(t *testing.T) {
	start := time.Unix(1000, 0)
	w := newTimerWheel(time.Millisecond, start)
	assert.Equal(t, time.Duration(-1), w.wait(start), "no timer")

	w.schedule(1, start.Add(60*time.Second), func() {})
	assert.Equal(t, wheelSlots*time.Millisecond, w.wait(start), "beyond a turn: wake once a turn")

	w.schedule(2, start.Add(40*time.Millisecond), func() {})
	w.schedule(3, start.Add(15*time.Millisecond), func() {})
	assert.Equal(t, 15*time.Millisecond, w.wait(start), "the earliest")
	assert.Equal(t, 5*time.Millisecond, w.wait(start.Add(10*time.Millisecond)))

	w.cancel(3)
	assert.Equal(t, 40*time.Millisecond, w.wait(start), "a cancelled timer is ignored")

	fired := 0
	w.schedule(4, start.Add(2*time.Millisecond), func() { fired++ })
	assert.Equal(t, time.Duration(0), w.wait(start.Add(3*time.Millisecond)), "due")
	assert.Equal(t, 1, w.expire(start.Add(3*time.Millisecond), 10))
	assert.Equal(t, 1, fired)
	assert.Equal(t, 37*time.Millisecond, w.wait(start.Add(3*time.Millisecond)))

	// A timer armed before the last scan's finding lowers where the next
	// scan starts.
	w2 := newTimerWheel(time.Millisecond, start)
	w2.schedule(1, start.Add(300*time.Millisecond), func() {})
	assert.Equal(t, 300*time.Millisecond, w2.wait(start))
	w2.schedule(2, start.Add(20*time.Millisecond), func() {})
	assert.Equal(t, 20*time.Millisecond, w2.wait(start))
	w2.cancel(2)
	assert.Equal(t, 300*time.Millisecond, w2.wait(start))
	w2.schedule(3, start.Add(5*time.Second), func() {})
	assert.Equal(t, 300*time.Millisecond, w2.wait(start))
	w2.cancel(1)
	assert.Equal(t, wheelSlots*time.Millisecond, w2.wait(start), "only a timer beyond a turn")
	w2.schedule(4, start.Add(time.Millisecond), func() {})
	assert.Equal(t, time.Millisecond, w2.wait(start))
}

// TestTimerWheelReusesTimers: once the wheel has passed them, cancelled
// and fired timers are reused, so a timer armed and cancelled per request
// costs no allocation; a reused timer fires its new function, under its
// new id, and only once.
func TestTimerWheelReusesTimers(t *testing.T) {
	start := time.Unix(1000, 0)
	w := newTimerWheel(time.Millisecond, start)
	var fired []int
	for id := int64(1); id <= 3; id++ {
		w.schedule(id, start.Add(5*time.Millisecond), func() { fired = append(fired, int(id)) })
	}
	assert.True(t, w.cancel(2))
	assert.Equal(t, 2, w.expire(start.Add(5*time.Millisecond), 10))
	assert.Equal(t, []int{1, 3}, fired)
	assert.Len(t, w.free, 3, "the cancelled timer and the two fired ones")

	now := start.Add(5 * time.Millisecond)
	w.schedule(10, now.Add(2*time.Millisecond), func() { fired = append(fired, 10) })
	assert.Len(t, w.free, 2)
	assert.False(t, w.cancel(1), "an old id does not reach a reused timer")
	assert.Equal(t, 1, w.expire(now.Add(2*time.Millisecond), 10))
	assert.Equal(t, []int{1, 3, 10}, fired)
	assert.Equal(t, 0, w.expire(now.Add(time.Second), 10), "fires once")

	// Steady state: arm and cancel, the wheel turning, allocates nothing
	// (the map's buckets and the slots' arrays are reused too), whether
	// another timer stays armed or the one armed and cancelled is the
	// only one, as a lone connection's idle timer is: a wheel with no
	// timer armed still scans the slots that hold cancelled ones.
	// Each slot's array is allocated on its first use, so the wheel turns
	// once before the count.
	for _, other := range []bool{true, false} {
		w := newTimerWheel(time.Millisecond, start)
		id := int64(100)
		now := start.Add(time.Second)
		if other {
			w.schedule(99, now.Add(time.Hour), func() {})
		}
		fire := func() {}
		step := func() {
			id++
			w.schedule(id, now.Add(90*time.Second), fire)
			w.cancel(id)
			now = now.Add(time.Millisecond)
			w.expire(now, 10)
		}
		for range wheelSlots + 10 {
			step()
		}
		allocs := testing.AllocsPerRun(2*wheelSlots, step)
		assert.Zero(t, allocs, "another timer armed: %v", other)
		assert.LessOrEqual(t, w.dead, wheelSlots, "cancelled timers waiting in their slots")
	}
}

// TestTimerWheelCancelFromCallback: a callback that cancels a timer due
// in the same tick, which expire has taken out of its slot to fire, stops
// it firing; expire frees it, and a timer cancelled anywhere else goes
// back to free at once.
func TestTimerWheelCancelFromCallback(t *testing.T) {
	start := time.Unix(1000, 0)
	w := newTimerWheel(time.Millisecond, start)
	var fired []int64
	w.schedule(1, start.Add(2*time.Millisecond), func() {
		fired = append(fired, 1)
		assert.True(t, w.cancel(2))
	})
	w.schedule(2, start.Add(2*time.Millisecond), func() { fired = append(fired, 2) })
	w.schedule(3, start.Add(time.Hour), func() { fired = append(fired, 3) })
	assert.True(t, w.cancel(3))
	assert.Len(t, w.free, 1, "a timer cancelled in its slot is free at once")
	assert.Equal(t, 1, w.expire(start.Add(2*time.Millisecond), 10))
	assert.Equal(t, []int64{1}, fired, "the timer cancelled by the callback did not fire")
	assert.Zero(t, w.dead)
	assert.Len(t, w.free, 3)
	assert.False(t, w.pending())
	assert.Equal(t, 0, w.expire(start.Add(time.Hour), 10))
}
