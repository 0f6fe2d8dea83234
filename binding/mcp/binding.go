package mcp

import (
	"github.com/sluicehq/sluice/binding"
	"github.com/sluicehq/sluice/engine"
)

func init() {
	binding.Register(binding.Info{
		Type:       "mcp",
		Kinds:      []string{"server", "proxy", "client"},
		Options:    optionsSchema,
		When:       whenSchema,
		With:       withSchema,
		KindSchema: kindSchemas,
		// A client's exit is the http client that reaches options.server.
		DefaultExit: map[string]string{"client": "sys:http_client"},
	})
}

// RegisterKind registers kind ("server", "proxy" or "client") of the mcp
// type, its process-wide factory the stateless b (the per-engine state
// comes from its Provision). Each kind's package calls it from init.
func RegisterKind(kind string, b engine.Binding) {
	binding.RegisterKind(binding.Kind{Type: "mcp", Kind: kind, New: func() engine.Binding { return b }})
}
