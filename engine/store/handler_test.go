package store_test

import (
	"testing"
	"time"

	"github.com/sluicehq/sluice/engine/store"
	"github.com/sluicehq/sluice/engine/store/internal/storetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConformance runs the behavioural suite every store type passes
// against the memory and test stores.
func TestConformance(t *testing.T) {
	for _, typ := range []string{store.MemoryType, store.TestType} {
		t.Run(typ, func(t *testing.T) {
			storetest.Run(t, func(t *testing.T) store.Store {
				return newStore(t, typ, storeName(t), nil, newFakeClock())
			})
		})
	}
}

// eachType runs f against a fresh memory store and a fresh test store on
// a fake clock: they share every handler semantic, including expiry.
func eachType(t *testing.T, f func(t *testing.T, clock *fakeClock, s store.Store)) {
	t.Helper()
	for _, typ := range []string{store.MemoryType, store.TestType} {
		t.Run(typ, func(t *testing.T) {
			clock := newFakeClock()
			f(t, clock, newStore(t, typ, storeName(t), nil, clock))
		})
	}
}

func TestTTL(t *testing.T) {
	eachType(t, func(t *testing.T, clock *fakeClock, s store.Store) {
		h := syncHandler{t, s.Attach(inline)}
		var events recorder
		defer h.h.Watch("k", events.fn)()

		require.NoError(t, h.put("k", "v", 5*time.Second))
		require.NoError(t, h.put("forever", "v", 0))
		clock.Advance(5*time.Second - time.Millisecond)
		_, ok := h.get("k")
		assert.True(t, ok, "live just before the ttl")

		clock.Advance(time.Millisecond)
		_, ok = h.get("k")
		assert.False(t, ok, "gone at the ttl")
		assert.Equal(t, []watchEvent{{"v", true}, {"", false}}, events.take(), "lazy expiry notifies")
		_, ok = h.get("k")
		assert.False(t, ok)
		assert.Empty(t, events.take(), "expiry notifies once")

		clock.Advance(100 * time.Hour)
		_, ok = h.get("forever")
		assert.True(t, ok, "ttl 0 never expires")

		require.NoError(t, h.put("k", "v", time.Second))
		require.NoError(t, h.put("k", "w", 0))
		clock.Advance(2 * time.Second)
		_, ok = h.get("k")
		assert.True(t, ok, "put replaces the ttl")
		events.take()

		require.NoError(t, h.put("k", "v", time.Second))
		clock.Advance(time.Second)
		existing, stored := h.putIfAbsent("k", "new", time.Second)
		assert.True(t, stored, "an expired value is absent")
		assert.Nil(t, existing)
		assert.Equal(t, []watchEvent{{"v", true}, {"", false}, {"new", true}}, events.take())

		clock.Advance(time.Second)
		_, ok = h.getAndDelete("k")
		assert.False(t, ok, "getAndDelete does not return an expired value")
		assert.Equal(t, []watchEvent{{"", false}}, events.take())

		require.NoError(t, h.put("k", "v", time.Second))
		clock.Advance(time.Second)
		require.NoError(t, h.put("k", "w", 0))
		assert.Equal(t, []watchEvent{{"v", true}, {"", false}, {"w", true}}, events.take(), "put over an expired value reports the expiry first")
	})
}

func TestExpire(t *testing.T) {
	eachType(t, func(t *testing.T, clock *fakeClock, s store.Store) {
		q := newQueue()
		h := syncHandler{t, s.Attach(inline)}
		var events recorder
		defer s.Attach(q).Watch("a", events.fn)()

		require.NoError(t, h.put("a", "1", time.Second))
		require.NoError(t, h.put("b", "2", 3*time.Second))
		require.NoError(t, h.put("c", "3", 0))
		_, ok := h.lock("l", 2*time.Second)
		require.True(t, ok)
		_, ok = h.lock("m", 0)
		require.True(t, ok)
		q.drain()
		events.take()

		expirer, ok := s.(store.Expirer)
		require.True(t, ok, "built-in stores implement Expirer")
		assert.Zero(t, expirer.Expire(clock.Now()))
		clock.Advance(2 * time.Second)
		assert.Equal(t, 2, expirer.Expire(clock.Now()), "value a and lock l")
		assert.Zero(t, events.len(), "the notification waits for the watcher's dispatcher")
		q.drain()
		assert.Equal(t, []watchEvent{{"", false}}, events.take())

		_, ok = h.lock("l", 0)
		assert.True(t, ok, "the expired lock was swept")
		clock.Advance(time.Hour)
		assert.Equal(t, 1, expirer.Expire(clock.Now()), "value b")
		_, ok = h.get("c")
		assert.True(t, ok)
	})
}

func TestLockLeases(t *testing.T) {
	eachType(t, func(t *testing.T, clock *fakeClock, s store.Store) {
		h := syncHandler{t, s.Attach(inline)}
		token, ok := h.lock("l", 10*time.Second)
		require.True(t, ok)
		assert.Regexp(t, `^[0-9a-f]{32}$`, token)

		again, ok := h.lock("l", 10*time.Second)
		assert.False(t, ok, "held")
		assert.Empty(t, again)

		assert.False(t, h.unlock("l", "wrong"), "unlock checks the token")
		assert.False(t, h.renew("l", "wrong", time.Minute), "renew checks the token")
		assert.False(t, h.unlock("nolock", token), "unlock of a lock never taken")
		assert.False(t, h.renew("nolock", token, time.Minute))

		_, ok = h.get("l")
		assert.False(t, ok, "locks are not values")
		require.NoError(t, h.put("l", "v", 0))
		assert.True(t, h.unlock("l", token), "values do not disturb locks")
		_, ok = h.get("l")
		assert.True(t, ok, "unlock leaves the value")

		token, ok = h.lock("l", 10*time.Second)
		require.True(t, ok)
		clock.Advance(9 * time.Second)
		assert.True(t, h.renew("l", token, 10*time.Second))
		clock.Advance(9 * time.Second)
		_, ok = h.lock("l", time.Second)
		assert.False(t, ok, "renewed lease still holds past the first ttl")

		clock.Advance(time.Second)
		assert.False(t, h.renew("l", token, 10*time.Second), "cannot renew an expired lock")
		assert.False(t, h.unlock("l", token), "cannot unlock an expired lock")
		next, ok := h.lock("l", 10*time.Second)
		require.True(t, ok, "an expired lock can be taken")
		assert.NotEqual(t, token, next, "every lock gets a fresh token")
		assert.False(t, h.unlock("l", token), "the old token does not own the new lock")
		assert.True(t, h.unlock("l", next))

		forever, ok := h.lock("f", 0)
		require.True(t, ok)
		clock.Advance(1000 * time.Hour)
		_, ok = h.lock("f", 0)
		assert.False(t, ok, "ttl 0 never expires")
		assert.True(t, h.renew("f", forever, time.Second))
		clock.Advance(time.Second)
		_, ok = h.lock("f", 0)
		assert.True(t, ok, "renew can put a ttl on a lock that had none")
	})
}

func TestWatchReentrant(t *testing.T) {
	eachType(t, func(t *testing.T, _ *fakeClock, s store.Store) {
		h := s.Attach(inline)
		var seen []string
		var cancel func()
		cancel = h.Watch("n", func(v []byte, ok bool) {
			seen = append(seen, string(v))
			if len(v) < 3 {
				h.Put("n", append(v, 'x'), 0, nil)
			} else {
				cancel()
			}
		})
		h.Put("n", nil, 0, nil)
		assert.Equal(t, []string{"", "x", "xx", "xxx"}, seen, "a watcher may write its own key through an inline dispatcher")
	})
}
