package storetest

import (
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/engine/store"
)

// Timeout bounds every wait for a completion or a notification. Stores
// over a network complete later than the built-in ones, but never this
// late unless something hangs.
const Timeout = 10 * time.Second

// Queue is a Dispatcher standing in for a worker: functions wait on a
// channel until the test runs them.
type Queue struct {
	ch chan func()
}

// NewQueue returns an empty Queue.
func NewQueue() *Queue { return &Queue{ch: make(chan func(), 1<<16)} }

// Dispatch queues fn.
func (q *Queue) Dispatch(fn func()) { q.ch <- fn }

// Drain runs every function queued so far, including ones queued while
// draining, and returns how many ran.
func (q *Queue) Drain() int {
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

// Await runs queued functions until cond holds, and reports false if
// timeout passes first. It may run on any goroutine, so it does not fail
// the test itself.
func (q *Queue) Await(timeout time.Duration, cond func() bool) bool {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for !cond() {
		select {
		case fn := <-q.ch:
			fn()
		case <-deadline.C:
			return false
		}
	}
	return true
}

// Sync wraps a Handler attached to its own Queue and returns each
// operation's outcome directly, failing the test if it does not complete
// within [Timeout]. Use it from the test's goroutine.
type Sync struct {
	T testing.TB
	H store.Handler
	Q *Queue
}

// NewSync attaches a fresh Queue to s.
func NewSync(t testing.TB, s store.Store) Sync {
	q := NewQueue()
	return Sync{T: t, H: s.Attach(q), Q: q}
}

func (s Sync) wait(called *bool, op string) {
	s.T.Helper()
	if !s.Q.Await(Timeout, func() bool { return *called }) {
		s.T.Fatalf("%s did not complete within %s", op, Timeout)
	}
}

// Get runs Handler.Get.
func (s Sync) Get(key string) (value []byte, ok bool) {
	s.T.Helper()
	called := false
	s.H.Get(key, func(v []byte, o bool) { value, ok, called = v, o, true })
	s.wait(&called, "get "+key)
	return value, ok
}

// Put runs Handler.Put.
func (s Sync) Put(key, value string, ttl time.Duration) error {
	s.T.Helper()
	var err error
	called := false
	s.H.Put(key, []byte(value), ttl, func(e error) { err, called = e, true })
	s.wait(&called, "put "+key)
	return err
}

// PutIfAbsent runs Handler.PutIfAbsent.
func (s Sync) PutIfAbsent(key, value string, ttl time.Duration) (existing []byte, stored bool) {
	s.T.Helper()
	called := false
	s.H.PutIfAbsent(key, []byte(value), ttl, func(e []byte, st bool) { existing, stored, called = e, st, true })
	s.wait(&called, "putIfAbsent "+key)
	return existing, stored
}

// Delete runs Handler.Delete.
func (s Sync) Delete(key string) error {
	s.T.Helper()
	var err error
	called := false
	s.H.Delete(key, func(e error) { err, called = e, true })
	s.wait(&called, "delete "+key)
	return err
}

// GetAndDelete runs Handler.GetAndDelete.
func (s Sync) GetAndDelete(key string) (value []byte, ok bool) {
	s.T.Helper()
	called := false
	s.H.GetAndDelete(key, func(v []byte, o bool) { value, ok, called = v, o, true })
	s.wait(&called, "getAndDelete "+key)
	return value, ok
}

// Lock runs Handler.Lock.
func (s Sync) Lock(key string, ttl time.Duration) (token string, ok bool) {
	s.T.Helper()
	called := false
	s.H.Lock(key, ttl, func(tk string, o bool) { token, ok, called = tk, o, true })
	s.wait(&called, "lock "+key)
	return token, ok
}

// Unlock runs Handler.Unlock.
func (s Sync) Unlock(key, token string) (ok bool) {
	s.T.Helper()
	called := false
	s.H.Unlock(key, token, func(o bool) { ok, called = o, true })
	s.wait(&called, "unlock "+key)
	return ok
}

// Renew runs Handler.Renew.
func (s Sync) Renew(key, token string, ttl time.Duration) (ok bool) {
	s.T.Helper()
	called := false
	s.H.Renew(key, token, ttl, func(o bool) { ok, called = o, true })
	s.wait(&called, "renew "+key)
	return ok
}

// WatchEvent is one watcher notification.
type WatchEvent struct {
	Value string
	OK    bool
}

// Recorder collects watcher notifications; its Fn is safe to call from
// any goroutine.
type Recorder struct {
	mu     sync.Mutex
	events []WatchEvent
}

// Fn records one notification; pass it to Handler.Watch.
func (r *Recorder) Fn(value []byte, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, WatchEvent{Value: string(value), OK: ok})
}

// Take returns the notifications recorded so far and forgets them.
func (r *Recorder) Take() []WatchEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	ev := r.events
	r.events = nil
	return ev
}

// Len returns how many notifications are recorded.
func (r *Recorder) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.events)
}

// Last returns the latest notification, or ok false when there is none.
func (r *Recorder) Last() (WatchEvent, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.events) == 0 {
		return WatchEvent{}, false
	}
	return r.events[len(r.events)-1], true
}

// Saw reports whether the latest notification is ev; use it with
// Queue.Await to wait for a marker write to arrive.
func (r *Recorder) Saw(ev WatchEvent) func() bool {
	return func() bool {
		last, ok := r.Last()
		return ok && last == ev
	}
}
