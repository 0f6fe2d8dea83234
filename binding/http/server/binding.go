package server

import (
	"fmt"

	"github.com/sluicehq/sluice/binding"
	"github.com/sluicehq/sluice/engine"
)

func init() {
	binding.RegisterKind(binding.Kind{
		Type: "http",
		Kind: "server",
		New:  func() engine.Binding { return Binding{} },
	})
}

// Binding is the http server kind: HTTP/1.1 connections from its network
// side, one application stream per request.
type Binding struct{}

// Attach compiles the configuration for one worker.
func (Binding) Attach(w *engine.Worker, cfg *engine.BindingConfig) (engine.Handler, error) {
	s, err := compile(w, cfg)
	if err != nil {
		return nil, err
	}
	if s.exitID == 0 && len(s.routes) == 0 {
		return nil, fmt.Errorf("http server %s: a server needs an exit or routes", cfg.Name)
	}
	return newServer(w, cfg, s), nil
}

var _ engine.Binding = Binding{}
