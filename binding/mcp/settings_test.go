package mcp_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/engine"
)

func TestParseIDs(t *testing.T) {
	for _, tt := range []struct {
		value   string
		want    mcp.IDs
		wantErr string
	}{
		{"random", mcp.IDs{}, ""},
		{"sequential", mcp.IDs{Sequential: true}, ""},
		{"5ca1ab1e-c0de-4a11-b0a7-000100000000", mcp.IDs{Fixed: []string{"5ca1ab1e-c0de-4a11-b0a7-000100000000"}}, ""},
		{"a,b", mcp.IDs{Fixed: []string{"a", "b"}}, ""},
		{"a,,b", mcp.IDs{}, "an empty id"},
		{"", mcp.IDs{}, "an empty id"},
		{"a b", mcp.IDs{}, `id "a b": only visible ASCII`},
		{"io.aklivity.McpServerIT::sessionId", mcp.IDs{}, "names a Java supplier (Class::method)"},
	} {
		t.Run(tt.value, func(t *testing.T) {
			got, err := mcp.ParseIDs(tt.value)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestParseDuration(t *testing.T) {
	d, err := mcp.ParseDuration("PT0.2S")
	require.NoError(t, err)
	assert.Equal(t, 200*time.Millisecond, d)
	d, err = mcp.ParseDuration("90s")
	require.NoError(t, err)
	assert.Equal(t, 90*time.Second, d)
	for _, v := range []string{"", "PT0S", "-1s", "soon"} {
		_, err := mcp.ParseDuration(v)
		assert.Error(t, err, v)
	}
}

// TestSettingsDeclared checks the mcp settings the engine accepts under
// Zilla's names, and that Zilla's others are declared with the reason no
// kind reads them.
func TestSettingsDeclared(t *testing.T) {
	for _, name := range []string{"zilla.binding.mcp.session.id", mcp.SettingServerName, mcp.SettingServerVersion} {
		canon, err := engine.CheckSetting(name, "x")
		require.NoError(t, err, name)
		assert.Equal(t, engine.CanonicalSetting(name), canon)
	}
	_, err := engine.CheckSetting("zilla.binding.mcp.inactivity.timeout", "PT1S")
	assert.NoError(t, err)
	_, err = engine.CheckSetting(mcp.SettingSSEKeepaliveInterval, "often")
	assert.EqualError(t, err, `engine: setting mcp.sse.keepalive.interval="often": want a positive duration such as PT15S`)
	canon, err := engine.CheckSetting("zilla.binding.mcp.hydrate.filter", "tools")
	require.NoError(t, err)
	s, _ := engine.LookupSetting(canon)
	assert.Equal(t, "the proxy cache hydrates the kinds options.cache.ttl names", s.Unread)
	_, err = engine.CheckSetting("zilla.binding.mcp.elicitation.id", "a::b")
	assert.ErrorContains(t, err, "names a Java supplier")
}
