package proxy_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/enginetest"
	"github.com/sluicehq/sluice/spec"
)

var (
	scripts  = filepath.Join("..", "..", "..", "scripts", "mcp")
	proxyDir = filepath.Join(scripts, "streams", "proxy")
)

// TestScriptsEngineDriven plays each proxy scenario against mcp1 of
// config/proxy.yaml (config/proxy.NAME.yaml when the scenario has its
// own): downstream.rpt plays the mcp server kind in front,
// and routes.rpt, when the scenario has one, plays the routes' exits app0
// and app1 behind (a scenario without one asks no route); on one worker
// and on two. The two are not a pair (each
// talks to the proxy, not to the other), hence not client and server.
func TestScriptsEngineDriven(t *testing.T) {
	cfg := filepath.Join(scripts, "config", "proxy.yaml")
	for _, name := range spec.Scenarios(t, proxyDir, "downstream.rpt") {
		if strings.HasPrefix(name, "cache.") {
			continue // TestCacheScriptsEngineDriven: a config each
		}
		names := []string{filepath.Join(proxyDir, name, "downstream")}
		opts := []spec.RunOption{}
		if routes := filepath.Join(proxyDir, name, "routes"); enginetest.Exists(routes + ".rpt") {
			names = append(names, routes)
		} else {
			opts = append(opts, spec.External("app0", "app1")) // no route is asked
		}
		cfg := cfg
		if own := filepath.Join(scripts, "config", "proxy."+name+".yaml"); enginetest.Exists(own) {
			cfg = own
		}
		enginetest.OnWorkers(t, name, []int{1, 2}, func(t *testing.T, workers int) {
			spec.Run(t, spec.Config(cfg, append(opts, spec.Workers(workers))...), names...)
		})
	}
}
