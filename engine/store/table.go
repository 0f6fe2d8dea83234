package store

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"sync"
	"sync/atomic"
	"time"
)

// table is the state behind the built-in stores: values with their expiry,
// locks, and watchers, all under one mutex. Stores are not on the frame hot
// path, so a plain mutex keeps putIfAbsent and the lock operations atomic
// across workers without anything cleverer.
//
// Stored value slices are never written after they are stored: readers
// copy them, so a slice may be shared by the map and by queued watcher
// events at the same time.
type table struct {
	mu       sync.Mutex
	entries  map[string]entry
	locks    map[string]lockEntry
	watchers map[string]map[*watcher]struct{}

	// sweep is the background expiry sweep, nil while none runs. It is
	// started and stopped by the store that owns the table.
	sweep *sweeper
}

type entry struct {
	value   []byte
	expires time.Time // zero: never
}

type lockEntry struct {
	token   string
	expires time.Time // zero: never
}

func (e entry) expired(now time.Time) bool {
	return !e.expires.IsZero() && !now.Before(e.expires)
}

func (l lockEntry) expired(now time.Time) bool {
	return !l.expires.IsZero() && !now.Before(l.expires)
}

// expiry returns the instant a ttl taken at now runs out; zero ttl never
// does.
func expiry(now time.Time, ttl time.Duration) time.Time {
	if ttl == 0 {
		return time.Time{}
	}
	return now.Add(ttl)
}

func newTable() *table {
	return &table{
		entries:  make(map[string]entry),
		locks:    make(map[string]lockEntry),
		watchers: make(map[string]map[*watcher]struct{}),
	}
}

// kicks collects the watchers that got events while t.mu was held; they are
// dispatched only after it is released, so a Dispatcher that runs
// functions inline can call back into the table without deadlock.
type kicks []*watcher

// notifyLocked queues (value, ok) for every watcher of key. t.mu is held.
func (t *table) notifyLocked(key string, value []byte, ok bool, k *kicks) {
	for w := range t.watchers[key] {
		w.Push(value, ok)
		*k = append(*k, w)
	}
}

func (k kicks) dispatch() {
	for i, w := range k {
		if !containsBefore(k, i, w) {
			w.Kick()
		}
	}
}

// containsBefore reports whether w occurs in k[:i]; one operation queues at
// most two events per watcher, so the scan stays tiny.
func containsBefore(k kicks, i int, w *watcher) bool {
	for _, v := range k[:i] {
		if v == w {
			return true
		}
	}
	return false
}

// liveLocked returns the live entry under key, dropping it and notifying
// its watchers if it has expired. t.mu is held.
func (t *table) liveLocked(key string, now time.Time, k *kicks) (entry, bool) {
	e, ok := t.entries[key]
	if ok && e.expired(now) {
		delete(t.entries, key)
		t.notifyLocked(key, nil, false, k)
		return entry{}, false
	}
	return e, ok
}

func (t *table) get(key string, now time.Time) ([]byte, bool) {
	var k kicks
	t.mu.Lock()
	e, ok := t.liveLocked(key, now, &k)
	t.mu.Unlock()
	k.dispatch()
	return bytes.Clone(e.value), ok
}

// put stores value, which the caller has already copied.
func (t *table) put(key string, value []byte, ttl time.Duration, now time.Time) {
	var k kicks
	t.mu.Lock()
	t.liveLocked(key, now, &k)
	t.entries[key] = entry{value: value, expires: expiry(now, ttl)}
	t.notifyLocked(key, value, true, &k)
	t.mu.Unlock()
	k.dispatch()
}

// putIfAbsent stores value, which the caller has already copied, unless a
// live value exists; a negative ttl never stores.
func (t *table) putIfAbsent(key string, value []byte, ttl time.Duration, now time.Time) ([]byte, bool) {
	var k kicks
	t.mu.Lock()
	e, ok := t.liveLocked(key, now, &k)
	stored := !ok && ttl >= 0
	if stored {
		t.entries[key] = entry{value: value, expires: expiry(now, ttl)}
		t.notifyLocked(key, value, true, &k)
	}
	t.mu.Unlock()
	k.dispatch()
	if stored {
		return nil, true
	}
	return bytes.Clone(e.value), false
}

// remove deletes key and returns the value it held while live.
func (t *table) remove(key string, now time.Time) ([]byte, bool) {
	var k kicks
	t.mu.Lock()
	e, ok := t.entries[key]
	if ok {
		delete(t.entries, key)
		t.notifyLocked(key, nil, false, &k)
		ok = !e.expired(now)
	}
	t.mu.Unlock()
	k.dispatch()
	if !ok {
		return nil, false
	}
	return bytes.Clone(e.value), true
}

func (t *table) lock(key, token string, ttl time.Duration, now time.Time) bool {
	if ttl < 0 {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if l, held := t.locks[key]; held && !l.expired(now) {
		return false
	}
	t.locks[key] = lockEntry{token: token, expires: expiry(now, ttl)}
	return true
}

// ownedLocked reports whether token holds the live lock under key,
// dropping the lock if it has expired. t.mu is held.
func (t *table) ownedLocked(key, token string, now time.Time) bool {
	l, held := t.locks[key]
	if !held {
		return false
	}
	if l.expired(now) {
		delete(t.locks, key)
		return false
	}
	return l.token == token
}

func (t *table) unlock(key, token string, now time.Time) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.ownedLocked(key, token, now) {
		return false
	}
	delete(t.locks, key)
	return true
}

func (t *table) renew(key, token string, ttl time.Duration, now time.Time) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.ownedLocked(key, token, now) || ttl < 0 {
		return false
	}
	t.locks[key] = lockEntry{token: token, expires: expiry(now, ttl)}
	return true
}

// expire drops every value and lock that has expired at now.
func (t *table) expire(now time.Time) int {
	var k kicks
	n := 0
	t.mu.Lock()
	for key, e := range t.entries {
		if e.expired(now) {
			delete(t.entries, key)
			t.notifyLocked(key, nil, false, &k)
			n++
		}
	}
	for key, l := range t.locks {
		if l.expired(now) {
			delete(t.locks, key)
			n++
		}
	}
	t.mu.Unlock()
	k.dispatch()
	return n
}

// watch registers w unless its store has closed; Close marks the store
// closed before unwatchAll takes t.mu, so checking here under t.mu leaves
// no watcher behind on a closed store.
func (t *table) watch(w *watcher) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if w.owner.closed.Load() {
		w.Cancel()
		return
	}
	set := t.watchers[w.key]
	if set == nil {
		set = make(map[*watcher]struct{})
		t.watchers[w.key] = set
	}
	set[w] = struct{}{}
}

func (t *table) unwatch(w *watcher) {
	w.Cancel()
	t.mu.Lock()
	defer t.mu.Unlock()
	if set := t.watchers[w.key]; set != nil {
		delete(set, w)
		if len(set) == 0 {
			delete(t.watchers, w.key)
		}
	}
}

// unwatchAll cancels every watcher registered through owner.
func (t *table) unwatchAll(owner *tableStore) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for key, set := range t.watchers {
		for w := range set {
			if w.owner == owner {
				w.Cancel()
				delete(set, w)
			}
		}
		if len(set) == 0 {
			delete(t.watchers, key)
		}
	}
}

// startSweep runs expire every interval on the real clock until stopSweep.
// The caller serializes startSweep and stopSweep.
func (t *table) startSweep(interval time.Duration) {
	if t.sweep != nil {
		return
	}
	s := &sweeper{stop: make(chan struct{}), done: make(chan struct{})}
	t.sweep = s
	go func() {
		defer close(s.done)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-s.stop:
				return
			case now := <-tick.C:
				t.expire(now)
			}
		}
	}()
}

// stopSweep stops the sweep, if one runs, and waits for it to exit.
func (t *table) stopSweep() {
	if t.sweep == nil {
		return
	}
	close(t.sweep.stop)
	<-t.sweep.done
	t.sweep = nil
}

type sweeper struct {
	stop chan struct{}
	done chan struct{}
}

// watcher is one Watch call on a table: its key, the store it came
// through (for unwatchAll), and its queue.
type watcher struct {
	owner *tableStore
	key   string
	Notifier
}

// newToken returns 128 random bits in hex. crypto/rand.Read does not fail
// on supported platforms (it aborts the process instead), so there is no
// error to report.
func newToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// tableStore is a Store over a table; memory and test differ only in how
// they obtain and release the table.
type tableStore struct {
	t       *table
	clock   Clock
	closed  atomic.Bool
	once    sync.Once
	release func()
}

func (s *tableStore) Attach(d Dispatcher) Handler {
	if d == nil {
		panic("store: Attach with nil Dispatcher")
	}
	return &handler{s: s, d: d}
}

func (s *tableStore) Close() error {
	s.once.Do(func() {
		s.closed.Store(true)
		s.t.unwatchAll(s)
		s.release()
	})
	return nil
}

func (s *tableStore) Expire(now time.Time) int {
	if s.closed.Load() {
		return 0
	}
	return s.t.expire(now)
}

// handler binds a tableStore to one worker's Dispatcher.
type handler struct {
	s *tableStore
	d Dispatcher
}

func (h *handler) closed() bool { return h.s.closed.Load() }

func (h *handler) now() time.Time { return h.s.clock.Now() }

func (h *handler) Get(key string, done func(value []byte, ok bool)) {
	var v []byte
	var ok bool
	if !h.closed() {
		v, ok = h.s.t.get(key, h.now())
	}
	if done != nil {
		h.d.Dispatch(func() { done(v, ok) })
	}
}

func (h *handler) Put(key string, value []byte, ttl time.Duration, done func(err error)) {
	var err error
	switch {
	case h.closed():
		err = ErrClosed
	case ttl < 0:
		err = ErrNegativeTTL
	default:
		h.s.t.put(key, bytes.Clone(value), ttl, h.now())
	}
	if done != nil {
		h.d.Dispatch(func() { done(err) })
	}
}

func (h *handler) PutIfAbsent(key string, value []byte, ttl time.Duration, done func(existing []byte, stored bool)) {
	var existing []byte
	var stored bool
	if !h.closed() {
		existing, stored = h.s.t.putIfAbsent(key, bytes.Clone(value), ttl, h.now())
	}
	if done != nil {
		h.d.Dispatch(func() { done(existing, stored) })
	}
}

func (h *handler) Delete(key string, done func(err error)) {
	var err error
	if h.closed() {
		err = ErrClosed
	} else {
		h.s.t.remove(key, h.now())
	}
	if done != nil {
		h.d.Dispatch(func() { done(err) })
	}
}

func (h *handler) GetAndDelete(key string, done func(value []byte, ok bool)) {
	var v []byte
	var ok bool
	if !h.closed() {
		v, ok = h.s.t.remove(key, h.now())
	}
	if done != nil {
		h.d.Dispatch(func() { done(v, ok) })
	}
}

func (h *handler) Lock(key string, ttl time.Duration, done func(token string, ok bool)) {
	var token string
	var ok bool
	if !h.closed() {
		token = newToken()
		ok = h.s.t.lock(key, token, ttl, h.now())
		if !ok {
			token = ""
		}
	}
	if done != nil {
		h.d.Dispatch(func() { done(token, ok) })
	}
}

func (h *handler) Unlock(key, token string, done func(ok bool)) {
	ok := !h.closed() && h.s.t.unlock(key, token, h.now())
	if done != nil {
		h.d.Dispatch(func() { done(ok) })
	}
}

func (h *handler) Renew(key, token string, ttl time.Duration, done func(ok bool)) {
	ok := !h.closed() && h.s.t.renew(key, token, ttl, h.now())
	if done != nil {
		h.d.Dispatch(func() { done(ok) })
	}
}

func (h *handler) Watch(key string, fn func(value []byte, ok bool)) (cancel func()) {
	if fn == nil || h.closed() {
		return func() {}
	}
	w := &watcher{owner: h.s, key: key}
	w.Init(h.d, fn)
	h.s.t.watch(w)
	return func() { h.s.t.unwatch(w) }
}

var (
	_ Store   = (*tableStore)(nil)
	_ Expirer = (*tableStore)(nil)
	_ Handler = (*handler)(nil)
)
