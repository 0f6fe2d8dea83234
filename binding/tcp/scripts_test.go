package tcp_test

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/spec"
)

// scenarios lists the scenario folders, which must exist on both sides.
func scenarios(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(scriptsDir, "streams", "application"))
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		for _, side := range []string{"network", "application"} {
			for _, role := range []string{"client.rpt", "server.rpt"} {
				_, err := os.Stat(filepath.Join(scriptsDir, "streams", side, e.Name(), role))
				require.NoError(t, err, "scenario %s lacks %s/%s", e.Name(), side, role)
			}
		}
		names = append(names, e.Name())
	}
	require.GreaterOrEqual(t, len(names), 11)
	return names
}

func roots() []spec.RunOption {
	return []spec.RunOption{
		spec.Root("net", filepath.Join(scriptsDir, "streams", "network")),
		spec.Root("app", filepath.Join(scriptsDir, "streams", "application")),
	}
}

// TestScriptsPeerToPeer plays each pair against each other, which proves
// the client and server scripts of a side agree.
func TestScriptsPeerToPeer(t *testing.T) {
	for _, name := range scenarios(t) {
		for _, side := range []string{"net", "app"} {
			t.Run(side+"/"+name, func(t *testing.T) {
				t.Parallel()
				spec.Run(t, spec.PeerToPeer(roots()...), side+"/"+name+"/client", side+"/"+name+"/server")
			})
		}
	}
}

// TestScriptsServer drives the server kind: the network client script
// connects to a tcp server on a free port, and the application server
// script plays its exit, app0.
func TestScriptsServer(t *testing.T) {
	for _, name := range scenarios(t) {
		for _, workers := range []int{1, 2} {
			t.Run(name+"/workers="+strconv.Itoa(workers), func(t *testing.T) {
				t.Parallel()
				port := freePort(t)
				cfg := scriptConfig(t, "server.yaml", port)
				opts := append(roots(),
					spec.Override("address", "tcp://127.0.0.1:"+strconv.Itoa(port)),
					spec.Override("port", port),
					spec.Workers(workers))
				spec.Run(t, spec.Config(cfg, opts...), "net/"+name+"/client", "app/"+name+"/server")
			})
		}
	}
}

// TestScriptsClient drives the client kind: the application client script
// opens streams into a tcp client, and the network server script accepts
// its connections on a free port.
func TestScriptsClient(t *testing.T) {
	for _, name := range scenarios(t) {
		for _, workers := range []int{1, 2} {
			t.Run(name+"/workers="+strconv.Itoa(workers), func(t *testing.T) {
				t.Parallel()
				port := freePort(t)
				cfg := scriptConfig(t, "client.yaml", port)
				opts := append(roots(),
					spec.Override("address", "tcp://127.0.0.1:"+strconv.Itoa(port)),
					spec.Override("port", port),
					spec.Workers(workers))
				spec.Run(t, spec.Config(cfg, opts...), "app/"+name+"/client", "net/"+name+"/server")
			})
		}
	}
}
