package h1_test

// net/http as an oracle. Where h1 is deliberately stricter or reads a
// field differently, the comparisons say so; see goAgrees for the cases
// where net/http rejects what h1 accepts.

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"net/http/httputil"
	"net/textproto"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/binding/http/h1"
)

// oracleRequests are valid requests on which h1 and net/http must agree,
// beyond those of validRequests.
var oracleRequests = []string{
	"GET /index.html?q=a+b&r=%20 HTTP/1.1\r\nHost: www.example.com\r\nUser-Agent: curl/8.5.0\r\nAccept: */*\r\n\r\n",
	"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:3000\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n" +
		"Mcp-Session-Id: 9f3c\r\nMcp-Protocol-Version: 2025-06-18\r\nContent-Length: 57\r\n\r\n",
	"POST /upload HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nExpect: 100-continue\r\n\r\n",
	"GET /chat HTTP/1.1\r\nHost: server.example.com\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: a\r\nCookie: a=1\r\nCookie: b=2\r\nX-Dup: 1\r\nx-dup: 2\r\n\r\n",
	"DELETE /r/1 HTTP/1.1\r\nHost: [2001:db8::1]:8080\r\nContent-Length: 0\r\n\r\n",
	"GET http://[::ffff:192.0.2.1]/x HTTP/1.1\r\nHost: y\r\n\r\n",
	"PUT /x HTTP/1.0\r\nContent-Length: 3\r\nConnection: keep-alive\r\n\r\n",
	"GET /a HTTP/1.1\nHost: a\nX:\tv\t\n\n",
	"GET / HTTP/1.1\r\nHost: a\r\nPragma: no-cache\r\n\r\n",
	"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTrailer: X-Sum, Expires\r\n\r\n",
}

// requestCorpus is every valid request of the tests: oracleRequests and
// the inputs of validRequests.
func requestCorpus() []string {
	corpus := append([]string(nil), oracleRequests...)
	for _, tt := range validRequests {
		corpus = append(corpus, tt.in)
	}
	return corpus
}

// TestNetHTTPAgreesOnRequests parses each valid request with both and
// compares what both report.
func TestNetHTTPAgreesOnRequests(t *testing.T) {
	for _, in := range requestCorpus() {
		h := newReq()
		n, err := h1.ParseRequestHead([]byte(in), h, h1.DefaultLimits())
		require.NoError(t, err, "%q", in)
		head := []byte(in[:n])
		if !goAgrees(h) {
			continue
		}
		req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(trimEmptyLines(head))))
		require.NoError(t, err, "%q", in)
		compareRequest(t, h, req, in)
	}
}

// goAgrees reports whether net/http is expected to accept a request h1
// accepted. It rejects, by design:
//   - several Content-Length values that are not textually identical
//     fields ("5" and "005") or that come as a list ("5, 5"), which RFC
//     9110 §8.6 lets a recipient accept and h1 does;
//   - a Trailer field naming Content-Length, Transfer-Encoding or Trailer
//     on a chunked request, a sender error h1 does not police since it
//     drops trailers anyway.
func goAgrees(h *h1.RequestHead) bool {
	var cls []string
	for _, f := range h.Headers {
		switch strings.ToLower(string(f.Name)) {
		case "content-length":
			cls = append(cls, string(f.Value))
		case "trailer":
			for _, k := range strings.Split(string(f.Value), ",") {
				switch textproto.CanonicalMIMEHeaderKey(strings.TrimSpace(k)) {
				case "Content-Length", "Transfer-Encoding", "Trailer":
					if h.Chunked {
						return false
					}
				}
			}
		}
	}
	for _, v := range cls {
		if strings.Contains(v, ",") || v != cls[0] {
			return false
		}
	}
	return true
}

// trimEmptyLines drops the empty lines h1 skips before a request line;
// net/http's server skips them too, but http.ReadRequest does not.
func trimEmptyLines(b []byte) []byte {
	return bytes.TrimLeft(b, "\r\n")
}

func compareRequest(t testing.TB, h *h1.RequestHead, req *http.Request, in string) {
	if tb, ok := t.(*testing.T); ok {
		tb.Helper()
	}
	assert.Equal(t, req.Method, string(h.Method), "method %q", in)
	assert.Equal(t, req.RequestURI, string(h.Target), "target %q", in)
	// h1 reads a later HTTP/1.x as HTTP/1.1 (RFC 9110 §2.5); net/http
	// keeps the minor it read.
	assert.Equal(t, min(req.ProtoMinor, 1), h.Minor, "minor %q", in)
	assert.Equal(t, req.Host, string(h.Host), "host %q", in)
	assert.Equal(t, !req.Close, h.KeepAlive, "keep-alive %q", in)
	// net/http reports 0 for a request without a length, h1 -1; both -1
	// for chunked.
	switch {
	case h.Chunked:
		assert.Equal(t, []string{"chunked"}, req.TransferEncoding, "chunked %q", in)
		assert.Equal(t, int64(-1), req.ContentLength, "content-length %q", in)
	case h.ContentLength < 0:
		assert.Equal(t, int64(0), req.ContentLength, "content-length %q", in)
	default:
		assert.Equal(t, h.ContentLength, req.ContentLength, "content-length %q", in)
	}
	// Headers, grouped as net/http groups them. net/http moves Host and
	// Transfer-Encoding out of the map, Trailer too on a chunked request,
	// folds repeated Content-Length fields into one, and adds
	// Cache-Control: no-cache for Pragma: no-cache (RFC 7234 §5.4).
	want := http.Header{}
	for _, f := range h.Headers {
		k := textproto.CanonicalMIMEHeaderKey(string(f.Name))
		switch {
		case k == "Host" || k == "Transfer-Encoding" || k == "Trailer" && h.Chunked:
			continue
		case k == "Content-Length" && len(want[k]) > 0:
			continue
		}
		want[k] = append(want[k], string(f.Value))
	}
	if p := want["Pragma"]; len(p) > 0 && p[0] == "no-cache" && want["Cache-Control"] == nil {
		want["Cache-Control"] = []string{"no-cache"}
	}
	got := req.Header.Clone()
	for k, vs := range got {
		for i, v := range vs {
			vs[i] = strings.TrimRight(v, " \t")
		}
		got[k] = vs
	}
	assert.Equal(t, want, got, "headers %q", in)
}

var oracleResponses = []string{
	"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n",
	"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n\r\n",
	"HTTP/1.1 202 Accepted\r\nMcp-Session-Id: 9f3c\r\nContent-Length: 0\r\n\r\n",
	"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 1\r\n\r\n",
	"HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 9\r\n\r\n",
	"HTTP/1.1 200 OK\nSet-Cookie: a=1\nSet-Cookie: b=2\nContent-Length: 0\n\n",
}

func TestNetHTTPAgreesOnResponses(t *testing.T) {
	for _, in := range oracleResponses {
		h := newResp()
		n, err := h1.ParseResponseHead([]byte(in), h, h1.DefaultLimits())
		require.NoError(t, err, "%q", in)
		require.Equal(t, len(in), n)
		resp, err := http.ReadResponse(bufio.NewReader(strings.NewReader(in)), nil)
		require.NoError(t, err, "%q", in)
		assert.Equal(t, resp.StatusCode, h.Status)
		assert.Equal(t, resp.ProtoMinor, h.Minor)
		assert.Equal(t, resp.ContentLength, h.ContentLength)
		assert.Equal(t, resp.TransferEncoding != nil, h.Chunked)
		assert.Equal(t, !resp.Close, h.KeepAlive, "%q", in)
		got := http.Header{}
		for _, f := range h.Headers {
			k := textproto.CanonicalMIMEHeaderKey(string(f.Name))
			if k != "Transfer-Encoding" {
				got[k] = append(got[k], string(f.Value))
			}
		}
		// net/http drops Connection: close from a response's header.
		delete(got, "Connection")
		delete(resp.Header, "Connection")
		assert.Equal(t, resp.Header, got)
	}
}

// TestNetHTTPAgreesOnChunked decodes each valid body with both.
func TestNetHTTPAgreesOnChunked(t *testing.T) {
	for _, tt := range validChunked {
		if strings.Contains(tt.in, " ;") {
			continue // BWS before ';': see FuzzChunkedDecoder
		}
		body, err := io.ReadAll(httputil.NewChunkedReader(strings.NewReader(tt.in)))
		require.NoError(t, err, "%q", tt.in)
		assert.Equal(t, tt.body, string(body), "%q", tt.in)
	}
}

// TestNetHTTPReadsEncoders checks net/http reads what the encoders write.
func TestNetHTTPReadsEncoders(t *testing.T) {
	b := h1.AppendRequestLine(nil, []byte("POST"), []byte("/mcp?a b"))
	b = h1.AppendHeader(b, []byte("Host"), []byte("example.com"))
	b = h1.AppendHeader(b, []byte("X-Inject"), []byte("v\r\nX-Evil: 1"))
	b = h1.AppendHeader(b, []byte("Transfer-Encoding"), []byte("chunked"))
	b = h1.AppendHeadEnd(b)
	b = h1.AppendChunkHeader(b, 11)
	b = append(b, "hello world"...)
	b = h1.AppendChunkEnd(b)
	b = h1.AppendLastChunkTrailers(b, []h1.Header{{Name: []byte("X-Sum"), Value: []byte("42")}})
	req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(b)))
	require.NoError(t, err)
	assert.Equal(t, "/mcp?a%20b", req.RequestURI)
	assert.Equal(t, "v  X-Evil: 1", req.Header.Get("X-Inject"))
	assert.Empty(t, req.Header.Get("X-Evil"))
	body, err := io.ReadAll(req.Body)
	require.NoError(t, err)
	assert.Equal(t, "hello world", string(body))

	b = h1.AppendErrorResponse(nil, 414, "request target too long")
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(b)), nil)
	require.NoError(t, err)
	assert.Equal(t, 414, resp.StatusCode)
	assert.True(t, resp.Close)
	body, err = io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Equal(t, "414 URI Too Long: request target too long\n", string(body))
	assert.Equal(t, int64(len(body)), resp.ContentLength)
}

// TestStricterThanNetHTTP pins the documented differences: heads net/http's
// ReadRequest accepts and h1 rejects, and the two kinds it rejects that h1
// accepts.
func TestStricterThanNetHTTP(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		h1Accepts bool
	}{
		{name: "obs-fold", in: "GET / HTTP/1.1\r\nHost: a\r\nX: a\r\n b\r\n\r\n"},
		{name: "chunked in http/1.0", in: "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n"},
		{name: "chunked with length", in: "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n"},
		{name: "host with space", in: "GET / HTTP/1.1\r\nHost: a b\r\n\r\n"},
		{name: "asterisk for GET", in: "GET * HTTP/1.1\r\nHost: a\r\n\r\n"},
		{name: "CONNECT with a path", in: "CONNECT /rpc HTTP/1.1\r\nHost: a\r\n\r\n"},
		{name: "missing host", in: "GET / HTTP/1.1\r\n\r\n"},
		{name: "equal content-lengths", in: "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nContent-Length: 005\r\n\r\n", h1Accepts: true},
		{name: "content-length list", in: "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5, 5\r\n\r\n", h1Accepts: true},
		{name: "content-length as trailer", in: "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTrailer: Content-Length\r\n\r\n", h1Accepts: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, goErr := http.ReadRequest(bufio.NewReader(strings.NewReader(tt.in)))
			h := newReq()
			_, err := h1.ParseRequestHead([]byte(tt.in), h, h1.Limits{})
			if !tt.h1Accepts {
				assert.NoError(t, goErr, "net/http accepts %q", tt.in)
				assert.Error(t, err, "h1 rejects %q", tt.in)
				return
			}
			assert.Error(t, goErr, "net/http rejects %q", tt.in)
			assert.NoError(t, err, "h1 accepts %q", tt.in)
			assert.False(t, goAgrees(h), "goAgrees excuses %q", tt.in)
		})
	}
}
