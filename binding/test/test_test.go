package test_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/binding"
	"github.com/sluicehq/sluice/binding/test"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/config"
	"github.com/sluicehq/sluice/engine/frame"
	"github.com/sluicehq/sluice/internal/enginetest"
)

// The test type is registered by the spec runner, not by init.
func init() { test.Register() }

// clientOrigin is the originId of the test initiator, a binding the
// engine does not know.
const clientOrigin = 0x1_0000_0042

// topologies place the initiator and the proxy: on one worker, and on
// either side of two.
// topology places the initiator and the exit on workers of an engine.
type topology struct {
	name           string
	workers        int
	client, target int
}

var topologies = []topology{
	{name: "one worker", workers: 1, client: 0, target: 0},
	{name: "worker 0 to 1", workers: 2, client: 0, target: 1},
	{name: "worker 1 to 0", workers: 2, client: 1, target: 0},
}

// rec is one frame a peer received, decoded, with a copy of its bytes.
type rec struct {
	typ                          frame.FrameType
	originID, routedID, streamID int64
	out                          // the other fields, as a peer sends them
	hasPayload                   bool
	raw                          []byte
}

func decode(t frame.FrameType, buf []byte) rec {
	r := rec{typ: t, raw: append([]byte(nil), buf...)}
	var h frame.Frame
	if !h.TryWrap(buf, 0, len(buf)) {
		return r
	}
	r.originID, r.routedID, r.streamID = h.OriginID(), h.RoutedID(), h.StreamID()
	r.seq, r.ack, r.max = h.Sequence(), h.Acknowledge(), h.Maximum()
	r.traceID, r.authorization = h.TraceID(), h.Authorization()
	switch t {
	case frame.FrameBegin:
		var f frame.Begin
		if f.TryWrap(buf, 0, len(buf)) {
			r.affinity, r.redirectedID, r.ext = f.Affinity(), f.RedirectedID(), string(f.Extension())
		}
	case frame.FrameData:
		var f frame.Data
		if f.TryWrap(buf, 0, len(buf)) {
			r.flags, r.budgetID, r.reserved = f.Flags(), f.BudgetID(), f.Reserved()
			r.hasPayload, r.payload, r.ext = f.HasPayload(), bytes.Clone(f.Payload()), string(f.Extension())
		}
	case frame.FrameFlush:
		decodeBudgeted[frame.Flush](&r, buf)
	case frame.FrameEnd:
		decodeBudgeted[frame.End](&r, buf)
	case frame.FrameWindow:
		var f frame.Window
		if f.TryWrap(buf, 0, len(buf)) {
			r.budgetID, r.padding, r.minimum, r.capabilities = f.BudgetID(), f.Padding(), f.Minimum(), f.Capabilities()
		}
	case frame.FrameAbort:
		decodeExtended[frame.Abort](&r, buf)
	case frame.FrameReset:
		decodeExtended[frame.Reset](&r, buf)
	case frame.FrameChallenge:
		decodeExtended[frame.Challenge](&r, buf)
	}
	return r
}

// extended is a frame flyweight, F, with an extension.
type extended[F any] interface {
	*F
	TryWrap(buf []byte, off, limit int) bool
	Extension() []byte
}

// decodeExtended reads the extension of buf, a frame of type F, into r.
func decodeExtended[F any, PF extended[F]](r *rec, buf []byte) {
	var f F
	if PF(&f).TryWrap(buf, 0, len(buf)) {
		r.ext = string(PF(&f).Extension())
	}
}

// budgeted is a frame flyweight, F, with a budget, a reservation and an
// extension.
type budgeted[F any] interface {
	extended[F]
	BudgetID() int64
	Reserved() int32
}

// decodeBudgeted reads the budget, reservation and extension of buf, a
// frame of type F, into r.
func decodeBudgeted[F any, PF budgeted[F]](r *rec, buf []byte) {
	var f F
	if PF(&f).TryWrap(buf, 0, len(buf)) {
		r.budgetID, r.reserved, r.ext = PF(&f).BudgetID(), PF(&f).Reserved(), string(PF(&f).Extension())
	}
}

// out is a frame a peer sends; the fields a type lacks are ignored.
type out struct {
	seq, ack               int64
	max                    int32
	traceID, authorization int64
	affinity, redirectedID int64
	flags                  uint8
	budgetID               int64
	reserved               int32
	padding, minimum       int32
	capabilities           uint8
	payload                []byte // nil sends a null payload
	ext                    string
}

func build(buf []byte, t frame.FrameType, originID, routedID, streamID int64, o out) (int, error) {
	h := head{originID: originID, routedID: routedID, streamID: streamID, o: o}
	ext := []byte(o.ext)
	switch t {
	case frame.FrameBegin:
		var b frame.BeginBuilder
		return withHead(b.Wrap(buf, 0, len(buf)), h).Affinity(o.affinity).RedirectedID(o.redirectedID).Extension(ext).BuildLimit()
	case frame.FrameData:
		var b frame.DataBuilder
		d := withHead(b.Wrap(buf, 0, len(buf)), h).Flags(o.flags).BudgetID(o.budgetID).Reserved(o.reserved)
		if o.payload == nil {
			d.PayloadNull()
		} else {
			d.Payload(o.payload)
		}
		return d.Extension(ext).BuildLimit()
	case frame.FrameFlush:
		var b frame.FlushBuilder
		return withHead(b.Wrap(buf, 0, len(buf)), h).BudgetID(o.budgetID).Reserved(o.reserved).Extension(ext).BuildLimit()
	case frame.FrameEnd:
		var b frame.EndBuilder
		return withHead(b.Wrap(buf, 0, len(buf)), h).BudgetID(o.budgetID).Reserved(o.reserved).Extension(ext).BuildLimit()
	case frame.FrameAbort:
		var b frame.AbortBuilder
		return withHead(b.Wrap(buf, 0, len(buf)), h).Extension(ext).BuildLimit()
	case frame.FrameWindow:
		var b frame.WindowBuilder
		return withHead(b.Wrap(buf, 0, len(buf)), h).
			BudgetID(o.budgetID).Padding(o.padding).Minimum(o.minimum).Capabilities(o.capabilities).BuildLimit()
	case frame.FrameReset:
		var b frame.ResetBuilder
		return withHead(b.Wrap(buf, 0, len(buf)), h).Extension(ext).BuildLimit()
	case frame.FrameChallenge:
		var b frame.ChallengeBuilder
		return withHead(b.Wrap(buf, 0, len(buf)), h).Extension(ext).BuildLimit()
	}
	panic("build: unsupported frame type " + t.String())
}

// head is what build writes in the header every frame type shares.
type head struct {
	originID, routedID, streamID int64
	o                            out
}

// headBuilder is a frame builder, B, writing the header every frame type
// shares.
type headBuilder[B any] interface {
	OriginID(v int64) B
	RoutedID(v int64) B
	StreamID(v int64) B
	Sequence(v int64) B
	Acknowledge(v int64) B
	Maximum(v int32) B
	Timestamp(v int64) B
	TraceID(v int64) B
	Authorization(v int64) B
}

// withHead writes h with b and returns b for the fields of its type.
func withHead[B headBuilder[B]](b B, h head) B {
	return b.OriginID(h.originID).RoutedID(h.routedID).StreamID(h.streamID).
		Sequence(h.o.seq).Acknowledge(h.o.ack).Maximum(h.o.max).Timestamp(0).TraceID(h.o.traceID).Authorization(h.o.authorization)
}

// peer is one end of a stream, played from its worker's thread: the
// initiator in front of app0, or the exit app1 behind it.
type peer struct {
	e                  *engine.Engine
	worker             int
	originID, routedID int64
	initialID, replyID int64
	frames             chan rec
}

func newPeer(e *engine.Engine, worker int, originID, routedID int64) *peer {
	return &peer{e: e, worker: worker, originID: originID, routedID: routedID, frames: make(chan rec, 256)}
}

func (p *peer) onMessage(t frame.FrameType, buf []byte) { p.frames <- decode(t, buf) }

// send writes one frame on stream id from the peer's worker.
func (p *peer) send(t *testing.T, typ frame.FrameType, id int64, o out) {
	t.Helper()
	require.NoError(t, p.e.Execute(p.worker, func(w *engine.Worker) {
		buf := w.WriteBuffer()
		n, err := build(buf, typ, p.originID, p.routedID, id, o)
		require.NoError(t, err)
		require.NoError(t, w.Send(typ, buf[:n]))
	}))
}

// expect waits for the next frame and checks its type.
func (p *peer) expect(t *testing.T, typ frame.FrameType) rec {
	t.Helper()
	r := enginetest.Receive(t, p.frames, "%s", typ)
	require.Equal(t, typ.String(), r.typ.String(), "received %+v", r)
	return r
}

// expectNone checks that no frame has come for the peer once every
// worker has read what was sent to it, twice over (the frames sent, and
// the proxy's forwarding of them): it waits for the workers' passes, not
// for a while.
// relayed sends a frame of type typ with traceID and ext on from's stream
// fromID and checks that to receives it on toID, trace id and extension
// unchanged.
func relayed(t *testing.T, typ frame.FrameType, from *peer, fromID int64, to *peer, toID, traceID int64, ext string) {
	t.Helper()
	from.send(t, typ, fromID, out{traceID: traceID, ext: ext})
	r := to.expect(t, typ)
	assert.Equal(t, toID, r.streamID)
	assert.Equal(t, traceID, r.traceID)
	assert.Equal(t, ext, r.ext)
}

func (p *peer) expectNone(t *testing.T) {
	t.Helper()
	enginetest.Settle(t, p.e)
	enginetest.Settle(t, p.e)
	select {
	case r := <-p.frames:
		require.FailNow(t, "unexpected frame", "%s %+v", r.typ, r)
	default:
	}
}

// connect opens a stream from worker client to app0 on worker target.
func connect(t *testing.T, e *engine.Engine, client, target int, begin out) *peer {
	t.Helper()
	app0, ok := e.ResolveID("app0")
	require.True(t, ok)
	p := newPeer(e, client, clientOrigin, app0)
	require.NoError(t, e.Execute(client, func(w *engine.Worker) {
		p.initialID = w.SupplyInitialIDOn(target)
		p.replyID = engine.ReplyID(p.initialID)
		buf := w.WriteBuffer()
		n, err := build(buf, frame.FrameBegin, p.originID, p.routedID, p.initialID, begin)
		require.NoError(t, err)
		require.NoError(t, w.NewStream(buf[:n], p.onMessage))
	}))
	return p
}

// exit plays app1, the exit: it accepts each stream as a peer, except
// those whose BEGIN extension is refuse.
type exit struct {
	e        *engine.Engine
	refuse   string
	accepted chan *peer
}

func newExit() *exit { return &exit{refuse: "refuse", accepted: make(chan *peer, 16)} }

type exitHandler struct {
	x *exit
	w *engine.Worker
}

func (x *exit) Attach(w *engine.Worker, _ *engine.BindingConfig) (engine.Handler, error) {
	return &exitHandler{x: x, w: w}, nil
}

func (h *exitHandler) NewStream(_ frame.FrameType, buf []byte) engine.MessageConsumer {
	var b frame.Begin
	if !b.TryWrap(buf, 0, len(buf)) || string(b.Extension()) == h.x.refuse {
		return nil
	}
	p := newPeer(h.x.e, h.w.Index(), b.OriginID(), b.RoutedID())
	p.initialID, p.replyID = b.StreamID(), engine.ReplyID(b.StreamID())
	h.x.accepted <- p
	return p.onMessage
}

func (x *exit) accept(t *testing.T, wait time.Duration) *peer {
	t.Helper()
	select {
	case p := <-x.accepted:
		return p
	case <-time.After(wait):
		require.FailNow(t, "the exit accepted no stream")
		return nil
	}
}

// expectNoAccept checks that the exit has been offered no stream once
// every worker has read what was sent to it, twice over.
func (x *exit) expectNoAccept(t *testing.T) {
	t.Helper()
	enginetest.Settle(t, x.e)
	enginetest.Settle(t, x.e)
	select {
	case <-x.accepted:
		require.FailNow(t, "the exit accepted a stream")
	default:
	}
}

func load(t *testing.T, src string) (*config.Config, error) {
	t.Helper()
	schema, err := config.NewSchema(binding.Fragments()...)
	require.NoError(t, err)
	return config.Load("test.yaml", []byte(src), schema, config.WithExternal("app1"))
}

// proxyConfig is app0, a test proxy to app1, with the given options
// block.
func proxyConfig(options string) string {
	return "name: test\nbindings:\n  app0:\n    type: test\n    kind: proxy\n" + options + "    exit: app1\n"
}

func newEngine(t *testing.T, workers int, cfg *config.Config, x *exit, more ...engine.Option) *engine.Engine {
	t.Helper()
	opts := append([]engine.Option{engine.WithWorkers(workers), engine.WithRingCapacity(1 << 14)}, more...)
	if x != nil {
		opts = append(opts, engine.WithExternal("app1", x))
	}
	e := enginetest.New(t, cfg, opts...)
	if x != nil {
		x.e = e
	}
	return e
}

// start runs an engine whose app0 is a test proxy to the exit x; opts
// add to the engine's options.
// startOn starts an engine laid out as tp, with the proxy's options and
// exit x, and connects an initiator that opens with begin.
func startOn(t *testing.T, tp topology, options string, x *exit, begin out, opts ...engine.Option) (*engine.Engine, *peer) {
	t.Helper()
	e := start(t, tp.workers, options, x, opts...)
	return e, connect(t, e, tp.client, tp.target, begin)
}

func start(t *testing.T, workers int, options string, x *exit, opts ...engine.Option) *engine.Engine {
	t.Helper()
	cfg, err := load(t, proxyConfig(options))
	require.NoError(t, err)
	return enginetest.Run(t, newEngine(t, workers, cfg, x, opts...))
}

// requireNoStreams waits until no worker has a stream registered.
func requireNoStreams(t *testing.T, e *engine.Engine) {
	t.Helper()
	open := -1
	assert.Eventually(t, func() bool {
		open = 0
		for i := 0; i < e.Workers(); i++ {
			require.NoError(t, e.Execute(i, func(w *engine.Worker) {
				s, th := w.Streams()
				open += s + th
			}))
		}
		return open == 0
	}, 2*time.Second, 5*time.Millisecond, "registrations left open")
	assert.Zero(t, open)
}

func ids(t *testing.T, e *engine.Engine) (app0, app1 int64) {
	t.Helper()
	app0, ok := e.ResolveID("app0")
	require.True(t, ok)
	app1, ok = e.ResolveID("app1")
	require.True(t, ok)
	return app0, app1
}

// TestForwardsEveryFrame runs a full stream through the proxy and checks
// that every frame reaches the other side with only its ids changed, and
// that flow control holds at both ends.
func TestForwardsEveryFrame(t *testing.T) {
	for _, tp := range topologies {
		t.Run(tp.name, func(t *testing.T) {
			x := newExit()
			e := start(t, tp.workers, "", x)
			app0, app1 := ids(t, e)

			c := connect(t, e, tp.client, tp.target, out{traceID: 0x71, authorization: 0x72, affinity: 0x73, redirectedID: 0x75, ext: "begin-ext"})
			s := x.accept(t, 5*time.Second)
			b := s.expect(t, frame.FrameBegin)
			assert.Equal(t, app0, b.originID)
			assert.Equal(t, app1, b.routedID)
			assert.Equal(t, s.initialID, b.streamID)
			assert.True(t, engine.IsInitial(b.streamID))
			assert.NotEqual(t, c.initialID, b.streamID, "the proxy opens a stream of its own")
			assert.Equal(t, tp.target, engine.ClientIndex(b.streamID), "allocated by the proxy's worker")
			assert.Equal(t, tp.target, engine.ServerIndex(b.streamID), "and served there")
			assert.Equal(t, int64(0x71), b.traceID)
			assert.Equal(t, int64(0x72), b.authorization)
			assert.Equal(t, int64(0x73), b.affinity)
			assert.Equal(t, int64(0), b.redirectedID, "a redirected id means nothing past the proxy")
			assert.Equal(t, "begin-ext", b.ext)

			// The exit's WINDOW reaches the initiator as it was sent.
			var clientInitial, exitInitial engine.Flow // sent, received
			exitInitial.Grant(8192)
			s.send(t, frame.FrameWindow, s.initialID, out{seq: exitInitial.Seq, ack: exitInitial.Ack, max: exitInitial.Max,
				traceID: 0x81, budgetID: 0x1234, padding: 5, minimum: 3, capabilities: 1 << frame.CapabilityChallenge})
			win := c.expect(t, frame.FrameWindow)
			assert.Equal(t, c.initialID, win.streamID)
			assert.Equal(t, int64(clientOrigin), win.originID)
			assert.Equal(t, app0, win.routedID)
			assert.Equal(t, out{max: 8192, traceID: 0x81, budgetID: 0x1234, padding: 5, minimum: 3,
				capabilities: 1 << frame.CapabilityChallenge}, win.out, "the WINDOW as the exit sent it")
			require.NoError(t, clientInitial.OnWindow(wrapWindow(t, win)))

			// DATA with a payload, an empty one and a null one.
			datas := []struct {
				flags   uint8
				payload []byte
				ext     string
			}{
				{flags: uint8(frame.FlagDataInit), payload: []byte("hello"), ext: "data-ext"},
				{flags: 0, payload: []byte{}},
				{flags: uint8(frame.FlagDataFin), payload: nil, ext: "last"},
			}
			for _, d := range datas {
				require.True(t, clientInitial.CanSend(len(d.payload)))
				seq := clientInitial.Seq
				reserved := clientInitial.Send(len(d.payload))
				c.send(t, frame.FrameData, c.initialID, out{seq: seq, ack: clientInitial.Ack, max: clientInitial.Max,
					traceID: 0x82, flags: d.flags, budgetID: 0x1234, reserved: reserved, payload: d.payload, ext: d.ext})
				got := s.expect(t, frame.FrameData)
				assert.Equal(t, s.initialID, got.streamID)
				assert.Equal(t, seq, got.seq)
				assert.Equal(t, int64(0x82), got.traceID)
				assert.Equal(t, d.flags, got.flags)
				assert.Equal(t, int64(0x1234), got.budgetID)
				assert.Equal(t, reserved, got.reserved)
				assert.Equal(t, d.payload != nil, got.hasPayload, "null stays null, empty stays empty")
				assert.Equal(t, string(d.payload), string(got.payload))
				assert.Equal(t, d.ext, got.ext)
				require.NoError(t, exitInitial.OnData(wrapData(t, got)), "the exit sees DATA within the window it granted")
			}
			assert.Equal(t, int64(5+5+5+0+5), exitInitial.Seq)

			c.send(t, frame.FrameFlush, c.initialID, out{seq: clientInitial.Seq, ack: clientInitial.Ack, max: clientInitial.Max,
				traceID: 0x83, budgetID: 0x1234, ext: "flush-ext"})
			flush := s.expect(t, frame.FrameFlush)
			assert.Equal(t, s.initialID, flush.streamID)
			assert.Equal(t, clientInitial.Seq, flush.seq)
			assert.Equal(t, "flush-ext", flush.ext)

			// The exit acknowledges; the initiator's credit comes back.
			exitInitial.Grant(8192)
			s.send(t, frame.FrameWindow, s.initialID, out{seq: exitInitial.Seq, ack: exitInitial.Ack, max: exitInitial.Max, padding: 5})
			ack := c.expect(t, frame.FrameWindow)
			require.NoError(t, clientInitial.OnWindow(wrapWindow(t, ack)))
			assert.Equal(t, clientInitial.Seq, clientInitial.Ack)
			assert.Equal(t, int64(8192), clientInitial.Available())

			// The reply, the other way round.
			s.send(t, frame.FrameBegin, s.replyID, out{traceID: 0x91, authorization: 0x92, affinity: 0x93, ext: "reply-ext"})
			rb := c.expect(t, frame.FrameBegin)
			assert.Equal(t, c.replyID, rb.streamID)
			assert.Equal(t, int64(clientOrigin), rb.originID)
			assert.Equal(t, app0, rb.routedID)
			assert.Equal(t, int64(0x91), rb.traceID)
			assert.Equal(t, int64(0x92), rb.authorization)
			assert.Equal(t, int64(0x93), rb.affinity)
			assert.Equal(t, "reply-ext", rb.ext)

			var clientReply, exitReply engine.Flow // received, sent
			clientReply.Grant(4096)
			c.send(t, frame.FrameWindow, c.replyID, out{seq: clientReply.Seq, ack: clientReply.Ack, max: clientReply.Max,
				budgetID: 0x5678, padding: 2, minimum: 1, capabilities: 1 << frame.CapabilityChallenge})
			rw := s.expect(t, frame.FrameWindow)
			assert.Equal(t, s.replyID, rw.streamID)
			assert.Equal(t, app0, rw.originID)
			assert.Equal(t, app1, rw.routedID)
			assert.Equal(t, out{max: 4096, budgetID: 0x5678, padding: 2, minimum: 1,
				capabilities: 1 << frame.CapabilityChallenge}, rw.out, "the WINDOW as the initiator sent it")
			require.NoError(t, exitReply.OnWindow(wrapWindow(t, rw)))

			seq := exitReply.Seq
			reserved := exitReply.Send(len("world"))
			s.send(t, frame.FrameData, s.replyID, out{seq: seq, ack: exitReply.Ack, max: exitReply.Max,
				flags: uint8(frame.FlagsDataMessage), budgetID: 0x5678, reserved: reserved, payload: []byte("world"), ext: "reply-data-ext"})
			rd := c.expect(t, frame.FrameData)
			assert.Equal(t, c.replyID, rd.streamID)
			assert.Equal(t, "world", string(rd.payload))
			assert.Equal(t, "reply-data-ext", rd.ext)
			assert.Equal(t, uint8(frame.FlagsDataMessage), rd.flags)
			assert.Equal(t, int32(7), rd.reserved)
			require.NoError(t, clientReply.OnData(wrapData(t, rd)))

			s.send(t, frame.FrameFlush, s.replyID, out{seq: exitReply.Seq, ack: exitReply.Ack, max: exitReply.Max, ext: "reply-flush"})
			assert.Equal(t, "reply-flush", c.expect(t, frame.FrameFlush).ext)

			// CHALLENGE both ways.
			s.send(t, frame.FrameChallenge, s.initialID, out{seq: exitInitial.Seq, ack: exitInitial.Ack, max: exitInitial.Max, ext: "challenge-initial"})
			ci := c.expect(t, frame.FrameChallenge)
			assert.Equal(t, c.initialID, ci.streamID)
			assert.Equal(t, "challenge-initial", ci.ext)
			c.send(t, frame.FrameChallenge, c.replyID, out{seq: clientReply.Seq, ack: clientReply.Ack, max: clientReply.Max, ext: "challenge-reply"})
			cr := s.expect(t, frame.FrameChallenge)
			assert.Equal(t, s.replyID, cr.streamID)
			assert.Equal(t, "challenge-reply", cr.ext)

			// END both ways.
			c.send(t, frame.FrameEnd, c.initialID, out{seq: clientInitial.Seq, ack: clientInitial.Ack, max: clientInitial.Max, traceID: 0x84, ext: "end-ext"})
			end := s.expect(t, frame.FrameEnd)
			assert.Equal(t, s.initialID, end.streamID)
			assert.Equal(t, clientInitial.Seq, end.seq)
			assert.Equal(t, int64(0x84), end.traceID)
			assert.Equal(t, "end-ext", end.ext)
			s.send(t, frame.FrameEnd, s.replyID, out{seq: exitReply.Seq, ack: exitReply.Ack, max: exitReply.Max, ext: "reply-end-ext"})
			rend := c.expect(t, frame.FrameEnd)
			assert.Equal(t, c.replyID, rend.streamID)
			assert.Equal(t, "reply-end-ext", rend.ext)

			c.expectNone(t)
			s.expectNone(t)
			requireNoStreams(t, e)
		})
	}
}

func wrapWindow(t *testing.T, r rec) *frame.Window {
	t.Helper()
	var w frame.Window
	require.True(t, w.TryWrap(r.raw, 0, len(r.raw)))
	return &w
}

func wrapData(t *testing.T, r rec) *frame.Data {
	t.Helper()
	var d frame.Data
	require.True(t, d.TryWrap(r.raw, 0, len(r.raw)))
	return &d
}

// TestClosing checks that RESET and ABORT reach the other side with
// their extensions, that a stream the proxy cannot forward a frame of is
// torn down both ways, and that a stream closed both ways leaves no
// registration on any worker.
func TestClosing(t *testing.T) {
	cases := []struct {
		name string
		run  func(t *testing.T, c, s *peer)
	}{
		{
			name: "exit resets initial, initiator resets reply",
			run: func(t *testing.T, c, s *peer) {
				relayed(t, frame.FrameReset, s, s.initialID, c, c.initialID, 0x61, "reset-initial")
				relayed(t, frame.FrameReset, c, c.replyID, s, s.replyID, 0, "reset-reply")
			},
		},
		{
			name: "initiator aborts, exit aborts reply",
			run: func(t *testing.T, c, s *peer) {
				relayed(t, frame.FrameAbort, c, c.initialID, s, s.initialID, 0x62, "abort-initial")
				relayed(t, frame.FrameAbort, s, s.replyID, c, c.replyID, 0, "abort-reply")
			},
		},
		{
			// DATA beyond the window the exit granted is not passed on:
			// the proxy fails the stream both ways, with that DATA's
			// trace id.
			name: "initiator overruns the window",
			run: func(t *testing.T, c, s *peer) {
				s.send(t, frame.FrameWindow, s.initialID, out{max: 4})
				c.expect(t, frame.FrameWindow)
				c.send(t, frame.FrameData, c.initialID, out{max: 4, traceID: 0x63, reserved: 5, payload: []byte("hello")})
				for _, want := range []struct {
					p  *peer
					t  frame.FrameType
					id int64
				}{
					{c, frame.FrameReset, c.initialID},
					{c, frame.FrameAbort, c.replyID},
					{s, frame.FrameAbort, s.initialID},
					{s, frame.FrameReset, s.replyID},
				} {
					r := want.p.expect(t, want.t)
					assert.Equal(t, want.id, r.streamID)
					assert.Equal(t, int64(0x63), r.traceID)
				}
			},
		},
		{
			name: "initiator ends, exit aborts reply",
			run: func(t *testing.T, c, s *peer) {
				c.send(t, frame.FrameEnd, c.initialID, out{})
				s.expect(t, frame.FrameEnd)
				s.send(t, frame.FrameAbort, s.replyID, out{ext: "gone"})
				assert.Equal(t, "gone", c.expect(t, frame.FrameAbort).ext)
			},
		},
	}
	for _, tp := range topologies {
		for _, tc := range cases {
			t.Run(tp.name+"/"+tc.name, func(t *testing.T) {
				x := newExit()
				e, c := startOn(t, tp, "", x, out{})
				s := x.accept(t, 5*time.Second)
				s.expect(t, frame.FrameBegin)
				s.send(t, frame.FrameBegin, s.replyID, out{})
				c.expect(t, frame.FrameBegin)
				tc.run(t, c, s)
				c.expectNone(t)
				s.expectNone(t)
				requireNoStreams(t, e)
			})
		}
	}
}

// TestRefusedByExit: the engine refuses the proxy's stream to an exit
// that does not accept it, and the initiator sees that RESET.
func TestRefusedByExit(t *testing.T) {
	for _, tp := range topologies {
		t.Run(tp.name, func(t *testing.T) {
			x := newExit()
			e, c := startOn(t, tp, "", x, out{traceID: 0x51, ext: x.refuse})
			r := c.expect(t, frame.FrameReset)
			assert.Equal(t, c.initialID, r.streamID)
			assert.Equal(t, int64(0x51), r.traceID)
			x.expectNoAccept(t)

			// The initiator gives up its reply, as a Zilla initiator
			// cleans up; the proxy passes that on and forgets the stream.
			c.send(t, frame.FrameReset, c.replyID, out{})
			c.expectNone(t)
			requireNoStreams(t, e)
		})
	}
}

// TestDelay holds the BEGIN back by the delay option, through a SIGNAL
// on the proxy's worker, and forwards the frames that came meanwhile
// after it, in order. The engine runs on a manual clock: the BEGIN is
// held a millisecond short of the delay, and released at it.
func TestDelay(t *testing.T) {
	const delay = 200 * time.Millisecond
	for _, option := range []string{"200ms", "PT0.2S"} {
		for _, tp := range topologies {
			t.Run(option+"/"+tp.name, func(t *testing.T) {
				x := newExit()
				clock := enginetest.NewClock()
				e, c := startOn(t, tp, "    options:\n      delay: "+option+"\n", x, out{traceID: 0x41, ext: "late"}, engine.WithClock(clock.Now))
				c.send(t, frame.FrameFlush, c.initialID, out{ext: "early-flush"})
				c.send(t, frame.FrameEnd, c.initialID, out{ext: "early-end"})

				enginetest.Settle(t, e) // the proxy has the BEGIN, and its SIGNAL is armed
				clock.Tick(t, e, delay-time.Millisecond)
				x.expectNoAccept(t)
				clock.Tick(t, e, time.Millisecond)
				s := x.accept(t, 5*time.Second)
				b := s.expect(t, frame.FrameBegin)
				assert.Equal(t, "late", b.ext)
				assert.Equal(t, int64(0x41), b.traceID)
				assert.Equal(t, "early-flush", s.expect(t, frame.FrameFlush).ext)
				assert.Equal(t, "early-end", s.expect(t, frame.FrameEnd).ext)

				s.send(t, frame.FrameBegin, s.replyID, out{ext: "reply"})
				assert.Equal(t, "reply", c.expect(t, frame.FrameBegin).ext)
				s.send(t, frame.FrameEnd, s.replyID, out{})
				c.expect(t, frame.FrameEnd)
				c.expectNone(t) // the SIGNAL stays with the proxy
				requireNoStreams(t, e)
			})
		}
	}
}

// TestDelayReplyReset: a RESET of the reply during the delay releases the
// BEGIN at once, since the SIGNAL's address is gone with it.
func TestDelayReplyReset(t *testing.T) {
	for _, tp := range topologies {
		t.Run(tp.name, func(t *testing.T) {
			x := newExit()
			e, c := startOn(t, tp, "    options:\n      delay: 1h\n", x, out{})
			c.send(t, frame.FrameReset, c.replyID, out{ext: "no-reply"})
			s := x.accept(t, 5*time.Second)
			s.expect(t, frame.FrameBegin)
			assert.Equal(t, "no-reply", s.expect(t, frame.FrameReset).ext)

			c.send(t, frame.FrameAbort, c.initialID, out{})
			s.expect(t, frame.FrameAbort)
			requireNoStreams(t, e)
		})
	}
}

// TestDetach: detaching the proxy relays the ABORTs the engine gives it
// for both of its incoming directions, so each peer learns the stream is
// gone; once they close their own directions nothing is left.
func TestDetach(t *testing.T) {
	x := newExit()
	e := start(t, 2, "", x)
	c := connect(t, e, 0, 1, out{})
	s := x.accept(t, 5*time.Second)
	s.expect(t, frame.FrameBegin)
	s.send(t, frame.FrameBegin, s.replyID, out{})
	c.expect(t, frame.FrameBegin)

	require.NoError(t, e.Detach("app0"))
	assert.Equal(t, s.initialID, s.expect(t, frame.FrameAbort).streamID)
	assert.Equal(t, c.replyID, c.expect(t, frame.FrameAbort).streamID)
	c.send(t, frame.FrameAbort, c.initialID, out{})
	s.send(t, frame.FrameAbort, s.replyID, out{})
	c.expectNone(t)
	s.expectNone(t)
	requireNoStreams(t, e)
}

func TestConfig(t *testing.T) {
	cases := []struct {
		name    string
		src     string
		loadErr string // Load fails with this
		err     error  // else Start fails with this
		msg     string
	}{
		{name: "go duration", src: proxyConfig("    options:\n      delay: 50ms\n")},
		{name: "iso duration", src: proxyConfig("    options:\n      delay: PT0.05S\n")},
		{name: "iso days and time", src: proxyConfig("    options:\n      delay: P1DT2H3M4.5S\n")},
		{name: "no options", src: proxyConfig("")},
		{
			name: "no exit",
			src:  "name: test\nbindings:\n  app0:\n    type: test\n    kind: proxy\n",
			err:  test.ErrNoExit, msg: "test.app0: test: kind proxy requires an exit",
		},
		{
			name: "bad delay",
			src:  proxyConfig("    options:\n      delay: soon\n"),
			err:  test.ErrDelay, msg: `invalid delay "soon" at test.yaml:7: bindings.app0.options.delay: time: invalid duration "soon"`,
		},
		{
			name: "iso months",
			src:  proxyConfig("    options:\n      delay: P1M\n"),
			err:  test.ErrDelay, msg: `unexpected designator 'M'`,
		},
		{
			name: "iso out of order",
			src:  proxyConfig("    options:\n      delay: PT1S2M\n"),
			err:  test.ErrDelay, msg: `unexpected designator 'M'`,
		},
		{
			name: "negative",
			src:  proxyConfig("    options:\n      delay: -5ms\n"),
			err:  test.ErrDelay, msg: "negative",
		},
		{name: "unknown option", src: proxyConfig("    options:\n      delays: 5ms\n"), loadErr: `unknown key "delays"`},
		{name: "wrong kind", src: "name: test\nbindings:\n  app0:\n    type: test\n    kind: server\n    exit: app1\n", loadErr: "bindings.app0.kind"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := load(t, tc.src)
			if tc.loadErr != "" {
				require.Error(t, err)
				assert.ErrorIs(t, err, config.ErrInvalid)
				assert.Contains(t, err.Error(), tc.loadErr)
				return
			}
			require.NoError(t, err)
			e := newEngine(t, 1, cfg, newExit())
			err = e.Start()
			if tc.err == nil {
				require.NoError(t, err)
				require.NoError(t, e.Stop(context.Background()))
				return
			}
			require.Error(t, err)
			assert.ErrorIs(t, err, tc.err)
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
}

// TestKindOutsideSchema: a configuration built in code skips the schema,
// so Attach checks the kind itself.
func TestKindOutsideSchema(t *testing.T) {
	cfg := &config.Config{Name: "test", Bindings: []*config.Binding{{Name: "app0", Type: "test", Kind: "server", Exit: "app1"}}}
	e := newEngine(t, 1, cfg, newExit())
	err := e.Start()
	assert.ErrorIs(t, err, test.ErrKind)
}
