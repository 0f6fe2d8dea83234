package toolkit_test

import (
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

// TestScriptsPeerToPeer plays each client.rpt against its server.rpt,
// which proves the pair agrees: server.rpt is what the toolkit does.
func TestScriptsPeerToPeer(t *testing.T) {
	require.GreaterOrEqual(t, len(spec.RunPairs(t, appDir)), 14)
}

// TestScriptsEngineDriven plays each client.rpt, the mcp server kind's
// side, into the toolkit binding app0 of a running engine, on one worker
// and across two.
func TestScriptsEngineDriven(t *testing.T) {
	names := spec.Scenarios(t, appDir, "client.rpt", "server.rpt")
	require.GreaterOrEqual(t, len(names), 14)
	for _, name := range names {
		for _, workers := range []int{1, 2} {
			t.Run(name+"/workers="+strconv.Itoa(workers), func(t *testing.T) {
				t.Parallel()
				spec.Run(t, spec.Config(configFile, spec.Workers(workers)), filepath.Join(appDir, name, "client"))
			})
		}
	}
}
