package client_test

import (
	"bytes"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	httpb "github.com/sluicehq/sluice/binding/http"
	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/frame"
	"github.com/sluicehq/sluice/engine/telemetry"
	"github.com/sluicehq/sluice/internal/enginetest"
)

// The harness drives the client kind the way the mcp server kind does
// (driver: one tools/call stream at a time) and answers its HTTP streams
// the way the http client does (fakeHTTP: a JSON response with the
// request's id), both without allocating: what the allocation test and
// the benchmark measure is the client's own path.

type harness struct {
	e      *engine.Engine
	w      *engine.Worker
	driver *driver
	timer  *enginetest.Timer
}

func newHarness(tb testing.TB) *harness {
	tb.Helper()
	cfg, err := enginetest.Load("bench.yaml", `name: test
bindings:
  client0:
    type: mcp
    kind: client
    exit: up
    options:
      server: http://127.0.0.1:9/mcp
      versions: [2025-11-25]
`, "up", "driver")
	require.NoError(tb, err)
	labels := engine.NewLabels()
	up := &fakeHTTP{httpType: labels.Supply("http")}
	e := enginetest.Run(tb, enginetest.New(tb, cfg, engine.WithWorkers(1), engine.WithRingCapacity(1<<22),
		engine.WithLabels(labels), engine.WithExternal("driver", enginetest.Refuse{}), engine.WithExternal("up", up)))
	w := e.Worker(0)
	up.w = w
	d := &driver{w: w, mcpType: labels.Supply("mcp"), buf: make([]byte, 8192), done: make(chan struct{}, 1),
		params: []byte(`{"name":"echo","arguments":{"message":"hi"}}`)}
	d.origin, _ = e.ResolveID("driver")
	d.routed, _ = e.ResolveID("client0")
	d.onFrame = d.handle
	d.startFn = d.start
	return &harness{e: e, w: w, driver: d, timer: enginetest.NewTimer()}
}

func (h *harness) requests(tb testing.TB, n int) {
	h.driver.left = n
	h.w.Dispatch(h.driver.startFn)
	enginetest.ReceiveBy(tb, h.timer, h.driver.done, "the answer")
}

// driver plays the mcp server: a tools/call stream without a session id,
// its params once credit comes, END; the reply's DATA are kept.
type driver struct {
	w                  *engine.Worker
	mcpType            int32
	origin, routed     int64
	initialID, replyID int64
	params             []byte
	sent               bool
	inSeq              int64
	reply              []byte
	replyBuf           [4096]byte
	failed             bool
	buf                []byte
	onFrame            engine.MessageConsumer
	startFn            func()
	done               chan struct{}
	left               int

	hdr    frame.Frame
	d      frame.Data
	e      frame.End
	win    frame.Window
	begin  frame.BeginBuilder
	data   frame.DataBuilder
	end    frame.EndBuilder
	window frame.WindowBuilder
	exB    mcp.McpBeginExBuilder
	endEx  mcp.McpEndEx
}

func (d *driver) start() {
	d.initialID, d.replyID = enginetest.StreamIDs(d.w, d.routed)
	d.sent, d.inSeq, d.reply, d.failed = false, 0, d.replyBuf[:0], false
	b := enginetest.Begin(&d.begin, d.buf, enginetest.Head{OriginID: d.origin, RoutedID: d.routed, StreamID: d.initialID})
	off, max, _ := b.ExtensionSlot()
	limit, err := d.exB.Wrap(d.buf, off, max).TypeID(d.mcpType).ToolsCall().
		SessionIDNull().Name("echo").ContentLength(int32(len(d.params))).BuildLimit()
	if err != nil {
		panic(err)
	}
	n, err := b.ExtensionEnd(limit).BuildLimit()
	if err != nil || d.w.NewStream(d.buf[:n], d.onFrame) != nil {
		panic("driver: begin")
	}
}

func (d *driver) handle(t frame.FrameType, buf []byte) {
	if !d.hdr.TryWrap(buf, 0, len(buf)) {
		return
	}
	id := d.hdr.StreamID()
	switch {
	case t == frame.FrameWindow && id == d.initialID && !d.sent:
		if d.win.TryWrap(buf, 0, len(buf)) && d.win.Maximum() >= int32(len(d.params)) {
			d.sent = true
			initial := enginetest.Head{OriginID: d.origin, RoutedID: d.routed, StreamID: d.initialID, Max: d.win.Maximum()}
			m, _ := enginetest.Data(&d.data, d.buf, initial, int32(len(d.params)), d.params)
			_ = d.w.Send(frame.FrameData, d.buf[:m])
			initial.Seq, initial.Max = int64(len(d.params)), 0
			n, _ := enginetest.End(&d.end, d.buf, initial)
			_ = d.w.Send(frame.FrameEnd, d.buf[:n])
		}
	case t == frame.FrameBegin && id == d.replyID:
		d.grant()
	case t == frame.FrameData && id == d.replyID:
		if d.d.TryWrap(buf, 0, len(buf)) {
			d.inSeq = d.d.Sequence() + int64(d.d.Reserved())
			d.reply = append(d.reply, d.d.Payload()...)
		}
		d.grant()
	case t == frame.FrameEnd && id == d.replyID:
		if d.e.TryWrap(buf, 0, len(buf)) {
			ext := d.e.Extension()
			d.failed = d.endEx.TryWrap(ext, 0, len(ext)) && d.endEx.Outcome() == mcp.McpOutcomeError
		}
		if d.left--; d.left > 0 {
			d.start()
			return
		}
		d.done <- struct{}{}
	case t == frame.FrameAbort && id == d.replyID, t == frame.FrameReset && id == d.initialID:
		d.failed = true
		d.done <- struct{}{}
	}
}

func (d *driver) grant() {
	n, _ := enginetest.Window(&d.window, d.buf, enginetest.Head{OriginID: d.origin, RoutedID: d.routed, StreamID: d.replyID, Seq: d.inSeq, Ack: d.inSeq, Max: 65536})
	_ = d.w.Send(frame.FrameWindow, d.buf[:n])
}

// fakeHTTP answers every request stream as an upstream MCP server behind
// the http client would: initialize with a session, notifications with
// 202, any request with a JSON result carrying its id.
type fakeHTTP struct {
	w        *engine.Worker
	httpType int32
	free     []*httpStream
}

func (f *fakeHTTP) Attach(*engine.Worker, *engine.BindingConfig) (engine.Handler, error) {
	return f, nil
}

func (f *fakeHTTP) NewStream(_ frame.FrameType, buf []byte) engine.MessageConsumer {
	var s *httpStream
	if n := len(f.free); n > 0 {
		s, f.free = f.free[n-1], f.free[:n-1]
	} else {
		s = &httpStream{f: f, buf: make([]byte, 8192)}
		s.onFrame = s.handle
	}
	var b frame.Begin
	if !b.TryWrap(buf, 0, len(buf)) {
		return nil
	}
	s.origin, s.routed, s.initialID = b.OriginID(), b.RoutedID(), b.StreamID()
	s.replyID = engine.ReplyID(s.initialID)
	s.body, s.answered, s.windowed = s.bodyBuf[:0], false, false
	return s.onFrame
}

type httpStream struct {
	f                  *fakeHTTP
	origin, routed     int64
	initialID, replyID int64
	body               []byte
	bodyBuf            [4096]byte
	resp               []byte
	respBuf            [4096]byte
	answered, windowed bool
	buf                []byte
	onFrame            engine.MessageConsumer

	hdr    frame.Frame
	d      frame.Data
	beginB frame.BeginBuilder
	dataB  frame.DataBuilder
	endB   frame.EndBuilder
	winB   frame.WindowBuilder
	exB    httpb.HttpBeginExBuilder
}

var (
	initializeMethod = []byte(`"method":"initialize"`)
	idKey            = []byte(`"id":`)
)

func (s *httpStream) handle(t frame.FrameType, buf []byte) {
	if !s.hdr.TryWrap(buf, 0, len(buf)) {
		return
	}
	id := s.hdr.StreamID()
	switch {
	case t == frame.FrameBegin && id == s.initialID:
		n, _ := enginetest.Window(&s.winB, s.buf, enginetest.Head{OriginID: s.origin, RoutedID: s.routed, StreamID: s.initialID, Max: 8192})
		_ = s.f.w.Send(frame.FrameWindow, s.buf[:n])
	case t == frame.FrameData && id == s.initialID:
		if s.d.TryWrap(buf, 0, len(buf)) {
			s.body = append(s.body, s.d.Payload()...)
			if bytes.HasSuffix(s.body, []byte("}")) {
				s.respond()
			}
		}
	case t == frame.FrameWindow && id == s.replyID:
		s.windowed = true
		s.answer()
	case t == frame.FrameEnd && id == s.initialID, t == frame.FrameAbort && id == s.initialID:
		if s.answered {
			s.f.free = append(s.f.free, s)
		}
	}
}

// respond opens the response head once the body is in.
func (s *httpStream) respond() {
	if s.answered {
		return
	}
	s.answered = true
	status := "200"
	r := s.respBuf[:0]
	if i := bytes.Index(s.body, idKey); i < 0 {
		status = "202"
	} else {
		j := i + len(idKey)
		k := j
		for k < len(s.body) && s.body[k] >= '0' && s.body[k] <= '9' {
			k++
		}
		r = append(r, `{"jsonrpc":"2.0","id":`...)
		r = append(r, s.body[j:k]...)
		if bytes.Contains(s.body, initializeMethod) {
			r = append(r, `,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"fake","version":"1"}}}`...)
		} else {
			r = append(r, `,"result":{"content":[{"type":"text","text":"Echo: hi"}]}}`...)
		}
	}
	s.resp = r
	b := s.beginB.Wrap(s.buf, 0, len(s.buf)).
		OriginID(s.origin).RoutedID(s.routed).StreamID(s.replyID).
		Sequence(0).Acknowledge(0).Maximum(0).TraceID(0).Authorization(0).Affinity(0)
	off, max, _ := b.ExtensionSlot()
	eb := s.exB.Wrap(s.buf, off, max).TypeID(s.f.httpType)
	hs := eb.Headers()
	hs.Item().Name(":status").Value(status)
	hs.Item().Name("content-type").Value("application/json")
	hs.Item().Name("mcp-session-id").Value("fake-1")
	hs.Item().Name("content-length").ValueBytes(strconv.AppendInt(s.bodyBuf[len(s.body):len(s.body)], int64(len(r)), 10))
	limit, _ := eb.BuildLimit()
	n, _ := b.ExtensionEnd(limit).BuildLimit()
	_ = s.f.w.Send(frame.FrameBegin, s.buf[:n])
	s.answer()
}

func (s *httpStream) answer() {
	if !s.answered || !s.windowed {
		return
	}
	if len(s.resp) > 0 {
		n, _ := enginetest.Data(&s.dataB, s.buf, enginetest.Head{OriginID: s.origin, RoutedID: s.routed, StreamID: s.replyID}, int32(len(s.resp)), s.resp)
		_ = s.f.w.Send(frame.FrameData, s.buf[:n])
	}
	n, _ := enginetest.End(&s.endB, s.buf, enginetest.Head{OriginID: s.origin, RoutedID: s.routed, StreamID: s.replyID, Seq: int64(len(s.resp))})
	_ = s.f.w.Send(frame.FrameEnd, s.buf[:n])
	s.resp = nil
	s.windowed = false
}

const echoResult = `{"content":[{"type":"text","text":"Echo: hi"}]}`

// TestToolsCallAllocs pins a tools/call through the client at zero
// allocations once the upstream session is up and the buffers have grown.
func TestToolsCallAllocs(t *testing.T) {
	h := newHarness(t)
	defer func() {
		if raceEnabled {
			t.Log("allocation count skipped under the race detector")
		}
	}()
	h.requests(t, 3)
	require.False(t, h.driver.failed, string(h.driver.reply))
	require.Equal(t, echoResult, string(h.driver.reply))
	allocs := testing.AllocsPerRun(200, func() { h.requests(t, 1) })
	if !raceEnabled {
		require.Zero(t, allocs, "allocations per tools/call")
	}
	require.Equal(t, echoResult, string(h.driver.reply))
}

// A call whose JSON answer has all arrived (its Content-Length) waits for
// the response's END, already sent with the body, instead of resetting
// the response: a RESET per tools/call also counted as a stream error in
// the client's telemetry. (The session's setup is not counted: it runs
// before the first count.)
func TestAnsweredCallsSendNoReset(t *testing.T) {
	h := newHarness(t)
	count := func() (opens, errs int64) {
		require.NoError(t, h.e.Execute(0, func(*engine.Worker) {
			h.e.Telemetry().Each(func(s telemetry.Sample) {
				if b, _ := s.Labels.Get("binding"); b != "client0" {
					return
				}
				switch s.Name {
				case telemetry.StreamErrorsSent:
					errs = s.Value
				case telemetry.StreamOpensSent:
					opens = s.Value
				}
			})
		}))
		return opens, errs
	}
	h.requests(t, 3)
	opens0, errs0 := count()
	h.requests(t, 20)
	require.False(t, h.driver.failed, string(h.driver.reply))
	require.Equal(t, echoResult, string(h.driver.reply))
	opens, errs := count()
	require.Equal(t, int64(40), opens-opens0, "per tools/call: the upstream request and the reply to the caller")
	require.Equal(t, errs0, errs, "RESET or ABORT sent by the client during the tools/calls")
}

// BenchmarkToolsCall runs tools/call streams one after the other through
// the client: params in, the upstream POST out, its JSON answer back as
// the bare result.
func BenchmarkToolsCall(b *testing.B) {
	h := newHarness(b)
	h.requests(b, 3)
	b.ReportAllocs()
	b.ResetTimer()
	h.requests(b, b.N)
}
