package client_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/binding"
	"github.com/sluicehq/sluice/binding/http"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/config"
	"github.com/sluicehq/sluice/engine/frame"
	"github.com/sluicehq/sluice/internal/enginetest"
)

// BenchmarkRequest sends GET requests one after the other into client0,
// whose exit is an upstream played in process: each op is one request
// stream, its head written on the pooled keep-alive connection, and the
// response parsed and passed back, all on one worker.
func BenchmarkRequest(b *testing.B) {
	e := startBenchEngine(b)
	enginetest.Measure(b, func(n int) error {
		done := make(chan error, 1)
		r := newRequester(e, n, done)
		r.w.Dispatch(r.next)
		return <-done
	})
}

// startBenchEngine starts client0 on one worker, with the external
// bindings driver (the requests' origin) and upstream.
func startBenchEngine(b *testing.B) *engine.Engine {
	b.Helper()
	schema, err := config.NewSchema(append(binding.Fragments(), engine.ComponentFragments()...)...)
	require.NoError(b, err)
	src := "name: test\nbindings:\n  client0:\n    type: http\n    kind: client\n    exit: upstream\n"
	cfg, err := config.Load("bench.yaml", []byte(src), schema, config.WithExternal("driver", "upstream"))
	require.NoError(b, err)
	e, err := engine.New(cfg,
		engine.WithWorkers(1), engine.WithPin(false), engine.WithRingCapacity(1<<20),
		engine.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
		engine.WithBindings(binding.Factory), engine.WithLabels(engine.NewLabels()),
		engine.WithExternal("driver", originBinding{}), engine.WithExternal("upstream", upstreamBinding{}))
	require.NoError(b, err)
	require.NoError(b, e.Start())
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = e.Stop(ctx)
	})
	return e
}

// requester is the application: it sends a GET with no body, waits for the
// whole response, and sends the next, n times, reusing its stream.
type requester struct {
	engine.Stream
	w              *engine.Worker
	origin, routed int64
	typeID         int32
	left           int
	done           chan<- error // nil once the outcome is reported
	fn             engine.MessageConsumer
	fill           func(*frame.BeginBuilder)
	exB            http.HttpBeginExBuilder
}

func newRequester(e *engine.Engine, n int, done chan<- error) *requester {
	r := &requester{w: e.Worker(0), left: n, done: done}
	r.origin, _ = e.ResolveID("driver")
	r.routed, _ = e.ResolveID("client0")
	r.fn, r.fill = r.onMessage, r.beginEx
	return r
}

// beginEx writes the request's HttpBeginEx into the BEGIN being built in
// the worker's write buffer.
func (r *requester) beginEx(b *frame.BeginBuilder) {
	buf := r.w.WriteBuffer()
	off, max, ok := b.ExtensionSlot()
	if !ok {
		return
	}
	eb := r.exB.Wrap(buf, off, max).TypeID(r.typeID)
	hs := eb.Headers()
	hs.Item().Name(":method").Value("GET")
	hs.Item().Name(":scheme").Value("http")
	hs.Item().Name(":authority").Value("upstream")
	hs.Item().Name(":path").Value("/")
	if limit, err := eb.BuildLimit(); err == nil {
		b.ExtensionEnd(limit)
	}
}

// next sends the next request, or reports the run done.
func (r *requester) next() {
	if r.left == 0 {
		r.finish(nil)
		return
	}
	r.left--
	if r.typeID == 0 {
		r.typeID = r.w.Labels().Supply("http")
	}
	r.Connect(r.w, r.origin, r.routed, r.w.SupplyInitialID(r.routed), r.fn)
	err := r.BeginWith(0, r.fill)
	if err == nil {
		err = r.End(nil)
	}
	if err != nil {
		r.finish(err)
	}
}

func (r *requester) onMessage(t frame.FrameType, buf []byte) {
	var err error
	switch t {
	case frame.FrameBegin:
		if _, err = r.OnBegin(buf); err == nil {
			r.In.Grant(64 << 10)
			err = r.Window()
		}
	case frame.FrameData:
		if _, err = r.OnData(buf); err == nil {
			r.In.Grant(64 << 10)
			err = r.Window()
		}
	case frame.FrameEnd:
		if _, err = r.OnEnd(buf); err == nil {
			r.next()
		}
	case frame.FrameWindow:
		_, err = r.OnWindow(buf)
	case frame.FrameAbort, frame.FrameReset:
		err = errors.New("request failed: " + t.String())
	}
	if err != nil {
		r.finish(err)
	}
}

func (r *requester) finish(err error) {
	if r.done != nil {
		r.done <- err
		r.done = nil
	}
}

// originBinding is where the requests come from; no stream goes to it.
type originBinding struct{}

func (originBinding) Attach(*engine.Worker, *engine.BindingConfig) (engine.Handler, error) {
	return originBinding{}, nil
}

func (originBinding) NewStream(frame.FrameType, []byte) engine.MessageConsumer { return nil }

// upstreamBinding plays the upstream server behind client0's connections:
// it answers each request head with a short response, keeping the
// connection alive.
type upstreamBinding struct{}

func (upstreamBinding) Attach(w *engine.Worker, _ *engine.BindingConfig) (engine.Handler, error) {
	return &upstream{w: w}, nil
}

type upstream struct {
	w     *engine.Worker
	begin frame.Begin
}

func (u *upstream) NewStream(_ frame.FrameType, buf []byte) engine.MessageConsumer {
	if !u.begin.TryWrap(buf, 0, len(buf)) {
		return nil
	}
	c := &upstreamConn{tail: make([]byte, 0, 64)}
	c.Accept(u.w, u.begin.OriginID(), u.begin.RoutedID(), u.begin.StreamID())
	return c.onMessage
}

// upstreamConn is one connection to the upstream.
type upstreamConn struct {
	engine.Stream
	tail []byte // the request's last bytes
	owed int    // responses waiting for window
}

var (
	requestEnd = []byte("\r\n\r\n")
	response   = []byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
)

func (c *upstreamConn) onMessage(t frame.FrameType, buf []byte) {
	switch t {
	case frame.FrameBegin:
		if _, err := c.OnBegin(buf); err == nil && c.Begin(nil) == nil {
			c.In.Grant(64 << 10)
			_ = c.Window()
		}
	case frame.FrameData:
		d, err := c.OnData(buf)
		if err != nil {
			_ = c.Reset(nil)
			_ = c.Abort(nil)
			return
		}
		c.tail = append(c.tail, d.Payload()...)
		if bytes.HasSuffix(c.tail, requestEnd) {
			c.tail = c.tail[:0]
			c.owed++
			c.respond()
		}
		c.In.Grant(64 << 10)
		_ = c.Window()
	case frame.FrameWindow:
		if _, err := c.OnWindow(buf); err == nil {
			c.respond()
		}
	case frame.FrameEnd:
		_, _ = c.OnEnd(buf)
		_ = c.End(nil)
	case frame.FrameAbort:
		_, _ = c.OnAbort(buf)
		_ = c.Abort(nil)
	case frame.FrameReset:
		_, _ = c.OnReset(buf)
		_ = c.Reset(nil)
	}
}

// respond sends the responses owed as the window allows.
func (c *upstreamConn) respond() {
	for c.owed > 0 && c.Out.CanSend(len(response)) {
		if c.Data(frame.FlagDataInit|frame.FlagDataFin, response, nil) != nil {
			return
		}
		c.owed--
	}
}
