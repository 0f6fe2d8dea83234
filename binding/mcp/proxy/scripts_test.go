package proxy_test

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/spec"
)

var (
	scripts  = filepath.Join("..", "..", "..", "scripts", "mcp")
	proxyDir = filepath.Join(scripts, "streams", "proxy")
)

// TestScriptsEngineDriven plays each proxy scenario against mcp1 of
// config/proxy.yaml: downstream.rpt plays the mcp server kind in front,
// and routes.rpt, when the scenario has one, plays the routes' exits app0
// and app1 behind; on one worker and on two. The two are not a pair (each
// talks to the proxy, not to the other), hence not client and server.
func TestScriptsEngineDriven(t *testing.T) {
	entries, err := os.ReadDir(proxyDir)
	require.NoError(t, err)
	cfg := filepath.Join(scripts, "config", "proxy.yaml")
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		names := []string{filepath.Join(proxyDir, e.Name(), "downstream")}
		if _, err := os.Stat(filepath.Join(proxyDir, e.Name(), "routes.rpt")); err == nil {
			names = append(names, filepath.Join(proxyDir, e.Name(), "routes"))
		}
		for _, workers := range []int{1, 2} {
			t.Run(e.Name()+"/workers="+strconv.Itoa(workers), func(t *testing.T) {
				t.Parallel()
				spec.Run(t, spec.Config(cfg, spec.Workers(workers)), names...)
			})
		}
	}
}
