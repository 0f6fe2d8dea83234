package client_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/enginetest"
	"github.com/sluicehq/sluice/spec"
)

var (
	scripts   = filepath.Join("..", "..", "..", "scripts", "mcp")
	clientDir = filepath.Join(scripts, "streams", "client")
)

// TestScriptsEngineDriven plays each client scenario against app0 of
// config/client.yaml (config/client.guarded.yaml for a scenario named
// *.guarded, with the elicitation and correlation ids fixed;
// config/client.NAME.yaml when the scenario has its own): downstream.rpt
// plays the mcp server kind in front,
// and upstream.rpt, when the scenario has one, the http client behind it
// (net0) answering as the upstream MCP server (a scenario without one
// sends nothing upstream); on one worker and on two.
// The two are not a pair (each talks to the client kind, not to the
// other), hence not client and server.
func TestScriptsEngineDriven(t *testing.T) {
	for _, name := range spec.Scenarios(t, clientDir, "downstream.rpt") {
		names := []string{filepath.Join(clientDir, name, "downstream")}
		cfg := filepath.Join(scripts, "config", "client.yaml")
		var opts []spec.RunOption
		if strings.HasSuffix(name, ".guarded") {
			cfg = filepath.Join(scripts, "config", "client.guarded.yaml")
			opts = append(opts, spec.Setting("mcp.elicitation.id", "elicit-1"), spec.Setting("mcp.elicit.correlation.id", "3"))
		}
		if own := filepath.Join(scripts, "config", "client."+name+".yaml"); enginetest.Exists(own) {
			cfg = own
		}
		if up := filepath.Join(clientDir, name, "upstream"); enginetest.Exists(up + ".rpt") {
			names = append(names, up)
		} else {
			opts = append(opts, spec.External("net0")) // nothing goes upstream
		}
		enginetest.OnWorkers(t, name, []int{1, 2}, func(t *testing.T, workers int) {
			spec.Run(t, spec.Config(cfg, append(opts, spec.Workers(workers))...), names...)
		})
	}
}
