package jsonrpc_test

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/binding/mcp/jsonrpc"
	"github.com/sluicehq/sluice/internal/enginetest"
)

const elem = jsonrpc.Elem

// pathSets are what the fuzz target picks from: the mcp proxy's result
// uris (a tool's, a prompt's, a read's) and paths that start with an
// array, end at the top or go past the depth kept.
var pathSets = [][]jsonrpc.Path{
	{{"content", elem, "uri"}, {"content", elem, "resource", "uri"}},
	{{"messages", elem, "content", "uri"}, {"messages", elem, "content", "resource", "uri"},
		{"messages", elem, "content", elem, "uri"}, {"messages", elem, "content", elem, "resource", "uri"}},
	{{"contents", elem, "uri"}},
	{{elem, "a"}, {elem, elem}, {"[]"}, {}, {"x", "x", "x", "x", "x", "x", "x", "x", "x"}},
}

func TestPathScanner(t *testing.T) {
	for _, tc := range []struct {
		name     string
		paths    []jsonrpc.Path
		in, want string
	}{
		{"member", []jsonrpc.Path{{"a"}}, `{"a":"x","b":"y"}`, `{"a":"p+x","b":"y"}`},
		{"each element", []jsonrpc.Path{{"a", elem, "u"}}, `{"a":[{"u":"1"},{"v":"2","u":"3"},"u",{"u":4}]}`,
			`{"a":[{"u":"p+1"},{"v":"2","u":"p+3"},"u",{"u":4}]}`},
		{"escaped key", []jsonrpc.Path{{"uri"}}, `{"ur\u0069":"x","u\"ri":"y"}`, `{"ur\u0069":"p+x","u\"ri":"y"}`},
		{"named twice", []jsonrpc.Path{{"a"}}, `{"a":"x","a":"y"}`, `{"a":"p+x","a":"p+y"}`},
		{"a value like a key", []jsonrpc.Path{{"a"}}, `{"b":"a","c":{"a":"x"},"a":["x"]}`, `{"b":"a","c":{"a":"x"},"a":["x"]}`},
		{"Elem is no key", []jsonrpc.Path{{elem}}, `{"[]":"x"}`, `{"[]":"x"}`},
		{"top array", []jsonrpc.Path{{elem}}, `["x",{"a":"y"},"z"]`, `["p+x",{"a":"y"},"p+z"]`},
		{"deeper than kept", []jsonrpc.Path{{"a", "a", "a", "a", "a", "a", "a", "a"}},
			`{"a":{"a":{"a":{"a":{"a":{"a":{"a":{"a":"x"}}}}}}}}`, `{"a":{"a":{"a":{"a":{"a":{"a":{"a":{"a":"p+x"}}}}}}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, piece := range []int{1, 3, 7, len(tc.in)} {
				assert.Equal(t, tc.want, string(enginetest.ScanPaths(tc.paths, []byte(tc.in), piece, "p+")), "in pieces of %d", piece)
			}
		})
	}
}

// oraclePaths applies to a decoded value what the scanner does to its
// text: prefix on each string at one of paths.
func oraclePaths(v any, paths []jsonrpc.Path, prefix string) any {
	for _, p := range paths {
		if len(p) > 0 && len(p) <= jsonrpc.MaxPathDepth {
			v = prefixAt(v, p, prefix)
		}
	}
	return v
}

func prefixAt(v any, p jsonrpc.Path, prefix string) any {
	if len(p) == 0 {
		if s, ok := v.(string); ok {
			return prefix + s
		}
		return v
	}
	switch x := v.(type) {
	case map[string]any:
		if p[0] != elem {
			if c, ok := x[p[0]]; ok {
				x[p[0]] = prefixAt(c, p[1:], prefix)
			}
		}
	case []any:
		if p[0] == elem {
			for i := range x {
				x[i] = prefixAt(x[i], p[1:], prefix)
			}
		}
	}
	return v
}

// FuzzPathScanner checks the PathScanner against encoding/json: for any
// valid value whose objects name no member twice, fed in pieces of any
// size, the prefixed text decodes to the decoded value with the prefix
// put on exactly the strings at the paths.
func FuzzPathScanner(f *testing.F) {
	for _, s := range []string{
		`{"content":[{"type":"resource_link","uri":"demo://a","name":"a"}]}`,
		`{"content":[{"type":"resource","resource":{"uri":"file:///x","blob":"AA=="}}]}`,
		`{"messages":[{"role":"user","content":{"type":"resource","resource":{"uri":"x:2"}}},{"content":[{"uri":"x:3"}]}]}`,
		`{"content":[{"type":"resource_link","ur\u0069":"x\"y"}],"structuredContent":{"uri":"z"}}`,
		`[{"content":[{"uri":"x"}]}]`,
		`{"content":[[[[[[[[[{"uri":"deep"}]]]]]]]]]}`,
	} {
		f.Add([]byte(s), uint8(3), uint8(0))
	}
	f.Add([]byte(`{"contents":[{"uri":"a","blob":"AA=="},{"text":"t","uri":"b"}]}`), uint8(5), uint8(2))
	f.Add([]byte(`[{"a":"x"},["y"],"[]"]`), uint8(2), uint8(3))
	f.Fuzz(func(t *testing.T, body []byte, piece, set uint8) {
		paths := pathSets[int(set)%len(pathSets)]
		out := enginetest.ScanPaths(paths, body, int(piece), "p+")
		if !json.Valid(body) || enginetest.HasDuplicateNames(body) {
			return
		}
		var want, got any
		d := json.NewDecoder(bytes.NewReader(body))
		d.UseNumber()
		require.NoError(t, d.Decode(&want))
		want = oraclePaths(want, paths, "p+")
		d = json.NewDecoder(bytes.NewReader(out))
		d.UseNumber()
		require.NoError(t, d.Decode(&got), "%s", out)
		require.Equal(t, want, got, "%s\n%s", body, out)
	})
}

// BenchmarkPathScanner reads a small tool result and one of 100 KiB of
// text in 8 KiB pieces, as a proxied reply's DATA come, on a tool's
// result uris.
func BenchmarkPathScanner(b *testing.B) {
	big := `{"content":[{"type":"text","text":"` + strings.Repeat(`lorem ipsum \"dolor\" sit amet\n`, 3300) +
		`"},{"type":"resource_link","uri":"demo://a","name":"a"}]}`
	for _, body := range []string{`{"content":[{"type":"text","text":"Echo: hi"}]}`, big} {
		b.Run(strconv.Itoa(len(body)), func(b *testing.B) {
			p := []byte(body)
			var s jsonrpc.PathScanner
			var at []int
			b.SetBytes(int64(len(p)))
			for b.Loop() {
				s.Reset(pathSets[0])
				for off := 0; off < len(p); off += 8192 {
					at = s.Scan(p[off:min(off+8192, len(p))], at[:0])
				}
			}
		})
	}
}
