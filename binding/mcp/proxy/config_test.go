package proxy_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/internal/enginetest"
)

// startConfig loads and starts a proxy mcp1 with the given YAML (indented
// under the binding), whose routes may exit to app0 and app1, and returns
// the first error.
func startConfig(t *testing.T, body string) error {
	t.Helper()
	src := "name: test\nbindings:\n  mcp1:\n    type: mcp\n    kind: proxy\n" + body + "\n"
	return enginetest.Check(t, "proxy.yaml", src, map[string]engine.Binding{"app0": enginetest.Refuse{}, "app1": enginetest.Refuse{}},
		engine.WithWorkers(1), engine.WithRingCapacity(1<<16))
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
        when: [{toolkit: local}]`, `test.mcp1: mcp mcp1: a proxy takes only options.prefix, options.cache, options.timeout and options.tools: proxy.yaml:6: bindings.mcp1.options: unknown key "origins"`},
		{"no routes", ``, `mcp proxy: invalid configuration: mcp mcp1: a proxy needs routes, each with an exit and when: [{toolkit: …}] or no when`},
		{"missing toolkit", `    routes:
      - exit: app0
        when: [{tool: echo}]`, `proxy.yaml:8: bindings.mcp1.routes[0].when[0]: missing required key "toolkit"`},
		{"no when", `    routes:
      - exit: app0`, ""},
		{"route cache credentials without a cache", `    routes:
      - exit: app0
        with: {cache: {credentials: x}}`, `proxy.yaml:8: bindings.mcp1.routes[0].with.cache: mcp mcp1: routes[0].with.cache.credentials needs options.cache`},
		{"route cache credentials without a guard", `    options: {cache: {store: store0}}
    routes:
      - exit: app0
        with: {cache: {credentials: x}}`, `proxy.yaml:9: bindings.mcp1.routes[0].with.cache: mcp mcp1: routes[0].with.cache.credentials needs the guard of options.cache.authorization`},
		{"no when beside a toolkit", `    options: {prefix: always}
    routes:
      - exit: app0
        when: [{toolkit: local}]
      - exit: app1`, ""},
		{"two routes without when", `    routes:
      - exit: app0
      - exit: app1`, `mcp proxy: invalid configuration: proxy.yaml:8: mcp mcp1: routes[1]: routes[0] already has no when`},
		{"two conditions", `    routes:
      - exit: app0
        when: [{toolkit: a}, {toolkit: b}]`, `mcp mcp1: routes[0]: when needs at most one condition {toolkit, tool, prompt, resource}, has 2`},
		{"empty tool list", `    routes:
      - exit: app0
        when: [{toolkit: local, tool: []}]`, ""},
		{"duplicate toolkit", `    routes:
      - exit: app0
        when: [{toolkit: local}]
      - exit: app1
        when: [{toolkit: local}]`, `mcp proxy: invalid configuration: proxy.yaml:9: mcp mcp1: routes[1]: toolkit "local" is already the toolkit of routes[0]`},
		{"toolkit names another's prefix", `    routes:
      - exit: app0
        when: [{toolkit: a__b}]
      - exit: app1
        when: [{toolkit: a}]`, `mcp proxy: invalid configuration: proxy.yaml:7: mcp mcp1: routes[0]: toolkit "a__b" and routes[1]'s "a" make names with two readings: "a__b__x" is "x" of "a__b" and "b__x" of "a"`},
		{"toolkit a and a_", `    routes:
      - exit: app0
        when: [{toolkit: a}]
      - exit: app1
        when: [{toolkit: a_}]`, `mcp proxy: invalid configuration: proxy.yaml:9: mcp mcp1: routes[1]: toolkit "a_" and routes[0]'s "a" make names with two readings: "a___x" is "x" of "a_" and "_x" of "a"`},
		{"toolkit a and a_b", `    routes:
      - exit: app0
        when: [{toolkit: a}]
      - exit: app1
        when: [{toolkit: a_b}]`, ""},
		{"toolkit a and a__b unprefixed", `    options: {prefix: never}
    routes:
      - exit: app0
        when: [{toolkit: a}]
      - exit: app1
        when: [{toolkit: a__b}]`, ""},
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

// TestToolsModelConfig: options.tools loads in Zilla's shape and is
// refused, at its line, when its catalog is not declared, asks for a
// catalog's own schemas, or has no cached tools list to read schemas
// from.
func TestToolsModelConfig(t *testing.T) {
	for name, tc := range map[string]struct{ catalogs, options, want string }{
		"zilla's shape": {"catalogs:\n  tools_schema: {type: test}\n",
			"      cache: {store: store0}\n      tools: {model: json, catalog: {tools_schema: [{strategy: tool}]}}\n", ""},
		"undeclared catalog": {"",
			"      cache: {store: store0}\n      tools: {model: json, catalog: {tools_schema: [{strategy: tool}]}}\n",
			`proxy.yaml:11: bindings.mcp1.options.tools.catalog.tools_schema: mcp mcp1: no catalog named "tools_schema"`},
		"subject": {"catalogs:\n  c0: {type: test}\n",
			"      cache: {store: store0}\n      tools: {model: json, catalog: {c0: [{subject: s, version: latest}]}}\n",
			`mcp mcp1: a catalog's own schemas (subject, id, version) are not supported yet`},
		"other strategy": {"catalogs:\n  c0: {type: test}\n",
			"      cache: {store: store0}\n      tools: {model: json, catalog: {c0: [{strategy: topic}]}}\n",
			`mcp mcp1: strategy "topic": want tool`},
		"no cache": {"catalogs:\n  c0: {type: test}\n",
			"      tools: {model: json, catalog: {c0: [{strategy: tool}]}}\n",
			`mcp mcp1: options.tools needs the tools list cached (options.cache)`},
		"no catalog": {"", "      cache: {store: store0}\n      tools: {model: json}\n",
			`mcp mcp1: options.tools needs catalog: {<catalog>: [{strategy: tool}]}`},
		"other model": {"catalogs:\n  c0: {type: test}\n",
			"      cache: {store: store0}\n      tools: {model: avro, catalog: {c0: [{strategy: tool}]}}\n",
			`proxy.yaml:13: bindings.mcp1.options.tools.model: must be json`},
	} {
		t.Run(name, func(t *testing.T) {
			src := "name: test\nstores:\n  store0:\n    type: memory\n" + tc.catalogs +
				"bindings:\n  mcp1:\n    type: mcp\n    kind: proxy\n    options:\n" + tc.options + "    routes:\n      - exit: app0\n"
			err := enginetest.Check(t, "proxy.yaml", src, map[string]engine.Binding{"app0": enginetest.Refuse{}}, engine.WithWorkers(1))
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}
