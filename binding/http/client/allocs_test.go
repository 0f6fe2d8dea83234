package client_test

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/internal/enginetest"
)

// TestHelperUpstream is not a test: TestRequestAllocations runs the test
// binary again as a plain HTTP/1.1 upstream, so that the upstream's
// allocations stay out of the measured process. It serves on a free
// loopback port, prints the address and stops when its stdin closes.
func TestHelperUpstream(t *testing.T) {
	if !enginetest.IsHelper("TestHelperUpstream") {
		t.Skip("runs only as TestRequestAllocations' upstream process")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	fmt.Println(ln.Addr().String())
	go func() {
		_ = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }))
	}()
	enginetest.WaitStdinClosed()
}

// TestRequestAllocations sends requests one after another through tcp →
// http server → http client (a forward proxy) to an upstream in another
// process, and counts this process's heap allocations per request: the
// engine and the three bindings, with a client that allocates nothing.
// The client keeps finished exchanges for reuse, so a request allocates
// neither an exchange nor its handler.
func TestRequestAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	upstream := enginetest.Helper(t, "TestHelperUpstream")

	proxy := startForwardProxy(t)
	c, err := net.Dial("tcp", proxy)
	require.NoError(t, err)
	defer c.Close()
	request := []byte(fmt.Sprintf("GET http://%s/ HTTP/1.1\r\nHost: %s\r\n\r\n", upstream, upstream))
	buf := make([]byte, 4096)
	tail := []byte("\r\n\r\nok")
	// The checks call require only on failure: its arguments would
	// allocate on every call.
	roundTrip := func() {
		if _, err := c.Write(request); err != nil {
			require.NoError(t, err)
		}
		n := 0
		for !bytes.HasSuffix(buf[:n], tail) {
			m, err := c.Read(buf[n:])
			if err != nil {
				require.NoError(t, err, "after %q", buf[:n])
			}
			n += m
		}
	}
	require.NoError(t, c.SetDeadline(time.Now().Add(60*time.Second)))
	// The warmup fills the free lists and the timer wheel's slot arrays.
	perRequest := enginetest.MallocsPerOp(1500*time.Millisecond, 3000, roundTrip)
	t.Logf("%.3f heap allocations per request through the gateway", perRequest)
	require.Less(t, perRequest, 0.1, "heap allocations per proxied request")
}
