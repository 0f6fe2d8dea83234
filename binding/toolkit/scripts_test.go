package toolkit_test

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	_ "github.com/sluicehq/sluice/binding/toolkit"
	"github.com/sluicehq/sluice/spec"
)

var (
	scripts    = filepath.Join("..", "..", "scripts", "toolkit")
	appDir     = filepath.Join(scripts, "streams", "application")
	configFile = filepath.Join(scripts, "config", "toolkit.yaml")
)

// scenarios lists the scenario folders, each of which must hold a pair.
func scenarios(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(appDir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		for _, role := range []string{"client.rpt", "server.rpt"} {
			_, err := os.Stat(filepath.Join(appDir, e.Name(), role))
			require.NoError(t, err, "scenario %s lacks %s", e.Name(), role)
		}
		names = append(names, e.Name())
	}
	require.GreaterOrEqual(t, len(names), 14)
	return names
}

// TestScriptsPeerToPeer plays each client.rpt against its server.rpt,
// which proves the pair agrees: server.rpt is what the toolkit does.
func TestScriptsPeerToPeer(t *testing.T) {
	for _, name := range scenarios(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			spec.Run(t, spec.PeerToPeer(), filepath.Join(appDir, name, "client"), filepath.Join(appDir, name, "server"))
		})
	}
}

// TestScriptsEngineDriven plays each client.rpt, the mcp server kind's
// side, into the toolkit binding app0 of a running engine, on one worker
// and across two.
func TestScriptsEngineDriven(t *testing.T) {
	for _, name := range scenarios(t) {
		for _, workers := range []int{1, 2} {
			t.Run(name+"/workers="+strconv.Itoa(workers), func(t *testing.T) {
				t.Parallel()
				spec.Run(t, spec.Config(configFile, spec.Workers(workers)), filepath.Join(appDir, name, "client"))
			})
		}
	}
}
