package spec

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestScenarios lists the folders of a side in name order, skipping
// files.
func TestScenarios(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"b.second", "a.first"} {
		require.NoError(t, os.Mkdir(filepath.Join(dir, name), 0o755))
		for _, role := range []string{"client.rpt", "server.rpt"} {
			require.NoError(t, os.WriteFile(filepath.Join(dir, name, role), nil, 0o644))
		}
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "README.md"), nil, 0o644))
	assert.Equal(t, []string{"a.first", "b.second"}, Scenarios(t, dir, "client.rpt", "server.rpt"))
	assert.Equal(t, []string{"a.first", "b.second"}, Scenarios(t, dir))
}
