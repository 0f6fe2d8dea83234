package server_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/internal/enginetest"
)

// startConfig loads and starts src, returning the first error.
func startConfig(t *testing.T, src string) error {
	t.Helper()
	return enginetest.Check(t, "mcp.yaml", src, map[string]engine.Binding{"app0": enginetest.Refuse{}},
		engine.WithWorkers(1), engine.WithRingCapacity(1<<16))
}

func TestConfig(t *testing.T) {
	tests := []struct {
		name, options, kind, want string
	}{
		{"defaults", "", "server", ""},
		{"all options", `
      origins: ["https://app.example", "*"]
      inactivity: {timeout: PT5M}
      sse: {keepalive: {interval: 10s}, replay: 0}
      get: false
      versions: [2025-11-25, 2026-07-28]
      limits: {body: 65536}
      sessions: {ids: random}`, "server", ""},
		{"bad duration", `
      inactivity: {timeout: soon}`, "server", `mcp net0: inactivity.timeout "soon": want a positive duration such as PT15S`},
		{"zero keepalive", `
      sse: {keepalive: {interval: PT0S}}`, "server", `mcp net0: sse.keepalive.interval "PT0S": want a positive duration`},
		{"bad origin", `
      origins: [app.example]`, "server", `mcp net0: origins: "app.example" is not an origin; want scheme://host[:port] or *`},
		{"bad host", `
      hosts: ["http://x"]`, "server", `mcp net0: hosts: "http://x" is not a host; want host or host:port`},
		{"unknown version", `
      versions: [2024-11-05]`, "server", `versions`},
		{"client request timeouts", `
      elicitation: {timeout: PT5M}
      sampling: {timeout: PT30S}`, "server", ""},
		{"bad sampling timeout", `
      sampling: {timeout: later}`, "server", `mcp net0: sampling.timeout "later": want a positive duration`},
		{"bad elicitation timeout", `
      elicitation: {timeout: PT0S}`, "server", `mcp net0: elicitation.timeout "PT0S": want a positive duration`},
		{"input required", `
      inputRequired: {maxRounds: 3, roundTimeout: PT30S}`, "server", ""},
		{"bad input required round timeout", `
      inputRequired: {roundTimeout: never}`, "server", `mcp net0: inputRequired.roundTimeout "never": want a positive duration`},
		{"input required rounds out of range", `
      inputRequired: {maxRounds: 0}`, "server", `maxRounds`},
		{"client's state key", `
      inputRequired: {key: c2hvcnQ=}`, "server", `key`},
		{"elicitation callback", `
      elicitation: {callback: auth/done, timeout: PT5M}`, "server", ""},
		{"elicitation callback not a relative path", `
      elicitation: {callback: "https://app.example/cb"}`, "server",
			`mcp net0: elicitation.callback: "https://app.example/cb" is not a relative path`},
		{"unknown sampling option", `
      sampling: {model: x}`, "server", `model`},
		{"unknown option", `
      timeout: PT1S`, "server", `timeout`},
		{"proxy", "", "proxy", "mcp net0: kind proxy is not compiled in"},
		{"client", `
      server: http://127.0.0.1:1/mcp`, "client", "mcp net0: kind client is not compiled in"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := "name: test\nbindings:\n  net0:\n    type: mcp\n    kind: " + tt.kind + "\n    exit: app0\n"
			if tt.options != "" {
				src += "    options:" + tt.options + "\n"
			}
			err := startConfig(t, src)
			if tt.want == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestConfigServerNeedsExit(t *testing.T) {
	err := startConfig(t, "name: test\nbindings:\n  net0:\n    type: mcp\n    kind: server\n")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "a server needs an exit")
}
