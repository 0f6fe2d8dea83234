package h1_test

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/binding/http/h1"
)

// decoded is the outcome of decoding a whole input.
type decoded struct {
	Body     string
	Consumed int // on error, the offset of the offending byte
	Done     bool
	Status   int // of the error, 0 without
}

// decodePieces feeds the pieces of an input in turn, as they would arrive
// from TCP, carrying unconsumed bytes over to the next piece.
func decodePieces(t testing.TB, d *h1.ChunkedDecoder, pieces [][]byte) decoded {
	var out decoded
	var body []byte
	var pending []byte
	for _, p := range pieces {
		pending = append(pending, p...)
		for len(pending) > 0 {
			data, n, done, err := d.Decode(pending)
			if err != nil {
				var perr *h1.Error
				if !errors.As(err, &perr) {
					t.Fatalf("not an *h1.Error: %v", err)
				}
				out.Status = perr.Status
				out.Consumed += n // the offset of the offending byte
				out.Body = string(body)
				return out
			}
			if n == 0 && !done {
				t.Fatalf("no progress on %q", pending)
			}
			body = append(body, data...)
			out.Consumed += n
			pending = pending[n:]
			if done {
				out.Done = true
				out.Body = string(body)
				return out
			}
		}
	}
	out.Body = string(body)
	return out
}

func decodeAll(t testing.TB, in []byte, lim h1.Limits) decoded {
	d := h1.ChunkedDecoder{Limits: lim}
	return decodePieces(t, &d, [][]byte{in})
}

var validChunked = []struct {
	name string
	in   string
	body string
}{
	{name: "one chunk", in: "5\r\nhello\r\n0\r\n\r\n", body: "hello"},
	{name: "empty body", in: "0\r\n\r\n", body: ""},
	{name: "several chunks", in: "5\r\nhello\r\n1\r\n \r\n5\r\nworld\r\n0\r\n\r\n", body: "hello world"},
	{name: "hex sizes", in: "a\r\n0123456789\r\nA\r\nabcdefghij\r\n0\r\n\r\n", body: "0123456789abcdefghij"},
	{name: "leading zeros, 16 digits", in: "0000000000000003\r\nabc\r\n000\r\n\r\n", body: "abc"},
	{name: "data with CRLF inside", in: "4\r\n\r\n\r\n\r\n0\r\n\r\n", body: "\r\n\r\n"},
	{name: "extension", in: "3;name\r\nabc\r\n0;last\r\n\r\n", body: "abc"},
	{name: "extension with value", in: "3;a=b;c=d\r\nabc\r\n0\r\n\r\n", body: "abc"},
	{name: "extension with BWS", in: "3 ; a = b ;\tc\r\nabc\r\n0\r\n\r\n", body: "abc"},
	{name: "quoted extension", in: "3;a=\"x;y=\\\"z\\\" \"\r\nabc\r\n0\r\n\r\n", body: "abc"},
	{name: "trailing OWS", in: "3 \t\r\nabc\r\n0 \r\n\r\n", body: "abc"},
	{name: "trailers", in: "3\r\nabc\r\n0\r\nX-Checksum: 1234\r\nX-Empty:\r\nX-Ows:  a b  \r\n\r\n", body: "abc"},
}

func TestChunkedDecoder(t *testing.T) {
	for _, tt := range validChunked {
		t.Run(tt.name, func(t *testing.T) {
			got := decodeAll(t, []byte(tt.in+"GET / HTTP/1.1\r\n"), h1.Limits{})
			assert.Equal(t, decoded{Body: tt.body, Consumed: len(tt.in), Done: true}, got)
		})
	}
}

func TestChunkedDecoderErrors(t *testing.T) {
	tests := []errorCase{
		{name: "empty size", in: "\r\n", status: 400, reason: "chunk size"},
		{name: "non-hex size", in: "g\r\n", status: 400, reason: "chunk size"},
		{name: "0x prefix", in: "0x5\r\nhello\r\n", status: 400, reason: "chunk size"},
		{name: "leading space", in: " 5\r\nhello\r\n", status: 400, reason: "chunk size"},
		{name: "negative", in: "-5\r\n", status: 400, reason: "chunk size"},
		{name: "stray byte after size", in: "5x\r\n", status: 400, reason: "chunk size"},
		{name: "17 digits", in: "00000000000000005\r\n", status: 400, reason: "too large"},
		{name: "above 2^62", in: "4000000000000001\r\n", status: 400, reason: "too large"},
		{name: "64-bit overflow", in: "ffffffffffffffff\r\n", status: 400, reason: "too large"},
		{name: "bare LF after size", in: "5\nhello\r\n0\r\n\r\n", status: 400, reason: "line ending"},
		{name: "bare CR after size", in: "5\rhello\r\n0\r\n\r\n", status: 400, reason: "line ending"},
		{name: "bare LF after extension", in: "5;a\nhello", status: 400, reason: "line ending"},
		{name: "data too long", in: "5\r\nhelloX\r\n0\r\n\r\n", status: 400, reason: "after chunk data"},
		{name: "LF only after data", in: "5\r\nhello\n0\r\n\r\n", status: 400, reason: "after chunk data"},
		{name: "CR only after data", in: "5\r\nhello\r0\r\n\r\n", status: 400, reason: "after chunk data"},
		{name: "empty extension name", in: "5;\r\nhello", status: 400, reason: "extension"},
		{name: "empty extension value", in: "5;a=\r\nhello", status: 400, reason: "extension"},
		{name: "two names", in: "5;a b\r\nhello", status: 400, reason: "extension"},
		{name: "separator in name", in: "5;a/b\r\nhello", status: 400, reason: "extension"},
		{name: "unterminated quote", in: "5;a=\"x\r\nhello", status: 400, reason: "extension"},
		{name: "control byte in quote", in: "5;a=\"\x01\"\r\nhello", status: 400, reason: "extension"},
		{name: "CR escaped in quote", in: "5;a=\"\\\r\"\r\nhello", status: 400, reason: "extension"},
		{name: "byte after quote", in: "5;a=\"x\"y\r\nhello", status: 400, reason: "chunk size"},
		{name: "line over 1 KiB", in: "5;a=" + strings.Repeat("b", 1024) + "\r\nhello", status: 400, reason: "too long"},
		{name: "overhead not paid by data", in: strings.Repeat("1;"+strings.Repeat("e", 1000)+"\r\nx\r\n", 20), status: 400, reason: "overhead"},
		{name: "bare LF ends trailers", in: "0\r\n\n", status: 400, reason: "line ending"},
		{name: "bare LF in trailer", in: "0\r\nX: a\n\r\n", status: 400, reason: "line ending"},
		{name: "bare CR in trailer", in: "0\r\nX: a\rb\r\n\r\n", status: 400, reason: "line ending"},
		{name: "obs-fold in trailer", in: "0\r\nX: a\r\n b\r\n\r\n", status: 400, reason: "folding"},
		{name: "space before colon in trailer", in: "0\r\nX : a\r\n\r\n", status: 400, reason: "header name"},
		{name: "empty trailer name", in: "0\r\n: a\r\n\r\n", status: 400, reason: "header name"},
		{name: "NUL in trailer value", in: "0\r\nX: \x00\r\n\r\n", status: 400, reason: "header value"},
		{name: "trailer section over limit", in: "0\r\nX: " + strings.Repeat("v", 64) + "\r\n\r\n", lim: h1.Limits{MaxHeaderBytes: 64}, status: 431, reason: "trailer section"},
		{name: "too many trailers", in: "0\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n", lim: h1.Limits{MaxHeaders: 2}, status: 431, reason: "too many trailer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := h1.ChunkedDecoder{Limits: tt.lim}
			got := decodePieces(t, &d, [][]byte{[]byte(tt.in)})
			assert.Equal(t, tt.status, got.Status)
			assert.False(t, got.Done)
			_, _, _, err := d.Decode([]byte("0\r\n\r\n"))
			assert.ErrorContains(t, err, tt.reason, "the error is sticky")
		})
	}
}

// TestChunkedDecoderLimitsExact checks that the bounds are inclusive.
func TestChunkedDecoderLimitsExact(t *testing.T) {
	trailers := "0\r\nA: 1\r\nB: 2\r\n\r\n"
	got := decodeAll(t, []byte(trailers), h1.Limits{MaxHeaderBytes: len(trailers) - 3, MaxHeaders: 2})
	assert.Equal(t, decoded{Consumed: len(trailers), Done: true}, got)

	line := "5;a=" + strings.Repeat("b", 1020) + "\r\nhello\r\n0\r\n\r\n" // 1024 bytes before the CRLF
	got = decodeAll(t, []byte(line), h1.Limits{})
	assert.Equal(t, decoded{Body: "hello", Consumed: len(line), Done: true}, got)

	// One byte of data per chunk and a small extension stream forever.
	var b strings.Builder
	for range 5000 {
		b.WriteString("1;e=1\r\nx\r\n")
	}
	b.WriteString("0\r\n\r\n")
	got = decodeAll(t, []byte(b.String()), h1.Limits{})
	assert.Equal(t, decoded{Body: strings.Repeat("x", 5000), Consumed: b.Len(), Done: true}, got)

	got = decodeAll(t, []byte("4000000000000000\r\nabc"), h1.Limits{})
	assert.Equal(t, decoded{Body: "abc", Consumed: 21}, got, "2^62 itself is allowed")
}

// TestChunkedDecoderSplits decodes each input split at every point, in
// two pieces and byte by byte, and at random, and wants the same outcome.
func TestChunkedDecoderSplits(t *testing.T) {
	inputs := []string{
		"5;a=\"q\"\r\nhello\r\n0\r\nX: y\r\n\r\nNEXT",
		"5\r\nhello\r\n0\r\n\r\n",
		"3 ; a = b\r\nabc\r\n10\r\n0123456789abcdef\r\n0\r\nT: 1\r\nU:\r\n\r\n",
		"5\r\nhelloX\r\n",
		"0\r\nX: a\r\n b\r\n\r\n",
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, in := range inputs {
		want := decodeAll(t, []byte(in), h1.Limits{})
		for k := 0; k <= len(in); k++ {
			var d h1.ChunkedDecoder
			got := decodePieces(t, &d, [][]byte{[]byte(in[:k]), []byte(in[k:])})
			require.Equal(t, want, got, "split at %d of %q", k, in)
		}
		var d h1.ChunkedDecoder
		require.Equal(t, want, decodePieces(t, &d, bytePieces(in)), "byte by byte %q", in)
		for range 100 {
			d.Reset()
			require.Equal(t, want, decodePieces(t, &d, randomPieces(rng, []byte(in))), "random split of %q", in)
		}
	}
}

func bytePieces(s string) [][]byte {
	out := make([][]byte, len(s))
	for i := range s {
		out[i] = []byte{s[i]}
	}
	return out
}

func randomPieces(rng *rand.Rand, b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		n := 1 + rng.IntN(min(len(b), 8))
		out = append(out, b[:n])
		b = b[n:]
	}
	return out
}

// TestChunkedDecoderStreams checks that data is returned as soon as it
// arrives, without waiting for the chunk to end, and that each call
// returns the data of one chunk at most.
func TestChunkedDecoderStreams(t *testing.T) {
	var d h1.ChunkedDecoder
	data, n, done, err := d.Decode([]byte("a\r\nhel"))
	require.NoError(t, err)
	assert.Equal(t, "hel", string(data))
	assert.Equal(t, 6, n)
	assert.False(t, done)

	src := []byte("lo12345\r\n3\r\nabc\r\n0\r\n\r\nrest")
	data, n, _, err = d.Decode(src)
	require.NoError(t, err)
	assert.Equal(t, "lo12345", string(data))
	src = src[n:]
	data, n, done, err = d.Decode(src)
	require.NoError(t, err)
	assert.Equal(t, "abc", string(data))
	assert.False(t, done)
	src = src[n:]
	data, n, done, err = d.Decode(src)
	require.NoError(t, err)
	assert.Empty(t, data)
	assert.True(t, done)
	assert.Equal(t, "rest", string(src[n:]))

	// Once done, nothing more is consumed.
	data, n, done, err = d.Decode([]byte("rest"))
	assert.NoError(t, err)
	assert.Empty(t, data)
	assert.Zero(t, n)
	assert.True(t, done)

	// Reset starts a new body.
	d.Reset()
	_, _, done, err = d.Decode([]byte("0\r\n\r\n"))
	assert.NoError(t, err)
	assert.True(t, done)
}

func TestChunkedDecoderAllocs(t *testing.T) {
	in := benchChunkedBody()
	var d h1.ChunkedDecoder
	allocs := testing.AllocsPerRun(20, func() {
		d.Reset()
		drain(t, &d, in)
	})
	assert.Zero(t, allocs)
}

// drain decodes src, a whole body, with d, failing tb on an error.
func drain(tb testing.TB, d *h1.ChunkedDecoder, src []byte) {
	for {
		_, n, done, err := d.Decode(src)
		if err != nil {
			tb.Fatal(err)
		}
		src = src[n:]
		if done {
			return
		}
	}
}
