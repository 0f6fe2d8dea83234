package binding

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/config"
	"github.com/sluicehq/sluice/engine/spi"
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
	// KindSchema adds, per kind, a schema the whole binding entry must
	// also match: what one kind requires or refuses of the shared options.
	KindSchema map[string]json.RawMessage
	// DefaultExit maps a kind to the exit a binding of that kind gets when
	// it declares none (see Resolve), e.g. "client": "sys:tcp_client".
	DefaultExit map[string]string
	// Unsupported lists options the schema accepts, as Zilla has them,
	// but the type does not implement; loading a config that sets one
	// fails with an error naming the feature.
	Unsupported []config.Unsupported
	// Check, when set on a type whose kinds register themselves (New
	// nil), runs before a binding of the type is provisioned, whatever
	// its kind: it refuses options the schema accepts (Zilla has them)
	// but the type does not serve yet, so the engine fails to start
	// rather than run without them.
	Check func(cfg *engine.BindingConfig) error
	// New returns the type's process-wide factory. It has no side effects.
	// It is nil for a type whose kinds are packages of their own, each
	// registered with [RegisterKind]; the type's factory then attaches a
	// binding through the factory of its kind.
	New func() engine.Binding
}

// Kind is one kind of a binding type whose kinds live in packages of their
// own, beside the type's vocabulary package (binding/mcp/server beside
// binding/mcp).
type Kind struct {
	Type string // the type's name, e.g. "mcp"
	Kind string // one of the type's Info.Kinds, e.g. "proxy"
	// New returns the kind's process-wide factory. It has no side effects.
	New func() engine.Binding
}

// ID returns the registry id, binding.<type>.<kind>.
func (k Kind) ID() string { return "binding." + k.Type + "." + k.Kind }

// ID returns the registry id, binding.<type>.
func (i Info) ID() string { return "binding." + i.Type }

var (
	registry = spi.NewRegistry[Info]("binding", ErrUnknownType)
	kinds    = spi.NewRegistry[Kind]("binding kind", ErrUnknownKind)

	mu        sync.Mutex
	instances = map[string]engine.Binding{}
)

// ErrUnknownKind reports a kind whose package is not compiled in.
var ErrUnknownKind = errors.New("binding: unknown kind")

// ErrUnknownType reports a binding type that no compiled-in package
// registered.
var ErrUnknownType = errors.New("binding: unknown type")

// Register adds a binding type; binding packages call it from init. It
// panics on an empty, incomplete or duplicate registration, which is a
// programming error.
func Register(info Info) {
	if info.Type != "" && len(info.Kinds) == 0 {
		panic(fmt.Sprintf("binding: Register %q: kinds are required", info.Type))
	}
	registry.Register(info.Type, info)
}

// RegisterKind adds one kind of a type whose Info has no New; the kind's
// package calls it from init. It panics on an empty, incomplete or
// duplicate registration.
func RegisterKind(k Kind) {
	if k.Type == "" || k.Kind == "" || k.New == nil {
		panic(fmt.Sprintf("binding: RegisterKind %q: type, kind and New are required", k.ID()))
	}
	kinds.Register(k.Type+"."+k.Kind, k)
}

// Provisioned returns the state a kind's Provision left on cfg, as T. It
// is an error, naming the binding, when cfg has no state of that type:
// the binding was attached before it was provisioned.
func Provisioned[T any](cfg *engine.BindingConfig) (T, error) {
	v, ok := cfg.State().(T)
	if !ok {
		return v, fmt.Errorf("%s %s: attached before it was provisioned", cfg.Type, cfg.Name)
	}
	return v, nil
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
	if info.New == nil {
		return byKind{info}, nil
	}
	return instance(typ, info.New), nil
}

// instance returns the process-wide factory registered under id, creating
// it with newFn on first use.
func instance(id string, newFn func() engine.Binding) engine.Binding {
	mu.Lock()
	defer mu.Unlock()
	b, ok := instances[id]
	if !ok {
		b = newFn()
		instances[id] = b
	}
	return b
}

// byKind is the factory of a type whose kinds register themselves: it
// attaches each binding through the factory of the binding's kind.
type byKind struct{ info Info }

func (t byKind) Attach(w *engine.Worker, cfg *engine.BindingConfig) (engine.Handler, error) {
	k, err := t.kind(cfg)
	if err != nil {
		return nil, err
	}
	return k.Attach(w, cfg)
}

// Provision runs the type's Check, then provisions the binding through its
// kind's factory, when that is an engine.Provisioner.
func (t byKind) Provision(e *engine.Engine, cfg *engine.BindingConfig) (any, error) {
	if t.info.Check != nil {
		if err := t.info.Check(cfg); err != nil {
			return nil, err
		}
	}
	k, err := t.kind(cfg)
	if err != nil {
		return nil, err
	}
	if p, ok := k.(engine.Provisioner); ok {
		return p.Provision(e, cfg)
	}
	return nil, nil
}

// kind returns the factory of cfg's kind.
func (t byKind) kind(cfg *engine.BindingConfig) (engine.Binding, error) {
	k, err := kinds.Lookup(t.info.Type + "." + cfg.Kind)
	if err != nil {
		return nil, fmt.Errorf("%s %s: kind %s is not compiled in: %w", t.info.Type, cfg.Name, cfg.Kind, err)
	}
	return instance(k.ID(), k.New), nil
}

var (
	_ engine.Binding     = byKind{}
	_ engine.Provisioner = byKind{}
)

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

			KindSchema:  info.KindSchema,
			Unsupported: info.Unsupported,
		})
	}
	return out
}
