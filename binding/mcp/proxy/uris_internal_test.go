package proxy

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/internal/enginetest"
)

// prefixURIs runs the scanner over body in pieces of at most piece bytes
// and returns body with prefix put where it found each uri.
func prefixURIs(kind uint8, body []byte, piece int, prefix string) []byte {
	var s uriScanner
	s.reset(kind)
	var out []byte
	for len(body) > 0 {
		n := min(max(piece, 1), len(body))
		last := 0
		for _, at := range s.scan(body[:n], nil) {
			out = append(append(out, body[last:at]...), prefix...)
			last = at
		}
		out = append(out, body[last:n]...)
		body = body[n:]
	}
	return out
}

const (
	call   = mcp.McpBeginExKindToolsCall
	prompt = mcp.McpBeginExKindPromptsGet
	read   = mcp.McpBeginExKindResourcesRead
)

func TestURIScanner(t *testing.T) {
	for _, tc := range []struct {
		name     string
		kind     uint8
		in, want string
	}{
		{"resource link", call, `{"content":[{"type":"text","text":"uri"},{"type":"resource_link","uri":"demo://a","name":"a"}]}`,
			`{"content":[{"type":"text","text":"uri"},{"type":"resource_link","uri":"p+demo://a","name":"a"}]}`},
		{"embedded", call, `{"content":[{"type":"resource","resource":{"uri":"file:///x","blob":"AA=="}}],"isError":false}`,
			`{"content":[{"type":"resource","resource":{"uri":"p+file:///x","blob":"AA=="}}],"isError":false}`},
		{"uri before type", call, `{"content":[{"uri":"x:1","type":"resource_link"}]}`, `{"content":[{"uri":"p+x:1","type":"resource_link"}]}`},
		{"escaped key", call, `{"content":[{"type":"resource_link","ur\u0069":"x:1"}]}`, `{"content":[{"type":"resource_link","ur\u0069":"p+x:1"}]}`},
		{"prompt message", prompt, `{"messages":[{"role":"user","content":{"type":"resource","resource":{"uri":"x:2","text":"t"}}},{"role":"user","content":{"type":"resource_link","uri":"x:3"}}]}`,
			`{"messages":[{"role":"user","content":{"type":"resource","resource":{"uri":"p+x:2","text":"t"}}},{"role":"user","content":{"type":"resource_link","uri":"p+x:3"}}]}`},
		{"left alone", call, `{"structuredContent":{"content":[{"uri":"x:4"}]},"_meta":{"uri":"x:5"},"content":[{"type":"text","text":"{\"uri\":\"x:6\"}"}],"uri":"x:7"}`,
			`{"structuredContent":{"content":[{"uri":"x:4"}]},"_meta":{"uri":"x:5"},"content":[{"type":"text","text":"{\"uri\":\"x:6\"}"}],"uri":"x:7"}`},
		{"a value named like a key", call, `{"content":[{"type":"uri","name":"uri","annotations":{"uri":"x:8"}}]}`,
			`{"content":[{"type":"uri","name":"uri","annotations":{"uri":"x:8"}}]}`},
		{"not a string", call, `{"content":[{"uri":7},{"uri":null},{"uri":["x:9"]}]}`, `{"content":[{"uri":7},{"uri":null},{"uri":["x:9"]}]}`},
		{"nested resource only in a block", call, `{"content":[{"resource":{"resource":{"uri":"x:10"}}}]}`, `{"content":[{"resource":{"resource":{"uri":"x:10"}}}]}`},
		{"read", read, `{"contents":[{"uri":"file:///a","text":"x"},{"blob":"AA==","uri":"file:///b"}],"_meta":{"uri":"x"}}`,
			`{"contents":[{"uri":"p+file:///a","text":"x"},{"blob":"AA==","uri":"p+file:///b"}],"_meta":{"uri":"x"}}`},
		{"each kind its own path", read, `{"content":[{"uri":"x:1"}],"messages":[{"content":{"uri":"x:2"}}]}`,
			`{"content":[{"uri":"x:1"}],"messages":[{"content":{"uri":"x:2"}}]}`},
		{"a call's contents", call, `{"contents":[{"uri":"x:1"}],"content":[{"uri":"x:2"}]}`, `{"contents":[{"uri":"x:1"}],"content":[{"uri":"p+x:2"}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, piece := range []int{1, 3, 7, len(tc.in)} {
				assert.Equal(t, tc.want, string(prefixURIs(tc.kind, []byte(tc.in), piece, "p+")), "in pieces of %d", piece)
			}
		})
	}
}

// oraclePrefix applies to a decoded result of a request of kind what
// the scanner does to its text.
func oraclePrefix(kind uint8, v any, prefix string) {
	result, ok := v.(map[string]any)
	if !ok {
		return
	}
	block := func(b any) {
		m, ok := b.(map[string]any)
		if !ok {
			return
		}
		if u, ok := m["uri"].(string); ok {
			m["uri"] = prefix + u
		}
		if r, ok := m["resource"].(map[string]any); ok {
			if u, ok := r["uri"].(string); ok {
				r["uri"] = prefix + u
			}
		}
	}
	if content, ok := result["content"].([]any); ok && kind == call {
		for _, b := range content {
			block(b)
		}
	}
	if contents, ok := result["contents"].([]any); ok && kind == read {
		for _, c := range contents {
			if m, ok := c.(map[string]any); ok {
				if u, ok := m["uri"].(string); ok {
					m["uri"] = prefix + u
				}
			}
		}
	}
	if messages, ok := result["messages"].([]any); ok && kind == prompt {
		for _, m := range messages {
			msg, ok := m.(map[string]any)
			if !ok {
				continue
			}
			switch c := msg["content"].(type) {
			case map[string]any:
				block(c)
			case []any:
				for _, b := range c {
					block(b)
				}
			}
		}
	}
}

// FuzzURIScanner checks the scanner against encoding/json: for any valid
// result whose objects name no member twice, fed in pieces of any size,
// the prefixed text decodes to the decoded result with the prefix put on
// exactly the uris oraclePrefix names.
func FuzzURIScanner(f *testing.F) {
	for _, s := range []string{
		`{"content":[{"type":"resource_link","uri":"demo://a","name":"a"}]}`,
		`{"content":[{"type":"resource","resource":{"uri":"file:///x","blob":"AA=="}}]}`,
		`{"messages":[{"role":"user","content":{"type":"resource","resource":{"uri":"x:2"}}},{"content":[{"uri":"x:3"}]}]}`,
		`{"content":[{"type":"resource_link","ur\u0069":"x\"y"}],"structuredContent":{"uri":"z"}}`,
		`[{"content":[{"uri":"x"}]}]`,
		`{"content":[[[[[[[[[{"uri":"deep"}]]]]]]]]]}`,
	} {
		f.Add([]byte(s), uint8(3), call)
	}
	f.Add([]byte(`{"contents":[{"uri":"a","blob":"AA=="},{"text":"t","uri":"b"}]}`), uint8(5), read)
	f.Fuzz(func(t *testing.T, body []byte, piece, kind uint8) {
		kind = []uint8{call, prompt, read}[kind%3]
		out := prefixURIs(kind, body, int(piece), "p+")
		if !json.Valid(body) || enginetest.HasDuplicateNames(body) {
			return
		}
		var want, got any
		d := json.NewDecoder(bytes.NewReader(body))
		d.UseNumber()
		require.NoError(t, d.Decode(&want))
		oraclePrefix(kind, want, "p+")
		d = json.NewDecoder(bytes.NewReader(out))
		d.UseNumber()
		require.NoError(t, d.Decode(&got), "%s", out)
		require.Equal(t, want, got, "%s\n%s", body, out)
	})
}

// BenchmarkURIScan reads a small tool result and one of 100 KiB of text
// in 8 KiB pieces, as a rewritten reply's DATA come.
func BenchmarkURIScan(b *testing.B) {
	big := `{"content":[{"type":"text","text":"` + strings.Repeat(`lorem ipsum \"dolor\" sit amet\n`, 3300) +
		`"},{"type":"resource_link","uri":"demo://a","name":"a"}]}`
	for _, body := range []string{`{"content":[{"type":"text","text":"Echo: hi"}]}`, big} {
		b.Run(strconv.Itoa(len(body)), func(b *testing.B) {
			p := []byte(body)
			var s uriScanner
			var at []int
			b.SetBytes(int64(len(p)))
			for b.Loop() {
				s.reset(call)
				for off := 0; off < len(p); off += 8192 {
					at = s.scan(p[off:min(off+8192, len(p))], at[:0])
				}
			}
		})
	}
}
