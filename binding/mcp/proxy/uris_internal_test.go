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

// TestRouteURIs: where a route's prefix goes in a uri and where the
// proxy finds it again.
func TestRouteURIs(t *testing.T) {
	rt := &route{name: []byte("w__"), uri: []byte("w+")}
	for _, tc := range []struct{ up, gw string }{
		{"ui://weather/view.html", "ui://w+weather/view.html"},
		{"ui:///view.html", "ui://w+/view.html"},
		{"ui://", "ui://w+"},
		{"file:///ui://x", "w+file:///ui://x"},
		{"UI://x", "w+UI://x"}, // a host reads only ui:// as a view
		{"ui:/x", "w+ui:/x"},
		{"", "w+"},
	} {
		assert.Equal(t, tc.gw, string(rt.appendURI(nil, []byte(tc.up))), tc.up)
		at, n, ok := rt.carries(true, []byte(tc.gw))
		if assert.True(t, ok, tc.gw) {
			assert.Equal(t, tc.up, tc.gw[:at]+tc.gw[at+n:], tc.gw)
		}
	}
	// The prefix in front reaches the route too; one elsewhere does not.
	at, n, ok := rt.carries(true, []byte("w+ui://x"))
	assert.True(t, ok)
	assert.Equal(t, "ui://x", "w+ui://x"[at+n:])
	for _, gw := range []string{"ui://x/w+y", "ui://ww+x", "x+w+ui://x", "ui:/w+x"} {
		_, _, ok := rt.carries(true, []byte(gw))
		assert.False(t, ok, gw)
	}
	_, _, ok = rt.carries(false, []byte("ui://w__x"))
	assert.False(t, ok, "a name's prefix is at its start")

	for _, tc := range []struct {
		raw     string
		at      int
		decided bool
	}{
		{`ui://x"`, 5, true}, {`ui:\/\/x"`, 7, true}, {`ui:\/x"`, 0, true}, {`"`, 0, true}, {`x`, 0, true},
		{``, 0, false}, {`u`, 0, false}, {`ui:/`, 0, false}, {`ui:\`, 0, false}, {`ui:\/\`, 0, false},
		{`\u0075i://x"`, 0, true}, // any other escape reads as another scheme
	} {
		at, decided := rawURICut([]byte(tc.raw))
		assert.Equal(t, tc.at, at, tc.raw)
		assert.Equal(t, tc.decided, decided, tc.raw)
	}
}

// TestPrefixedTool: a listed tool's name gets the route's name prefix and
// the view its _meta names the route's uri prefix, wherever the members
// are; the view's uri is written again as read, escapes decoded. A tool
// that names _meta twice is left out, since a client may read either.
func TestPrefixedTool(t *testing.T) {
	rt := route{name: []byte("w__"), uri: []byte("w+")}
	k := listKindOf(mcp.McpBeginExKindToolsList)
	for _, tc := range []struct{ in, want string }{
		{`{"name":"t","inputSchema":{}}`, `{"name":"w__t","inputSchema":{}}`},
		{`{"name":"t","_meta":{"ui":{"resourceUri":"ui://a/v.html"},"ui/resourceUri":"ui://a/v.html"}}`,
			`{"name":"w__t","_meta":{"ui":{"resourceUri":"ui://w+a/v.html"},"ui/resourceUri":"ui://w+a/v.html"}}`},
		{`{"_meta":{"ui":{"resourceUri":"ui:\/\/a"}},"name":"t"}`, `{"_meta":{"ui":{"resourceUri":"ui://w+a"}},"name":"w__t"}`},
		{`{"_m\u0065ta":{"ui\/resourceUri":"ui://a","ui":{"resourceUr\u0069":"x:1"}},"name":"t"}`,
			`{"_m\u0065ta":{"ui\/resourceUri":"ui://w+a","ui":{"resourceUr\u0069":"w+x:1"}},"name":"w__t"}`},
		{`{"_meta":{"ui/resourceUri":"ui://a"},"name":"t","_meta":{}}`, ``},
		{`{"name":"t","_meta":{"resourceUri":"ui://a","ui":{"other":"ui://b"}},"annotations":{"_meta":{"ui":{"resourceUri":"ui://c"}}}}`,
			`{"name":"w__t","_meta":{"resourceUri":"ui://a","ui":{"other":"ui://b"}},"annotations":{"_meta":{"ui":{"resourceUri":"ui://c"}}}}`},
		{`{"name":"t\n","_meta":{"ui":{"resourceUri":7}}}`, `{"name":"w__t\n","_meta":{"ui":{"resourceUri":7}}}`},
		{`{"name":"t","_meta":"ui://a"}`, `{"name":"w__t","_meta":"ui://a"}`},
		{`{"name":"t","_meta":{"openai/outputTemplate":"ui://widget/t.html","openai/widgetAccessible":true}}`,
			`{"name":"w__t","_meta":{"openai/outputTemplate":"ui://w+widget/t.html","openai/widgetAccessible":true}}`},
	} {
		body := []byte(`{"tools":[` + tc.in + `]}`)
		out, _, _, _ := appendMerged(nil, k, []route{rt}, true, []part{{route: 0, body: body}}, nil, nil)
		assert.Equal(t, `{"tools":[`+tc.want+`]`, string(out), tc.in)
	}
}

// TestPrefixedTemplates: a resource template of a view keeps ui:// too,
// so that the uri a client makes of it routes back as a listed view's.
func TestPrefixedTemplates(t *testing.T) {
	rt := route{name: []byte("w__"), uri: []byte("w+")}
	k := listKindOf(mcp.McpBeginExKindResourcesTemplatesList)
	body := []byte(`{"resourceTemplates":[{"uriTemplate":"ui://{id}/view.html","name":"v"},{"name":"f","uriTemplate":"file:///{p}"},{"uriTemplate":"ui:\/\/{id}"},{"uriTemplate":"\u0075i://{id}/x"}]}`)
	out, _, _, _ := appendMerged(nil, k, []route{rt}, true, []part{{route: 0, body: body}}, nil, nil)
	assert.Equal(t, `{"resourceTemplates":[{"uriTemplate":"ui://w+{id}/view.html","name":"v"},{"name":"f","uriTemplate":"w+file:///{p}"},{"uriTemplate":"ui://w+{id}"},{"uriTemplate":"ui://w+{id}/x"}]`, string(out),
		"a listed uri is written again as read, escapes decoded")
	at, n, ok := rt.carries(true, []byte("ui://w+42/view.html"))
	assert.True(t, ok)
	assert.Equal(t, "ui://42/view.html", "ui://w+42/view.html"[:at]+"ui://w+42/view.html"[at+n:])
}
