package mcp_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/binding/mcp"
)

func TestLookupMethod(t *testing.T) {
	for _, tt := range []struct {
		name string
		want mcp.Method
	}{
		{"tools/list", mcp.Method{Name: "tools/list", Kind: mcp.McpBeginExKindToolsList, List: true, V20260728: true}},
		{"tools/call", mcp.Method{Name: "tools/call", Kind: mcp.McpBeginExKindToolsCall, Param: mcp.ParamName, V20260728: true}},
		{"prompts/list", mcp.Method{Name: "prompts/list", Kind: mcp.McpBeginExKindPromptsList, List: true, V20260728: true}},
		{"prompts/get", mcp.Method{Name: "prompts/get", Kind: mcp.McpBeginExKindPromptsGet, Param: mcp.ParamName, V20260728: true}},
		{"resources/list", mcp.Method{Name: "resources/list", Kind: mcp.McpBeginExKindResourcesList, List: true, V20260728: true}},
		{"resources/templates/list", mcp.Method{Name: "resources/templates/list", Kind: mcp.McpBeginExKindResourcesTemplatesList, List: true, V20260728: true}},
		{"resources/read", mcp.Method{Name: "resources/read", Kind: mcp.McpBeginExKindResourcesRead, Param: mcp.ParamURI, V20260728: true}},
		{"resources/subscribe", mcp.Method{Name: "resources/subscribe", Kind: mcp.McpBeginExKindResourcesSubscribe, Param: mcp.ParamURI}},
		{"resources/unsubscribe", mcp.Method{Name: "resources/unsubscribe", Kind: mcp.McpBeginExKindResourcesUnsubscribe, Param: mcp.ParamURI}},
		{"completion/complete", mcp.Method{Name: "completion/complete", Kind: mcp.McpBeginExKindRequest, V20260728: true, Need: mcp.McpCapabilitiesServerCompletions}},
		{"logging/setLevel", mcp.Method{Name: "logging/setLevel", Kind: mcp.McpBeginExKindRequest, Need: mcp.McpCapabilitiesServerLogging}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := mcp.LookupMethod([]byte(tt.name))
			require.NotNil(t, m)
			assert.Equal(t, tt.want, *m)
		})
	}
	for _, name := range []string{"", "initialize", "ping", "server/discover", "subscriptions/listen",
		"notifications/cancelled", "tools/lis", "tools/listx", "Tools/list"} {
		t.Run("not "+name, func(t *testing.T) {
			assert.Nil(t, mcp.LookupMethod([]byte(name)))
		})
	}
}

// TestKindMethod checks that every kind but the lifecycle and the generic
// one has exactly one method, and that the two directions agree.
func TestKindMethod(t *testing.T) {
	for kind := range uint8(mcp.McpBeginExKindRequest + 2) {
		m := mcp.KindMethod(kind)
		switch kind {
		case mcp.McpBeginExKindLifecycle, mcp.McpBeginExKindRequest, mcp.McpBeginExKindRequest + 1:
			assert.Nil(t, m, "kind %d", kind)
			continue
		}
		require.NotNil(t, m, "kind %d", kind)
		assert.Equal(t, kind, m.Kind)
		assert.Same(t, m, mcp.LookupMethod([]byte(m.Name)))
	}
}

func TestMethodAllocs(t *testing.T) {
	name := []byte("logging/setLevel")
	allocs := testing.AllocsPerRun(100, func() {
		_ = mcp.LookupMethod(name)
		_ = mcp.KindMethod(mcp.McpBeginExKindResourcesRead)
	})
	assert.Zero(t, allocs)
}

// BenchmarkLookupMethod looks up the first method of the table, the last,
// and one it does not hold: the server looks one up per request.
func BenchmarkLookupMethod(b *testing.B) {
	for _, name := range []string{"tools/list", "logging/setLevel", "initialize"} {
		b.Run(name, func(b *testing.B) {
			p := []byte(name)
			b.ReportAllocs()
			for b.Loop() {
				_ = mcp.LookupMethod(p)
			}
		})
	}
}
