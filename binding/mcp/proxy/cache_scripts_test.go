package proxy_test

import (
	"path/filepath"
	"testing"

	"github.com/sluicehq/sluice/internal/enginetest"
	"github.com/sluicehq/sluice/spec"
)

// cacheScenarios names the config each cache scenario plays against, and
// the worker counts it runs on.
var cacheScenarios = []struct {
	name, config string
	workers      []int
}{
	{"cache.hydrate", "proxy.cache.yaml", []int{1, 2}},
	{"cache.hydrate.tools", "proxy.cache.tools.yaml", []int{1, 2}},
	{"cache.hydrate.resources", "proxy.cache.resources.yaml", []int{1, 2}},
	{"cache.hydrate.prompts", "proxy.cache.prompts.yaml", []int{1, 2}},
	{"cache.hydrate.persist", "proxy.cache.tools.yaml", []int{1, 2}},
	{"cache.hydrate.error", "proxy.cache.tools.yaml", []int{1, 2}},
	// The test guard's first session is 1 on the one worker.
	{"cache.hydrate.auth", "proxy.cache.auth.yaml", []int{1}},
	{"cache.hydrate.toolkit", "proxy.cache.toolkit.yaml", []int{1, 2}},
	{"cache.hydrate.ping", "proxy.cache.tools.yaml", []int{1, 2}},
	{"cache.serve.initialize", "proxy.cache.seeded.yaml", []int{1, 2}},
	{"cache.serve.tools.list", "proxy.cache.seeded.yaml", []int{1, 2}},
	{"cache.serve.resources.list", "proxy.cache.seeded.yaml", []int{1, 2}},
	{"cache.serve.prompts.list", "proxy.cache.seeded.yaml", []int{1, 2}},
	{"cache.refresh.tools", "proxy.cache.refresh.tools.yaml", []int{1, 2}},
	{"cache.refresh.resources", "proxy.cache.refresh.resources.yaml", []int{1, 2}},
	{"cache.refresh.prompts", "proxy.cache.refresh.prompts.yaml", []int{1, 2}},
	{"cache.refresh.tools.error", "proxy.cache.refresh.tools.yaml", []int{1, 2}},
	{"cache.refresh.tools.contended", "proxy.cache.refresh.tools.yaml", []int{2}},
	{"cache.serve.tools.list.eager.none", "proxy.cache.tools.eager.serve.none.yaml", []int{1, 2}},
	{"cache.serve.tools.list.eager.all", "proxy.cache.tools.eager.serve.all.yaml", []int{1, 2}},
	{"cache.serve.tools.list.eager.explicit", "proxy.cache.tools.eager.serve.explicit.yaml", []int{1, 2}},
	{"cache.serve.tools.list.eager.explicit.search", "proxy.cache.tools.eager.serve.explicit.search.yaml", []int{1, 2}},
	{"cache.serve.search.tools", "proxy.cache.tools.search.serve.yaml", []int{1, 2}},
	{"cache.serve.search.tools.eager.cold", "proxy.cache.tools.eager.serve.explicit.search.yaml", []int{1, 2}},
	{"cache.serve.describe.tool", "proxy.cache.tools.search.serve.yaml", []int{1, 2}},
	{"cache.serve.describe.tool.not.found", "proxy.cache.tools.search.serve.yaml", []int{1, 2}},
	{"cache.serve.describe.tool.invalid.params", "proxy.cache.tools.search.serve.yaml", []int{1, 2}},
	{"cache.serve.describe.tool.unauthorized", "proxy.cache.tools.search.serve.guarded.yaml", []int{1, 2}},
	{"cache.serve.execute.tool", "proxy.cache.tools.search.serve.yaml", []int{1, 2}},
	{"cache.serve.execute.tool.not.found", "proxy.cache.tools.search.serve.unmatched.yaml", []int{1, 2}},
	{"cache.serve.execute.tool.invalid.params", "proxy.cache.tools.search.serve.yaml", []int{1, 2}},
	{"cache.tools.call.valid.input", "proxy.validation.yaml", []int{1, 2}},
	{"cache.tools.call.invalid.input", "proxy.validation.yaml", []int{1, 2}},
	{"cache.tools.call.no.schema", "proxy.validation.yaml", []int{1, 2}},
	// Every worker presents the route's credentials to the test guard,
	// which numbers its sessions across workers: on two, the hydrating
	// worker's is 1 or 2, whichever asked first; on the one worker it is 1.
	{"cache.hydrate.credentials.toolkit", "proxy.cache.credentials.toolkit.yaml", []int{1}},
	{"cache.notify.tools.list.changed", "proxy.cache.tools.yaml", []int{1, 2}},
	{"cache.notify.tools.list.changed.after.tools.call", "proxy.cache.tools.yaml", []int{1, 2}},
	{"cache.notify.tools.list.changed.during.refresh", "proxy.cache.refresh.tools.yaml", []int{1, 2}},
	{"cache.refresh.tools.error.retry", "proxy.cache.refresh.tools.yaml", []int{1, 2}},
	{"cache.hydrate.tools.retry.exceeds.max", "proxy.cache.tools.retry.yaml", []int{1, 2}},
	{"cache.serve.tools.list.during.hydrate", "proxy.cache.tools.yaml", []int{1, 2}},
	{"cache.serve.tools.list.toolkit.filtered", "proxy.cache.toolkit.filter.yaml", []int{1, 2}},
	{"cache.hydrate.toolkit.multi.skip.unauthorized", "proxy.cache.toolkit.multi.yaml", []int{1, 2}},
	{"cache.refresh.toolkit.keep.stale.on.failure", "proxy.cache.refresh.toolkit.multi.yaml", []int{1, 2}},
	{"cache.hydrate.10k", "proxy.cache.yaml", []int{1, 2}},
	{"cache.hydrate.100k", "proxy.cache.yaml", []int{1, 2}},
	{"cache.serve.tools.list.10k", "proxy.cache.seeded.tools.10k.yaml", []int{1, 2}},
	{"cache.serve.tools.list.100k", "proxy.cache.seeded.tools.100k.yaml", []int{1, 2}},
	{"cache.serve.search.tools.10k", "proxy.cache.seeded.tools.search.10k.yaml", []int{1, 2}},
	{"cache.serve.search.tools.100k", "proxy.cache.seeded.tools.search.100k.yaml", []int{1, 2}},
	// The test guard's first session is 1 on the one worker.
	{"cache.hydrate.credentials", "proxy.cache.credentials.yaml", []int{1}},
	{"cache.tools.call.reject.bearer", "proxy.cache.seeded.yaml", []int{1, 2}},
	{"cache.refresh.tools.notify", "proxy.cache.refresh.tools.yaml", []int{1, 2}},
	{"cache.hydrate.lifecycle.reconnect", "proxy.cache.yaml", []int{1, 2}},
}

// TestCacheScriptsEngineDriven plays the cache scenarios against mcp1:
// downstream.rpt plays the mcp server kind in front, routes.rpt the
// routes' exits behind. With two workers, both race for the hydrate
// leases and the routes still see one hydrate session and one list call
// per kind.
func TestCacheScriptsEngineDriven(t *testing.T) {
	for _, sc := range cacheScenarios {
		cfg := filepath.Join(scripts, "config", sc.config)
		var names []string
		if down := filepath.Join(proxyDir, sc.name, "downstream"); enginetest.Exists(down + ".rpt") {
			names = append(names, down)
		}
		if routes := filepath.Join(proxyDir, sc.name, "routes"); enginetest.Exists(routes + ".rpt") {
			names = append(names, routes)
		}
		enginetest.OnWorkers(t, sc.name, sc.workers, func(t *testing.T, workers int) {
			spec.Run(t, spec.Config(cfg, spec.Workers(workers)), names...)
		})
	}
}
