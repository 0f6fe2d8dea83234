package http_test

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
	"github.com/sluicehq/sluice/internal/enginetest"
)

// TestClientMaxIdle: a burst of concurrent requests opens a connection
// each (HTTP/1.1 carries one request at a time), and once they are
// answered the client keeps max-idle of them for the next requests and
// closes the rest at once, rather than holding all of them for
// idle-timeout. The kept ones serve the requests that follow.
func TestClientMaxIdle(t *testing.T) {
	const burst, maxIdle = 8, 2
	var open atomic.Int64
	var opened atomic.Int64
	release := make(chan struct{})
	var waiting sync.WaitGroup
	waiting.Add(burst)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/burst" {
			// Hold every request of the burst until all have arrived,
			// so that each has had to open its own connection.
			waiting.Done()
			<-release
		}
		_, _ = io.WriteString(w, "ok")
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		switch s {
		case http.StateNew:
			open.Add(1)
			opened.Add(1)
		case http.StateClosed, http.StateHijacked:
			open.Add(-1)
		}
	}
	srv.Start()
	defer srv.Close()

	port := enginetest.FreePort(t)
	src := enginetest.Front(port, "client0") + fmt.Sprintf(`  client0:
    type: http
    kind: client
    options:
      max-idle: %d
`, maxIdle)
	// One worker: the pool is per worker.
	enginetest.Start(t, "pool.yaml", src, engine.WithWorkers(1))
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	enginetest.WaitListen(t, addr)
	upstream := strings.TrimPrefix(srv.URL, "http://")

	// Each downstream request on a connection of its own, so that the
	// burst is concurrent at the gateway too.
	get := func(path string) (string, error) {
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
		return string(b), err
	}
	var wg sync.WaitGroup
	answers := make([]string, burst)
	for i := range burst {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b, err := get("/burst")
			assert.NoError(t, err)
			answers[i] = b
		}()
	}
	waited := make(chan struct{})
	go func() { waiting.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-time.After(10 * time.Second):
		close(release)
		t.Fatal("the burst did not reach the upstream concurrently")
	}
	require.Equal(t, int64(burst), open.Load(), "one upstream connection per request of the burst")
	close(release)
	wg.Wait()
	for _, a := range answers {
		require.True(t, strings.HasPrefix(a, "HTTP/1.1 200") && strings.HasSuffix(a, "ok"), "answer %q", a)
	}
	require.Eventually(t, func() bool { return open.Load() == maxIdle }, 5*time.Second, 10*time.Millisecond,
		"the client keeps max-idle connections and closes the rest (open: %d)", open.Load())

	before := opened.Load()
	for range 5 {
		b, err := get("/next")
		require.NoError(t, err)
		require.True(t, strings.HasSuffix(b, "ok"), b)
	}
	assert.Equal(t, before, opened.Load(), "the requests after the burst reuse the kept connections")
	assert.Equal(t, int64(maxIdle), open.Load())
}

// TestClientIdleTimeoutAfterReuse: the idle timeout counts from when a
// connection last went idle. A connection reused before its first idle
// timer fires is not closed by that timer, and is closed once a whole
// idle-timeout has passed after its last use; the next request then
// opens a new connection.
func TestClientIdleTimeoutAfterReuse(t *testing.T) {
	const idle = 600 * time.Millisecond
	var open, opened atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "ok")
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		switch s {
		case http.StateNew:
			open.Add(1)
			opened.Add(1)
		case http.StateClosed, http.StateHijacked:
			open.Add(-1)
		}
	}
	srv.Start()
	defer srv.Close()

	port := enginetest.FreePort(t)
	src := enginetest.Front(port, "client0") + fmt.Sprintf(`  client0:
    type: http
    kind: client
    options:
      idle-timeout: %s
`, idle)
	enginetest.Start(t, "idle.yaml", src, engine.WithWorkers(1))
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	enginetest.WaitListen(t, addr)
	upstream := strings.TrimPrefix(srv.URL, "http://")
	get := func() {
		t.Helper()
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		require.NoError(t, err)
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		_, err = fmt.Fprintf(c, "GET http://%s/ HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", upstream, upstream)
		require.NoError(t, err)
		b, err := io.ReadAll(c)
		require.NoError(t, err)
		require.True(t, strings.HasPrefix(string(b), "HTTP/1.1 200") && strings.HasSuffix(string(b), "ok"), "answer %q", b)
	}

	get()
	first := time.Now()
	time.Sleep(idle / 2)
	get()
	reused := time.Now()
	require.Equal(t, int64(1), opened.Load(), "the second request reuses the pooled connection")
	// Past the first request's deadline, short of the second's.
	time.Sleep(time.Until(first.Add(idle + idle/4)))
	if time.Since(reused) < idle-idle/8 {
		assert.Equal(t, int64(1), open.Load(), "the connection reused %v ago is still open", time.Since(reused))
	}
	require.Eventually(t, func() bool { return open.Load() == 0 }, 5*time.Second, 10*time.Millisecond,
		"the connection idle for idle-timeout is closed")
	get()
	assert.Equal(t, int64(2), opened.Load(), "a request after the close opens a new connection")
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
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/burst" {
			waiting.Done()
			<-release
		} else {
			mu.Lock()
			seen = append(seen, r.RemoteAddr)
			mu.Unlock()
		}
		_, _ = io.WriteString(w, "ok")
	}))
	defer srv.Close()

	port := enginetest.FreePort(t)
	src := enginetest.Front(port, "client0") + "  client0:\n    type: http\n    kind: client\n"
	enginetest.Start(t, "fifo.yaml", src, engine.WithWorkers(1))
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	enginetest.WaitListen(t, addr)
	upstream := strings.TrimPrefix(srv.URL, "http://")
	get := func(path string) error {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			return err
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := fmt.Fprintf(c, "GET http://%s%s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", upstream, path, upstream); err != nil {
			return err
		}
		b, err := io.ReadAll(c)
		if err == nil && !strings.HasSuffix(string(b), "ok") {
			err = fmt.Errorf("answer %q", b)
		}
		return err
	}
	var wg sync.WaitGroup
	for range burst {
		wg.Add(1)
		go func() { defer wg.Done(); assert.NoError(t, get("/burst")) }()
	}
	waiting.Wait()
	close(release)
	wg.Wait()

	const n = 3 * burst
	for range n {
		require.NoError(t, get("/next"))
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
