package client

import (
	"crypto/rand"
	"time"

	"github.com/sluicehq/sluice/engine/store"
)

// The key of the requestStates the reverse bridge issues, shared through
// options.inputRequired.store: every worker of every instance on the
// store puts a random key under "<binding>.inputRequired.key" if none is
// there, and uses the one that won, so a state one instance issues
// verifies on all. See doc.go, "Input required rounds".

const (
	// keyWait bounds how long a request that needs the key waits for the
	// store's answer; past it the worker falls back to the process key.
	keyWait = 5 * time.Second
	// keyRetry is how often a worker on the fallback key tries the store
	// again.
	keyRetry = 30 * time.Second
	// maxKeyWaiters bounds the requests a worker holds for the key.
	maxKeyWaiters = 1024
)

// keyState is one worker's view of the shared key.
type keyState struct {
	store    store.Handler // nil: no store, the settings' key serves
	codec    *stateCodec   // the store's key, once it arrived
	pending  bool          // no key yet: requests that need one wait
	fallback bool          // the store failed: the settings' key serves
	asking   bool          // a PutIfAbsent is out
	timer    int64         // keyWait's, or keyRetry's on the fallback
	waiters  []keyWaiter
}

// keyWaiter is a request held until the key is known.
type keyWaiter struct {
	x   *exchange
	gen uint32
}

// adoptKey offers a fresh random key to the store; the value that won
// becomes the worker's key. Until it arrives (or keyWait passes) the
// requests that need a key wait.
func (h *handler) adoptKey() {
	k := &h.keys
	if k.asking {
		return
	}
	if k.codec == nil && !k.fallback {
		k.pending = true
		k.timer = h.w.TimerAt(h.w.Now().Add(keyWait), h.keyTimedOut)
	}
	k.asking = true
	key := make([]byte, 32)
	_, _ = rand.Read(key) // crypto/rand.Read does not fail
	k.store.PutIfAbsent(h.s.keyName, key, 0, func(existing []byte, stored bool) {
		k.asking = false
		switch {
		case stored:
			h.keyArrived(key)
		case len(existing) >= 32:
			h.keyArrived(existing)
		case existing != nil:
			h.keyFailed("the store holds a key shorter than 32 bytes")
		default:
			h.keyFailed("the store did not answer")
		}
	})
}

// keyArrived makes key the worker's and lets the waiting requests go.
func (h *handler) keyArrived(key []byte) {
	k := &h.keys
	if k.fallback {
		h.w.Logger().Info("mcp client: the requestState key is now shared through the store", "binding", h.cfg.Name, "store", h.s.keyStore)
	}
	k.codec = &stateCodec{key: key}
	k.pending, k.fallback = false, false
	h.w.Disarm(&k.timer)
	k.wake()
}

// keyFailed falls back to the process's own key: states then verify only
// on this instance. The store is asked again every keyRetry.
func (h *handler) keyFailed(why string) {
	k := &h.keys
	if k.codec != nil {
		return
	}
	if !k.fallback {
		h.w.Logger().Warn("mcp client: options.inputRequired.store gave no key, using this process's own: requestStates verify only on this instance until the store answers",
			"binding", h.cfg.Name, "store", h.s.keyStore, "reason", why)
	}
	k.pending, k.fallback = false, true
	h.w.Disarm(&k.timer)
	k.timer = h.w.TimerAt(h.w.Now().Add(keyRetry), h.keyRetried)
	k.wake()
}

// keyRetried asks the store again, or waits another keyRetry while an
// earlier ask is still out.
func (h *handler) keyRetried() {
	k := &h.keys
	k.timer = 0
	if k.codec != nil {
		return
	}
	if k.asking {
		k.timer = h.w.TimerAt(h.w.Now().Add(keyRetry), h.keyRetried)
		return
	}
	h.adoptKey()
}

// keyTimedOut runs when the store has not answered within keyWait.
func (h *handler) keyTimedOut() {
	h.keys.timer = 0
	if h.keys.pending {
		h.keyFailed("no answer within " + keyWait.String())
	}
}

// stop cancels the worker's key timer when it detaches.
func (k *keyState) stop(h *handler) {
	h.w.Disarm(&k.timer)
	k.waiters = nil
}

// wake sends on the requests that waited for the key, those still alive.
func (k *keyState) wake() {
	ws := k.waiters
	k.waiters = nil
	for _, wt := range ws {
		x := wt.x
		if x.gen != wt.gen || x.state&xWaiting == 0 || x.state&(xOver|xAnswered) != 0 {
			continue
		}
		x.state &^= xWaiting
		x.start()
		x.release()
	}
}

// issuer returns the codec the worker issues states with.
func (h *handler) issuer() *stateCodec {
	if c := h.keys.codec; c != nil {
		return c
	}
	return &h.s.states
}

// decodeState verifies a state with the worker's key and, when that
// refuses it as forged, with the process key, which issued the states of
// a time the store could not be reached.
func (h *handler) decodeState(enc, principal []byte, now time.Time) (reqState, error) {
	c := h.issuer()
	st, err := c.decode(enc, principal, now)
	if err == errStateForged && c != &h.s.states {
		return h.s.states.decode(enc, principal, now)
	}
	return st, err
}

// start sends x on once its params are whole and its guard let it
// through: a request that may carry or earn a requestState first waits
// for the key, then its state is checked before it takes a session.
func (x *exchange) start() {
	h := x.h
	if h.keys.pending && !x.hasSID && x.reverseKind() {
		if len(h.keys.waiters) >= maxKeyWaiters {
			x.fail(-32603, "Server busy: the requestState key has not arrived from the store yet")
			return
		}
		x.state |= xWaiting
		h.keys.waiters = append(h.keys.waiters, keyWaiter{x, x.gen})
		return
	}
	if !x.resumeEarly() {
		x.proceed(false)
	}
}
