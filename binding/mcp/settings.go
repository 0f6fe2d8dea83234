package mcp

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/guard"
)

// The engine settings of the mcp kinds ([engine.Setting]), named after
// Zilla's zilla.binding.mcp.* properties. A setting changes the default of
// every mcp binding of the engine; a binding's own options, where it has
// the same knob, still win.
const (
	// SettingSessionID supplies the session ids the server kind mints:
	// random (the default), sequential, or fixed ids ([ParseIDs]).
	SettingSessionID = "mcp.session.id"
	// SettingServerName is the serverInfo name ("sluice").
	SettingServerName = "mcp.server.name"
	// SettingServerVersion is the serverInfo version (the build's).
	SettingServerVersion = "mcp.server.version"
	// SettingInactivityTimeout ends a session idle this long (PT60S).
	SettingInactivityTimeout = "mcp.inactivity.timeout"
	// SettingSSEKeepaliveInterval spaces the SSE keep-alive comments of
	// an idle event stream (PT15S).
	SettingSSEKeepaliveInterval = "mcp.sse.keepalive.interval"
	// SettingLeaseTTL is the lease of the proxy cache's locks (PT30S).
	SettingLeaseTTL = "mcp.lease.ttl"
	// SettingLeaseRetry is how often a proxy cache's worker without the
	// hydrate lease tries for it while its lists have not settled (PT0.1S).
	SettingLeaseRetry = "mcp.lease.retry"
)

func init() {
	engine.RegisterSetting(engine.Setting{Name: SettingSessionID, Check: checkIDs,
		Usage: "session ids the server mints: random (default), sequential (session-1, session-2, …), or id[,id…] handed out in turn"})
	engine.RegisterSetting(engine.Setting{Name: SettingServerName,
		Usage: `serverInfo name the server reports (default "sluice")`})
	engine.RegisterSetting(engine.Setting{Name: SettingServerVersion,
		Usage: "serverInfo version the server reports (default the build's version)"})
	engine.RegisterSetting(engine.Setting{Name: SettingInactivityTimeout, Check: checkDuration,
		Usage: "idle time after which the server ends a session (default PT60S; options.inactivity.timeout wins)"})
	engine.RegisterSetting(engine.Setting{Name: SettingSSEKeepaliveInterval, Check: checkDuration,
		Usage: "interval of SSE keep-alive comments on an idle event stream (default PT15S; options.sse.keepalive.interval wins)"})
	engine.RegisterSetting(engine.Setting{Name: SettingLeaseTTL, Check: checkDuration,
		Usage: "lease of the proxy cache's hydrate and list locks, renewed at a third of it (default PT30S)"})
	engine.RegisterSetting(engine.Setting{Name: SettingLeaseRetry, Check: checkDuration,
		Usage: "how often a worker without the proxy cache's hydrate lease tries for it (default PT0.1S)"})
	// Zilla's other mcp properties: accepted, so that a Zilla test's
	// settings carry over whole, but read by no kind yet; the engine
	// warns of each one given.
	engine.RegisterSetting(engine.Setting{Name: "mcp.elicitation.id", Check: checkIDs,
		Unread: "no mcp kind mints elicitation ids: URL-mode elicitation comes with authorization"})
	engine.RegisterSetting(engine.Setting{Name: "mcp.elicit.correlation.id", Check: checkIDs,
		Unread: "no mcp kind mints elicitation request ids yet"})
	for name, why := range map[string]string{
		"mcp.session.id.affinity": "a session id names its owning worker by Sluice's own encoding",
		"mcp.client.name":         `the client kind reports clientInfo name "sluice"`,
		"mcp.client.version":      "the client kind reports its own clientInfo version",
		"mcp.keepalive.tolerance": "the client kind sends no keep-alive pings",
		"mcp.alt.svc.enabled":     "the server kind sends no Alt-Svc",
		"mcp.alt.svc.max.age":     "the server kind sends no Alt-Svc",
		"mcp.hydrate.filter":      "the proxy cache hydrates the kinds options.cache.ttl names",
	} {
		engine.RegisterSetting(engine.Setting{Name: name, Unread: why})
	}
}

// IDs is the parsed value of an id supplier setting such as
// mcp.session.id. Zilla's tests name a Java method that returns the ids;
// Sluice takes the ids themselves.
type IDs struct {
	// Sequential asks for session-1, session-2, …
	Sequential bool
	// Fixed ids are handed out in order, from the first again once all
	// are used; none (and not Sequential) means random ids.
	Fixed []string
}

// ParseIDs parses an id supplier setting: "random", "sequential", or
// fixed ids separated by commas, each of visible ASCII as MCP requires of
// a session id.
func ParseIDs(v string) (IDs, error) {
	switch v {
	case "random":
		return IDs{}, nil
	case "sequential":
		return IDs{Sequential: true}, nil
	}
	if strings.Contains(v, "::") {
		return IDs{}, errors.New("names a Java supplier (Class::method); give the ids it returns instead: id[,id…], sequential or random")
	}
	var ids IDs
	for _, id := range strings.Split(v, ",") {
		if id == "" {
			return IDs{}, errors.New("an empty id; want id[,id…], sequential or random")
		}
		for i := 0; i < len(id); i++ {
			if id[i] < 0x21 || id[i] > 0x7e {
				return IDs{}, fmt.Errorf("id %q: only visible ASCII may make an id", id)
			}
		}
		ids.Fixed = append(ids.Fixed, id)
	}
	return ids, nil
}

func checkIDs(v string) error {
	_, err := ParseIDs(v)
	return err
}

// ParseDuration parses a positive ISO 8601 duration (PT15S) or a Go one
// (15s), as the mcp kinds' duration options and settings are written.
func ParseDuration(v string) (time.Duration, error) {
	return guard.PositiveDuration(v)
}

func checkDuration(v string) error {
	_, err := ParseDuration(v)
	return err
}
