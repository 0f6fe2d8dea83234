package store_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/engine/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// eachType runs f against a fresh memory store and a fresh test store:
// they share every handler semantic.
func eachType(t *testing.T, f func(t *testing.T, clock *fakeClock, s store.Store)) {
	t.Helper()
	for _, typ := range []string{store.MemoryType, store.TestType} {
		t.Run(typ, func(t *testing.T) {
			clock := newFakeClock()
			f(t, clock, newStore(t, typ, storeName(t), nil, clock))
		})
	}
}

func TestValues(t *testing.T) {
	eachType(t, func(t *testing.T, _ *fakeClock, s store.Store) {
		h := syncHandler{t, s.Attach(inline)}

		_, ok := h.get("k")
		assert.False(t, ok, "absent")

		require.NoError(t, h.put("k", "v1", 0))
		v, ok := h.get("k")
		require.True(t, ok)
		assert.Equal(t, "v1", string(v))

		require.NoError(t, h.put("k", "v2", 0))
		v, _ = h.get("k")
		assert.Equal(t, "v2", string(v), "put replaces")

		existing, stored := h.putIfAbsent("k", "v3", 0)
		assert.False(t, stored)
		assert.Equal(t, "v2", string(existing), "putIfAbsent reports the present value")

		existing, stored = h.putIfAbsent("other", "o1", 0)
		assert.True(t, stored)
		assert.Nil(t, existing)

		v, ok = h.getAndDelete("k")
		require.True(t, ok)
		assert.Equal(t, "v2", string(v))
		_, ok = h.getAndDelete("k")
		assert.False(t, ok, "getAndDelete of an absent key")

		require.NoError(t, h.delete("other"))
		_, ok = h.get("other")
		assert.False(t, ok)
		require.NoError(t, h.delete("other"), "deleting an absent key is not an error")

		require.NoError(t, h.put("empty", "", 0))
		v, ok = h.get("empty")
		assert.True(t, ok, "an empty value is present")
		assert.Empty(t, v)
	})
}

func TestNegativeTTL(t *testing.T) {
	eachType(t, func(t *testing.T, _ *fakeClock, s store.Store) {
		h := syncHandler{t, s.Attach(inline)}

		assert.ErrorIs(t, h.put("k", "v", -time.Second), store.ErrNegativeTTL)
		_, ok := h.get("k")
		assert.False(t, ok, "a refused put stores nothing")

		existing, stored := h.putIfAbsent("k", "v", -time.Second)
		assert.False(t, stored)
		assert.Nil(t, existing)

		require.NoError(t, h.put("k", "v", 0))
		existing, stored = h.putIfAbsent("k", "w", -time.Second)
		assert.False(t, stored)
		assert.Equal(t, "v", string(existing))

		_, ok = h.lock("l", -time.Second)
		assert.False(t, ok)
		token, ok := h.lock("l", time.Second)
		require.True(t, ok)
		assert.False(t, h.renew("l", token, -time.Second))
		assert.True(t, h.unlock("l", token), "a refused renew leaves the lock held")
	})
}

func TestCompletionsAreDispatched(t *testing.T) {
	eachType(t, func(t *testing.T, _ *fakeClock, s store.Store) {
		q := newQueue()
		h := s.Attach(q)
		var got []string
		h.Put("k", []byte("v"), 0, func(err error) { got = append(got, fmt.Sprint("put ", err)) })
		h.Get("k", func(v []byte, ok bool) { got = append(got, fmt.Sprint("get ", string(v), " ", ok)) })
		h.PutIfAbsent("k", []byte("w"), 0, func(e []byte, stored bool) {
			got = append(got, fmt.Sprint("putIfAbsent ", string(e), " ", stored))
		})
		h.Lock("l", 0, func(_ string, ok bool) { got = append(got, fmt.Sprint("lock ", ok)) })
		h.GetAndDelete("k", func(v []byte, ok bool) { got = append(got, fmt.Sprint("getAndDelete ", string(v), " ", ok)) })
		h.Delete("k", func(err error) { got = append(got, fmt.Sprint("delete ", err)) })
		assert.Empty(t, got, "nothing completes on the caller's stack")

		assert.Equal(t, 6, q.drain())
		assert.Equal(t, []string{
			"put <nil>",
			"get v true",
			"putIfAbsent v false",
			"lock true",
			"getAndDelete v true",
			"delete <nil>",
		}, got)
	})
}

func TestNilCallbacks(t *testing.T) {
	eachType(t, func(t *testing.T, _ *fakeClock, s store.Store) {
		q := newQueue()
		h := s.Attach(q)
		h.Put("k", []byte("v"), 0, nil)
		h.Get("k", nil)
		h.PutIfAbsent("k", nil, 0, nil)
		h.GetAndDelete("k", nil)
		h.Delete("k", nil)
		h.Lock("l", 0, nil)
		h.Unlock("l", "t", nil)
		h.Renew("l", "t", 0, nil)
		assert.Zero(t, q.drain(), "a nil callback dispatches nothing")
		h.Watch("k", nil)()
	})
}

func TestValuesAreCopied(t *testing.T) {
	eachType(t, func(t *testing.T, _ *fakeClock, s store.Store) {
		h := s.Attach(inline)
		buf := []byte("abc")
		h.Put("k", buf, 0, nil)
		buf[0] = 'X'

		var first []byte
		h.Get("k", func(v []byte, _ bool) { first = v })
		require.Equal(t, "abc", string(first), "put copies the caller's buffer")
		first[1] = 'Y'

		var watched []byte
		cancel := h.Watch("k", func(v []byte, _ bool) { watched = v })
		defer cancel()
		var second []byte
		h.Get("k", func(v []byte, _ bool) { second = v })
		assert.Equal(t, "abc", string(second), "get hands out a copy")

		buf = []byte("def")
		h.PutIfAbsent("p", buf, 0, nil)
		buf[0] = 'X'
		h.Put("k", buf, 0, nil)
		buf[0] = 'Z'
		require.Equal(t, "Xef", string(watched))
		watched[0] = 'Q'
		var removed []byte
		h.GetAndDelete("p", func(v []byte, _ bool) { removed = v })
		assert.Equal(t, "def", string(removed), "putIfAbsent copies the caller's buffer")
		h.Get("k", func(v []byte, _ bool) { second = v })
		assert.Equal(t, "Xef", string(second), "watchers get a copy")
	})
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

func TestLocks(t *testing.T) {
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

func TestWatch(t *testing.T) {
	eachType(t, func(t *testing.T, _ *fakeClock, s store.Store) {
		writer := syncHandler{t, s.Attach(inline)}
		q := newQueue()
		var events, others recorder
		cancel := s.Attach(q).Watch("k", events.fn)
		defer s.Attach(q).Watch("other", others.fn)()

		require.NoError(t, writer.put("k", "1", 0))
		require.NoError(t, writer.put("k", "2", 0))
		_, _ = writer.putIfAbsent("k", "3", 0)
		require.NoError(t, writer.delete("k"))
		require.NoError(t, writer.delete("k"))
		_, _ = writer.putIfAbsent("k", "4", 0)
		_, _ = writer.getAndDelete("k")
		_, _ = writer.getAndDelete("k")
		require.NoError(t, writer.put("unwatched", "x", 0))
		assert.Zero(t, events.len(), "notifications run on the watcher's dispatcher")

		q.drain()
		assert.Equal(t, []watchEvent{
			{"1", true},
			{"2", true},
			{"", false},
			{"4", true},
			{"", false},
		}, events.take(), "every change in order; no event for a failed putIfAbsent or an absent delete")
		assert.Zero(t, others.len())

		require.NoError(t, writer.put("k", "queued", 0))
		cancel()
		q.drain()
		assert.Empty(t, events.take(), "cancel drops queued notifications")
		require.NoError(t, writer.put("k", "after", 0))
		q.drain()
		assert.Empty(t, events.take())
		cancel()
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

func TestWatchAcrossWorkers(t *testing.T) {
	eachType(t, func(t *testing.T, _ *fakeClock, s store.Store) {
		const n = 500
		writers := []*queue{newQueue(), newQueue()}
		reader := newQueue()
		var events recorder
		defer s.Attach(reader).Watch("k", events.fn)()

		var wg sync.WaitGroup
		for w, q := range writers {
			h := s.Attach(q)
			wg.Go(func() {
				for i := range n {
					h.Put("k", fmt.Appendf(nil, "%d-%d", w, i), 0, nil)
					q.drain()
				}
			})
		}
		var delivered bool
		wg.Go(func() { delivered = reader.await(10*time.Second, func() bool { return events.len() == 2*n }) })
		wg.Wait()
		require.True(t, delivered, "all notifications delivered")

		last := map[byte]int{'0': -1, '1': -1}
		for _, ev := range events.take() {
			var w byte
			var i int
			_, err := fmt.Sscanf(ev.Value, "%c-%d", &w, &i)
			require.NoError(t, err)
			require.Equal(t, last[w]+1, i, "each writer's puts arrive in order")
			last[w] = i
		}
		var final []byte
		s.Attach(inline).Get("k", func(v []byte, _ bool) { final = v })
		assert.Contains(t, []string{fmt.Sprint("0-", n-1), fmt.Sprint("1-", n-1)}, string(final))
	})
}

// TestPutIfAbsentContention has two workers, each with its own Dispatcher
// on its own goroutine, race for the same keys: exactly one wins each key
// and the other sees the winner's value.
func TestPutIfAbsentContention(t *testing.T) {
	eachType(t, func(t *testing.T, _ *fakeClock, s store.Store) {
		const keys = 300
		type result struct {
			existing string
			stored   bool
		}
		results := [2][keys]result{}
		var finished [2]bool
		var start sync.WaitGroup
		start.Add(1)
		var wg sync.WaitGroup
		for w := range 2 {
			q := newQueue()
			h := s.Attach(q)
			wg.Go(func() {
				start.Wait()
				done := 0
				for k := range keys {
					h.PutIfAbsent(fmt.Sprint("key", k), fmt.Appendf(nil, "worker%d", w), 0, func(e []byte, stored bool) {
						results[w][k] = result{string(e), stored}
						done++
					})
				}
				finished[w] = q.await(10*time.Second, func() bool { return done == keys })
			})
		}
		start.Done()
		wg.Wait()
		require.Equal(t, [2]bool{true, true}, finished)

		for k := range keys {
			a, b := results[0][k], results[1][k]
			require.True(t, a.stored != b.stored, "exactly one worker stores key%d", k)
			winner, loser := 0, b
			if b.stored {
				winner, loser = 1, a
			}
			assert.Equal(t, fmt.Sprint("worker", winner), loser.existing, "the loser sees the winner's value for key%d", k)
		}
	})
}

func TestLockContention(t *testing.T) {
	eachType(t, func(t *testing.T, _ *fakeClock, s store.Store) {
		const workers = 4
		tokens := make([]string, workers)
		finished := make([]bool, workers)
		var wg sync.WaitGroup
		for w := range workers {
			q := newQueue()
			h := s.Attach(q)
			wg.Go(func() {
				done := false
				h.Lock("l", time.Minute, func(token string, _ bool) { tokens[w], done = token, true })
				finished[w] = q.await(10*time.Second, func() bool { return done })
			})
		}
		wg.Wait()
		require.NotContains(t, finished, false)
		held := 0
		for _, token := range tokens {
			if token != "" {
				held++
			}
		}
		assert.Equal(t, 1, held, "exactly one worker holds the lock")
	})
}

func TestClose(t *testing.T) {
	for _, typ := range []string{store.MemoryType, store.TestType} {
		t.Run(typ, func(t *testing.T) {
			s, err := store.New(typ, storeName(t), nil, newFakeClock())
			require.NoError(t, err)
			q := newQueue()
			h := syncHandler{t, s.Attach(inline)}
			var events recorder
			s.Attach(q).Watch("k", events.fn)
			require.NoError(t, h.put("k", "v", 0))
			token, ok := h.lock("l", 0)
			require.True(t, ok)

			require.NoError(t, s.Close())
			require.NoError(t, s.Close(), "Close is idempotent")

			assert.ErrorIs(t, h.put("k", "v", 0), store.ErrClosed)
			assert.ErrorIs(t, h.delete("k"), store.ErrClosed)
			_, ok = h.get("k")
			assert.False(t, ok)
			_, ok = h.getAndDelete("k")
			assert.False(t, ok)
			_, stored := h.putIfAbsent("x", "v", 0)
			assert.False(t, stored)
			_, ok = h.lock("m", 0)
			assert.False(t, ok)
			assert.False(t, h.unlock("l", token))
			assert.False(t, h.renew("l", token, 0))
			assert.Zero(t, s.(store.Expirer).Expire(time.Now()))
			h.h.Watch("k", events.fn)()

			q.drain()
			assert.Empty(t, events.take(), "Close stops watchers, including queued notifications")
		})
	}
}
