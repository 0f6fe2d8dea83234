package spec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"strings"
	"sync"
	"syscall"
)

// tcpNetwork plays tcp://host:port streams over real sockets. A byte
// stream has no BEGIN, WINDOW or extensions, so a tcpConn makes them up:
// the peer has begun once the connection is established and grants
// unbounded credit; END is a half-close (FIN), ABORT a reset (RST), and
// RESET (read abort) shuts the reading side down.
type tcpNetwork struct {
	mu        sync.Mutex
	listeners []net.Listener
}

func newTCPNetwork() *tcpNetwork { return &tcpNetwork{} }

func tcpAddr(uri string) (string, error) {
	addr, ok := strings.CutPrefix(uri, "tcp://")
	if !ok {
		return "", fmt.Errorf("unsupported address %q: want tcp://host:port", uri)
	}
	addr = strings.TrimSuffix(addr, "/")
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return "", fmt.Errorf("address %q: %v", uri, err)
	}
	return addr, nil
}

func (n *tcpNetwork) dial(ctx context.Context, uri string, _ *streamOptions) (conn, error) {
	addr, err := tcpAddr(uri)
	if err != nil {
		return nil, err
	}
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	return newTCPConn(nc.(*net.TCPConn)), nil
}

func (n *tcpNetwork) listen(uri string, _ *streamOptions) (listener, error) {
	addr, err := tcpAddr(uri)
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	n.mu.Lock()
	n.listeners = append(n.listeners, l)
	n.mu.Unlock()
	return &tcpListener{l: l}, nil
}

func (n *tcpNetwork) close() {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, l := range n.listeners {
		_ = l.Close()
	}
	n.listeners = nil
}

type tcpListener struct{ l net.Listener }

func (l *tcpListener) accept(ctx context.Context) (conn, error) {
	type result struct {
		c   net.Conn
		err error
	}
	ch := make(chan result, 1)
	go func() {
		c, err := l.l.Accept()
		ch <- result{c, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, r.err
		}
		return newTCPConn(r.c.(*net.TCPConn)), nil
	case <-ctx.Done():
		_ = l.l.Close()
		return nil, ctx.Err()
	}
}

func (l *tcpListener) close() { _ = l.l.Close() }

// unbounded is the credit a socket grants: the kernel does the flow
// control.
const unbounded = 1 << 40

type tcpConn struct {
	nc   *net.TCPConn
	q    *queue
	once sync.Once
}

func newTCPConn(nc *net.TCPConn) *tcpConn {
	c := &tcpConn{nc: nc, q: newQueue()}
	c.q.push(frame{kind: frameBegin})
	c.q.push(frame{kind: frameWindow, credit: unbounded})
	go c.readLoop()
	return c
}

func (c *tcpConn) readLoop() {
	for {
		buf := make([]byte, 64<<10)
		n, err := c.nc.Read(buf)
		if n > 0 {
			c.q.push(frame{kind: frameData, payload: buf[:n], flags: flagInit | flagFin, reserved: n})
		}
		switch {
		case err == nil:
			continue
		case errors.Is(err, io.EOF):
			c.q.push(frame{kind: frameEnd})
		case errors.Is(err, syscall.ECONNRESET):
			c.q.push(frame{kind: frameAbort})
		}
		if err != nil {
			return
		}
	}
}

func (c *tcpConn) inbox() *queue   { return c.q }
func (c *tcpConn) maxData(int) int { return math.MaxInt }

func (c *tcpConn) send(_ context.Context, f frame) error {
	switch f.kind {
	case frameBegin:
		if len(f.ext) > 0 {
			return errors.New("a tcp stream has no BEGIN extension")
		}
	case frameData:
		if len(f.ext) > 0 {
			return errors.New("a tcp stream has no DATA extension")
		}
		_, err := c.nc.Write(f.payload)
		return err
	case frameFlush, frameWindow:
	case frameEnd:
		return c.nc.CloseWrite()
	case frameAbort:
		_ = c.nc.SetLinger(0)
		return c.nc.Close()
	case frameReset:
		return c.nc.CloseRead()
	default:
		return fmt.Errorf("a tcp stream cannot send %s", f.kind)
	}
	return nil
}

func (c *tcpConn) close() { c.once.Do(func() { _ = c.nc.Close() }) }
