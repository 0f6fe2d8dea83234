package http

import (
	"github.com/sluicehq/sluice/binding"
	"github.com/sluicehq/sluice/engine/config"
)

func init() {
	binding.Register(binding.Info{
		Type:    "http",
		Kinds:   []string{"server", "client"},
		Options: optionsSchema,
		When:    whenSchema,
		// A client with no exit goes out through the system tcp client.
		DefaultExit: map[string]string{"client": "sys:tcp_client"},
		Unsupported: []config.Unsupported{
			{Path: "/requests", Feature: "options.requests (validating requests and responses against models)"},
			{Path: "/overrides", Feature: "options.overrides (rewriting request headers)"},
		},
		Check: checkVersions,
	})
}
