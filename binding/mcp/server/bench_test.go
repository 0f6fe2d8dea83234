package server_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	httpb "github.com/sluicehq/sluice/binding/http"
	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/frame"
	"github.com/sluicehq/sluice/internal/enginetest"
	"github.com/sluicehq/sluice/internal/freelist"
)

// The harness below drives the mcp server kind the way the http server
// does, with one request at a time on one worker, and answers its
// application streams the way the toolkit does, without allocating on
// either side: what the benchmark and AllocsPerRun measure is the server's
// own path from the HTTP request to the application stream and back.

// harness is an engine with the mcp server (net0) between two external
// bindings: driver, which plays the http server, and app, the MCP
// application.
type harness struct {
	e      *engine.Engine
	w      *engine.Worker
	driver int64
	net0   int64
	app    *fakeApp
	req    *httpRequest
	timer  *enginetest.Timer
}

func newHarness(tb testing.TB) *harness {
	tb.Helper()
	return newHarnessWith(tb, "", nil)
}

// newHarnessWith is newHarness with more options (YAML lines under
// options) and, when clock is not nil, the engine on that clock.
func newHarnessWith(tb testing.TB, options string, clock *enginetest.Clock) *harness {
	tb.Helper()
	labels := engine.NewLabels()
	app := &fakeApp{mcpType: labels.Supply("mcp")}
	var opts []engine.Option
	if clock != nil {
		opts = append(opts, engine.WithClock(clock.Now))
	}
	e := startEngine(tb, 1, "sessions:\n  ids: sequential"+options, labels, app, opts...)
	h := &harness{e: e, w: e.Worker(0), app: app, timer: enginetest.NewTimer()}
	h.driver, _ = e.ResolveID("driver")
	h.net0, _ = e.ResolveID("net0")
	app.w = h.w
	h.req = &httpRequest{w: h.w, origin: h.driver, routed: h.net0, httpType: labels.Supply("http"),
		buf: make([]byte, 64<<10), done: make(chan struct{}, 1)}
	h.req.onFrame = h.req.handle
	h.req.parse = true
	h.req.startFn = h.req.start
	return h
}

// startEngine starts an engine of workers workers with the mcp server
// (net0, options its options block) between two external bindings:
// driver, which refuses streams, and app.
func startEngine(tb testing.TB, workers int, options string, labels *engine.Labels, app engine.Binding, opts ...engine.Option) *engine.Engine {
	tb.Helper()
	src := "name: test\nbindings:\n  net0:\n    type: mcp\n    kind: server\n    exit: app\n"
	if options != "" {
		src += "    options:\n      " + strings.ReplaceAll(options, "\n", "\n      ") + "\n"
	}
	return enginetest.StartFaked(tb, src, workers, labels, "app", app, opts...)
}

// request sends one HTTP request and waits for its response to end.
func (h *harness) request(tb testing.TB) { h.requests(tb, 1) }

// requests sends n HTTP requests one after the other, each as soon as the
// one before has been answered, all on the worker's thread, and waits for
// the last response to end.
func (h *harness) requests(tb testing.TB, n int) {
	h.req.left = n
	h.w.Dispatch(h.req.startFn)
	enginetest.ReceiveBy(tb, h.timer, h.req.done, "the response")
}

// httpRequest plays the http server: one request, BEGIN with its headers,
// the body once credit comes, END; the response's frames are counted.
type httpRequest struct {
	w                  *engine.Worker
	origin, routed     int64
	httpType           int32
	ext                []byte
	body               []byte
	initialID, replyID int64
	sent               bool
	inSeq              int64
	status             []byte
	statusBuf          [3]byte
	session            []byte
	sessionBuf         [64]byte
	response           []byte
	responseBuf        [4096]byte
	buf                []byte
	onFrame            engine.MessageConsumer
	startFn            func()
	done               chan struct{}
	parse              bool   // read the response head
	stall              bool   // grant the response no credit
	all                []byte // when not nil, every response byte is appended here
	left               int    // requests still to send
	off                int    // body bytes sent
	ack                int64
	max                int32

	begin  frame.BeginBuilder
	data   frame.DataBuilder
	end    frame.EndBuilder
	window frame.WindowBuilder
	hdr    frame.Frame
	b      frame.Begin
	d      frame.Data
	ex     httpb.HttpBeginEx
}

// set prepares the request's headers and body.
func (r *httpRequest) set(tb testing.TB, headers [][2]string, body string) {
	var b httpb.HttpBeginExBuilder
	buf := make([]byte, 4096)
	eb := b.Wrap(buf, 0, len(buf)).TypeID(r.httpType)
	hs := eb.Headers()
	for _, h := range headers {
		hs.Item().Name(h[0]).Value(h[1])
	}
	n, err := eb.BuildLimit()
	require.NoError(tb, err)
	r.ext, r.body = buf[:n], []byte(body)
}

func (r *httpRequest) start() {
	r.initialID, r.replyID = enginetest.StreamIDs(r.w, r.routed)
	r.sent, r.inSeq, r.status, r.response, r.off = false, 0, nil, r.responseBuf[:0], 0
	n, err := r.begin.Wrap(r.buf, 0, len(r.buf)).
		OriginID(r.origin).RoutedID(r.routed).StreamID(r.initialID).
		Sequence(0).Acknowledge(0).Maximum(0).TraceID(0).Authorization(0).Affinity(0).
		Extension(r.ext).BuildLimit()
	if err != nil || r.w.NewStream(r.buf[:n], r.onFrame) != nil {
		panic("driver: begin")
	}
}

func (r *httpRequest) handle(t frame.FrameType, buf []byte) {
	if !r.hdr.TryWrap(buf, 0, len(buf)) {
		return
	}
	id := r.hdr.StreamID()
	switch {
	case t == frame.FrameWindow && id == r.initialID && !r.sent:
		var w frame.Window
		if w.TryWrap(buf, 0, len(buf)) {
			r.ack, r.max = w.Acknowledge(), w.Maximum()
		}
		// The body in DATA frames of at most 16 KiB, as credit allows.
		for r.off < len(r.body) {
			n := min(int64(len(r.body)-r.off), 16<<10, r.ack+int64(r.max)-int64(r.off))
			if n <= 0 {
				return
			}
			p := r.body[r.off : r.off+int(n)]
			m, _ := enginetest.Data(&r.data, r.buf, r.head(r.initialID, int64(r.off), r.ack, r.max), int32(n), p)
			_ = r.w.Send(frame.FrameData, r.buf[:m])
			r.off += int(n)
		}
		r.sent = true
		n, _ := enginetest.End(&r.end, r.buf, r.head(r.initialID, int64(len(r.body)), 0, 0))
		_ = r.w.Send(frame.FrameEnd, r.buf[:n])
	case t == frame.FrameBegin && id == r.replyID:
		// Reading the head allocates (the generated array's iterator):
		// the allocation tests turn it off.
		if r.parse && r.b.TryWrap(buf, 0, len(buf)) {
			ext := r.b.Extension()
			if r.ex.TryWrap(ext, 0, len(ext)) {
				for _, h := range r.ex.Headers().All() {
					switch string(h.Name()) {
					case ":status":
						r.status = append(r.statusBuf[:0], h.Value()...)
					case "mcp-session-id":
						r.session = append(r.sessionBuf[:0], h.Value()...)
					}
				}
			}
		}
		r.grant()
	case t == frame.FrameData && id == r.replyID:
		if r.d.TryWrap(buf, 0, len(buf)) {
			r.inSeq = r.d.Sequence() + int64(r.d.Reserved())
			p := r.d.Payload()
			if len(r.response)+len(p) <= cap(r.response) {
				r.response = append(r.response, p...)
			}
			if r.all != nil {
				r.all = append(r.all, p...)
			}
		}
		r.grant()
	case t == frame.FrameEnd && id == r.replyID:
		if r.left--; r.left > 0 {
			r.start()
			return
		}
		r.done <- struct{}{}
	case t == frame.FrameAbort && id == r.replyID:
		r.status = append(r.statusBuf[:0], "ABT"...)
		r.done <- struct{}{}
	}
}

func (r *httpRequest) grant() {
	if r.stall {
		return
	}
	n, _ := enginetest.Window(&r.window, r.buf, enginetest.Head{OriginID: r.origin, RoutedID: r.routed, StreamID: r.replyID, Seq: r.inSeq, Ack: r.inSeq, Max: 65536})
	_ = r.w.Send(frame.FrameWindow, r.buf[:n])
}

// fakeApp answers every application stream the way the toolkit does: a
// lifecycle with capabilities 2063, a request with a fixed result once
// its params have ended.
type fakeApp struct {
	w       *engine.Worker
	mcpType int32
	free    []*appStream
	record  []byte // when not nil, the params of requests are appended here
	begins  [][]byte
	// lifecycle is the last lifecycle stream opened, whose reply carries
	// notifications.
	lifecycle *appStream
	// window is the credit a stream is granted at a time; 0 means 32 KiB.
	window int32
	// clientReqs are FLUSH extensions a request's reply carries before its
	// answer; with hold the answer then waits (held) until a
	// clientResponse stream comes.
	clientReqs [][]byte
	hold       bool
	held       *appStream
	// challenge is a CHALLENGE extension a request's stream gets as it
	// opens, before its window.
	challenge []byte
	// results are the results the next requests get, in turn, instead of
	// benchResult; calls, when not nil, collects each request's params.
	results [][]byte
	calls   []string
	// silent leaves lifecycle streams unanswered.
	silent bool
	// answered counts the requests answered.
	answered int
	// after are FLUSH extensions a request's reply carries just before
	// its result, once it is answered (held or not).
	after [][]byte
}

var benchResult = []byte(`{"content":[{"type":"text","text":"Echo: hi"}]}`)

func (a *fakeApp) Attach(*engine.Worker, *engine.BindingConfig) (engine.Handler, error) {
	return a, nil
}

func (a *fakeApp) NewStream(_ frame.FrameType, buf []byte) engine.MessageConsumer {
	s := freelist.Pop(&a.free)
	if s == nil {
		s = &appStream{a: a, buf: make([]byte, 16<<10)}
		s.onFrame = s.handle
	}
	if !s.Accept(buf) {
		return nil
	}
	s.inSeq, s.ended, s.windowed, s.answered, s.lifecycle, s.flushed = 0, false, false, false, false, false
	s.isAnswer, s.got, s.resLen = false, s.got[:0], len(benchResult)
	return s.onFrame
}

type appStream struct {
	a *fakeApp
	enginetest.Accepted
	inSeq     int64
	ended     bool
	windowed  bool
	answered  bool
	lifecycle bool
	flushed   bool
	isAnswer  bool   // a clientResponse stream
	got       []byte // the params, when the app collects calls
	resLen    int    // the reply DATA's length
	buf       []byte
	onFrame   engine.MessageConsumer

	hdr    frame.Frame
	b      frame.Begin
	d      frame.Data
	beginB frame.BeginBuilder
	dataB  frame.DataBuilder
	endB   frame.EndBuilder
	winB   frame.WindowBuilder
	flushB frame.FlushBuilder
	chalB  frame.ChallengeBuilder
	ex     mcp.McpBeginEx
	exB    mcp.McpBeginExBuilder
}

func (s *appStream) handle(t frame.FrameType, buf []byte) {
	a := s.a
	if !s.hdr.TryWrap(buf, 0, len(buf)) {
		return
	}
	id := s.hdr.StreamID()
	switch {
	case t == frame.FrameBegin && id == s.InitialID:
		b := s.beginB.Wrap(s.buf, 0, len(s.buf)).
			OriginID(s.Origin).RoutedID(s.Routed).StreamID(s.ReplyID).
			Sequence(0).Acknowledge(0).Maximum(0).TraceID(0).Authorization(0).Affinity(0)
		if s.b.TryWrap(buf, 0, len(buf)) {
			ext := s.b.Extension()
			if a.record != nil {
				a.begins = append(a.begins, append([]byte(nil), ext...))
			}
			if s.ex.TryWrap(ext, 0, len(ext)) && s.ex.Kind() == mcp.McpBeginExKindLifecycle {
				s.lifecycle = true
				a.lifecycle = s
				l := s.ex.Lifecycle()
				b.ExtensionDone(s.exB.WrapSlot(b.ExtensionBuffer()).TypeID(a.mcpType).Lifecycle().
					SessionIDBytes(l.SessionID()).Capabilities(2063).BuildLimit())
				if a.silent {
					return
				}
			}
			if s.ex.TryWrap(ext, 0, len(ext)) && s.ex.Kind() == mcp.McpBeginExKindClientResponse {
				s.flushed = true // an answer's reply carries no client requests
				s.isAnswer = true
				if held := a.held; held != nil {
					a.held = nil
					defer held.answerNow()
				}
			}
		}
		n, _ := b.BuildLimit()
		_ = a.w.Send(frame.FrameBegin, s.buf[:n])
		if a.challenge != nil && !s.lifecycle && !s.flushed {
			n, _ := s.chalB.Wrap(s.buf, 0, len(s.buf)).OriginID(s.Origin).RoutedID(s.Routed).StreamID(s.InitialID).
				Sequence(0).Acknowledge(0).Maximum(0).TraceID(0).Authorization(0).Extension(a.challenge).BuildLimit()
			_ = a.w.Send(frame.FrameChallenge, s.buf[:n])
		}
		s.grant()
	case t == frame.FrameData && id == s.InitialID:
		if s.d.TryWrap(buf, 0, len(buf)) {
			s.inSeq = s.d.Sequence() + int64(s.d.Reserved())
			if a.record != nil && !s.lifecycle {
				a.record = append(a.record, s.d.Payload()...)
			}
			if a.calls != nil && !s.lifecycle && !s.isAnswer {
				s.got = append(s.got, s.d.Payload()...)
			}
		}
		s.grant()
	case t == frame.FrameEnd && id == s.InitialID:
		s.ended = true
		if s.lifecycle {
			s.close()
			return
		}
		s.answer()
	case t == frame.FrameWindow && id == s.ReplyID:
		s.windowed = true
		s.answer()
	case t == frame.FrameAbort && id == s.InitialID, t == frame.FrameReset && id == s.ReplyID:
		s.close()
	}
}

func (s *appStream) grant() {
	window := s.a.window
	if window == 0 {
		window = 32768
	}
	n, _ := enginetest.Window(&s.winB, s.buf, enginetest.Head{OriginID: s.Origin, RoutedID: s.Routed, StreamID: s.InitialID, Seq: s.inSeq, Ack: s.inSeq, Max: window})
	_ = s.a.w.Send(frame.FrameWindow, s.buf[:n])
}

func (s *appStream) answer() {
	if !s.ended || !s.windowed || s.answered {
		return
	}
	if a := s.a; len(a.clientReqs) > 0 && !s.flushed {
		s.flushed = true
		s.flush(a.clientReqs)
		if a.hold {
			a.held = s
			return
		}
	}
	s.answerNow()
}

// answerNow sends the request's result and ends the reply.
func (s *appStream) answerNow() {
	s.answered = true
	s.a.answered++
	res := benchResult
	if a := s.a; !s.isAnswer {
		s.flush(a.after)
		if a.calls != nil {
			a.calls = append(a.calls, string(s.got))
		}
		if len(a.results) > 0 {
			res, a.results = a.results[0], a.results[1:]
		}
	}
	s.resLen = len(res)
	n, _ := enginetest.Data(&s.dataB, s.buf, enginetest.Head{OriginID: s.Origin, RoutedID: s.Routed, StreamID: s.ReplyID}, int32(len(res)), res)
	_ = s.a.w.Send(frame.FrameData, s.buf[:n])
	s.close()
}

// flush sends a FLUSH on the reply with each extension of exts.
func (s *appStream) flush(exts [][]byte) {
	for _, ext := range exts {
		n, _ := s.flushB.Wrap(s.buf, 0, len(s.buf)).OriginID(s.Origin).RoutedID(s.Routed).StreamID(s.ReplyID).
			Sequence(0).Acknowledge(0).Maximum(0).TraceID(0).Authorization(0).BudgetID(0).Reserved(0).
			Extension(ext).BuildLimit()
		_ = s.a.w.Send(frame.FrameFlush, s.buf[:n])
	}
}

func (s *appStream) close() {
	n, _ := enginetest.End(&s.endB, s.buf, enginetest.Head{OriginID: s.Origin, RoutedID: s.Routed, StreamID: s.ReplyID, Seq: int64(s.resLen)})
	_ = s.a.w.Send(frame.FrameEnd, s.buf[:n])
	s.a.free = append(s.a.free, s)
}

var (
	benchHeaders = [][2]string{
		{":scheme", "http"}, {":method", "POST"}, {":path", "/mcp"}, {":authority", "localhost:8080"},
		{"content-type", "application/json"}, {"accept", "application/json, text/event-stream"},
		{"mcp-session-id", "session-1"}, {"mcp-protocol-version", "2025-11-25"},
	}
	benchBody = `{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`
)

// sessionHarness returns a harness with session-1 initialized and the
// tools/call request set.
func sessionHarness(tb testing.TB) *harness {
	h := newHarness(tb)
	h.req.set(tb, [][2]string{
		{":scheme", "http"}, {":method", "POST"}, {":path", "/mcp"}, {":authority", "localhost:8080"},
		{"content-type", "application/json"}, {"accept", "application/json, text/event-stream"},
	}, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}`)
	h.request(tb)
	require.Equal(tb, "200", string(h.req.status))
	require.Equal(tb, "session-1", string(h.req.session))
	h.req.set(tb, benchHeaders, benchBody)
	h.request(tb)
	require.Equal(tb, "200", string(h.req.status))
	require.Equal(tb, `{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"Echo: hi"}]}}`, string(h.req.response))
	return h
}

// TestToolsCallAllocs pins the request path at zero allocations: a
// tools/call from its HTTP frames through the session lookup, the body
// scan and the application stream, to the JSON response.
func TestToolsCallAllocs(t *testing.T) {
	h := sessionHarness(t)
	h.req.parse = false
	allocs := testing.AllocsPerRun(200, func() { h.request(t) })
	require.Zero(t, allocs, "allocations per tools/call")
	require.Equal(t, `{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"Echo: hi"}]}}`, string(h.req.response))
}

// TestStatelessToolsCallAllocs is the same for a 2026-07-28 request,
// whose result gets resultType and _meta spliced in.
func TestStatelessToolsCallAllocs(t *testing.T) {
	h := newHarness(t)
	h.req.set(t, [][2]string{
		{":scheme", "http"}, {":method", "POST"}, {":path", "/mcp"}, {":authority", "localhost:8080"},
		{"content-type", "application/json"}, {"accept", "application/json, text/event-stream"},
		{"mcp-protocol-version", "2026-07-28"}, {"mcp-method", "tools/call"}, {"mcp-name", "echo"},
	}, `{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"},`+
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	h.request(t)
	require.Equal(t, "200", string(h.req.status))
	require.Contains(t, string(h.req.response), `"result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo"`)
	h.req.parse = false
	allocs := testing.AllocsPerRun(200, func() { h.request(t) })
	require.Zero(t, allocs, "allocations per stateless tools/call")
}

// TestStripped2026Allocs: a 2026-07-28 application's result toward a
// 2025-era session loses its resultType, ttlMs, cacheScope and _meta's
// serverInfo, at no allocation.
func TestStripped2026Allocs(t *testing.T) {
	h := sessionHarness(t)
	res := []byte(`{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"up","version":"1"},"x":1},"content":[{"type":"text","text":"Echo: hi"}]}`)
	h.app.results = make([][]byte, 256)
	for i := range h.app.results {
		h.app.results[i] = res
	}
	h.request(t)
	require.Equal(t, `{"jsonrpc":"2.0","id":42,"result":{"_meta":{"x":1},"content":[{"type":"text","text":"Echo: hi"}]}}`, string(h.req.response))
	h.req.parse = false
	allocs := testing.AllocsPerRun(200, func() { h.request(t) })
	require.Zero(t, allocs, "allocations per stripped tools/call")
	h.req.parse = true
	h.request(t)
	require.Equal(t, `{"jsonrpc":"2.0","id":42,"result":{"_meta":{"x":1},"content":[{"type":"text","text":"Echo: hi"}]}}`, string(h.req.response))
}

// TestEventStreamAllocs pins a tools/call whose response turns into an
// event stream at zero allocations once the session's replay ring has
// filled: the priming event, a notification and the result, each with an
// id made from the request's string id, kept for replay.
func TestEventStreamAllocs(t *testing.T) {
	h := sessionHarness(t)
	buf := make([]byte, 256)
	var b mcp.McpFlushExBuilder
	b.Wrap(buf, 0, len(buf)).TypeID(h.app.mcpType).Notification().
		Method("notifications/message").Params(`{"level":"info","data":"working"}`)
	n, err := b.BuildLimit()
	require.NoError(t, err)
	h.app.clientReqs = [][]byte{buf[:n]}
	h.req.set(t, benchHeaders, `{"jsonrpc":"2.0","id":"job:1 é","method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`)
	h.request(t)
	want := "id: job%3A1%20%C3%A9:0\ndata: \n\n" +
		"event: message\nid: job%3A1%20%C3%A9:1\ndata: " + `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"working"}}` + "\n\n" +
		"event: message\nid: job%3A1%20%C3%A9:2\ndata: " + `{"jsonrpc":"2.0","id":"job:1 é","result":{"content":[{"type":"text","text":"Echo: hi"}]}}` + "\n\n"
	require.Equal(t, want, string(h.req.response))
	h.req.parse = false
	for range 64 { // sse.replay's default
		h.request(t)
	}
	allocs := testing.AllocsPerRun(200, func() { h.request(t) })
	require.Zero(t, allocs, "allocations per tools/call on an event stream")
}

// BenchmarkDecodeToolsCall decodes a tools/call end to end inside the
// binding: HTTP request frames in, session lookup, body scan, the
// application stream's BEGIN and params, its result back as the JSON
// response.
func BenchmarkDecodeToolsCall(b *testing.B) {
	h := sessionHarness(b)
	h.req.parse = false
	b.ReportAllocs()
	b.ResetTimer()
	h.requests(b, b.N)
}

// TestStreamingBody sends bodies larger than a buffer slot: the params
// reach the application exactly, in pieces, with contentLength -1, and
// the response carries the id wherever it was.
func TestStreamingBody(t *testing.T) {
	h := sessionHarness(t)
	big := strings.Repeat("0123456789abcdef", 5<<10) // 80 KiB
	for _, tt := range []struct {
		name, body, params, id string
		named                  bool
	}{
		{"id first", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"message":"` + big + `"}}}`,
			`{"name":"echo","arguments":{"message":"` + big + `"}}`, "7", true},
		{"id last, name last", `{"method":"tools/call","params":{"arguments":{"message":"` + big + `"},"name":"echo"},"jsonrpc":"2.0","id":"z"}`,
			`{"arguments":{"message":"` + big + `"},"name":"echo"}`, `"z"`, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h.app.record, h.app.begins = []byte{}, nil
			h.req.set(t, benchHeaders, tt.body)
			h.request(t)
			require.Equal(t, "200", string(h.req.status))
			require.Equal(t, `{"jsonrpc":"2.0","id":`+tt.id+`,"result":{"content":[{"type":"text","text":"Echo: hi"}]}}`, string(h.req.response))
			require.Equal(t, tt.params, string(h.app.record))
			require.Len(t, h.app.begins, 1)
			var ex mcp.McpBeginEx
			require.NoError(t, ex.Wrap(h.app.begins[0], 0, len(h.app.begins[0])))
			call := ex.ToolsCall()
			assert.Equal(t, int32(-1), call.ContentLength())
			assert.Equal(t, tt.named, call.HasName())
			if tt.named {
				assert.Equal(t, "echo", call.NameString())
			}
		})
	}
	h.app.record = nil
}

// TestStreamingBodySlowApplication: a streaming body ends while the
// application's window still holds back part of the params, which stay
// in the slot until the application takes them.
func TestStreamingBodySlowApplication(t *testing.T) {
	h := sessionHarness(t)
	h.app.window = 1000
	big := strings.Repeat("0123456789abcdef", 5<<10)
	h.app.record = []byte{}
	h.req.set(t, benchHeaders, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"message":"`+big+`"}}}`)
	h.request(t)
	require.Equal(t, "200", string(h.req.status))
	assert.Equal(t, `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"Echo: hi"}]}}`, string(h.req.response))
	assert.Equal(t, `{"name":"echo","arguments":{"message":"`+big+`"}}`, string(h.app.record))
}

// head is the header of a frame of the request's on streamID.
func (r *httpRequest) head(streamID, seq, ack int64, max int32) enginetest.Head {
	return enginetest.Head{OriginID: r.origin, RoutedID: r.routed, StreamID: streamID, Seq: seq, Ack: ack, Max: max}
}
