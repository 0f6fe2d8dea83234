package binding

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/config"
)

// Info describes a binding type.
type Info struct {
	// Type is the name configs use in "type:", e.g. "http".
	Type string
	// Kinds lists the kinds the type supports, e.g. server and client.
	Kinds []string
	// Options, When and With are JSON Schema fragments for the binding's
	// options, for one item of a route's when, and for a route's with;
	// nil means the binding takes none.
	Options json.RawMessage
	When    json.RawMessage
	With    json.RawMessage
	// New returns the type's process-wide factory. It has no side effects.
	New func() engine.Binding
}

// ID returns the registry id, binding.<type>.
func (i Info) ID() string { return "binding." + i.Type }

var (
	mu        sync.RWMutex
	registry  = map[string]Info{}
	instances = map[string]engine.Binding{}
)

// ErrUnknownType reports a binding type that no compiled-in package
// registered.
var ErrUnknownType = errors.New("binding: unknown type")

// Register adds a binding type; binding packages call it from init. It
// panics on an empty, incomplete or duplicate registration, which is a
// programming error.
func Register(info Info) {
	if info.Type == "" || info.New == nil || len(info.Kinds) == 0 {
		panic(fmt.Sprintf("binding: register %q: type, kinds and New are required", info.Type))
	}
	mu.Lock()
	defer mu.Unlock()
	if _, dup := registry[info.Type]; dup {
		panic(fmt.Sprintf("binding: register %q: already registered", info.Type))
	}
	registry[info.Type] = info
}

// Lookup returns the registered type typ.
func Lookup(typ string) (Info, error) {
	mu.RLock()
	defer mu.RUnlock()
	info, ok := registry[typ]
	if !ok {
		return Info{}, fmt.Errorf("%w %q", ErrUnknownType, typ)
	}
	return info, nil
}

// List returns the registered types sorted by name.
func List() []Info {
	mu.RLock()
	defer mu.RUnlock()
	infos := make([]Info, 0, len(registry))
	for _, info := range registry {
		infos = append(infos, info)
	}
	sort.Slice(infos, func(i, j int) bool { return infos[i].Type < infos[j].Type })
	return infos
}

// Factory returns the process-wide factory of type typ, creating it on
// first use; it is what engine.WithBindings expects.
func Factory(typ string) (engine.Binding, error) {
	info, err := Lookup(typ)
	if err != nil {
		return nil, err
	}
	mu.Lock()
	defer mu.Unlock()
	b, ok := instances[typ]
	if !ok {
		b = info.New()
		instances[typ] = b
	}
	return b, nil
}

// Fragments returns the config schema fragments of every registered type.
func Fragments() []config.Fragment {
	var out []config.Fragment
	for _, info := range List() {
		out = append(out, config.Fragment{
			Kind:    "binding",
			Type:    info.Type,
			Kinds:   info.Kinds,
			Options: info.Options,
			When:    info.When,
			With:    info.With,
		})
	}
	return out
}
