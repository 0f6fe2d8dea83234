package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestValidateZillaShapes validates configs in the shape of Zilla's own
// test configs: exits to bindings the file does not define, which
// --external declares; options Zilla has that load as they are; and
// options Sluice does not implement, named as not supported yet.
func TestValidateZillaShapes(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) string {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte(src), 0o644))
		return path
	}
	server := write("server.yaml", `name: test
bindings:
  net0:
    type: mcp
    kind: server
    exit: app0
`)
	h2 := write("h2.yaml", `name: test
bindings:
  net0:
    type: http
    kind: server
    options:
      versions: [h2]
    exit: app0
`)
	overrides := write("overrides.yaml", `name: test
bindings:
  net0:
    type: http
    kind: server
    options:
      versions: [http/1.1]
      overrides:
        :authority: otherhost:8181
    exit: app0
`)
	cache := write("cache.yaml", `name: test
stores:
  memory0:
    type: memory
bindings:
  app0:
    type: mcp
    kind: proxy
    options:
      cache:
        store: memory0
        tools:
          eager: {policy: explicit, match: ["get_*"]}
    routes:
      - exit: app1
        when:
          - toolkit: github
            tool: []
`)
	clientRoutes := write("client.yaml", `name: test
bindings:
  app0:
    type: mcp
    kind: client
    options:
      server: http://localhost:8080/mcp
    routes:
      - exit: net0
        when:
          - tool: [get_weather]
`)
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{"exit undeclared", []string{"validate", "-c", server}, exitUsage, "",
			server + `:6: bindings.net0.exit: no binding named "app0"`},
		{"exit external", []string{"validate", "-c", server, "--external", "app0"}, exitOK, server + ": valid (1 bindings)\n", ""},
		{"http h2", []string{"validate", "-c", h2, "--external", "app0"}, exitOK, h2 + ": valid (1 bindings)\n", ""},
		{"http overrides", []string{"validate", "-c", overrides, "--external", "app0"}, exitUsage, "",
			overrides + ":8: bindings.net0.options.overrides: not supported yet: options.overrides (rewriting request headers)"},
		{"mcp cache", []string{"validate", "-c", cache, "--external", "app1"}, exitOK, cache + ": valid (1 bindings)\n", ""},
		{"mcp client routes", []string{"validate", "-c", clientRoutes, "--external", "net0"}, exitOK, clientRoutes + ": valid (1 bindings)\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			assert.Equal(t, tt.wantCode, run(tt.args, &stdout, &stderr))
			assert.Equal(t, tt.wantStdout, stdout.String())
			if tt.wantStderr == "" {
				assert.Empty(t, stderr.String())
			} else {
				assert.Contains(t, stderr.String(), tt.wantStderr)
			}
		})
	}
}

// TestStartRefusesUnservedOptions starts configs that load but ask for
// what Sluice does not serve yet: start fails, naming the feature.
func TestStartRefusesUnservedOptions(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, src, want string
	}{
		{"http2 only", `name: test
bindings:
  net0:
    type: http
    kind: server
    options:
      versions: [h2]
    exit: app0
  app0:
    type: echo
    kind: server
`, ":7: bindings.net0.options.versions: http binding net0: versions h2 (HTTP/2) is not supported yet"},
		{"mcp proxy authorization", `name: test
guards:
  jwt0:
    type: test
bindings:
  net0:
    type: mcp
    kind: proxy
    options:
      authorization:
        jwt0:
          credentials: "Bearer {credentials}"
    exit: app0
  app0:
    type: echo
    kind: server
`, `:10: bindings.net0.options.authorization: binding type "mcp" of kind proxy does not accept "authorization"`},
		{"mcp server credentials without placeholder", `name: test
guards:
  jwt0:
    type: test
bindings:
  net0:
    type: mcp
    kind: server
    options:
      authorization:
        jwt0:
          credentials: "Bearer sometoken"
    exit: app0
  app0:
    type: echo
    kind: server
`, `:12: bindings.net0.options.authorization.jwt0.credentials: "Bearer sometoken" does not match the pattern \{credentials\}`},
		{"mcp server guard not configured", `name: test
bindings:
  net0:
    type: mcp
    kind: server
    options:
      authorization:
        jwt0: {}
    exit: app0
  app0:
    type: echo
    kind: server
`, `:7: bindings.net0.options.authorization: mcp net0: names guard "jwt0", which is not configured`},
		{"mcp client routes with two exits", `name: test
guards:
  test0:
    type: test
bindings:
  app0:
    type: mcp
    kind: client
    options:
      server: http://127.0.0.1:1/mcp
    routes:
      - exit: net0
        when: [{tool: get_weather}]
      - exit: net1
        guarded:
          test0: [read]
  net0:
    type: echo
    kind: server
  net1:
    type: echo
    kind: server
`, "mcp app0: routes[1].exit: routes with other exits than routes[0]'s are not supported yet"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, tt.name+".yaml")
			require.NoError(t, os.WriteFile(path, []byte(tt.src), 0o644))
			var stdout, stderr bytes.Buffer
			code := startEngine(context.Background(), []string{"-c", path, "-w", "1", "-e", filepath.Join(dir, "engine")}, &stdout, &stderr)
			assert.NotEqual(t, exitOK, code)
			assert.Contains(t, stderr.String(), tt.want)
		})
	}
}
