package mcp

import "github.com/sluicehq/sluice/binding"

func init() {
	binding.Register(binding.Info{
		Type:    "mcp",
		Kinds:   []string{"server", "proxy", "client"},
		Options: optionsSchema,
		When:    whenSchema,
		// A client's exit is the http client that reaches options.server.
		DefaultExit: map[string]string{"client": "sys:http_client"},
	})
}
