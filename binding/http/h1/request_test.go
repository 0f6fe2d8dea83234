package h1_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/binding/http/h1"
)

// reqView is a RequestHead with strings, for comparison.
type reqView struct {
	Method, Target string
	Minor          int
	Headers        [][2]string
	ContentLength  int64
	Chunked        bool
	KeepAlive      bool
	ExpectContinue bool
	Host           *string
	Upgrade        *string
}

func viewOf(h *h1.RequestHead) reqView {
	return reqView{
		Method: string(h.Method), Target: string(h.Target), Minor: h.Minor,
		Headers: headerPairs(h.Headers), ContentLength: h.ContentLength,
		Chunked: h.Chunked, KeepAlive: h.KeepAlive, ExpectContinue: h.ExpectContinue,
		Host: strPtr(h.Host), Upgrade: strPtr(h.Upgrade),
	}
}

func headerPairs(hs []h1.Header) [][2]string {
	out := [][2]string{}
	for _, h := range hs {
		out = append(out, [2]string{string(h.Name), string(h.Value)})
	}
	return out
}

func strPtr(b []byte) *string {
	if b == nil {
		return nil
	}
	s := string(b)
	return &s
}

func sp(s string) *string { return &s }

func newReq() *h1.RequestHead {
	return &h1.RequestHead{Headers: make([]h1.Header, 0, 16)}
}

// statusOf returns the status of an *h1.Error, failing the test for any
// other error.
func statusOf(t *testing.T, err error) int {
	t.Helper()
	var perr *h1.Error
	require.True(t, errors.As(err, &perr), "want *h1.Error, got %v", err)
	return perr.Status
}

// errorCase is an input that must be rejected with status and an error
// that contains reason.
type errorCase struct {
	name   string
	in     string
	lim    h1.Limits
	status int
	reason string
}

// testHeadErrors parses each case's input into a fresh head from newHead
// and wants it rejected as the case says, with nothing consumed.
func testHeadErrors[H any](t *testing.T, tests []errorCase, newHead func() *H, parse func([]byte, *H, h1.Limits) (int, error)) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := parse([]byte(tt.in), newHead(), tt.lim)
			require.Error(t, err)
			assert.Zero(t, n)
			assert.Equal(t, tt.status, statusOf(t, err))
			assert.Contains(t, err.Error(), tt.reason)
		})
	}
}

// get is a minimal valid HTTP/1.1 request with extra field lines.
func get(lines ...string) string {
	return "GET / HTTP/1.1\r\nHost: a\r\n" + strings.Join(lines, "") + "\r\n"
}

var validRequests = []struct {
	name string
	in   string
	want reqView
}{
	{
		name: "later minor version read as HTTP/1.1",
		in:   "GET / HTTP/1.2\r\nHost: example.com\r\n\r\n",
		want: reqView{Method: "GET", Target: "/", Minor: 1,
			Headers:       [][2]string{{"Host", "example.com"}},
			ContentLength: -1, KeepAlive: true, Host: sp("example.com")},
	},
	{
		name: "minimal",
		in:   "GET / HTTP/1.1\r\nHost: example.com\r\n\r\n",
		want: reqView{Method: "GET", Target: "/", Minor: 1,
			Headers:       [][2]string{{"Host", "example.com"}},
			ContentLength: -1, KeepAlive: true, Host: sp("example.com")},
	},
	{
		name: "mcp post",
		in: "POST /mcp?session=1 HTTP/1.1\r\n" +
			"Host: localhost:8080\r\n" +
			"Content-Type: application/json\r\n" +
			"Accept: application/json, text/event-stream\r\n" +
			"Mcp-Session-Id: 1868a90c-2a8e-4d4b\r\n" +
			"Content-Length: 42\r\n\r\n",
		want: reqView{Method: "POST", Target: "/mcp?session=1", Minor: 1,
			Headers: [][2]string{
				{"Host", "localhost:8080"},
				{"Content-Type", "application/json"},
				{"Accept", "application/json, text/event-stream"},
				{"Mcp-Session-Id", "1868a90c-2a8e-4d4b"},
				{"Content-Length", "42"},
			},
			ContentLength: 42, KeepAlive: true, Host: sp("localhost:8080")},
	},
	{
		name: "http/1.0 without host closes",
		in:   "GET /a HTTP/1.0\r\n\r\n",
		want: reqView{Method: "GET", Target: "/a", Minor: 0, Headers: [][2]string{}, ContentLength: -1},
	},
	{
		name: "http/1.0 keep-alive",
		in:   "GET /a HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n",
		want: reqView{Method: "GET", Target: "/a", Minor: 0,
			Headers:       [][2]string{{"Connection", "Keep-Alive"}},
			ContentLength: -1, KeepAlive: true},
	},
	{
		name: "http/1.0 close wins over keep-alive",
		in:   "GET /a HTTP/1.0\r\nConnection: keep-alive, close\r\n\r\n",
		want: reqView{Method: "GET", Target: "/a", Minor: 0,
			Headers:       [][2]string{{"Connection", "keep-alive, close"}},
			ContentLength: -1},
	},
	{
		name: "http/1.1 close in a list, any case",
		in:   get("Connection: foo, ,CLOSE\r\n"),
		want: reqView{Method: "GET", Target: "/", Minor: 1,
			Headers:       [][2]string{{"Host", "a"}, {"Connection", "foo, ,CLOSE"}},
			ContentLength: -1, Host: sp("a")},
	},
	{
		name: "chunked any case",
		in:   "POST /u HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: Chunked\r\n\r\n",
		want: reqView{Method: "POST", Target: "/u", Minor: 1,
			Headers:       [][2]string{{"Host", "a"}, {"Transfer-Encoding", "Chunked"}},
			ContentLength: -1, Chunked: true, KeepAlive: true, Host: sp("a")},
	},
	{
		name: "equal content-lengths",
		in:   get("Content-Length: 5\r\n", "content-length: 005, 5\r\n"),
		want: reqView{Method: "GET", Target: "/", Minor: 1,
			Headers:       [][2]string{{"Host", "a"}, {"Content-Length", "5"}, {"content-length", "005, 5"}},
			ContentLength: 5, KeepAlive: true, Host: sp("a")},
	},
	{
		name: "zero content-length",
		in:   get("Content-Length: 0\r\n"),
		want: reqView{Method: "GET", Target: "/", Minor: 1,
			Headers:       [][2]string{{"Host", "a"}, {"Content-Length", "0"}},
			ContentLength: 0, KeepAlive: true, Host: sp("a")},
	},
	{
		name: "largest content-length",
		in:   get("Content-Length: 9223372036854775807\r\n"),
		want: reqView{Method: "GET", Target: "/", Minor: 1,
			Headers:       [][2]string{{"Host", "a"}, {"Content-Length", "9223372036854775807"}},
			ContentLength: 1<<63 - 1, KeepAlive: true, Host: sp("a")},
	},
	{
		name: "expect 100-continue",
		in:   get("Expect: 100-Continue\r\n"),
		want: reqView{Method: "GET", Target: "/", Minor: 1,
			Headers:       [][2]string{{"Host", "a"}, {"Expect", "100-Continue"}},
			ContentLength: -1, KeepAlive: true, ExpectContinue: true, Host: sp("a")},
	},
	{
		name: "expect ignored in http/1.0",
		in:   "GET / HTTP/1.0\r\nExpect: 100-continue\r\n\r\n",
		want: reqView{Method: "GET", Target: "/", Minor: 0,
			Headers:       [][2]string{{"Expect", "100-continue"}},
			ContentLength: -1},
	},
	{
		name: "upgrade named in connection",
		in:   get("Connection: keep-alive, Upgrade\r\n", "Upgrade: websocket\r\n"),
		want: reqView{Method: "GET", Target: "/", Minor: 1,
			Headers:       [][2]string{{"Host", "a"}, {"Connection", "keep-alive, Upgrade"}, {"Upgrade", "websocket"}},
			ContentLength: -1, KeepAlive: true, Host: sp("a"), Upgrade: sp("websocket")},
	},
	{
		name: "upgrade not named in connection is ignored",
		in:   get("Upgrade: websocket\r\n"),
		want: reqView{Method: "GET", Target: "/", Minor: 1,
			Headers:       [][2]string{{"Host", "a"}, {"Upgrade", "websocket"}},
			ContentLength: -1, KeepAlive: true, Host: sp("a")},
	},
	{
		name: "upgrade ignored in http/1.0",
		in:   "GET / HTTP/1.0\r\nConnection: upgrade\r\nUpgrade: h2c\r\n\r\n",
		want: reqView{Method: "GET", Target: "/", Minor: 0,
			Headers:       [][2]string{{"Connection", "upgrade"}, {"Upgrade", "h2c"}},
			ContentLength: -1},
	},
	{
		name: "ows trimmed, inner whitespace kept, obs-text kept",
		in:   get("X-A: \t a  b \t\r\n", "X-B:\r\n", "X-C:   \r\n", "X-D: caf\xc3\xa9\r\n", "X-E: a:b\r\n"),
		want: reqView{Method: "GET", Target: "/", Minor: 1,
			Headers: [][2]string{{"Host", "a"}, {"X-A", "a  b"}, {"X-B", ""}, {"X-C", ""},
				{"X-D", "caf\xc3\xa9"}, {"X-E", "a:b"}},
			ContentLength: -1, KeepAlive: true, Host: sp("a")},
	},
	{
		name: "bare LF line endings",
		in:   "GET / HTTP/1.1\nHost: a\nX: b\r\n\n",
		want: reqView{Method: "GET", Target: "/", Minor: 1,
			Headers:       [][2]string{{"Host", "a"}, {"X", "b"}},
			ContentLength: -1, KeepAlive: true, Host: sp("a")},
	},
	{
		name: "leading empty lines skipped",
		in:   "\r\n\n\r\n\nGET / HTTP/1.1\r\nHost: a\r\n\r\n",
		want: reqView{Method: "GET", Target: "/", Minor: 1,
			Headers:       [][2]string{{"Host", "a"}},
			ContentLength: -1, KeepAlive: true, Host: sp("a")},
	},
	{
		name: "absolute-form authority replaces host",
		in:   "GET http://origin.example:81/p?q HTTP/1.1\r\nHost: other\r\n\r\n",
		want: reqView{Method: "GET", Target: "http://origin.example:81/p?q", Minor: 1,
			Headers:       [][2]string{{"Host", "other"}},
			ContentLength: -1, KeepAlive: true, Host: sp("origin.example:81")},
	},
	{
		name: "absolute-form without path",
		in:   "GET https://[::1]:8443?x HTTP/1.1\r\nHost: [::1]:8443\r\n\r\n",
		want: reqView{Method: "GET", Target: "https://[::1]:8443?x", Minor: 1,
			Headers:       [][2]string{{"Host", "[::1]:8443"}},
			ContentLength: -1, KeepAlive: true, Host: sp("[::1]:8443")},
	},
	{
		name: "connect authority-form",
		in:   "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n",
		want: reqView{Method: "CONNECT", Target: "example.com:443", Minor: 1,
			Headers:       [][2]string{{"Host", "example.com:443"}},
			ContentLength: -1, KeepAlive: true, Host: sp("example.com:443")},
	},
	{
		name: "options asterisk-form",
		in:   "OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n",
		want: reqView{Method: "OPTIONS", Target: "*", Minor: 1,
			Headers:       [][2]string{{"Host", "a"}},
			ContentLength: -1, KeepAlive: true, Host: sp("a")},
	},
	{
		name: "empty host",
		in:   "GET / HTTP/1.1\r\nHost:\r\n\r\n",
		want: reqView{Method: "GET", Target: "/", Minor: 1,
			Headers:       [][2]string{{"Host", ""}},
			ContentLength: -1, KeepAlive: true, Host: sp("")},
	},
	{
		name: "extension method, escapes, raw utf-8 and invalid escapes in the query",
		in:   "M-SEARCH /a%2Fb/caf\xc3\xa9?q=100%&r=%zz HTTP/1.1\r\nHost: a\r\n\r\n",
		want: reqView{Method: "M-SEARCH", Target: "/a%2Fb/caf\xc3\xa9?q=100%&r=%zz", Minor: 1,
			Headers:       [][2]string{{"Host", "a"}},
			ContentLength: -1, KeepAlive: true, Host: sp("a")},
	},
}

func TestParseRequestHead(t *testing.T) {
	for _, tt := range validRequests {
		t.Run(tt.name, func(t *testing.T) {
			h := newReq()
			// The body or next request after the head is not consumed.
			n, err := h1.ParseRequestHead([]byte(tt.in+"NEXT"), h, h1.DefaultLimits())
			require.NoError(t, err)
			assert.Equal(t, len(tt.in), n)
			assert.Equal(t, tt.want, viewOf(h))
		})
	}
}

func TestParseRequestHeadErrors(t *testing.T) {
	long := strings.Repeat("a", 100)
	tests := []errorCase{
		{name: "too many empty lines", in: "\r\n\r\n\r\n\r\n\r\nGET / HTTP/1.1\r\n", status: 400, reason: "empty lines"},
		{name: "bare CR before request line", in: "\rGET / HTTP/1.1\r\n", status: 400, reason: "line ending"},
		{name: "empty method", in: " / HTTP/1.1\r\n\r\n", status: 400, reason: "method"},
		{name: "separator in method", in: "GE(T / HTTP/1.1\r\n\r\n", status: 400, reason: "method"},
		{name: "tab after method", in: "GET\t/ HTTP/1.1\r\n\r\n", status: 400, reason: "method"},
		{name: "TLS handshake", in: "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", status: 400, reason: "method"},
		{name: "double SP", in: "GET  / HTTP/1.1\r\n\r\n", status: 400, reason: "request line"},
		{name: "no version (HTTP/0.9)", in: "GET /\r\n\r\n", status: 400, reason: "request line"},
		{name: "no version, bare LF", in: "GET /\n\n", status: 400, reason: "request line"},
		{name: "control byte in target", in: "GET /a\x01b HTTP/1.1\r\n\r\n", status: 400, reason: "target"},
		{name: "DEL in target", in: "GET /a\x7f HTTP/1.1\r\n\r\n", status: 400, reason: "target"},
		{name: "tab in target", in: "GET /a\tb HTTP/1.1\r\n\r\n", status: 400, reason: "target"},
		{name: "space in target", in: "GET /a b HTTP/1.1\r\n\r\n", status: 400, reason: "version"},
		{name: "lowercase version", in: "GET / http/1.1\r\n\r\n", status: 400, reason: "version"},
		{name: "long version", in: "GET / HTTP/1.10\r\n\r\n", status: 400, reason: "version"},
		{name: "short version", in: "GET / HTTP/1\r\n\r\n", status: 400, reason: "version"},
		{name: "no dot in version", in: "GET / HTTP/1-1\r\n\r\n", status: 400, reason: "version"},
		{name: "trailing SP after version", in: "GET / HTTP/1.1 \r\n\r\n", status: 400, reason: "version"},
		{name: "HTTP/2.0", in: "GET / HTTP/2.0\r\nHost: a\r\n\r\n", status: 505, reason: "version"},
		{name: "HTTP/0.9", in: "GET / HTTP/0.9\r\n\r\n", status: 505, reason: "version"},
		{name: "h2 preface", in: "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", status: 505, reason: "version"},
		{name: "bare CR after version", in: "GET / HTTP/1.1\rHost: a\r\n\r\n", status: 400, reason: "line ending"},
		{name: "asterisk for GET", in: "GET * HTTP/1.1\r\nHost: a\r\n\r\n", status: 400, reason: "target"},
		{name: "CONNECT with a path", in: "CONNECT /x HTTP/1.1\r\nHost: a\r\n\r\n", status: 400, reason: "target"},
		{name: "CONNECT without port", in: "CONNECT example.com HTTP/1.1\r\nHost: a\r\n\r\n", status: 400, reason: "target"},
		{name: "CONNECT with userinfo", in: "CONNECT u@h:1 HTTP/1.1\r\nHost: a\r\n\r\n", status: 400, reason: "target"},
		{name: "relative target", in: "GET a/b HTTP/1.1\r\nHost: a\r\n\r\n", status: 400, reason: "target"},
		{name: "opaque absolute target", in: "GET urn:x HTTP/1.1\r\nHost: a\r\n\r\n", status: 400, reason: "target"},
		{name: "absolute target without host", in: "GET http:///p HTTP/1.1\r\nHost: a\r\n\r\n", status: 400, reason: "target"},
		{name: "absolute target with userinfo", in: "GET http://u:p@h/ HTTP/1.1\r\nHost: a\r\n\r\n", status: 400, reason: "target"},
		{name: "absolute target with bad port", in: "GET http://h:8x/ HTTP/1.1\r\nHost: a\r\n\r\n", status: 400, reason: "target"},
		{name: "absolute target with bad IPv6", in: "GET http://[::1::2]/ HTTP/1.1\r\nHost: a\r\n\r\n", status: 400, reason: "target"},
		{name: "invalid escape in path", in: "GET /a%zz HTTP/1.1\r\nHost: a\r\n\r\n", status: 400, reason: "target"},
		{name: "truncated escape in path", in: "GET /a%2 HTTP/1.1\r\nHost: a\r\n\r\n", status: 400, reason: "target"},

		{name: "space before colon", in: get("Host : a\r\n"), status: 400, reason: "header name"},
		{name: "tab before colon", in: get("X\t: a\r\n"), status: 400, reason: "header name"},
		{name: "no colon", in: get("X a\r\n"), status: 400, reason: "header name"},
		{name: "empty name", in: get(": a\r\n"), status: 400, reason: "header name"},
		{name: "separator in name", in: get("X(y): a\r\n"), status: 400, reason: "header name"},
		{name: "obs-fold", in: get("X: a\r\n", " b\r\n"), status: 400, reason: "folding"},
		{name: "obs-fold with tab", in: get("X: a\r\n", "\tb\r\n"), status: 400, reason: "folding"},
		{name: "whitespace before first field", in: "GET / HTTP/1.1\r\n Host: a\r\n\r\n", status: 400, reason: "folding"},
		{name: "NUL in value", in: get("X: a\x00b\r\n"), status: 400, reason: "header value"},
		{name: "bare CR in value", in: get("X: a\rb\r\n"), status: 400, reason: "header value"},
		{name: "control byte in value", in: get("X: a\x1bb\r\n"), status: 400, reason: "header value"},
		{name: "DEL in value", in: get("X: a\x7f\r\n"), status: 400, reason: "header value"},
		{name: "bare CR ends the head", in: "GET / HTTP/1.1\r\nHost: a\r\n\rX", status: 400, reason: "line ending"},

		{name: "non-digit content-length", in: get("Content-Length: 1a\r\n"), status: 400, reason: "Content-Length"},
		{name: "signed content-length", in: get("Content-Length: +1\r\n"), status: 400, reason: "Content-Length"},
		{name: "negative content-length", in: get("Content-Length: -1\r\n"), status: 400, reason: "Content-Length"},
		{name: "empty content-length", in: get("Content-Length: \r\n"), status: 400, reason: "Content-Length"},
		{name: "content-length overflow", in: get("Content-Length: 9223372036854775808\r\n"), status: 400, reason: "Content-Length"},
		{name: "content-length with inner space", in: get("Content-Length: 1 2\r\n"), status: 400, reason: "Content-Length"},
		{name: "content-length list with empty element", in: get("Content-Length: 5,\r\n"), status: 400, reason: "Content-Length"},
		{name: "differing content-lengths", in: get("Content-Length: 5\r\n", "Content-Length: 6\r\n"), status: 400, reason: "conflicting"},
		{name: "differing content-length list", in: get("Content-Length: 5, 6\r\n"), status: 400, reason: "conflicting"},

		{name: "transfer-encoding with content-length", in: get("Transfer-Encoding: chunked\r\n", "Content-Length: 5\r\n"), status: 400, reason: "with Content-Length"},
		{name: "content-length with transfer-encoding", in: get("Content-Length: 5\r\n", "Transfer-Encoding: chunked\r\n"), status: 400, reason: "with Content-Length"},
		{name: "transfer-encoding in http/1.0", in: "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", status: 400, reason: "HTTP/1.0"},
		{name: "chunked not last", in: get("Transfer-Encoding: chunked, gzip\r\n"), status: 400, reason: "final"},
		{name: "gzip alone", in: get("Transfer-Encoding: gzip\r\n"), status: 400, reason: "final"},
		{name: "identity", in: get("Transfer-Encoding: identity\r\n"), status: 400, reason: "final"},
		{name: "gzip then chunked", in: get("Transfer-Encoding: gzip, chunked\r\n"), status: 501, reason: "unsupported"},
		{name: "unknown coding then chunked over two fields", in: get("Transfer-Encoding: x-zip\r\n", "Transfer-Encoding: chunked\r\n"), status: 501, reason: "unsupported"},
		{name: "chunked twice", in: get("Transfer-Encoding: chunked, chunked\r\n"), status: 400, reason: "more than once"},
		{name: "chunked in two fields", in: get("Transfer-Encoding: chunked\r\n", "Transfer-Encoding: chunked\r\n"), status: 400, reason: "more than once"},
		{name: "empty transfer-encoding", in: get("Transfer-Encoding:\r\n"), status: 400, reason: "malformed Transfer-Encoding"},
		{name: "empty transfer-coding element", in: get("Transfer-Encoding: , chunked\r\n"), status: 400, reason: "malformed Transfer-Encoding"},
		{name: "chunked with a parameter", in: get("Transfer-Encoding: chunked;q=1\r\n"), status: 400, reason: "malformed Transfer-Encoding"},
		{name: "chunked with a stray byte", in: get("Transfer-Encoding: chunked\"\r\n"), status: 400, reason: "malformed Transfer-Encoding"},

		{name: "missing host", in: "GET / HTTP/1.1\r\nX: a\r\n\r\n", status: 400, reason: "missing Host"},
		{name: "missing host with absolute-form", in: "GET http://a/ HTTP/1.1\r\n\r\n", status: 400, reason: "missing Host"},
		{name: "two hosts", in: get("Host: a\r\n"), status: 400, reason: "multiple Host"},
		{name: "two hosts in http/1.0", in: "GET / HTTP/1.0\r\nHost: a\r\nhost: b\r\n\r\n", status: 400, reason: "multiple Host"},
		{name: "host with space", in: "GET / HTTP/1.1\r\nHost: a b\r\n\r\n", status: 400, reason: "Host"},
		{name: "host with userinfo", in: "GET / HTTP/1.1\r\nHost: u@a\r\n\r\n", status: 400, reason: "Host"},
		{name: "host with path", in: "GET / HTTP/1.1\r\nHost: a/b\r\n\r\n", status: 400, reason: "Host"},
		{name: "host with bad port", in: "GET / HTTP/1.1\r\nHost: a:b\r\n\r\n", status: 400, reason: "Host"},
		{name: "host with unclosed IPv6", in: "GET / HTTP/1.1\r\nHost: [::1\r\n\r\n", status: 400, reason: "Host"},

		{name: "target over MaxTarget", in: "GET /" + long + " HTTP/1.1\r\nHost: a\r\n\r\n", lim: h1.Limits{MaxTarget: 100}, status: 414, reason: "target"},
		{name: "head over MaxHeaderBytes", in: get("X: " + long + "\r\n"), lim: h1.Limits{MaxHeaderBytes: 100}, status: 431, reason: "header section"},
		{name: "fields over MaxHeaders", in: get("X: a\r\n", "Y: b\r\n"), lim: h1.Limits{MaxHeaders: 2}, status: 431, reason: "too many header"},
	}
	testHeadErrors(t, tests, newReq, h1.ParseRequestHead)
}

// TestParseRequestHeadEarlyErrors checks that limits are reported as soon
// as they are certain, before the head or even its line is complete.
func TestParseRequestHeadEarlyErrors(t *testing.T) {
	lim := h1.Limits{MaxTarget: 64, MaxHeaderBytes: 256, MaxHeaders: 3}
	tests := []struct {
		name   string
		in     string
		status int // 0: ErrIncomplete
	}{
		{name: "target at MaxTarget", in: "GET /" + strings.Repeat("a", 63), status: 0},
		{name: "target past MaxTarget", in: "GET /" + strings.Repeat("a", 64), status: 414},
		{name: "head at MaxHeaderBytes", in: get()[:len(get())-2] + "X: " + strings.Repeat("v", 256-len(get())-1), status: 0},
		{name: "head past MaxHeaderBytes", in: get()[:len(get())-2] + "X: " + strings.Repeat("v", 256-len(get())), status: 431},
		{name: "field past MaxHeaders", in: get("A: 1\r\n", "B: 2\r\n")[:len(get("A: 1\r\n", "B: 2\r\n"))-2] + "C", status: 431},
		{name: "field line at MaxHeaders", in: get("A: 1\r\n", "B: 2\r\n")[:len(get("A: 1\r\n", "B: 2\r\n"))-2] + "\r", status: 0},
		{name: "bad method byte", in: "GE\x00", status: 400},
		{name: "bad version byte", in: "GET / HTTP/1.1x", status: 400},
		{name: "unsupported version", in: "GET / HTTP/3.0\r\n", status: 505},
		{name: "obs-fold", in: "GET / HTTP/1.1\r\nHost: a\r\n ", status: 400},
		{name: "bad content-length", in: "GET / HTTP/1.1\r\nContent-Length: x\r\n", status: 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := h1.ParseRequestHead([]byte(tt.in), newReq(), lim)
			assert.Zero(t, n)
			if tt.status == 0 {
				assert.ErrorIs(t, err, h1.ErrIncomplete)
				return
			}
			assert.Equal(t, tt.status, statusOf(t, err))
		})
	}
}

// TestParseRequestHeadLimitsExact checks the bounds are inclusive.
func TestParseRequestHeadLimitsExact(t *testing.T) {
	in := get("X: 1\r\n")
	h := newReq()
	n, err := h1.ParseRequestHead([]byte(in), h, h1.Limits{MaxHeaderBytes: len(in), MaxHeaders: 2, MaxTarget: 1})
	require.NoError(t, err)
	assert.Equal(t, len(in), n)

	_, err = h1.ParseRequestHead([]byte(in), h, h1.Limits{MaxHeaderBytes: len(in) - 1})
	assert.Equal(t, 431, statusOf(t, err))
}

// TestParseRequestHeadAbsoluteWithoutHost: with the leniency on, an
// absolute-form request needs no Host field and takes its authority from
// the target; an origin-form one still does.
func TestParseRequestHeadAbsoluteWithoutHost(t *testing.T) {
	lim := h1.Limits{AbsoluteWithoutHost: true}
	h := newReq()
	in := "GET http://localhost:8080/a?b HTTP/1.1\r\nX: 1\r\n\r\n"
	n, err := h1.ParseRequestHead([]byte(in), h, lim)
	require.NoError(t, err)
	assert.Equal(t, len(in), n)
	assert.Equal(t, "localhost:8080", string(h.Host))

	_, err = h1.ParseRequestHead([]byte("GET /a HTTP/1.1\r\nX: 1\r\n\r\n"), h, lim)
	assert.Equal(t, 400, statusOf(t, err))
}

// TestParseRequestHeadSplits feeds every prefix of each valid head: each
// shorter than the head is incomplete, and the whole gives the same result
// as a single parse. Every prefix of each invalid head is either
// incomplete or fails, and once it fails every longer prefix fails with
// the same error.
func TestParseRequestHeadSplits(t *testing.T) {
	for _, tt := range validRequests {
		t.Run(tt.name, func(t *testing.T) {
			buf := []byte(tt.in)
			h := newReq()
			for k := 0; k < len(buf); k++ {
				n, err := h1.ParseRequestHead(buf[:k], h, h1.DefaultLimits())
				require.ErrorIs(t, err, h1.ErrIncomplete, "prefix %q", buf[:k])
				require.Zero(t, n)
			}
			n, err := h1.ParseRequestHead(buf, h, h1.DefaultLimits())
			require.NoError(t, err)
			assert.Equal(t, len(buf), n)
			assert.Equal(t, tt.want, viewOf(h))
		})
	}
	invalid := []string{
		"GET /a%zz HTTP/1.1\r\nHost: a\r\n\r\n",
		get("Content-Length: 5\r\n", "Content-Length: 6\r\n"),
		get("Transfer-Encoding: gzip, chunked\r\n"),
		"GET / HTTP/1.1\r\nX: a\r\n\r\n",
		"GET / HTTP/2.0\r\nHost: a\r\n\r\n",
		get("X: a\r\n", " b\r\n"),
	}
	for _, in := range invalid {
		var first error
		for k := 0; k <= len(in); k++ {
			_, err := h1.ParseRequestHead([]byte(in[:k]), newReq(), h1.DefaultLimits())
			require.Error(t, err)
			if first == nil && !errors.Is(err, h1.ErrIncomplete) {
				first = err
			}
			if first != nil {
				require.Same(t, first, err, "prefix %q", in[:k])
			}
		}
		require.NotNil(t, first, in)
	}
}

// TestParseRequestHeadPipelined parses several requests from one buffer,
// skipping each body by its Content-Length.
func TestParseRequestHeadPipelined(t *testing.T) {
	buf := []byte("GET /1 HTTP/1.1\r\nHost: a\r\n\r\n" +
		"POST /2 HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello" +
		"\r\n" + // a stray CRLF after a body, as old clients send
		"GET /3 HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n" +
		"GET /4 HTTP/1.1\r\nHo")
	h := newReq()
	var targets []string
	for {
		n, err := h1.ParseRequestHead(buf, h, h1.DefaultLimits())
		if errors.Is(err, h1.ErrIncomplete) {
			break
		}
		require.NoError(t, err)
		targets = append(targets, string(h.Target))
		buf = buf[n:]
		if h.ContentLength > 0 {
			assert.Equal(t, "hello", string(buf[:h.ContentLength]))
			buf = buf[h.ContentLength:]
		}
	}
	assert.Equal(t, []string{"/1", "/2", "/3"}, targets)
	assert.Equal(t, "GET /4 HTTP/1.1\r\nHo", string(buf))
}

// TestParseRequestHeadReuse checks that Headers keeps its backing array
// across parses and grows only when a head has more fields than fit.
func TestParseRequestHeadReuse(t *testing.T) {
	h := &h1.RequestHead{Headers: make([]h1.Header, 0, 4)}
	backing := &h.Headers[:1][0]
	_, err := h1.ParseRequestHead([]byte(get("X: 1\r\n")), h, h1.Limits{})
	require.NoError(t, err)
	assert.Same(t, backing, &h.Headers[0])
	assert.Len(t, h.Headers, 2)

	_, err = h1.ParseRequestHead([]byte(get("X: 1\r\n", "X: 2\r\n", "X: 3\r\n", "X: 4\r\n")), h, h1.Limits{})
	require.NoError(t, err)
	assert.Len(t, h.Headers, 5)
	assert.Equal(t, "4", string(h.Headers[4].Value))

	// A nil Headers works too.
	h = &h1.RequestHead{}
	_, err = h1.ParseRequestHead([]byte(get()), h, h1.Limits{})
	require.NoError(t, err)
	assert.Len(t, h.Headers, 1)
}

func TestParseRequestHeadAllocs(t *testing.T) {
	h := newReq()
	assert.Zero(t, parseAllocs(t, benchRequest, h, h1.ParseRequestHead, true))
	bad := "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: x\r\n\r\n"
	assert.Zero(t, parseAllocs(t, bad, h, h1.ParseRequestHead, false), "failing allocates nothing either")
}

// parseAllocs returns the allocations of parsing in into h with parse,
// failing t unless in is accepted as valid says.
func parseAllocs[H any](t *testing.T, in string, h *H, parse func([]byte, *H, h1.Limits) (int, error), valid bool) float64 {
	t.Helper()
	buf := []byte(in)
	return testing.AllocsPerRun(100, func() {
		if _, err := parse(buf, h, h1.DefaultLimits()); (err == nil) != valid {
			t.Fatalf("parse %q: %v", in, err)
		}
	})
}

func TestLookup(t *testing.T) {
	h := newReq()
	_, err := h1.ParseRequestHead([]byte(get("Mcp-Session-Id: s1\r\n", "mcp-session-id: s2\r\n")), h, h1.Limits{})
	require.NoError(t, err)
	v, ok := h1.Lookup(h.Headers, "MCP-SESSION-ID")
	assert.True(t, ok)
	assert.Equal(t, "s1", string(v))
	_, ok = h1.Lookup(h.Headers, "Mcp-Session")
	assert.False(t, ok)
}

func TestEqualFold(t *testing.T) {
	tests := []struct {
		name string
		a, b string
		want bool
	}{
		{name: "same", a: "host", b: "host", want: true},
		{name: "cases differ", a: "Content-TYPE", b: "content-type", want: true},
		{name: "b upper", a: "te", b: "TE", want: true},
		{name: "lengths differ", a: "hos", b: "host"},
		{name: "letters differ", a: "hosx", b: "host"},
		{name: "no unicode folding", a: "ho\u017ft", b: "hosst"},
		{name: "punctuation is not folded", a: "a\rb", b: "a-b"},
		{name: "empty", a: "", b: "", want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, h1.EqualFold([]byte(tt.a), tt.b), "b a string")
			assert.Equal(t, tt.want, h1.EqualFold([]byte(tt.a), []byte(tt.b)), "b a byte slice")
		})
	}
}

func TestHopByHop(t *testing.T) {
	for _, name := range []string{"Connection", "keep-alive", "TE", "Trailer", "transfer-encoding", "UPGRADE"} {
		assert.True(t, h1.HopByHop([]byte(name)), name)
	}
	for _, name := range []string{"", "host", "content-length", "trailers", "keep\ralive", "tee"} {
		assert.False(t, h1.HopByHop([]byte(name)), name)
	}
}

func TestError(t *testing.T) {
	_, err := h1.ParseRequestHead([]byte("GET / HTTP/2.0\r\n"), newReq(), h1.Limits{})
	assert.EqualError(t, err, "h1: 505 HTTP version not supported")
}

// TestParseDecimal covers 1*DIGIT: no sign, no whitespace, no other byte,
// and nothing past the largest int64.
func TestParseDecimal(t *testing.T) {
	for in, want := range map[string]int64{"0": 0, "7": 7, "0042": 42, "9223372036854775807": math.MaxInt64} {
		n, ok := h1.ParseDecimal([]byte(in))
		assert.True(t, ok, in)
		assert.Equal(t, want, n, in)
	}
	for _, in := range []string{"", "+5", "-1", " 5", "5 ", "1a", "0x1f", "1_000", "9223372036854775808", "99999999999999999999"} {
		_, ok := h1.ParseDecimal([]byte(in))
		assert.False(t, ok, "%q", in)
	}
}
