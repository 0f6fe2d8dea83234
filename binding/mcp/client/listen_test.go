package client_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/binding"
	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/frame"
	"github.com/sluicehq/sluice/engine/telemetry"
	"github.com/sluicehq/sluice/internal/enginetest"
)

// listenUpstream is a stateless (2026-07-28) MCP server that answers
// server/discover and subscriptions/listen only. Its listens, in order:
// the first is refused with 503, the second acknowledged, sends a tools
// list change and ends, the third acknowledged, sends a prompts list
// change and stays open until the client goes.
type listenUpstream struct {
	mu      sync.Mutex
	listens []listenRequest
	gone    chan struct{} // the third listen's client went away
}

type listenRequest struct {
	method, version string
	params          json.RawMessage
}

func (u *listenUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	switch req.Method {
	case "server/discover":
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"supportedVersions":["2026-07-28"],`+
			`"capabilities":{"tools":{"listChanged":true},"prompts":{"listChanged":true},"resources":{}}}}`, req.ID)
	case "subscriptions/listen":
		u.mu.Lock()
		u.listens = append(u.listens, listenRequest{r.Header.Get("Mcp-Method"), r.Header.Get("Mcp-Protocol-Version"), req.Params})
		n := len(u.listens)
		u.mu.Unlock()
		if n == 1 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		event := func(msg string) {
			fmt.Fprintf(w, "event: message\ndata: %s\n\n", msg)
			w.(http.Flusher).Flush()
		}
		event(fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":%s}}}`, req.ID))
		if n == 2 {
			event(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{}}`)
			return
		}
		event(`{"jsonrpc":"2.0","method":"notifications/prompts/list_changed","params":{}}`)
		select {
		case <-r.Context().Done():
			close(u.gone)
		case <-time.After(10 * time.Second):
		}
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}

func (u *listenUpstream) requests() []listenRequest {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]listenRequest(nil), u.listens...)
}

// lifecycleDriver plays the mcp server kind's side of one lifecycle
// stream to client0, on worker 0, and reports what comes back.
type lifecycleDriver struct {
	w                  *engine.Worker
	mcpType            int32
	origin, routed     int64
	initialID, replyID int64
	subs               uint16
	buf                []byte
	events             chan string

	hdr    frame.Frame
	begin  frame.Begin
	flush  frame.Flush
	ex     mcp.McpBeginEx
	flEx   mcp.McpFlushEx
	beginB frame.BeginBuilder
	endB   frame.EndBuilder
	winB   frame.WindowBuilder
	exB    mcp.McpBeginExBuilder
}

func (d *lifecycleDriver) start() {
	d.initialID, d.replyID = enginetest.StreamIDs(d.w, d.routed)
	b := enginetest.Begin(&d.beginB, d.buf, enginetest.Head{OriginID: d.origin, RoutedID: d.routed, StreamID: d.initialID})
	n, err := b.ExtensionDone(d.exB.WrapSlot(b.ExtensionBuffer()).TypeID(d.mcpType).Lifecycle().
		SessionIDNull().Capabilities(uint16(mcp.McpCapabilitiesClientSampling)).AuthCallbackNull().
		Subscriptions(d.subs).BuildLimit()).BuildLimit()
	if err != nil || d.w.NewStream(d.buf[:n], d.handle) != nil {
		d.events <- "driver: begin refused"
	}
}

func (d *lifecycleDriver) end() {
	n, _ := enginetest.End(&d.endB, d.buf, enginetest.Head{OriginID: d.origin, RoutedID: d.routed, StreamID: d.initialID})
	_ = d.w.Send(frame.FrameEnd, d.buf[:n])
}

func (d *lifecycleDriver) handle(t frame.FrameType, buf []byte) {
	if !d.hdr.TryWrap(buf, 0, len(buf)) || d.hdr.StreamID() != d.replyID {
		return
	}
	switch t {
	case frame.FrameBegin:
		caps := -1
		if d.begin.TryWrap(buf, 0, len(buf)) {
			ext := d.begin.Extension()
			if d.ex.TryWrap(ext, 0, len(ext)) && d.ex.Kind() == mcp.McpBeginExKindLifecycle {
				v := d.ex.Lifecycle()
				caps = int(v.Capabilities())
			}
		}
		d.events <- fmt.Sprintf("begin caps=%d", caps)
		n, _ := enginetest.Window(&d.winB, d.buf, enginetest.Head{OriginID: d.origin, RoutedID: d.routed, StreamID: d.replyID, Max: 8192})
		_ = d.w.Send(frame.FrameWindow, d.buf[:n])
	case frame.FrameFlush:
		kind := -1
		if d.flush.TryWrap(buf, 0, len(buf)) {
			ext := d.flush.Extension()
			if d.flEx.TryWrap(ext, 0, len(ext)) {
				kind = int(d.flEx.Kind())
			}
		}
		d.events <- fmt.Sprintf("flush %d", kind)
	case frame.FrameEnd:
		d.events <- "end"
	case frame.FrameAbort:
		d.events <- "abort"
	}
}

// startListenClient runs client0 (an mcp client of server, offering the
// stateless revision first) on one worker
// whose clock is clock, with an external driver in front, and returns the
// driver.
func startListenClient(t *testing.T, server string, subs uint16, clock *enginetest.Clock) *lifecycleDriver {
	t.Helper()
	src := fmt.Sprintf(`name: test
bindings:
  client0:
    type: mcp
    kind: client
    options:
      server: %s
      versions: [2026-07-28, 2025-11-25]
`, server)
	cfg, err := enginetest.Load("listen.yaml", src, "driver")
	require.NoError(t, err)
	require.NoError(t, binding.Resolve(cfg))
	labels := engine.NewLabels()
	e := enginetest.Run(t, enginetest.New(t, cfg, engine.WithWorkers(1), engine.WithRingCapacity(1<<22),
		engine.WithLabels(labels), engine.WithExternal("driver", enginetest.Refuse{}), engine.WithClock(clock.Now)))
	d := &lifecycleDriver{w: e.Worker(0), mcpType: labels.Supply("mcp"), subs: subs,
		buf: make([]byte, 8192), events: make(chan string, 64)}
	d.origin, _ = e.ResolveID("driver")
	d.routed, _ = e.ResolveID("client0")
	d.w.Dispatch(d.start)
	return d
}

// opened returns the streams client0 has begun (stream.opens.sent: its
// requests upstream and its replies to the driver), after a pass of the
// worker.
func (d *lifecycleDriver) opened(t *testing.T) int64 {
	t.Helper()
	e := d.w.Engine()
	enginetest.Settle(t, e)
	return enginetest.Metric(e, "client0", telemetry.StreamOpensSent)
}

// reopened waits until the upstream has had n listens, moving the clock
// on by the client's first backoff at each look: the client reopens a
// listen after a backoff on the engine's clock, and nothing else of the
// lifecycle waits for that clock, so how far it moves while an answer is
// on its way does not matter.
func (d *lifecycleDriver) reopened(t *testing.T, up *listenUpstream, clock *enginetest.Clock, n int) {
	t.Helper()
	e := d.w.Engine()
	require.Eventually(t, func() bool {
		clock.Advance(100 * time.Millisecond)
		if e.Execute(0, func(w *engine.Worker) { w.FireTimers() }) != nil {
			return false
		}
		return len(up.requests()) >= n
	}, 5*time.Second, time.Millisecond, "the upstream had %d listens, not %d", len(up.requests()), n)
}

func (d *lifecycleDriver) next(t *testing.T) string {
	t.Helper()
	return enginetest.Receive(t, d.events, "the lifecycle's reply")
}

// TestListenRelaysListChanged opens a lifecycle without a session id that
// subscribes to tools and prompts list changes, on a stateless upstream:
// the client POSTs subscriptions/listen for both, reopens it after a 503
// and after the upstream ends it, relays each list_changed as its FLUSH
// (the acknowledgement as nothing), and aborts the listen at the
// lifecycle's END.
func TestListenRelaysListChanged(t *testing.T) {
	up := &listenUpstream{gone: make(chan struct{})}
	srv := httptest.NewServer(up)
	defer srv.Close()
	subs := uint16(mcp.McpCapabilitiesServerToolsListChanged | mcp.McpCapabilitiesServerPromptsListChanged |
		mcp.McpCapabilitiesServerResourcesListChanged)
	clock := enginetest.NewClock()
	d := startListenClient(t, srv.URL+"/mcp", subs, clock)

	want := mcp.McpCapabilitiesServerTools | mcp.McpCapabilitiesServerToolsListChanged |
		mcp.McpCapabilitiesServerPrompts | mcp.McpCapabilitiesServerPromptsListChanged | mcp.McpCapabilitiesServerResources
	require.Equal(t, fmt.Sprintf("begin caps=%d", want), d.next(t), "the discover result's capabilities, list_changed bits with them")
	d.reopened(t, up, clock, 2) // after the 503
	assert.Equal(t, fmt.Sprintf("flush %d", mcp.McpFlushExKindToolsListChanged), d.next(t))
	d.reopened(t, up, clock, 3) // after the upstream ended it
	assert.Equal(t, fmt.Sprintf("flush %d", mcp.McpFlushExKindPromptsListChanged), d.next(t))

	d.w.Dispatch(d.end)
	assert.Equal(t, "end", d.next(t))
	select {
	case <-up.gone:
	case <-time.After(5 * time.Second):
		t.Fatal("the upstream listen was not aborted at the lifecycle's END")
	}
	// No reopening once the lifecycle is over: past every backoff, the
	// client has begun no stream.
	opened := d.opened(t)
	clock.Tick(t, d.w.Engine(), time.Hour)
	assert.Equal(t, opened, d.opened(t), "a listen reopened after the lifecycle's END")
	reqs := up.requests()
	require.Len(t, reqs, 3, "a refused listen and an ended one are reopened")
	for _, r := range reqs {
		assert.Equal(t, "subscriptions/listen", r.method)
		assert.Equal(t, "2026-07-28", r.version)
		var p struct {
			Notifications map[string]bool `json:"notifications"`
			Meta          map[string]any  `json:"_meta"`
		}
		require.NoError(t, json.Unmarshal(r.params, &p))
		assert.Equal(t, map[string]bool{"toolsListChanged": true, "promptsListChanged": true}, p.Notifications,
			"only the subscriptions the upstream advertised")
		assert.Equal(t, "2026-07-28", p.Meta["io.modelcontextprotocol/protocolVersion"])
		assert.Equal(t, map[string]any{"sampling": map[string]any{}}, p.Meta["io.modelcontextprotocol/clientCapabilities"])
	}
}

// TestListenNoSubscriptions: a lifecycle that subscribes to nothing (the
// server kind's transient one for server/discover) is answered with the
// capabilities and opens no listen.
func TestListenNoSubscriptions(t *testing.T) {
	up := &listenUpstream{gone: make(chan struct{})}
	srv := httptest.NewServer(up)
	defer srv.Close()
	clock := enginetest.NewClock()
	d := startListenClient(t, srv.URL+"/mcp", 0, clock)
	require.Contains(t, d.next(t), "begin caps=")
	// A listen would have been begun with the lifecycle's reply: client0
	// has begun its server/discover and that reply only.
	assert.Equal(t, int64(2), d.opened(t), "streams begun by client0")
	clock.Tick(t, d.w.Engine(), time.Hour)
	assert.Equal(t, int64(2), d.opened(t), "streams begun by client0, past every backoff")
	d.w.Dispatch(d.end)
	assert.Equal(t, "end", d.next(t))
	assert.Empty(t, up.requests())
}

// getUpstream is a 2025-11-25 MCP server with one session whose GET
// stream, as go-sdk's, is one at a time: a GET while another is held gets
// 409. Events sent on events go out on the GET stream held.
type getUpstream struct {
	mu        sync.Mutex
	gets      int // GETs answered 200
	conflicts int // GETs answered 409
	held      bool
	events    chan string
	// answers, when not nil, gets each answer POSTed to the session: its
	// id, then "result" and the result, or "error" and the code.
	answers chan string
}

func (u *getUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet {
		u.mu.Lock()
		if u.held {
			u.conflicts++
			u.mu.Unlock()
			http.Error(w, "stream ID conflicts with ongoing stream", http.StatusConflict)
			return
		}
		u.held = true
		u.gets++
		u.mu.Unlock()
		defer func() {
			u.mu.Lock()
			u.held = false
			u.mu.Unlock()
		}()
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		for {
			select {
			case msg := <-u.events:
				fmt.Fprintf(w, "event: message\ndata: %s\n\n", msg)
				w.(http.Flusher).Flush()
			case <-r.Context().Done():
				return
			}
		}
	}
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	switch {
	case req.Method == "" && u.answers != nil && req.Error != nil:
		u.answers <- fmt.Sprintf("%s error %d", req.ID, req.Error.Code)
	case req.Method == "" && u.answers != nil:
		u.answers <- fmt.Sprintf("%s result %s", req.ID, req.Result)
	}
	switch req.Method {
	case "initialize":
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Mcp-Session-Id", "s1")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25",`+
			`"capabilities":{"tools":{"listChanged":true},"prompts":{"listChanged":true}},"serverInfo":{"name":"up","version":"1"}}}`, req.ID)
	default:
		w.WriteHeader(http.StatusAccepted)
	}
}

func (u *getUpstream) counts() (gets, conflicts int, held bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.gets, u.conflicts, u.held
}

// TestNullLifecyclesShareGet: lifecycles without a session id (the
// server kind's for 2026-07-28 subscriptions/listen) toward a 2025
// upstream read their list changes from one GET stream of the worker's
// session, each getting those it subscribed to; the stream outlives a
// lifecycle that ends, so the upstream, which allows one GET stream per
// session, never sees a second.
func TestNullLifecyclesShareGet(t *testing.T) {
	up := &getUpstream{events: make(chan string, 4)}
	srv := httptest.NewServer(up)
	// After the engine has stopped (cleanups run last first), which ends
	// the GET stream the server waits on.
	t.Cleanup(srv.Close)
	clock := enginetest.NewClock()
	d1 := startListenClient(t, srv.URL+"/mcp", uint16(mcp.McpCapabilitiesServerToolsListChanged), clock)
	require.Contains(t, d1.next(t), "begin caps=")
	d2 := &lifecycleDriver{w: d1.w, mcpType: d1.mcpType, origin: d1.origin, routed: d1.routed,
		subs: uint16(mcp.McpCapabilitiesServerPromptsListChanged), buf: make([]byte, 8192), events: make(chan string, 64)}
	d2.w.Dispatch(d2.start)
	require.Contains(t, d2.next(t), "begin caps=")
	require.Eventually(t, func() bool { _, _, held := up.counts(); return held }, 5*time.Second, time.Millisecond, "the GET stream opens")

	up.events <- `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`
	up.events <- `{"jsonrpc":"2.0","method":"notifications/prompts/list_changed"}`
	assert.Equal(t, fmt.Sprintf("flush %d", mcp.McpFlushExKindToolsListChanged), d1.next(t))
	assert.Equal(t, fmt.Sprintf("flush %d", mcp.McpFlushExKindPromptsListChanged), d2.next(t))

	d1.w.Dispatch(d1.end)
	assert.Equal(t, "end", d1.next(t))
	up.events <- `{"jsonrpc":"2.0","method":"notifications/prompts/list_changed"}`
	assert.Equal(t, fmt.Sprintf("flush %d", mcp.McpFlushExKindPromptsListChanged), d2.next(t), "the stream outlives the first lifecycle")
	gets, conflicts, _ := up.counts()
	assert.Equal(t, 1, gets, "one GET stream for both")
	assert.Equal(t, 0, conflicts)
	select {
	case ev := <-d1.events:
		t.Fatalf("the ended lifecycle got %s", ev)
	default:
	}
}

// TestNullSessionAnswersPing: the worker's shared session, which no one
// client owns, has its GET stream read for lifecycles without a session
// id. A ping the upstream sends there is answered with an empty result:
// the gateway is there, and go-sdk's KeepAlive closes a session whose
// ping fails, taking the shared GET stream with it. Any other request
// there is refused -32603, as before.
func TestNullSessionAnswersPing(t *testing.T) {
	up := &getUpstream{events: make(chan string, 4), answers: make(chan string, 4)}
	srv := httptest.NewServer(up)
	t.Cleanup(srv.Close)
	clock := enginetest.NewClock()
	d := startListenClient(t, srv.URL+"/mcp", uint16(mcp.McpCapabilitiesServerToolsListChanged), clock)
	require.Contains(t, d.next(t), "begin caps=")
	require.Eventually(t, func() bool { _, _, held := up.counts(); return held }, 5*time.Second, time.Millisecond, "the GET stream opens")

	up.events <- `{"jsonrpc":"2.0","id":"k1","method":"ping"}`
	up.events <- `{"jsonrpc":"2.0","id":"k2","method":"roots/list"}`
	got := []string{
		enginetest.Receive(t, up.answers, "an answer"),
		enginetest.Receive(t, up.answers, "another answer"),
	}
	assert.ElementsMatch(t, []string{`"k1" result {}`, `"k2" error -32603`}, got)
}
