package client_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/spec"
)

// TestClientAgainstNetHTTP plays an application script through the http
// client kind (no exit: the system tcp client) to a Go net/http server. One
// worker: each worker keeps its own pool of connections.
func TestClientAgainstNetHTTP(t *testing.T) {
	var mu sync.Mutex
	var requests, remotes []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		remotes = append(remotes, r.RemoteAddr)
		requests = append(requests, r.Method+" "+r.URL.Path+" "+string(body)+" "+strings.Join(r.TransferEncoding, ","))
		mu.Unlock()
		switch r.URL.Path {
		case "/events":
			w.Header().Set("Content-Type", "text/event-stream")
			f := w.(http.Flusher)
			for _, ev := range []string{"one", "two"} {
				io.WriteString(w, "data: "+ev+"\n\n")
				f.Flush()
			}
		default:
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusCreated)
			io.WriteString(w, "got "+string(body))
		}
	}))
	defer srv.Close()
	authority := strings.TrimPrefix(srv.URL, "http://")

	script := `property authority "localhost:1"
connect "zilla://streams/app0"
        option zilla:window 8192
        option zilla:transmission "half-duplex"
write zilla:begin.ext ${http:beginEx()
                           .typeId(zilla:id("http"))
                           .header(":method", "POST")
                           .header(":scheme", "http")
                           .header(":authority", authority)
                           .header(":path", "/orders")
                           .header("content-type", "text/plain")
                           .build()}
connected
write "tea"
write close
read zilla:begin.ext ${http:matchBeginEx()
                          .typeId(zilla:id("http"))
                          .header(":status", "201")
                          .header("content-type", "text/plain")
                          .build()}
read "got tea"
read closed

connect await FIRST
        "zilla://streams/app0"
        option zilla:window 8192
        option zilla:transmission "half-duplex"
write zilla:begin.ext ${http:beginEx()
                           .typeId(zilla:id("http"))
                           .header(":method", "GET")
                           .header(":scheme", "http")
                           .header(":authority", authority)
                           .header(":path", "/events")
                           .build()}
connected
write close
read zilla:begin.ext ${http:matchBeginEx()
                          .typeId(zilla:id("http"))
                          .header(":status", "200")
                          .header("content-type", "text/event-stream")
                          .build()}
read "data: one\n\n"
read "data: two\n\n"
read closed
`
	// The second stream waits for the first: barrier FIRST is notified
	// after the first response.
	script = strings.Replace(script, "read \"got tea\"\nread closed\n", "read \"got tea\"\nread closed\nread notify FIRST\n", 1)
	s, err := spec.Parse("client.rpt", []byte(script))
	require.NoError(t, err)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "client.yaml")
	require.NoError(t, writeFile(cfg, `name: test
bindings:
  app0:
    type: http
    kind: client
`))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = spec.PlaySources(ctx, spec.Config(cfg, spec.Override("authority", authority), spec.Workers(1)), &spec.Source{Script: s, Src: []byte(script)})
	require.NoError(t, err)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{"POST /orders tea chunked", "GET /events  "}, requests)
	require.Len(t, remotes, 2)
	assert.Equal(t, remotes[0], remotes[1], "the second request reuses the pooled connection")
}
