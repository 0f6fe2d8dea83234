package server_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/frame"
	"github.com/sluicehq/sluice/internal/enginetest"
)

// BenchmarkKeepAlive sends requests one after the other on one keep-alive
// connection into net0, whose exit is an echo binding: each op is one
// request parsed, forwarded to the app, answered and written back. The
// driver plays tcp on the worker's thread, sending the next request as the
// last response's final bytes arrive, all on one worker.
func BenchmarkKeepAlive(b *testing.B) {
	e, err := startServerEngine(b, "name: test\nbindings:\n  net0:\n    type: http\n    kind: server\n    exit: echo0\n"+
		"  echo0:\n    type: echo\n    kind: server\n", engine.WithWorkers(1))
	require.NoError(b, err)
	for _, bm := range []struct{ name, request, last string }{
		// echo's reply has no content-length: it goes chunked.
		{"get", "GET /b HTTP/1.1\r\nHost: localhost\r\n\r\n", "\r\n0\r\n\r\n"},
		// echo's reply begins with the request's headers, content-length
		// among them, and echoes the body.
		{"post", "POST /b HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\n\r\nhello", "\r\n\r\nhello"},
	} {
		b.Run(bm.name, func(b *testing.B) {
			enginetest.Measure(b, func(n int) error {
				done := make(chan error, 1)
				c := newKeepAliveConn(e, []byte(bm.request), []byte(bm.last), n, done)
				c.w.Dispatch(c.start)
				return <-done
			})
		})
	}
}

// keepAliveConn is one connection into net0 that sends request n times,
// each once the response before it is complete (its last bytes arrived).
type keepAliveConn struct {
	engine.Stream
	w       *engine.Worker
	routed  int64
	origin  int64
	request []byte
	last    []byte // how each response ends
	left    int
	waiting bool // a request is out and its response not yet complete
	tail    []byte
	done    chan<- error // nil once the outcome is reported
}

func newKeepAliveConn(e *engine.Engine, request, last []byte, n int, done chan error) *keepAliveConn {
	c := &keepAliveConn{w: e.Worker(0), request: request, last: last, left: n, tail: make([]byte, 0, 64), done: done}
	c.origin, _ = e.ResolveID(driverBinding)
	c.routed, _ = e.ResolveID("net0")
	return c
}

func (c *keepAliveConn) start() {
	c.Connect(c.w, c.origin, c.routed, c.w.SupplyInitialID(c.routed), c.onMessage)
	if err := c.Begin(nil); err != nil {
		c.finish(err)
	}
}

func (c *keepAliveConn) onMessage(t frame.FrameType, buf []byte) {
	switch t {
	case frame.FrameWindow:
		if _, err := c.OnWindow(buf); err != nil {
			c.finish(err)
			return
		}
		c.next()
	case frame.FrameBegin:
		if _, err := c.OnBegin(buf); err != nil {
			c.finish(err)
			return
		}
		c.grant()
	case frame.FrameData:
		d, err := c.OnData(buf)
		if err != nil {
			c.finish(err)
			return
		}
		c.onData(d.Payload())
		c.grant()
	case frame.FrameEnd, frame.FrameAbort, frame.FrameReset:
		c.finish(errors.New("connection closed by the server: " + t.String()))
	}
}

// onData keeps the response's last bytes, and sends the next request once
// they end the response.
func (c *keepAliveConn) onData(p []byte) {
	c.tail = append(c.tail, p...)
	if len(c.tail) > 32 {
		c.tail = c.tail[:copy(c.tail, c.tail[len(c.tail)-32:])]
	}
	if c.waiting && bytes.HasSuffix(c.tail, c.last) {
		c.waiting = false
		c.tail = c.tail[:0]
		c.next()
	}
}

func (c *keepAliveConn) next() {
	if c.waiting || c.done == nil {
		return
	}
	if c.left == 0 {
		c.finish(nil)
		return
	}
	if !c.Out.CanSend(len(c.request)) {
		return
	}
	if err := c.Data(frame.FlagDataInit|frame.FlagDataFin, c.request, nil); err != nil {
		c.finish(err)
		return
	}
	c.left--
	c.waiting = true
}

// grant acknowledges the reply bytes read and keeps 64 KiB open.
func (c *keepAliveConn) grant() {
	c.In.Grant(64 << 10)
	if err := c.Window(); err != nil {
		c.finish(err)
	}
}

// finish reports the outcome once and closes the connection.
func (c *keepAliveConn) finish(err error) {
	if c.done == nil {
		return
	}
	_ = c.End(nil)
	_ = c.Reset(nil)
	done := c.done
	c.done = nil
	done <- err
}
