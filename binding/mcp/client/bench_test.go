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
	"github.com/sluicehq/sluice/internal/freelist"
)

// The harness drives the client kind the way the mcp server kind does
// (driver: one tools/call stream at a time) and answers its HTTP streams
// the way the http client does (fakeHTTP: a JSON response with the
// request's id), both without allocating: what the allocation test and
// the benchmark measure is the client's own path.

type harness struct {
	e      *engine.Engine
	w      *engine.Worker
	caller *enginetest.Caller
	timer  *enginetest.Timer
	ok     bool
	endEx  mcp.McpEndEx
}

func newHarness(tb testing.TB) *harness {
	tb.Helper()
	labels := engine.NewLabels()
	up := &fakeHTTP{httpType: labels.Supply("http")}
	e := enginetest.StartFaked(tb, `name: test
bindings:
  client0:
    type: mcp
    kind: client
    exit: up
    options:
      server: http://127.0.0.1:9/mcp
      versions: [2025-11-25]
`, 1, labels, "up", up)
	w := e.Worker(0)
	up.w = w
	// The caller plays the mcp server: a tools/call stream without a
	// session id.
	caller := enginetest.ToolsCallCaller(tb, e, labels.Supply("mcp"), "client0", "", "echo", []byte(`{"name":"echo","arguments":{"message":"hi"}}`), 65536)
	return &harness{e: e, w: w, caller: caller, timer: enginetest.NewTimer()}
}

// requests runs n tools/calls one after the other.
func (h *harness) requests(tb testing.TB, n int) {
	h.ok = h.caller.Call(tb, h.timer, n)
}

// failed reports whether the last request failed: it was refused, reset
// or aborted, or its END carries the error outcome.
func (h *harness) failed() bool {
	ex := h.caller.EndEx()
	return !h.ok || h.endEx.TryWrap(ex, 0, len(ex)) && h.endEx.Outcome() == mcp.McpOutcomeError
}

// fakeHTTP answers every request stream as an upstream MCP server behind
// the http client would: initialize with a session, notifications with
// 202, any request with a JSON result carrying its id, and a GET (no
// body) with 405.
type fakeHTTP struct {
	w        *engine.Worker
	httpType int32
	free     []*httpStream
}

func (f *fakeHTTP) Attach(*engine.Worker, *engine.BindingConfig) (engine.Handler, error) {
	return f, nil
}

func (f *fakeHTTP) NewStream(_ frame.FrameType, buf []byte) engine.MessageConsumer {
	s := freelist.Pop(&f.free)
	if s == nil {
		s = &httpStream{f: f, buf: make([]byte, 8192)}
		s.onFrame = s.handle
	}
	if !s.Accept(buf) {
		return nil
	}
	s.body, s.answered, s.windowed = s.bodyBuf[:0], false, false
	return s.onFrame
}

type httpStream struct {
	f *fakeHTTP
	enginetest.Accepted
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
	ex     httpb.HttpBeginEx
	hd     httpb.HttpHeader
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
	case t == frame.FrameBegin && id == s.InitialID:
		n, _ := enginetest.Window(&s.winB, s.buf, enginetest.Head{OriginID: s.Origin, RoutedID: s.Routed, StreamID: s.InitialID, Max: 8192})
		_ = s.f.w.Send(frame.FrameWindow, s.buf[:n])
		if s.isGet(buf) {
			s.respond() // 405: no event stream here
		}
	case t == frame.FrameData && id == s.InitialID:
		if s.d.TryWrap(buf, 0, len(buf)) {
			s.body = append(s.body, s.d.Payload()...)
			if bytes.HasSuffix(s.body, []byte("}")) {
				s.respond()
			}
		}
	case t == frame.FrameWindow && id == s.ReplyID:
		s.windowed = true
		s.answer()
	case t == frame.FrameEnd && id == s.InitialID, t == frame.FrameAbort && id == s.InitialID:
		if s.answered {
			s.f.free = append(s.f.free, s)
		}
	}
}

// isGet reports whether the request BEGIN in buf is a GET.
func (s *httpStream) isGet(buf []byte) bool {
	var b frame.Begin
	if !b.TryWrap(buf, 0, len(buf)) {
		return false
	}
	ext := b.Extension()
	if !s.ex.TryWrap(ext, 0, len(ext)) {
		return false
	}
	c := s.ex.Headers().Cursor()
	for {
		hb, off, limit, ok := c.Peek()
		if !ok || s.hd.Wrap(hb, off, limit) != nil {
			return false
		}
		c.Advance(s.hd.Limit())
		if string(s.hd.Name()) == ":method" {
			return string(s.hd.Value()) == "GET"
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
	if i := bytes.Index(s.body, idKey); len(s.body) == 0 {
		status = "405"
	} else if i < 0 {
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
		OriginID(s.Origin).RoutedID(s.Routed).StreamID(s.ReplyID).
		Sequence(0).Acknowledge(0).Maximum(0).TraceID(0).Authorization(0).Affinity(0)
	eb := s.exB.WrapSlot(b.ExtensionBuffer()).TypeID(s.f.httpType)
	hs := eb.Headers()
	hs.Item().Name(":status").Value(status)
	hs.Item().Name("content-type").Value("application/json")
	hs.Item().Name("mcp-session-id").Value("fake-1")
	hs.Item().Name("content-length").ValueBytes(strconv.AppendInt(s.bodyBuf[len(s.body):len(s.body)], int64(len(r)), 10))
	n, _ := b.ExtensionDone(eb.BuildLimit()).BuildLimit()
	_ = s.f.w.Send(frame.FrameBegin, s.buf[:n])
	s.answer()
}

func (s *httpStream) answer() {
	if !s.answered || !s.windowed {
		return
	}
	if len(s.resp) > 0 {
		n, _ := enginetest.Data(&s.dataB, s.buf, enginetest.Head{OriginID: s.Origin, RoutedID: s.Routed, StreamID: s.ReplyID}, int32(len(s.resp)), s.resp)
		_ = s.f.w.Send(frame.FrameData, s.buf[:n])
	}
	n, _ := enginetest.End(&s.endB, s.buf, enginetest.Head{OriginID: s.Origin, RoutedID: s.Routed, StreamID: s.ReplyID, Seq: int64(len(s.resp))})
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
	require.False(t, h.failed(), string(h.caller.Reply()))
	require.Equal(t, echoResult, string(h.caller.Reply()))
	allocs := testing.AllocsPerRun(200, func() { h.requests(t, 1) })
	if !raceEnabled {
		require.Zero(t, allocs, "allocations per tools/call")
	}
	require.Equal(t, echoResult, string(h.caller.Reply()))
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
	require.False(t, h.failed(), string(h.caller.Reply()))
	require.Equal(t, echoResult, string(h.caller.Reply()))
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
