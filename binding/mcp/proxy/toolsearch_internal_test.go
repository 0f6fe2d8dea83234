package proxy

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/internal/enginetest"
)

func testView(policy uint8, search bool, match ...string) *toolsView {
	v := &toolsView{policy: policy, search: search, match: match, limit: defaultSearchLimit}
	for m := metaSearch; m <= metaExecute; m++ {
		v.names[m] = "zilla__" + metaBaseNames[m]
	}
	v.meta = appendMetaTools(nil, &v.names)
	return v
}

// TestToolsViewRewrite: each eager policy, with and without the search
// tools, on one cached list.
func TestToolsViewRewrite(t *testing.T) {
	const entry = `{"tools":[{"name":"list_repos","description":"List"},{"description":"no name"},` +
		`{"name":"delete_repo","defer_loading":false,"x":1},{"title":"t","name":"zilla__search_tools"}],"nextCursor":"n"}`
	meta := string(appendMetaTools(nil, &testView(eagerNone, true).names))
	for name, tc := range map[string]struct {
		view *toolsView
		want string
	}{
		"none": {testView(eagerNone, false),
			`{"tools":[{"name":"list_repos","description":"List"},{"name":"delete_repo","defer_loading":false,"x":1},{"title":"t","name":"zilla__search_tools"}]}`},
		"all": {testView(eagerAll, false),
			`{"tools":[{"name":"list_repos","defer_loading":true,"description":"List"},{"name":"delete_repo","defer_loading":true,"x":1},{"title":"t","name":"zilla__search_tools","defer_loading":true}]}`},
		"explicit": {testView(eagerExplicit, false, "list_*"),
			`{"tools":[{"name":"list_repos","description":"List"},{"name":"delete_repo","defer_loading":true,"x":1},{"title":"t","name":"zilla__search_tools","defer_loading":true}]}`},
		"none with search": {testView(eagerNone, true),
			`{"tools":[{"name":"list_repos","description":"List"},{"name":"delete_repo","defer_loading":false,"x":1},` + meta + `]}`},
		"explicit with search": {testView(eagerExplicit, true, "list_repos"),
			`{"tools":[{"name":"list_repos","description":"List"},` + meta + `]}`},
		"all with search": {testView(eagerAll, true), `{"tools":[` + meta + `]}`},
	} {
		t.Run(name, func(t *testing.T) {
			got := tc.view.rewrite([]byte(entry))
			assert.Equal(t, tc.want, string(got))
			assert.True(t, json.Valid(got))
		})
	}
	var tools struct {
		Tools []map[string]any `json:"tools"`
	}
	require.NoError(t, json.Unmarshal([]byte(`{"tools":[`+meta+`]}`), &tools))
	require.Len(t, tools.Tools, 3)
	for i, want := range []string{"zilla__search_tools", "zilla__describe_tool", "zilla__execute_tool"} {
		assert.Equal(t, want, tools.Tools[i]["name"])
		assert.Contains(t, tools.Tools[i], "inputSchema")
	}
}

// FuzzToolsView rewrites a cached tools entry as the store may hold it
// under each policy, with encoding/json as the oracle: the list served
// is JSON whose items name no member twice, and holds, in order, the
// entry's named tools that the policy keeps, each deferred exactly when
// the policy defers it, followed by the search tools when they are
// served.
func FuzzToolsView(f *testing.F) {
	for _, s := range []string{
		`{"tools":[{"name":"a","description":"x"},{"name":"b","defer_loading":false},{"name":"zilla__execute_tool"}]}`,
		`{"tools":[{"name":"a\u0062"},{"name":1},{"x":{"name":"y"}},[],"s"]}`,
		`{"tools":[]}`,
		`{"tools":[{"name":"a","name":"b"}]}`,
		`{"tools":[{"defer_loading":1,"name":"late"}]}`,
	} {
		f.Add([]byte(s), uint8(0), "a*")
		f.Add([]byte(s), uint8(5), "b")
	}
	k := &cacheKind{lk: &listKinds[0], key: "tools"}
	f.Fuzz(func(t *testing.T, entry []byte, mode uint8, glob string) {
		v := testView(mode%3, mode&4 != 0, glob)
		c := &cache{cfg: &cacheConfig{page: maxEntry, tools: v}}
		pages, ok := c.render(k, entry, 7)
		if !ok {
			return
		}
		require.Len(t, pages, 1)
		out := pages[0]
		require.True(t, utf8.Valid(out), "%q", out)
		var served struct {
			Tools []json.RawMessage `json:"tools"`
		}
		require.NoError(t, json.Unmarshal(out, &served), "%q", out)
		var in struct {
			Tools []json.RawMessage `json:"tools"`
		}
		require.NoError(t, json.Unmarshal(entry, &in))
		var want []string
		for _, item := range in.Tools {
			var tool map[string]any
			if json.Unmarshal(item, &tool) != nil || enginetest.NamedTwice(item) != nil {
				continue
			}
			name, ok := tool["name"].(string)
			if !ok {
				continue
			}
			switch v.disposition(name) {
			case itemFull:
				want = append(want, name)
			case itemDeferred:
				want = append(want, name+"+deferred")
			}
		}
		if v.search {
			want = append(want, v.names[metaSearch], v.names[metaDescribe], v.names[metaExecute])
		}
		var got []string
		for _, item := range served.Tools {
			require.Empty(t, enginetest.NamedTwice(item), "%q", item)
			var tool map[string]any
			require.NoError(t, json.Unmarshal(item, &tool))
			name, _ := tool["name"].(string)
			if tool["defer_loading"] == true && v.disposition(name) == itemDeferred {
				name += "+deferred"
			}
			got = append(got, name)
		}
		require.Equal(t, want, got, "%q", entry)
	})
}

// FuzzSearch reads a cached tools entry into the search tools' catalog
// and queries it: whatever the entry and the query, each tool is found
// at most once, within the limit, and only if admitted.
func FuzzSearch(f *testing.F) {
	f.Add([]byte(`{"tools":[{"name":"get_weather","description":"Weather for a city","outputSchema":{"a":"b"}},{"name":"x"}]}`), "weather city", uint8(3))
	f.Add([]byte(`{"tools":[{"name":"\u00c9t\u00e9","description":"caf\u00e9 \"menu\""}]}`), "été menu", uint8(1))
	f.Add([]byte(`{"tools":[{"name":"a","description":1},{"name":"a"}]}`), strings.Repeat("a ", 100), uint8(0))
	f.Fuzz(func(t *testing.T, entry []byte, query string, mode uint8) {
		c := readCatalog(entry)
		x := newKeywordIndex(c, &[fieldCount]float64{1 + float64(mode&1), 1, float64(mode >> 1 & 1)})
		limit := 1 + int(mode)%maxSearchLimit
		admit := func(i int32) bool { return mode&4 == 0 || i%2 == 0 }
		got := x.query(nil, []byte(query), limit, admit)
		require.LessOrEqual(t, len(got), limit)
		seen := map[int32]bool{}
		for i, m := range got {
			require.False(t, seen[m.tool])
			seen[m.tool] = true
			require.True(t, admit(m.tool))
			require.Greater(t, m.score, 0.0)
			if i > 0 {
				require.False(t, better(m, got[i-1]), "ranked best first")
			}
		}
		for _, s := range x.scores {
			require.Zero(t, s)
		}
	})
}

// tenThousandTools is a cached list of 10,000 tools over 100 toolkits,
// with descriptions drawn from a small vocabulary.
func tenThousandTools() []byte {
	words := []string{"list", "create", "delete", "update", "repository", "issue", "weather", "forecast",
		"invoice", "customer", "order", "payment", "ticket", "report", "schedule", "message"}
	var b strings.Builder
	b.WriteString(`{"tools":[`)
	for i := range 10000 {
		if i > 0 {
			b.WriteByte(',')
		}
		w1, w2, w3 := words[i%16], words[i/16%16], words[i/256%16]
		b.WriteString(`{"name":"kit` + strconv.Itoa(i%100) + `__` + w1 + `_` + w2 + strconv.Itoa(i) + `",` +
			`"description":"` + strings.ToUpper(w1[:1]) + w1[1:] + ` a ` + w2 + ` for the ` + w3 + `",` +
			`"inputSchema":{"type":"object"}}`)
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

// BenchmarkToolSearchIndex10k builds the search index of 10,000 tools,
// which a worker does once per version of the cached list.
func BenchmarkToolSearchIndex10k(b *testing.B) {
	entry := tenThousandTools()
	b.ReportAllocs()
	for b.Loop() {
		newKeywordIndex(readCatalog(entry), &nameAndDescription)
	}
}

// BenchmarkToolSearchQuery10k ranks 10,000 tools for a two-word query.
func BenchmarkToolSearchQuery10k(b *testing.B) {
	c := readCatalog(tenThousandTools())
	x := newKeywordIndex(c, &nameAndDescription)
	all := func(int32) bool { return true }
	var got []match
	b.ReportAllocs()
	for b.Loop() {
		got = x.query(got, []byte("weather invoice"), 5, all)
	}
	require.Len(b, got, 5)
}

// TestSchemaOfReadsNothingElse: a tool's inputSchema that refers outside
// itself does not compile, so its calls go unchecked; nothing is read
// from the file system or the network.
func TestSchemaOfReadsNothingElse(t *testing.T) {
	for _, ref := range []string{"file:///etc/passwd", "https://example.com/schema.json", "http://127.0.0.1:1/s.json"} {
		c := readCatalog([]byte(`{"tools":[{"name":"t","inputSchema":{"$ref":"` + ref + `"}}]}`))
		var logged error
		assert.Nil(t, c.schemaOf(0, func(_ string, err error) { logged = err }), ref)
		assert.Error(t, logged, ref)
	}
	c := readCatalog([]byte(`{"tools":[{"name":"t","inputSchema":{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"n":{"$ref":"#/$defs/n"}},"$defs":{"n":{"type":"integer"}}}}]}`))
	sch := c.schemaOf(0, func(_ string, err error) { t.Fatal(err) })
	require.NotNil(t, sch, "a schema with its own $defs and the standard $schema compiles")
	assert.Error(t, sch.Validate(map[string]any{"n": "x"}))
}

// FuzzToolSchema compiles a tool's inputSchema as an upstream may give
// it and checks arguments against it: whatever both are, neither
// panics.
func FuzzToolSchema(f *testing.F) {
	f.Add([]byte(`{"type":"object","properties":{"a":{"type":"number"}},"required":["a"]}`), []byte(`{"a":"x"}`))
	f.Add([]byte(`{"pattern":"(a+)+$","format":"email"}`), []byte(`"aaaa!"`))
	f.Add([]byte(`{"$ref":"#"}`), []byte(`{}`))
	f.Add([]byte(`{"allOf":[{"$ref":"#/$defs/x"}],"$defs":{"x":{"minimum":1e400}}}`), []byte(`1e-400`))
	f.Fuzz(func(t *testing.T, schema, args []byte) {
		entry := append([]byte(`{"tools":[{"name":"t","inputSchema":`), schema...)
		entry = append(entry, `}]}`...)
		if !json.Valid(entry) {
			return
		}
		c := readCatalog(entry)
		if len(c.tools) != 1 {
			return
		}
		sch := c.schemaOf(0, func(string, error) {})
		if sch == nil {
			return
		}
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(args))
		if err == nil {
			_ = sch.Validate(inst)
		}
	})
}

// BenchmarkArgumentsCheck reads and checks the arguments of one call
// against a compiled inputSchema, what options.tools adds to a call.
func BenchmarkArgumentsCheck(b *testing.B) {
	c := readCatalog([]byte(`{"tools":[{"name":"add","inputSchema":{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}}]}`))
	sch := c.schemaOf(0, func(_ string, err error) { b.Fatal(err) })
	args := []byte(`{"a":2,"b":40}`)
	b.ReportAllocs()
	for b.Loop() {
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(args))
		if err != nil || sch.Validate(inst) != nil {
			b.Fatal("invalid")
		}
	}
}
