package client_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/internal/enginetest"
)

// startForwardProxy runs tcp → http server → sys:http_client: each request
// goes to the authority it names. It returns the proxy's address.
func startForwardProxy(t testing.TB, opts ...engine.Option) string {
	t.Helper()
	addr, _ := startForwardProxyEngine(t, opts...)
	return addr
}

// startForwardProxyEngine is startForwardProxy, with the engine.
func startForwardProxyEngine(t testing.TB, opts ...engine.Option) (string, *engine.Engine) {
	t.Helper()
	port := enginetest.FreePort(t)
	e := enginetest.Start(t, "proxy.yaml", enginetest.Front(port, "sys:http_client"), opts...)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	enginetest.WaitListen(t, addr)
	return addr, e
}

// rawUpstream accepts connections on loopback; on the n-th (from 0) it
// reads one request and its body, writes respond(n) (nothing when empty)
// and closes. It returns the upstream's address.
func rawUpstream(t *testing.T, respond func(n int) string) string {
	t.Helper()
	up, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = up.Close() })
	go func() {
		for n := 0; ; n++ {
			c, err := up.Accept()
			if err != nil {
				return
			}
			go func(c net.Conn, response string) {
				defer c.Close()
				req, err := http.ReadRequest(bufio.NewReader(c))
				if err != nil {
					return
				}
				_, _ = io.Copy(io.Discard, req.Body)
				_, _ = io.WriteString(c, response)
			}(c, respond(n))
		}
	}()
	return up.Addr().String()
}

// TestClientUpstreamClosesBeforeResponse: the upstream reads a whole
// request, which the application has already ended, and closes without a
// response. The application hears of it at once, as a 503 with
// retry-after: 0 (Zilla's answer) it can pass on,
// rather than waiting for a reply that will never begin; and the proxy
// keeps serving. The engine's clock stands still: an answer that only a
// timer could give would never come.
func TestClientUpstreamClosesBeforeResponse(t *testing.T) {
	upstream := rawUpstream(t, func(n int) string {
		if n == 0 {
			return ""
		}
		return "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"
	})
	proxy := startForwardProxy(t, engine.WithClock(enginetest.NewClock().Now))
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	get := func() (*http.Response, string, error) {
		req, err := http.NewRequest(http.MethodPost, "http://"+proxy+"/x", strings.NewReader("hello"))
		require.NoError(t, err)
		req.Host = upstream
		resp, err := client.Do(req)
		if err != nil {
			return nil, "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return resp, string(b), err
	}

	resp, _, err := get()
	require.NoError(t, err)
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.Equal(t, "0", resp.Header.Get("Retry-After"))

	// The upstream answers the others and closes each connection: the
	// response, whose bytes may wait for the app's window past the
	// upstream's END, arrives whole.
	for i := range 5 {
		resp, body, err := get()
		require.NoError(t, err, i)
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Equal(t, "ok", body)
	}

	// Nothing listening at all: the connection is refused once the
	// request (one write, so the proxy has it whole) has ended, with the
	// same answer.
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	deadAddr := dead.Addr().String()
	require.NoError(t, dead.Close())
	c, err := net.Dial("tcp", proxy)
	require.NoError(t, err)
	defer c.Close()
	_, err = fmt.Fprintf(c, "POST /x HTTP/1.1\r\nHost: %s\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello", deadAddr)
	require.NoError(t, err)
	require.NoError(t, c.SetReadDeadline(time.Now().Add(5*time.Second)))
	raw, err := io.ReadAll(c)
	require.NoError(t, err)
	assert.Equal(t, "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 0\r\nConnection: close\r\n\r\n", string(raw))
}

// TestClientResponseFramingsBeforeClose: an upstream writes its whole
// response and closes at once, so the response's bytes and the END
// arrive together, before the application's window for them. Every
// framing comes through whole; a body cut short by the close is not
// passed off as complete. A response that fails before any of its body
// has come is answered 502 by the front, as one that fails before its
// head: the front still held its head back, and nothing had left. An
// event stream's head leaves at once, so that one is cut short instead.
func TestClientResponseFramingsBeforeClose(t *testing.T) {
	for _, tc := range []struct {
		name, response string
		status         int
		body           string
		cut            bool // the response must fail, not end
	}{
		{"content-length", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", 200, "hello", false},
		{"chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n", 200, "hello world", false},
		{"until close", "HTTP/1.0 200 OK\r\n\r\nhello, until close", 200, "hello, until close", false},
		{"no body", "HTTP/1.1 204 No Content\r\n\r\n", 204, "", false},
		{"length cut short", "HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\nhello", 200, "hello", true},
		{"chunks cut short", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n", 200, "hello", true},
		{"length cut before the body", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", 502, "", false},
		{"chunks malformed before the body", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 502, "", false},
		{"event stream cut before the body", "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: 5\r\n\r\n", 200, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			upstream := rawUpstream(t, func(int) string { return tc.response })
			proxy := startForwardProxy(t)
			client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
			for i := range 3 {
				req, err := http.NewRequest(http.MethodGet, "http://"+proxy+"/x", nil)
				require.NoError(t, err)
				req.Host = upstream
				resp, err := client.Do(req)
				require.NoError(t, err, i)
				b, err := io.ReadAll(resp.Body)
				_ = resp.Body.Close()
				assert.Equal(t, tc.status, resp.StatusCode, i)
				assert.Equal(t, tc.body, string(b), i)
				if tc.cut {
					assert.Error(t, err, "%d: a cut body must not read as complete", i)
				} else {
					assert.NoError(t, err, i)
				}
			}
		})
	}
}

// TestClientRefusesHTTPS: the http client speaks no TLS, so a request for
// an https URL is refused (the proxy answers 502) and nothing is sent to
// the upstream, never in cleartext to the https port.
func TestClientRefusesHTTPS(t *testing.T) {
	accepted := make(chan struct{}, 1)
	up := rawUpstream(t, func(int) string {
		select {
		case accepted <- struct{}{}:
		default:
		}
		return ""
	})
	proxy := startForwardProxy(t)
	resp := proxyRequest(t, proxy, fmt.Sprintf("GET https://%s/secret HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer token\r\n\r\n", up, up))
	assert.Equal(t, http.StatusBadGateway, resp.StatusCode)
	// A request that went out would have been accepted, and reported, before
	// the upstream's close could make the 502: no need to wait for it.
	select {
	case <-accepted:
		t.Fatal("the https request reached the upstream in cleartext")
	default:
	}
}

// TestProxyAbsoluteForm: a request whose target is an absolute URL (a
// proxy's request) goes to the authority the URL names, whatever its Host
// header says, as an origin-form request (RFC 9112 §3.2.2).
func TestProxyAbsoluteForm(t *testing.T) {
	seen := make(chan string, 4)
	up, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = up.Close() })
	go func() {
		for {
			c, err := up.Accept()
			if err != nil {
				return
			}
			go func(c net.Conn) {
				defer c.Close()
				req, err := http.ReadRequest(bufio.NewReader(c))
				if err != nil {
					return
				}
				seen <- req.RequestURI + " " + req.Host
				_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
			}(c)
		}
	}()
	proxy := startForwardProxy(t)
	for _, tt := range []struct{ target, want string }{
		{"http://%s/x?y=1", "/x?y=1"},
		{"HTTP://%s?q", "/?q"},
		{"http://%s", "/"},
	} {
		target := fmt.Sprintf(tt.target, up.Addr())
		t.Run(target, func(t *testing.T) {
			resp := proxyRequest(t, proxy, fmt.Sprintf("GET %s HTTP/1.1\r\nHost: wrong.example\r\n\r\n", target))
			require.Equal(t, http.StatusOK, resp.StatusCode)
			select {
			case got := <-seen:
				assert.Equal(t, tt.want+" "+up.Addr().String(), got)
			case <-time.After(5 * time.Second):
				t.Fatal("the upstream saw no request")
			}
		})
	}
}

// proxyRequest sends the raw request req to the forward proxy at proxy
// and returns its response, whose body is closed.
func proxyRequest(t *testing.T, proxy, req string) *http.Response {
	t.Helper()
	c, err := net.Dial("tcp", proxy)
	require.NoError(t, err)
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	_, err = io.WriteString(c, req)
	require.NoError(t, err)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err)
	_ = resp.Body.Close()
	return resp
}

// TestProxyUpstreamAnswersBeforeBody: a net/http upstream answers some
// requests before it has read their bodies: 413 without reading any, or
// 200 after reading ten bytes. net/http then reads and drops a small rest
// and keeps the connection, or closes it after a large one. Through the
// forward proxy, whose front and upstream sides each see a response end
// before its request, the client gets every answer whole, its next
// request is served, and the proxy holds nothing afterwards.
func TestProxyUpstreamAnswersBeforeBody(t *testing.T) {
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/reject":
			w.WriteHeader(http.StatusRequestEntityTooLarge)
			_, _ = io.WriteString(w, "too large")
		case "/peek":
			head := make([]byte, 10)
			n, _ := io.ReadFull(r.Body, head)
			_, _ = fmt.Fprintf(w, "peeked %q", head[:n])
		default:
			body, _ := io.ReadAll(r.Body)
			_, _ = fmt.Fprintf(w, "read %d", len(body))
		}
	}))
	t.Cleanup(upstream.Close)
	host := strings.TrimPrefix(upstream.URL, "http://")
	proxy, e := startForwardProxyEngine(t)
	client := &http.Client{Timeout: 20 * time.Second}
	t.Cleanup(client.CloseIdleConnections)
	for _, size := range []int{100, 200 << 10, 900 << 10} {
		body := strings.Repeat("0123456789", size/10)
		for _, tc := range []struct {
			path   string
			status int
			want   string
		}{
			{"/reject", http.StatusRequestEntityTooLarge, "too large"},
			{"/peek", http.StatusOK, `peeked "0123456789"`},
			{"/all", http.StatusOK, fmt.Sprintf("read %d", size)},
		} {
			for i := range 2 {
				req, err := http.NewRequest(http.MethodPost, "http://"+proxy+tc.path, strings.NewReader(body))
				require.NoError(t, err)
				req.Host = host
				resp, err := client.Do(req)
				require.NoError(t, err, "%s, %d bytes, #%d", tc.path, size, i)
				got, err := io.ReadAll(resp.Body)
				_ = resp.Body.Close()
				require.NoError(t, err, "%s, %d bytes, #%d", tc.path, size, i)
				assert.Equal(t, tc.status, resp.StatusCode, "%s, %d bytes, #%d", tc.path, size, i)
				assert.Equal(t, tc.want, string(got), "%s, %d bytes, #%d", tc.path, size, i)
			}
		}
	}
	// The proxy's pooled connections go when the upstream closes them.
	client.CloseIdleConnections()
	upstream.CloseClientConnections()
	require.Eventually(t, func() bool { return enginetest.Released(e) }, 5*time.Second, 10*time.Millisecond,
		"the proxy still holds %+v", enginetest.Held(e))
}

// TestClientHeaderTimeout: with header-timeout, an upstream that reads a
// request and begins no response within it has the exchange answered 504
// and its connection closed, while a response head that comes in time is
// not cut off however long its body takes; without the option the client
// waits as long as its app does. The engine's clock stands still but for
// the test's moves.
func TestClientHeaderTimeout(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	dropped, arrived := make(chan struct{}, 4), make(chan string, 4)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		arrived <- r.URL.Path
		if r.URL.Path == "/slow-body" {
			w.Header().Set("Content-Length", "4")
			w.WriteHeader(http.StatusOK)
			_, _ = io.WriteString(w, "ok")
			w.(http.Flusher).Flush()
		}
		select {
		case <-r.Context().Done():
			dropped <- struct{}{}
		case <-release:
		}
		if r.URL.Path == "/slow-body" {
			_, _ = io.WriteString(w, "!!")
		}
	}))
	t.Cleanup(up.Close)
	host := strings.TrimPrefix(up.URL, "http://")
	clock := enginetest.NewClock()
	port := enginetest.FreePort(t)
	src := enginetest.Front(port, "client0") + "  client0:\n    type: http\n    kind: client\n    options:\n      header-timeout: 5s\n"
	e := enginetest.Start(t, "timeout.yaml", src, engine.WithWorkers(1), engine.WithClock(clock.Now))
	proxy := fmt.Sprintf("127.0.0.1:%d", port)
	enginetest.WaitListen(t, proxy)

	send := func(path string) net.Conn {
		c, err := net.Dial("tcp", proxy)
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.Close() })
		_, err = fmt.Fprintf(c, "POST http://%s%s HTTP/1.1\r\nHost: %s\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello", host, path, host)
		require.NoError(t, err)
		require.NoError(t, c.SetReadDeadline(time.Now().Add(10*time.Second)))
		return c
	}
	hung := send("/hang")
	enginetest.Receive(t, arrived, "the first request upstream")
	slow := send("/slow-body")
	enginetest.Receive(t, arrived, "the second request upstream")
	// The slow body's head came back.
	buf := make([]byte, 64)
	n, err := slow.Read(buf)
	require.NoError(t, err)
	require.Contains(t, string(buf[:n]), "200 OK")
	enginetest.Settle(t, e)

	clock.Tick(t, e, 6*time.Second)
	raw, err := io.ReadAll(hung)
	require.NoError(t, err)
	assert.Equal(t, "HTTP/1.1 504 Gateway Timeout\r\nConnection: close\r\n\r\n", string(raw))
	enginetest.Receive(t, dropped, "the upstream's connection closed")

	release <- struct{}{}
	rest, err := io.ReadAll(slow)
	require.NoError(t, err)
	assert.True(t, strings.HasSuffix(string(buf[:n])+string(rest), "\r\n\r\nok!!"), "%q then %q", buf[:n], rest)
}
