package jwtguard

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicehq/sluice/engine/guard"
)

// Type is the type name configurations use: guards.<name>.type: jwt.
const Type = "jwt"

// schema is the JSON Schema of the options; New checks the same rules.
//
//go:embed jwt.schema.json
var schema []byte

// Bounds of a guard's state.
const (
	maxSessions     = 1 << 20
	cacheSize       = 1024 // verified tokens each Handler remembers
	refetchInterval = 30 * time.Second
	shardCount      = 64
)

func init() {
	guard.Register(guard.Info{Type: Type, Schema: json.RawMessage(schema), New: newGuard})
}

// jwtGuard is the process-wide state of one jwt guard: its keys and the
// sessions of every worker.
type jwtGuard struct {
	cfg    config
	clock  guard.Clock
	log    *slog.Logger
	client *http.Client // nil when the keys are in the configuration

	keys atomic.Pointer[keySet]

	ctx       context.Context // cancelled by Close, ending a refetch
	cancel    context.CancelFunc
	fetching  atomic.Bool
	lastFetch atomic.Int64 // clock time, Unix ns, the last fetch began
	mu        sync.Mutex   // orders wg.Go after Close's check of closed
	wg        sync.WaitGroup
	closed    atomic.Bool

	next        atomic.Int64 // last session id handed out
	count       atomic.Int64 // open sessions
	maxSessions int64
	fullLogged  atomic.Bool
	shards      [shardCount]shard
}

// shard holds the sessions whose id is its index modulo shardCount, so
// workers opening and closing sessions seldom share a lock.
type shard struct {
	mu sync.RWMutex
	m  map[int64]*session
	_  [64 - 32]byte // to a cache line
}

// session is one successful Reauthorize.
type session struct {
	c           *claims
	expiresAt   int64 // Unix ms, or ExpiresNever
	challengeAt int64
	challenged  atomic.Bool
}

func newGuard(name string, options map[string]any, clock guard.Clock) (guard.Guard, error) {
	cfg, err := parse(options)
	if err != nil {
		return nil, err
	}
	if clock == nil {
		clock = guard.SystemClock{}
	}
	g := &jwtGuard{
		cfg:         cfg,
		clock:       clock,
		log:         slog.Default().With("guard", name, "type", Type),
		maxSessions: maxSessions,
	}
	var set *keySet
	if cfg.keys != nil {
		set, err = configKeys(cfg.keys)
	} else {
		g.client = newClient()
		g.lastFetch.Store(clock.Now().UnixNano())
		set, err = fetchKeySet(context.Background(), g.client, cfg.keysURL, g.log)
	}
	if err != nil {
		return nil, err
	}
	g.keys.Store(set)
	g.ctx, g.cancel = context.WithCancel(context.Background())
	for i := range g.shards {
		g.shards[i].m = make(map[int64]*session)
	}
	return g, nil
}

func (g *jwtGuard) Attach(d guard.Dispatcher) guard.Handler {
	if d == nil {
		panic("guard/jwt: Attach with nil Dispatcher")
	}
	return &handler{g: g, d: d, cache: make(map[string]*claims)}
}

// Close refuses every later authorization, drops the sessions and waits
// for a refetch of the keys to stop.
func (g *jwtGuard) Close() error {
	g.mu.Lock()
	already := g.closed.Swap(true)
	g.mu.Unlock()
	if already {
		return nil
	}
	g.cancel()
	g.wg.Wait()
	for i := range g.shards {
		sh := &g.shards[i]
		sh.mu.Lock()
		g.count.Add(-int64(len(sh.m)))
		clear(sh.m)
		sh.mu.Unlock()
	}
	return nil
}

// open makes a session of c, or refuses once maxSessions are open. Ids
// come from one counter, so they never collide across workers and never
// come back after Deauthorize.
func (g *jwtGuard) open(c *claims) int64 {
	if g.count.Add(1) > g.maxSessions {
		g.count.Add(-1)
		if g.fullLogged.CompareAndSwap(false, true) {
			g.log.Warn("jwt: too many sessions; refusing authorizations until some end", "max", g.maxSessions)
		}
		return guard.NotAuthorized
	}
	s := &session{c: c, expiresAt: c.exp, challengeAt: c.exp}
	if c.exp != guard.ExpiresNever {
		s.challengeAt = c.exp - g.cfg.challenge
	}
	id := g.next.Add(1)
	sh := &g.shards[id%shardCount]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if g.closed.Load() {
		g.count.Add(-1)
		return guard.NotAuthorized
	}
	sh.m[id] = s
	return id
}

// session returns the open session id, or nil.
func (g *jwtGuard) session(id int64) *session {
	if id <= 0 {
		return nil
	}
	sh := &g.shards[id%shardCount]
	sh.mu.RLock()
	defer sh.mu.RUnlock()
	return sh.m[id]
}

// refetch fetches the key set again in the background, at most one fetch
// at a time and one per refetchInterval, so a new kid is known by the next
// request. Tokens with unknown kids cannot make it fetch more often.
func (g *jwtGuard) refetch() {
	if g.client == nil {
		return
	}
	now := g.clock.Now().UnixNano()
	if now-g.lastFetch.Load() < int64(refetchInterval) || !g.fetching.CompareAndSwap(false, true) {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	// Read again: a fetch may have begun and ended since the first read.
	if g.closed.Load() || now-g.lastFetch.Load() < int64(refetchInterval) {
		g.fetching.Store(false)
		return
	}
	g.lastFetch.Store(now)
	g.wg.Go(func() {
		defer g.fetching.Store(false)
		set, err := fetchKeySet(g.ctx, g.client, g.cfg.keysURL, g.log)
		if err != nil {
			g.log.Warn("jwt: refetch of keys failed; keeping the old ones", "error", err)
			return
		}
		g.keys.Store(set)
		g.log.Info("jwt: keys refetched", "keys", len(set.byKid))
	})
}

// handler is one worker's view of a jwtGuard. Its cache of verified
// tokens is its own, so it needs no lock.
type handler struct {
	g     *jwtGuard
	d     guard.Dispatcher
	cache map[string]*claims // token → what it was verified to grant
}

// Reauthorize verifies credentials, a compact JWS, and opens a session for
// it. It does no I/O: a token with an unknown kid is refused at once and
// schedules a refetch of the keys, when they come from a URL.
func (h *handler) Reauthorize(traceID, bindingID, _ int64, credentials string) int64 {
	g := h.g
	if g.closed.Load() {
		return guard.NotAuthorized
	}
	keys := g.keys.Load()
	c := h.cache[credentials]
	if c == nil || c.keys != keys {
		var kid string
		var err error
		if c, kid, err = g.verify(credentials, keys); err != nil {
			delete(h.cache, credentials)
			if errors.Is(err, errUnknownKid) && kid != "" {
				g.log.Debug("jwt: token refused", "trace", traceID, "binding", bindingID, "reason", err, "kid", kid)
				g.refetch()
			} else {
				g.log.Debug("jwt: token refused", "trace", traceID, "binding", bindingID, "reason", err)
			}
			return guard.NotAuthorized
		}
		h.remember(credentials, c)
	}
	var err error
	switch now := g.clock.Now().UnixMilli(); {
	case now >= c.exp:
		err = errExpired
	case now < c.nbf:
		err = errNotYetValid
	default:
		return g.open(c)
	}
	g.log.Debug("jwt: token refused", "trace", traceID, "binding", bindingID, "reason", err)
	return guard.NotAuthorized
}

// remember caches c under a copy of token, which the sessions of c then
// hold as their credentials.
func (h *handler) remember(token string, c *claims) {
	if len(h.cache) >= cacheSize {
		for t := range h.cache {
			delete(h.cache, t)
			break
		}
	}
	c.token = strings.Clone(token)
	h.cache[c.token] = c
}

func (h *handler) Deauthorize(id int64) {
	if id <= 0 {
		return
	}
	g := h.g
	sh := &g.shards[id%shardCount]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if _, ok := sh.m[id]; ok {
		delete(sh.m, id)
		g.count.Add(-1)
	}
}

func (h *handler) Identity(id int64) string {
	if s := h.g.session(id); s != nil {
		return s.c.identity
	}
	return ""
}

func (h *handler) Attribute(id int64, name string) string {
	if s := h.g.session(id); s != nil {
		return s.c.attributes[name]
	}
	return ""
}

func (h *handler) Credentials(id int64) string {
	if s := h.g.session(id); s != nil {
		return s.c.token
	}
	return ""
}

// Verify holds for an open session whose roles include every one of roles.
func (h *handler) Verify(id int64, roles []string) bool {
	s := h.g.session(id)
	if s == nil {
		return false
	}
	for _, role := range roles {
		if !slices.Contains(s.c.roles, role) {
			return false
		}
	}
	return true
}

func (h *handler) ExpiresAt(id int64) int64 {
	if s := h.g.session(id); s != nil {
		return s.expiresAt
	}
	return 0
}

func (h *handler) ExpiringAt(id int64) int64 {
	if s := h.g.session(id); s != nil {
		return s.challengeAt
	}
	return 0
}

// Challenge holds once, the first time it is asked at or after the
// session's challenge time and before it expires, as in Zilla.
func (h *handler) Challenge(id int64, now int64) bool {
	s := h.g.session(id)
	return s != nil && s.challengeAt <= now && now < s.expiresAt && s.challenged.CompareAndSwap(false, true)
}

// Preauthorize completes with no URL: a bearer token needs no step first.
func (h *handler) Preauthorize(_, _, _, _ int64, _ string, done func(url string, err error)) {
	if done == nil {
		return
	}
	var err error
	if h.g.closed.Load() {
		err = guard.ErrClosed
	}
	h.d.Dispatch(func() { done("", err) })
}

var (
	_ guard.Guard   = (*jwtGuard)(nil)
	_ guard.Handler = (*handler)(nil)
)
