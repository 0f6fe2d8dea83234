package h1_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/binding/http/h1"
)

type respView struct {
	Minor         int
	Status        int
	Reason        *string
	Headers       [][2]string
	ContentLength int64
	Chunked       bool
	KeepAlive     bool
}

func respViewOf(h *h1.ResponseHead) respView {
	return respView{Minor: h.Minor, Status: h.Status, Reason: strPtr(h.Reason),
		Headers: headerPairs(h.Headers), ContentLength: h.ContentLength,
		Chunked: h.Chunked, KeepAlive: h.KeepAlive}
}

func newResp() *h1.ResponseHead {
	return &h1.ResponseHead{Headers: make([]h1.Header, 0, 16)}
}

var validResponses = []struct {
	name string
	in   string
	want respView
}{
	{
		name: "ok with length",
		in:   "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 12\r\n\r\n",
		want: respView{Minor: 1, Status: 200, Reason: sp("OK"),
			Headers:       [][2]string{{"Content-Type", "application/json"}, {"Content-Length", "12"}},
			ContentLength: 12, KeepAlive: true},
	},
	{
		name: "event stream, chunked",
		in:   "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n",
		want: respView{Minor: 1, Status: 200, Reason: sp("OK"),
			Headers:       [][2]string{{"Content-Type", "text/event-stream"}, {"Transfer-Encoding", "chunked"}},
			ContentLength: -1, Chunked: true, KeepAlive: true},
	},
	{
		name: "http/1.0 closes",
		in:   "HTTP/1.0 404 Not Found\r\n\r\n",
		want: respView{Minor: 0, Status: 404, Reason: sp("Not Found"), Headers: [][2]string{}, ContentLength: -1},
	},
	{
		name: "http/1.0 keep-alive",
		in:   "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n",
		want: respView{Minor: 0, Status: 200, Reason: sp("OK"),
			Headers:       [][2]string{{"Connection", "keep-alive"}, {"Content-Length", "0"}},
			ContentLength: 0, KeepAlive: true},
	},
	{
		name: "close",
		in:   "HTTP/1.1 500 Internal Server Error\r\nConnection: close\r\n\r\n",
		want: respView{Minor: 1, Status: 500, Reason: sp("Internal Server Error"),
			Headers: [][2]string{{"Connection", "close"}}, ContentLength: -1},
	},
	{
		name: "empty reason",
		in:   "HTTP/1.1 204 \r\n\r\n",
		want: respView{Minor: 1, Status: 204, Reason: sp(""), Headers: [][2]string{}, ContentLength: -1, KeepAlive: true},
	},
	{
		name: "no SP before empty reason",
		in:   "HTTP/1.1 204\r\n\r\n",
		want: respView{Minor: 1, Status: 204, Headers: [][2]string{}, ContentLength: -1, KeepAlive: true},
	},
	{
		name: "reason with spaces, tabs and obs-text",
		in:   "HTTP/1.1 599 Very\tCustom r\xe9ason \r\n\r\n",
		want: respView{Minor: 1, Status: 599, Reason: sp("Very\tCustom r\xe9ason "), Headers: [][2]string{}, ContentLength: -1, KeepAlive: true},
	},
	{
		name: "interim",
		in:   "HTTP/1.1 100 Continue\r\n\r\n",
		want: respView{Minor: 1, Status: 100, Reason: sp("Continue"), Headers: [][2]string{}, ContentLength: -1, KeepAlive: true},
	},
	{
		name: "later minor version",
		in:   "HTTP/1.2 200 OK\nContent-Length: 1\n\n",
		want: respView{Minor: 2, Status: 200, Reason: sp("OK"),
			Headers: [][2]string{{"Content-Length", "1"}}, ContentLength: 1, KeepAlive: true},
	},
}

func TestParseResponseHead(t *testing.T) {
	for _, tt := range validResponses {
		t.Run(tt.name, func(t *testing.T) {
			buf := []byte(tt.in + "body")
			h := newResp()
			for k := 0; k < len(tt.in); k++ {
				_, err := h1.ParseResponseHead(buf[:k], h, h1.DefaultLimits())
				require.ErrorIs(t, err, h1.ErrIncomplete, "prefix %q", buf[:k])
			}
			n, err := h1.ParseResponseHead(buf, h, h1.DefaultLimits())
			require.NoError(t, err)
			assert.Equal(t, len(tt.in), n)
			assert.Equal(t, tt.want, respViewOf(h))
		})
	}
}

func TestParseResponseHeadErrors(t *testing.T) {
	tests := []errorCase{
		{name: "not http", in: "SSH-2.0-OpenSSH\r\n", status: 502, reason: "status line"},
		{name: "lowercase", in: "http/1.1 200 OK\r\n\r\n", status: 502, reason: "status line"},
		{name: "http/2", in: "HTTP/2.0 200 OK\r\n\r\n", status: 502, reason: "version"},
		{name: "no SP after version", in: "HTTP/1.1\t200 OK\r\n\r\n", status: 502, reason: "status line"},
		{name: "two-digit status", in: "HTTP/1.1 20 OK\r\n\r\n", status: 502, reason: "status line"},
		{name: "four-digit status", in: "HTTP/1.1 2000 OK\r\n\r\n", status: 502, reason: "status line"},
		{name: "status below 100", in: "HTTP/1.1 099 X\r\n\r\n", status: 502, reason: "status code"},
		{name: "status above 599", in: "HTTP/1.1 600 X\r\n\r\n", status: 502, reason: "status code"},
		{name: "tab after status", in: "HTTP/1.1 200\tOK\r\n\r\n", status: 502, reason: "status line"},
		{name: "control byte in reason", in: "HTTP/1.1 200 O\x00K\r\n\r\n", status: 502, reason: "status line"},
		{name: "bare CR in status line", in: "HTTP/1.1 200 OK\rX\r\n\r\n", status: 400, reason: "line ending"},
		{name: "obs-fold", in: "HTTP/1.1 200 OK\r\nX: a\r\n b\r\n\r\n", status: 400, reason: "folding"},
		{name: "bad field name", in: "HTTP/1.1 200 OK\r\nX : a\r\n\r\n", status: 400, reason: "header name"},
		{name: "conflicting lengths", in: "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", status: 400, reason: "conflicting"},
		{name: "bad length", in: "HTTP/1.1 200 OK\r\nContent-Length: 0x1\r\n\r\n", status: 400, reason: "Content-Length"},
		{name: "chunked with length", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 1\r\n\r\n", status: 400, reason: "with Content-Length"},
		{name: "chunked in http/1.0", in: "HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", status: 400, reason: "HTTP/1.0"},
		{name: "gzip", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", status: 501, reason: "unsupported"},
		{name: "gzip, chunked", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", status: 501, reason: "unsupported"},
		{name: "chunked twice", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", status: 400, reason: "more than once"},
		{name: "too large", in: "HTTP/1.1 200 OK\r\nX: 0123456789\r\n\r\n", lim: h1.Limits{MaxHeaderBytes: 20}, status: 431, reason: "header section"},
		{name: "too many fields", in: "HTTP/1.1 200 OK\r\nA: 1\r\nB: 2\r\n\r\n", lim: h1.Limits{MaxHeaders: 1}, status: 431, reason: "too many"},
	}
	testHeadErrors(t, tests, newResp, h1.ParseResponseHead)
}

// TestParseResponseHeadPipelined reads an interim response, then the
// final one, from one buffer.
func TestParseResponseHeadPipelined(t *testing.T) {
	buf := []byte("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi")
	h := newResp()
	n, err := h1.ParseResponseHead(buf, h, h1.Limits{})
	require.NoError(t, err)
	assert.Equal(t, 100, h.Status)
	buf = buf[n:]
	n, err = h1.ParseResponseHead(buf, h, h1.Limits{})
	require.NoError(t, err)
	assert.Equal(t, 200, h.Status)
	assert.Equal(t, "hi", string(buf[n:]))
	_, err = h1.ParseResponseHead(buf[n:], h, h1.Limits{})
	assert.False(t, errors.Is(err, h1.ErrIncomplete), "a body is no status line")
}

func TestParseResponseHeadAllocs(t *testing.T) {
	assert.Zero(t, parseAllocs(t, benchResponse, newResp(), h1.ParseResponseHead, true))
}

func TestKeepAliveTimeout(t *testing.T) {
	for _, c := range []struct {
		headers []h1.Header
		seconds int64
		ok      bool
	}{
		{[]h1.Header{{Name: []byte("Keep-Alive"), Value: []byte("timeout=5")}}, 5, true},
		{[]h1.Header{{Name: []byte("keep-alive"), Value: []byte("max=1000, Timeout = 72 ")}}, 72, true},
		{[]h1.Header{{Name: []byte("Connection"), Value: []byte("keep-alive")}, {Name: []byte("KEEP-ALIVE"), Value: []byte(`timeout="3", max=5`)}}, 3, true},
		{[]h1.Header{{Name: []byte("Keep-Alive"), Value: []byte("max=1000")}}, 0, false},
		{[]h1.Header{{Name: []byte("Keep-Alive"), Value: []byte("timeout=-1")}}, 0, false},
		{[]h1.Header{{Name: []byte("Keep-Alive"), Value: []byte("timeout=5s")}}, 0, false},
		{[]h1.Header{{Name: []byte("Keep-Alive"), Value: []byte("timeout=")}}, 0, false},
		{[]h1.Header{{Name: []byte("Keep-Alive"), Value: []byte("timeout=9999999999")}}, 0, false},
		{[]h1.Header{{Name: []byte("Keep-Alive"), Value: []byte("timeouts=5")}}, 0, false},
		{[]h1.Header{{Name: []byte("Content-Type"), Value: []byte("timeout=5")}}, 0, false},
		{nil, 0, false},
	} {
		n, ok := h1.KeepAliveTimeout(c.headers)
		assert.Equal(t, c.ok, ok, "%q", c.headers)
		assert.Equal(t, c.seconds, n, "%q", c.headers)
	}
}
