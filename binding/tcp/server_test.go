package tcp_test

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/frame"
	"github.com/sluicehq/sluice/internal/enginetest"
)

// connectServer starts a tcp server on a free port whose exit, app0, is
// a, with the engine options o, connects to it and returns the engine,
// the connection and a's side of its stream.
func connectServer(t *testing.T, a *app, o engineOptions) (*engine.Engine, *net.TCPConn, *peer) {
	t.Helper()
	port := freePort(t)
	o.external = map[string]engine.Binding{"app0": a}
	e := startEngine(t, appConfig(port), o)
	c := dial(t, port)
	return e, c, a.accept(t)
}

// openServer is connectServer that also takes the BEGIN the binding opens
// the stream with and the WINDOW it grants on it.
func openServer(t *testing.T, a *app) (*engine.Engine, *net.TCPConn, *peer) {
	t.Helper()
	e, c, p := connectServer(t, a, engineOptions{})
	p.expect(t, frame.FrameBegin)
	p.expect(t, frame.FrameWindow)
	return e, c, p
}

// TestEcho sends messages of several sizes through a tcp server to the
// echo binding and back, then half-closes: the echo's END comes back as
// the end of stream.
func TestEcho(t *testing.T) {
	port := freePort(t)
	e := startEngine(t, echoConfig(port), engineOptions{})
	c := dial(t, port)
	for _, size := range []int{1, 100, 32 << 10, 1 << 20} {
		msg := pattern(size, byte(size))
		errc := make(chan error, 1)
		go func() { _, err := c.Write(msg); errc <- err }()
		got := make([]byte, size)
		_, err := io.ReadFull(c, got)
		require.NoError(t, err)
		require.NoError(t, <-errc)
		require.Equal(t, msg, got, "%d bytes", size)
	}
	require.NoError(t, c.CloseWrite())
	n, err := c.Read(make([]byte, 1))
	assert.Zero(t, n)
	assert.ErrorIs(t, err, io.EOF)
	requireNoStreams(t, e)
}

// TestServerBegin checks the addresses in the BEGIN of an accepted
// connection: source the remote client, destination the listener.
func TestServerBegin(t *testing.T) {
	e, c, p := connectServer(t, newApp("app0", 8192), engineOptions{})
	begin := p.expect(t, frame.FrameBegin)
	assert.True(t, engine.IsInitial(begin.streamID))
	src, dst, srcPort, dstPort := addresses(t, begin.ext)
	local := c.LocalAddr().(*net.TCPAddr)
	assert.Equal(t, "127.0.0.1", src)
	assert.Equal(t, uint16(local.Port), srcPort)
	assert.Equal(t, "127.0.0.1", dst)
	assert.Equal(t, uint16(c.RemoteAddr().(*net.TCPAddr).Port), dstPort)
	require.NoError(t, c.Close())
	// The server's WINDOW for the reply may come before or after the END
	// of a client that closes at once: it answers the peer's reply BEGIN,
	// which races with the poller seeing the FIN.
	p.until(t, frame.FrameEnd)
	p.close(t, frame.FrameEnd)
	requireNoStreams(t, e)
}

// TestServerHalfClose: after the client's FIN the application still
// writes, and its END is the client's end of stream.
func TestServerHalfClose(t *testing.T) {
	e, c, p := connectServer(t, newApp("app0", 8192), engineOptions{})
	p.expect(t, frame.FrameBegin)
	_, err := c.Write([]byte("request"))
	require.NoError(t, err)
	require.NoError(t, c.CloseWrite())
	p.expect(t, frame.FrameWindow)
	got, _ := p.read(t, len("request"))
	assert.Equal(t, "request", string(got))
	p.expect(t, frame.FrameEnd)

	require.NoError(t, p.writeAll(t, []byte("response after the client's end")))
	p.close(t, frame.FrameEnd)
	all, err := io.ReadAll(c)
	require.NoError(t, err)
	assert.Equal(t, "response after the client's end", string(all))
	requireNoStreams(t, e)
}

// TestServerAbortive covers the abortive closes: the client's RST, the
// application's ABORT and its RESET. Each leaves no stream behind.
func TestServerAbortive(t *testing.T) {
	cases := []struct {
		name string
		run  func(t *testing.T, c *net.TCPConn, p *peer)
	}{
		{
			name: "client resets",
			run: func(t *testing.T, c *net.TCPConn, p *peer) {
				require.NoError(t, c.SetLinger(0))
				require.NoError(t, c.Close())
				p.expect(t, frame.FrameAbort)
				p.expect(t, frame.FrameReset)
			},
		},
		{name: "application aborts", run: appCloses(frame.FrameAbort)},
		{
			name: "application overruns its window",
			run: func(t *testing.T, c *net.TCPConn, p *peer) {
				// A DATA reserving a megabyte of the 32 KiB granted.
				p.on(t, func(w *engine.Worker) {
					var b frame.DataBuilder
					buf := w.WriteBuffer()
					n, err := b.Wrap(buf, 0, len(buf)).OriginID(p.originID).RoutedID(p.routedID).StreamID(p.outID).
						Sequence(p.out.Seq).Acknowledge(p.out.Ack).Maximum(p.out.Max).
						BudgetID(0).Reserved(1 << 20).Payload([]byte("too much")).BuildLimit()
					if err == nil {
						err = w.Send(frame.FrameData, buf[:n])
					}
					assert.NoError(t, err)
				})
				require.NoError(t, c.SetReadDeadline(time.Now().Add(5*time.Second)))
				_, err := io.ReadAll(c)
				assert.ErrorIs(t, err, syscall.ECONNRESET)
				p.until(t, frame.FrameAbort)
				p.until(t, frame.FrameReset)
			},
		},
		{name: "application resets", run: appCloses(frame.FrameReset)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e, c, p := openServer(t, newApp("app0", 8192))
			tc.run(t, c, p)
			requireNoStreams(t, e)
		})
	}
}

// appCloses is the case of TestServerAbortive in which the application
// closes with typ (ABORT or RESET): the client's connection is reset, and
// the binding closes the application's other direction with typ as well.
func appCloses(typ frame.FrameType) func(t *testing.T, c *net.TCPConn, p *peer) {
	return func(t *testing.T, c *net.TCPConn, p *peer) {
		p.close(t, typ)
		_, err := c.Read(make([]byte, 1))
		assert.ErrorIs(t, err, syscall.ECONNRESET)
		p.expect(t, typ)
	}
}

// TestServerRefusedByExit: an exit that refuses the stream gets the
// connection reset, and the refused stream leaves nothing behind.
func TestServerRefusedByExit(t *testing.T) {
	port := freePort(t)
	e := startEngine(t, appConfig(port), engineOptions{external: map[string]engine.Binding{"app0": enginetest.Refuse{}}})
	// The reset may even beat the client's connect to completion.
	c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), 5*time.Second)
	if err == nil {
		defer c.Close()
		require.NoError(t, c.SetReadDeadline(time.Now().Add(5*time.Second)))
		_, err = c.Read(make([]byte, 1))
	}
	assert.ErrorIs(t, err, syscall.ECONNRESET)
	requireNoStreams(t, e)
}

// TestServerWindow grants a small window and stops: the binding reads no
// more than the window, the rest stays in the socket and the client's
// writes back up, and every byte arrives, in order, as credit returns.
func TestServerWindow(t *testing.T) {
	const window = 1024
	a := newApp("app0", window)
	a.manual = true
	e, c, p := openServer(t, a)

	const size = 32 << 20
	msg := pattern(size, 7)
	written := make(chan int, 1)
	go func() {
		n, _ := c.Write(msg)
		written <- n
	}()

	first, frames := p.read(t, window)
	assert.Equal(t, msg[:window], first)
	for _, f := range frames {
		assert.LessOrEqual(t, len(f.payload), window)
	}
	p.expectNone(t)
	select {
	case n := <-written:
		t.Fatalf("the client wrote all %d bytes through a %d byte window", n, window)
	default:
	}

	// Credit returns as the application consumes: each DATA acknowledged
	// and 64 KiB offered.
	got := first
	for len(got) < size {
		p.on(t, func(w *engine.Worker) { p.grant(w, 1<<20) })
		ev := p.expect(t, frame.FrameData)
		assert.LessOrEqual(t, len(ev.payload), 1<<20)
		got = append(got, ev.payload...)
	}
	require.Equal(t, size, <-written)
	require.True(t, bytesEqual(msg, got), "bytes out of order")
	require.NoError(t, c.Close())
	p.expect(t, frame.FrameEnd)
	p.close(t, frame.FrameEnd)
	requireNoStreams(t, e)
}

func bytesEqual(a, b []byte) bool { return string(a) == string(b) }

// TestServerSlowReader: the application writes faster than the client
// reads; the socket fills, the binding buffers what it took and returns
// credit only as bytes reach the socket.
func TestServerSlowReader(t *testing.T) {
	e, c, p := openServer(t, newApp("app0", 8192))

	const size = 32 << 20
	msg := pattern(size, 3)
	done := make(chan error, 1)
	go func() {
		err := p.writeAll(t, msg)
		if err == nil {
			err = p.a.e.Execute(p.worker, func(w *engine.Worker) { p.sendEnd(w) })
		}
		done <- err
	}()
	// With nobody reading, the application runs out of credit.
	require.Eventually(t, func() bool {
		var avail int64
		p.on(t, func(*engine.Worker) { avail = p.out.Available() })
		return avail == 0
	}, 5*time.Second, 10*time.Millisecond)
	got, err := io.ReadAll(c)
	require.NoError(t, err)
	require.NoError(t, <-done)
	require.True(t, bytesEqual(msg, got), "bytes out of order or missing: got %d of %d", len(got), size)
	require.NoError(t, c.Close())
	requireNoStreams(t, e)
}

// TestServerManyConnections runs 200 concurrent connections through two
// workers to the echo binding, and checks that each got its own bytes
// back and that nothing is left over: no stream, no buffer slot, no file
// descriptor.
func TestServerManyConnections(t *testing.T) {
	const conns = 200
	port := freePort(t)
	fds := openFDs()
	// Each connection may have a message in flight both ways, up to the
	// 32 KiB windows: the rings hold what flow control lets 100
	// connections a worker send at once (ARCHITECTURE.md §4).
	rec := &logRecorder{}
	e := startEngine(t, echoConfig(port), engineOptions{workers: 2, ring: 16 << 20, logger: slog.New(rec)})
	defer func() {
		if t.Failed() {
			for _, r := range rec.matching("tcp:") {
				t.Log(r)
			}
		}
	}()
	var wg sync.WaitGroup
	errs := make(chan error, conns)
	for i := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- echoOnce(port, pattern(1000+i*97, byte(i)))
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	requireNoStreams(t, e)
	for i := range e.Workers() {
		require.NoError(t, e.Execute(i, func(w *engine.Worker) {
			assert.Zero(t, w.BufferPool().Acquired(), "worker %d buffer slots", i)
		}))
	}
	// What is left open is each worker's epoll instance, eventfd and
	// listening socket; every connection's socket is closed.
	require.Eventually(t, func() bool { return openFDs() <= fds+3*e.Workers() }, 2*time.Second, 10*time.Millisecond,
		"%d descriptors open, %d before the engine", openFDs(), fds)
}

func echoOnce(port int, msg []byte) error {
	c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), 5*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	errc := make(chan error, 1)
	go func() {
		_, err := c.Write(msg)
		if err == nil {
			err = c.(*net.TCPConn).CloseWrite()
		}
		errc <- err
	}()
	got, err := io.ReadAll(c)
	if err != nil {
		return err
	}
	if err := <-errc; err != nil {
		return err
	}
	if string(got) != string(msg) {
		return errors.New("echo differs")
	}
	return nil
}

func openFDs() int {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 0
	}
	return len(entries)
}

// TestServerRoutes sends connections to the exit of the first route whose
// cidr matches the client, and to the binding's exit otherwise.
func TestServerRoutes(t *testing.T) {
	cases := []struct {
		name string
		cidr string
		want string
	}{
		{name: "route matches", cidr: "127.0.0.0/8", want: "app1"},
		{name: "falls through to exit", cidr: "10.0.0.0/8", want: "app0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			port := freePort(t)
			a0, a1 := newApp("app0", 8192), newApp("app1", 8192)
			src := tcpBinding("server", serverOptions(port),
				"routes:", "  - exit: app1", "    when:", "      - cidr: "+tc.cidr, "exit: app0")
			startEngine(t, src, engineOptions{external: map[string]engine.Binding{"app0": a0, "app1": a1}})
			dial(t, port)
			want, other := a0, a1
			if tc.want == "app1" {
				want, other = a1, a0
			}
			want.accept(t)
			// The one connection's stream has gone to one exit: the other
			// would have had it by now, not later.
			select {
			case <-other.peers:
				t.Fatal("the other exit got the stream")
			default:
			}
		})
	}
}

// TestServerPorts listens on a list holding a range: every port accepts.
func TestServerPorts(t *testing.T) {
	p1, p2 := freePort(t), freePort(t)
	src := tcpBinding("server", fmt.Sprintf("host: 127.0.0.1\nport: [%d, \"%d-%d\"]", p1, p2, p2), "exit: echo0") + echoBinding
	startEngine(t, src, engineOptions{})
	for _, port := range []int{p1, p2} {
		require.NoError(t, echoOnce(port, []byte("port "+strconv.Itoa(port))))
	}
}

// fillRing claims every byte of worker i's ring and holds the claims, so
// that every frame for the worker is refused, until release withdraws
// them.
func fillRing(t *testing.T, e *engine.Engine, i int) (release func()) {
	t.Helper()
	var claims []engine.FrameClaim
	require.NoError(t, e.Execute(i, func(w *engine.Worker) {
		id := w.SupplyInitialIDOn(i)
		for size := w.MaxFrame(); size >= frame.HeaderSize; size /= 2 {
			for {
				fc, err := w.Claim(frame.FrameFlush, id, size)
				if err != nil {
					break
				}
				claims = append(claims, fc)
			}
		}
	}))
	require.NotEmpty(t, claims)
	return func() {
		require.NoError(t, e.Execute(i, func(*engine.Worker) {
			for i := range claims {
				claims[i].Abort()
			}
		}))
	}
}

// TestServerRingFull: a connection accepted while the worker's ring is
// full waits for room to open its stream, rather than being reset.
func TestServerRingFull(t *testing.T) {
	port := freePort(t)
	a := newApp("app0", 8192)
	e := startEngine(t, appConfig(port), engineOptions{workers: 1, ring: 1 << 16, external: map[string]engine.Binding{"app0": a}})
	release := fillRing(t, e, 0)
	c := dial(t, port)
	_, err := c.Write([]byte("hello"))
	require.NoError(t, err)
	require.NoError(t, c.CloseWrite())
	// The connection's BEGIN has been sent, into the worker's backlog (it
	// is counted there), and waits.
	require.Eventually(t, func() bool { return opened(t, e, "net0") == 1 }, 5*time.Second, time.Millisecond,
		"the accepted connection's stream was not begun")
	select {
	case <-a.peers:
		t.Fatal("a stream opened through a full ring")
	default:
	}
	release()
	p := a.accept(t)
	p.expect(t, frame.FrameBegin)
	got, _ := p.read(t, 5)
	assert.Equal(t, "hello", string(got))
	p.until(t, frame.FrameEnd)
	p.close(t, frame.FrameEnd)
	all, err := io.ReadAll(c)
	require.NoError(t, err)
	assert.Empty(t, all)
	requireNoStreams(t, e)
}
