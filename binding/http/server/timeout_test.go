package server_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	_ "github.com/sluicehq/sluice/binding/tcp"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/internal/enginetest"
)

// socketServer is a tcp server on a loopback port, in front of the http
// server under test and the echo binding, on an engine whose clock the
// test moves.
type socketServer struct {
	e     *engine.Engine
	clock *enginetest.Clock
	port  int
}

// startSocketServer starts the engine; options are the http server's
// option lines (indented under options:), or empty.
func startSocketServer(t *testing.T, options string) *socketServer {
	t.Helper()
	port := enginetest.FreePort(t)
	src := fmt.Sprintf("name: test\nbindings:\n  tcp0:\n    type: tcp\n    kind: server\n"+
		"    options: {host: 127.0.0.1, port: %d}\n    exit: net0\n"+
		"  net0:\n    type: http\n    kind: server\n    exit: echo0\n", port)
	if options != "" {
		src += "    options:\n" + options
	}
	src += "  echo0:\n    type: echo\n    kind: server\n"
	clock := enginetest.NewClock()
	e, err := startServerEngine(t, src, engine.WithClock(clock.Now))
	require.NoError(t, err)
	return &socketServer{e: e, clock: clock, port: port}
}

// dial connects a client, and returns once the connection's stream has
// reached the http server.
func (s *socketServer) dial(t *testing.T) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(s.port), 5*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	s.settle(t)
	return c
}

// send writes p and returns once the engine has had the time to read it:
// a tcp read and the DATA it carries to the http server are two passes.
func (s *socketServer) send(t *testing.T, c net.Conn, p string) {
	t.Helper()
	_, err := c.Write([]byte(p))
	require.NoError(t, err)
	s.settle(t)
}

func (s *socketServer) settle(t *testing.T) {
	for range 3 {
		enginetest.Settle(t, s.e)
	}
}

// tick moves the engine's clock by d and fires the timers that makes due.
func (s *socketServer) tick(t *testing.T, d time.Duration) {
	t.Helper()
	s.clock.Tick(t, s.e, d)
	s.settle(t)
}

// readAll reads what the server sends until it closes the connection, in
// at most five seconds; a reset after the bytes counts as a close.
func readAll(t *testing.T, c net.Conn) string {
	t.Helper()
	require.NoError(t, c.SetReadDeadline(time.Now().Add(5*time.Second)))
	b, err := io.ReadAll(c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("the server left the connection open; read %q", b)
	}
	return string(b)
}

// readResponse reads one response of the echo binding, framed by its
// Content-Length or chunked, and returns its body.
func readResponse(t *testing.T, r *bufio.Reader, c net.Conn) string {
	t.Helper()
	require.NoError(t, c.SetReadDeadline(time.Now().Add(5*time.Second)))
	status, err := r.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "HTTP/1.1 200 OK\r\n", status)
	length := -1
	for {
		line, err := r.ReadString('\n')
		require.NoError(t, err)
		if line == "\r\n" {
			break
		}
		if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
			length, err = strconv.Atoi(strings.TrimSpace(v))
			require.NoError(t, err)
		}
	}
	if length >= 0 {
		b := make([]byte, length)
		_, err = io.ReadFull(r, b)
		require.NoError(t, err)
		return string(b)
	}
	var body strings.Builder
	for {
		line, err := r.ReadString('\n')
		require.NoError(t, err)
		n, err := strconv.ParseInt(strings.TrimSpace(line), 16, 32)
		require.NoError(t, err)
		chunk := make([]byte, n+2)
		_, err = io.ReadFull(r, chunk)
		require.NoError(t, err)
		if n == 0 {
			return body.String()
		}
		body.Write(chunk[:n])
	}
}

const timeouts = "      header-timeout: 10s\n      body-timeout: 20s\n      idle-timeout: 40s\n"

// TestServerTimeoutSilentConnection: a connection that sends nothing is
// closed after header-timeout, with no response.
func TestServerTimeoutSilentConnection(t *testing.T) {
	s := startSocketServer(t, timeouts)
	c := s.dial(t)
	s.tick(t, 9*time.Second)
	s.tick(t, 2*time.Second)
	assert.Equal(t, "", readAll(t, c))
}

// TestServerTimeoutHead: a head must be complete header-timeout after its
// first byte, however slowly it trickles in; one that is not gets 408 and
// the connection closes.
func TestServerTimeoutHead(t *testing.T) {
	s := startSocketServer(t, timeouts)

	c := s.dial(t)
	s.send(t, c, "POST / HTTP/1.1\r\n")
	s.tick(t, 5*time.Second)
	s.send(t, c, "Host: localhost\r\n")
	s.tick(t, 4*time.Second)
	s.send(t, c, "Content-Length: 2\r\n\r\nok")
	assert.Equal(t, "ok", readResponse(t, bufio.NewReader(c), c), "the head came within header-timeout")

	slow := s.dial(t)
	s.send(t, slow, "POST / HTTP/1.1\r\n")
	s.tick(t, 5*time.Second)
	s.send(t, slow, "Host: localhost\r\n")
	s.tick(t, 6*time.Second)
	assert.Equal(t, "HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n", readAll(t, slow))
}

// TestServerTimeoutBody: body-timeout runs between two reads of a body:
// a body whose bytes keep coming is read to its end however long it
// takes, one that stops for longer gets 408 and the connection closes.
func TestServerTimeoutBody(t *testing.T) {
	s := startSocketServer(t, timeouts)

	c := s.dial(t)
	s.send(t, c, "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 6\r\n\r\nab")
	s.tick(t, 19*time.Second)
	s.send(t, c, "cd")
	s.tick(t, 19*time.Second)
	s.send(t, c, "ef")
	assert.Equal(t, "abcdef", readResponse(t, bufio.NewReader(c), c))

	stalled := s.dial(t)
	s.send(t, stalled, "POST / HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n")
	s.tick(t, 21*time.Second)
	assert.Equal(t, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n",
		readAll(t, stalled), "the response under way is cut short")
}

// TestServerTimeoutIdle: a kept-alive connection carries another request
// within idle-timeout of its last response, and is closed after it.
func TestServerTimeoutIdle(t *testing.T) {
	s := startSocketServer(t, timeouts)
	c := s.dial(t)
	r := bufio.NewReader(c)
	const request = "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2\r\n\r\n"
	s.send(t, c, request+"r1")
	assert.Equal(t, "r1", readResponse(t, r, c))
	s.tick(t, 39*time.Second)
	s.send(t, c, request+"r2")
	assert.Equal(t, "r2", readResponse(t, r, c))
	s.tick(t, 39*time.Second)
	s.tick(t, 2*time.Second)
	rest, err := io.ReadAll(r)
	require.NoError(t, err)
	assert.Empty(t, rest)
}

// TestServerTimeoutLinger: after its last response, a connection whose
// client goes on sending is reset once the linger time has passed, rather
// than read and dropped for as long as the client likes.
func TestServerTimeoutLinger(t *testing.T) {
	s := startSocketServer(t, "      limits: {body: 1000}\n")
	c := s.dial(t)
	s.send(t, c, "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1000000\r\n\r\n")
	chunk := strings.Repeat("x", 1024)
	assert.Equal(t, "HTTP/1.1 413 Content Too Large\r\nConnection: close\r\n\r\n", readAll(t, c))
	s.send(t, c, chunk) // read and dropped
	s.tick(t, 6*time.Second)
	// The server's socket is gone: a write meets a reset, at the latest
	// the one after it.
	var err error
	for i := 0; i < 100 && err == nil; i++ {
		_, err = c.Write([]byte(chunk))
		if err == nil {
			s.settle(t)
		}
	}
	require.Error(t, err, "the connection is still open")
}

// TestServerBodyLimit: a body over the limit is answered 413 as soon as
// the limit is known to be passed, and the connection closes: from the
// Content-Length at once (with Expect: 100-continue, instead of 100).
// Without limits.body the limit is 1 MiB, and limits.body 0 lifts it. (A
// chunked body is answered at the chunk that passes the limit: the
// script request.chunked.body.too.large plays it against an app that
// waits for the body; the echo binding here answers at once.)
func TestServerBodyLimit(t *testing.T) {
	const tooLarge = "HTTP/1.1 413 Content Too Large\r\nConnection: close\r\n\r\n"
	tests := []struct {
		name, options, request string
	}{
		{"content-length", "      limits: {body: 1000}\n",
			"POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1001\r\n\r\n"},
		{"expect 100-continue", "      limits: {body: 1000}\n",
			"POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 104857600\r\nExpect: 100-continue\r\n\r\n"},
		{"default limit", "",
			"POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1048577\r\nExpect: 100-continue\r\n\r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startSocketServer(t, tt.options)
			c := s.dial(t)
			s.send(t, c, tt.request)
			assert.Equal(t, tooLarge, readAll(t, c))
		})
	}

	t.Run("lifted", func(t *testing.T) {
		s := startSocketServer(t, "      limits: {body: 0}\n")
		c := s.dial(t)
		body := strings.Repeat("z", 1<<20+1)
		go func() {
			_, _ = c.Write([]byte("POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1048577\r\n\r\n" + body))
		}()
		assert.Equal(t, body, readResponse(t, bufio.NewReader(c), c))
	})
}
