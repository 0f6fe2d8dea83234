package proxy

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/internal/enginetest"
)

const (
	call   = mcp.McpBeginExKindToolsCall
	prompt = mcp.McpBeginExKindPromptsGet
	read   = mcp.McpBeginExKindResourcesRead
)

// TestResultURIs: the uris of each kind's result that get the route's
// prefix, and those left alone.
func TestResultURIs(t *testing.T) {
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
				assert.Equal(t, tc.want, string(enginetest.ScanPaths(resultURIs(tc.kind), []byte(tc.in), piece, "p+")), "in pieces of %d", piece)
			}
		})
	}
}
