package server_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/frame"
	"github.com/sluicehq/sluice/internal/enginetest"
)

// The tests below run the mcp server on two workers, each with its own
// application (workerApps) and with drivers playing the http server on
// either worker: a session belongs to the worker that took its
// initialize, and a request that names it on the other worker is relayed
// there, frames and all.

// workerApps is the application binding: one fakeApp per worker, so the
// tests see which worker served each application stream.
type workerApps struct {
	mcpType int32
	apps    [2]*fakeApp
}

func (a *workerApps) Attach(w *engine.Worker, _ *engine.BindingConfig) (engine.Handler, error) {
	app := &fakeApp{w: w, mcpType: a.mcpType, record: []byte{}}
	a.apps[w.Index()] = app
	return app, nil
}

// twoWorkers is the engine and its applications.
type twoWorkers struct {
	e      *engine.Engine
	apps   *workerApps
	labels *engine.Labels
	driver int64
	net0   int64
}

func newTwoWorkers(tb testing.TB) *twoWorkers {
	tb.Helper()
	labels := engine.NewLabels()
	apps := &workerApps{mcpType: labels.Supply("mcp")}
	e := startEngine(tb, 2, "", labels, apps)
	tw := &twoWorkers{e: e, apps: apps, labels: labels}
	tw.driver, _ = e.ResolveID("driver")
	tw.net0, _ = e.ResolveID("net0")
	return tw
}

// client returns a driver that sends its requests from worker i, where
// the http server would have read them from a connection.
func (tw *twoWorkers) client(i int) *harness {
	w := tw.e.Worker(i)
	h := &harness{e: tw.e, w: w, driver: tw.driver, net0: tw.net0, app: tw.apps.apps[i], timer: enginetest.NewTimer()}
	h.req = &httpRequest{w: w, origin: tw.driver, routed: tw.net0, httpType: tw.labels.Supply("http"),
		buf: make([]byte, 64<<10), done: make(chan struct{}, 1), parse: true}
	h.req.onFrame = h.req.handle
	h.req.startFn = h.req.start
	return h
}

// on runs fn on worker i's thread, where the drivers and apps live.
func (tw *twoWorkers) on(t testing.TB, i int, fn func()) {
	t.Helper()
	require.NoError(t, tw.e.Execute(i, func(*engine.Worker) { fn() }))
}

// send sends one request from h and waits for its response to end;
// it returns the status and the body.
func send(t testing.TB, h *harness, headers [][2]string, body string) (string, string) {
	t.Helper()
	h.req.set(t, headers, body)
	h.request(t)
	return string(h.req.status), string(h.req.response)
}

func headersFor(method, sid string) [][2]string {
	hs := [][2]string{
		{":scheme", "http"}, {":method", method}, {":path", "/mcp"}, {":authority", "localhost:8080"},
		{"content-type", "application/json"}, {"accept", "application/json, text/event-stream"},
	}
	if sid != "" {
		hs = append(hs, [2]string{"mcp-session-id", sid}, [2]string{"mcp-protocol-version", "2025-11-25"})
	}
	return hs
}

const (
	initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}`
	callResponse   = `{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"Echo: hi"}]}}`
	notFound       = `{"jsonrpc":"2.0","error":{"code":-32001,"message":"Session not found"},"id":null}`
)

// initialize opens a session from h's worker and returns its id.
func initialize(t testing.TB, h *harness) string {
	t.Helper()
	status, body := send(t, h, headersFor("POST", ""), initializeBody)
	require.Equal(t, "200", status, body)
	sid := string(h.req.session)
	require.Len(t, sid, 32)
	return sid
}

// calls counts the tools/call streams each worker's application took.
func (tw *twoWorkers) calls(t testing.TB) [2]int {
	t.Helper()
	var n [2]int
	for i, app := range tw.apps.apps {
		tw.on(t, i, func() {
			for _, b := range app.begins {
				var ex mcp.McpBeginEx
				if ex.TryWrap(b, 0, len(b)) && ex.Kind() == mcp.McpBeginExKindToolsCall {
					n[i]++
				}
			}
		})
	}
	return n
}

// requireIdle waits until neither worker holds a stream or a buffer
// slot: every relay and its request were released.
func (tw *twoWorkers) requireIdle(t testing.TB) {
	t.Helper()
	require.Eventually(t, func() bool {
		idle := true
		for i := range 2 {
			w := tw.e.Worker(i)
			tw.on(t, i, func() {
				s, th := w.Streams()
				idle = idle && s == 0 && th == 0 && w.BufferPool().Acquired() == 0
			})
		}
		return idle
	}, 2*time.Second, 5*time.Millisecond, "a worker still holds a stream or a slot")
}

// TestSessionOwnerWorker: a session initialized on worker 1 names worker
// 1, and its tools/call is served by worker 1 whether the request arrives
// there or on worker 0. Both workers then call each other's sessions at
// once: with no lock between them, the race detector would see any
// session state that both threads touch.
func TestSessionOwnerWorker(t *testing.T) {
	tw := newTwoWorkers(t)
	c0, c1 := tw.client(0), tw.client(1)
	sid1 := initialize(t, c1)
	sid0 := initialize(t, c0)
	assert.True(t, strings.HasSuffix(sid1, "01"), "the id names worker 1: %s", sid1)
	assert.True(t, strings.HasSuffix(sid0, "00"), "the id names worker 0: %s", sid0)

	// A body of several slots crosses the relay in pieces, as the owner's
	// windows, relayed back, let it.
	big := `{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"echo","arguments":{"message":"` +
		strings.Repeat("0123456789abcdef", 5<<10) + `"}}}`
	for _, tt := range []struct {
		name   string
		from   *harness
		sid    string
		body   string
		served [2]int
	}{
		{"on its owner", c1, sid1, benchBody, [2]int{0, 1}},
		{"on another worker", c0, sid1, benchBody, [2]int{0, 2}},
		{"back on worker 0", c1, sid0, benchBody, [2]int{1, 2}},
		{"a large body on another worker", c0, sid1, big, [2]int{1, 3}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			status, body := send(t, tt.from, headersFor("POST", tt.sid), tt.body)
			require.Equal(t, "200", status, body)
			assert.Equal(t, callResponse, body)
			assert.Equal(t, tt.served, tw.calls(t), "tools/call streams per worker")
		})
	}

	const n = 200
	c0.req.set(t, headersFor("POST", sid1), benchBody)
	c1.req.set(t, headersFor("POST", sid0), benchBody)
	for _, c := range []*harness{c0, c1} {
		c.req.left = n
		c.w.Dispatch(c.req.startFn)
	}
	for _, c := range []*harness{c0, c1} {
		wait(t, c)
	}
	assert.Equal(t, callResponse, string(c0.req.response))
	assert.Equal(t, callResponse, string(c1.req.response))
	assert.Equal(t, [2]int{1 + n, 3 + n}, tw.calls(t))

	for _, sid := range []string{sid0, sid1} {
		status, body := send(t, c0, headersFor("DELETE", sid), "")
		require.Equal(t, "200", status, body)
	}
	tw.requireIdle(t)
}

// TestSessionNotFoundAcrossWorkers: an id no session has is 404 as
// before, whether it names this worker, another one (answered there,
// through a relay), or a worker the engine does not have.
func TestSessionNotFoundAcrossWorkers(t *testing.T) {
	tw := newTwoWorkers(t)
	c0 := tw.client(0)
	for _, tt := range []struct{ name, sid string }{
		{"this worker", strings.Repeat("ab", 15) + "00"},
		{"another worker", strings.Repeat("ab", 15) + "01"},
		{"no such worker", strings.Repeat("ab", 15) + "7f"},
		{"not an id of ours", "0123456789abcdef"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			status, body := send(t, c0, headersFor("POST", tt.sid), benchBody)
			assert.Equal(t, "404", status)
			assert.Equal(t, notFound, body)
		})
	}
	assert.Equal(t, [2]int{0, 0}, tw.calls(t))
	tw.requireIdle(t)
}

// TestSessionGetAndDeleteAcrossWorkers: the GET stream and the DELETE of
// a session worker 1 owns both arrive on worker 0. The GET stream, relayed
// to worker 1, carries the lifecycle's notification there; the DELETE
// ends the session on worker 1 and with it the GET stream.
func TestSessionGetAndDeleteAcrossWorkers(t *testing.T) {
	tw := newTwoWorkers(t)
	c1 := tw.client(1)
	sid := initialize(t, c1)
	get, del := tw.client(0), tw.client(0)

	get.req.set(t, headersFor("GET", sid), "")
	get.req.left = 1
	get.w.Dispatch(get.req.startFn)
	response := func() (status, body string) {
		tw.on(t, 0, func() { status, body = string(get.req.status), string(get.req.response) })
		return status, body
	}
	require.Eventually(t, func() bool { _, body := response(); return body != "" }, 2*time.Second, time.Millisecond)
	status, body := response()
	require.Equal(t, "200", status)
	assert.Equal(t, "id: :0\ndata: \n\n", body, "the priming event")

	// The application's list_changed on the session's lifecycle, on
	// worker 1, reaches the GET stream held for worker 0's client.
	var err error
	tw.on(t, 1, func() { err = notifyToolsChanged(tw.apps.apps[1]) })
	require.NoError(t, err)
	want := "id: :0\ndata: \n\nevent: message\nid: :1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n"
	require.Eventually(t, func() bool { _, body := response(); return body == want }, 2*time.Second, time.Millisecond)

	status, body = send(t, del, headersFor("DELETE", sid), "")
	require.Equal(t, "200", status, body)
	wait(t, get)
	status, body = send(t, c1, headersFor("POST", sid), benchBody)
	assert.Equal(t, "404", status)
	assert.Equal(t, notFound, body)
	tw.requireIdle(t)
}

// wait waits for the response of h's last request to end.
func wait(t testing.TB, h *harness) {
	t.Helper()
	select {
	case <-h.req.done:
	case <-time.After(5 * time.Second):
		t.Fatal("timed out waiting for the response")
	}
}

// notifyToolsChanged sends FLUSH toolsListChanged on the reply of app's
// lifecycle stream; it runs on the app's worker.
func notifyToolsChanged(app *fakeApp) error {
	s := app.lifecycle
	if s == nil {
		return errors.New("no lifecycle stream")
	}
	ext := make([]byte, 256)
	var exB mcp.McpFlushExBuilder
	n, err := exB.Wrap(ext, 0, len(ext)).TypeID(app.mcpType).ToolsListChanged().IDNull().BuildLimit()
	if err != nil {
		return err
	}
	var b frame.FlushBuilder
	m, err := b.Wrap(s.buf, 0, len(s.buf)).
		OriginID(s.Origin).RoutedID(s.Routed).StreamID(s.ReplyID).
		Sequence(0).Acknowledge(0).Maximum(0).TraceID(0).Authorization(0).
		BudgetID(0).Reserved(0).Extension(ext[:n]).BuildLimit()
	if err != nil {
		return err
	}
	return app.w.Send(frame.FrameFlush, s.buf[:m])
}
