package mcp_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/binding/mcp"
)

func TestVersions(t *testing.T) {
	for _, tt := range []struct {
		name string
		want mcp.Version
	}{
		{"2025-03-26", mcp.Version20250326},
		{"2025-06-18", mcp.Version20250618},
		{"2025-11-25", mcp.Version20251125},
		{"2026-07-28", mcp.Version20260728},
		{"", mcp.VersionUnsupported},
		{"2024-11-05", mcp.VersionUnsupported},
		{"2025-03-26 ", mcp.VersionUnsupported},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v := mcp.ParseVersion([]byte(tt.name))
			assert.Equal(t, tt.want, v)
			got, err := mcp.LookupVersion(tt.name)
			assert.Equal(t, tt.want, got)
			if tt.want == mcp.VersionUnsupported {
				require.Error(t, err)
				assert.Contains(t, err.Error(), "want 2025-03-26, 2025-06-18, 2025-11-25 or 2026-07-28")
				assert.Empty(t, v.String())
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.name, v.String())
		})
	}
	assert.Empty(t, mcp.VersionNone.String())
	assert.Less(t, mcp.Version20250618, mcp.Version20251125, "versions are in release order")
}
