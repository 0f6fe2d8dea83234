package h1_test

import (
	"bufio"
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/binding/http/h1"
)

// benchRequest is an MCP client's POST as a browser-based inspector sends
// it: 400-odd bytes, 10 fields.
const benchRequest = "POST /mcp HTTP/1.1\r\n" +
	"Host: localhost:8080\r\n" +
	"User-Agent: Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/126.0 Safari/537.36\r\n" +
	"Accept: application/json, text/event-stream\r\n" +
	"Accept-Encoding: gzip, deflate, br\r\n" +
	"Accept-Language: en-US,en;q=0.9\r\n" +
	"Content-Type: application/json\r\n" +
	"Content-Length: 123\r\n" +
	"Mcp-Session-Id: 1868a90c-2a8e-4d4b-9a3f-3c1f7e0b5d2a\r\n" +
	"Mcp-Protocol-Version: 2025-06-18\r\n" +
	"Connection: keep-alive\r\n" +
	"\r\n"

const benchResponse = "HTTP/1.1 200 OK\r\n" +
	"Content-Type: text/event-stream\r\n" +
	"Cache-Control: no-cache\r\n" +
	"Mcp-Session-Id: 1868a90c-2a8e-4d4b-9a3f-3c1f7e0b5d2a\r\n" +
	"Date: Mon, 23 Jun 2025 10:00:00 GMT\r\n" +
	"Transfer-Encoding: chunked\r\n" +
	"\r\n"

// benchChunkedBody is 16 KiB of data in 1 KiB chunks.
func benchChunkedBody() []byte {
	chunk := bytes.Repeat([]byte("x"), 1024)
	var b []byte
	for range 16 {
		b = h1.AppendChunkHeader(b, len(chunk))
		b = append(b, chunk...)
		b = h1.AppendChunkEnd(b)
	}
	return h1.AppendLastChunk(b)
}

func BenchmarkParseRequestHead(b *testing.B) {
	benchHead(b, benchRequest, &h1.RequestHead{Headers: make([]h1.Header, 0, 32)}, h1.ParseRequestHead)
}

// benchHead parses the head in into h with parse, over and over.
func benchHead[H any](b *testing.B, in string, h *H, parse func([]byte, *H, h1.Limits) (int, error)) {
	buf := []byte(in)
	lim := h1.DefaultLimits()
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := parse(buf, h, lim); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNetHTTPReadRequest is the same request through net/http, for
// scale.
func BenchmarkNetHTTPReadRequest(b *testing.B) {
	r := strings.NewReader(benchRequest)
	br := bufio.NewReader(r)
	b.SetBytes(int64(len(benchRequest)))
	b.ReportAllocs()
	for b.Loop() {
		r.Reset(benchRequest)
		br.Reset(r)
		if _, err := http.ReadRequest(br); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseResponseHead(b *testing.B) {
	benchHead(b, benchResponse, &h1.ResponseHead{Headers: make([]h1.Header, 0, 32)}, h1.ParseResponseHead)
}

func BenchmarkChunkedDecode(b *testing.B) {
	in := benchChunkedBody()
	var d h1.ChunkedDecoder
	b.SetBytes(16 << 10)
	b.ReportAllocs()
	for b.Loop() {
		d.Reset()
		drain(b, &d, in)
	}
}

func BenchmarkAppendResponseHead(b *testing.B) {
	dst := make([]byte, 0, 512)
	var (
		contentType = []byte("Content-Type")
		json        = []byte("application/json")
		cache       = []byte("Cache-Control")
		noCache     = []byte("no-cache")
		session     = []byte("Mcp-Session-Id")
		sessionID   = []byte("1868a90c-2a8e-4d4b-9a3f-3c1f7e0b5d2a")
		date        = []byte("Date")
		now         = []byte("Mon, 23 Jun 2025 10:00:00 GMT")
	)
	b.ReportAllocs()
	for b.Loop() {
		dst = h1.AppendStatusLine(dst[:0], 1, 200)
		dst = h1.AppendHeader(dst, contentType, json)
		dst = h1.AppendHeader(dst, cache, noCache)
		dst = h1.AppendHeader(dst, session, sessionID)
		dst = h1.AppendHeader(dst, date, now)
		dst = h1.AppendContentLength(dst, 1234)
		dst = h1.AppendHeadEnd(dst)
	}
	b.SetBytes(int64(len(dst)))
}
