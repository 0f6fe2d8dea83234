package proxy

import (
	"bytes"
	"time"

	"github.com/sluicehq/sluice/binding"
	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/binding/mcp/jsonrpc"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/frame"
	"github.com/sluicehq/sluice/engine/store"
)

// hydrater fills the cache. The worker that holds lifecycle.lock (one
// across every worker and instance sharing the store) opens the hydrate
// session: a lifecycle the proxy opens to itself, so that the proxy's own
// lifecycle fan-out reaches every route, and list requests on it, so that
// the proxy's own list fan-out, merge, prefixes and cursors make what is
// stored. Each list call is issued under its kind's <kind>.lock. The
// others try lifecycle.lock again every retry while their lists have not
// settled, and then at a third of the lease, to take over from a holder
// that died once its lease has run out.
type hydrater struct {
	c      *cache
	sid    []byte
	holder bool
	token  string // lifecycle.lock's, while holder
	// takeover: an earlier holder's session was marked in the store, so
	// the entries may have missed its last list_changed and every kind is
	// listed at once rather than served until its ttl.
	takeover bool
	poll     int64 // the timer of the next try for lifecycle.lock
	renew    int64 // the timer of the next renewal of the leases
	lc       *hydrateStream
	open     bool // the hydrate session's reply has begun
	left     bool // a route left the session before its reply began
	reopen   int64
	kinds    []hydrateKind
	stopped  bool
}

// hydrateKind is the hydrate state of one kind on the holder.
type hydrateKind struct {
	decided bool   // the session decided whether it lists the kind at once
	busy    bool   // locking, listing or storing
	again   bool   // a list_changed came while busy: list once more
	token   string // <kind>.lock's, while busy
	timer   int64  // the next refresh
	due     time.Time
	fetch   *hydrateStream
	items   []byte // the items of the pages so far
	count   int    // of items
	// names are the names (decoded) of the items so far: an item a later
	// page names again is left out, as the merge leaves one out within a
	// page, so that the entry names each item once.
	names    nameSet
	shadowed int
	pages    int
	partial  bool // a page named routes that were left out of it
	// missing marks, by route, the routes a page left out.
	missing []bool
}

func (hy *hydrater) init(c *cache) {
	hy.c = c
	hy.sid = []byte("hydrate-" + c.h.name)
	hy.kinds = make([]hydrateKind, len(c.kinds))
	hy.tryLock()
}

// tryLock asks for lifecycle.lock.
func (hy *hydrater) tryLock() {
	c := hy.c
	hy.poll = 0
	c.store.Lock(c.cfg.lifecycle, c.cfg.lease, func(token string, ok bool) {
		if hy.stopped {
			if ok {
				c.store.Unlock(c.cfg.lifecycle, token, nil)
			}
			return
		}
		if !ok {
			if store.Unavailable(c.store) {
				c.storeUnavailable()
			}
			hy.schedulePoll()
			return
		}
		hy.holder, hy.token = true, token
		hy.armRenew()
		c.store.Get(c.cfg.hydrated, func(_ []byte, seen bool) {
			if !hy.holder || hy.token != token || hy.stopped {
				return
			}
			hy.takeover = seen
			c.store.Put(c.cfg.hydrated, []byte(token), 0, nil)
			c.h.log.Info("cache: hydrate lease taken", "lock", c.cfg.lifecycle, "session", string(hy.sid), "takeover", seen)
			hy.openSession()
		})
	})
}

// schedulePoll tries for lifecycle.lock again: soon while this worker's
// lists have not settled, at a third of the lease (at most a second)
// once they have.
func (hy *hydrater) schedulePoll() {
	c := hy.c
	d := c.cfg.retry
	if c.open {
		d = min(c.cfg.lease/3, time.Second)
	}
	w := c.h.w
	hy.poll = w.TimerAt(w.Now().Add(d), hy.tryLock)
}

func (hy *hydrater) armRenew() {
	w := hy.c.h.w
	hy.renew = w.TimerAt(w.Now().Add(hy.c.cfg.lease/3), hy.renewLeases)
}

// renewLeases renews lifecycle.lock and the lock of every kind being
// listed; losing lifecycle.lock ends this worker's hydrate session.
func (hy *hydrater) renewLeases() {
	c := hy.c
	hy.renew = 0
	if !hy.holder {
		return
	}
	c.store.Renew(c.cfg.lifecycle, hy.token, c.cfg.lease, func(ok bool) {
		if !ok && hy.holder && !hy.stopped {
			c.h.log.Warn("cache: hydrate lease lost", "lock", c.cfg.lifecycle)
			hy.lose()
		}
	})
	for i := range hy.kinds {
		if k := &hy.kinds[i]; k.token != "" {
			c.store.Renew(c.cfg.kinds[i].lock, k.token, c.cfg.lease, nil)
		}
	}
	hy.armRenew()
}

// lose gives the hydrate session up: its refreshes and lists stop, and
// the worker polls for lifecycle.lock again.
func (hy *hydrater) lose() {
	w := hy.c.h.w
	hy.holder, hy.token = false, ""
	w.Disarm(&hy.renew)
	w.Disarm(&hy.reopen)
	for i := range hy.kinds {
		hy.cancelKind(i)
	}
	hy.closeSession()
	if !hy.stopped {
		hy.schedulePoll()
	}
}

// cancelKind stops kind i's refresh and list, releasing its lock.
func (hy *hydrater) cancelKind(i int) {
	c := hy.c
	k := &hy.kinds[i]
	c.h.w.Disarm(&k.timer)
	if k.fetch != nil {
		k.fetch.cancel()
		k.fetch = nil
	}
	if k.token != "" {
		c.store.Unlock(c.cfg.kinds[i].lock, k.token, nil)
	}
	*k = hydrateKind{items: k.items[:0]}
}

// stop ends everything at detach, releasing the leases so that another
// worker or instance takes over at once.
func (hy *hydrater) stop() {
	hy.stopped = true
	w := hy.c.h.w
	w.Disarm(&hy.poll)
	if hy.holder {
		token := hy.token
		hy.lose()
		hy.c.store.Unlock(hy.c.cfg.lifecycle, token, nil)
	}
}

// openSession opens the hydrate lifecycle: to the proxy itself, with the
// session id of this worker's hydrater, the list_changed subscriptions of
// the cached kinds, and of the client capabilities only MCP Apps views
// (hydrateCaps); its frames carry the guard's session.
func (hy *hydrater) openSession() {
	c := hy.c
	h := c.h
	var subs uint16
	for i := range c.cfg.kinds {
		subs |= c.cfg.kinds[i].bit
	}
	s := &hydrateStream{hy: hy, kind: -1}
	s.Connect(h.w, h.id, h.id, h.w.SupplyInitialID(h.id), s.onFrame)
	s.Out.Trace, s.Out.Auth = h.w.SupplyTraceID(), c.auth
	s.In.Trace, s.In.Auth = s.Out.Trace, c.auth
	b := h.exB.Begin.Wrap(h.extBuf, 0, len(h.extBuf)).TypeID(h.typeID)
	b.Lifecycle().SessionIDBytes(hy.sid).Capabilities(hydrateCaps).AuthCallbackNull().Subscriptions(subs)
	n, err := b.BuildLimit()
	if err != nil || s.Begin(h.extBuf[:n]) != nil {
		hy.sessionFailed()
		return
	}
	hy.lc = s
	h.log.Info("cache: hydrate session opening", "session", string(hy.sid))
}

// hydrateCaps are the client capabilities the hydrate session declares.
// What a client declares changes what a server lists, and the cache serves
// the list to every client: it declares MCP Apps views, which an ext-apps
// server lists only to a client that renders them (a client that does not
// still reads the tool's content), and no capability that has the server
// ask the client, which the hydrate session cannot answer.
const hydrateCaps = uint16(mcp.McpCapabilitiesClientExtensionUi)

// closeSession ends the hydrate lifecycle.
func (hy *hydrater) closeSession() {
	hy.open = false
	if s := hy.lc; s != nil {
		hy.lc = nil
		s.cancel()
	}
}

// sessionOpened runs when the hydrate lifecycle's reply begins: each kind
// whose first Get has answered is decided.
func (hy *hydrater) sessionOpened() {
	hy.open = true
	hy.c.h.log.Info("cache: hydrate session open", "session", string(hy.sid))
	for i := range hy.kinds {
		hy.loaded(i)
	}
	if hy.left {
		hy.routeLeft()
	}
}

// sessionFailed runs when the hydrate lifecycle is refused or ends: the
// holder opens another after failRetry.
func (hy *hydrater) sessionFailed() {
	c := hy.c
	hy.c.h.log.Warn("cache: hydrate session refused or ended", "session", string(hy.sid))
	hy.lc = nil
	hy.open = false
	for i := range hy.kinds {
		hy.cancelKind(i)
		if !c.kinds[i].settled {
			c.settle(i) // failed: the gate need not wait for it
		}
	}
	if hy.holder && !hy.stopped && hy.reopen == 0 {
		w := c.h.w
		hy.reopen = w.TimerAt(w.Now().Add(c.cfg.failRetry), func() {
			hy.reopen = 0
			if hy.holder && hy.lc == nil {
				hy.openSession()
			}
		})
	}
}

// loaded decides kind i once the session is open and the kind's first Get
// has answered: a kind with an entry refreshes after its ttl; one without,
// or any kind when this session takes over from an earlier holder's, is
// listed at once.
func (hy *hydrater) loaded(i int) {
	c := hy.c
	k := &hy.kinds[i]
	if !hy.open || !c.kinds[i].loaded || k.decided {
		return
	}
	k.decided = true
	if c.kinds[i].raw != nil && !hy.takeover {
		c.h.log.Info("cache: hit at hydrate", "key", c.cfg.kinds[i].key)
		hy.armRefresh(i, c.cfg.kinds[i].ttl, false)
		return
	}
	hy.refresh(i)
}

// armRefresh lists kind i again after d; 0 is never. The kinds that
// follow it (resource templates after resources) are listed with it, in
// order, so that a refresh goes out as the hydrate did; one of them arms
// a timer of its own only to retry after a failure.
func (hy *hydrater) armRefresh(i int, d time.Duration, failed bool) {
	k := &hy.kinds[i]
	w := hy.c.h.w
	w.Disarm(&k.timer)
	if d <= 0 || hy.c.cfg.kinds[i].follows && !failed {
		return
	}
	k.due = w.Now().Add(d)
	k.timer = w.TimerAt(k.due, func() {
		k.timer = 0
		hy.refresh(i)
		for j := i + 1; j < len(hy.kinds) && hy.c.cfg.kinds[j].follows; j++ {
			hy.refresh(j)
		}
	})
}

// listChanged lists the kinds a route's list_changed names at once.
func (hy *hydrater) listChanged(flush uint8) {
	c := hy.c
	for i := range c.cfg.kinds {
		if c.cfg.kinds[i].flush == flush && hy.kinds[i].decided {
			c.h.log.Info("cache: list_changed, refreshing", "key", c.cfg.kinds[i].key)
			hy.refresh(i)
		}
	}
}

// refresh lists kind i under its lock, unless it is being listed already.
// routeLeft lists every kind again within failRetry when a route left
// the hydrate session (it aborted or refused its lifecycle): the list
// opens the route's part of the session again, so that its list_changed
// reaches the cache again, rather than at the next ttl, or never without
// one. A kind listed or due sooner is left as it is.
func (hy *hydrater) routeLeft() {
	c := hy.c
	w := c.h.w
	// Before the session's reply has come, the kinds' timers are not
	// armed yet: opening arms them, then this again.
	hy.left = !hy.open
	if hy.left {
		return
	}
	for i := range hy.kinds {
		k := &hy.kinds[i]
		if k.busy || c.cfg.kinds[i].follows || k.timer != 0 && !k.due.After(w.Now().Add(c.cfg.failRetry)) {
			continue
		}
		hy.armRefresh(i, c.cfg.failRetry, true)
	}
}

func (hy *hydrater) refresh(i int) {
	c := hy.c
	k := &hy.kinds[i]
	if !hy.holder || !hy.open {
		return
	}
	if k.busy {
		k.again = true
		return
	}
	k.busy = true
	c.h.w.Disarm(&k.timer)
	kc := &c.cfg.kinds[i]
	c.store.Lock(kc.lock, c.cfg.lease, func(token string, ok bool) {
		if !hy.holder || !hy.open || !k.busy {
			if ok {
				c.store.Unlock(kc.lock, token, nil)
			}
			return
		}
		if !ok {
			// Another holder lists it (a lease changing hands), or the
			// store failed: this worker tries again soon, so that a
			// list_changed is not left waiting for the ttl.
			k.busy = false
			c.h.log.Info("cache: list lease not taken", "lock", kc.lock)
			d := c.cfg.failRetry
			if c.kinds[i].raw == nil {
				d = c.cfg.retry
			}
			hy.armRefresh(i, d, true)
			return
		}
		k.token = token
		k.items, k.count, k.pages, k.partial, k.shadowed = k.items[:0], 0, 0, false, 0
		clear(k.names)
		clear(k.missing)
		c.h.log.Info("cache: listing", "key", kc.key)
		hy.fetchPage(i, nil)
	})
}

// fetchPage opens a list request of kind i to the proxy itself, with
// cursor when it follows a page.
func (hy *hydrater) fetchPage(i int, cursor []byte) {
	c := hy.c
	h := c.h
	k := &hy.kinds[i]
	s := &hydrateStream{hy: hy, kind: i}
	s.params = append(s.params, '{')
	if cursor != nil {
		s.params = append(s.params, `"cursor":"`...)
		s.params = append(s.params, cursor...)
		s.params = append(s.params, '"')
	}
	s.params = append(s.params, '}')
	k.fetch = s
	k.pages++
	s.Connect(h.w, h.id, h.id, h.w.SupplyInitialID(h.id), s.onFrame)
	s.Out.Trace, s.Out.Auth = h.w.SupplyTraceID(), c.auth
	s.In.Trace, s.In.Auth = s.Out.Trace, c.auth
	ext := h.requestBeginEx(c.cfg.kinds[i].lk.kind, hy.sid, false, nil, true, int32(len(s.params)), 0)
	if ext == nil || s.Begin(ext) != nil {
		k.fetch = nil
		hy.listed(i, false, "the list request was refused")
	}
}

// page takes one page of kind i's list: its items are added to the rest,
// and its nextCursor, if any, is followed.
func (hy *hydrater) page(i int, body []byte) {
	c := hy.c
	k := &hy.kinds[i]
	lk := c.cfg.kinds[i].lk
	k.fetch = nil
	as, ae, ok := member(body, lk.key)
	if !validate(body) || !ok || body[as] != '[' {
		hy.listed(i, false, "the list result has no "+lk.key)
		return
	}
	if ms, me, ok := member(body, "_meta"); ok {
		if ls, le, missing := member(body[ms:me], metaMissing); missing {
			k.partial = true
			hy.noteMissing(k, body[ms:me][ls:le])
		}
	}
	k.add(lk, body[as:ae])
	if len(k.items) > maxEntry {
		hy.listed(i, false, "the list is too large")
		return
	}
	if cs, ce, ok := member(body, "nextCursor"); ok && body[cs] == '"' && ce-cs > 2 {
		if k.pages >= maxHydratePages {
			hy.listed(i, false, "too many pages")
			return
		}
		hy.fetchPage(i, append([]byte(nil), body[cs+1:ce-1]...))
		return
	}
	hy.listed(i, true, "")
}

// add adds the items of arr, a page's list, leaving out those whose name
// an item before has (counted in shadowed).
func (k *hydrateKind) add(lk *listKind, arr []byte) {
	if k.names == nil {
		k.names = nameSet{}
	}
	for item, j, ok := jsonrpc.NextElement(arr, 0); ok; item, j, ok = jsonrpc.NextElement(arr, j) {
		if ns, ne, ok := member(item, lk.nameKey); ok && item[ns] == '"' {
			if name, err := jsonrpc.Unquote(nil, item[ns:ne]); err == nil && !k.names.add(string(name)) {
				k.shadowed++
				continue
			}
		}
		if k.count > 0 {
			k.items = append(k.items, ',')
		}
		k.items = append(k.items, item...)
		k.count++
	}
}

// listed finishes a list of kind i: a complete list that differs from
// the entry is stored (and taken at once; the other workers learn of it
// through their Watch); a failed one keeps the entry there is.
func (hy *hydrater) listed(i int, ok bool, why string) {
	c := hy.c
	k := &hy.kinds[i]
	kc := &c.cfg.kinds[i]
	if !ok {
		c.h.log.Warn("cache: list failed, the entry is kept", "key", kc.key, "reason", why)
		hy.finish(i, false)
		return
	}
	var value []byte
	switch {
	case k.partial && c.kinds[i].raw != nil && !c.h.s.prefixed:
		c.h.log.Warn("cache: list left routes out, the entry is kept", "key", kc.key)
		hy.finish(i, false)
		return
	case k.partial && c.kinds[i].raw != nil:
		c.h.log.Warn("cache: list left routes out, their part of the entry is kept", "key", kc.key)
		value = hy.keepStale(i)
	default:
		value = make([]byte, 0, len(k.items)+len(kc.lk.key)+8)
		value = append(value, `{"`...)
		value = append(value, kc.lk.key...)
		value = append(value, `":[`...)
		value = append(value, k.items...)
		value = append(value, `]}`...)
	}
	if k.shadowed > 0 {
		c.h.log.Warn("cache: list items left out: an earlier page has their name", "key", kc.key, "items", k.shadowed)
	}
	if bytes.Equal(value, c.kinds[i].raw) {
		c.h.log.Info("cache: list unchanged", "key", kc.key)
		hy.finish(i, true)
		return
	}
	c.store.Put(kc.key, value, 0, func(err error) {
		if !k.busy {
			return
		}
		if err != nil {
			c.h.log.Warn("cache: store refused the list, the entry is kept", "key", kc.key, "error", err)
			hy.finish(i, false)
			return
		}
		c.h.log.Info("cache: list stored", "key", kc.key, "bytes", len(value))
		c.load(i, value)
		hy.finish(i, true)
	})
}

// noteMissing marks the routes a page's missingRoutes names, by label.
func (hy *hydrater) noteMissing(k *hydrateKind, list []byte) {
	routes := hy.c.h.s.routes
	if k.missing == nil {
		k.missing = make([]bool, len(routes))
	}
	for v, j, ok := jsonrpc.NextElement(list, 0); ok; v, j, ok = jsonrpc.NextElement(list, j) {
		rs, re, ok := member(v, "route")
		if !ok || v[rs] != '"' {
			continue
		}
		label, err := jsonrpc.Unquote(nil, v[rs:re])
		if err != nil {
			continue
		}
		for r := range routes {
			if routes[r].label() == string(label) {
				k.missing[r] = true
			}
		}
	}
}

// keepStale makes kind i's entry from a list that left routes out, as
// Zilla keeps a stale toolkit: route by route in route order, the items
// of the routes that answered, and for those left out, the items the
// entry had. Items are told apart by their route's prefix.
func (hy *hydrater) keepStale(i int) []byte {
	c := hy.c
	k := &hy.kinds[i]
	lk := c.cfg.kinds[i].lk
	fresh := make([]byte, 0, len(k.items)+2)
	fresh = append(append(append(fresh, '['), k.items...), ']')
	var stale []byte
	if as, ae, ok := member(c.kinds[i].raw, lk.key); ok && c.kinds[i].raw[as] == '[' {
		stale = c.kinds[i].raw[as:ae]
	}
	// Each list is read once, its items sorted into their routes: the
	// fresh ones of the routes that answered, the stale ones of the rest.
	byRoute := make([][][]byte, len(c.h.s.routes))
	sort := func(src []byte, stale bool) {
		for item, j, ok := jsonrpc.NextElement(src, 0); ok; item, j, ok = jsonrpc.NextElement(src, j) {
			r := c.h.routeOfItem(lk, item)
			if r >= 0 && (r < len(k.missing) && k.missing[r]) == stale {
				byRoute[r] = append(byRoute[r], item)
			}
		}
	}
	sort(fresh, false)
	sort(stale, true)
	value := make([]byte, 0, len(fresh)+len(stale)+len(lk.key)+8)
	value = append(value, `{"`...)
	value = append(value, lk.key...)
	value = append(value, `":[`...)
	first := true
	for _, items := range byRoute {
		for _, item := range items {
			if !first {
				value = append(value, ',')
			}
			first = false
			value = append(value, item...)
		}
	}
	return append(value, `]}`...)
}

// routeOfItem returns the route whose prefix (the longest that fits)
// begins a merged list item's name or uri, -1 when none does.
func (h *Handler) routeOfItem(lk *listKind, item []byte) int {
	ns, ne, ok := member(item, lk.nameKey)
	if !ok || item[ns] != '"' {
		return -1
	}
	name, err := jsonrpc.Unquote(nil, item[ns:ne])
	if err != nil {
		return -1
	}
	best, n := -1, 0
	for r := range h.s.routes {
		if _, m, ok := h.s.routes[r].carries(lk.uri, name); ok && (best < 0 || m > n) {
			best, n = r, m
		}
	}
	return best
}

// finish releases kind i's lock, settles it, and arms its next refresh:
// at once after a list_changed that came meanwhile, after its ttl, or
// after failRetry when it has none and the list failed, or sooner than
// the ttl when the list left routes out (a partial list is stored only
// when there was no entry, and replaced as soon as the routes answer).
func (hy *hydrater) finish(i int, ok bool) {
	c := hy.c
	k := &hy.kinds[i]
	kc := &c.cfg.kinds[i]
	if k.token != "" {
		c.store.Unlock(kc.lock, k.token, nil)
		k.token = ""
	}
	k.busy = false
	if !c.kinds[i].settled {
		c.settle(i)
	}
	if k.again {
		k.again = false
		hy.refresh(i)
		return
	}
	d := kc.ttl
	if d == 0 && !ok || k.partial && (d == 0 || d > c.cfg.failRetry) {
		d = c.cfg.failRetry
	}
	hy.armRefresh(i, d, !ok || k.partial)
}

// hydrateStream is a stream of the hydrate session to the proxy itself:
// the lifecycle (kind -1) or one page of a list (kind its index).
type hydrateStream struct {
	engine.Stream
	hy     *hydrater
	kind   int
	params []byte
	sent   int
	body   []byte
	done   bool
}

// cancel ends the stream both ways, quietly.
func (s *hydrateStream) cancel() {
	s.done = true
	s.AbortElseReset()
	s.ResetElseAbort()
}

func (s *hydrateStream) onFrame(t frame.FrameType, buf []byte) {
	if s.done {
		return
	}
	hy := s.hy
	h := hy.c.h
	switch t {
	case frame.FrameWindow:
		if _, err := s.OnWindow(buf); err == nil && s.kind >= 0 && s.sent < len(s.params) {
			n, err := binding.SendFragments(&s.Stream, s.params[s.sent:], s.sent == 0, true, h.maxPayload)
			s.sent += n
			if err != nil {
				s.fail("the list request was refused")
			} else if s.sent == len(s.params) && s.End(nil) != nil {
				s.fail("the list request was refused")
			}
		}
	case frame.FrameBegin:
		if _, err := s.OnBegin(buf); err != nil {
			return
		}
		if s.In.Grant(legWindow) && s.Window() != nil {
			s.fail("the reply's window was refused")
			return
		}
		if s.kind < 0 {
			hy.sessionOpened()
		}
	case frame.FrameData:
		d, err := s.OnData(buf)
		if err != nil {
			if binding.Violation(err) {
				s.fail("the reply broke flow control")
			}
			return
		}
		if s.kind >= 0 {
			if len(s.body)+len(d.Payload()) > maxEntry {
				s.fail("the list is too large")
				return
			}
			s.body = append(s.body, d.Payload()...)
		}
		if s.In.Grant(legWindow) && s.Window() != nil {
			s.fail("the reply's window was refused")
		}
	case frame.FrameFlush:
		if f, err := s.OnFlush(buf); err == nil && s.kind < 0 {
			ext := f.Extension()
			if h.flushEx.TryWrap(ext, 0, len(ext)) && h.flushEx.TypeID() == h.typeID {
				switch kind := h.flushEx.Kind(); kind {
				case mcp.McpFlushExKindToolsListChanged, mcp.McpFlushExKindPromptsListChanged, mcp.McpFlushExKindResourcesListChanged:
					hy.listChanged(kind)
				case mcp.McpFlushExKindClientRequest:
					hy.answerClientRequest(h.flushEx.ClientRequest(), f.TraceID(), f.Authorization())
				}
			}
		}
	case frame.FrameEnd:
		e, err := s.OnEnd(buf)
		if err != nil {
			s.fail("the reply ended malformed")
			return
		}
		if s.kind < 0 {
			s.fail("the session ended")
			return
		}
		ext := e.Extension()
		if h.endEx.TryWrap(ext, 0, len(ext)) && h.endEx.TypeID() == h.typeID && h.endEx.Outcome() == mcp.McpOutcomeError {
			s.fail("the list failed: " + string(s.body))
			return
		}
		s.done = true
		s.AbortElseReset() // the request side, if still open
		hy.page(s.kind, s.body)
	case frame.FrameAbort:
		_, _ = s.OnAbort(buf)
		s.fail("the reply was aborted")
	case frame.FrameReset:
		_, _ = s.OnReset(buf)
		s.fail("the request was reset")
	}
}

// answerClientRequest answers a route's request to the hydrate session's
// client, which is the proxy itself and declares no capability a server
// asks its client under (hydrateCaps): a ping
// with an empty result (an upstream that pings to keep its session, as
// go-sdk's KeepAlive does, would otherwise close it), anything else with
// -32601, as the server kind answers for a client without the capability.
// The answer goes to the proxy as a downstream's would, and on to the
// route its id names.
func (hy *hydrater) answerClientRequest(v mcp.McpClientRequestFlushEx, trace, auth int64) {
	h := hy.c.h
	if !v.HasID() || v.Start() > 0 {
		return
	}
	h.answers.Unasked(h.id, hy.sid, v.ID(), v.Method(), trace, auth)
}

// fail ends the stream and reports it: the session to sessionFailed, a
// page to listed.
func (s *hydrateStream) fail(why string) {
	if s.done {
		return
	}
	s.cancel()
	hy := s.hy
	if s.kind < 0 {
		if hy.lc == s {
			hy.sessionFailed()
		}
		return
	}
	if k := &hy.kinds[s.kind]; k.fetch == s {
		k.fetch = nil
		hy.listed(s.kind, false, why)
	}
}
