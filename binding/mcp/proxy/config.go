package proxy

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sluicehq/sluice/binding/mcp"

	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/config"
)

// Configuration errors, matched with errors.Is.
var (
	// ErrConfig reports a proxy configuration the proxy cannot serve.
	ErrConfig = errors.New("mcp proxy: invalid configuration")
)

// Prefix modes (options.prefix).
const (
	prefixConditional = "conditional"
	prefixAlways      = "always"
	prefixNever       = "never"
)

// Name delimiters (ZILLA.md §6, McpConditionMatcher): tools and prompts
// appear as <toolkit>__<name>, resources and resource templates as
// <toolkit>+<uri>.
const (
	delimName = "__"
	delimURI  = "+"
)

// options are the proxy's options; the other kinds' options are refused
// by Decode as unknown fields.
type options struct {
	Prefix  string        `yaml:"prefix"`
	Cache   *cacheOptions `yaml:"cache"`
	Timeout any           `yaml:"timeout"`
	Tools   *toolsModel   `yaml:"tools"`
}

// route is one compiled route: the exit it reaches, the toolkit it
// serves and the globs that say which of the toolkit's tools, prompts and
// resources it exposes (nil: all; empty: none).
type route struct {
	exitID    int64
	exit      string
	toolkit   string
	name      []byte // <toolkit>__
	uri       []byte // <toolkit>+
	tools     []string
	prompts   []string
	resources []string
	timeouts  timeouts // how long a request waits for the route, by method
	// timed is set when a timeout option applies to the route: its calls
	// are then the proxy's, never handed through, so that it can time them.
	timed bool
	// guarded are the guards whose roles a caller needs to reach the
	// route (guarded.go); none lets every caller through.
	guarded mcp.Guarded
	// cacheCredentials are the credentials the cache's hydrate session
	// presents on this route (with.cache.credentials), "" for the
	// cache's own; cacheWhere is where they are configured.
	cacheCredentials string
	cacheWhere       string
}

// settings is what Provision compiles from the binding's configuration,
// once per engine; the workers only read it.
type settings struct {
	routes   []route
	prefixed bool
	// validate is set by options.tools: a tools/call's arguments are
	// checked against the tool's inputSchema before it goes upstream.
	validate bool
	// fingerprint identifies the routes in order, so that a cursor issued
	// for another configuration is refused.
	fingerprint uint32
	// cache is options.cache, nil without one.
	cache *cacheConfig
	// scopes are the roles the guarded routes ask for, space-separated:
	// the scope of the Bearer challenge a caller who may reach no route
	// gets.
	scopes string
}

// compile checks the configuration and resolves the routes' exits.
func compile(e *engine.Engine, cfg *engine.BindingConfig) (*settings, error) {
	var opts options
	if err := cfg.Options().Decode(&opts); err != nil {
		return nil, fmt.Errorf("mcp %s: a proxy takes only options.prefix, options.cache, options.timeout and options.tools: %w", cfg.Name, err)
	}
	mode := opts.Prefix
	switch mode {
	case "":
		mode = prefixConditional
	case prefixConditional, prefixAlways, prefixNever:
	default:
		return nil, fmt.Errorf("%w: mcp %s: options.prefix %q: want always, conditional or never", ErrConfig, cfg.Name, opts.Prefix)
	}
	var routes []*config.Route
	if cfg.Config != nil {
		routes = cfg.Routes()
	}
	if len(routes) == 0 {
		return nil, fmt.Errorf("%w: mcp %s: a proxy needs routes, each with an exit and when: [{toolkit: …}] or no when", ErrConfig, cfg.Name)
	}
	var err error
	s := &settings{prefixed: mode == prefixAlways || mode == prefixConditional && len(routes) > 1}
	seen := map[string]int{}
	h := uint32(2166136261)
	for i, r := range routes {
		when := make([]any, len(r.When))
		pos := r.Pos
		for j, c := range r.When {
			when[j] = c.Value()
			if j == 0 && c.Pos().File != "" {
				pos = c.Pos()
			}
		}
		rt, err := compileRoute(cfg.Name, i, r.Exit, when, r.Pos, pos)
		if err != nil {
			return nil, err
		}
		if j, dup := seen[rt.toolkit]; dup && rt.toolkit == "" {
			return nil, fmt.Errorf("%w: %s: mcp %s: routes[%d]: routes[%d] already has no when", ErrConfig, r.Pos, cfg.Name, i, j)
		} else if dup {
			return nil, fmt.Errorf("%w: %s: mcp %s: routes[%d]: toolkit %q is already the toolkit of routes[%d]", ErrConfig, r.Pos, cfg.Name, i, rt.toolkit, j)
		}
		seen[rt.toolkit] = i
		id, ok := e.ResolveID(r.Exit)
		if !ok {
			return nil, fmt.Errorf("%w: %s: mcp %s: routes[%d]: exit %q names no binding", ErrConfig, r.Pos, cfg.Name, i, r.Exit)
		}
		rt.exitID = id
		rt.guarded = mcp.CompileGuarded(r.Guarded)
		for _, c := range []byte(rt.toolkit + "\x00") {
			h ^= uint32(c)
			h *= 16777619
		}
		s.routes = append(s.routes, rt)
	}
	s.fingerprint = h
	s.scopes = guardedScopes(s.routes)
	if s.prefixed {
		for i := range s.routes {
			for j := range s.routes {
				if a, b := s.routes[i].toolkit, s.routes[j].toolkit; i != j && prefixesCollide(a, b) {
					name := b + delimName + "x"
					return nil, fmt.Errorf("%w: %s: mcp %s: routes[%d]: toolkit %q and routes[%d]'s %q make names with two readings: %q is %q of %q and %q of %q",
						ErrConfig, routes[j].Pos, cfg.Name, j, b, i, a, name, "x", b, strings.TrimPrefix(name, a+delimName), a)
				}
			}
		}
	}
	withs := make([]*config.Raw, len(routes))
	for i, r := range routes {
		withs[i] = r.With
	}
	if err := compileTimeouts(cfg.Options(), opts.Timeout, withs, s.routes, cfg.Name); err != nil {
		return nil, err
	}
	if opts.Cache == nil {
		for i := range s.routes {
			if s.routes[i].cacheCredentials != "" {
				return nil, fmt.Errorf("%w: %s: mcp %s: routes[%d].with.cache.credentials needs options.cache",
					ErrConfig, s.routes[i].cacheWhere, cfg.Name, i)
			}
		}
	}
	if opts.Cache != nil {
		if s.cache, err = compileCache(cfg, opts.Cache, s.routes); err != nil {
			return nil, err
		}
		for i := range s.routes {
			if s.routes[i].cacheCredentials != "" && s.cache.guard == "" {
				return nil, fmt.Errorf("%w: %s: mcp %s: routes[%d].with.cache.credentials needs the guard of options.cache.authorization to present them to",
					ErrConfig, s.routes[i].cacheWhere, cfg.Name, i)
			}
		}
		for name, d := range map[string]*time.Duration{mcp.SettingLeaseTTL: &s.cache.lease, mcp.SettingLeaseRetry: &s.cache.retry} {
			if v, ok := e.Setting(name); ok {
				if *d, err = mcp.ParseDuration(v); err != nil {
					return nil, fmt.Errorf("%s: %w", name, err)
				}
			}
		}
	}
	if opts.Tools != nil {
		if err := compileModel(e, cfg, opts.Tools, s.cache); err != nil {
			return nil, err
		}
		s.validate = true
	}
	return s, nil
}

// compileRoute reads one route's when: none, for a route that serves all
// of its exit unprefixed, or one condition with a toolkit and optional
// tool, prompt and resource globs.
func compileRoute(binding string, i int, exit string, when []any, routePos, pos config.Pos) (route, error) {
	rt := route{exit: exit}
	fail := func(pos config.Pos, format string, args ...any) (route, error) {
		where := fmt.Sprintf("mcp %s: routes[%d]", binding, i)
		if pos.File != "" {
			where = pos.String() + ": " + where
		}
		return route{}, fmt.Errorf("%w: %s: %s", ErrConfig, where, fmt.Sprintf(format, args...))
	}
	if exit == "" {
		return fail(routePos, "exit is required")
	}
	if len(when) == 0 {
		// As in Zilla, a route without conditions serves everything its
		// exit has, under the names the exit gives them: no prefix.
		return rt, nil
	}
	if len(when) != 1 {
		return fail(routePos, "when needs at most one condition {toolkit, tool, prompt, resource}, has %d", len(when))
	}
	m, ok := when[0].(map[string]any)
	if !ok {
		return fail(pos, "when[0] must be a mapping {toolkit, tool, prompt, resource}")
	}
	for k := range m {
		switch k {
		case "toolkit", "tool", "prompt", "resource":
		default:
			return fail(pos, "when[0]: unknown field %q (have toolkit, tool, prompt, resource)", k)
		}
	}
	tk, _ := m["toolkit"].(string)
	if tk == "" {
		return fail(pos, "when[0]: toolkit is required")
	}
	for _, c := range []byte(tk) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return fail(pos, "when[0]: toolkit %q: want letters, digits, _ and -", tk)
		}
	}
	rt.toolkit = tk
	rt.name = []byte(tk + delimName)
	rt.uri = []byte(tk + delimURI)
	for _, k := range []string{"tool", "prompt", "resource"} {
		v, ok := m[k]
		if !ok {
			continue
		}
		globs, err := mcp.GlobList(v)
		if err != nil {
			return fail(pos, "when[0].%s: %v", k, err)
		}
		switch k {
		case "tool":
			rt.tools = globs
		case "prompt":
			rt.prompts = globs
		case "resource":
			rt.resources = globs
		}
	}
	return rt, nil
}

// prefixesCollide reports whether a tool or prompt name prefixed with
// toolkit b could be one prefixed with a, when b is the longer: b is a
// and "_", or a and delimName and more (a__b__x, and a___x from a and a_).
// The call would reach one route and the list show the other's item.
func prefixesCollide(a, b string) bool {
	return b == a+"_" || strings.HasPrefix(b, a+delimName)
}

// String names the route for logs.
func (r *route) String() string {
	return strings.Join([]string{r.toolkit, r.exit}, "→")
}
