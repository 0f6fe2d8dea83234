package client_test

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/binding/http/h1"
	"github.com/sluicehq/sluice/internal/enginetest"
)

// FuzzClientResponse has an upstream answer a GET, sent through tcp →
// http server → sys:http_client, with fuzzed bytes, written in two parts
// at a fuzzed point, and then close its connection. The response the
// forward proxy gives must be what the client's own parsers make of those
// bytes (want): the final status, or 503 when no final head parses, and
// the body whole, or a body that fails to read when it was cut short or
// malformed. Every request is answered, and nothing is left held.
func FuzzClientResponse(f *testing.F) {
	for _, r := range []string{
		"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6;x=y\r\n world\r\n0\r\nT: v\r\n\r\n",
		"HTTP/1.0 200 OK\r\n\r\nuntil close",
		"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok",
		"HTTP/1.1 204 No Content\r\nContent-Length: 3\r\n\r\nabc",
		"HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\nshort",
		"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
		"HTTP/1.1 200\r\n\r\n",
		"HTTP/1.1 999 Odd\r\nContent-Length: 0\r\n\r\n",
		"garbage",
		"",
	} {
		f.Add([]byte(r), uint16(len(r)/2))
	}

	up := newFuzzUpstream(f)
	proxy, e := startForwardProxyEngine(f)
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	f.Cleanup(client.CloseIdleConnections)

	f.Fuzz(func(t *testing.T, response []byte, split uint16) {
		response = response[:min(len(response), 16<<10)]
		up.set(response, int(split))
		req, err := http.NewRequest(http.MethodGet, "http://"+proxy+"/x", nil)
		require.NoError(t, err)
		req.Host = up.addr
		resp, err := client.Do(req)
		require.NoError(t, err, "the proxy answers whatever the upstream sent: %q", response)
		body, readErr := io.ReadAll(resp.Body)
		_ = resp.Body.Close()

		status, wantBody, bad := want(response)
		if bad && len(wantBody) == 0 && !eventStream(response) {
			// The front's head still waited for the body's first bytes
			// when the response failed: it answers 502 instead.
			status, bad = http.StatusBadGateway, false
		}
		require.Equal(t, status, resp.StatusCode, "upstream sent %q", response)
		if bad {
			require.Error(t, readErr, "a body cut short or malformed must not read as complete: %q", response)
		} else {
			require.NoError(t, readErr, "upstream sent %q", response)
			require.Equal(t, string(wantBody), string(body), "upstream sent %q", response)
		}
		require.Eventually(t, func() bool { return enginetest.Released(e) }, 2*time.Second, time.Millisecond,
			"a worker still holds a buffer slot or a stream after %q", response)
	})
}

// want is what the client must make of an upstream's response r to a
// GET, read with the h1 parsers the client uses: interim heads are
// skipped; without a final head the request failed before its response
// (503); a 204 or 304 has no body; otherwise the body is framed by
// chunked coding, Content-Length or the close, and is bad when the close
// cut it short or its chunks are malformed.
func want(r []byte) (status int, body []byte, bad bool) {
	var head h1.ResponseHead
	for {
		n, err := h1.ParseResponseHead(r, &head, h1.DefaultLimits())
		if err != nil {
			return http.StatusServiceUnavailable, nil, false
		}
		r = r[n:]
		if head.Status >= 200 {
			break
		}
	}
	switch {
	case head.Status == 204 || head.Status == 304:
		return head.Status, nil, false
	case head.Chunked:
		dec := h1.ChunkedDecoder{Limits: h1.DefaultLimits()}
		for {
			data, used, done, err := dec.Decode(r)
			body = append(body, data...)
			r = r[used:]
			switch {
			case err != nil:
				return head.Status, body, true
			case done:
				return head.Status, body, false
			case used == 0:
				return head.Status, body, true // cut short
			}
		}
	case head.ContentLength >= 0:
		if int64(len(r)) < head.ContentLength {
			return head.Status, r, true
		}
		return head.Status, r[:head.ContentLength], false
	default:
		return head.Status, r, false
	}
}

// eventStream reports whether a response's final head names the
// text/event-stream content type, whose head the front sends at once.
func eventStream(r []byte) bool {
	var head h1.ResponseHead
	for {
		n, err := h1.ParseResponseHead(r, &head, h1.DefaultLimits())
		if err != nil {
			return false
		}
		if r = r[n:]; head.Status >= 200 {
			break
		}
	}
	for _, f := range head.Headers {
		if h1.EqualFold(f.Name, "content-type") {
			return bytes.HasPrefix(f.Value, []byte("text/event-stream"))
		}
	}
	return false
}

// fuzzUpstream answers each request on loopback with the bytes set last,
// in two writes, and closes the connection.
type fuzzUpstream struct {
	addr     string
	mu       sync.Mutex
	response []byte
	split    int
}

func newFuzzUpstream(tb testing.TB) *fuzzUpstream {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(tb, err)
	tb.Cleanup(func() { _ = l.Close() })
	u := &fuzzUpstream{addr: l.Addr().String()}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go u.serve(c)
		}
	}()
	return u
}

func (u *fuzzUpstream) set(response []byte, split int) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.response, u.split = response, min(split, len(response))
}

func (u *fuzzUpstream) serve(c net.Conn) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	req, err := http.ReadRequest(bufio.NewReader(c))
	if err != nil {
		return
	}
	_, _ = io.Copy(io.Discard, req.Body)
	u.mu.Lock()
	r, split := u.response, u.split
	u.mu.Unlock()
	if _, err := c.Write(r[:split]); err != nil && !errors.Is(err, net.ErrClosed) {
		return
	}
	_, _ = c.Write(r[split:])
}
