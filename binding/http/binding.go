package http

import "github.com/sluicehq/sluice/binding"

func init() {
	binding.Register(binding.Info{
		Type:    "http",
		Kinds:   []string{"server", "client"},
		Options: optionsSchema,
		When:    whenSchema,
		// A client with no exit goes out through the system tcp client.
		DefaultExit: map[string]string{"client": "sys:tcp_client"},
	})
}
