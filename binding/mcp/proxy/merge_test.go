package proxy

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/binding/mcp/jsonrpc"
	"github.com/sluicehq/sluice/engine/config"
)

func testRoutes(t *testing.T, specs ...map[string]any) []route {
	t.Helper()
	var routes []route
	for i, spec := range specs {
		rt, err := compileRoute("mcp1", i, "x", []any{spec}, config.Pos{}, config.Pos{})
		require.NoError(t, err)
		routes = append(routes, rt)
	}
	return routes
}

func TestCursorRoundTrip(t *testing.T) {
	entries := []cursorEntry{{route: 0, cursor: []byte("page-2")}, {route: 3, cursor: []byte(`a\"b`)}}
	text, _ := appendCursor(nil, nil, mcp.McpBeginExKindToolsList, 42, entries)
	got, _, err := decodeCursor(text, nil, mcp.McpBeginExKindToolsList, 42, 4, nil)
	require.NoError(t, err)
	assert.Equal(t, entries, got)
	assert.NotContains(t, string(text), "=", "base64url without padding")
}

func TestCursorInvalid(t *testing.T) {
	good, _ := appendCursor(nil, nil, mcp.McpBeginExKindToolsList, 42, []cursorEntry{{route: 1, cursor: []byte("c")}})
	// odd's ten bytes leave unused bits in its last character; spelled
	// canonically it decodes, respelled it is refused.
	odd, _ := appendCursor(nil, nil, mcp.McpBeginExKindToolsList, 42, []cursorEntry{{route: 1, cursor: []byte("cd")}})
	_, _, err := decodeCursor(odd, nil, mcp.McpBeginExKindToolsList, 42, 2, nil)
	require.NoError(t, err)
	tests := []struct {
		name  string
		text  []byte
		kind  uint8
		fp    uint32
		count int
	}{
		{"not base64", []byte("not a cursor!"), mcp.McpBeginExKindToolsList, 42, 2},
		{"empty", []byte(""), mcp.McpBeginExKindToolsList, 42, 2},
		{"other list", good, mcp.McpBeginExKindPromptsList, 42, 2},
		{"other configuration", good, mcp.McpBeginExKindToolsList, 7, 2},
		{"route gone", good, mcp.McpBeginExKindToolsList, 42, 1},
		{"no routes", mustCursor(nil), mcp.McpBeginExKindToolsList, 42, 2},
		{"truncated", good[:len(good)-2], mcp.McpBeginExKindToolsList, 42, 2},
		{"respelled", []byte(Respelled(string(odd))), mcp.McpBeginExKindToolsList, 42, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := decodeCursor(tt.text, nil, tt.kind, tt.fp, tt.count, nil)
			assert.ErrorIs(t, err, errInvalidCursor)
		})
	}
}

func mustCursor(entries []cursorEntry) []byte {
	text, _ := appendCursor(nil, nil, mcp.McpBeginExKindToolsList, 42, entries)
	return text
}

// TestMergePaging merges a fake two-route, two-page listing: the first
// page has both routes' first pages and a cursor naming both; the second
// only the route that still had more.
func TestMergePaging(t *testing.T) {
	routes := testRoutes(t, map[string]any{"toolkit": "a"}, map[string]any{"toolkit": "b", "tool": []any{"x*"}})
	k := listKindOf(mcp.McpBeginExKindToolsList)
	pages := map[int][]string{
		0: {`{"tools":[{"name":"one","inputSchema":{"type":"object"}}],"nextCursor":"a-2"}`, `{"tools":[{"name":"two"}]}`},
		1: {`{"tools":[{"name":"xy","description":"d \"q\""},{"name":"zz"}],"nextCursor":"b-2"}`, `{"tools":[{"name":"x2"}],"nextCursor":""}`},
	}
	out, next, bad, _ := appendMerged(nil, k, routes, true, []part{{route: 0, body: []byte(pages[0][0])}, {route: 1, body: []byte(pages[1][0])}}, nil, nil)
	require.Empty(t, bad)
	assert.Equal(t, `{"tools":[{"name":"a__one","inputSchema":{"type":"object"}},{"name":"b__xy","description":"d \"q\""}]`, string(out))
	require.Len(t, next, 2)
	text, _ := appendCursor(nil, nil, k.kind, 9, next)

	entries, _, err := decodeCursor(text, nil, k.kind, 9, 2, nil)
	require.NoError(t, err)
	assert.Equal(t, []cursorEntry{{0, []byte("a-2")}, {1, []byte("b-2")}}, entries)
	out, next, _, _ = appendMerged(nil, k, routes, true, []part{{route: 0, body: []byte(pages[0][1])}, {route: 1, body: []byte(pages[1][1])}}, nil, nil)
	assert.Equal(t, `{"tools":[{"name":"a__two"},{"name":"b__x2"}]`, string(out))
	assert.Empty(t, next, "no route has more")

	var v map[string]any
	require.NoError(t, json.Unmarshal(append(out, '}'), &v))
}

func TestMergeUnprefixedAndBad(t *testing.T) {
	routes := testRoutes(t, map[string]any{"toolkit": "a"}, map[string]any{"toolkit": "b"})
	k := listKindOf(mcp.McpBeginExKindResourcesTemplatesList)
	out, _, bad, _ := appendMerged(nil, k, routes, false,
		[]part{{route: 0, body: []byte(`{"resourceTemplates":[{"uriTemplate":"x://{y}","name":"t"}]}`)}, {route: 1, body: []byte(`{"other":1}`)}}, nil, nil)
	assert.Equal(t, `{"resourceTemplates":[{"uriTemplate":"x://{y}","name":"t"}]`, string(out))
	assert.Equal(t, []int{1}, bad)

	// A name given twice, or the list given twice, has no one reading.
	k = listKindOf(mcp.McpBeginExKindToolsList)
	out, _, bad, _ = appendMerged(nil, k, routes, true,
		[]part{{route: 0, body: []byte(`{"tools":[{"name":"x","name":"y"},{"name":"z"}]}`)}, {route: 1, body: []byte(`{"tools":[{"name":"w"}],"tools":[]}`)}}, nil, nil)
	assert.Equal(t, `{"tools":[{"name":"a__z"}]`, string(out))
	assert.Equal(t, []int{1}, bad)
}

// TestMergeShadowed: a merged list names each item once. An item whose
// name (as merged: prefixed, and unescaped) an earlier item has is left
// out and counted, whether a later route has it too (unprefixed) or its
// own route lists it twice: the first is the one a call reaches, and a
// client that kept the last would show the one it cannot call.
func TestMergeShadowed(t *testing.T) {
	routes := testRoutes(t, map[string]any{"toolkit": "a"}, map[string]any{"toolkit": "b"})
	k := listKindOf(mcp.McpBeginExKindToolsList)
	parts := []part{
		{route: 0, body: []byte(`{"tools":[{"name":"search","description":"a's"},{"name":"x"},{"name":"\u0078"}]}`)},
		{route: 1, body: []byte(`{"tools":[{"name":"search","description":"b's"},{"name":"y"}]}`)},
	}
	out, _, bad, shadowed := appendMerged(nil, k, routes, false, parts, nil, nil)
	require.Empty(t, bad)
	assert.Equal(t, `{"tools":[{"name":"search","description":"a's"},{"name":"x"},{"name":"y"}]`, string(out))
	assert.Equal(t, 2, shadowed)

	out, _, _, shadowed = appendMerged(nil, k, routes, true, parts, nil, nil)
	assert.Equal(t, `{"tools":[{"name":"a__search","description":"a's"},{"name":"a__x"},{"name":"b__search","description":"b's"},{"name":"b__y"}]`, string(out))
	assert.Equal(t, 1, shadowed)
}

// TestHydrateShadowed: the entry a hydrate builds from a list's pages
// names each item once, as a merged page does, across pages too: an item
// a later page names again (a later route's, unprefixed) is left out.
func TestHydrateShadowed(t *testing.T) {
	k := listKindOf(mcp.McpBeginExKindToolsList)
	var hk hydrateKind
	hk.add(k, []byte(`[{"name":"a"},{"name":"b","description":"first"}]`))
	hk.add(k, []byte(`[ {"name":"\u0062","description":"second"} , {"name":"c"}, {"title":"no name"} ]`))
	hk.add(k, []byte(`[]`))
	assert.Equal(t, `{"name":"a"},{"name":"b","description":"first"},{"name":"c"},{"title":"no name"}`, string(hk.items))
	assert.Equal(t, 4, hk.count)
	assert.Equal(t, 1, hk.shadowed)
}

// TestCacheHints merges the routes' 2026-07-28 caching hints: the
// smallest ttlMs, private when any route is private, and nothing for a
// hint no route gave (the server kind adds its default).
func TestCacheHints(t *testing.T) {
	tests := []struct {
		name  string
		parts []string
		want  string
	}{
		{"none", []string{`{"tools":[]}`, `{"tools":[]}`}, ``},
		{"one route", []string{`{"tools":[],"ttlMs":60000,"cacheScope":"public"}`, `{"tools":[]}`},
			`,"ttlMs":60000,"cacheScope":"public"`},
		{"smallest ttl", []string{`{"ttlMs":60000,"tools":[],"cacheScope":"public"}`, `{"tools":[],"cacheScope":"public","ttlMs":1500}`},
			`,"ttlMs":1500,"cacheScope":"public"`},
		{"zero wins", []string{`{"tools":[],"ttlMs":0}`, `{"tools":[],"ttlMs":30000}`}, `,"ttlMs":0`},
		{"private wins", []string{`{"tools":[],"cacheScope":"public"}`, `{"tools":[],"cacheScope":"private"}`, `{"tools":[],"cacheScope":"public"}`},
			`,"cacheScope":"private"`},
		{"nested ignored", []string{`{"tools":[{"name":"a","ttlMs":1,"cacheScope":"private"}],"_meta":{"ttlMs":2}}`}, ``},
		{"bad values ignored", []string{`{"tools":[],"ttlMs":"soon","cacheScope":"shared"}`, `{"tools":[],"ttlMs":-5}`}, ``},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var parts []part
			for i, p := range tt.parts {
				parts = append(parts, part{route: i, body: []byte(p)})
			}
			assert.Equal(t, tt.want, string(appendCacheHints(nil, &listKinds[0], parts)))
		})
	}
}

func TestMember(t *testing.T) {
	obj := []byte(` { "a" : [1,{"b":"}"}] , "name":"x\"y", "n": -1.5e3 ,"o":{}} `)
	s, e, ok := member(obj, "name")
	require.True(t, ok)
	assert.Equal(t, `"x\"y"`, string(obj[s:e]))
	v, err := jsonrpc.Unquote(nil, obj[s:e])
	require.NoError(t, err)
	assert.Equal(t, `x"y`, string(v))
	s, e, ok = member(obj, "n")
	require.True(t, ok)
	assert.Equal(t, `-1.5e3`, string(obj[s:e]))
	_, _, ok = member(obj, "missing")
	assert.False(t, ok)
	_, _, ok = member([]byte(`{"name":"a","x":1,"\u006eame":"b"}`), "name")
	assert.False(t, ok, "a member named twice has no one reading")

	spans := make([]span, 2)
	assert.True(t, members([]byte(`{"tools":[],"x":1,"tools":{}}`), []string{"tools", "x"}, spans))
	assert.Equal(t, []span{{}, {16, 17, true}}, spans, "only the key named twice is unset")
}

// FuzzJSONSpans feeds hostile text to the span readers and the merge:
// they may refuse it, never panic.
func FuzzJSONSpans(f *testing.F) {
	for _, s := range []string{`{"tools":[{"name":"a"}]}`, `{"contents":[{"uri":"x"}]}`, `{"a":`, `[`, `{"a":"\`, `{}`, `{"name":1}`} {
		f.Add([]byte(s))
	}
	routes := []route{{toolkit: "a", name: []byte("a__"), uri: []byte("a+")}}
	f.Fuzz(func(t *testing.T, b []byte) {
		keys := []string{"name", "tools", "a", ""}
		spans := make([]span, len(keys))
		members(b, keys, spans)
		for i, key := range keys {
			s, e, ok := member(b, key)
			if (span{s, e, ok}) != spans[i] {
				t.Fatalf("members(%q) %q: %+v, member: %v %v %v", b, key, spans[i], s, e, ok)
			}
		}
		for i := range listKinds {
			_, _, _, _ = appendMerged(nil, &listKinds[i], routes, true, []part{{route: 0, body: b}}, nil, nil)
		}
		_, _, _ = decodeCursor(b, nil, 1, 0, 3, nil)
	})
}

func TestCompileRouteWithoutSchema(t *testing.T) {
	_, err := compileRoute("mcp1", 2, "x", []any{map[string]any{"tool": "x"}}, config.Pos{}, config.Pos{})
	require.Error(t, err)
	assert.Equal(t, "mcp proxy: invalid configuration: mcp mcp1: routes[2]: when[0]: toolkit is required", err.Error())
	_, err = compileRoute("mcp1", 0, "x", []any{map[string]any{"toolkit": "a b"}}, config.Pos{}, config.Pos{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `toolkit "a b": want letters, digits, _ and -`)
}

// BenchmarkMergeTools merges two routes' tools lists of 50 tools each,
// prefixed: half the tools' descriptions hold an escape, and none or five
// tools of each name an MCP Apps view, which the merge then scans for.
func BenchmarkMergeTools(b *testing.B) {
	for _, views := range []int{0, 5} {
		b.Run(fmt.Sprintf("views=%d", 2*views), func(b *testing.B) { benchmarkMergeTools(b, views) })
	}
}

func benchmarkMergeTools(b *testing.B, views int) {
	routes := []route{}
	for i, tk := range []string{"alpha", "beta"} {
		rt, err := compileRoute("mcp1", i, "x", []any{map[string]any{"toolkit": tk}}, config.Pos{}, config.Pos{})
		require.NoError(b, err)
		routes = append(routes, rt)
	}
	body := []byte(`{"tools":[`)
	for i := range 50 {
		if i > 0 {
			body = append(body, ',')
		}
		desc := "Gets the weather for a city, by name or by coordinates, today or for a day of the coming week"
		if i%2 == 1 {
			desc += `\nwith a second line`
		}
		meta := ""
		if i < views {
			meta = `,"_meta":{"ui":{"resourceUri":"ui://weather/view.html"},"ui/resourceUri":"ui://weather/view.html"}`
		}
		body = fmt.Appendf(body, `{"name":"tool_%d","description":"%s","inputSchema":{"type":"object","properties":{"city":{"type":"string"},"day":{"type":"integer"}},"required":["city"]}%s}`, i, desc, meta)
	}
	body = append(body, `]}`...)
	k := listKindOf(mcp.McpBeginExKindToolsList)
	var out []byte
	b.SetBytes(int64(2 * len(body)))
	b.ReportAllocs()
	for b.Loop() {
		parts := []part{{route: 0, body: body}, {route: 1, body: body}}
		out, _, _, _ = appendMerged(out[:0], k, routes, true, parts, nil, nil)
	}
}
