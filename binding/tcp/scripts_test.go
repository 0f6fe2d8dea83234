package tcp_test

import (
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/spec"
)

var (
	netDir = filepath.Join(scriptsDir, "streams", "network")
	appDir = filepath.Join(scriptsDir, "streams", "application")
)

// scenarios lists the scenario folders, which must exist on both sides.
func scenarios(t *testing.T) []string {
	t.Helper()
	names := spec.Scenarios(t, appDir, "client.rpt", "server.rpt")
	for _, name := range names {
		for _, role := range []string{"client.rpt", "server.rpt"} {
			require.FileExists(t, filepath.Join(netDir, name, role), "scenario %s lacks network/%s", name, role)
		}
	}
	require.GreaterOrEqual(t, len(names), 11)
	return names
}

// TestScriptsPeerToPeer plays each pair against each other, which proves
// the client and server scripts of a side agree.
func TestScriptsPeerToPeer(t *testing.T) {
	scenarios(t)
	spec.RunPairs(t, netDir, appDir)
}

// TestScriptsServer drives the server kind: the network client script
// connects to a tcp server on a free port, and the application server
// script plays its exit, app0.
func TestScriptsServer(t *testing.T) {
	runKind(t, "server.yaml", netDir, appDir)
}

// TestScriptsClient drives the client kind: the application client script
// opens streams into a tcp client, and the network server script accepts
// its connections on a free port.
func TestScriptsClient(t *testing.T) {
	runKind(t, "client.yaml", appDir, netDir)
}

// runKind plays each scenario's client script from clientDir and server
// script from serverDir against the configuration scripts/tcp/config/cfg
// on a free port, on one worker and on two.
func runKind(t *testing.T, cfg, clientDir, serverDir string) {
	for _, name := range scenarios(t) {
		for _, workers := range []int{1, 2} {
			t.Run(name+"/workers="+strconv.Itoa(workers), func(t *testing.T) {
				t.Parallel()
				port := freePort(t)
				setup := spec.Config(scriptConfig(t, cfg, port),
					spec.Override("address", "tcp://127.0.0.1:"+strconv.Itoa(port)),
					spec.Override("port", port),
					spec.Workers(workers))
				spec.Run(t, setup, filepath.Join(clientDir, name, "client"), filepath.Join(serverDir, name, "server"))
			})
		}
	}
}
