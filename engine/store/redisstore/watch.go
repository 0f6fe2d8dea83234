package redisstore

import (
	"sync"

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
	w.Cancel()
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
			w.Cancel()
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
		w.Push(value, ok)
		kick = append(kick, w)
	}
	h.mu.Unlock()
	for _, w := range kick {
		w.Kick()
	}
}

// watcher is one Watch call: its key and its queue.
type watcher struct {
	key string
	store.Notifier
}
