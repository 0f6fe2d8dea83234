package http

import (
	"fmt"

	"github.com/sluicehq/sluice/binding"
	"github.com/sluicehq/sluice/engine"
)

func init() {
	binding.Register(binding.Info{
		Type:    "http",
		Kinds:   []string{"server", "client"},
		Options: optionsSchema,
		When:    whenSchema,
		// A client with no exit goes out through the system tcp client.
		DefaultExit: map[string]string{"client": "sys:tcp_client"},
		New:         func() engine.Binding { return Binding{} },
	})
}

// Binding is the http binding type: HTTP/1.1 server and client kinds.
type Binding struct{}

// Attach compiles the configuration for one worker.
func (Binding) Attach(w *engine.Worker, cfg *engine.BindingConfig) (engine.Handler, error) {
	s, err := compile(w, cfg)
	if err != nil {
		return nil, err
	}
	switch cfg.Kind {
	case "server":
		if s.exitID == 0 && len(s.routes) == 0 {
			return nil, fmt.Errorf("http %s: a server needs an exit or routes", cfg.Name)
		}
		return newServer(w, cfg, s), nil
	case "client":
		return newClient(w, cfg, s)
	}
	return nil, fmt.Errorf("http %s: unknown kind %q", cfg.Name, cfg.Kind)
}
