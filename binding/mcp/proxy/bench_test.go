package proxy_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/frame"
	"github.com/sluicehq/sluice/internal/enginetest"
	"github.com/sluicehq/sluice/internal/freelist"
)

// The harness plays the mcp server (driver) in front of the proxy and a
// toolkit-like application (app) behind both of its routes, neither of
// which allocates once warm: what the allocation counts measure is the
// proxy's own path for a routed tools/call, BEGIN to END both ways.

type harness struct {
	e      *engine.Engine
	w      *engine.Worker
	caller *enginetest.Caller
	timer  *enginetest.Timer
}

func newHarness(tb testing.TB) *harness {
	tb.Helper()
	labels := engine.NewLabels()
	typeID := labels.Supply("mcp")
	app := &fakeApp{typeID: typeID}
	e := enginetest.StartFaked(tb, `name: test
bindings:
  mcp1:
    type: mcp
    kind: proxy
    routes:
      - exit: app
        when: [{toolkit: a}]
      - exit: app
        when: [{toolkit: b}]
`, 1, labels, "app", app)
	h := &harness{e: e, w: e.Worker(0), timer: enginetest.NewTimer()}
	app.w = h.w
	h.caller = enginetest.ToolsCallCaller(tb, e, typeID, "mcp1", "s1", "a__echo", []byte(`{"name":"a__echo","arguments":{"message":"hi"}}`), 8192)
	return h
}

// call runs one tools/call through the proxy, playing the mcp server, and
// waits for its END.
func (h *harness) call(tb testing.TB) {
	if !h.caller.Call(tb, h.timer, 1) || len(h.caller.Reply()) == 0 {
		tb.Fatal("the call failed")
	}
}

// fakeApp answers every request with a fixed result once its params
// ended, from a free list of streams.
type fakeApp struct {
	w      *engine.Worker
	typeID int32
	free   []*appStream
}

var appResult = []byte(`{"content":[{"type":"text","text":"Echo: hi"}]}`)

func (a *fakeApp) Attach(*engine.Worker, *engine.BindingConfig) (engine.Handler, error) {
	return a, nil
}

func (a *fakeApp) NewStream(_ frame.FrameType, buf []byte) engine.MessageConsumer {
	s := freelist.Pop(&a.free)
	if s == nil {
		s = &appStream{a: a, buf: make([]byte, 4096)}
		s.onFrame = s.handle
	}
	if !s.Accept(buf) {
		return nil
	}
	s.in, s.out, s.ended, s.answered = engine.Flow{}, engine.Flow{}, false, false
	return s.onFrame
}

type appStream struct {
	a *fakeApp
	enginetest.Accepted
	in, out         engine.Flow
	ended, answered bool
	buf             []byte
	onFrame         engine.MessageConsumer

	data   frame.Data
	window frame.Window
	beginB frame.BeginBuilder
	dataB  frame.DataBuilder
	endB   frame.EndBuilder
	winB   frame.WindowBuilder
}

func (s *appStream) handle(t frame.FrameType, buf []byte) {
	w := s.a.w
	switch t {
	case frame.FrameBegin:
		n, _ := s.beginB.Wrap(s.buf, 0, len(s.buf)).OriginID(s.Origin).RoutedID(s.Routed).StreamID(s.ReplyID).
			Sequence(0).Acknowledge(0).Maximum(0).TraceID(0).Authorization(0).Affinity(0).BuildLimit()
		_ = w.Send(frame.FrameBegin, s.buf[:n])
		s.in.Grant(4096)
		n, _ = enginetest.Window(&s.winB, s.buf, flowHead(s.Origin, s.Routed, s.InitialID, &s.in))
		_ = w.Send(frame.FrameWindow, s.buf[:n])
	case frame.FrameData:
		if s.data.TryWrap(buf, 0, len(buf)) {
			_ = s.in.OnData(&s.data)
		}
	case frame.FrameEnd:
		s.ended = true
		s.answer()
	case frame.FrameWindow:
		if s.window.TryWrap(buf, 0, len(buf)) && s.out.OnWindow(&s.window) == nil {
			s.answer()
		}
	case frame.FrameAbort, frame.FrameReset:
		s.answered = true
		s.a.free = append(s.a.free, s)
	}
}

func (s *appStream) answer() {
	if s.answered || !s.ended || !s.out.CanSend(len(appResult)) {
		return
	}
	s.answered = true
	w := s.a.w
	reserved := s.out.Reserved(len(appResult))
	n, _ := enginetest.Data(&s.dataB, s.buf, flowHead(s.Origin, s.Routed, s.ReplyID, &s.out), reserved, appResult)
	_ = w.Send(frame.FrameData, s.buf[:n])
	s.out.Send(len(appResult))
	n, _ = enginetest.End(&s.endB, s.buf, flowHead(s.Origin, s.Routed, s.ReplyID, &s.out))
	_ = w.Send(frame.FrameEnd, s.buf[:n])
	s.a.free = append(s.a.free, s)
}

// TestToolsCallAllocs pins a routed tools/call at zero allocations: the
// prefix stripped from the BEGIN and the params, the reply relayed.
func TestToolsCallAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	h := newHarness(t)
	for range 50 {
		h.call(t)
	}
	allocs := testing.AllocsPerRun(200, func() { h.call(t) })
	require.Zero(t, allocs, "allocations per routed tools/call")
}

// BenchmarkToolsCall measures one routed tools/call through the proxy.
func BenchmarkToolsCall(b *testing.B) {
	h := newHarness(b)
	for range 50 {
		h.call(b)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		h.call(b)
	}
}

// flowHead is the header of a frame on streamID from originID to routedID,
// with the sequence, acknowledge and maximum of f.
func flowHead(originID, routedID, streamID int64, f *engine.Flow) enginetest.Head {
	return enginetest.Head{OriginID: originID, RoutedID: routedID, StreamID: streamID, Seq: f.Seq, Ack: f.Ack, Max: f.Max}
}
