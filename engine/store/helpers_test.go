package store_test

import (
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/engine/store"
	"github.com/stretchr/testify/require"
)

// fakeClock is a Clock moved by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// queue is a Dispatcher standing in for a worker: functions wait on a
// channel until the test drains it.
type queue struct {
	ch chan func()
}

func newQueue() *queue { return &queue{ch: make(chan func(), 4096)} }

func (q *queue) Dispatch(fn func()) { q.ch <- fn }

// drain runs every queued function, including ones queued while draining,
// and returns how many ran.
func (q *queue) drain() int {
	n := 0
	for {
		select {
		case fn := <-q.ch:
			fn()
			n++
		default:
			return n
		}
	}
}

// await runs queued functions until cond holds, and reports false if the
// timeout passes first. It may run on any goroutine, so it does not fail
// the test itself.
func (q *queue) await(timeout time.Duration, cond func() bool) bool {
	deadline := time.After(timeout)
	for !cond() {
		select {
		case fn := <-q.ch:
			fn()
		case <-deadline:
			return false
		}
	}
	return true
}

// inline is a Dispatcher that runs functions at once, on the caller's
// stack.
var inline = store.DispatcherFunc(func(fn func()) { fn() })

// newStore creates a store of typ and closes it when the test ends.
func newStore(t *testing.T, typ, name string, options map[string]any, clock store.Clock) store.Store {
	t.Helper()
	s, err := store.New(typ, name, options, clock)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	return s
}

// storeName gives each test its own memory store name, since memory
// stores are shared by name across the process.
func storeName(t *testing.T) string {
	return "store-" + t.Name()
}

// sync wraps a Handler whose Dispatcher runs inline and returns results
// directly, to keep table tests short.
type syncHandler struct {
	t *testing.T
	h store.Handler
}

func (s syncHandler) get(key string) (value []byte, ok bool) {
	s.t.Helper()
	called := false
	s.h.Get(key, func(v []byte, o bool) { value, ok, called = v, o, true })
	require.True(s.t, called)
	return value, ok
}

func (s syncHandler) put(key, value string, ttl time.Duration) error {
	s.t.Helper()
	var err error
	called := false
	s.h.Put(key, []byte(value), ttl, func(e error) { err, called = e, true })
	require.True(s.t, called)
	return err
}

func (s syncHandler) putIfAbsent(key, value string, ttl time.Duration) (existing []byte, stored bool) {
	s.t.Helper()
	called := false
	s.h.PutIfAbsent(key, []byte(value), ttl, func(e []byte, st bool) { existing, stored, called = e, st, true })
	require.True(s.t, called)
	return existing, stored
}

func (s syncHandler) delete(key string) error {
	s.t.Helper()
	var err error
	called := false
	s.h.Delete(key, func(e error) { err, called = e, true })
	require.True(s.t, called)
	return err
}

func (s syncHandler) getAndDelete(key string) (value []byte, ok bool) {
	s.t.Helper()
	called := false
	s.h.GetAndDelete(key, func(v []byte, o bool) { value, ok, called = v, o, true })
	require.True(s.t, called)
	return value, ok
}

func (s syncHandler) lock(key string, ttl time.Duration) (token string, ok bool) {
	s.t.Helper()
	called := false
	s.h.Lock(key, ttl, func(tk string, o bool) { token, ok, called = tk, o, true })
	require.True(s.t, called)
	return token, ok
}

func (s syncHandler) unlock(key, token string) (ok bool) {
	s.t.Helper()
	called := false
	s.h.Unlock(key, token, func(o bool) { ok, called = o, true })
	require.True(s.t, called)
	return ok
}

func (s syncHandler) renew(key, token string, ttl time.Duration) (ok bool) {
	s.t.Helper()
	called := false
	s.h.Renew(key, token, ttl, func(o bool) { ok, called = o, true })
	require.True(s.t, called)
	return ok
}

// watchEvent is one watcher notification.
type watchEvent struct {
	Value string
	OK    bool
}

// recorder collects watcher notifications.
type recorder struct {
	mu     sync.Mutex
	events []watchEvent
}

func (r *recorder) fn(value []byte, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, watchEvent{Value: string(value), OK: ok})
}

func (r *recorder) take() []watchEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	ev := r.events
	r.events = nil
	return ev
}

func (r *recorder) len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.events)
}
