package client_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/telemetry"
	"github.com/sluicehq/sluice/internal/enginetest"
)

// poolUpstream is an upstream HTTP server that counts its connections:
// open now, and opened in all.
type poolUpstream struct {
	*httptest.Server
	open, opened atomic.Int64
}

func startPoolUpstream(t *testing.T, h http.HandlerFunc) *poolUpstream {
	t.Helper()
	u := &poolUpstream{Server: httptest.NewUnstartedServer(h)}
	u.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		switch s {
		case http.StateNew:
			u.open.Add(1)
			u.opened.Add(1)
		case http.StateClosed, http.StateHijacked:
			u.open.Add(-1)
		}
	}
	u.Start()
	t.Cleanup(u.Close)
	return u
}

// startPoolGateway starts tcp → http server → http client (client0, with
// the options given, indented for it) on one worker, the pool being per
// worker, and returns a function that sends one GET for path through it
// to u, on a downstream connection of its own, and returns the answer,
// and the engine. opts are the engine's, after one worker.
func startPoolGateway(t *testing.T, u *poolUpstream, options string, opts ...engine.Option) (func(path string) (string, error), *engine.Engine) {
	t.Helper()
	port := enginetest.FreePort(t)
	src := enginetest.Front(port, "client0") + "  client0:\n    type: http\n    kind: client\n" + options
	e := enginetest.Start(t, "pool.yaml", src, append([]engine.Option{engine.WithWorkers(1)}, opts...)...)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	enginetest.WaitListen(t, addr)
	upstream := strings.TrimPrefix(u.URL, "http://")
	return func(path string) (string, error) {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			return "", err
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := fmt.Fprintf(c, "GET http://%s%s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", upstream, path, upstream); err != nil {
			return "", err
		}
		b, err := io.ReadAll(c)
		if err == nil && !(strings.HasPrefix(string(b), "HTTP/1.1 200") && strings.HasSuffix(string(b), "ok")) {
			err = fmt.Errorf("answer %q", b)
		}
		return string(b), err
	}, e
}

// pooled returns how many upstream connections client0 holds, as the
// engine counts them: the connections' streams it has begun and not yet
// ended (stream.active.sent), once the requests' replies have ended. It
// waits for the worker's passes first, so that what the engine did before
// the call is counted.
func pooled(t *testing.T, e *engine.Engine) int64 {
	t.Helper()
	enginetest.Settle(t, e)
	return enginetest.Metric(e, "client0", telemetry.StreamActiveSent)
}

// getConcurrently sends n GETs for path through get at once, and returns
// what to wait on for their answers.
func getConcurrently(t *testing.T, get func(string) (string, error), path string, n int) *sync.WaitGroup {
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := get(path)
			assert.NoError(t, err)
		}()
	}
	return &wg
}

// TestClientMaxIdle: a burst of concurrent requests opens a connection
// each (HTTP/1.1 carries one request at a time), and once they are
// answered the client keeps max-idle of them for the next requests and
// closes the rest at once, rather than holding all of them for
// idle-timeout. The kept ones serve the requests that follow.
func TestClientMaxIdle(t *testing.T) {
	const burst, maxIdle = 8, 2
	release := make(chan struct{})
	var waiting sync.WaitGroup
	waiting.Add(burst)
	u := startPoolUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/burst" {
			// Hold every request of the burst until all have arrived,
			// so that each has had to open its own connection.
			waiting.Done()
			<-release
		}
		_, _ = io.WriteString(w, "ok")
	})
	get, _ := startPoolGateway(t, u, fmt.Sprintf("    options:\n      max-idle: %d\n", maxIdle))

	// Each downstream request on a connection of its own, so that the
	// burst is concurrent at the gateway too.
	wg := getConcurrently(t, get, "/burst", burst)
	waited := make(chan struct{})
	go func() { waiting.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-time.After(10 * time.Second):
		close(release)
		t.Fatal("the burst did not reach the upstream concurrently")
	}
	require.Equal(t, int64(burst), u.open.Load(), "one upstream connection per request of the burst")
	close(release)
	wg.Wait()
	require.Eventually(t, func() bool { return u.open.Load() == maxIdle }, 5*time.Second, 10*time.Millisecond,
		"the client keeps max-idle connections and closes the rest (open: %d)", u.open.Load())

	before := u.opened.Load()
	for range 5 {
		_, err := get("/next")
		require.NoError(t, err)
	}
	assert.Equal(t, before, u.opened.Load(), "the requests after the burst reuse the kept connections")
	assert.Equal(t, int64(maxIdle), u.open.Load())
}

// TestClientIdleHoldsNoSlot: a response whose head and body come in one
// DATA has its body held in a buffer slot until the app's window admits
// it; once it has gone on and the connection waits idle in the pool, the
// slot is back in the pool too, request after request, rather than held
// by every idle connection until its next response.
func TestClientIdleHoldsNoSlot(t *testing.T) {
	u := startPoolUpstream(t, func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })
	get, e := startPoolGateway(t, u, "")
	for i := range 3 {
		_, err := get("/x")
		require.NoError(t, err)
		require.Eventually(t, func() bool { return enginetest.Held(e).Slots == 0 }, 2*time.Second, time.Millisecond,
			"request %d: a buffer slot is still held with the connection idle", i)
		assert.Equal(t, int64(1), pooled(t, e), "request %d: the connection waits in the pool", i)
	}
}

// TestClientIdleTimeoutAfterReuse: the idle timeout counts from when a
// connection last went idle. A connection reused before its first idle
// timer fires is not closed by that timer, and is closed once a whole
// idle-timeout has passed after its last use; the next request then
// opens a new connection. The engine runs on a manual clock, which the
// test moves and fires the due timers with.
func TestClientIdleTimeoutAfterReuse(t *testing.T) {
	const idle = 600 * time.Millisecond
	clock := enginetest.NewClock()
	u := startPoolUpstream(t, func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })
	get, e := startPoolGateway(t, u, fmt.Sprintf("    options:\n      idle-timeout: %s\n", idle), engine.WithClock(clock.Now))

	_, err := get("/")
	require.NoError(t, err)
	clock.Tick(t, e, idle/2)
	_, err = get("/")
	require.NoError(t, err)
	require.Equal(t, int64(1), u.opened.Load(), "the second request reuses the pooled connection")
	// Past the first request's deadline, short of the second's: the timer
	// armed at the first finds the connection idle since the second.
	clock.Tick(t, e, idle/2+idle/4)
	assert.Equal(t, int64(1), pooled(t, e), "the connection reused %v ago is still pooled", idle/2+idle/4)
	clock.Tick(t, e, idle/4-time.Millisecond)
	assert.Equal(t, int64(1), pooled(t, e), "idle for a millisecond less than idle-timeout")
	clock.Tick(t, e, time.Millisecond)
	assert.Equal(t, int64(0), pooled(t, e), "the connection idle for idle-timeout is closed")
	require.Eventually(t, func() bool { return u.open.Load() == 0 }, 5*time.Second, 10*time.Millisecond,
		"the upstream sees the close")
	_, err = get("/")
	require.NoError(t, err)
	assert.Equal(t, int64(2), u.opened.Load(), "a request after the close opens a new connection")
}

// TestClientPoolTakesLongestIdle: with several idle connections to an
// authority, each request takes the one idle longest, so that requests one
// after another go round all of them rather than keep reusing the last
// one answered (a connection the upstream may still be serving, ahead of
// the others; see idlePool).
func TestClientPoolTakesLongestIdle(t *testing.T) {
	const burst = 3
	release := make(chan struct{})
	var waiting sync.WaitGroup
	waiting.Add(burst)
	var mu sync.Mutex
	var seen []string // the client address of each request after the burst
	u := startPoolUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/burst" {
			waiting.Done()
			<-release
		} else {
			mu.Lock()
			seen = append(seen, r.RemoteAddr)
			mu.Unlock()
		}
		_, _ = io.WriteString(w, "ok")
	})
	get, _ := startPoolGateway(t, u, "")
	wg := getConcurrently(t, get, "/burst", burst)
	waiting.Wait()
	close(release)
	wg.Wait()

	const n = 3 * burst
	for range n {
		_, err := get("/next")
		require.NoError(t, err)
	}
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, seen, n)
	for i := range n {
		if i >= burst {
			assert.Equal(t, seen[i-burst], seen[i], "request %d goes on the connection request %d used: %v", i, i-burst, seen)
		}
		for j := max(0, i-burst+1); j < i; j++ {
			assert.NotEqual(t, seen[j], seen[i], "requests %d and %d share a connection within one round: %v", j, i, seen)
		}
	}
}

// TestClientHonoursKeepAliveTimeout: an upstream that answers with
// "Keep-Alive: timeout=2" closes idle connections after 2 s. The pool
// lets such a connection go sooner than that (after half of it, for so
// short a timeout) rather than after its own idle-timeout, so that no
// request is sent on a connection the server is closing. The first answer
// here has no such field: the connection's idle timer, armed for the
// client's 90 s then, must give way to the shorter time of the second.
// The engine runs on a manual clock.
func TestClientHonoursKeepAliveTimeout(t *testing.T) {
	clock := enginetest.NewClock()
	u := startPoolUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hint" {
			w.Header().Set("Keep-Alive", "timeout=2")
		}
		_, _ = io.WriteString(w, "ok")
	})
	get, e := startPoolGateway(t, u, "", engine.WithClock(clock.Now))
	_, err := get("/")
	require.NoError(t, err)
	answer, err := get("/hint")
	require.NoError(t, err)
	require.Equal(t, int64(1), u.opened.Load(), "one connection, reused")
	assert.NotContains(t, strings.ToLower(answer), "keep-alive: timeout", "Keep-Alive is the hop's, not forwarded")
	clock.Tick(t, e, time.Second-time.Millisecond)
	assert.Equal(t, int64(1), pooled(t, e), "kept for half the server's timeout")
	clock.Tick(t, e, time.Millisecond)
	assert.Equal(t, int64(0), pooled(t, e), "let go at half the server's timeout, long before the client's own idle-timeout (90 s)")
	require.Eventually(t, func() bool { return u.open.Load() == 0 }, 5*time.Second, 10*time.Millisecond,
		"the upstream sees the close")
}
