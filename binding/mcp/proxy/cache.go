package proxy

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"

	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/binding/mcp/jsonrpc"
	"github.com/sluicehq/sluice/engine/guard"
	"github.com/sluicehq/sluice/engine/store"
)

// cache is one worker's side of options.cache: a copy of every cached
// list, kept current by a Watch on its key, so that a list is served as
// a write of bytes already in memory; the gate that holds downstream
// lifecycles until the lists have settled; the live downstream
// lifecycles, told of list changes; and the hydrater.
type cache struct {
	h     *Handler
	cfg   *cacheConfig
	store store.Handler
	auth  int64 // the guard's session for the hydrate frames, 0 without one
	// routeAuth is the guard's session for the hydrate frames to each
	// route with credentials of its own (with.cache.credentials), else 0.
	routeAuth []int64
	guard     guard.Handler
	kinds     []kindState
	open      bool // the gate: every kind has settled, or the gate timed out
	timer     int64
	waiting   []*lifecycle
	held      []gatedRequest // calls that read the cached tools list, held by the gate
	live      map[*lifecycle]struct{}
	closed    bool
	hy        hydrater
}

// kindState is one cached kind on one worker.
type kindState struct {
	k       *cacheKind
	raw     []byte   // the entry as stored; nil when there is none or it is unusable
	pages   [][]byte // the answers: raw itself, or its pages with cursors
	version uint64
	loaded  bool // the first Get has answered
	settled bool // hit, stored or failed: the gate need not wait for it
	bad     uint64
	cancel  func()
	cat     *catalog // the tools entry read for the search tools, once asked for
}

// newCache attaches options.cache on worker w: the store and guard it
// names, a Get and a Watch per kind, the gate's timer and the hydrater.
func newCache(h *Handler, cfg *cacheConfig) (*cache, error) {
	w := h.w
	st, ok := w.Store(cfg.store)
	if !ok {
		return nil, fmt.Errorf("%w: %s: mcp %s: store %q is not configured", ErrConfig, cfg.storeWhere, h.name, cfg.store)
	}
	c := &cache{h: h, cfg: cfg, store: st, live: map[*lifecycle]struct{}{}}
	if cfg.guard != "" {
		g, ok := w.Guard(cfg.guard)
		if !ok {
			return nil, fmt.Errorf("%w: %s: mcp %s: guard %q is not configured", ErrConfig, cfg.guardWhere, h.name, cfg.guard)
		}
		c.guard = g
		c.auth = g.Reauthorize(w.SupplyTraceID(), h.id, 0, cfg.credential)
		if !guard.Authorized(c.auth) {
			h.log.Warn("cache: the guard refused the hydrate credentials", "guard", cfg.guard)
		}
		c.routeAuth = make([]int64, len(h.s.routes))
		for i := range h.s.routes {
			rt := &h.s.routes[i]
			if rt.cacheCredentials == "" {
				continue
			}
			c.routeAuth[i] = g.Reauthorize(w.SupplyTraceID(), h.id, 0, rt.cacheCredentials)
			if !guard.Authorized(c.routeAuth[i]) {
				h.log.Warn("cache: the guard refused a route's hydrate credentials", "guard", cfg.guard, "route", rt.label())
			}
		}
	}
	c.kinds = make([]kindState, len(cfg.kinds))
	for i := range cfg.kinds {
		ks := &c.kinds[i]
		ks.k = &cfg.kinds[i]
		ks.cancel = st.Watch(ks.k.key, func(value []byte, ok bool) { c.watched(i, value, ok) })
		st.Get(ks.k.key, func(value []byte, ok bool) { c.got(i, value, ok) })
	}
	c.timer = w.TimerAt(w.Now().Add(cfg.gate), c.gateTimedOut)
	c.hy.init(c)
	return c, nil
}

// detach stops the watches, the timers and the hydrater.
func (c *cache) detach() {
	c.closed = true
	c.h.w.Disarm(&c.timer)
	for i := range c.kinds {
		c.kinds[i].cancel()
	}
	c.hy.stop()
	if c.guard == nil {
		return
	}
	for _, a := range append(c.routeAuth, c.auth) {
		if guard.Authorized(a) {
			c.guard.Deauthorize(a)
		}
	}
}

// hydrateAuth returns the authorization of the hydrate session's frames
// to route: the session of the route's own credentials, else the cache's.
func (c *cache) hydrateAuth(route int) int64 {
	if c.routeAuth != nil && c.routeAuth[route] != 0 {
		return c.routeAuth[route]
	}
	return c.auth
}

// routeAuth returns the authorization of the frames an internal stream
// (the hydrate session's) sends to route, and auth for any other.
func (h *Handler) routeAuth(internal bool, route int, auth int64) int64 {
	if internal && h.cache != nil {
		return h.cache.hydrateAuth(route)
	}
	return auth
}

func (c *cache) got(i int, value []byte, ok bool) {
	if c.closed {
		return
	}
	ks := &c.kinds[i]
	ks.loaded = true
	if ok {
		c.load(i, value)
	}
	c.hy.loaded(i)
}

func (c *cache) watched(i int, value []byte, ok bool) {
	if c.closed {
		return
	}
	if !ok {
		c.drop(i)
		return
	}
	c.load(i, value)
}

// drop forgets kind i's entry when the store no longer has it (deleted,
// expired, or the store lost sight of it, as a Redis store does when
// Redis is lost): lists of that kind go to the routes until an entry
// comes again. The version stays, so that an entry equal to the one
// dropped comes back without a list_changed and one that differs brings
// one.
func (c *cache) drop(i int) {
	ks := &c.kinds[i]
	if ks.raw == nil {
		return
	}
	ks.raw, ks.pages, ks.cat = nil, nil, nil
	c.h.log.Info("cache: entry gone, served through", "key", ks.k.key)
}

// load takes value as kind i's entry when it is usable (a JSON object with
// the kind's array, within maxEntry), renders its pages, settles the kind
// and, when it replaces another entry, tells the live lifecycles that the
// list changed. An unusable entry is logged once and left out: lists of
// that kind are then served through to the routes.
func (c *cache) load(i int, value []byte) {
	ks := &c.kinds[i]
	hs := fnv.New64a()
	_, _ = hs.Write(value)
	v := hs.Sum64()
	if ks.raw != nil && v == ks.version {
		return
	}
	changed := ks.version != 0 && v != ks.version
	pages, ok := c.render(ks.k, value, v)
	if !ok {
		if ks.bad != v {
			ks.bad = v
			c.h.log.Warn("cache: entry unusable, served through", "key", ks.k.key, "bytes", len(value))
		}
		return
	}
	ks.raw, ks.pages, ks.version, ks.cat = value, pages, v, nil
	c.settle(i)
	if changed {
		c.h.log.Info("cache: entry changed", "key", ks.k.key, "bytes", len(value))
		c.listChanged(ks.k)
	}
}

// render checks an entry and makes its answers: the entry itself when it
// fits a page, else its items cut into pages of at most cfg.page bytes,
// each but the last with a cursor to the next.
func (c *cache) render(k *cacheKind, value []byte, version uint64) ([][]byte, bool) {
	if len(value) > maxEntry || !validate(value) {
		return nil, false
	}
	as, ae, ok := member(value, k.lk.key)
	if !ok || value[as] != '[' {
		return nil, false
	}
	if k.lk.kind == mcp.McpBeginExKindToolsList && c.cfg.tools != nil {
		value = c.cfg.tools.rewrite(value)
		as, ae, _ = member(value, k.lk.key)
	}
	if len(value) <= c.cfg.page {
		return [][]byte{value}, true
	}
	arr := value[as:ae]
	var pages [][]byte
	var page []byte
	open := func() {
		page = append(make([]byte, 0, c.cfg.page+128), `{"`...)
		page = append(page, k.lk.key...)
		page = append(page, `":[`...)
	}
	open()
	first := true
	for item, j, ok := jsonrpc.NextElement(arr, 0); ok; item, j, ok = jsonrpc.NextElement(arr, j) {
		if !first && len(page)+len(item)+1 > c.cfg.page {
			pages = append(pages, page)
			open()
			first = true
		}
		if !first {
			page = append(page, ',')
		}
		page = append(page, item...)
		first = false
	}
	pages = append(pages, page)
	for p := range pages {
		pages[p] = append(pages[p], ']')
		if p+1 < len(pages) {
			pages[p] = append(pages[p], `,"nextCursor":"`...)
			pages[p] = appendCacheCursor(pages[p], k.lk.kind, version, p+1)
			pages[p] = append(pages[p], '"')
		}
		pages[p] = append(pages[p], '}')
	}
	return pages, true
}

// cacheCursorVersion tells the proxy's cursors into a cached list from
// those of a fan-out (cursorVersion).
const cacheCursorVersion = 2

// appendCacheCursor appends the base64url text of a cursor to page p of
// the cached list of kind at version.
func appendCacheCursor(dst []byte, kind uint8, version uint64, p int) []byte {
	var raw [2 + 8 + binary.MaxVarintLen64]byte
	raw[0], raw[1] = cacheCursorVersion, kind
	binary.LittleEndian.PutUint64(raw[2:], version)
	n := binary.PutUvarint(raw[10:], uint64(p))
	return cursorEncoding.AppendEncode(dst, raw[:10+n])
}

// settle marks kind i settled, and opens the gate once all are.
func (c *cache) settle(i int) {
	c.kinds[i].settled = true
	if c.open {
		return
	}
	for j := range c.kinds {
		if !c.kinds[j].settled {
			return
		}
	}
	c.openGate()
}

func (c *cache) gateTimedOut() {
	c.timer = 0
	c.serveThrough("cache: list not settled in time, served through")
}

// storeUnavailable opens the gate at once when the store has lost its
// server: no entry can come until it returns, so the lifecycles waiting
// for one go on to the routes rather than wait out the gate.
func (c *cache) storeUnavailable() {
	c.serveThrough("cache: store unavailable, served through until it returns")
}

// serveThrough settles every kind not settled yet, logging why, and
// opens the gate: lists of those kinds go to the routes until their
// entry comes.
func (c *cache) serveThrough(why string) {
	if c.open {
		return
	}
	for i := range c.kinds {
		if !c.kinds[i].settled {
			c.h.log.Warn(why, "key", c.kinds[i].k.key)
			c.kinds[i].settled = true
		}
	}
	c.openGate()
}

// openGate lets the waiting lifecycles go on to their routes.
func (c *cache) openGate() {
	c.open = true
	c.h.w.Disarm(&c.timer)
	waiting := c.waiting
	c.waiting = nil
	for _, l := range waiting {
		l.start()
	}
	held := c.held
	c.held = nil
	for _, hr := range held {
		if r := hr.r; r.gen == hr.gen && r.state&released == 0 && !r.Out.Closed() {
			r.onParams()
			r.maybeRelease()
		}
	}
}

// gatedRequest is a request the gate holds: a call of a search tool, or
// one whose arguments options.tools checks, that came before the cached
// tools list settled (a stateless request: a session's come after its
// lifecycle, which the gate holds too).
type gatedRequest struct {
	r   *request
	gen uint32
}

// maxHeldRequests bounds the requests the gate holds; more are answered
// at once, from what the worker has.
const maxHeldRequests = 1024

// hold keeps r until the gate opens, when its params are read again;
// false when the gate is open or holds too many.
func (c *cache) hold(r *request) bool {
	if c.open || len(c.held) >= maxHeldRequests {
		return false
	}
	c.held = append(c.held, gatedRequest{r: r, gen: r.gen})
	return true
}

// listChanged sends kind's list_changed to every live downstream
// lifecycle that takes it: a session's, or a listen that asked for it.
func (c *cache) listChanged(k *cacheKind) {
	h := c.h
	for l := range c.live {
		if l.sidNull && l.subs&k.bit == 0 || !l.Out.Opening() || l.Out.Closed() {
			continue
		}
		b := h.exB.Flush.Wrap(h.extBuf, 0, len(h.extBuf)).TypeID(h.typeID)
		switch k.flush {
		case mcp.McpFlushExKindToolsListChanged:
			b.ToolsListChanged().IDNull()
		case mcp.McpFlushExKindPromptsListChanged:
			b.PromptsListChanged().IDNull()
		default:
			b.ResourcesListChanged().IDNull()
		}
		n, err := b.BuildLimit()
		if err != nil {
			continue
		}
		if l.Flush(h.extBuf[:n]) != nil {
			l.fail()
		}
	}
}

// cachedFlush reports whether a route's lifecycle FLUSH is a list_changed
// of a kind served from the cache: the cache tells the downstream itself,
// once the new list is stored. A kind without an entry just now (served
// through, say while Redis is lost) has its list_changed passed on as it
// comes.
func (c *cache) cachedFlush(ext []byte) (uint8, bool) {
	h := c.h
	if !h.flushEx.TryWrap(ext, 0, len(ext)) || h.flushEx.TypeID() != h.typeID {
		return 0, false
	}
	kind := h.flushEx.Kind()
	for i := range c.cfg.kinds {
		if c.cfg.kinds[i].flush == kind && c.kinds[i].raw != nil {
			return kind, true
		}
	}
	return 0, false
}

// serve answers a list request from the cached entry of its kind: the
// whole list or the page its cursor names. It reports false on a miss
// (no usable entry, or a cursor of a fan-out), for the request to go to
// the routes.
func (c *cache) serve(r *request) bool {
	i := c.cfg.kindIndex(r.kind)
	if i < 0 {
		return false
	}
	ks := &c.kinds[i]
	if ks.raw == nil {
		return false
	}
	page := 0
	if cs, ce, ok := member(r.params, "cursor"); ok && string(r.params[cs:ce]) != "null" && string(r.params[cs:ce]) != `""` {
		if r.params[cs] != '"' {
			r.respondError(jsonrpc.CodeInvalidParams, []byte("Invalid cursor"), nil, nil)
			return true
		}
		raw, err := cursorEncoding.AppendDecode(r.cbuf[:0], r.params[cs+1:ce-1])
		r.cbuf = raw
		switch {
		case err == nil && len(raw) >= 1 && raw[0] == cursorVersion:
			return false // a fan-out's cursor: the routes page on
		case err != nil || len(raw) < 11 || raw[0] != cacheCursorVersion || raw[1] != r.kind:
			r.respondError(jsonrpc.CodeInvalidParams, []byte("Invalid cursor"), nil, nil)
			return true
		case binary.LittleEndian.Uint64(raw[2:]) != ks.version:
			r.respondError(jsonrpc.CodeInvalidParams, []byte("Invalid cursor: the list has changed, list again without one"), nil, nil)
			return true
		}
		p, n := binary.Uvarint(raw[10:])
		if n <= 0 || p == 0 || p >= uint64(len(ks.pages)) {
			r.respondError(jsonrpc.CodeInvalidParams, []byte("Invalid cursor"), nil, nil)
			return true
		}
		page = int(p)
	}
	r.respondShared(ks.pages[page])
	return true
}

// noCatalog is the catalog while no tools entry is cached: the search
// tools find nothing, and no call's arguments are checked.
var noCatalog = &catalog{}

// catalog returns the cached tools list as the search tools and argument
// checks read it, reading it on the first call after it changed.
func (c *cache) catalog() *catalog {
	i := c.cfg.kindIndex(mcp.McpBeginExKindToolsList)
	if i < 0 || c.kinds[i].raw == nil {
		return noCatalog
	}
	ks := &c.kinds[i]
	if ks.cat == nil {
		ks.cat = readCatalog(ks.raw)
	}
	return ks.cat
}

// track keeps a downstream lifecycle whose reply opened, for list
// changes; untrack forgets it.
func (c *cache) track(l *lifecycle)   { c.live[l] = struct{}{} }
func (c *cache) untrack(l *lifecycle) { delete(c.live, l) }
