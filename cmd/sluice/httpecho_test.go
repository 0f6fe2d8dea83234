package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	usedPortsMu sync.Mutex
	usedPorts   = map[int]bool{}
)

// startHTTPEcho runs sluice start on examples/http-echo.yaml, moved to a
// free port, and returns its base URL.
func startHTTPEcho(t *testing.T, workers int) string {
	t.Helper()
	port := freePort(t)
	src, err := os.ReadFile(filepath.Join("..", "..", "examples", "http-echo.yaml"))
	require.NoError(t, err)
	require.Contains(t, string(src), "port: 8080")
	cfg := strings.Replace(string(src), "port: 8080", fmt.Sprintf("port: %d", port), 1)
	return strings.TrimSuffix(startConfig(t, cfg, port, workers), "/mcp")
}

// TestHTTPEchoRealClient drives the http-echo example with Go's net/http
// client: keep-alive, a chunked upload and a streamed (SSE) exchange.
func TestHTTPEchoRealClient(t *testing.T) {
	base := startHTTPEcho(t, 2)
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	defer client.CloseIdleConnections()

	t.Run("keep-alive", func(t *testing.T) {
		var reused []bool
		for i := range 3 {
			trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) { reused = append(reused, info.Reused) }}
			req, err := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace),
				http.MethodPost, base+"/echo", strings.NewReader(fmt.Sprintf("hello %d", i)))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "text/plain")
			resp, err := client.Do(req)
			require.NoError(t, err)
			body, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			resp.Body.Close()
			assert.Equal(t, 200, resp.StatusCode)
			assert.Equal(t, fmt.Sprintf("hello %d", i), string(body))
		}
		assert.Equal(t, []bool{false, true, true}, reused, "one connection kept alive")
	})

	t.Run("chunked upload", func(t *testing.T) {
		pr, pw := io.Pipe()
		go func() {
			for i := range 50 {
				fmt.Fprintf(pw, "chunk %02d;", i)
			}
			pw.Close()
		}()
		req, err := http.NewRequest(http.MethodPut, base+"/upload", pr)
		require.NoError(t, err)
		resp, err := client.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		assert.Equal(t, []string{"chunked"}, resp.TransferEncoding, "no length: the echo is chunked back")
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		var want strings.Builder
		for i := range 50 {
			fmt.Fprintf(&want, "chunk %02d;", i)
		}
		assert.Equal(t, want.String(), string(body))
	})

	t.Run("sse streaming", func(t *testing.T) {
		pr, pw := io.Pipe()
		req, err := http.NewRequest(http.MethodPost, base+"/events", pr)
		require.NoError(t, err)
		req.Header.Set("Content-Type", "text/event-stream")
		done := make(chan *http.Response, 1)
		go func() {
			resp, err := client.Do(req)
			if err == nil {
				done <- resp
			}
			close(done)
		}()
		// Each event comes back before the next is written: nothing is
		// buffered on the way.
		_, err = io.WriteString(pw, "data: one\n\n")
		require.NoError(t, err)
		var resp *http.Response
		select {
		case resp = <-done:
		case <-time.After(5 * time.Second):
			t.Fatal("no response head while the request is still open")
		}
		require.NotNil(t, resp)
		defer resp.Body.Close()
		assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
		r := bufio.NewReader(resp.Body)
		for _, ev := range []string{"one", "two", "three"} {
			if ev != "one" {
				_, err = io.WriteString(pw, "data: "+ev+"\n\n")
				require.NoError(t, err)
			}
			line, err := r.ReadString('\n')
			require.NoError(t, err)
			assert.Equal(t, "data: "+ev+"\n", line)
			blank, err := r.ReadString('\n')
			require.NoError(t, err)
			assert.Equal(t, "\n", blank)
		}
		require.NoError(t, pw.Close())
		rest, err := io.ReadAll(r)
		require.NoError(t, err)
		assert.Empty(t, rest)
	})

	t.Run("curl -d hello", func(t *testing.T) {
		resp, err := client.Post(base+"/", "application/x-www-form-urlencoded", strings.NewReader("hello"))
		require.NoError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		assert.Equal(t, "hello", string(body))
	})
}

// TestSpecLiveAgainstStart plays a tcp:// script over real sockets against
// sluice start (the http-echo example): the spec runner's third mode.
func TestSpecLiveAgainstStart(t *testing.T) {
	base := startHTTPEcho(t, 1)
	script := filepath.Join("..", "..", "scripts", "http", "streams", "live", "echo.keep.alive", "client")
	var stdout, stderr bytes.Buffer
	code := run([]string{"spec", "--live", "-p", "address=tcp://" + strings.TrimPrefix(base, "http://"), script}, &stdout, &stderr)
	require.Equal(t, exitOK, code, stderr.String())
	assert.Contains(t, stdout.String(), "(over tcp,")
}
