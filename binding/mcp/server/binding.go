package server

import (
	"fmt"

	"github.com/sluicehq/sluice/binding"
	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/engine"
)

func init() { mcp.RegisterKind("server", Binding{}) }

// Binding is the mcp server kind's process-wide factory: MCP Streamable
// HTTP behind an http server binding. Each engine provisions a configured
// server once (instance); each worker then keeps its own sessions
// (session.go).
type Binding struct{}

// instance is a configured server on one engine, shared by its workers:
// the compiled options, which they only read, and the source of sequential
// or fixed session ids when the options or settings ask for one.
type instance struct {
	s   *settings
	ids idSource
}

// Provision compiles the configuration once per engine.
func (Binding) Provision(e *engine.Engine, cfg *engine.BindingConfig) (any, error) {
	if cfg.ExitID == 0 {
		return nil, fmt.Errorf("mcp %s: a server needs an exit, the application behind it", cfg.Name)
	}
	s, err := compile(e, cfg)
	if err != nil {
		return nil, err
	}
	in := &instance{s: s}
	switch {
	case s.ids.Sequential:
		in.ids = new(sequentialIDs)
	case len(s.ids.Fixed) > 0:
		in.ids = newFixedIDs(s.ids.Fixed)
	}
	return in, nil
}

// Attach makes the server's handler for one worker.
func (Binding) Attach(w *engine.Worker, cfg *engine.BindingConfig) (engine.Handler, error) {
	in, err := binding.Provisioned[*instance](cfg)
	if err != nil {
		return nil, err
	}
	h := newServer(w, cfg, in.s, in.ids)
	if name := in.s.guardName; name != "" {
		g, ok := w.Guard(name)
		if !ok {
			return nil, fmt.Errorf("%s: mcp %s: names guard %q, which is not configured", cfg.Options().Where("authorization"), cfg.Name, name)
		}
		h.guard = g
	}
	return h, nil
}

var (
	_ engine.Binding     = Binding{}
	_ engine.Provisioner = Binding{}
)
