package main

import (
	_ "embed"
	"os"

	"github.com/sluicehq/sluice/binding"
	_ "github.com/sluicehq/sluice/binding/all"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/config"
	_ "github.com/sluicehq/sluice/engine/guard/jwtguard"
	_ "github.com/sluicehq/sluice/engine/store/redisstore"
)

// defaultConfig is the configuration start uses when no -c is given.
//
//go:embed sluice.yaml
var defaultConfig []byte

// embeddedSource names the embedded default configuration in messages.
const embeddedSource = "sluice.yaml (embedded)"

// loadConfig reads, validates and returns the configuration file at path,
// or the embedded default when path is empty. Exits may name the external
// bindings as well as the file's own.
func loadConfig(path string, external ...string) (*config.Config, error) {
	schema, err := config.NewSchema(fragments()...)
	if err != nil {
		return nil, err
	}
	var cfg *config.Config
	if path == "" {
		cfg, err = config.Load(embeddedSource, defaultConfig, schema, config.WithExternal(external...))
	} else {
		var src []byte
		if src, err = os.ReadFile(path); err != nil {
			return nil, err
		}
		cfg, err = config.Load(path, src, schema, config.WithExternal(external...))
	}
	if err != nil {
		return nil, err
	}
	if err := binding.Resolve(cfg); err != nil {
		return nil, err
	}
	return cfg, nil
}

// fragments gathers the config schema fragments of every compiled-in
// binding, store, guard and exporter type.
func fragments() []config.Fragment {
	return append(binding.Fragments(), engine.ComponentFragments()...)
}
