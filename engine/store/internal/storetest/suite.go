package storetest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/engine/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Run runs the suite against stores made by newStore. Each call must
// return a store that holds nothing and that no other test uses; the
// factory closes it when its test ends (the suite may close it earlier:
// Close is idempotent).
func Run(t *testing.T, newStore func(t *testing.T) store.Store) {
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, s store.Store)
	}{
		{"Values", testValues},
		{"NegativeTTL", testNegativeTTL},
		{"CompletionsAreDispatched", testCompletionsAreDispatched},
		{"NilCallbacks", testNilCallbacks},
		{"ValuesAreCopied", testValuesAreCopied},
		{"Locks", testLocks},
		{"Watch", testWatch},
		{"WatchOwnWrites", testWatchOwnWrites},
		{"WatchAcrossWorkers", testWatchAcrossWorkers},
		{"PutIfAbsentContention", testPutIfAbsentContention},
		{"LockContention", testLockContention},
		{"Close", testClose},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, newStore(t)) })
	}
}

func testValues(t *testing.T, s store.Store) {
	h := NewSync(t, s)

	_, ok := h.Get("k")
	assert.False(t, ok, "absent")

	require.NoError(t, h.Put("k", "v1", 0))
	v, ok := h.Get("k")
	require.True(t, ok)
	assert.Equal(t, "v1", string(v))

	require.NoError(t, h.Put("k", "v2", 0))
	v, _ = h.Get("k")
	assert.Equal(t, "v2", string(v), "put replaces")

	existing, stored := h.PutIfAbsent("k", "v3", 0)
	assert.False(t, stored)
	assert.Equal(t, "v2", string(existing), "putIfAbsent reports the present value")

	existing, stored = h.PutIfAbsent("other", "o1", 0)
	assert.True(t, stored)
	assert.Nil(t, existing)

	v, ok = h.GetAndDelete("k")
	require.True(t, ok)
	assert.Equal(t, "v2", string(v))
	_, ok = h.GetAndDelete("k")
	assert.False(t, ok, "getAndDelete of an absent key")

	require.NoError(t, h.Delete("other"))
	_, ok = h.Get("other")
	assert.False(t, ok)
	require.NoError(t, h.Delete("other"), "deleting an absent key is not an error")

	require.NoError(t, h.Put("empty", "", 0))
	v, ok = h.Get("empty")
	assert.True(t, ok, "an empty value is present")
	assert.Empty(t, v)
	existing, stored = h.PutIfAbsent("empty", "x", 0)
	assert.False(t, stored)
	assert.NotNil(t, existing, "an empty winner is reported as present")
	assert.Empty(t, existing)

	binary := "\x00\xff\r\n*1\r\n$0\r\n"
	require.NoError(t, h.Put("bin\x00key", binary, 0))
	v, ok = h.Get("bin\x00key")
	require.True(t, ok)
	assert.Equal(t, binary, string(v), "values and keys are bytes")
}

func testNegativeTTL(t *testing.T, s store.Store) {
	h := NewSync(t, s)

	assert.ErrorIs(t, h.Put("k", "v", -time.Second), store.ErrNegativeTTL)
	_, ok := h.Get("k")
	assert.False(t, ok, "a refused put stores nothing")

	existing, stored := h.PutIfAbsent("k", "v", -time.Second)
	assert.False(t, stored)
	assert.Nil(t, existing)
	_, ok = h.Get("k")
	assert.False(t, ok, "a refused putIfAbsent stores nothing")

	require.NoError(t, h.Put("k", "v", 0))
	existing, stored = h.PutIfAbsent("k", "w", -time.Second)
	assert.False(t, stored)
	assert.Equal(t, "v", string(existing))

	_, ok = h.Lock("l", -time.Second)
	assert.False(t, ok)
	token, ok := h.Lock("l", time.Minute)
	require.True(t, ok)
	assert.False(t, h.Renew("l", token, -time.Second))
	assert.True(t, h.Unlock("l", token), "a refused renew leaves the lock held")
}

func testCompletionsAreDispatched(t *testing.T, s store.Store) {
	q := NewQueue()
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

	require.True(t, q.Await(Timeout, func() bool { return len(got) == 6 }), "all six complete")
	assert.Zero(t, q.Drain(), "each completes once")
	assert.Equal(t, []string{
		"put <nil>",
		"get v true",
		"putIfAbsent v false",
		"lock true",
		"getAndDelete v true",
		"delete <nil>",
	}, got, "one handler's operations take effect and complete in the order they were made")
}

func testNilCallbacks(t *testing.T, s store.Store) {
	q := NewQueue()
	h := s.Attach(q)
	h.Put("k", []byte("v"), 0, nil)
	h.Get("k", nil)
	h.PutIfAbsent("k", nil, 0, nil)
	h.GetAndDelete("k", nil)
	h.Delete("k", nil)
	h.Lock("l", 0, nil)
	h.Unlock("l", "t", nil)
	h.Renew("l", "t", 0, nil)
	h.Watch("k", nil)()

	// A marker operation with a callback completes after the ones before
	// it; nothing else may have been dispatched.
	done := false
	h.Get("k", func([]byte, bool) { done = true })
	require.True(t, q.Await(Timeout, func() bool { return done }))
	assert.Zero(t, q.Drain(), "a nil callback dispatches nothing")
}

func testValuesAreCopied(t *testing.T, s store.Store) {
	h := NewSync(t, s)
	buf := []byte("abc")
	putDone := false
	h.H.Put("k", buf, 0, func(error) { putDone = true })
	buf[0] = 'X'
	require.True(t, h.Q.Await(Timeout, func() bool { return putDone }))

	first, _ := h.Get("k")
	require.Equal(t, "abc", string(first), "put copies the caller's buffer")
	first[1] = 'Y'
	second, _ := h.Get("k")
	assert.Equal(t, "abc", string(second), "get hands out a copy")

	var watched, also []byte
	defer h.H.Watch("k", func(v []byte, _ bool) { watched = v })()
	defer h.H.Watch("k", func(v []byte, _ bool) { also = v })()

	buf = []byte("def")
	h.H.PutIfAbsent("p", buf, 0, nil)
	buf[0] = 'X'
	h.H.Put("k", buf, 0, nil)
	buf[0] = 'Z'
	require.True(t, h.Q.Await(Timeout, func() bool { return watched != nil && also != nil }), "both watchers notified")
	require.Equal(t, "Xef", string(watched))
	watched[0] = 'Q'
	assert.Equal(t, "Xef", string(also), "each watcher gets its own copy")

	removed, _ := h.GetAndDelete("p")
	assert.Equal(t, "def", string(removed), "putIfAbsent copies the caller's buffer")
	second, _ = h.Get("k")
	assert.Equal(t, "Xef", string(second), "watchers get a copy")
}

// testLocks covers tokens and the lock namespace; lease expiry needs a
// clock and is tested by each store type.
func testLocks(t *testing.T, s store.Store) {
	h := NewSync(t, s)
	token, ok := h.Lock("l", time.Minute)
	require.True(t, ok)
	assert.Regexp(t, `^[0-9a-f]{32}$`, token)

	again, ok := h.Lock("l", time.Minute)
	assert.False(t, ok, "held")
	assert.Empty(t, again)

	assert.False(t, h.Unlock("l", "wrong"), "unlock checks the token")
	assert.False(t, h.Renew("l", "wrong", time.Minute), "renew checks the token")
	assert.False(t, h.Unlock("nolock", token), "unlock of a lock never taken")
	assert.False(t, h.Renew("nolock", token, time.Minute))

	_, ok = h.Get("l")
	assert.False(t, ok, "locks are not values")
	require.NoError(t, h.Put("l", "v", 0))
	assert.True(t, h.Renew("l", token, time.Minute), "values do not disturb locks")
	assert.True(t, h.Unlock("l", token))
	_, ok = h.Get("l")
	assert.True(t, ok, "unlock leaves the value")
	assert.False(t, h.Unlock("l", token), "a released lock is not held")

	next, ok := h.Lock("l", 0)
	require.True(t, ok, "a released lock can be taken")
	assert.NotEqual(t, token, next, "every lock gets a fresh token")
	assert.False(t, h.Unlock("l", token), "the old token does not own the new lock")
	assert.True(t, h.Renew("l", next, time.Minute), "renew can put a ttl on a lock that had none")
	assert.True(t, h.Unlock("l", next))
}

func testWatch(t *testing.T, s store.Store) {
	writer := NewSync(t, s)
	q := NewQueue()
	var events, others, barrier Recorder
	cancel := s.Attach(q).Watch("k", events.Fn)
	defer s.Attach(q).Watch("other", others.Fn)()
	defer s.Attach(q).Watch("k", barrier.Fn)()

	require.NoError(t, writer.Put("k", "1", 0))
	require.NoError(t, writer.Put("k", "2", 0))
	_, _ = writer.PutIfAbsent("k", "3", 0)
	require.NoError(t, writer.Delete("k"))
	require.NoError(t, writer.Delete("k"))
	_, _ = writer.PutIfAbsent("k", "4", 0)
	_, _ = writer.GetAndDelete("k")
	_, _ = writer.GetAndDelete("k")
	require.NoError(t, writer.Put("unwatched", "x", 0))
	require.NoError(t, writer.Put("k", "end", 0))
	assert.Zero(t, events.Len(), "notifications run on the watcher's dispatcher")

	require.True(t, q.Await(Timeout, events.Saw(WatchEvent{"end", true})), "notifications arrive")
	assert.Equal(t, []WatchEvent{
		{"1", true},
		{"2", true},
		{"", false},
		{"4", true},
		{"", false},
		{"end", true},
	}, events.Take(), "every change in order; no event for a failed putIfAbsent or an absent delete")
	assert.Zero(t, others.Len())

	require.NoError(t, writer.Put("k", "queued", 0))
	cancel()
	require.NoError(t, writer.Put("k", "after", 0))
	require.True(t, q.Await(Timeout, barrier.Saw(WatchEvent{"after", true})), "a second watcher of the key still gets notifications")
	assert.Empty(t, events.Take(), "cancel drops queued and later notifications")
	cancel()
}

// testWatchOwnWrites has a watcher write the key it watches, from its own
// notification, until the value is long enough.
func testWatchOwnWrites(t *testing.T, s store.Store) {
	q := NewQueue()
	h := s.Attach(q)
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
	require.True(t, q.Await(Timeout, func() bool { return len(seen) == 4 }))
	assert.Equal(t, []string{"", "x", "xx", "xxx"}, seen)
}

func testWatchAcrossWorkers(t *testing.T, s store.Store) {
	const n = 300
	writers := []*Queue{NewQueue(), NewQueue()}
	reader := NewQueue()
	var events Recorder
	defer s.Attach(reader).Watch("k", events.Fn)()

	var wg sync.WaitGroup
	var written [2]bool
	for w, q := range writers {
		h := s.Attach(q)
		wg.Go(func() {
			done := 0
			for i := range n {
				h.Put("k", fmt.Appendf(nil, "%d-%d", w, i), 0, func(error) { done++ })
			}
			written[w] = q.Await(Timeout, func() bool { return done == n })
		})
	}
	var delivered bool
	wg.Go(func() { delivered = reader.Await(Timeout, func() bool { return events.Len() == 2*n }) })
	wg.Wait()
	require.Equal(t, [2]bool{true, true}, written, "all puts complete")
	require.True(t, delivered, "all notifications delivered")

	last := map[byte]int{'0': -1, '1': -1}
	for _, ev := range events.Take() {
		var w byte
		var i int
		_, err := fmt.Sscanf(ev.Value, "%c-%d", &w, &i)
		require.NoError(t, err)
		require.Equal(t, last[w]+1, i, "each writer's puts arrive in order")
		last[w] = i
	}
	final, _ := NewSync(t, s).Get("k")
	assert.Contains(t, []string{fmt.Sprint("0-", n-1), fmt.Sprint("1-", n-1)}, string(final))
}

// testPutIfAbsentContention has two workers, each with its own Dispatcher
// on its own goroutine, race for the same keys: exactly one wins each key
// and the other sees the winner's value.
func testPutIfAbsentContention(t *testing.T, s store.Store) {
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
		q := NewQueue()
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
			finished[w] = q.Await(Timeout, func() bool { return done == keys })
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
}

func testLockContention(t *testing.T, s store.Store) {
	const workers = 4
	tokens := make([]string, workers)
	finished := make([]bool, workers)
	var wg sync.WaitGroup
	for w := range workers {
		q := NewQueue()
		h := s.Attach(q)
		wg.Go(func() {
			done := false
			h.Lock("l", time.Minute, func(token string, _ bool) { tokens[w], done = token, true })
			finished[w] = q.Await(Timeout, func() bool { return done })
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
}

func testClose(t *testing.T, s store.Store) {
	q := NewQueue()
	h := NewSync(t, s)
	var events Recorder
	s.Attach(q).Watch("k", events.Fn)
	require.NoError(t, h.Put("k", "v", 0))
	token, ok := h.Lock("l", 0)
	require.True(t, ok)

	require.NoError(t, s.Close())
	require.NoError(t, s.Close(), "Close is idempotent")

	assert.ErrorIs(t, h.Put("k", "v", 0), store.ErrClosed)
	assert.ErrorIs(t, h.Delete("k"), store.ErrClosed)
	_, ok = h.Get("k")
	assert.False(t, ok)
	_, ok = h.GetAndDelete("k")
	assert.False(t, ok)
	_, stored := h.PutIfAbsent("x", "v", 0)
	assert.False(t, stored)
	_, ok = h.Lock("m", 0)
	assert.False(t, ok)
	assert.False(t, h.Unlock("l", token))
	assert.False(t, h.Renew("l", token, 0))
	if e, ok := s.(store.Expirer); ok {
		assert.Zero(t, e.Expire(time.Now()))
	}
	h.H.Watch("k", events.Fn)()

	q.Drain()
	assert.Empty(t, events.Take(), "Close stops watchers, including queued notifications")
}
