package http

import (
	"github.com/sluicehq/sluice/binding"
	"github.com/sluicehq/sluice/engine"
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

// AttachFunc makes a kind's handler for one worker from the binding's
// options, already decoded.
type AttachFunc func(w *engine.Worker, cfg *engine.BindingConfig, opts *Options) (engine.Handler, error)

// Attach decodes the binding's options and calls f with them: an
// AttachFunc is an http kind's process-wide factory.
func (f AttachFunc) Attach(w *engine.Worker, cfg *engine.BindingConfig) (engine.Handler, error) {
	var opts Options
	if err := cfg.Options().Decode(&opts); err != nil {
		return nil, err
	}
	return f(w, cfg, &opts)
}

// RegisterKind registers kind ("server" or "client") of the http type,
// its handlers made by attach. Each kind's package calls it from init.
func RegisterKind(kind string, attach AttachFunc) {
	binding.RegisterKind(binding.Kind{Type: "http", Kind: kind, New: func() engine.Binding { return attach }})
}

var _ engine.Binding = AttachFunc(nil)
