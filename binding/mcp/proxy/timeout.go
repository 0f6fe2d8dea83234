package proxy

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/engine/config"
	"github.com/sluicehq/sluice/engine/guard"
	"github.com/sluicehq/sluice/engine/telemetry"
)

// Default request timeouts: how long the proxy waits for a route. A
// fan-out (the lists, logging/setLevel) waits fanoutTimeout for every
// route and leaves out the ones that have not answered; a call waits
// callTimeout for its route's next frame (a reply that keeps sending, such
// as progress, is not cut off) and then answers -32001 naming the route.
const (
	fanoutTimeout = 30 * time.Second
	callTimeout   = 60 * time.Second
)

// Timeout slots: a request kind below McpBeginExKindRequest is its own
// slot; the generic kind's two routed methods follow it.
const (
	slotCompletion = int(mcp.McpBeginExKindRequest) + iota
	slotSetLevel
	timeoutSlots
)

// timeouts holds a route's timeout for each method.
type timeouts [timeoutSlots]time.Duration

// timeoutMethods are the method names options.timeout and
// routes[].with.timeout take as keys.
var timeoutMethods = []string{"tools/list", "tools/call", "prompts/list", "prompts/get", "resources/list",
	"resources/templates/list", "resources/read", "resources/subscribe", "resources/unsubscribe",
	"completion/complete", "logging/setLevel"}

// timeoutSlot returns the slot of a method name, or -1.
func timeoutSlot(name string) int {
	switch name {
	case "completion/complete":
		return slotCompletion
	case "logging/setLevel":
		return slotSetLevel
	}
	if m := mcp.LookupMethod([]byte(name)); m != nil && m.Kind != mcp.McpBeginExKindRequest {
		return int(m.Kind)
	}
	return -1
}

// defaultTimeouts are the timeouts without options: fanoutTimeout for
// the lists and logging/setLevel, callTimeout for the rest.
func defaultTimeouts() timeouts {
	var t timeouts
	for i := range t {
		t[i] = callTimeout
	}
	for _, k := range []uint8{mcp.McpBeginExKindToolsList, mcp.McpBeginExKindPromptsList,
		mcp.McpBeginExKindResourcesList, mcp.McpBeginExKindResourcesTemplatesList} {
		t[k] = fanoutTimeout
	}
	t[slotSetLevel] = fanoutTimeout
	return t
}

// applyTimeout sets t from a timeout option: a duration for every method,
// or a mapping of method names to durations for those methods. where
// names the option for errors.
func applyTimeout(t *timeouts, v any, where func(key string) string, name string) error {
	switch v := v.(type) {
	case nil:
		return nil
	case string:
		d, err := guard.PositiveDuration(v)
		if err != nil {
			return fmt.Errorf("%w: %s: %s %q: want a duration such as PT30S", ErrConfig, where(""), name, v)
		}
		for i := range t {
			t[i] = d
		}
		return nil
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			slot := timeoutSlot(k)
			if slot < 0 {
				return fmt.Errorf("%w: %s: %s.%s: unknown method (have %s)", ErrConfig, where(k), name, k, strings.Join(timeoutMethods, ", "))
			}
			s, ok := v[k].(string)
			d, err := guard.PositiveDuration(s)
			if !ok || err != nil {
				return fmt.Errorf("%w: %s: %s.%s %v: want a duration such as PT30S", ErrConfig, where(k), name, k, v[k])
			}
			t[slot] = d
		}
		return nil
	default:
		return fmt.Errorf("%w: %s: %s: want a duration or a mapping of methods to durations", ErrConfig, where(""), name)
	}
}

// withOptions is a route's with: Zilla's cache credentials (the
// credentials the hydrate session presents on the route) and Sluice's
// timeout.
type withOptions struct {
	Cache   *cacheCredentials `yaml:"cache"`
	Timeout any               `yaml:"timeout"`
}

// compileTimeouts resolves each route's timeouts: the route's
// with.timeout, else options.timeout, else the defaults, method by method.
func compileTimeouts(cfg *config.Raw, opt any, withs []*config.Raw, routes []route, binding string) error {
	base := defaultTimeouts()
	optWhere := func(key string) string {
		if key == "" {
			return cfg.Where("timeout")
		}
		return cfg.Where("timeout", key)
	}
	if err := applyTimeout(&base, opt, optWhere, "mcp "+binding+": options.timeout"); err != nil {
		return err
	}
	for i := range routes {
		routes[i].timeouts = base
		routes[i].timed = opt != nil
		w := withs[i]
		if w == nil {
			continue
		}
		var with withOptions
		if err := w.Decode(&with); err != nil {
			return fmt.Errorf("%w: mcp %s: routes[%d].with: %w", ErrConfig, binding, i, err)
		}
		where := func(key string) string {
			if key == "" {
				return w.Where("timeout")
			}
			return w.Where("timeout", key)
		}
		if err := applyTimeout(&routes[i].timeouts, with.Timeout, where, fmt.Sprintf("mcp %s: routes[%d].with.timeout", binding, i)); err != nil {
			return err
		}
		routes[i].timed = routes[i].timed || with.Timeout != nil
		if with.Cache != nil {
			routes[i].cacheCredentials = with.Cache.Credentials
			routes[i].cacheWhere = w.Where("cache")
		}
	}
	return nil
}

// timeoutOf returns the route's timeout for a request kind (ident is the
// generic kind's method).
func (rt *route) timeoutOf(kind uint8, ident []byte) time.Duration {
	if kind < mcp.McpBeginExKindRequest {
		return rt.timeouts[kind]
	}
	if string(ident) == "logging/setLevel" {
		return rt.timeouts[slotSetLevel]
	}
	return rt.timeouts[slotCompletion]
}

// label names the route in errors and logs: its toolkit, or its exit when
// it has none.
func (rt *route) label() string {
	if rt.toolkit != "" {
		return rt.toolkit
	}
	return rt.exit
}

// Metrics of the proxy's routes, per worker.
const (
	metricTimeouts    = "mcp.proxy.timeouts"
	metricPartial     = "mcp.proxy.partial"
	metricUnavailable = "mcp.proxy.unavailable"
	metricRefused     = "mcp.proxy.client.refused"
)

func init() {
	telemetry.Describe(metricTimeouts, telemetry.KindCounter, telemetry.UnitNone,
		"The number of requests a route did not answer within its timeout.")
	telemetry.Describe(metricPartial, telemetry.KindCounter, telemetry.UnitNone,
		"The number of merged lists that left a route out.")
	telemetry.Describe(metricUnavailable, telemetry.KindCounter, telemetry.UnitNone,
		"The number of requests refused because the route is out of the session.")
	telemetry.Describe(metricRefused, telemetry.KindCounter, telemetry.UnitNone,
		"The number of a route's requests to the client that the proxy answered itself, the client being out of reach.")
}

// routeMetrics are one route's counters on one worker.
type routeMetrics struct {
	timeouts, partial, unavailable *telemetry.Counter
	// refused counts the route's requests to the client that the proxy
	// answered itself (refuseClientRequest); refusedLogged is set once the
	// worker has logged one at warning level, the rest going at debug.
	refused       *telemetry.Counter
	refusedLogged bool
}

// routeMetrics returns route's counters, looked up on first use.
func (h *Handler) routeMetrics(route int) *routeMetrics {
	if h.metrics == nil {
		wm := h.w.Metrics()
		h.metrics = make([]routeMetrics, len(h.s.routes))
		for i := range h.s.routes {
			labels := telemetry.MustLabels("namespace", h.namespace, "binding", h.name, "route", h.s.routes[i].label())
			h.metrics[i] = routeMetrics{
				timeouts:    wm.Counter(metricTimeouts, labels),
				partial:     wm.Counter(metricPartial, labels),
				unavailable: wm.Counter(metricUnavailable, labels),
				refused:     wm.Counter(metricRefused, labels),
			}
		}
	}
	return &h.metrics[route]
}

// timeoutMessage is the error a request gets when its route did not
// answer in time.
func (h *Handler) timeoutMessage(route int, kind uint8, ident []byte, d time.Duration) string {
	return fmt.Sprintf("Request timed out: route %s did not answer %s within %s", h.s.routes[route].label(), methodName(kind, ident), d)
}
