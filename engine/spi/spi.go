package spi

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"
)

// Dispatcher runs a function on the thread of the worker it belongs to.
// Asynchronous operations complete by handing their callback to the
// Dispatcher they were attached with, so the callback runs on the worker's
// thread and never on the caller's stack (unless the Dispatcher runs
// functions inline, as test fakes may).
type Dispatcher interface {
	Dispatch(fn func())
}

// DispatcherFunc adapts a function to a [Dispatcher].
type DispatcherFunc func(fn func())

// Dispatch calls f(fn).
func (f DispatcherFunc) Dispatch(fn func()) { f(fn) }

// Clock tells the time that TTLs and lifetimes are measured against. It is
// injected so tests can move time by hand.
type Clock interface {
	Now() time.Time
}

// SystemClock is the real [Clock].
type SystemClock struct{}

// Now returns time.Now().
func (SystemClock) Now() time.Time { return time.Now() }

// ClockFunc adapts a function such as time.Now to a [Clock].
type ClockFunc func() time.Time

// Now returns f().
func (f ClockFunc) Now() time.Time { return f() }

// Registry is the set of types of one kind (binding, store, guard,
// exporter) compiled into the binary, keyed by the name configurations use.
type Registry[I any] struct {
	kind    string
	unknown error
	mu      sync.RWMutex
	types   map[string]I
}

// NewRegistry returns an empty registry whose Lookup errors wrap unknown.
func NewRegistry[I any](kind string, unknown error) *Registry[I] {
	return &Registry[I]{kind: kind, unknown: unknown, types: map[string]I{}}
}

// Register adds typ. It panics on an empty or duplicate type: those are
// programming mistakes that must fail at start-up.
func (r *Registry[I]) Register(typ string, info I) {
	if typ == "" {
		panic(r.kind + ": Register with empty type")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.types[typ]; dup {
		panic(fmt.Sprintf("%s: Register called twice for type %q", r.kind, typ))
	}
	r.types[typ] = info
}

// Lookup returns the registration of typ, or an error wrapping the
// registry's unknown-type sentinel.
func (r *Registry[I]) Lookup(typ string) (I, error) {
	r.mu.RLock()
	info, ok := r.types[typ]
	r.mu.RUnlock()
	if !ok {
		var zero I
		return zero, fmt.Errorf("%w %q", r.unknown, typ)
	}
	return info, nil
}

// Types returns the registered type names, sorted.
func (r *Registry[I]) Types() []string {
	r.mu.RLock()
	types := make([]string, 0, len(r.types))
	for typ := range r.types {
		types = append(types, typ)
	}
	r.mu.RUnlock()
	slices.Sort(types)
	return types
}

// CheckKeys fails with unknown on the first key of options, in sorted order
// so the error is stable, that is not one of known.
func CheckKeys(options map[string]any, unknown error, known ...string) error {
	var keys []string
	for key := range options {
		if !slices.Contains(known, key) {
			keys = append(keys, key)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	slices.Sort(keys)
	return fmt.Errorf("%w %q", unknown, keys[0])
}

// Integer reads v, a decoded option value, as an integer. YAML and JSON
// decoders give different numeric types, so every integral form that fits
// an int64 is taken; anything else (a fraction, a string) is not.
func Integer(v any) (int64, bool) {
	switch x := v.(type) {
	case int:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case uint:
		return int64(x), uint64(x) <= math.MaxInt64
	case uint32:
		return int64(x), true
	case uint64:
		return int64(x), x <= math.MaxInt64
	case float64:
		if x != math.Trunc(x) || x < math.MinInt64 || x >= math.MaxInt64 {
			return 0, false
		}
		return int64(x), true
	case json.Number:
		i, err := x.Int64()
		return i, err == nil
	}
	return 0, false
}

// Unregister removes typ. Only tests use it, to register a type of their
// own and leave the registry as they found it.
func (r *Registry[I]) Unregister(typ string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.types, typ)
}
