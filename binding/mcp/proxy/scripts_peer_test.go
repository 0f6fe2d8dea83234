package proxy_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/enginetest"
	"github.com/sluicehq/sluice/spec"
)

// TestScriptsPeerToPeer plays each cache scenario with no engine, as
// Zilla's ProxyCache*IT play their client and server scripts: downstream.rpt
// against proxy.downstream.rpt (the proxy as the agent side sees it) and
// routes.rpt against proxy.routes.rpt (the proxy as its exits see it). The
// two pairs play in one run because the engine-driven scripts share
// barriers across the two sides (the routes' abort or hydrate, the
// downstream session's close), and the two mirrors together stand in for
// the proxy. A cache scenario missing a mirror fails the test.
func TestScriptsPeerToPeer(t *testing.T) {
	names := spec.Scenarios(t, proxyDir)
	var cache []string
	for _, name := range names {
		if strings.HasPrefix(name, "cache.") {
			cache = append(cache, name)
		}
	}
	if len(cache) < len(cacheScenarios) {
		t.Fatalf("found %d cache scenarios, want at least the %d the engine plays", len(cache), len(cacheScenarios))
	}
	for _, name := range cache {
		dir := filepath.Join(proxyDir, name)
		for _, file := range []string{"downstream.rpt", "proxy.downstream.rpt", "routes.rpt", "proxy.routes.rpt"} {
			if !enginetest.Exists(filepath.Join(dir, file)) {
				t.Errorf("scenario %s lacks %s", name, file)
			}
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			spec.Run(t, spec.PeerToPeer(),
				filepath.Join(dir, "downstream"), filepath.Join(dir, "proxy.downstream"),
				filepath.Join(dir, "routes"), filepath.Join(dir, "proxy.routes"))
		})
	}
}
