package guard

import (
	"encoding/json"
	"fmt"
	neturl "net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// TestType is the type name of the built-in guard for specs.
const TestType = "test"

// testSchema is Zilla's test guard options schema, with durations widened
// from PT\d+S to everything [ParseDuration] takes.
const testSchema = `{
  "type": "object",
  "properties": {
    "credentials": { "type": "string" },
    "lifetime": { "type": "string", "pattern": "^[Pp]([0-9]+[Dd])?([Tt]([0-9]+[Hh])?([0-9]+[Mm])?([0-9]+([.,][0-9]{0,9})?[Ss])?)?$" },
    "challenge": { "type": "string", "pattern": "^[Pp]([0-9]+[Dd])?([Tt]([0-9]+[Hh])?([0-9]+[Mm])?([0-9]+([.,][0-9]{0,9})?[Ss])?)?$" },
    "identity": { "type": "string", "default": "test" },
    "roles": { "type": "array", "items": { "type": "string" } },
    "attributes": {
      "type": "object",
      "patternProperties": { "^[a-zA-Z]+[a-zA-Z0-9._-]*$": { "type": "string" } },
      "additionalProperties": false
    },
    "preauthorize": { "type": "string" },
    "acquire": { "enum": ["immediate", "deferred"], "default": "immediate" },
    "max-sessions": { "type": "integer", "minimum": 0 }
  },
  "additionalProperties": false
}`

// defaultIdentity is the identity of every session when options.identity
// is absent, as in Zilla.
const defaultIdentity = "test"

// preauthorizeCode marks credentials that complete a preauthorization: the
// authorization code the user's browser brings back on the redirect.
const preauthorizeCode = "code="

func init() {
	Register(Info{Type: TestType, Schema: json.RawMessage(testSchema), New: newTest})
}

// testOptions are the test guard's options, as Zilla's test guard reads
// them.
type testOptions struct {
	credentials    string
	hasCredentials bool
	lifetime       time.Duration
	hasLifetime    bool // absent: sessions never expire
	challenge      time.Duration
	identity       string
	roles          []string // empty: any roles verify
	attributes     map[string]string
	preauthorize   string // "": no preauthorization step
	deferAcquire   bool
	maxSessions    int64 // -1: unlimited
}

func parseTestOptions(options map[string]any) (testOptions, error) {
	o := testOptions{identity: defaultIdentity, maxSessions: -1}
	err := checkKeys(options, "credentials", "lifetime", "challenge", "identity", "roles",
		"attributes", "preauthorize", "acquire", "max-sessions")
	if err != nil {
		return o, err
	}
	if o.credentials, o.hasCredentials, err = optString(options, "credentials"); err != nil {
		return o, err
	}
	if o.lifetime, o.hasLifetime, err = optDuration(options, "lifetime"); err != nil {
		return o, err
	}
	if o.challenge, _, err = optDuration(options, "challenge"); err != nil {
		return o, err
	}
	if identity, ok, err := optString(options, "identity"); err != nil {
		return o, err
	} else if ok {
		o.identity = identity
	}
	if o.roles, err = optStrings(options, "roles"); err != nil {
		return o, err
	}
	if o.attributes, err = optStringMap(options, "attributes"); err != nil {
		return o, err
	}
	if o.preauthorize, _, err = optString(options, "preauthorize"); err != nil {
		return o, err
	}
	acquire, _, err := optString(options, "acquire")
	switch {
	case err != nil:
		return o, err
	case acquire == "deferred":
		o.deferAcquire = true
	case acquire != "" && acquire != "immediate":
		return o, fmt.Errorf("%w: acquire: want immediate or deferred, got %q", ErrInvalidOption, acquire)
	}
	if n, ok, err := optCount(options, "max-sessions"); err != nil {
		return o, err
	} else if ok {
		o.maxSessions = n
	}
	return o, nil
}

// testGuard is the guard specs configure, modelled on Zilla's engine test
// guard. It accepts one credential string, hands out sessions numbered
// from 1 with a fixed identity, roles and attributes, and can demand a
// preauthorization step first.
//
// Its sessions belong to the guard, not to a worker: every worker's
// Handler sees every session, and max-sessions bounds them all together.
type testGuard struct {
	opts  testOptions
	clock Clock

	mu       sync.Mutex
	sessions map[int64]int64 // session id → expiresAt (Unix ms)
	next     int64
	closed   bool
}

func newTest(_ string, options map[string]any, clock Clock) (Guard, error) {
	opts, err := parseTestOptions(options)
	if err != nil {
		return nil, err
	}
	if clock == nil {
		clock = SystemClock{}
	}
	return &testGuard{opts: opts, clock: clock, sessions: make(map[int64]int64), next: 1}, nil
}

func (g *testGuard) Attach(d Dispatcher) Handler {
	if d == nil {
		panic("guard: Attach with nil Dispatcher")
	}
	return &testHandler{g: g, d: d}
}

func (g *testGuard) Close() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.closed = true
	clear(g.sessions)
	return nil
}

// createSession returns a new session, or NotAuthorized once max-sessions
// are open.
func (g *testGuard) createSession() int64 {
	expiresAt := ExpiresNever
	if g.opts.hasLifetime {
		now := g.clock.Now().UnixMilli()
		if life := g.opts.lifetime.Milliseconds(); life < ExpiresNever-now {
			expiresAt = now + life
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed || g.opts.maxSessions >= 0 && int64(len(g.sessions)) >= g.opts.maxSessions {
		return NotAuthorized
	}
	session := g.next
	g.next++
	g.sessions[session] = expiresAt
	return session
}

// expiresAt returns the session's expiry, or 0 if it is not open.
func (g *testGuard) expiresAt(session int64) int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.sessions[session]
}

func (g *testGuard) known(session int64) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	_, ok := g.sessions[session]
	return ok
}

// testHandler is one worker's view of a testGuard.
type testHandler struct {
	g *testGuard
	d Dispatcher
}

// Reauthorize follows Zilla's test guard: a deferred guard opens a session
// only when given no credentials; otherwise the configured credentials
// open one; and a guard with preauthorize set answers NeedsPreauthorize to
// missing credentials and opens a session for credentials carrying an
// authorization code ("code=").
func (h *testHandler) Reauthorize(_, _, _ int64, credentials string) int64 {
	o := &h.g.opts
	switch {
	case o.deferAcquire:
		if credentials == "" {
			return h.g.createSession()
		}
		return NotAuthorized
	case o.hasCredentials && credentials == o.credentials:
		return h.g.createSession()
	case o.preauthorize != "" && credentials == "":
		return NeedsPreauthorize
	case o.preauthorize != "" && strings.Contains(credentials, preauthorizeCode):
		return h.g.createSession()
	default:
		return NotAuthorized
	}
}

func (h *testHandler) Deauthorize(session int64) {
	h.g.mu.Lock()
	defer h.g.mu.Unlock()
	delete(h.g.sessions, session)
}

// Identity returns the configured identity whatever the session, as Zilla's
// test guard does.
func (h *testHandler) Identity(int64) string { return h.g.opts.identity }

func (h *testHandler) Attribute(_ int64, name string) string { return h.g.opts.attributes[name] }

// Credentials returns the configured credentials; a deferred guard returns
// them only for an open session.
func (h *testHandler) Credentials(session int64) string {
	if h.g.opts.deferAcquire && !h.g.known(session) {
		return ""
	}
	return h.g.opts.credentials
}

// Verify holds for an open session, or for no session at all when the
// guard has no credentials to demand, and then only if the configured
// roles include every requested role (no configured roles allow any).
func (h *testHandler) Verify(session int64, roles []string) bool {
	o := &h.g.opts
	if !(session == NotAuthorized && !o.hasCredentials || h.g.known(session)) {
		return false
	}
	if len(o.roles) == 0 {
		return true
	}
	for _, role := range roles {
		if !slices.Contains(o.roles, role) {
			return false
		}
	}
	return true
}

func (h *testHandler) ExpiresAt(session int64) int64 { return h.g.expiresAt(session) }

func (h *testHandler) ExpiringAt(session int64) int64 {
	expiresAt := h.g.expiresAt(session)
	if expiresAt == 0 {
		return 0
	}
	return expiresAt - h.g.opts.challenge.Milliseconds()
}

// Challenge holds from challenge before expiry until expiry. With no
// challenge option the window is empty and it never holds. Like Zilla's
// test guard it does not remember having said yes.
func (h *testHandler) Challenge(session int64, now int64) bool {
	expiresAt := h.g.expiresAt(session)
	if expiresAt == 0 {
		return false
	}
	challengeAt := expiresAt - h.g.opts.challenge.Milliseconds()
	return challengeAt <= now && now < expiresAt
}

// Preauthorize completes with the configured preauthorize URL, "" when
// there is none. As in Zilla's test guard, a URL whose text holds the
// placeholder host replace.me gets its redirect_uri parameter replaced by
// callback, query-escaped, when there is one.
func (h *testHandler) Preauthorize(_, _, _, _ int64, callback string, done func(url string, err error)) {
	h.g.mu.Lock()
	closed := h.g.closed
	h.g.mu.Unlock()
	url, err := h.g.opts.preauthorize, error(nil)
	if closed {
		url, err = "", ErrClosed
	} else if callback != "" && strings.Contains(url, redirectPlaceholder) {
		url = withRedirect(url, callback)
	}
	if done != nil {
		h.d.Dispatch(func() { done(url, err) })
	}
}

// redirectPlaceholder marks a preauthorize URL whose redirect_uri is to be
// replaced by the caller's callback.
const redirectPlaceholder = "replace.me"

// withRedirect replaces the value of the first redirect_uri parameter of
// u with callback, query-escaped.
func withRedirect(u, callback string) string {
	const param = "redirect_uri="
	i := strings.Index(u, param)
	if i < 0 {
		return u
	}
	start := i + len(param)
	end := strings.IndexByte(u[start:], '&')
	if end < 0 {
		end = len(u)
	} else {
		end += start
	}
	return u[:start] + neturl.QueryEscape(callback) + u[end:]
}

var (
	_ Guard   = (*testGuard)(nil)
	_ Handler = (*testHandler)(nil)
)
