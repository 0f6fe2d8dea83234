package server

import (
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/engine"
)

type options struct {
	Origins    []string `yaml:"origins"`
	Hosts      []string `yaml:"hosts"`
	Inactivity struct {
		Timeout string `yaml:"timeout"`
		// Stream (Sluice's) is how long a session whose only use is its
		// GET stream lives without a request.
		Stream string `yaml:"stream"`
	} `yaml:"inactivity"`
	SSE struct {
		Keepalive struct {
			Interval string `yaml:"interval"`
		} `yaml:"keepalive"`
		Replay *int `yaml:"replay"`
	} `yaml:"sse"`
	Get      *bool    `yaml:"get"`
	Versions []string `yaml:"versions"`
	Limits   struct {
		Body int64 `yaml:"body"`
		// Sessions and Inflight (Sluice's): the binding's live
		// sessions, and one session's requests in flight.
		Sessions *int `yaml:"sessions"`
		Inflight *int `yaml:"inflight"`
		// SessionsPerAddress (Sluice's) bounds the live sessions of one
		// client address, as the http server names it.
		SessionsPerAddress *int `yaml:"sessionsPerAddress"`
	} `yaml:"limits"`
	Sessions struct {
		IDs string `yaml:"ids"`
	} `yaml:"sessions"`
	// Authorization names the guard that checks each request's bearer
	// token, and where in the Authorization header the token stands.
	Authorization map[string]struct {
		Credentials *string `yaml:"credentials"`
	} `yaml:"authorization"`
	// ProtectedResource is the OAuth protected resource metadata
	// (RFC 9728) the server serves and names in its Bearer challenges.
	ProtectedResource *struct {
		Resource             string   `yaml:"resource"`
		AuthorizationServers []string `yaml:"authorizationServers"`
		Scopes               []string `yaml:"scopes"`
	} `yaml:"protectedResource"`
	// Elicitation and Sampling bound how long a request the upstream
	// sends the client may wait for its answer; the sampling timeout
	// serves roots/list and ping too. Elicitation.Callback is the path,
	// relative to the MCP endpoint's, of the binding's URL-mode
	// elicitation callback (elicit.go).
	Elicitation struct {
		Timeout  string `yaml:"timeout"`
		Callback string `yaml:"callback"`
	} `yaml:"elicitation"`
	Sampling struct {
		Timeout string `yaml:"timeout"`
	} `yaml:"sampling"`
	// InputRequired bounds the legacy shim (shim.go): the rounds it
	// fulfils for one call, and how long each request it sends the client
	// waits for its answer.
	InputRequired struct {
		MaxRounds    int    `yaml:"maxRounds"`
		RoundTimeout string `yaml:"roundTimeout"`
	} `yaml:"inputRequired"`
}

// Defaults (ZILLA.md §8 "MCP defaults").
const (
	defaultInactivity = 60 * time.Second
	defaultKeepalive  = 15 * time.Second
	defaultBodyLimit  = 1 << 20
	defaultReplay     = 64
	// Sluice's bounds on what one client can hold: the sessions of a
	// binding (about 2 KB each, idle), the requests in flight in one
	// session, and how long a session holding only its GET stream (which
	// keeps it from the inactivity timeout) lives without a request.
	defaultMaxSessions = 10000
	defaultMaxInflight = 128
	defaultMaxPerAddr  = 1000
	defaultStreamIdle  = time.Hour
	// The waits for the client's answer to a request the upstream sent it:
	// a person fills an elicitation form; sampling, roots/list and ping
	// are answered by the client's software.
	defaultElicitationTimeout = 10 * time.Minute
	defaultSamplingTimeout    = 60 * time.Second
	// The legacy shim's defaults, as the TypeScript SDK's shim has them:
	// eight input_required rounds per call, ten minutes per request a
	// round sends the client (a person may answer it).
	defaultMaxRounds    = 8
	defaultRoundTimeout = 10 * time.Minute
	// defaultCallback is the URL-mode elicitation callback's path under
	// the MCP endpoint, as Zilla's options.elicitation.callback default.
	defaultCallback = "auth/callback"
)

// settings is what Provision compiles from a server's options, once per
// engine; the workers only read it.
type settings struct {
	origins    [][]byte // allowed Origin values, without a trailing slash
	hosts      [][]byte // allowed Host (:authority) values; none means any
	anyOrigin  bool
	inactivity time.Duration
	keepalive  time.Duration
	// streamIdle ends a session whose only use is its GET stream, without
	// a request for that long; 0 never does.
	streamIdle time.Duration
	// maxSessions bounds the binding's live sessions, counted in live
	// across its workers, and maxInflight one session's requests in
	// flight; 0 is no bound.
	maxSessions int64
	maxInflight int
	live        atomic.Int64
	// addrs counts the live sessions of each client address, up to its
	// limit; nil when limits.sessionsPerAddress is 0.
	addrs    *addrTable
	replay   int // events a session keeps for Last-Event-ID
	get      bool
	versions versionSet
	maxBody  int64
	// elicitTimeout and samplingTimeout bound the wait for the client's
	// answer to a request the upstream sent it (s2c.go).
	elicitTimeout   time.Duration
	samplingTimeout time.Duration
	// callback is "/" and the elicitation callback's path, which a GET's
	// path (without its query) ends with to reach the callback.
	callback string
	// maxRounds and roundTimeout bound the legacy shim (shim.go) and the
	// rounds of a 2026-07-28 call (rounds.go), whose requestStates rounds
	// remembers across workers.
	maxRounds    int
	roundTimeout time.Duration
	rounds       *roundTable
	// params holds the x-mcp-header declarations of the tools this
	// server listed, by the names its clients see (params.go).
	params *mcp.ParamTable
	// ids makes session ids sequential (session-1, session-2, …) or
	// fixed instead of random: for engine-driven scripts, which must know
	// the id the server hands out. Never use them in production: such ids
	// are guessable.
	ids mcp.IDs
	// serverName and serverVersion make the serverInfo object.
	serverName, serverVersion string
	// guardName is options.authorization's guard ("": none), and
	// credPrefix and credSuffix the text around {credentials} in the
	// Authorization header's value.
	guardName              string
	credPrefix, credSuffix []byte
	// prm is the protected resource metadata document, and prmURL where
	// it is served, which the server's Bearer challenges name; nil
	// without options.protectedResource.
	prm, prmURL []byte
}

// defaultCredentials is where a bearer token stands in the Authorization
// header when options.authorization names no credentials, as in Zilla.
const defaultCredentials = "Bearer {credentials}"

// compileAuthorization reads options.authorization: one guard, and a
// credentials pattern with {credentials} once in it.
func (s *settings) compileAuthorization(binding string, opts *options) error {
	for name, a := range opts.Authorization {
		pattern := defaultCredentials
		if a.Credentials != nil {
			pattern = *a.Credentials
		}
		pre, suf, ok := strings.Cut(pattern, "{credentials}")
		if !ok || strings.Contains(suf, "{credentials}") {
			return fmt.Errorf("mcp %s: authorization.%s.credentials %q: want {credentials} once, as in %q", binding, name, pattern, defaultCredentials)
		}
		s.guardName, s.credPrefix, s.credSuffix = name, []byte(pre), []byte(suf)
	}
	return nil
}

// compile reads a server's options over the engine's settings
// (mcp.Setting…), which replace the defaults; options win over both.
func compile(e *engine.Engine, cfg *engine.BindingConfig) (*settings, error) {
	var opts options
	if err := cfg.Options().Decode(&opts); err != nil {
		return nil, err
	}
	s := &settings{
		inactivity:      defaultInactivity,
		streamIdle:      defaultStreamIdle,
		maxSessions:     defaultMaxSessions,
		maxInflight:     defaultMaxInflight,
		addrs:           newAddrTable(defaultMaxPerAddr),
		keepalive:       defaultKeepalive,
		replay:          defaultReplay,
		get:             true,
		versions:        allVersions,
		maxBody:         defaultBodyLimit,
		elicitTimeout:   defaultElicitationTimeout,
		samplingTimeout: defaultSamplingTimeout,
		callback:        "/" + defaultCallback,
		maxRounds:       defaultMaxRounds,
		rounds:          newRoundTable(),
		params:          mcp.NewParamTable(),
		roundTimeout:    defaultRoundTimeout,
		serverName:      defaultServerName,
		serverVersion:   buildVersion(),
	}
	if err := s.applySettings(e); err != nil {
		return nil, fmt.Errorf("mcp %s: %w", cfg.Name, err)
	}
	for _, o := range opts.Origins {
		if o == "*" {
			s.anyOrigin = true
			continue
		}
		if !strings.Contains(o, "://") {
			return nil, fmt.Errorf("mcp %s: origins: %q is not an origin; want scheme://host[:port] or *", cfg.Name, o)
		}
		s.origins = append(s.origins, []byte(strings.ToLower(strings.TrimSuffix(o, "/"))))
	}
	for _, host := range opts.Hosts {
		if host == "" || strings.ContainsAny(host, "/ ") {
			return nil, fmt.Errorf("mcp %s: hosts: %q is not a host; want host or host:port", cfg.Name, host)
		}
		s.hosts = append(s.hosts, []byte(strings.ToLower(host)))
	}
	var err error
	if s.inactivity, err = duration(cfg.Name, "inactivity.timeout", opts.Inactivity.Timeout, s.inactivity); err != nil {
		return nil, err
	}
	if s.streamIdle, err = duration(cfg.Name, "inactivity.stream", opts.Inactivity.Stream, s.streamIdle); err != nil {
		return nil, err
	}
	if s.keepalive, err = duration(cfg.Name, "sse.keepalive.interval", opts.SSE.Keepalive.Interval, s.keepalive); err != nil {
		return nil, err
	}
	if s.elicitTimeout, err = duration(cfg.Name, "elicitation.timeout", opts.Elicitation.Timeout, s.elicitTimeout); err != nil {
		return nil, err
	}
	if s.samplingTimeout, err = duration(cfg.Name, "sampling.timeout", opts.Sampling.Timeout, s.samplingTimeout); err != nil {
		return nil, err
	}
	if s.roundTimeout, err = duration(cfg.Name, "inputRequired.roundTimeout", opts.InputRequired.RoundTimeout, s.roundTimeout); err != nil {
		return nil, err
	}
	if opts.InputRequired.MaxRounds > 0 {
		s.maxRounds = opts.InputRequired.MaxRounds
	}
	if err := s.compileAuthorization(cfg.Name, &opts); err != nil {
		return nil, err
	}
	if pr := opts.ProtectedResource; pr != nil {
		if s.prm, s.prmURL, err = protectedResource(pr.Resource, pr.AuthorizationServers, pr.Scopes); err != nil {
			return nil, fmt.Errorf("mcp %s: protectedResource: %w", cfg.Name, err)
		}
	}
	if cb := opts.Elicitation.Callback; cb != "" {
		if strings.HasPrefix(cb, "/") || strings.ContainsAny(cb, ":?#% ") {
			return nil, fmt.Errorf("mcp %s: elicitation.callback: %q is not a relative path; want one like auth/callback", cfg.Name, cb)
		}
		s.callback = "/" + cb
	}
	if opts.SSE.Replay != nil {
		s.replay = *opts.SSE.Replay
	}
	if opts.Get != nil {
		s.get = *opts.Get
	}
	if len(opts.Versions) > 0 {
		s.versions = 0
		for _, v := range opts.Versions {
			ver, err := mcp.LookupVersion(v)
			if err != nil {
				return nil, fmt.Errorf("mcp %s: versions: %w", cfg.Name, err)
			}
			s.versions |= 1 << ver
		}
	}
	if opts.Limits.Body > 0 {
		s.maxBody = opts.Limits.Body
	}
	if n := opts.Limits.Sessions; n != nil {
		if *n < 0 {
			return nil, fmt.Errorf("mcp %s: limits.sessions: %d is negative; want a count, or 0 for no limit", cfg.Name, *n)
		}
		s.maxSessions = int64(*n)
	}
	if n := opts.Limits.Inflight; n != nil {
		if *n < 0 {
			return nil, fmt.Errorf("mcp %s: limits.inflight: %d is negative; want a count, or 0 for no limit", cfg.Name, *n)
		}
		s.maxInflight = *n
	}
	if n := opts.Limits.SessionsPerAddress; n != nil {
		if *n < 0 {
			return nil, fmt.Errorf("mcp %s: limits.sessionsPerAddress: %d is negative; want a count, or 0 for no limit", cfg.Name, *n)
		}
		s.addrs = nil
		if *n > 0 {
			s.addrs = newAddrTable(*n)
		}
	}
	if opts.Sessions.IDs == "sequential" {
		s.ids = mcp.IDs{Sequential: true}
	}
	return s, nil
}

// applySettings takes the engine settings the server reads. The engine
// checked their values when it started (mcp/settings.go).
func (s *settings) applySettings(e *engine.Engine) error {
	if e == nil {
		return nil
	}
	var err error
	if v, ok := e.Setting(mcp.SettingSessionID); ok {
		if s.ids, err = mcp.ParseIDs(v); err != nil {
			return fmt.Errorf("%s: %w", mcp.SettingSessionID, err)
		}
	}
	if v, ok := e.Setting(mcp.SettingServerName); ok {
		s.serverName = v
	}
	if v, ok := e.Setting(mcp.SettingServerVersion); ok {
		s.serverVersion = v
	}
	if v, ok := e.Setting(mcp.SettingInactivityTimeout); ok {
		if s.inactivity, err = mcp.ParseDuration(v); err != nil {
			return fmt.Errorf("%s: %w", mcp.SettingInactivityTimeout, err)
		}
	}
	if v, ok := e.Setting(mcp.SettingSSEKeepaliveInterval); ok {
		if s.keepalive, err = mcp.ParseDuration(v); err != nil {
			return fmt.Errorf("%s: %w", mcp.SettingSSEKeepaliveInterval, err)
		}
	}
	return nil
}

// duration parses an ISO 8601 duration (PT15S) or a Go one (15s).
func duration(binding, name, v string, def time.Duration) (time.Duration, error) {
	if v == "" {
		return def, nil
	}
	d, err := mcp.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("mcp %s: %s %q: %w", binding, name, v, err)
	}
	return d, nil
}
