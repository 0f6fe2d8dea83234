package spec

import (
	"os"
	"path/filepath"
	"testing"
)

// Scenarios returns the names of the scenario folders in dir, a side of a
// scenario library such as scripts/http/streams/network, in name order.
// It fails t when dir cannot be read or a folder lacks one of the files
// named in want (such as "client.rpt" and "server.rpt").
func Scenarios(t testing.TB, dir string, want ...string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		for _, file := range want {
			if _, err := os.Stat(filepath.Join(dir, e.Name(), file)); err != nil {
				t.Fatalf("scenario %s lacks %s: %v", e.Name(), file, err)
			}
		}
		names = append(names, e.Name())
	}
	return names
}

// RunPairs plays the client.rpt of each scenario folder in each dir
// against its server.rpt, peer to peer, each in a parallel subtest named
// <base of dir>/<scenario>: this proves the two scripts of a pair agree.
// It returns the names of the scenarios it found, dir by dir, for a caller
// that checks how many there are.
func RunPairs(t *testing.T, dirs ...string) []string {
	t.Helper()
	var all []string
	for _, dir := range dirs {
		names := Scenarios(t, dir, "client.rpt", "server.rpt")
		for _, name := range names {
			t.Run(filepath.Base(dir)+"/"+name, func(t *testing.T) {
				t.Parallel()
				Run(t, PeerToPeer(), filepath.Join(dir, name, "client"), filepath.Join(dir, name, "server"))
			})
		}
		all = append(all, names...)
	}
	return all
}

// RunServerScenarios plays the scenario library of a binding at lib
// (scripts/<binding>) against the binding's server kind. First, in
// subtests of "pairs", each network and application pair plays peer to
// peer ([RunPairs]). Then, in a parallel subtest of "engine" for each
// scenario, the network client script plays into the binding net0 while
// the application server script, if the scenario has one, plays its exit
// app0 under config/server.yaml. A scenario with no application pair is
// one the server answers by itself; it runs under
// config/server.local.yaml, whose exit is an echo binding. Either gives
// way to the scenario's own config/server.<scenario>.yaml when there is
// one.
func RunServerScenarios(t *testing.T, lib string) {
	t.Helper()
	netDir := filepath.Join(lib, "streams", "network")
	appDir := filepath.Join(lib, "streams", "application")
	t.Run("pairs", func(t *testing.T) { RunPairs(t, netDir, appDir) })
	t.Run("engine", func(t *testing.T) {
		for _, name := range Scenarios(t, netDir) {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				names := []string{filepath.Join(netDir, name, "client")}
				cfg := filepath.Join(lib, "config", "server.local.yaml")
				if exists(filepath.Join(appDir, name, "server.rpt")) {
					names = append(names, filepath.Join(appDir, name, "server"))
					cfg = filepath.Join(lib, "config", "server.yaml")
				}
				if own := filepath.Join(lib, "config", "server."+name+".yaml"); exists(own) {
					cfg = own
				}
				Run(t, Config(cfg), names...)
			})
		}
	})
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
