package h1_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/binding/http/h1"
)

func TestEncoders(t *testing.T) {
	hdr := func(name, value string) h1.Header { return h1.Header{Name: []byte(name), Value: []byte(value)} }
	tests := []struct {
		name    string
		enc     func(dst []byte) []byte
		wantEnc string
	}{
		{"status 200", func(d []byte) []byte { return h1.AppendStatusLine(d, 1, 200) }, "HTTP/1.1 200 OK\r\n"},
		{"status 1.0", func(d []byte) []byte { return h1.AppendStatusLine(d, 0, 404) }, "HTTP/1.0 404 Not Found\r\n"},
		{"status other minor", func(d []byte) []byte { return h1.AppendStatusLine(d, 7, 204) }, "HTTP/1.1 204 No Content\r\n"},
		{"status unknown", func(d []byte) []byte { return h1.AppendStatusLine(d, 1, 599) }, "HTTP/1.1 599 \r\n"},
		{"status rfc 9110 name", func(d []byte) []byte { return h1.AppendStatusLine(d, 1, 413) }, "HTTP/1.1 413 Content Too Large\r\n"},
		{"status out of range", func(d []byte) []byte { return h1.AppendStatusLine(d, 1, 42) }, "HTTP/1.1 42 \r\n"},
		{"request line", func(d []byte) []byte { return h1.AppendRequestLine(d, []byte("POST"), []byte("/mcp?x=1")) }, "POST /mcp?x=1 HTTP/1.1\r\n"},
		{"request line escapes", func(d []byte) []byte {
			return h1.AppendRequestLine(d, []byte("G T\r\n"), []byte("/a b\r\nHost: evil\x7f"))
		}, "G%20T%0d%0a /a%20b%0d%0aHost:%20evil%7f HTTP/1.1\r\n"},
		{"header", func(d []byte) []byte { return h1.AppendHeader(d, []byte("Content-Type"), []byte("text/plain")) }, "Content-Type: text/plain\r\n"},
		{"header empty value", func(d []byte) []byte { return h1.AppendHeader(d, []byte("X"), nil) }, "X: \r\n"},
		{"header injection", func(d []byte) []byte {
			return h1.AppendHeader(d, []byte("X"), []byte("a\r\nSet-Cookie: x\x00\tb"))
		}, "X: a  Set-Cookie: x \tb\r\n"},
		{"header invalid name dropped", func(d []byte) []byte { return h1.AppendHeader(d, []byte("X Y"), []byte("v")) }, ""},
		{"header empty name dropped", func(d []byte) []byte { return h1.AppendHeader(d, nil, []byte("v")) }, ""},
		{"header title", func(d []byte) []byte { return h1.AppendHeaderTitle(d, []byte("x-CUSTOM-id"), []byte("v")) }, "X-Custom-Id: v\r\n"},
		{"header title www", func(d []byte) []byte { return h1.AppendHeaderTitle(d, []byte("www-authenticate"), []byte("Bearer")) },
			"Www-Authenticate: Bearer\r\n"},
		{"header title invalid name dropped", func(d []byte) []byte { return h1.AppendHeaderTitle(d, []byte("a:b"), []byte("v")) }, ""},
		{"header title injection", func(d []byte) []byte { return h1.AppendHeaderTitle(d, []byte("x"), []byte("a\nb")) }, "X: a b\r\n"},
		{"title", func(d []byte) []byte { return h1.AppendTitle(d, []byte("access-control-ALLOW-origin, x")) }, "Access-Control-Allow-Origin, x"},
		{"header string", func(d []byte) []byte { return h1.AppendHeaderString(d, "X", "a\nb") }, "X: a b\r\n"},
		{"header string invalid name", func(d []byte) []byte { return h1.AppendHeaderString(d, "X:", "v") }, ""},
		{"header string empty name", func(d []byte) []byte { return h1.AppendHeaderString(d, "", "v") }, ""},
		{"content-length", func(d []byte) []byte { return h1.AppendContentLength(d, 1234) }, "Content-Length: 1234\r\n"},
		{"content-length negative", func(d []byte) []byte { return h1.AppendContentLength(d, -1) }, ""},
		{"head end", h1.AppendHeadEnd, "\r\n"},
		{"chunk header", func(d []byte) []byte { return h1.AppendChunkHeader(d, 26) }, "1a\r\n"},
		{"chunk header 1", func(d []byte) []byte { return h1.AppendChunkHeader(d, 1) }, "1\r\n"},
		{"chunk header 16", func(d []byte) []byte { return h1.AppendChunkHeader(d, 16) }, "10\r\n"},
		{"chunk header large", func(d []byte) []byte { return h1.AppendChunkHeader(d, 0x7fffffffffffffff) }, "7fffffffffffffff\r\n"},
		{"chunk header zero", func(d []byte) []byte { return h1.AppendChunkHeader(d, 0) }, ""},
		{"chunk header negative", func(d []byte) []byte { return h1.AppendChunkHeader(d, -5) }, ""},
		{"chunk end", h1.AppendChunkEnd, "\r\n"},
		{"last chunk", h1.AppendLastChunk, "0\r\n\r\n"},
		{"last chunk trailers", func(d []byte) []byte {
			return h1.AppendLastChunkTrailers(d, []h1.Header{hdr("X-Sum", "1"), hdr("Bad Name", "2"), hdr("Y", "\r\n")})
		}, "0\r\nX-Sum: 1\r\nY:   \r\n\r\n"},
		{"error response", func(d []byte) []byte { return h1.AppendErrorResponse(d, 431, "too many header fields") },
			"HTTP/1.1 431 Request Header Fields Too Large\r\n" +
				"Content-Type: text/plain; charset=utf-8\r\nContent-Length: 60\r\nConnection: close\r\n\r\n" +
				"431 Request Header Fields Too Large: too many header fields\n"},
		{"error response without reason", func(d []byte) []byte { return h1.AppendErrorResponse(d, 400, "") },
			"HTTP/1.1 400 Bad Request\r\n" +
				"Content-Type: text/plain; charset=utf-8\r\nContent-Length: 16\r\nConnection: close\r\n\r\n" +
				"400 Bad Request\n"},
		{"error response negative status", func(d []byte) []byte { return h1.AppendErrorResponse(d, -1, "") },
			"HTTP/1.1 -1 \r\n" +
				"Content-Type: text/plain; charset=utf-8\r\nContent-Length: 3\r\nConnection: close\r\n\r\n" +
				"-1\n"},
		{"error response unknown status", func(d []byte) []byte { return h1.AppendErrorResponse(d, 599, "x") },
			"HTTP/1.1 599 \r\n" +
				"Content-Type: text/plain; charset=utf-8\r\nContent-Length: 7\r\nConnection: close\r\n\r\n" +
				"599: x\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.wantEnc, string(tt.enc(nil)))
			// Appends, keeping what dst held.
			assert.Equal(t, "prefix"+tt.wantEnc, string(tt.enc([]byte("prefix"))))
			dst := make([]byte, 0, 256)
			allocs := testing.AllocsPerRun(10, func() { dst = tt.enc(dst[:0]) })
			assert.Zero(t, allocs)
		})
	}
}

// TestEncodeParseRoundTrip checks that what the encoders write, the
// parsers read back unchanged.
func TestEncodeParseRoundTrip(t *testing.T) {
	b := h1.AppendRequestLine(nil, []byte("POST"), []byte("/mcp"))
	b = h1.AppendHeader(b, []byte("Host"), []byte("localhost"))
	b = h1.AppendHeader(b, []byte("X-Odd"), []byte("a\r\nb"))
	b = h1.AppendContentLength(b, 5)
	b = h1.AppendHeadEnd(b)
	req := newReq()
	n, err := h1.ParseRequestHead(b, req, h1.Limits{})
	require.NoError(t, err)
	assert.Equal(t, len(b), n)
	assert.Equal(t, "/mcp", string(req.Target))
	assert.Equal(t, [][2]string{{"Host", "localhost"}, {"X-Odd", "a  b"}, {"Content-Length", "5"}}, headerPairs(req.Headers))

	b = h1.AppendStatusLine(nil, 1, 200)
	b = h1.AppendHeader(b, []byte("Transfer-Encoding"), []byte("chunked"))
	b = h1.AppendHeadEnd(b)
	head := len(b)
	b = h1.AppendChunkHeader(b, 5)
	b = append(b, "hello"...)
	b = h1.AppendChunkEnd(b)
	b = h1.AppendLastChunkTrailers(b, []h1.Header{{Name: []byte("X-Sum"), Value: []byte("1")}})
	resp := newResp()
	n, err = h1.ParseResponseHead(b, resp, h1.Limits{})
	require.NoError(t, err)
	assert.Equal(t, head, n)
	assert.True(t, resp.Chunked)
	assert.Equal(t, decoded{Body: "hello", Consumed: len(b) - n, Done: true}, decodeAll(t, b[n:], h1.Limits{}))
}

func TestStatusText(t *testing.T) {
	assert.Equal(t, "OK", h1.StatusText(200))
	assert.Equal(t, "URI Too Long", h1.StatusText(414))
	assert.Equal(t, "Request Header Fields Too Large", h1.StatusText(431))
	assert.Equal(t, "Unprocessable Content", h1.StatusText(422))
	assert.Equal(t, "HTTP Version Not Supported", h1.StatusText(505))
	assert.Empty(t, h1.StatusText(-1))
	assert.Empty(t, h1.StatusText(299))
	assert.Empty(t, h1.StatusText(1000))
}

func TestValidators(t *testing.T) {
	assert.True(t, h1.ValidHeaderName([]byte("Mcp-Session-Id")))
	assert.False(t, h1.ValidHeaderName([]byte("a b")))
	assert.False(t, h1.ValidHeaderName(nil))
	assert.True(t, h1.ValidHeaderValue([]byte("a\tb c\xff")))
	assert.True(t, h1.ValidHeaderValue(nil))
	assert.False(t, h1.ValidHeaderValue([]byte("a\nb")))
	assert.True(t, h1.ValidMethod([]byte("PATCH")))
	assert.False(t, h1.ValidMethod([]byte("GET /")))
}

// TestValidHeaderValueEveryByte: ValidHeaderValue checks eight bytes at a
// time; every byte value, at every position of values that span one, two
// and three blocks, must be judged as RFC 9110's field-vchar / SP / HTAB
// rule judges it, and AppendHeader must then send the value as is or with
// the byte replaced by SP.
func TestValidHeaderValueEveryByte(t *testing.T) {
	allowed := func(c byte) bool { return c == '\t' || c >= 0x20 && c != 0x7f }
	for _, n := range []int{1, 7, 8, 9, 16, 17} {
		for pos := 0; pos < n; pos++ {
			for c := 0; c < 256; c++ {
				v := bytes.Repeat([]byte{'a'}, n)
				v[pos] = byte(c)
				ok := allowed(byte(c))
				require.Equal(t, ok, h1.ValidHeaderValue(v), "len %d byte %#x at %d", n, c, pos)
				line := h1.AppendHeader(nil, []byte("x"), v)
				want := append([]byte(nil), v...)
				if !ok {
					want[pos] = ' '
				}
				require.Equal(t, "x: "+string(want)+"\r\n", string(line))
			}
		}
	}
}
