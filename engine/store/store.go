package store

import (
	"encoding/json"
	"fmt"
	"github.com/sluicehq/sluice/engine/spi"
	"time"
)

// Dispatcher runs a function on the thread of the worker it belongs to;
// see [spi.Dispatcher]. A Handler completes each operation through the
// Dispatcher it was attached with.
type Dispatcher = spi.Dispatcher

// DispatcherFunc adapts a function to a [Dispatcher].
type DispatcherFunc = spi.DispatcherFunc

// Clock tells the time; it is injected so tests can move time by hand.
type Clock = spi.Clock

// SystemClock is the real [Clock], the default wherever a nil Clock is
// passed.
type SystemClock = spi.SystemClock

// ClockFunc adapts a function such as time.Now to a [Clock].
type ClockFunc = spi.ClockFunc

// Handler is one worker's view of a [Store]. Every method returns at once
// and completes later by calling its callback through the worker's
// [Dispatcher]. A nil callback is allowed and means the caller does not
// want the outcome.
//
// Values are copied on the way in and on the way out: the caller may reuse
// the buffer it passed as soon as the call returns, and each callback owns
// the slice it is given.
//
// A ttl of zero means no expiry. A negative ttl is refused: Put completes
// with [ErrNegativeTTL], PutIfAbsent does not store, Lock and Renew fail.
type Handler interface {
	// Get completes with the value of key, or ok false when key is absent
	// or has expired.
	Get(key string, done func(value []byte, ok bool))

	// Put sets key to value, replacing any earlier value and its ttl.
	Put(key string, value []byte, ttl time.Duration, done func(err error))

	// PutIfAbsent sets key to value only if key is absent (or expired),
	// atomically with respect to every worker of the process. When it
	// stores, it completes with (nil, true); otherwise with the value that
	// won and false.
	PutIfAbsent(key string, value []byte, ttl time.Duration, done func(existing []byte, stored bool))

	// Delete removes key; deleting an absent key is not an error.
	Delete(key string, done func(err error))

	// GetAndDelete removes key and completes with the value it held, or ok
	// false when it was absent or expired.
	GetAndDelete(key string, done func(value []byte, ok bool))

	// Lock tries, without waiting, to take the lock named key for ttl. On
	// success it completes with a fresh random token that Unlock and Renew
	// require; while another holder owns an unexpired lock it completes
	// with ("", false). Locks live apart from values: a lock named k and a
	// value under k do not interact.
	Lock(key string, ttl time.Duration, done func(token string, ok bool))

	// Unlock releases the lock named key if token owns it and it has not
	// expired.
	Unlock(key, token string, done func(ok bool))

	// Renew restarts the lock's lease at now+ttl if token owns it and it
	// has not expired. A failed renewal means the caller has lost the lock.
	Renew(key, token string, ttl time.Duration, done func(ok bool))

	// Watch calls fn through the Dispatcher on every later change of key:
	// (value, true) after a put, (nil, false) after a delete or an expiry.
	// A store that can lose sight of its data (a networked one losing its
	// server) also calls (nil, false) then, and the current value once it
	// sees it again, so a watcher never keeps a value it can no longer
	// trust. Notifications arrive in the order the changes were made. Cancel stops
	// them, including ones already queued but not yet delivered; it is safe
	// to call more than once.
	Watch(key string, fn func(value []byte, ok bool)) (cancel func())
}

// Store is the process-wide instance of one configured store. Each worker
// attaches once and keeps the returned [Handler].
type Store interface {
	// Attach returns a Handler that completes through d. d must not be nil.
	Attach(d Dispatcher) Handler

	// Close releases the store. Handlers attached to it complete every
	// later operation as failed ([ErrClosed] where the callback carries an
	// error), and their watchers stop. Close is idempotent.
	Close() error
}

// Expirer is implemented by stores that can drop expired entries on
// demand. Entries are always expired lazily when they are touched; Expire
// also removes the ones nobody touches and notifies their watchers. Tests
// on a fake [Clock] call it to run the sweep deterministically.
type Expirer interface {
	// Expire removes every value and lock that has expired at now and
	// returns how many it removed.
	Expire(now time.Time) int
}

// Availability is implemented by a [Handler] whose store keeps its data
// on a server it can lose, as the redis store does.
type Availability interface {
	// Unavailable reports, without waiting, whether the store has lost its
	// server: its operations then fail at once.
	Unavailable() bool
}

// Unavailable reports whether h's store has lost its server, so that a
// caller about to wait for an entry can go on without the store. A store
// that cannot lose its data, such as memory or test, is never unavailable.
func Unavailable(h Handler) bool {
	a, ok := h.(Availability)
	return ok && a.Unavailable()
}

// Info describes a store type for the registry.
type Info struct {
	// Type is the name configurations use, as in stores.<name>.type.
	Type string

	// Schema is the JSON Schema of the type's options object.
	Schema json.RawMessage

	// New creates the process-wide instance of the store configured under
	// name. options is the decoded options object (nil when absent); New
	// rejects unknown keys. A nil clock means [SystemClock].
	New func(name string, options map[string]any, clock Clock) (Store, error)
}

var registry = spi.NewRegistry[Info]("store", ErrUnknownType)

// Register adds a store type. Call it from an init function. It panics on
// an empty type, a nil New or a type registered twice: those are
// programming mistakes that must fail at start-up.
func Register(info Info) {
	if info.New == nil && info.Type != "" {
		panic(fmt.Sprintf("store: Register %q with nil New", info.Type))
	}
	registry.Register(info.Type, info)
}

// Lookup returns the registered type typ, or an error wrapping
// [ErrUnknownType].
func Lookup(typ string) (Info, error) { return registry.Lookup(typ) }

// Types returns the registered type names, sorted.
func Types() []string { return registry.Types() }

// New looks typ up and creates the store configured under name. Errors
// from the type are wrapped with the type and name, as in
// `store/memory "cache0": store: unknown option "size"`.
func New(typ, name string, options map[string]any, clock Clock) (Store, error) {
	info, err := Lookup(typ)
	if err != nil {
		return nil, err
	}
	if clock == nil {
		clock = SystemClock{}
	}
	s, err := info.New(name, options, clock)
	if err != nil {
		return nil, fmt.Errorf("store/%s %q: %w", typ, name, err)
	}
	return s, nil
}
