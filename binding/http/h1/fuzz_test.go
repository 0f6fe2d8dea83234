package h1_test

// Fuzz targets. Their seeds are the test tables (added here) and the
// files under testdata/fuzz/<FuzzName>/, which include inputs the fuzzer
// found interesting. Run one with
//
//	go test -run='^$' -fuzz=FuzzParseRequestHead -fuzztime=30s ./binding/http/h1/

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httputil"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/binding/http/h1"
)

// statuses are those an *h1.Error may carry.
var statuses = map[int]bool{400: true, 414: true, 431: true, 501: true, 502: true, 505: true}

// checkParseError checks an error from a head parser.
func checkParseError(t *testing.T, data []byte, n int, err error, lim h1.Limits) {
	require.Zero(t, n)
	if errors.Is(err, h1.ErrIncomplete) {
		require.LessOrEqual(t, len(data), lim.MaxHeaderBytes, "incomplete beyond MaxHeaderBytes")
		return
	}
	var perr *h1.Error
	require.True(t, errors.As(err, &perr), "%v", err)
	require.True(t, statuses[perr.Status], "status %d", perr.Status)
}

// within checks that v is a view into data[:n].
func within(t *testing.T, data []byte, n int, v []byte) {
	if len(v) == 0 {
		return
	}
	off := cap(data) - cap(v)
	require.True(t, off >= 0 && off+len(v) <= n, "view %q outside the head", v)
	require.Equal(t, data[off:off+len(v)], v)
}

// parseFuzzed parses data into h with parse. A rejected input must fail
// as checkParseError says; an accepted one must have a head within
// MaxHeaderBytes, views (from views) into that head, and the same view
// (from view) when the head alone is parsed again. head is nil when data
// is rejected.
func parseFuzzed[H any, V any](t *testing.T, data []byte, h *H, parse func([]byte, *H, h1.Limits) (int, error),
	views func(*H) [][]byte, view func(*H) V) (head []byte) {
	lim := h1.DefaultLimits()
	n, err := parse(data, h, lim)
	if err != nil {
		checkParseError(t, data, n, err, lim)
		return nil
	}
	require.Positive(t, n)
	require.LessOrEqual(t, n, min(len(data), lim.MaxHeaderBytes))
	for _, v := range views(h) {
		within(t, data, n, v)
	}
	head = data[:n:n]
	want := view(h)
	n2, err := parse(head, h, lim)
	require.NoError(t, err)
	require.Equal(t, n, n2)
	require.Equal(t, want, view(h))
	return head
}

// fieldViews lists the names and values of hs.
func fieldViews(hs []h1.Header) [][]byte {
	var out [][]byte
	for _, f := range hs {
		out = append(out, f.Name, f.Value)
	}
	return out
}

// seed adds each input to f's corpus.
func seed(f *testing.F, ins []string) {
	for _, in := range ins {
		f.Add([]byte(in))
	}
}

func FuzzParseRequestHead(f *testing.F) {
	seed(f, requestCorpus())
	f.Fuzz(func(t *testing.T, data []byte) {
		lim := h1.DefaultLimits()
		h := newReq()
		views := func(h *h1.RequestHead) [][]byte {
			return append([][]byte{h.Method, h.Target, h.Host, h.Upgrade}, fieldViews(h.Headers)...)
		}
		head := parseFuzzed(t, data, h, h1.ParseRequestHead, views, viewOf)
		if head == nil {
			return
		}
		// Any prefix shorter than the head is incomplete.
		n := len(head)
		for _, k := range []int{n - 1, n / 2, 1} {
			_, err := h1.ParseRequestHead(head[:k], h, lim)
			require.ErrorIs(t, err, h1.ErrIncomplete, "prefix %q", head[:k])
		}

		// net/http accepts what h1 accepts, and reads it the same,
		// except where goAgrees documents a deliberate difference.
		if _, err := h1.ParseRequestHead(head, h, lim); err != nil || !goAgrees(h) {
			return
		}
		req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(trimEmptyLines(head))))
		require.NoError(t, err, "net/http rejects %q", head)
		compareRequest(t, h, req, string(head))
	})
}

func FuzzParseResponseHead(f *testing.F) {
	for _, tt := range validResponses {
		f.Add([]byte(tt.in))
	}
	seed(f, oracleResponses)
	f.Fuzz(func(t *testing.T, data []byte) {
		lim := h1.DefaultLimits()
		h := newResp()
		views := func(h *h1.ResponseHead) [][]byte { return append([][]byte{h.Reason}, fieldViews(h.Headers)...) }
		head := parseFuzzed(t, data, h, h1.ParseResponseHead, views, respViewOf)
		if head == nil {
			return
		}
		require.True(t, h.Status >= 100 && h.Status <= 599)
		if secs, ok := h1.KeepAliveTimeout(h.Headers); ok {
			require.True(t, secs >= 0 && secs < 1e9, "Keep-Alive timeout %d", secs)
		}
		_, err := h1.ParseResponseHead(head[:len(head)-1], h, lim)
		require.ErrorIs(t, err, h1.ErrIncomplete)

		// net/http accepts it too, unless several Content-Length values
		// are involved (see goAgrees).
		_, _ = h1.ParseResponseHead(head, h, lim)
		var cls []string
		for _, f := range h.Headers {
			if strings.EqualFold(string(f.Name), "content-length") {
				cls = append(cls, string(f.Value))
			}
		}
		if len(cls) > 1 || len(cls) == 1 && strings.Contains(cls[0], ",") {
			return
		}
		resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(head)), nil)
		require.NoError(t, err, "net/http rejects %q", head)
		require.Equal(t, resp.StatusCode, h.Status)
		require.Equal(t, resp.ProtoMinor, h.Minor)
		require.Equal(t, resp.TransferEncoding != nil, h.Chunked)
		if h.ContentLength >= 0 && resp.StatusCode/100 != 1 && resp.StatusCode != 204 && resp.StatusCode != 304 {
			require.Equal(t, h.ContentLength, resp.ContentLength)
		}
	})
}

func FuzzChunkedDecoder(f *testing.F) {
	for _, tt := range validChunked {
		f.Add([]byte(tt.in), uint64(len(tt.in)))
	}
	f.Fuzz(func(t *testing.T, data []byte, seed uint64) {
		whole := decodeAll(t, data, h1.Limits{})
		require.True(t, whole.Status == 0 || whole.Status == 400 || whole.Status == 431)
		if whole.Status == 0 && !whole.Done {
			require.Equal(t, len(data), whole.Consumed, "consumes all of an unfinished body")
		}

		// Any split gives the same result.
		rng := rand.New(rand.NewPCG(seed, seed>>32))
		var pieces [][]byte
		for rest := data; len(rest) > 0; {
			k := 1 + rng.IntN(min(len(rest), 1+int(seed%64)))
			pieces = append(pieces, rest[:k])
			rest = rest[k:]
		}
		var d h1.ChunkedDecoder
		require.Equal(t, whole, decodePieces(t, &d, pieces))

		// net/http's chunked reader stops after the last chunk's line and
		// ignores trailers. When both accept, the bodies agree. When h1
		// finishes, net/http accepts too, unless a chunk line has BWS
		// before ';', which RFC 9112 §7.1.1 allows and net/http rejects
		// ("5 ;x"); whitespace anywhere excuses it, for simplicity.
		body, err := io.ReadAll(httputil.NewChunkedReader(bytes.NewReader(data)))
		if err == nil && whole.Status == 0 {
			require.Equal(t, string(body), whole.Body)
		}
		if whole.Done && !bytes.ContainsAny(data[:whole.Consumed], " \t") {
			require.NoError(t, err, "net/http rejects %q", data)
		}
	})
}
