package server

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/internal/enginetest"
)

// tailed feeds in to a resultTail in parts of size cut and returns what
// goes out: in, with the tail spliced in before its closing brace.
func tailed(h *server, in string, cut int, cacheable bool) string {
	out, _ := tailedSum(h, in, cut, cacheable)
	return out
}

// tailedSum is tailed that also returns the resultTail, after the table
// it sums a requestState for.
func tailedSum(h *server, in string, cut int, cacheable bool) (string, *resultTail) {
	rt := new(resultTail)
	rt.reset(cacheable, h.s.rounds)
	var out []byte
	for b := []byte(in); len(b) > 0; {
		part := b[:min(cut, len(b))]
		b = b[len(part):]
		if at := rt.feed(part); at >= 0 {
			out = append(out, part[:at]...)
			out = h.appendTail(out, rt)
			part = part[at:]
		}
		out = append(out, part...)
	}
	return string(out), rt
}

// tailServer is a server as far as resultTail needs one.
func tailServer() *server {
	return &server{aux: make([]byte, 0, 1024), serverInfo: []byte(`{"name":"sluice","version":"t"}`), s: &settings{rounds: newRoundTable()}}
}

// TestResultTail: what a streaming 2026-07-28 result lacks goes in before
// its closing brace, whatever its members' order and however it comes in
// parts; the resultType it has (split across parts or not) decides
// whether a list gets ttlMs and cacheScope.
func TestResultTail(t *testing.T) {
	h := tailServer()
	meta := `"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"sluice","version":"t"}}`
	for _, tt := range []struct {
		in, want  string
		cacheable bool
	}{
		{`{}`, `{"resultType":"complete",` + meta + `}`, false},
		{` { } `, ` { "resultType":"complete",` + meta + `} `, false},
		{`{"content":[]}`, `{"content":[],"resultType":"complete",` + meta + `}`, false},
		{`{"content":[{"x":"}"}],"resultType":"input_required"}`, `{"content":[{"x":"}"}],"resultType":"input_required",` + meta + `}`, false},
		{`{"_meta":{"x":1},"resultType":"complete"}`, `{"_meta":{"x":1},"resultType":"complete"}`, false},
		{`{"tools":[],"_meta":{}}`, `{"tools":[],"_meta":{},"resultType":"complete","ttlMs":0,"cacheScope":"public"}`, true},
		{`{"tools":[],"resultType":"complete","ttlMs":5}`, `{"tools":[],"resultType":"complete","ttlMs":5,` + meta + `,"cacheScope":"public"}`, true},
		{`{"tools":[],"resultType":"input_required"}`, `{"tools":[],"resultType":"input_required",` + meta + `}`, true},
		{`{"tools":[],"resultType":"complete","resultType":"input_required"}`, `{"tools":[],"resultType":"complete","resultType":"input_required",` + meta + `}`, true},
		{`{"tools":[],"r\u0065sultType":"complete"}`, `{"tools":[],"r\u0065sultType":"complete",` + meta + `,"ttlMs":0,"cacheScope":"public"}`, true},
	} {
		for cut := 1; cut <= len(tt.in); cut++ {
			got := tailed(h, tt.in, cut, tt.cacheable)
			assert.Equal(t, tt.want, got, "%s in parts of %d", tt.in, cut)
		}
	}
	// Not JSON: nothing goes in.
	assert.Equal(t, `{"a":}`, tailed(h, `{"a":}`, 3, false))
}

// FuzzResultTail feeds a result, in parts, through resultTail: a JSON
// object comes out a JSON object, and one that names no member twice
// comes out naming none twice, with a resultType and a _meta.
func FuzzResultTail(f *testing.F) {
	for _, s := range []string{`{}`, `{"content":[]}`, `{"resultType":"input_required","_meta":{}}`, `{"tools":[],"ttlMs":1}`, `[1]`, `{"a":"\u0041}"}`,
		`{"resultType":"input_required","requestState":"s\u00e9\"x","inputRequests":{}}`, `{"r\u0065questState":"a","requestStat":"b"}`, `{"requestState":{"a":"b"}}`} {
		f.Add([]byte(s), uint8(3), false)
		f.Add([]byte(s), uint8(1), true)
	}
	h := tailServer()
	f.Fuzz(func(t *testing.T, in []byte, cut uint8, cacheable bool) {
		var v map[string]json.RawMessage
		if json.Unmarshal(in, &v) != nil {
			return
		}
		out, rt := tailedSum(h, string(in), int(cut)+1, cacheable)
		var got map[string]json.RawMessage
		require.NoError(t, json.Unmarshal([]byte(out), &got), "%q -> %q", in, out)
		if len(enginetest.NamedTwice(in)) == 0 {
			require.Empty(t, enginetest.NamedTwice([]byte(out)), "%q -> %q", in, out)
			require.Contains(t, got, "resultType", "%q -> %q", in, out)
			require.Contains(t, got, "_meta", "%q -> %q", in, out)
			// The requestState's sum is the round table's key for it.
			state := v["requestState"]
			k, ok := rt.state.sum(&rt.t)
			require.Equal(t, len(state) > 0 && state[0] == '"', ok, "%q", in)
			if ok {
				require.Equal(t, h.s.rounds.key(state), k, "%q", in)
			}
		}
	})
}

// BenchmarkResultTail follows a 256 KiB result, in 64 KiB parts, to its
// end, as a 2026-07-28 result that streams is followed.
//
//	go test ./binding/mcp/server -run '^$' -bench ResultTail -benchmem
func BenchmarkResultTail(b *testing.B) {
	text := make([]byte, 256<<10)
	for i := range text {
		text[i] = 'a' + byte(i%26)
	}
	in := []byte(`{"content":[{"type":"text","text":"` + string(text) + `"}],"isError":false}`)
	h := tailServer()
	var rt resultTail
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		rt.reset(false, h.s.rounds)
		for p := in; len(p) > 0; {
			part := p[:min(64<<10, len(p))]
			p = p[len(part):]
			if at := rt.feed(part); at >= 0 {
				h.aux = h.appendTail(h.aux[:0], &rt)
			}
		}
	}
}
