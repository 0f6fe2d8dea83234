package redisstore

import (
	"bytes"
	"sync"
	"sync/atomic"

	"github.com/sluicehq/sluice/engine/store"
)

// hub holds a Store's watchers by key; the subscription feeds it.
type hub struct {
	mu     sync.Mutex
	closed bool
	byKey  map[string]map[*watcher]struct{}
}

// add registers w, unless the store has closed.
func (h *hub) add(w *watcher) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return false
	}
	set := h.byKey[w.key]
	if set == nil {
		set = make(map[*watcher]struct{})
		h.byKey[w.key] = set
	}
	set[w] = struct{}{}
	return true
}

// remove cancels w: it delivers nothing more, queued notifications
// included.
func (h *hub) remove(w *watcher) {
	w.cancelled.Store(true)
	h.mu.Lock()
	defer h.mu.Unlock()
	if set := h.byKey[w.key]; set != nil {
		delete(set, w)
		if len(set) == 0 {
			delete(h.byKey, w.key)
		}
	}
}

// closeAll cancels every watcher and refuses new ones.
func (h *hub) closeAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for _, set := range h.byKey {
		for w := range set {
			w.cancelled.Store(true)
		}
	}
	h.byKey = nil
}

// keys returns the watched keys.
func (h *hub) keys() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	keys := make([]string, 0, len(h.byKey))
	for key := range h.byKey {
		keys = append(keys, key)
	}
	return keys
}

// forgetAll tells every watcher that its key's value is no longer known,
// as (nil, false): the subscription has lost Redis, so changes made
// meanwhile would go unseen. resync tells them the value again.
func (h *hub) forgetAll() {
	for _, key := range h.keys() {
		h.notify(key, nil, false)
	}
}

// notify queues (value, ok) for every watcher of key and dispatches their
// delivery. value is shared by the watchers and never written; each
// delivery hands out its own copy.
func (h *hub) notify(key string, value []byte, ok bool) {
	h.mu.Lock()
	set := h.byKey[key]
	kick := make([]*watcher, 0, len(set))
	for w := range set {
		w.push(event{value: value, ok: ok})
		kick = append(kick, w)
	}
	h.mu.Unlock()
	for _, w := range kick {
		w.d.Dispatch(w.drain)
	}
}

type event struct {
	value []byte
	ok    bool
}

// watcher queues the notifications of one Watch call and delivers them in
// order on its Dispatcher. A drain delivers everything queued so far; a
// drain that finds another one running (re-entered through an inline
// Dispatcher) leaves the events to it, so the order holds either way.
type watcher struct {
	key       string
	fn        func(value []byte, ok bool)
	d         store.Dispatcher
	cancelled atomic.Bool

	mu       sync.Mutex
	pending  []event
	draining bool
}

func (w *watcher) push(ev event) {
	w.mu.Lock()
	w.pending = append(w.pending, ev)
	w.mu.Unlock()
}

func (w *watcher) drain() {
	w.mu.Lock()
	if w.draining {
		w.mu.Unlock()
		return
	}
	w.draining = true
	for len(w.pending) > 0 {
		evs := w.pending
		w.pending = nil
		w.mu.Unlock()
		for _, ev := range evs {
			if w.cancelled.Load() {
				break
			}
			w.fn(bytes.Clone(ev.value), ev.ok)
		}
		w.mu.Lock()
	}
	w.draining = false
	w.mu.Unlock()
}
