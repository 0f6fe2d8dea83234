package tcp_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/frame"
	"github.com/sluicehq/sluice/engine/frame/proxy"
	"github.com/sluicehq/sluice/internal/enginetest"
)

// clientConfig is a tcp client tcp0 whose default destination is
// host:port, and an external application app0 that opens streams into it;
// extra is more lines of the binding.
func clientConfig(host string, port int, extra string) string {
	return strings.Replace(tcpBinding("client", fmt.Sprintf("host: %s\nport: %d", host, port)), "net0", "tcp0", 1) + extra
}

// listenTCP listens on a free loopback port until the test ends.
func listenTCP(t *testing.T) (net.Listener, int) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })
	return l, l.Addr().(*net.TCPAddr).Port
}

// startClient runs a tcp client to host:port with an application app0.
func startClient(t *testing.T, host string, port int, extra string) (*engine.Engine, *app) {
	t.Helper()
	a := newApp("app0", 8192)
	e := startEngine(t, clientConfig(host, port, extra), engineOptions{external: map[string]engine.Binding{"app0": a}})
	return e, a
}

// listenEcho accepts connections on a free loopback port and echoes them;
// each accepted connection is also handed to the test.
func listenEcho(t *testing.T) (int, chan net.Conn) {
	t.Helper()
	l, port := listenTCP(t)
	accepted := make(chan net.Conn, 16)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted <- c
			go func() {
				_, _ = io.Copy(c, c)
				_ = c.(*net.TCPConn).CloseWrite()
			}()
		}
	}()
	return port, accepted
}

// openClient starts a tcp client to host and the port of a loopback
// listener, and opens a stream into it without an extension; it returns
// the engine, the listener and the stream.
func openClient(t *testing.T, host string) (*engine.Engine, net.Listener, *peer) {
	t.Helper()
	l, port := listenTCP(t)
	e, a := startClient(t, host, port, "")
	return e, l, a.open(t, 0, "tcp0", nil)
}

// expectConnected waits for the reply BEGIN of p, a stream into the tcp
// client, the connection it made to listenEcho's accepted, and the
// reply's WINDOW.
func expectConnected(t *testing.T, p *peer, accepted chan net.Conn) {
	t.Helper()
	p.expect(t, frame.FrameBegin)
	<-accepted
	p.expect(t, frame.FrameWindow)
}

// TestClientConnect: the BEGIN's ProxyBeginEx overrides the configured
// destination, the reply BEGIN names both ends of the connection, and
// bytes go both ways until both sides end.
func TestClientConnect(t *testing.T) {
	port, accepted := listenEcho(t)
	e, a := startClient(t, "127.0.0.1", freePort(t), "")
	p := a.open(t, 0, "tcp0", proxyEx(t, e, "127.0.0.1", uint16(port)))
	begin := p.expect(t, frame.FrameBegin)
	src, dst, srcPort, dstPort := addresses(t, begin.ext)
	c := <-accepted
	remote := c.RemoteAddr().(*net.TCPAddr)
	assert.Equal(t, "127.0.0.1", src)
	assert.Equal(t, uint16(remote.Port), srcPort)
	assert.Equal(t, "127.0.0.1", dst)
	assert.Equal(t, uint16(port), dstPort)

	win := p.expect(t, frame.FrameWindow)
	assert.Positive(t, win.max)
	p.on(t, func(w *engine.Worker) { p.grant(w, 8192) })
	msg := pattern(200<<10, 9)
	go func() { _ = p.writeAll(t, msg) }()
	got, _ := p.read(t, len(msg))
	assert.True(t, bytesEqual(msg, got))
	p.close(t, frame.FrameEnd)
	p.until(t, frame.FrameEnd)
	requireNoStreams(t, e)
}

// TestClientDefaults: without an extension the stream goes to the
// configured host and port; localhost needs no lookup.
func TestClientDefaults(t *testing.T) {
	for _, host := range []string{"127.0.0.1", "localhost"} {
		t.Run(host, func(t *testing.T) {
			port, accepted := listenEcho(t)
			e, a := startClient(t, host, port, "")
			p := a.open(t, 0, "tcp0", nil)
			expectConnected(t, p, accepted)
			p.close(t, frame.FrameEnd)
			p.expect(t, frame.FrameEnd)
			requireNoStreams(t, e)
		})
	}
}

// TestClientHostName looks a host name up off the worker's thread.
func TestClientHostName(t *testing.T) {
	host, err := os.Hostname()
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip4", host)
	if err != nil || len(addrs) == 0 || !addrs[0].IsLoopback() {
		t.Skipf("the host name %q does not resolve to a loopback address here (%v %v): nothing to connect to", host, addrs, err)
	}
	port, accepted := listenEcho(t)
	e, a := startClient(t, "127.0.0.1", freePort(t), "")
	p := a.open(t, 1, "tcp0", proxyEx(t, e, host, uint16(port)))
	expectConnected(t, p, accepted)
	p.close(t, frame.FrameAbort)
	p.close(t, frame.FrameReset)
	requireNoStreams(t, e)
}

// TestClientRefused: a connection that cannot be made is a RESET of the
// stream and nothing else; the application gives up its reply and
// nothing is left.
func TestClientRefused(t *testing.T) {
	cases := []struct {
		name  string
		extra string
		ext   func(e *engine.Engine) []byte
	}{
		{name: "connection refused", ext: func(*engine.Engine) []byte { return nil }},
		{name: "invalid host", ext: func(e *engine.Engine) []byte { return proxyEx(t, e, "not a host!", 80) }},
		{name: "unknown host", ext: func(e *engine.Engine) []byte { return proxyEx(t, e, "no-such-host.invalid", 80) }},
		{name: "malformed extension", ext: func(e *engine.Engine) []byte {
			ex := proxyEx(t, e, "127.0.0.1", 80)
			return ex[:len(ex)-3]
		}},
		{name: "unix address", ext: func(e *engine.Engine) []byte {
			buf := make([]byte, 512)
			var b proxy.ProxyBeginExBuilder
			b.Wrap(buf, 0, len(buf)).TypeID(e.Labels().Supply("proxy")).Address().Unix().
				Protocol(proxy.ProxyAddressProtocolStream).Source(make([]byte, 108)).Destination(make([]byte, 108))
			n, err := b.BuildLimit()
			require.NoError(t, err)
			return buf[:n]
		}},
		{name: "not permitted by routes", extra: `    routes:
      - when:
          - cidr: 10.0.0.0/8
`, ext: func(*engine.Engine) []byte { return nil }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e, a := startClient(t, "127.0.0.1", freePort(t), tc.extra)
			p := a.open(t, 0, "tcp0", tc.ext(e))
			p.expect(t, frame.FrameReset)
			p.expectNone(t)
			p.close(t, frame.FrameReset)
			requireNoStreams(t, e)
		})
	}
}

// TestClientEndWhileConnecting: an END that arrives before the connect
// completes shuts the socket's sending side down once it does.
func TestClientEndWhileConnecting(t *testing.T) {
	e, l, p := openClient(t, "localhost")
	p.close(t, frame.FrameEnd)
	c, err := l.Accept()
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.SetReadDeadline(time.Now().Add(5*time.Second)))
	n, err := c.Read(make([]byte, 1))
	assert.Zero(t, n)
	assert.ErrorIs(t, err, io.EOF)
	p.expect(t, frame.FrameBegin)
	_, err = c.Write([]byte("late reply"))
	require.NoError(t, err)
	require.NoError(t, c.(*net.TCPConn).CloseWrite())
	// No WINDOW need come: the application ended its direction, and the
	// engine drops credit for a direction its sender has ended.
	p.on(t, func(w *engine.Worker) { p.grant(w, 8192) })
	got, _ := p.read(t, len("late reply"))
	assert.Equal(t, "late reply", string(got))
	p.until(t, frame.FrameEnd)
	requireNoStreams(t, e)
}

// TestClientPeerResets: the server's RST aborts the reply and resets the
// application's direction.
func TestClientPeerResets(t *testing.T) {
	e, l, p := openClient(t, "127.0.0.1")
	c, err := l.Accept()
	require.NoError(t, err)
	p.expect(t, frame.FrameBegin)
	p.expect(t, frame.FrameWindow)
	p.on(t, func(w *engine.Worker) { p.grant(w, 8192) })
	require.NoError(t, c.(*net.TCPConn).SetLinger(0))
	require.NoError(t, c.Close())
	got := map[string]bool{}
	for range 2 {
		select {
		case ev := <-p.events:
			got[ev.t.String()] = true
		case <-time.After(5 * time.Second):
			t.Fatal("timed out")
		}
	}
	assert.Equal(t, map[string]bool{"ABORT": true, "RESET": true}, got)
	requireNoStreams(t, e)
}

func TestClientPortFromConfig(t *testing.T) {
	port, accepted := listenEcho(t)
	e, a := startClient(t, "127.0.0.1", port, "")
	p := a.open(t, 1, "tcp0", proxyEx(t, e, "127.0.0.1", 0))
	p.expect(t, frame.FrameBegin)
	c := <-accepted
	assert.Equal(t, strconv.Itoa(port), portOf(c.LocalAddr()))
	p.close(t, frame.FrameAbort)
	p.close(t, frame.FrameReset)
	requireNoStreams(t, e)
}

func portOf(a net.Addr) string { return strconv.Itoa(a.(*net.TCPAddr).Port) }

// fullListener listens on a loopback port with an accept queue of one
// and fills it with a connection it never accepts, so that the kernel
// drops the SYN of every further connect, which then neither completes
// nor fails. It returns the port.
func fullListener(t *testing.T) int {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	require.NoError(t, err)
	t.Cleanup(func() { _ = syscall.Close(fd) })
	require.NoError(t, syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}))
	require.NoError(t, syscall.Listen(fd, 0))
	sa, err := syscall.Getsockname(fd)
	require.NoError(t, err)
	port := sa.(*syscall.SockaddrInet4).Port
	c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return port
}

// TestClientConnectTimeout: a connect the peer never answers is refused
// after write-timeout, as a write the socket never takes is: the
// application gets a RESET, and nothing is left. The engine's clock
// stands still but for the test's moves.
func TestClientConnectTimeout(t *testing.T) {
	port := fullListener(t)
	clock := enginetest.NewClock()
	a := newApp("app0", 8192)
	src := strings.Replace(tcpBinding("client", fmt.Sprintf("host: 127.0.0.1\nport: %d\nwrite-timeout: 5s", port)), "net0", "tcp0", 1)
	e := startEngine(t, src, engineOptions{external: map[string]engine.Binding{"app0": a}, options: []engine.Option{engine.WithClock(clock.Now)}})
	p := a.open(t, 0, "tcp0", nil)
	enginetest.Settle(t, e)
	clock.Tick(t, e, 4*time.Second)
	enginetest.Settle(t, e)
	p.expectNone(t)
	clock.Tick(t, e, 2*time.Second)
	p.expect(t, frame.FrameReset)
	p.close(t, frame.FrameReset)
	requireNoStreams(t, e)
}
