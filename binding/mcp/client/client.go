package client

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicehq/sluice/binding"
	httpb "github.com/sluicehq/sluice/binding/http"
	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/binding/mcp/jsonrpc"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/frame"
	"github.com/sluicehq/sluice/engine/guard"
)

func init() { mcp.RegisterKind("client", Binding{}) }

// Binding is the mcp client kind's process-wide factory.
type Binding struct{}

// instance is a configured client on one engine, shared by its workers:
// the compiled options, which they only read, and what the workers learn
// of the upstream together (shared).
type instance struct {
	s  *settings
	sh *shared
}

// Provision compiles the configuration once per engine.
func (Binding) Provision(e *engine.Engine, cfg *engine.BindingConfig) (any, error) {
	s, err := compile(cfg)
	if err != nil {
		return nil, err
	}
	if err := s.applySettings(e); err != nil {
		return nil, fmt.Errorf("mcp %s: %w", cfg.Name, err)
	}
	if s.exitID, err = exit(e, cfg); err != nil {
		return nil, err
	}
	if s.exitID == 0 {
		return nil, fmt.Errorf("mcp %s: a client needs an exit, the http client that reaches %s", cfg.Name, s.authority)
	}
	if cfg.Config != nil {
		if s.routes, err = compileRoutes(cfg.Name, cfg.Routes()); err != nil {
			return nil, err
		}
		s.annotate = s.schemes()
	}
	sh := &shared{sessions: map[string]*upstream{}, pending: map[uint64]*pending{}, params: mcp.NewParamTable()}
	var id [8]byte
	_, _ = rand.Read(id[:])
	sh.instanceID = binary.BigEndian.Uint64(id[:])
	return &instance{s: s, sh: sh}, nil
}

// exit returns the id of the binding the client's requests go out
// through: its exit or, as Zilla's clients may declare it, the exit of
// its routes. Routes with other exits than the first's are refused as
// not supported yet: the client's routes decide by tool, prompt or
// resource (when) and guard whether a request goes upstream (routes.go),
// not where.
func exit(e *engine.Engine, cfg *engine.BindingConfig) (int64, error) {
	if cfg.Config == nil || len(cfg.Routes()) == 0 {
		return cfg.ExitID, nil
	}
	var first int64
	for i, r := range cfg.Routes() {
		id, ok := e.ResolveID(r.Exit)
		if !ok {
			return 0, fmt.Errorf("%s: mcp %s: routes[%d].exit %q names no binding", r.Pos, cfg.Name, i, r.Exit)
		}
		if i == 0 {
			first = id
		} else if id != first {
			return 0, fmt.Errorf("%s: mcp %s: routes[%d].exit: routes with other exits than routes[0]'s are not supported yet", r.Pos, cfg.Name, i)
		}
	}
	if cfg.ExitID != 0 && cfg.ExitID != first {
		return 0, fmt.Errorf("mcp %s: routes[0].exit: routes with another exit than the binding's are not supported yet", cfg.Name)
	}
	return first, nil
}

// Attach makes the client's handler for one worker.
func (Binding) Attach(w *engine.Worker, cfg *engine.BindingConfig) (engine.Handler, error) {
	in, err := binding.Provisioned[*instance](cfg)
	if err != nil {
		return nil, err
	}
	h := attach(w, cfg, in)
	if w.Index() == 0 {
		probeUpstream(w.Logger(), cfg.Name, in.s.scheme+"://"+in.s.authority+in.s.path, in.s.authority)
	}
	if name := in.s.keyStore; name != "" {
		st, ok := w.Store(name)
		if !ok {
			return nil, fmt.Errorf("%s: mcp %s: options.inputRequired.store names store %q, which is not configured", in.s.keyWhere, cfg.Name, name)
		}
		h.keys.store = st
		h.adoptKey()
	}
	if in.s.routes != nil {
		if h.checks, err = mcp.AttachRoutes(w, cfg.Name, len(in.s.routes), func(i int) mcp.Guarded { return in.s.routes[i].guarded }); err != nil {
			return nil, err
		}
	}
	if name := in.s.guardName; name != "" {
		g, ok := w.Guard(name)
		if !ok {
			return nil, fmt.Errorf("mcp %s: options.authorization names guard %q, which is not configured", cfg.Name, name)
		}
		h.guard = g
	}
	return h, nil
}

// v20260728 is the stateless revision, which the client offers through
// server/discover rather than initialize (MCP.md §3.4).
var v20260728 = mcp.Version20260728.String()

// defaultVersions are the versions the client offers when options.versions
// names none.
var defaultVersions = []string{mcp.Version20251125.String()}

const defaultTimeout = 60 * time.Second

// options is the client kind's options block. The fields after Timeout
// belong to the other kinds: they are decoded only to be refused with an
// error that says so, rather than a bare "unknown field".
type options struct {
	Server   string   `yaml:"server"`
	Versions []string `yaml:"versions"`
	Timeout  string   `yaml:"timeout"`
	// Authorization names the guard whose credentials the upstream
	// requests carry: {<guard>: {credentials: …}}.
	Authorization map[string]struct {
		Credentials *string `yaml:"credentials"`
	} `yaml:"authorization"`
	// InputRequired tunes the input_required rounds the client kind runs
	// for 2026-07-28 clients of a 2025 upstream (reverse.go).
	InputRequired *struct {
		Key          string `yaml:"key"`
		Store        string `yaml:"store"`
		RoundTimeout string `yaml:"roundTimeout"`
		MaxPending   *int   `yaml:"maxPending"`
	} `yaml:"inputRequired"`

	Origins    any `yaml:"origins"`
	Hosts      any `yaml:"hosts"`
	Inactivity any `yaml:"inactivity"`
	SSE        any `yaml:"sse"`
	Get        any `yaml:"get"`
	Limits     any `yaml:"limits"`
	Prefix     any `yaml:"prefix"`
	Sessions   any `yaml:"sessions"`
}

// settings is what Provision compiles from the options, once per engine.
type settings struct {
	scheme    string // http: https is refused until Sluice speaks TLS
	authority string // host:port
	path      string // the endpoint's path and query
	versions  []string
	legacy    string // the version initialize offers: the first before 2026-07-28
	stateless bool   // 2026-07-28 is offered
	timeout   time.Duration
	exitID    int64 // the exit, or the first route's
	// routes decide which requests go upstream for whom (routes.go); nil
	// when they decide nothing. annotate: a route names roles, which the
	// tools of tools/list results then carry as securitySchemes.
	routes   []route
	annotate bool

	guardName string // options.authorization's guard; "": none
	// needsCredentials: the guard's credentials are required, the
	// authorization names none of its own (or a {credentials}
	// placeholder), as Zilla decides.
	needsCredentials bool
	// credentials is options.authorization's credentials: the value of
	// the authorization header upstream, {credentials} standing for the
	// guard's; "" (none given) reads as "Bearer {credentials}". A value
	// without the placeholder (an API key of the gateway's own) goes on
	// every upstream request, the session's own included, as Zilla's.
	credentials    string
	staticAuth     []byte  // credentials when it names no placeholder, else nil
	elicitIDs      mcp.IDs // mcp.elicitation.id
	correlationIDs mcp.IDs // mcp.elicit.correlation.id

	// The input_required rounds of reverse.go: the key of the states
	// issued (with keyStore, the key until the store's arrives, and the
	// fallback while the store cannot be reached), how long a round waits
	// for the client's retry, and how many calls a worker holds open for
	// one.
	states       stateCodec
	keyStore     string // options.inputRequired.store; "": none
	keyWhere     string // where it is named, for errors
	keyName      string // the store key the shared key lives under
	roundTimeout time.Duration
	maxPending   int
}

// The defaults of options.inputRequired.
const (
	defaultRoundTimeout = 600 * time.Second
	defaultMaxPending   = 1024
)

// The engine settings that supply the ids of the elicitations the client
// kind starts for its guard, named as Zilla's properties.
const (
	settingElicitationID = "mcp.elicitation.id"
	settingCorrelationID = "mcp.elicit.correlation.id"
)

// applySettings reads the id suppliers of the engine's settings; the
// engine checked their values when it started.
func (s *settings) applySettings(e *engine.Engine) error {
	if e == nil {
		return nil
	}
	var err error
	if v, ok := e.Setting(settingElicitationID); ok {
		if s.elicitIDs, err = mcp.ParseIDs(v); err != nil {
			return fmt.Errorf("%s: %w", settingElicitationID, err)
		}
	}
	if v, ok := e.Setting(settingCorrelationID); ok {
		if s.correlationIDs, err = mcp.ParseIDs(v); err != nil {
			return fmt.Errorf("%s: %w", settingCorrelationID, err)
		}
	}
	return nil
}

func compile(cfg *engine.BindingConfig) (*settings, error) {
	var o options
	if err := cfg.Options().Decode(&o); err != nil {
		return nil, err
	}
	for _, f := range []struct {
		name string
		v    any
		kind string
	}{
		{"origins", o.Origins, "server"}, {"hosts", o.Hosts, "server"}, {"inactivity", o.Inactivity, "server"},
		{"sse", o.SSE, "server"}, {"get", o.Get, "server"}, {"limits", o.Limits, "server"},
		{"sessions", o.Sessions, "server"}, {"prefix", o.Prefix, "proxy"},
	} {
		if f.v != nil {
			return nil, fmt.Errorf("mcp %s: options.%s is an option of the %s kind, not of the client", cfg.Name, f.name, f.kind)
		}
	}
	if o.Server == "" {
		return nil, fmt.Errorf("mcp %s: a client needs options.server, the upstream MCP endpoint (http://host:port/path)", cfg.Name)
	}
	u, err := url.Parse(o.Server)
	if err == nil && u.Scheme == "https" {
		// Sluice has no TLS binding yet: the request would go out in
		// cleartext to a server that expects TLS, credentials and all.
		return nil, fmt.Errorf("mcp %s: options.server %q: https upstreams are not supported (Sluice speaks no TLS yet, and will not send them cleartext); use an http:// endpoint, for example a local TLS proxy in front of the server", cfg.Name, o.Server)
	}
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return nil, fmt.Errorf("mcp %s: options.server %q: want http://host[:port]/path", cfg.Name, o.Server)
	}
	s := &settings{scheme: u.Scheme, authority: u.Host, path: u.RequestURI(), timeout: defaultTimeout}
	if u.Port() == "" {
		s.authority += ":80"
	}
	for name, a := range o.Authorization {
		// The schema allows one guard.
		s.guardName = name
		s.setCredentials(a.Credentials)
	}
	s.versions = o.Versions
	if len(s.versions) == 0 {
		s.versions = defaultVersions
	}
	for _, name := range s.versions {
		v, err := mcp.LookupVersion(name)
		switch {
		case err != nil:
			return nil, fmt.Errorf("mcp %s: options.versions: %w", cfg.Name, err)
		case v == mcp.Version20260728:
			s.stateless = true
		case s.legacy == "":
			s.legacy = name
		}
	}
	if err := s.inputRequired(cfg, &o); err != nil {
		return nil, err
	}
	if o.Timeout != "" {
		d, err := mcp.ParseDuration(o.Timeout)
		if err != nil {
			return nil, fmt.Errorf("mcp %s: options.timeout %q: want a positive duration such as PT60S", cfg.Name, o.Timeout)
		}
		s.timeout = d
	}
	return s, nil
}

// inputRequired compiles options.inputRequired: a key from the config
// (base64, at least 32 bytes), one shared through a store, or a random
// one for this process.
func (s *settings) inputRequired(cfg *engine.BindingConfig, o *options) error {
	name := cfg.Name
	s.roundTimeout, s.maxPending = defaultRoundTimeout, defaultMaxPending
	ir := o.InputRequired
	if ir != nil && ir.Store != "" {
		s.keyStore = ir.Store
		s.keyWhere = cfg.Options().Where("inputRequired", "store")
		s.keyName = name + ".inputRequired.key"
		if ir.Key != "" {
			return fmt.Errorf("%s: mcp %s: options.inputRequired takes key or store, not both: the states' key has one source", s.keyWhere, name)
		}
	}
	if ir == nil || ir.Key == "" {
		s.states.key = make([]byte, 32)
		_, _ = rand.Read(s.states.key) // crypto/rand.Read does not fail
	} else {
		k, err := base64.StdEncoding.DecodeString(ir.Key)
		if err != nil || len(k) < 32 {
			return fmt.Errorf("mcp %s: options.inputRequired.key: want at least 32 bytes in base64", name)
		}
		s.states.key = k
	}
	if ir == nil {
		return nil
	}
	if ir.RoundTimeout != "" {
		d, err := mcp.ParseDuration(ir.RoundTimeout)
		if err != nil {
			return fmt.Errorf("mcp %s: options.inputRequired.roundTimeout %q: want a positive duration such as PT600S", name, ir.RoundTimeout)
		}
		s.roundTimeout = d
	}
	if ir.MaxPending != nil {
		if *ir.MaxPending < 1 {
			return fmt.Errorf("mcp %s: options.inputRequired.maxPending: want at least 1, got %d", name, *ir.MaxPending)
		}
		s.maxPending = *ir.MaxPending
	}
	return nil
}

// shared is what the workers of one engine share for one client binding:
// the upstream sessions by downstream session id, what server/discover
// told, and the JSON-RPC id counter.
type shared struct {
	mu       sync.Mutex
	sessions map[string]*upstream
	// discovery: 0 not asked, 1 the upstream serves 2026-07-28
	// statelessly, 2 it does not.
	discovery uint8
	// legacyServed: discovery listed the legacy version too, so a 2025-era
	// downstream session gets a 2025 upstream session of its own.
	legacyServed bool
	caps         uint16 // the upstream's capability bits, once known
	capsKnown    bool

	ids atomic.Int64

	// pending holds the calls kept open upstream between input_required
	// rounds, by handle (reverse.go), under mu.
	pending map[uint64]*pending
	handles atomic.Uint64
	// instanceID names this engine's instance of the binding in the
	// states it issues: a pending call lives in the instance that issued
	// its state (see keys.go).
	instanceID uint64

	// elicitations and correlations count the ids handed out for
	// elicitations the guard asked for.
	elicitations atomic.Int64
	correlations atomic.Int64

	// params holds the x-mcp-header declarations of the upstream's tools,
	// by the upstream's names, from the tools/list results relayed or
	// fetched (paramfetch.go).
	params *mcp.ParamTable
	// fetch is the tools/list walk in progress, under mu; nil: none.
	fetch *paramFetch
}

// handler is the client kind on one worker. Its flyweights, builders,
// tracker and free lists are reused by every stream of the worker.
type handler struct {
	w          *engine.Worker
	cfg        *engine.BindingConfig
	s          *settings
	sh         *shared
	exitID     int64
	mcpTypeID  int32
	httpTypeID int32
	maxPayload int

	begin frame.Begin
	// checks are the guards of the routes, by route, on this worker.
	checks []mcp.GuardChecks

	mcpEx mcp.McpBeginEx
	exB   mcp.ExBuilders
	// flushEx serves the guard's elicitations.
	flushEx mcp.McpFlushEx
	guard   guard.Handler // options.authorization's; nil: none
	httpExB httpb.HttpBeginExBuilder
	hdr     httpb.HttpHeader
	resp    respHead

	tracker jsonrpc.Tracker
	msg     message
	scratch []byte
	idBuf   [24]byte

	freeX []*exchange
	freeC []*call

	// inflight holds the requests with a deadline; one sweep timer
	// serves them all.
	inflight   []*exchange
	sweepTimer int64
	sweepFn    func()

	// null is this worker's upstream for requests without a session id.
	null *upstream
	// nullGet is the GET stream of null's session, open while it lives,
	// which the lifecycles without a session id that subscribed to list
	// changes (nullLs) share (upstream.go's openNullGet).
	nullGet *getStream
	nullLs  []*lifecycle
	// npending counts the pending calls this worker holds (reverse.go).
	npending atomic.Int32
	// keys is the worker's requestState key from options.inputRequired.store
	// (keys.go).
	keys keyState
}

// attach makes the handler of the provisioned client in for worker w.
func attach(w *engine.Worker, cfg *engine.BindingConfig, in *instance) *handler {
	h := &handler{
		w: w, cfg: cfg, s: in.s, exitID: in.s.exitID,
		sh:         in.sh,
		mcpTypeID:  w.Labels().Supply("mcp"),
		httpTypeID: w.Labels().Supply("http"),
		maxPayload: w.MaxFrame() - 512,
		scratch:    make([]byte, 0, 1024),
	}
	h.sweepFn = h.sweep
	return h
}

// Detach stops the worker's sweep timer and its key timers.
func (h *handler) Detach() {
	h.keys.stop(h)
	h.w.Disarm(&h.sweepTimer)
}

// NewStream takes an MCP application stream: a lifecycle, a request, or
// a client's answer to a request of the upstream (clientResponse).
func (h *handler) NewStream(_ frame.FrameType, buf []byte) engine.MessageConsumer {
	if !h.begin.TryWrap(buf, 0, len(buf)) {
		return nil
	}
	ext := h.begin.Extension()
	if h.mcpEx.TryWrap(ext, 0, len(ext)) && h.mcpEx.TypeID() == h.mcpTypeID {
		switch h.mcpEx.Kind() {
		case mcp.McpBeginExKindLifecycle:
			l := &lifecycle{h: h}
			l.ds.init(h, &h.begin)
			return l.onFrame
		case mcp.McpBeginExKindClientResponse:
			r := h.newResponse()
			r.ds.init(h, &h.begin)
			return r.fn
		}
	}
	x := h.newExchange()
	x.ds.init(h, &h.begin)
	return x.fn
}

var (
	_ engine.Binding     = Binding{}
	_ engine.Provisioner = Binding{}
	_ engine.Handler     = (*handler)(nil)
	_ engine.Detacher    = (*handler)(nil)
)

// setCredentials reads options.authorization's credentials (nil: none
// given), as Zilla decides whether the guard's are needed.
func (s *settings) setCredentials(credentials *string) {
	s.needsCredentials = credentials == nil || strings.Contains(*credentials, "{credentials}")
	s.credentials, s.staticAuth = "", nil
	if credentials != nil {
		s.credentials = *credentials
		if !s.needsCredentials && s.credentials != "" {
			s.staticAuth = []byte(s.credentials)
		}
	}
}
