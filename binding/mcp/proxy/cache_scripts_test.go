package proxy_test

import (
	"path/filepath"
	"strconv"
	"testing"

	"github.com/sluicehq/sluice/spec"
)

// cacheScenarios names the config each cache scenario plays against, and
// the worker counts it runs on.
var cacheScenarios = []struct {
	name, config string
	workers      []int
}{
	{"cache.hydrate", "proxy.cache.yaml", []int{1, 2}},
}

// TestCacheScriptsEngineDriven plays the cache scenarios against mcp1:
// downstream.rpt plays the mcp server kind in front, routes.rpt the
// routes' exits behind. With two workers, both race for the hydrate
// leases and the routes still see one hydrate session and one list call
// per kind.
func TestCacheScriptsEngineDriven(t *testing.T) {
	for _, sc := range cacheScenarios {
		cfg := filepath.Join(scripts, "config", sc.config)
		names := []string{filepath.Join(proxyDir, sc.name, "downstream")}
		if routes := filepath.Join(proxyDir, sc.name, "routes"); exists(routes + ".rpt") {
			names = append(names, routes)
		}
		for _, workers := range sc.workers {
			t.Run(sc.name+"/workers="+strconv.Itoa(workers), func(t *testing.T) {
				t.Parallel()
				spec.Run(t, spec.Config(cfg, spec.Workers(workers)), names...)
			})
		}
	}
}
