package proxy_test

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/binding/mcp/proxy"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/frame"
	"github.com/sluicehq/sluice/engine/store"
	_ "github.com/sluicehq/sluice/engine/store/redisstore"
	"github.com/sluicehq/sluice/internal/enginetest"
	"github.com/sluicehq/sluice/internal/redistest"
)

// listApp plays the proxy's one route: it answers a lifecycle with a
// reply BEGIN, and every other request, once its params ended, with
// result. It notes the kind and session of every stream it is offered.
// silent answers nothing, quiet no lifecycle. It runs on the worker's
// thread.
type listApp struct {
	w      *engine.Worker
	result []byte
	silent bool
	quiet  bool
	// drop is how many lifecycles it aborts right after opening them.
	drop int
	seen []string // "<kind>:<session>"
}

func (a *listApp) Attach(w *engine.Worker, _ *engine.BindingConfig) (engine.Handler, error) {
	a.w = w
	return a, nil
}

func (a *listApp) NewStream(_ frame.FrameType, buf []byte) engine.MessageConsumer {
	var b frame.Begin
	if !b.TryWrap(buf, 0, len(buf)) {
		return nil
	}
	var ex mcp.McpBeginEx
	ext := b.Extension()
	kind := "?"
	if ex.TryWrap(ext, 0, len(ext)) {
		var rb mcp.RequestBegin
		switch {
		case ex.Kind() == mcp.McpBeginExKindLifecycle:
			v := ex.Lifecycle()
			kind = "lifecycle:" + string(v.SessionID())
		case rb.Read(&ex):
			kind = mcp.KindMethod(ex.Kind()).Name + ":" + string(rb.SessionID)
		}
	}
	a.seen = append(a.seen, kind)
	s := &listStream{a: a, lifecycle: strings.HasPrefix(kind, "lifecycle:")}
	s.Accept(a.w, b.OriginID(), b.RoutedID(), b.StreamID())
	return s.handle
}

type listStream struct {
	engine.Stream
	a         *listApp
	lifecycle bool
	ended     bool
	answered  bool
}

func (s *listStream) handle(t frame.FrameType, buf []byte) {
	switch t {
	case frame.FrameBegin:
		if _, err := s.OnBegin(buf); err != nil || s.a.silent || s.lifecycle && s.a.quiet {
			return
		}
		_ = s.Begin(nil)
		s.In.Grant(8192)
		_ = s.Window()
		if s.lifecycle && s.a.drop > 0 {
			s.a.drop--
			_ = s.Abort(nil)
			_ = s.Reset(nil)
		}
	case frame.FrameData:
		_, _ = s.OnData(buf)
	case frame.FrameEnd:
		_, _ = s.OnEnd(buf)
		s.ended = true
		s.answer()
	case frame.FrameWindow:
		if _, err := s.OnWindow(buf); err == nil {
			s.answer()
		}
	case frame.FrameAbort:
		_, _ = s.OnAbort(buf)
	case frame.FrameReset:
		_, _ = s.OnReset(buf)
	}
}

func (s *listStream) answer() {
	if s.lifecycle || s.answered || !s.ended || !s.Out.CanSend(len(s.a.result)) {
		return
	}
	s.answered = true
	_ = s.Data(frame.FlagsDataMessage, s.a.result, nil)
	_ = s.End(nil)
}

// cacheRig is an engine with mcp1, a caching proxy in front of app, on
// one worker and a clock the test moves.
type cacheRig struct {
	e      *engine.Engine
	w      *engine.Worker
	app    *listApp
	clock  *enginetest.Clock
	typeID int32
	driver int64
	proxy  int64
	timer  *enginetest.Timer
}

func newCacheRig(t testing.TB, entries string, app *listApp, opts ...engine.Option) *cacheRig {
	t.Helper()
	return newCacheRigOn(t, "    type: test\n"+entries, app, opts...)
}

// newCacheRigOn is newCacheRig with store0's configuration.
func newCacheRigOn(t testing.TB, store string, app *listApp, opts ...engine.Option) *cacheRig {
	t.Helper()
	return newCacheRigRoutes(t, store, []*listApp{app}, opts...)
}

// newCacheRigRoutes is newCacheRigOn with a route per app: the first is
// exit app, the others app1, app2, …, each its own toolkit.
func newCacheRigRoutes(t testing.TB, store string, apps []*listApp, opts ...engine.Option) *cacheRig {
	t.Helper()
	return newCacheRigWith(t, store, "", apps, opts...)
}

// newCacheRigWith is newCacheRigRoutes with more of options.cache (YAML
// at its indentation).
func newCacheRigWith(t testing.TB, store, cache string, apps []*listApp, opts ...engine.Option) *cacheRig {
	t.Helper()
	src := `name: test
stores:
  store0:
` + store + `
bindings:
  mcp1:
    type: mcp
    kind: proxy
    options:
      cache:
        store: store0
        ttl:
          tools: PT1H
` + cache + `    routes:
`
	exits := []string{"driver"}
	for i := range apps {
		exit := "app"
		if i > 0 {
			exit += strconv.Itoa(i)
		}
		exits = append(exits, exit)
		src += "      - exit: " + exit + "\n"
		if len(apps) > 1 {
			src += "        when:\n          - toolkit: " + exit + "\n"
		}
	}
	cfg, err := enginetest.Load("cache.yaml", src, exits...)
	require.NoError(t, err)
	labels := engine.NewLabels()
	clock := enginetest.NewClock()
	eo := []engine.Option{engine.WithWorkers(1), engine.WithLabels(labels), engine.WithClock(clock.Now),
		engine.WithExternal("driver", enginetest.Refuse{})}
	for i, app := range apps {
		eo = append(eo, engine.WithExternal(exits[i+1], app))
	}
	e := enginetest.Run(t, enginetest.New(t, cfg, append(eo, opts...)...))
	r := &cacheRig{e: e, w: e.Worker(0), app: apps[0], clock: clock, typeID: labels.Supply("mcp"), timer: enginetest.NewTimer()}
	r.driver, _ = e.ResolveID("driver")
	r.proxy, _ = e.ResolveID("mcp1")
	return r
}

// listCaller returns a Caller that sends the proxy tools/lists of session
// s1 with params, granting window to each reply.
func (r *cacheRig) listCaller(tb testing.TB, params string, window int32) *enginetest.Caller {
	tb.Helper()
	var exB mcp.McpBeginExBuilder
	ext := make([]byte, 256)
	n, err := exB.Wrap(ext, 0, len(ext)).TypeID(r.typeID).ToolsList().SessionID("s1").BuildLimit()
	require.NoError(tb, err)
	return enginetest.NewCaller(r.w, r.driver, r.proxy, ext[:n], []byte(params), window)
}

// list sends a tools/list with params and returns the reply and whether
// its END said ERROR.
func (r *cacheRig) list(t testing.TB, params string) (string, bool) {
	t.Helper()
	c := r.listCaller(t, params, 1<<20)
	require.True(t, c.Call(t, r.timer, 1), "the tools/list failed")
	var endEx mcp.McpEndEx
	failed := endEx.TryWrap(c.EndEx(), 0, len(c.EndEx())) && endEx.Outcome() == mcp.McpOutcomeError
	return string(c.Reply()), failed
}

// seen returns the streams app was offered.
func (r *cacheRig) seen(t testing.TB) []string {
	t.Helper()
	var seen []string
	enginetest.Settle(t, r.e)
	require.NoError(t, r.e.Execute(0, func(*engine.Worker) { seen = append(seen, r.app.seen...) }))
	return seen
}

// waitEntry returns once key is in store0, passing the workers' loops
// between looks.
func (r *cacheRig) waitEntry(t testing.TB, key string) {
	t.Helper()
	st, ok := r.w.Store("store0")
	require.True(t, ok)
	for range 1000 {
		enginetest.Settle(t, r.e)
		got := make(chan bool, 1)
		require.NoError(t, r.e.Execute(0, func(*engine.Worker) {
			st.Get(key, func(_ []byte, ok bool) { got <- ok })
		}))
		if enginetest.ReceiveBy(t, r.timer, got, "the get") {
			return
		}
	}
	t.Fatalf("%s was never stored", key)
}

func seeded(tools string) string {
	q, _ := json.Marshal(tools)
	return "    options:\n      entries:\n        mcp1.tools: " + string(q)
}

// TestCacheServesSeededList: a tools/list is answered with the stored
// entry, and no tools/list reaches the route.
func TestCacheServesSeededList(t *testing.T) {
	app := &listApp{result: []byte(`{"tools":[{"name":"live"}]}`)}
	r := newCacheRig(t, seeded(`{"tools":[{"name":"cached"}]}`), app)
	reply, failed := r.list(t, `{}`)
	assert.False(t, failed)
	assert.Equal(t, `{"tools":[{"name":"cached"}]}`, reply)
	assert.Equal(t, []string{"lifecycle:hydrate-mcp1"}, r.seen(t))
}

// TestCacheEntryGone: when the store drops an entry (deleted, expired, or
// out of sight, as a Redis store reports a lost Redis), lists go to the
// route instead of serving the copy; when an entry comes again it is
// served again.
func TestCacheEntryGone(t *testing.T) {
	app := &listApp{result: []byte(`{"tools":[{"name":"live"}]}`), quiet: true}
	r := newCacheRig(t, seeded(`{"tools":[{"name":"cached"}]}`), app)
	reply, _ := r.list(t, `{}`)
	require.Equal(t, `{"tools":[{"name":"cached"}]}`, reply)

	st, ok := r.w.Store("store0")
	require.True(t, ok)
	store := func(op func(done func())) {
		done := make(chan bool, 1)
		require.NoError(t, r.e.Execute(0, func(*engine.Worker) { op(func() { done <- true }) }))
		enginetest.ReceiveBy(t, r.timer, done, "the store")
		enginetest.Settle(t, r.e)
	}
	store(func(done func()) { st.Delete("mcp1.tools", func(error) { done() }) })
	reply, _ = r.list(t, `{}`)
	assert.Equal(t, `{"tools":[{"name":"live"}]}`, reply, "a gone entry is not served")
	assert.Contains(t, r.seen(t), "tools/list:s1")

	store(func(done func()) {
		st.Put("mcp1.tools", []byte(`{"tools":[{"name":"again"}]}`), 0, func(error) { done() })
	})
	reply, _ = r.list(t, `{}`)
	assert.Equal(t, `{"tools":[{"name":"again"}]}`, reply, "a new entry is served")
}

// TestCacheEntryTooLarge: an entry over the size limit is not taken: the
// copy there is stays served, and a kind with none goes to the route.
func TestCacheEntryTooLarge(t *testing.T) {
	app := &listApp{result: []byte(`{"tools":[{"name":"live"}]}`), quiet: true}
	r := newCacheRig(t, seeded(`{"tools":[{"name":"cached"}]}`), app)
	huge := append([]byte(`{"tools":[{"name":"`), bytes.Repeat([]byte("x"), 16<<20)...) // past the 16 MiB limit
	huge = append(huge, `"}]}`...)
	st, ok := r.w.Store("store0")
	require.True(t, ok)
	done := make(chan bool, 1)
	require.NoError(t, r.e.Execute(0, func(*engine.Worker) {
		st.Put("mcp1.tools", huge, 0, func(error) { done <- true })
	}))
	enginetest.ReceiveBy(t, r.timer, done, "the put")
	enginetest.Settle(t, r.e)
	reply, _ := r.list(t, `{}`)
	assert.Equal(t, `{"tools":[{"name":"cached"}]}`, reply, "an entry over the limit does not replace the copy")
	assert.NotContains(t, r.seen(t), "tools/list:s1")
}

// TestCacheCorruptEntry: an entry without the kind's array is not
// served: the list goes to the route, and its answer is the reply. The
// route leaves the hydrate session unanswered, so that the hydrate does
// not replace the entry first.
func TestCacheCorruptEntry(t *testing.T) {
	for name, entry := range map[string]string{
		"not an array": `{"tools":"nope"}`,
		"not json":     `{"tools":[`,
		"no tools":     `{"prompts":[]}`,
	} {
		t.Run(name, func(t *testing.T) {
			app := &listApp{result: []byte(`{"tools":[{"name":"live"}]}`), quiet: true}
			r := newCacheRig(t, seeded(entry), app)
			reply, failed := r.list(t, `{}`)
			assert.False(t, failed)
			assert.Equal(t, `{"tools":[{"name":"live"}]}`, reply)
			assert.Contains(t, r.seen(t), "tools/list:s1")
		})
	}
}

// TestCachePages: a list larger than a page is served in pages with the
// proxy's cursors, which together hold every item in order; a cursor of
// another list version, or not the proxy's, gets -32602.
func TestCachePages(t *testing.T) {
	defer proxy.SetCachePage(64)()
	var items []string
	for i := range 20 {
		items = append(items, `{"name":"tool_`+string(rune('a'+i))+`"}`)
	}
	entry := `{"tools":[` + strings.Join(items, ",") + `]}`
	app := &listApp{result: []byte(`{"tools":[]}`)}
	r := newCacheRig(t, seeded(entry), app)

	var got []string
	params := `{}`
	var first string
	for pages := 0; ; pages++ {
		require.Less(t, pages, 20, "too many pages")
		reply, failed := r.list(t, params)
		require.False(t, failed, reply)
		require.LessOrEqual(t, len(reply), 64+80, "a page outgrew the page size")
		var page struct {
			Tools      []json.RawMessage `json:"tools"`
			NextCursor string            `json:"nextCursor"`
		}
		require.NoError(t, json.Unmarshal([]byte(reply), &page), reply)
		for _, it := range page.Tools {
			got = append(got, string(it))
		}
		if page.NextCursor == "" {
			break
		}
		if first == "" {
			first = page.NextCursor
		}
		params = `{"cursor":"` + page.NextCursor + `"}`
	}
	assert.Equal(t, items, got)
	assert.NotContains(t, r.seen(t), "tools/list:s1", "a cached page went to the route")

	reply, failed := r.list(t, `{"cursor":"bm90LW91cnM"}`)
	assert.True(t, failed)
	assert.Contains(t, reply, `"code":-32602`)

	// A second spelling of a cursor the proxy issued is not read as it.
	reply, failed = r.list(t, `{"cursor":"`+proxy.Respelled(first)+`"}`)
	assert.True(t, failed)
	assert.Contains(t, reply, `"code":-32602`)

	// The entry changes: a cursor of the old one is stale.
	st, ok := r.w.Store("store0")
	require.True(t, ok)
	stored := make(chan error, 1)
	require.NoError(t, r.e.Execute(0, func(*engine.Worker) {
		st.Put("mcp1.tools", []byte(`{"tools":[{"name":"only"}]}`), 0, func(err error) { stored <- err })
	}))
	require.NoError(t, enginetest.ReceiveBy(t, r.timer, stored, "the put"))
	enginetest.Settle(t, r.e)
	reply, failed = r.list(t, `{"cursor":"`+first+`"}`)
	assert.True(t, failed)
	assert.Contains(t, reply, `"code":-32602`)
	assert.Contains(t, reply, "the list has changed")
	reply, _ = r.list(t, `{}`)
	assert.Equal(t, `{"tools":[{"name":"only"}]}`, reply)
}

// TestCacheGateTimeout: with a route that never answers, a downstream
// lifecycle waits for the cache; when the gate's timeout passes it goes
// on to the route anyway.
func TestCacheGateTimeout(t *testing.T) {
	app := &listApp{silent: true}
	r := newCacheRig(t, "", app)
	r.openLifecycle(t)
	assert.Equal(t, []string{"lifecycle:hydrate-mcp1"}, r.seen(t), "the session went to the route before the cache settled")
	r.clock.Tick(t, r.e, 5*time.Second)
	enginetest.Settle(t, r.e)
	assert.Equal(t, []string{"lifecycle:hydrate-mcp1", "lifecycle:s1"}, r.seen(t))
}

// TestCacheStoreUnavailable: with Redis down at start, the gate does not
// hold a downstream lifecycle for its 5 s: once a lease request fails and
// the store tells that it has lost Redis, the session goes on to the route
// at once, with no time passing but the lease's retry.
func TestCacheStoreUnavailable(t *testing.T) {
	srv := redistest.Start(t)
	srv.Stop()
	r := newCacheRigOn(t, "    type: redis\n    options:\n      url: "+srv.URL()+"\n      dialTimeout: PT1S\n      timeout: PT1S\n", &listApp{})
	st, ok := r.w.Store("store0")
	require.True(t, ok)
	// probe runs a Lock through the worker's handler and reports whether
	// the store was unavailable when it completed. Operations of one
	// handler complete in order, so the hydrater's Lock issued before it
	// has completed too.
	probe := func() bool {
		down := make(chan bool, 1)
		require.NoError(t, r.e.Execute(0, func(*engine.Worker) {
			st.Lock("probe", time.Second, func(string, bool) { down <- store.Unavailable(st) })
		}))
		return enginetest.ReceiveBy(t, r.timer, down, "the probe")
	}
	for i := 0; !probe(); i++ {
		require.Less(t, i, 100, "the store never told that Redis is down")
	}
	r.clock.Tick(t, r.e, 100*time.Millisecond) // the lease's retry
	probe()
	r.openLifecycle(t)
	assert.Equal(t, []string{"lifecycle:s1"}, r.seen(t), "the session was held for a store that is down")
}

// openLifecycle opens session s1's lifecycle stream to the proxy.
func (r *cacheRig) openLifecycle(t *testing.T) {
	t.Helper()
	var exB mcp.McpBeginExBuilder
	ext := make([]byte, 256)
	n, err := exB.Wrap(ext, 0, len(ext)).TypeID(r.typeID).Lifecycle().SessionID("s1").Capabilities(0).BuildLimit()
	require.NoError(t, err)
	var s engine.Stream
	require.NoError(t, r.e.Execute(0, func(w *engine.Worker) {
		s.Connect(w, r.driver, r.proxy, w.SupplyInitialID(r.proxy), func(frame.FrameType, []byte) {})
		require.NoError(t, s.Begin(ext[:n]))
	}))
	enginetest.Settle(t, r.e)
	enginetest.Settle(t, r.e)
}

// TestCachedListAllocs pins a tools/list served from the cache at zero
// allocations: the cached bytes are written as they are.
func TestCachedListAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	app := &listApp{}
	r := newCacheRig(t, seeded(`{"tools":[{"name":"cached","inputSchema":{"type":"object"}}]}`), app)
	c := r.listCaller(t, `{}`, 8192)
	call := func() {
		if !c.Call(t, r.timer, 1) || string(c.Reply()) != `{"tools":[{"name":"cached","inputSchema":{"type":"object"}}]}` {
			t.Fatal("the cached tools/list failed")
		}
	}
	for range 50 {
		call()
	}
	allocs := testing.AllocsPerRun(200, call)
	require.Zero(t, allocs, "allocations per cached tools/list")
}

// BenchmarkCachedToolsList measures a tools/list served from the cache,
// to set beside BenchmarkToolsCall.
func BenchmarkCachedToolsList(b *testing.B) {
	r := newCacheRig(b, seeded(`{"tools":[{"name":"a__echo","inputSchema":{"type":"object"}},{"name":"b__echo","inputSchema":{"type":"object"}}]}`), &listApp{})
	c := r.listCaller(b, `{}`, 8192)
	for range 50 {
		require.True(b, c.Call(b, r.timer, 1))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if !c.Call(b, r.timer, 1) {
			b.Fatal("the cached tools/list failed")
		}
	}
}

// TestCacheConfigErrors: options.cache's mistakes are refused at start,
// naming the file and line.
func TestCacheConfigErrors(t *testing.T) {
	for name, tc := range map[string]struct{ cache, want string }{
		"unknown store":          {"store: nope", `cache.yaml:11: bindings.mcp1.options.cache.store: mcp mcp1: store "nope" is not configured`},
		"bad ttl":                {"store: store0\n        ttl: soon", `cache.yaml:12: bindings.mcp1.options.cache.ttl: mcp mcp1: options.cache.ttl "soon"`},
		"bad kind ttl":           {"store: store0\n        ttl:\n          tools: often", `cache.yaml:13: bindings.mcp1.options.cache.ttl.tools: mcp mcp1: options.cache.ttl.tools often`},
		"unknown guard":          {"store: store0\n        authorization:\n          nope:\n            credentials: x", `cache.yaml:13: bindings.mcp1.options.cache.authorization.nope: mcp mcp1: guard "nope" is not configured`},
		"explicit without match": {"store: store0\n        tools:\n          eager: {policy: explicit}", `cache.yaml:13: bindings.mcp1.options.cache.tools.eager: missing required key "match"`},
		"match without explicit": {"store: store0\n        tools:\n          eager: {policy: all, match: [x]}", `cache.yaml:13: bindings.mcp1.options.cache.tools.eager.match: `},
		"bad match glob":         {"store: store0\n        tools:\n          eager: {policy: explicit, match: ['[']}", `options.cache.tools.eager.match: bad glob "["`},
		"search limit":           {"store: store0\n        tools:\n          search: {limit: 0}", `cache.yaml:13: bindings.mcp1.options.cache.tools.search: mcp mcp1: options.cache.tools.search.limit 0: want 1 to 100`},
		"search weight field":    {"store: store0\n        tools:\n          search: {weights: {title: 2}}", `options.cache.tools.search.weights.title: not a field`},
		"search weight zero":     {"store: store0\n        tools:\n          search: {weights: {name: 0}}", `options.cache.tools.search.weights.name 0: want a weight above 0`},
		"search type and index":  {"store: store0\n        tools:\n          search: {type: keyword, index: [{type: keyword}]}", `cache.yaml:13: bindings.mcp1.options.cache.tools.search: `},
		"search toolkit route":   {"store: store0\n        tools:\n          search: {toolkit: app}", `options.cache.tools.search.toolkit "app" is routes[0]'s toolkit too`},
		"tools not cached":       {"store: store0\n        ttl: {prompts: PT1M}\n        tools:\n          search: {}", `options.cache.tools needs the tools list cached`},
	} {
		t.Run(name, func(t *testing.T) {
			src := "name: test\nstores:\n  store0:\n    type: test\nbindings:\n  mcp1:\n    type: mcp\n    kind: proxy\n    options:\n      cache:\n        " + tc.cache + "\n    routes:\n      - exit: app\n        when: [{toolkit: app}]\n"
			err := enginetest.Check(t, "cache.yaml", src, map[string]engine.Binding{"app": enginetest.Refuse{}})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// TestCacheLeaseTakeover: two instances share a memory store. The first
// hydrates and then stops renewing its lease (its clock stands still, so
// its timers never fire, as if it had died); once the lease has run out
// on the second's clock, the second takes it over and opens the hydrate
// session to its own route.
func TestCacheLeaseTakeover(t *testing.T) {
	store := "    type: memory\n"
	lease := []engine.Option{engine.WithSetting("mcp.lease.ttl", "PT3S"), engine.WithSetting("mcp.lease.retry", "PT0.1S")}
	appA := &listApp{result: []byte(`{"tools":[{"name":"a"}]}`)}
	a := newCacheRigOn(t, store, appA, lease...)
	a.waitEntry(t, "mcp1.tools")
	reply, failed := a.list(t, `{}`)
	require.False(t, failed)
	require.Equal(t, `{"tools":[{"name":"a"}]}`, reply)
	require.Equal(t, []string{"lifecycle:hydrate-mcp1", "tools/list:hydrate-mcp1"}, a.seen(t))

	appB := &listApp{result: []byte(`{"tools":[{"name":"b"}]}`)}
	b := newCacheRigOn(t, store, appB, lease...)
	reply, _ = b.list(t, `{}`)
	assert.Equal(t, `{"tools":[{"name":"a"}]}`, reply, "the second instance serves the first's entry")
	assert.Empty(t, b.seen(t), "the second instance hydrated while the first held the lease")

	b.clock.Tick(t, b.e, 2*time.Second)
	enginetest.Settle(t, b.e)
	assert.Empty(t, b.seen(t), "the second instance took the lease before it ran out")
	for range 3 {
		b.clock.Tick(t, b.e, time.Second)
		enginetest.Settle(t, b.e)
		enginetest.Settle(t, b.e)
	}
	assert.Equal(t, []string{"lifecycle:hydrate-mcp1", "tools/list:hydrate-mcp1"}, b.seen(t),
		"the second instance takes over and lists at once: the first's last list_changed may be one it never saw")
	reply, _ = b.list(t, `{}`)
	assert.Equal(t, `{"tools":[{"name":"b"}]}`, reply, "the new holder's list is served")
}

// TestCachePartialList: with a second route that never answers, the
// merged list leaves it out (its _meta names it): such a list replaces
// the answering route's part of an entry and keeps the silent route's,
// and one stored for want of any entry is listed again after failRetry
// rather than the ttl.
func TestCachePartialList(t *testing.T) {
	hydrateLists := func(r *cacheRig) (n int) {
		for _, s := range r.seen(t) {
			if s == "tools/list:hydrate-mcp1" {
				n++
			}
		}
		return n
	}
	routeOut := func(r *cacheRig) {
		// The silent route's part of the hydrate session is given up
		// 10 s after it starts (after the gate's 5 s); the session then
		// opens with the other route.
		for range 5 {
			r.clock.Tick(t, r.e, 5*time.Second)
			settleChain(t, r)
		}
	}
	t.Run("the left-out route's part kept", func(t *testing.T) {
		app := &listApp{result: []byte(`{"tools":[{"name":"live"}]}`)}
		// The hydrated mark makes the session a takeover: it lists at once.
		r := newCacheRigRoutes(t, "    type: test\n"+seeded(`{"tools":[{"name":"app__cached"},{"name":"app1__stale"}]}`)+"\n        mcp1.hydrated: \"x\"", []*listApp{app, {silent: true}})
		routeOut(r)
		require.Equal(t, 1, hydrateLists(r), "the takeover listed")
		reply, _ := r.list(t, `{}`)
		assert.Equal(t, `{"tools":[{"name":"app__live"},{"name":"app1__stale"}]}`, reply,
			"the answering route's items replace its part of the entry; the silent route's part is kept")
	})
	t.Run("stored, then listed again soon", func(t *testing.T) {
		app := &listApp{result: []byte(`{"tools":[{"name":"live"}]}`)}
		r := newCacheRigRoutes(t, "    type: test\n", []*listApp{app, {silent: true}})
		routeOut(r)
		r.waitEntry(t, "mcp1.tools")
		require.Equal(t, 1, hydrateLists(r))
		// failRetry (5 s), well short of the ttl; the list then waits for
		// another try at the silent route (10 s) before it goes out.
		for range 4 {
			r.clock.Tick(t, r.e, 5*time.Second)
			settleChain(t, r)
		}
		assert.Equal(t, 2, hydrateLists(r), "a partial entry is listed again after failRetry")
	})
}

// settleChain lets a refresh run its course: the lock through the store,
// the list to the proxy and its route, the answer and the store's put,
// each a hop of its own.
func settleChain(t *testing.T, r *cacheRig) {
	t.Helper()
	for range 16 {
		enginetest.Settle(t, r.e)
	}
}

// TestCacheRouteLeftHydrate: a route that aborts its part of the hydrate
// session is opened again within failRetry, by a list of every kind,
// rather than at the next ttl (an hour here): its list_changed would
// otherwise not reach the cache until then.
func TestCacheRouteLeftHydrate(t *testing.T) {
	app := &listApp{result: []byte(`{"tools":[{"name":"live"}]}`), drop: 1}
	r := newCacheRig(t, seeded(`{"tools":[{"name":"cached"}]}`), app)
	settleChain(t, r)
	require.Equal(t, []string{"lifecycle:hydrate-mcp1"}, r.seen(t))
	r.clock.Tick(t, r.e, 5*time.Second)
	settleChain(t, r)
	assert.Equal(t, []string{"lifecycle:hydrate-mcp1", "lifecycle:hydrate-mcp1", "tools/list:hydrate-mcp1"}, r.seen(t),
		"the route is opened again and listed")
	reply, _ := r.list(t, `{}`)
	assert.Equal(t, `{"tools":[{"name":"live"}]}`, reply)
}
