package client

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/binding/mcp"
)

// TestRouteMatches checks which requests a client route takes, as Zilla's
// condition matcher decides: a condition serves the capabilities whose
// allow-set it gives (all of them when it gives none), a list goes to a
// route that serves its capability, a named request to one whose globs
// admit the name, and a request of no capability to any route.
func TestRouteMatches(t *testing.T) {
	mk := func(when ...any) *route {
		rt := &route{}
		for _, w := range when {
			cd, err := compileCond(w)
			require.NoError(t, err)
			rt.conds = append(rt.conds, cd)
		}
		return rt
	}
	tools := mk(map[string]any{"tool": []any{"get_*", "echo"}})
	promptsResources := mk(map[string]any{"prompt": []any{}}, map[string]any{"resource": "file:///*"})
	all := mk(map[string]any{})
	none := mk()
	for _, tt := range []struct {
		name  string
		rt    *route
		kind  uint8
		ident string
		null  bool
		want  bool
	}{
		{"tool admitted", tools, mcp.McpBeginExKindToolsCall, "get_weather", false, true},
		{"tool admitted exactly", tools, mcp.McpBeginExKindToolsCall, "echo", false, true},
		{"tool not admitted", tools, mcp.McpBeginExKindToolsCall, "set_weather", false, false},
		{"tool named in params only", tools, mcp.McpBeginExKindToolsCall, "", true, false},
		{"tools/list", tools, mcp.McpBeginExKindToolsList, "", true, true},
		{"prompts not served", tools, mcp.McpBeginExKindPromptsList, "", true, false},
		{"prompt of a route that serves none by name", promptsResources, mcp.McpBeginExKindPromptsGet, "greet", false, false},
		{"prompts/list of that route", promptsResources, mcp.McpBeginExKindPromptsList, "", true, true},
		{"resource admitted", promptsResources, mcp.McpBeginExKindResourcesRead, "file:///a", false, true},
		{"resource not admitted", promptsResources, mcp.McpBeginExKindResourcesSubscribe, "http://a", false, false},
		{"tools not served", promptsResources, mcp.McpBeginExKindToolsCall, "echo", false, false},
		{"no capability", promptsResources, mcp.McpBeginExKindRequest, "completion/complete", false, true},
		{"lifecycle", tools, mcp.McpBeginExKindLifecycle, "", true, true},
		{"empty condition serves all", all, mcp.McpBeginExKindPromptsGet, "greet", false, true},
		{"no when serves all", none, mcp.McpBeginExKindResourcesRead, "x", false, true},
	} {
		assert.Equal(t, tt.want, tt.rt.matches(tt.kind, []byte(tt.ident), tt.null), tt.name)
	}

	_, err := compileCond(map[string]any{"tool": []any{"["}})
	assert.ErrorContains(t, err, `tool: bad glob "["`)
}

// TestAppendWithSchemes annotates the tools a guarded route serves with
// the roles of each of its guards that names any, as Zilla's
// McpSchemeInjector does, replacing a scheme the upstream gave, and
// leaves the rest of the result as it came.
func TestAppendWithSchemes(t *testing.T) {
	s := &settings{routes: []route{
		{conds: []cond{{serves: capTools, tools: []string{"get_*"}}}},
		{conds: []cond{{serves: capTools, tools: []string{"set_*", "delete_*"}}},
			guarded: mcp.CompileGuarded(map[string][]string{"a": {"write"}, "b": {"admin", "ops"}, "c": {}})},
		{conds: []cond{{serves: capTools, tools: []string{"list_*"}}}, guarded: mcp.CompileGuarded(map[string][]string{"a": {}})},
	}}
	require.True(t, s.schemes())
	in := `{"tools":[{"name":"get_weather","inputSchema":{}},` +
		`{"name":"set_weather","securitySchemes":[{"type":"noauth"}],"inputSchema":{"type":"object"}},` +
		`{"name":"list_x"},{"name":"\u0064elete_all"},{"name":"a","name":"set_b"},7],"nextCursor":"c"}`
	want := `{"tools":[{"name":"get_weather","inputSchema":{}},` +
		`{"name":"set_weather","inputSchema":{"type":"object"},"securitySchemes":[{"type":"oauth2","scopes":["write"]},{"type":"oauth2","scopes":["admin","ops"]}]},` +
		`{"name":"list_x"},` +
		`{"name":"\u0064elete_all","securitySchemes":[{"type":"oauth2","scopes":["write"]},{"type":"oauth2","scopes":["admin","ops"]}]},` +
		`{"name":"a","name":"set_b"},7],"nextCursor":"c"}`
	assert.Equal(t, want, string(s.appendWithSchemes(nil, []byte(in))))

	s.routes[1].guarded = mcp.CompileGuarded(map[string][]string{"a": {}})
	assert.False(t, s.schemes(), "guards without roles give no scheme")
}

// FuzzAppendWithSchemes: whatever valid object the upstream's tools/list
// result is, the annotated one is valid JSON, and only tools named by the
// guarded route gain a member.
func FuzzAppendWithSchemes(f *testing.F) {
	for _, in := range []string{`{"tools":[{"name":"set_a"},{"name":"get"}]}`, `{"tools":[1,"x",{"name":1}]}`,
		`{"tools":{},"a":[{"name":"set_x"}]}`, `{ "tools" : [ { "name" : "set_\u0061" , "securitySchemes" : 1 } ] }`, `{}`} {
		f.Add([]byte(in))
	}
	s := &settings{routes: []route{{conds: []cond{{serves: capTools, tools: []string{"set_*"}}},
		guarded: mcp.CompileGuarded(map[string][]string{"a": {"w\"x"}})}}}
	f.Fuzz(func(t *testing.T, in []byte) {
		var v map[string]any
		if json.Unmarshal(in, &v) != nil {
			return
		}
		out := s.appendWithSchemes(nil, in)
		require.True(t, json.Valid(out), "%s\n→ %s", in, out)
		if !bytes.Contains(in, []byte("set_")) && !bytes.Contains(in, []byte(`\u`)) {
			assert.NotContains(t, string(out), "securitySchemes\":[{", "no tool of the guarded route: %s", in)
		}
	})
}
