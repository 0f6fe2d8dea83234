package store

import (
	"bytes"
	"sync"
	"sync/atomic"
)

// Notifier queues the notifications of one [Handler.Watch] call and
// delivers them in order through its [Dispatcher]. A store pushes each
// change and kicks a delivery; a delivery hands out everything queued so
// far, and one that finds another running (re-entered through an inline
// Dispatcher) leaves the events to it, so the order holds either way.
// Store types use it to implement Watch.
type Notifier struct {
	fn        func(value []byte, ok bool)
	d         Dispatcher
	cancelled atomic.Bool

	mu       sync.Mutex
	pending  []notification
	draining bool
}

type notification struct {
	value []byte
	ok    bool
}

// Init sets where n delivers: fn, called through d.
func (n *Notifier) Init(d Dispatcher, fn func(value []byte, ok bool)) {
	n.d, n.fn = d, fn
}

// Push queues (value, ok). value is not written, and each delivery hands
// out its own copy, so one slice may be pushed to many Notifiers.
func (n *Notifier) Push(value []byte, ok bool) {
	n.mu.Lock()
	n.pending = append(n.pending, notification{value, ok})
	n.mu.Unlock()
}

// Kick dispatches a delivery of what is queued.
func (n *Notifier) Kick() { n.d.Dispatch(n.deliver) }

// Cancel stops deliveries, including those queued but not yet made.
func (n *Notifier) Cancel() { n.cancelled.Store(true) }

func (n *Notifier) deliver() {
	n.mu.Lock()
	if n.draining {
		n.mu.Unlock()
		return
	}
	n.draining = true
	for len(n.pending) > 0 {
		evs := n.pending
		n.pending = nil
		n.mu.Unlock()
		for _, ev := range evs {
			if n.cancelled.Load() {
				break
			}
			n.fn(bytes.Clone(ev.value), ev.ok)
		}
		n.mu.Lock()
	}
	n.draining = false
	n.mu.Unlock()
}
