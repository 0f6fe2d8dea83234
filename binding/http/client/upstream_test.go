package client_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

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

	// The second stream waits for the first: barrier FIRST is notified
	// after the first response.
	spec.Run(t, spec.Config(filepath.Join("testdata", "client.yaml"), spec.Override("authority", authority), spec.Workers(1)),
		filepath.Join("testdata", "net_http"))
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{"POST /orders tea chunked", "GET /events  "}, requests)
	require.Len(t, remotes, 2)
	assert.Equal(t, remotes[0], remotes[1], "the second request reuses the pooled connection")
}
