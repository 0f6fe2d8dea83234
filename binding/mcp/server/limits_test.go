package server_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/internal/enginetest"
)

// TestStackSessionLimit: with limits.sessions 2 a third initialize gets
// 503 while two sessions live, on whichever worker; once one is deleted
// a new one may start.
func TestStackSessionLimit(t *testing.T) {
	s := startStack(t, "    options:\n      limits:\n        sessions: 2\n")
	a := s.initialize(t, "2025-11-25")
	s.initialize(t, "2025-11-25")
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"go-test","version":"1"}}}`
	for range 3 {
		resp, body := s.post(t, "", "", init)
		assert.Equal(t, 503, resp.StatusCode, body)
		assert.JSONEq(t, `{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"Service Unavailable: too many sessions"}}`, body)
		assert.Empty(t, resp.Header.Get("Mcp-Session-Id"))
	}
	resp, body := s.do(t, http.MethodDelete, "", "Mcp-Session-Id", a)
	require.Equal(t, 200, resp.StatusCode, body)
	s.initialize(t, "2025-11-25")
}

// TestStackSessionLimitPerAddress: with limits.sessionsPerAddress 2 a
// client address's third initialize gets 503 while its two sessions
// live, whichever worker its connections land on, and another address
// is not concerned; once one of the first address's sessions is deleted
// it may start another. The two addresses are two loopback sources.
func TestStackSessionLimitPerAddress(t *testing.T) {
	s := startStack(t, "    options:\n      limits:\n        sessionsPerAddress: 2\n", engine.WithWorkers(2))
	other := *s
	other.client = &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}}).DialContext,
	}}
	t.Cleanup(other.client.CloseIdleConnections)

	a := s.initialize(t, "2025-11-25")
	s.initialize(t, "2025-11-25")
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"go-test","version":"1"}}}`
	for range 3 {
		s.client.CloseIdleConnections() // a new connection, on either worker
		resp, body := s.post(t, "", "", init)
		assert.Equal(t, 503, resp.StatusCode, body)
		assert.JSONEq(t, `{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"Service Unavailable: too many sessions from this address"}}`, body)
		assert.Empty(t, resp.Header.Get("Mcp-Session-Id"))
	}
	other.initialize(t, "2025-11-25")
	other.initialize(t, "2025-11-25")
	resp, body := other.post(t, "", "", init)
	assert.Equal(t, 503, resp.StatusCode, body)

	resp, body = s.do(t, http.MethodDelete, "", "Mcp-Session-Id", a)
	require.Equal(t, 200, resp.StatusCode, body)
	s.initialize(t, "2025-11-25")
	resp, body = s.post(t, "", "", init)
	assert.Equal(t, 503, resp.StatusCode, body)
}

// openCall starts a long tools/call with a progress token in session sid
// and returns its event stream once the first progress event came: the
// call is then in flight.
func openCall(t *testing.T, s *stack, sid string, id int) (*http.Response, *bufio.Reader) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.base, strings.NewReader(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call",
		"params":{"name":"long_running_operation","arguments":{"duration":5,"steps":5},"_meta":{"progressToken":%d}}}`, id, id)))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	resp, err := s.client.Do(req)
	require.NoError(t, err)
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	r := bufio.NewReader(resp.Body)
	for {
		line, err := r.ReadString('\n')
		require.NoError(t, err)
		if strings.Contains(line, "notifications/progress") {
			return resp, r
		}
	}
}

// TestStackInflightLimit: with limits.inflight 2 a session's third
// request while two are in flight gets a JSON-RPC error; another session
// is not concerned, and once the two are cancelled the session's
// requests pass again.
func TestStackInflightLimit(t *testing.T) {
	s := startStack(t, "    options:\n      limits:\n        inflight: 2\n")
	sid := s.initialize(t, "2025-11-25")
	other := s.initialize(t, "2025-11-25")
	r1, b1 := openCall(t, s, sid, 1)
	defer r1.Body.Close()
	r2, b2 := openCall(t, s, sid, 2)
	defer r2.Body.Close()

	resp, body := s.post(t, sid, "2025-11-25", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`)
	assert.Equal(t, 200, resp.StatusCode, body)
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":3,"error":{"code":-32000,"message":"Too many requests in flight: the session's limit is 2"}}`, body)
	resp, body = s.post(t, other, "2025-11-25", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`)
	assert.Equal(t, 200, resp.StatusCode, body)
	assert.Contains(t, body, "Echo: hi")

	for _, id := range []int{1, 2} {
		resp, body = s.post(t, sid, "2025-11-25", fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d}}`, id))
		require.Equal(t, 202, resp.StatusCode, body)
	}
	for _, r := range []*bufio.Reader{b1, b2} {
		_, err := io.ReadAll(r)
		require.NoError(t, err, "the cancelled call's response ends")
	}
	require.Eventually(t, func() bool {
		_, body := s.post(t, sid, "2025-11-25", `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"message":"again"}}}`)
		return strings.Contains(body, "Echo: again")
	}, 2*time.Second, 5*time.Millisecond)
	s.do(t, http.MethodDelete, "", "Mcp-Session-Id", sid)
	s.do(t, http.MethodDelete, "", "Mcp-Session-Id", other)
	s.requireReleased(t)
}

// TestStackStreamIdle: a session whose only use is its GET stream lives
// inactivity.stream without a request, its stream kept alive all along,
// then ends with its stream; the inactivity.timeout alone would have
// ended it sooner. On a manual clock.
func TestStackStreamIdle(t *testing.T) {
	clock := enginetest.NewClock()
	s := startStack(t, "    options:\n      inactivity:\n        timeout: PT1M\n        stream: PT10M\n      sse:\n        keepalive:\n          interval: PT1M\n",
		engine.WithClock(clock.Now))
	sid := s.initialize(t, "2025-11-25")
	resp := s.get(t, sid, "")
	defer resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
	r := bufio.NewReader(resp.Body)
	// next returns the stream's next line that is not empty.
	next := func() string {
		for {
			line, err := r.ReadString('\n')
			require.NoError(t, err)
			if line != "\n" {
				return line
			}
		}
	}
	require.Equal(t, "id: :0\n", next(), "the priming event")
	require.Equal(t, "data: \n", next())

	// Each minute a keep-alive: the stream is open, and the session.
	for i := range 9 {
		clock.Tick(t, s.e, time.Minute)
		require.Equal(t, ":\n", next(), "minute %d", i+1)
	}
	clock.Tick(t, s.e, time.Minute)
	rest, err := io.ReadAll(r)
	require.NoError(t, err, "the stream ends with its session")
	assert.NotContains(t, string(rest), "data:")
	resp2, body := s.post(t, sid, "2025-11-25", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	assert.Equal(t, 404, resp2.StatusCode, body)
	s.requireReleased(t)
}
