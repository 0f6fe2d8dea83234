package spec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/sluicehq/sluice/engine"
	core "github.com/sluicehq/sluice/engine/frame"
)

// engineNetwork lets scripts play bindings of a running engine, speaking
// the engine's frame protocol through its rings, as Zilla's k3po driver
// does (ZILLA.md §7). An accept on zilla://streams/<name> is an external
// binding of that name, attached to every worker: the engine routes the
// streams its configuration sends to <name> to the script. A connect on
// zilla://streams/<name> opens a stream into the configured binding
// <name> from driverName, on the workers in turn.
//
// Frames are built on the script's goroutine and written into the rings
// by the worker (Worker.Dispatch then Worker.Send), so a script frame
// takes the same path as any binding's. Frames the engine delivers are
// copied into the stream's queue on the worker's thread.
type engineNetwork struct {
	e         *engine.Engine
	mu        sync.Mutex
	listeners map[string]*engineListener
	next      atomic.Uint32
	driverID  int64
}

// driverName is the external binding that script connects originate from.
const driverName = "spec.driver"

func newEngineNetwork() *engineNetwork {
	return &engineNetwork{listeners: map[string]*engineListener{}}
}

// externals returns the bindings to attach for the external names;
// accepted are those a script accepts.
func (n *engineNetwork) externals(names, accepted []string) []engine.Option {
	opts := []engine.Option{engine.WithExternal(driverName, refuseAll{})}
	for _, name := range names {
		n.listeners[name] = &engineListener{name: name, conns: make(chan *engineConn, mailboxSize),
			expected: slices.Contains(accepted, name)}
		opts = append(opts, engine.WithExternal(name, &externalBinding{n: n, name: name}))
	}
	return opts
}

func (n *engineNetwork) started(e *engine.Engine) error {
	n.e = e
	id, ok := e.ResolveID(driverName)
	if !ok {
		return errors.New("spec: the driver binding was not attached")
	}
	n.driverID = id
	return nil
}

func (n *engineNetwork) listen(uri string, _ *streamOptions) (listener, error) {
	name := streamName(uri)
	n.mu.Lock()
	defer n.mu.Unlock()
	l, ok := n.listeners[name]
	if !ok {
		return nil, fmt.Errorf("%s is not an external binding of this run", uri)
	}
	if l.bound.Load() {
		return nil, fmt.Errorf("%s is already accepted by another stream", uri)
	}
	l.bound.Store(true)
	return l, nil
}

func (n *engineNetwork) dial(_ context.Context, uri string, o *streamOptions) (conn, error) {
	name := streamName(uri)
	if name == "" {
		return nil, fmt.Errorf("unsupported address %q with an engine: want zilla://streams/<name>", uri)
	}
	routedID, ok := n.e.ResolveID(name)
	if !ok {
		return nil, fmt.Errorf("the configuration has no binding named %q", name)
	}
	w := n.e.Worker(int(n.next.Add(1)-1) % n.e.Workers())
	c := newEngineConn(w, false)
	c.originID, c.routedID = n.driverID, routedID
	c.fixedID = o.streamID
	return c, nil
}

func (n *engineNetwork) close() {}

func (n *engineNetwork) listener(name string) *engineListener {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.listeners[name]
}

type engineListener struct {
	name  string
	bound atomic.Bool
	// expected is set when a script accepts the name: a stream that comes
	// before the accept has bound waits for it.
	expected bool
	closed   atomic.Bool
	conns    chan *engineConn
}

func (l *engineListener) accept(ctx context.Context) (conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (l *engineListener) close() { l.closed.Store(true) }

// refuseAll is the driver's binding: nothing routes streams to it.
type refuseAll struct{}

func (refuseAll) Attach(*engine.Worker, *engine.BindingConfig) (engine.Handler, error) {
	return refuseAll{}, nil
}

func (refuseAll) NewStream(core.FrameType, []byte) engine.MessageConsumer { return nil }

// externalBinding is an accepted name, attached to every worker.
type externalBinding struct {
	n    *engineNetwork
	name string
}

func (b *externalBinding) Attach(w *engine.Worker, _ *engine.BindingConfig) (engine.Handler, error) {
	return &externalHandler{b: b, w: w}, nil
}

type externalHandler struct {
	b     *externalBinding
	w     *engine.Worker
	begin core.Begin
}

// NewStream hands the stream to the accepting script, or refuses it when
// no accepted block is left to take it. A stream that comes before the
// script's accept has bound (one a binding opens at attach) waits for
// it, as k3po's accepts are bound before the engine starts.
func (h *externalHandler) NewStream(_ core.FrameType, buf []byte) engine.MessageConsumer {
	l := h.b.n.listener(h.b.name)
	if l == nil || !l.bound.Load() && !l.expected || l.closed.Load() || !h.begin.TryWrap(buf, 0, len(buf)) {
		return nil
	}
	c := newEngineConn(h.w, true)
	c.originID, c.routedID = h.begin.OriginID(), h.begin.RoutedID()
	c.initialID, c.replyID = h.begin.StreamID(), engine.ReplyID(h.begin.StreamID())
	select {
	case l.conns <- c:
		return c.onMessage
	default:
		return nil
	}
}

// engineConn is one script stream on the engine. Its fields below q are
// the worker's: only emit and onMessage, both on the worker's thread,
// touch them.
type engineConn struct {
	w      *engine.Worker
	q      *queue
	server bool
	err    atomic.Pointer[error]

	originID, routedID int64
	initialID, replyID int64
	fixedID            int64 // zilla:streamId: the initial id a connect uses, or 0
	outSeq             int64 // sent, in the data direction
	outAck, outLimit   int64 // from the peer's last WINDOW: ack and ack+max
	outMax             int32
	inSeq, inLimit     int64 // received, and ack+max granted to the peer
	buf                []byte
	begin              core.Begin
	data               core.Data
	flush              core.Flush
	end                core.End
	abort              core.Abort
	reset              core.Reset
	window             core.Window
	challenge          core.Challenge
	beginB             core.BeginBuilder
	dataB              core.DataBuilder
	flushB             core.FlushBuilder
	endB               core.EndBuilder
	abortB             core.AbortBuilder
	resetB             core.ResetBuilder
	windowB            core.WindowBuilder
	challengeB         core.ChallengeBuilder
	redirect           core.Redirect
	redirectB          core.RedirectBuilder
}

func newEngineConn(w *engine.Worker, server bool) *engineConn {
	return &engineConn{w: w, q: newQueue(), server: server, buf: make([]byte, max(64<<10, w.MaxFrame()))}
}

func (c *engineConn) inbox() *queue { return c.q }

// maxData keeps a DATA within the engine's largest frame (Worker.MaxFrame),
// which a binding's credit may exceed: k3po's ZillaTarget likewise cuts a
// write to its buffer.
func (c *engineConn) maxData(ext int) int {
	return c.w.MaxFrame() - core.DataPayloadOffset - 4 - ext
}
func (c *engineConn) close() {}

func (c *engineConn) send(_ context.Context, f frame) error {
	if err := c.err.Load(); err != nil {
		return *err
	}
	c.w.Dispatch(func() {
		if err := c.emit(f); err != nil {
			c.err.Store(&err)
		}
	})
	return nil
}

// out and in are the stream ids of the directions this side sends and
// receives DATA on.
func (c *engineConn) out() int64 {
	if c.server {
		return c.replyID
	}
	return c.initialID
}

func (c *engineConn) in() int64 {
	if c.server {
		return c.initialID
	}
	return c.replyID
}

// emit builds f and sends it into the rings; it runs on the worker.
func (c *engineConn) emit(f frame) error {
	buf := c.buf
	var (
		n   int
		err error
		t   core.FrameType
	)
	switch f.kind {
	case frameBegin:
		t = core.FrameBegin
		if !c.server {
			c.initialID = c.fixedID
			if c.initialID == 0 {
				c.initialID = c.w.SupplyInitialID(c.routedID)
			}
			c.replyID = engine.ReplyID(c.initialID)
		}
		n, err = c.beginB.Wrap(buf, 0, len(buf)).
			OriginID(c.originID).RoutedID(c.routedID).StreamID(c.out()).
			Sequence(c.outSeq).Acknowledge(c.outAck).Maximum(c.outMax).
			TraceID(c.w.SupplyTraceID()).Authorization(f.authorization).
			Affinity(f.affinity).Extension(f.ext).
			BuildLimit()
		if err == nil && !c.server {
			return c.w.NewStream(buf[:n], c.onMessage)
		}
	case frameData:
		t = core.FrameData
		b := c.dataB.Wrap(buf, 0, len(buf)).
			OriginID(c.originID).RoutedID(c.routedID).StreamID(c.out()).
			Sequence(c.outSeq).Acknowledge(c.outAck).Maximum(c.outMax).
			Authorization(f.authorization).
			Flags(f.flags).BudgetID(f.budgetID).Reserved(int32(f.reserved))
		if f.payload == nil {
			b.PayloadNull()
		} else {
			b.Payload(f.payload)
		}
		n, err = b.Extension(f.ext).BuildLimit()
		c.outSeq += int64(f.reserved)
	case frameFlush:
		t = core.FrameFlush
		n, err = c.flushB.Wrap(buf, 0, len(buf)).
			OriginID(c.originID).RoutedID(c.routedID).StreamID(c.out()).
			Sequence(c.outSeq).Acknowledge(c.outAck).Maximum(c.outMax).
			Authorization(f.authorization).
			BudgetID(f.budgetID).Reserved(0).Extension(f.ext).
			BuildLimit()
	case frameEnd:
		t = core.FrameEnd
		n, err = c.endB.Wrap(buf, 0, len(buf)).
			OriginID(c.originID).RoutedID(c.routedID).StreamID(c.out()).
			Sequence(c.outSeq).Acknowledge(c.outAck).Maximum(c.outMax).
			Authorization(f.authorization).Extension(f.ext).
			BuildLimit()
	case frameAbort:
		t = core.FrameAbort
		n, err = c.abortB.Wrap(buf, 0, len(buf)).
			OriginID(c.originID).RoutedID(c.routedID).StreamID(c.out()).
			Sequence(c.outSeq).Acknowledge(c.outAck).Maximum(c.outMax).
			Authorization(f.authorization).Extension(f.ext).
			BuildLimit()
	case frameWindow:
		// Credit is incremental in scripts and a limit on the wire: ack
		// everything received and offer the rest of the limit as maximum.
		t = core.FrameWindow
		c.inLimit += f.credit
		n, err = c.windowB.Wrap(buf, 0, len(buf)).
			OriginID(c.originID).RoutedID(c.routedID).StreamID(c.in()).
			Sequence(c.inSeq).Acknowledge(c.inSeq).Maximum(int32(c.inLimit - c.inSeq)).
			Authorization(f.authorization).
			BudgetID(f.budgetID).Padding(int32(f.padding)).Capabilities(f.capabilities).
			BuildLimit()
	case frameReset:
		t = core.FrameReset
		n, err = c.resetB.Wrap(buf, 0, len(buf)).
			OriginID(c.originID).RoutedID(c.routedID).StreamID(c.in()).
			Sequence(c.inSeq).Acknowledge(c.inSeq).Maximum(int32(c.inLimit - c.inSeq)).
			Authorization(f.authorization).Extension(f.ext).
			BuildLimit()
	case frameChallenge:
		t = core.FrameChallenge
		n, err = c.challengeB.Wrap(buf, 0, len(buf)).
			OriginID(c.originID).RoutedID(c.routedID).StreamID(c.in()).
			Sequence(c.inSeq).Acknowledge(c.inSeq).Maximum(int32(c.inLimit - c.inSeq)).
			Authorization(f.authorization).Extension(f.ext).
			BuildLimit()
	case frameRedirect:
		t = core.FrameRedirect
		n, err = c.redirectB.Wrap(buf, 0, len(buf)).
			OriginID(c.originID).RoutedID(c.routedID).StreamID(c.in()).
			Sequence(c.inSeq).Acknowledge(c.inSeq).Maximum(int32(c.inLimit - c.inSeq)).
			Authorization(f.authorization).Affinity(f.affinity).Extension(f.ext).
			BuildLimit()
	default:
		return fmt.Errorf("cannot send %s", f.kind)
	}
	if err != nil {
		return fmt.Errorf("building %s: %w", f.kind, err)
	}
	return c.w.Send(t, buf[:n])
}

// onMessage copies each frame the engine delivers into the queue; it runs
// on the worker.
func (c *engineConn) onMessage(t core.FrameType, buf []byte) {
	switch t {
	case core.FrameBegin:
		if c.begin.TryWrap(buf, 0, len(buf)) {
			c.inSeq = c.begin.Sequence()
			c.q.push(frame{kind: frameBegin, ext: bytes.Clone(c.begin.Extension()),
				authorization: c.begin.Authorization(), affinity: c.begin.Affinity(), stream: c.begin.StreamID()})
		}
	case core.FrameData:
		if d := &c.data; d.TryWrap(buf, 0, len(buf)) {
			c.inSeq = d.Sequence() + int64(d.Reserved())
			var payload []byte
			if d.HasPayload() {
				payload = bytes.Clone(d.Payload())
				if payload == nil {
					payload = []byte{}
				}
			}
			c.q.push(frame{kind: frameData, payload: payload, flags: d.Flags(), reserved: int(d.Reserved()),
				budgetID: d.BudgetID(), ext: bytes.Clone(d.Extension()), authorization: d.Authorization(), stream: d.StreamID()})
		}
	case core.FrameFlush:
		if f := &c.flush; f.TryWrap(buf, 0, len(buf)) {
			c.inSeq = max(c.inSeq, f.Sequence())
			c.q.push(frame{kind: frameFlush, ext: bytes.Clone(f.Extension()), authorization: f.Authorization(), stream: f.StreamID()})
		}
	case core.FrameEnd:
		if f := &c.end; f.TryWrap(buf, 0, len(buf)) {
			c.q.push(frame{kind: frameEnd, ext: bytes.Clone(f.Extension()), authorization: f.Authorization(), stream: f.StreamID()})
		}
	case core.FrameAbort:
		if f := &c.abort; f.TryWrap(buf, 0, len(buf)) {
			c.q.push(frame{kind: frameAbort, ext: bytes.Clone(f.Extension()), authorization: f.Authorization(), stream: f.StreamID()})
		}
	case core.FrameWindow:
		if w := &c.window; w.TryWrap(buf, 0, len(buf)) {
			c.outAck, c.outMax = w.Acknowledge(), w.Maximum()
			limit := w.Acknowledge() + int64(w.Maximum())
			credit := limit - c.outLimit
			c.outLimit = limit
			c.q.push(frame{kind: frameWindow, credit: credit, padding: int(w.Padding()), budgetID: w.BudgetID(),
				capabilities: w.Capabilities(), stream: w.StreamID()})
		}
	case core.FrameReset:
		if r := &c.reset; r.TryWrap(buf, 0, len(buf)) {
			c.q.push(frame{kind: frameReset, ext: bytes.Clone(r.Extension()), authorization: r.Authorization(), stream: r.StreamID()})
		}
	case core.FrameChallenge:
		if ch := &c.challenge; ch.TryWrap(buf, 0, len(buf)) {
			c.q.push(frame{kind: frameChallenge, ext: bytes.Clone(ch.Extension()), authorization: ch.Authorization(), stream: ch.StreamID()})
		}
	case core.FrameRedirect:
		if r := &c.redirect; r.TryWrap(buf, 0, len(buf)) {
			c.q.push(frame{kind: frameRedirect, ext: bytes.Clone(r.Extension()), affinity: r.Affinity(),
				authorization: r.Authorization(), stream: r.StreamID()})
		}
	}
}
