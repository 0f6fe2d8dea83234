package proxy

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/engine/config"
)

// TestRouteAllowSets checks what a route's conditions admit, as Zilla's
// McpConditionMatcher does: an absent list admits every name, an empty
// one none, and a route without when serves every name unprefixed.
func TestRouteAllowSets(t *testing.T) {
	rt, err := compileRoute("mcp1", 0, "app0", []any{map[string]any{"toolkit": "slack", "tool": []any{}, "prompt": "greet*"}}, config.Pos{}, config.Pos{})
	require.NoError(t, err)
	assert.False(t, mcp.GlobsAllow(rt.tools, "post_message"), "tool: [] admits no tool")
	assert.True(t, mcp.GlobsAllow(rt.prompts, "greeting"))
	assert.False(t, mcp.GlobsAllow(rt.prompts, "farewell"))
	assert.True(t, mcp.GlobsAllow(rt.resources, "slack://channel"), "no resource list admits every resource")
	assert.Equal(t, "slack__", string(rt.name))

	rt, err = compileRoute("mcp1", 0, "app0", nil, config.Pos{}, config.Pos{})
	require.NoError(t, err)
	assert.Empty(t, rt.toolkit)
	assert.Empty(t, rt.name, "no prefix")
	assert.True(t, mcp.GlobsAllow(rt.tools, "anything"))
}
