package proxy

import (
	"fmt"
	"time"

	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/guard"
)

// cacheOptions is options.cache in Zilla's shape: the store the lists are
// kept in, how often each kind is refreshed, and the credentials the
// hydrate session presents to a guard, and tools: the search tools and
// the eager policy of the tools list served (toolsearch.go).
type cacheOptions struct {
	Store         string                      `yaml:"store"`
	TTL           any                         `yaml:"ttl"`
	Authorization map[string]cacheCredentials `yaml:"authorization"`
	Tools         *cacheToolsOptions          `yaml:"tools"`
}

type cacheCredentials struct {
	Credentials string `yaml:"credentials"`
}

// Cache bounds and intervals; tests shorten them through the settings.
const (
	// defaultLease is the lease of lifecycle.lock and of each
	// <kind>.lock; the holder renews it at a third of it while it works.
	defaultLease = 30 * time.Second
	// defaultRetry is how often a worker that does not hold
	// lifecycle.lock tries again while its lists have not settled.
	defaultRetry = 100 * time.Millisecond
	// defaultGate bounds how long a downstream lifecycle waits for the
	// cache to settle before it is served through to the routes.
	defaultGate = 5 * time.Second
	// defaultFailRetry is when a kind without a ttl tries again after a
	// failed hydrate.
	defaultFailRetry = 5 * time.Second
	// maxEntry bounds a cached list; a larger entry is served through.
	maxEntry = 16 << 20
	// defaultPage is the size beyond which a cached list is served in
	// pages with the proxy's own cursors.
	defaultPage = 256 << 10
	// maxHydratePages bounds the pages one hydrate follows.
	maxHydratePages = 1024
)

// cachePage is the page size of the cached lists; tests make it small.
var cachePage = defaultPage

// cacheKind is one cached list kind: its list, its store key and lock,
// its refresh interval (0: none), and its list_changed notification.
type cacheKind struct {
	lk    *listKind
	key   string
	lock  string
	ttl   time.Duration
	bit   uint16 // the list_changed capability (and subscription) bit
	flush uint8  // the list_changed McpFlushEx kind
	// follows is set on resource templates: they are refreshed right
	// after resources, rather than on a timer of their own.
	follows bool
}

// cacheConfig is the compiled options.cache.
type cacheConfig struct {
	store      string
	storeWhere string
	guard      string
	guardWhere string
	credential string
	kinds      []cacheKind
	lifecycle  string // the lifecycle.lock key
	hydrated   string // the key the holder of lifecycle.lock marks its session under
	lease      time.Duration
	retry      time.Duration
	gate       time.Duration
	failRetry  time.Duration
	page       int
	tools      *toolsView // options.cache.tools, nil without one
}

// The kinds the cache knows, in the order the hydrate session lists them.
// resources brings resource templates with it, under a key of their own.
var cacheKinds = []struct {
	name  string
	kind  uint8
	bit   mcp.McpCapabilities
	flush uint8
}{
	{"tools", mcp.McpBeginExKindToolsList, mcp.McpCapabilitiesServerToolsListChanged, mcp.McpFlushExKindToolsListChanged},
	{"prompts", mcp.McpBeginExKindPromptsList, mcp.McpCapabilitiesServerPromptsListChanged, mcp.McpFlushExKindPromptsListChanged},
	{"resources", mcp.McpBeginExKindResourcesList, mcp.McpCapabilitiesServerResourcesListChanged, mcp.McpFlushExKindResourcesListChanged},
	{"resources", mcp.McpBeginExKindResourcesTemplatesList, mcp.McpCapabilitiesServerResourcesListChanged, mcp.McpFlushExKindResourcesListChanged},
}

// compileCache reads options.cache. Keys and lock names are prefixed with
// the binding's name, so that two proxies can share a store.
func compileCache(cfg *engine.BindingConfig, o *cacheOptions, routes []route) (*cacheConfig, error) {
	raw := cfg.Options()
	fail := func(where, format string, args ...any) (*cacheConfig, error) {
		return nil, fmt.Errorf("%w: %s: mcp %s: %s", ErrConfig, where, cfg.Name, fmt.Sprintf(format, args...))
	}
	c := &cacheConfig{
		store:     o.Store,
		lease:     defaultLease,
		retry:     defaultRetry,
		gate:      defaultGate,
		failRetry: defaultFailRetry,
		page:      cachePage,
		lifecycle: cfg.Name + ".lifecycle.lock",
		hydrated:  cfg.Name + ".hydrated",
	}
	c.storeWhere = raw.Where("cache", "store")
	if o.Store == "" {
		return fail(raw.Where("cache"), "options.cache.store is required")
	}
	if len(o.Authorization) > 1 {
		return fail(raw.Where("cache", "authorization"), "options.cache.authorization takes one guard, has %d", len(o.Authorization))
	}
	for name, a := range o.Authorization {
		c.guard, c.credential = name, a.Credentials
		c.guardWhere = raw.Where("cache", "authorization", name)
	}
	ttls := map[string]time.Duration{}
	all := false
	switch v := o.TTL.(type) {
	case nil:
		all = true
	case string:
		d, err := guard.PositiveDuration(v)
		if err != nil {
			return fail(raw.Where("cache", "ttl"), "options.cache.ttl %q: want an ISO-8601 duration such as PT5M", v)
		}
		all = true
		ttls["tools"], ttls["prompts"], ttls["resources"] = d, d, d
	case map[string]any:
		for k, x := range v {
			s, ok := x.(string)
			switch k {
			case "tools", "prompts", "resources":
			default:
				return fail(raw.Where("cache", "ttl", k), "options.cache.ttl.%s: unknown kind (have tools, resources, prompts)", k)
			}
			d, err := guard.PositiveDuration(s)
			if !ok || err != nil {
				return fail(raw.Where("cache", "ttl", k), "options.cache.ttl.%s %v: want an ISO-8601 duration such as PT5M", k, x)
			}
			ttls[k] = d
		}
	default:
		return fail(raw.Where("cache", "ttl"), "options.cache.ttl: want a duration or {tools, resources, prompts}")
	}
	for _, k := range cacheKinds {
		ttl, ok := ttls[k.name]
		if !ok && !all {
			continue
		}
		lk := listKindOf(k.kind)
		c.kinds = append(c.kinds, cacheKind{
			lk: lk, key: cfg.Name + "." + lk.key, lock: cfg.Name + "." + lk.key + ".lock",
			ttl: ttl, bit: uint16(k.bit), flush: k.flush,
			follows: k.kind == mcp.McpBeginExKindResourcesTemplatesList,
		})
	}
	if o.Tools != nil {
		var err error
		if c.tools, err = compileTools(cfg, o.Tools, routes); err != nil {
			return nil, err
		}
		if c.tools != nil && c.kindIndex(mcp.McpBeginExKindToolsList) < 0 {
			return fail(raw.Where("cache", "tools"), "options.cache.tools needs the tools list cached: options.cache.ttl leaves tools out")
		}
	}
	return c, nil
}

// cacheKindOf returns the cached kind of a list request kind, nil when
// that kind is not cached.
func (c *cacheConfig) kindIndex(kind uint8) int {
	for i := range c.kinds {
		if c.kinds[i].lk.kind == kind {
			return i
		}
	}
	return -1
}
