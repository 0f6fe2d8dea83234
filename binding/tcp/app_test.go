package tcp_test

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/frame"
	"github.com/sluicehq/sluice/engine/frame/proxy"
	"github.com/sluicehq/sluice/internal/enginetest"
)

// event is a frame an application peer received, copied out of the ring.
type event struct {
	t        frame.FrameType
	streamID int64
	seq, ack int64
	max      int32
	reserved int32
	payload  []byte
	ext      []byte
}

// app is an external binding that plays the application side of the tcp
// binding from Go: it accepts the streams a tcp server opens, and opens
// streams into a tcp client. Each stream is a peer.
type app struct {
	e       *engine.Engine
	window  int32 // the window each accepted stream grants at once
	manual  bool  // grant no more credit than window unless told to
	name    string
	workers chan int
	peers   chan *peer
}

func newApp(name string, window int32) *app {
	return &app{name: name, window: window, peers: make(chan *peer, 1024), workers: make(chan int, 1024)}
}

func (a *app) Attach(w *engine.Worker, _ *engine.BindingConfig) (engine.Handler, error) {
	return &appHandler{a: a, w: w}, nil
}

type appHandler struct {
	a     *app
	w     *engine.Worker
	begin frame.Begin
}

// NewStream accepts a tcp server's stream: the peer begins its reply and
// grants its window at once.
func (h *appHandler) NewStream(_ frame.FrameType, buf []byte) engine.MessageConsumer {
	if !h.begin.TryWrap(buf, 0, len(buf)) {
		return nil
	}
	p := &peer{
		a: h.a, worker: h.w.Index(), server: true, events: make(chan event, 4096), credit: make(chan struct{}, 1),
		originID: h.begin.OriginID(), routedID: h.begin.RoutedID(),
		inID: h.begin.StreamID(), outID: engine.ReplyID(h.begin.StreamID()),
	}
	h.a.workers <- h.w.Index()
	h.a.peers <- p
	return p.onMessage
}

// accept waits for the next stream a tcp server opens.
func (a *app) accept(t testing.TB) *peer {
	t.Helper()
	return enginetest.Receive(t, a.peers, "a stream")
}

// peer is one application stream: out is the direction it sends (the
// reply of an accepted stream, the initial of an opened one), in the one
// it receives.
type peer struct {
	a        *app
	worker   int
	server   bool
	events   chan event
	credit   chan struct{} // a WINDOW came: out may have credit again
	originID int64
	routedID int64
	outID    int64
	inID     int64
	out      engine.Flow
	in       engine.Flow
	got      bytes.Buffer // payload received, on the worker
}

// onMessage runs on the worker: it records the frame, keeps the flows,
// and for an accepted stream begins the reply and grants the window.
func (p *peer) onMessage(t frame.FrameType, buf []byte) {
	var h frame.Frame
	if !h.TryWrap(buf, 0, len(buf)) {
		return
	}
	ev := event{t: t, streamID: h.StreamID(), seq: h.Sequence(), ack: h.Acknowledge(), max: h.Maximum()}
	switch t {
	case frame.FrameBegin:
		var b frame.Begin
		if b.TryWrap(buf, 0, len(buf)) {
			ev.ext = bytes.Clone(b.Extension())
			p.in.Seq = b.Sequence()
		}
	case frame.FrameData:
		var d frame.Data
		if d.TryWrap(buf, 0, len(buf)) {
			ev.payload, ev.reserved = bytes.Clone(d.Payload()), d.Reserved()
			if err := p.in.OnData(&d); err != nil {
				panic(err)
			}
			p.got.Write(d.Payload())
		}
	case frame.FrameWindow:
		var w frame.Window
		if w.TryWrap(buf, 0, len(buf)) {
			_ = p.out.OnWindow(&w)
		}
		select {
		case p.credit <- struct{}{}:
		default: // one waiting is enough: the writer looks at out again
		}
	}
	p.events <- ev
	if t == frame.FrameBegin && p.server {
		p.a.e.Worker(p.worker).Dispatch(func() {
			w := p.a.e.Worker(p.worker)
			p.sendBegin(w, nil)
			p.grant(w, p.a.window)
		})
	}
	if t == frame.FrameData && !p.a.manual {
		p.a.e.Worker(p.worker).Dispatch(func() { p.grant(p.a.e.Worker(p.worker), p.a.window) })
	}
}

// on runs fn on the peer's worker and waits for it.
func (p *peer) on(t testing.TB, fn func(w *engine.Worker)) {
	t.Helper()
	require.NoError(t, p.a.e.Execute(p.worker, fn))
}

// expect waits for the next frame and checks its type.
func (p *peer) expect(t testing.TB, typ frame.FrameType) event {
	t.Helper()
	ev := enginetest.Receive(t, p.events, "%s", typ)
	require.Equal(t, typ.String(), ev.t.String(), "frame on stream %#x", ev.streamID)
	return ev
}

// until waits for a frame of type typ, skipping WINDOW frames.
func (p *peer) until(t testing.TB, typ frame.FrameType) event {
	t.Helper()
	for {
		ev := enginetest.Receive(t, p.events, "%s", typ)
		if ev.t == frame.FrameWindow && typ != frame.FrameWindow {
			continue
		}
		require.Equal(t, typ.String(), ev.t.String(), "frame on stream %#x", ev.streamID)
		return ev
	}
}

// expectNone checks that no frame has come once the workers have read
// what was sent to them, twice over (the peer's frames, and the answers
// to them): it waits for the workers' passes, not for a while.
func (p *peer) expectNone(t testing.TB) {
	t.Helper()
	enginetest.Settle(t, p.a.e)
	enginetest.Settle(t, p.a.e)
	select {
	case ev := <-p.events:
		t.Fatalf("unexpected %s on stream %#x", ev.t, ev.streamID)
	default:
	}
}

// read collects DATA until n payload bytes arrived, skipping WINDOW
// (the credit for the peer's own writes) and failing on any other frame;
// it returns the payload and the frames it came in.
func (p *peer) read(t testing.TB, n int) ([]byte, []event) {
	t.Helper()
	var b []byte
	var frames []event
	for len(b) < n {
		var ev event
		select {
		case ev = <-p.events:
		case <-time.After(5 * time.Second):
			t.Fatalf("timed out waiting for %d more bytes", n-len(b))
		}
		if ev.t == frame.FrameWindow {
			continue
		}
		require.Equal(t, frame.FrameData.String(), ev.t.String(), "frame on stream %#x", ev.streamID)
		b = append(b, ev.payload...)
		frames = append(frames, ev)
	}
	return b, frames
}

// grant acknowledges everything received and offers max bytes.
func (p *peer) grant(w *engine.Worker, max int32) {
	p.in.Grant(max)
	_ = enginetest.SendFrame(w, w.WriteBuffer(), frame.FrameWindow, p.head(p.inID, p.in))
}

// head is the header of a frame on stream id, whose flow is f.
func (p *peer) head(id int64, f engine.Flow) enginetest.Head {
	return enginetest.Head{OriginID: p.originID, RoutedID: p.routedID, StreamID: id, Seq: f.Seq, Ack: f.Ack, Max: f.Max}
}

func (p *peer) sendBegin(w *engine.Worker, ext []byte) {
	var b frame.BeginBuilder
	buf := w.WriteBuffer()
	n, err := enginetest.Begin(&b, buf, p.head(p.outID, engine.Flow{})).Extension(ext).BuildLimit()
	if err != nil {
		panic(err)
	}
	if p.server {
		_ = w.Send(frame.FrameBegin, buf[:n])
	} else if err := w.NewStream(buf[:n], p.onMessage); err != nil {
		panic(err)
	}
}

// write sends payload as DATA within the window, and reports whether it
// fit.
func (p *peer) write(t testing.TB, payload []byte) bool {
	sent := false
	err := p.a.e.Execute(p.worker, func(w *engine.Worker) {
		if !p.out.CanSend(len(payload)) {
			return
		}
		seq := p.out.Seq
		reserved := p.out.Send(len(payload))
		var b frame.DataBuilder
		buf := w.WriteBuffer()
		n, err := b.Wrap(buf, 0, len(buf)).OriginID(p.originID).RoutedID(p.routedID).StreamID(p.outID).
			Sequence(seq).Acknowledge(p.out.Ack).Maximum(p.out.Max).
			BudgetID(0).Reserved(reserved).Payload(payload).BuildLimit()
		if err == nil {
			err = w.Send(frame.FrameData, buf[:n])
		}
		sent = err == nil
	})
	return err == nil && sent
}

// writeAll sends payload in pieces as the window allows, waiting for a
// WINDOW whenever the credit runs out. It may run on a goroutine of its
// own: it reports a stall, 10 s without a WINDOW, as an error rather than
// failing t.
func (p *peer) writeAll(t testing.TB, payload []byte) error {
	for len(payload) > 0 {
		var n int
		if err := p.a.e.Execute(p.worker, func(*engine.Worker) {
			n = int(min(p.out.Available(), int64(len(payload)), 16<<10))
		}); err != nil {
			return err
		}
		if n > 0 && p.write(t, payload[:n]) {
			payload = payload[n:]
			continue
		}
		select {
		case <-p.credit:
		case <-time.After(10 * time.Second):
			return fmt.Errorf("no window to write %d more bytes", len(payload))
		}
	}
	return nil
}

// close sends END, ABORT (on out) or RESET (on in).
func (p *peer) close(t testing.TB, typ frame.FrameType) {
	t.Helper()
	var err error
	p.on(t, func(w *engine.Worker) { err = p.sendClose(w, typ) })
	require.NoError(t, err)
}

func (p *peer) sendEnd(w *engine.Worker) { _ = p.sendClose(w, frame.FrameEnd) }

func (p *peer) sendClose(w *engine.Worker, typ frame.FrameType) error {
	switch typ {
	case frame.FrameEnd, frame.FrameAbort:
		return enginetest.SendFrame(w, w.WriteBuffer(), typ, p.head(p.outID, p.out))
	case frame.FrameReset:
		return enginetest.SendFrame(w, w.WriteBuffer(), typ, p.head(p.inID, p.in))
	}
	return fmt.Errorf("cannot close with %s", typ)
}

// open opens a stream from worker into the binding named routed, its BEGIN
// carrying ext.
func (a *app) open(t testing.TB, worker int, routed string, ext []byte) *peer {
	t.Helper()
	originID, ok := a.e.ResolveID(a.name)
	require.True(t, ok)
	routedID, ok := a.e.ResolveID(routed)
	require.True(t, ok)
	p := &peer{a: a, worker: worker, events: make(chan event, 4096), credit: make(chan struct{}, 1),
		originID: originID, routedID: routedID}
	p.on(t, func(w *engine.Worker) {
		p.outID = w.SupplyInitialID(routedID)
		p.inID = engine.ReplyID(p.outID)
		p.sendBegin(w, ext)
	})
	return p
}

// proxyEx builds a ProxyBeginEx naming host:port as the destination.
func proxyEx(t testing.TB, e *engine.Engine, host string, port uint16) []byte {
	t.Helper()
	buf := make([]byte, 256)
	var b proxy.ProxyBeginExBuilder
	b.Wrap(buf, 0, len(buf)).TypeID(e.Labels().Supply("proxy")).Address().Inet().
		Protocol(proxy.ProxyAddressProtocolStream).Source("").Destination(host).SourcePort(0).DestinationPort(port)
	n, err := b.BuildLimit()
	require.NoError(t, err)
	return buf[:n]
}

// addresses decodes the inet address of a ProxyBeginEx.
func addresses(t testing.TB, ext []byte) (src, dst string, srcPort, dstPort uint16) {
	t.Helper()
	var ex proxy.ProxyBeginEx
	require.NoError(t, ex.Wrap(ext, 0, len(ext)))
	a := ex.Address()
	require.Equal(t, proxy.ProxyAddressKindInet, a.Kind())
	in := a.Inet()
	require.Equal(t, proxy.ProxyAddressProtocolStream, in.Protocol())
	return in.SourceString(), in.DestinationString(), in.SourcePort(), in.DestinationPort()
}
