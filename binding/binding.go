package binding

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/sluicehq/sluice/engine/spi"
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
	// DefaultExit maps a kind to the exit a binding of that kind gets when
	// it declares none (see Resolve), e.g. "client": "sys:tcp_client".
	DefaultExit map[string]string
	// New returns the type's process-wide factory. It has no side effects.
	New func() engine.Binding
}

// ID returns the registry id, binding.<type>.
func (i Info) ID() string { return "binding." + i.Type }

var (
	registry = spi.NewRegistry[Info]("binding", ErrUnknownType)

	mu        sync.Mutex
	instances = map[string]engine.Binding{}
)

// ErrUnknownType reports a binding type that no compiled-in package
// registered.
var ErrUnknownType = errors.New("binding: unknown type")

// Register adds a binding type; binding packages call it from init. It
// panics on an empty, incomplete or duplicate registration, which is a
// programming error.
func Register(info Info) {
	if info.Type != "" && (info.New == nil || len(info.Kinds) == 0) {
		panic(fmt.Sprintf("binding: Register %q: kinds and New are required", info.Type))
	}
	registry.Register(info.Type, info)
}

// Lookup returns the registered type typ.
func Lookup(typ string) (Info, error) { return registry.Lookup(typ) }

// List returns the registered types sorted by name.
func List() []Info {
	types := registry.Types()
	infos := make([]Info, 0, len(types))
	for _, typ := range types {
		if info, err := registry.Lookup(typ); err == nil {
			infos = append(infos, info)
		}
	}
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
