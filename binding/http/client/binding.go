package client

import (
	"github.com/sluicehq/sluice/binding"
	"github.com/sluicehq/sluice/binding/http"
	"github.com/sluicehq/sluice/engine"
)

func init() {
	binding.RegisterKind(binding.Kind{
		Type: "http",
		Kind: "client",
		New:  func() engine.Binding { return Binding{} },
	})
}

// Binding is the http client kind: one application stream per request,
// sent on pooled HTTP/1.1 connections opened through its exit.
type Binding struct{}

// Attach compiles the configuration for one worker.
func (Binding) Attach(w *engine.Worker, cfg *engine.BindingConfig) (engine.Handler, error) {
	s, err := compile(w, cfg)
	if err != nil {
		return nil, err
	}
	if s.routes, err = http.CompileRoutes(w, cfg, "client"); err != nil {
		return nil, err
	}
	return newClient(w, cfg, s)
}

var _ engine.Binding = Binding{}
