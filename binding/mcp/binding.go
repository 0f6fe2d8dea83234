package mcp

import (
	"github.com/sluicehq/sluice/binding"
	"github.com/sluicehq/sluice/engine/config"
)

func init() {
	binding.Register(binding.Info{
		Type:       "mcp",
		Kinds:      []string{"server", "proxy", "client"},
		Options:    optionsSchema,
		When:       whenSchema,
		With:       withSchema,
		KindSchema: kindSchemas,
		Unsupported: []config.Unsupported{
			{Path: "/tools", Feature: "options.tools (models that validate tool input and output)"},
		},
		Check: Unsupported,
		// A client's exit is the http client that reaches options.server.
		DefaultExit: map[string]string{"client": "sys:http_client"},
	})
}
