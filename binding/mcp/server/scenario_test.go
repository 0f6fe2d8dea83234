package server_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	_ "github.com/sluicehq/sluice/binding/echo"
	_ "github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/spec"
)

var (
	scripts = filepath.Join("..", "..", "..", "scripts", "mcp")
	netDir  = filepath.Join(scripts, "streams", "network")
	appDir  = filepath.Join(scripts, "streams", "application")
)

// scenarios lists the scenario folders under dir.
func scenarios(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	return names
}

// TestServerPeerToPeer proves each network and application pair agrees.
func TestServerPeerToPeer(t *testing.T) {
	for _, dir := range []string{netDir, appDir} {
		for _, name := range scenarios(t, dir) {
			t.Run(filepath.Base(dir)+"/"+name, func(t *testing.T) {
				t.Parallel()
				spec.Run(t, spec.PeerToPeer(), filepath.Join(dir, name, "client"), filepath.Join(dir, name, "server"))
			})
		}
	}
}

// TestServerEngineDriven plays the network client script into the mcp
// server binding, net0, while the application server script plays app0
// (config/server.yaml). A scenario with no application pair is one the
// server answers by itself; it runs against config/server.local.yaml,
// whose exit is an echo binding. Either may be replaced by the scenario's
// own config/server.<scenario>.yaml.
func TestServerEngineDriven(t *testing.T) {
	for _, name := range scenarios(t, netDir) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			names := []string{filepath.Join(netDir, name, "client")}
			cfg := filepath.Join(scripts, "config", "server.local.yaml")
			if fileExists(filepath.Join(appDir, name, "server.rpt")) {
				names = append(names, filepath.Join(appDir, name, "server"))
				cfg = filepath.Join(scripts, "config", "server.yaml")
			}
			if own := filepath.Join(scripts, "config", "server."+name+".yaml"); fileExists(own) {
				cfg = own
			}
			spec.Run(t, spec.Config(cfg), names...)
		})
	}
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
