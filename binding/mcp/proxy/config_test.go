package proxy_test

import (
	"io"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/binding"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/config"
	"github.com/sluicehq/sluice/engine/frame"
)

type refuse struct{}

func (refuse) Attach(*engine.Worker, *engine.BindingConfig) (engine.Handler, error) {
	return refuse{}, nil
}
func (refuse) NewStream(frame.FrameType, []byte) engine.MessageConsumer { return nil }

// startConfig loads and starts a proxy mcp1 with the given YAML (indented
// under the binding), whose routes may exit to app0 and app1, and returns
// the first error.
func startConfig(t *testing.T, body string) error {
	t.Helper()
	src := "name: test\nbindings:\n  mcp1:\n    type: mcp\n    kind: proxy\n" + body + "\n"
	schema, err := config.NewSchema(append(binding.Fragments(), engine.ComponentFragments()...)...)
	require.NoError(t, err)
	cfg, err := config.Load("proxy.yaml", []byte(src), schema, config.WithExternal("app0", "app1"))
	if err != nil {
		return err
	}
	if err := binding.Resolve(cfg); err != nil {
		return err
	}
	e, err := engine.New(cfg, engine.WithWorkers(1), engine.WithRingCapacity(1<<16), engine.WithPin(false),
		engine.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))), engine.WithBindings(binding.Factory),
		engine.WithExternal("app0", refuse{}), engine.WithExternal("app1", refuse{}))
	require.NoError(t, err)
	err = e.Start()
	if err == nil {
		require.NoError(t, e.Stop(t.Context()))
	}
	return err
}

func TestConfig(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"two routes", `    options: {prefix: always}
    routes:
      - exit: app0
        when: [{toolkit: local, tool: ["echo", "add*"], prompt: greeting, resource: "sluice://*"}]
      - exit: app1
        when: [{toolkit: everything}]`, ""},
		{"default prefix", `    routes:
      - exit: app0
        when: [{toolkit: local}]`, ""},
		{"bad prefix", `    options: {prefix: sometimes}
    routes:
      - exit: app0
        when: [{toolkit: local}]`, `proxy.yaml:6: bindings.mcp1.options.prefix: must be one of always, conditional, never`},
		{"server option", `    options: {origins: ["https://app.example"]}
    routes:
      - exit: app0
        when: [{toolkit: local}]`, `test.mcp1: mcp mcp1: a proxy takes only options.prefix: proxy.yaml:6: bindings.mcp1.options: unknown key "origins"`},
		{"no routes", ``, `mcp proxy: invalid configuration: mcp mcp1: a proxy needs routes, each with when: [{toolkit: …}]`},
		{"missing toolkit", `    routes:
      - exit: app0
        when: [{tool: echo}]`, `proxy.yaml:8: bindings.mcp1.routes[0].when[0]: missing required key "toolkit"`},
		{"no when", `    routes:
      - exit: app0`, `mcp proxy: invalid configuration: proxy.yaml:7: mcp mcp1: routes[0]: when needs exactly one condition {toolkit, tool, prompt, resource}, has 0`},
		{"duplicate toolkit", `    routes:
      - exit: app0
        when: [{toolkit: local}]
      - exit: app1
        when: [{toolkit: local}]`, `mcp proxy: invalid configuration: proxy.yaml:9: mcp mcp1: routes[1]: toolkit "local" is already the toolkit of routes[0]`},
		{"bad glob", `    routes:
      - exit: app0
        when: [{toolkit: local, tool: ["echo", "add["]}]`, `mcp proxy: invalid configuration: proxy.yaml:8: mcp mcp1: routes[0]: when[0].tool: bad glob "add[": syntax error in pattern`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := startConfig(t, tt.body)
			if tt.want == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}
