package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/engine/config"
)

func TestLoadPipeline(t *testing.T) {
	src, err := os.ReadFile("testdata/pipeline.yaml")
	require.NoError(t, err)
	cfg, err := config.Load("pipeline.yaml", src, testSchema(t), env(map[string]string{"PORT": "8080"}))
	require.NoError(t, err)

	assert.Equal(t, "sluice-test", cfg.Name)
	assert.Equal(t, "pipeline.yaml", cfg.File)

	var names []string
	for _, b := range cfg.Bindings {
		names = append(names, b.Name+"="+b.Type+"·"+b.Kind)
	}
	assert.Equal(t, []string{"tcp_server0=tcp·server", "http_server0=http·server", "mcp_server0=mcp·server", "echo0=echo·server"}, names,
		"bindings keep file order")

	tcp := cfg.Binding("tcp_server0")
	require.NotNil(t, tcp)
	assert.Equal(t, config.Pos{File: "pipeline.yaml", Line: 28, Col: 3}, tcp.Pos)
	var tcpOpts struct {
		Host string
		Port int
	}
	require.NoError(t, tcp.Options.Decode(&tcpOpts))
	assert.Equal(t, "0.0.0.0", tcpOpts.Host)
	assert.Equal(t, 8080, tcpOpts.Port, "a whole-scalar ${{ env.PORT }} is retyped as an integer")
	require.Len(t, tcp.Routes, 1)
	assert.Equal(t, "http_server0", tcp.Routes[0].Exit)
	assert.Equal(t, 35, tcp.Routes[0].Pos.Line)
	require.Len(t, tcp.Routes[0].When, 1)
	assert.Equal(t, map[string]any{"port": 8080}, tcp.Routes[0].When[0].Value())

	http := cfg.Binding("http_server0")
	require.NotNil(t, http)
	require.Len(t, http.Routes, 2)
	var when struct {
		Headers map[string]string
	}
	require.NoError(t, http.Routes[0].When[0].Decode(&when))
	assert.Equal(t, map[string]string{":path": "/mcp"}, when.Headers)
	assert.Equal(t, map[string][]string{"test0": {"tools:read"}}, http.Routes[0].Guarded)
	assert.Equal(t, "sys:http_client", http.Routes[1].Exit)
	assert.Nil(t, http.Routes[1].When)
	assert.Nil(t, http.Routes[1].With)

	mcp := cfg.Binding("mcp_server0")
	require.NotNil(t, mcp)
	assert.Equal(t, "echo0", mcp.Exit)
	assert.Equal(t, []string{"mcp.*"}, mcp.Telemetry.Metrics)
	assert.Equal(t, "bindings.mcp_server0.options", mcp.Options.Path())
	require.Len(t, mcp.Routes, 1)
	assert.Equal(t, map[string]any{"headers": map[string]any{"x-toolkit": "echo"}}, mcp.Routes[0].With.Value())

	echo := cfg.Binding("echo0")
	require.NotNil(t, echo)
	assert.Nil(t, echo.Options)
	assert.NoError(t, echo.Options.Decode(&struct{}{}), "decoding absent options is a no-op")

	require.Len(t, cfg.Guards, 1)
	assert.Equal(t, "test0", cfg.Guards[0].Name)
	assert.Equal(t, "test", cfg.Guards[0].Type)
	assert.Equal(t, cfg.Guards[0], cfg.Guard("test0"))
	require.Len(t, cfg.Stores, 1)
	assert.Equal(t, "memory", cfg.Store("memory0").Type)
	assert.Nil(t, cfg.Store("memory9"))
	assert.Empty(t, cfg.Vaults)

	assert.Equal(t, map[string]string{"service.name": "sluice"}, cfg.Telemetry.Attributes)
	assert.Equal(t, []string{"stream.opens.sent", "http.request.size"}, cfg.Telemetry.Metrics)
	require.Len(t, cfg.Telemetry.Exporters, 1)
	prom := cfg.Telemetry.Exporters[0]
	assert.Equal(t, "prometheus0", prom.Name)
	assert.Equal(t, "prometheus", prom.Type)
	var promOpts struct {
		Endpoints []struct {
			Scheme string
			Path   string
			Port   int
		}
	}
	require.NoError(t, prom.Options.Decode(&promOpts))
	require.Len(t, promOpts.Endpoints, 1)
	assert.Equal(t, 7190, promOpts.Endpoints[0].Port)
}

func TestLoadAnchorsAndMerges(t *testing.T) {
	src, err := os.ReadFile("testdata/anchors.yaml")
	require.NoError(t, err)
	cfg, err := config.Load("anchors.yaml", src, testSchema(t))
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"host": "localhost", "port": 8080}, cfg.Binding("tcp0").Options.Value())
	assert.Equal(t, map[string]any{"host": "localhost", "port": 8081}, cfg.Binding("tcp1").Options.Value(),
		"a key beside a merge key overrides the merged one")
}

// TestLoadErrors pins the exact text of each problem: file:line: path:
// message, one per line, sorted by line.
func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		env  map[string]string
		want string
	}{
		{
			name: "wrong type",
			src: `name: test
bindings:
  net0:
    type: tcp
    kind: server
    options:
      port: "8080"
`,
			want: `sluice.yaml:7: bindings.net0.options.port: expected integer, got string`,
		},
		{
			name: "wrong type of a base key",
			src: `name: test
bindings:
  net0:
    type: 5
    kind: [server]
    routes: {}
`,
			want: `sluice.yaml:4: bindings.net0.type: expected string, got integer
sluice.yaml:5: bindings.net0.kind: expected string, got list
sluice.yaml:6: bindings.net0.routes: expected list, got mapping`,
		},
		{
			name: "unknown key at the top level",
			src: `name: test
bindingz: {}
`,
			want: `sluice.yaml:2: unknown key "bindingz"`,
		},
		{
			name: "unknown key in a binding",
			src: `name: test
bindings:
  net0:
    type: tcp
    kind: server
    timout: 5
`,
			want: `sluice.yaml:6: bindings.net0: unknown key "timout"`,
		},
		{
			name: "unknown key in a fragment's options",
			src: `name: test
bindings:
  net0:
    type: tcp
    kind: server
    options:
      port: 8080
      timout: 5
`,
			want: `sluice.yaml:8: bindings.net0.options: unknown key "timout"`,
		},
		{
			name: "unknown key in a route condition",
			src: `name: test
bindings:
  net0:
    type: tcp
    kind: server
    routes:
      - when:
          - prot: 80
        exit: net0
`,
			want: `sluice.yaml:8: bindings.net0.routes[0].when[0]: unknown key "prot"`,
		},
		{
			name: "missing type and kind",
			src: `name: test
bindings:
  net0:
    kind: server
  net1:
    type: tcp
`,
			want: `sluice.yaml:3: bindings.net0: missing required key "type"
sluice.yaml:5: bindings.net1: missing required key "kind"`,
		},
		{
			name: "missing name",
			src: `bindings:
  net0:
    type: echo
    kind: server
`,
			want: `sluice.yaml:1: missing required key "name"`,
		},
		{
			name: "kind the type does not support",
			src: `name: test
bindings:
  net0:
    type: echo
    kind: client
`,
			want: `sluice.yaml:5: bindings.net0.kind: binding type "echo" does not support kind "client" (supported: server)`,
		},
		{
			name: "kind not in the base enum",
			src: `name: test
bindings:
  net0:
    type: echo
    kind: serverx
`,
			want: `sluice.yaml:5: bindings.net0.kind: must be one of client, server, proxy, remote_client, remote_server, cache_client, cache_server`,
		},
		{
			name: "unknown binding type",
			src: `name: test
bindings:
  net0:
    type: tcpx
    kind: server
`,
			want: `sluice.yaml:4: bindings.net0.type: unknown binding type "tcpx" (known: echo, http, mcp, tcp)`,
		},
		{
			name: "unknown guard type",
			src: `name: test
guards:
  jwt0:
    type: jwt
`,
			want: `sluice.yaml:4: guards.jwt0.type: unknown guard type "jwt" (known: test)`,
		},
		{
			name: "exit names no binding",
			src: `name: test
bindings:
  app0:
    type: mcp
    kind: server
    exit: app9
`,
			want: `sluice.yaml:6: bindings.app0.exit: no binding named "app9"`,
		},
		{
			name: "route exit names no binding",
			src: `name: test
bindings:
  app0:
    type: mcp
    kind: server
    routes:
      - exit: app0
      - exit: app9
        when:
          - toolkit: x
`,
			want: `sluice.yaml:8: bindings.app0.routes[1].exit: no binding named "app9"`,
		},
		{
			name: "unset env var",
			src: `name: test
bindings:
  net0:
    type: tcp
    kind: server
    options:
      port: ${{ env.PORT }}
      host: ${{env.HOST}}
`,
			env:  map[string]string{"PORT": "8080"},
			want: `sluice.yaml:8: bindings.net0.options.host: environment variable "HOST" is not set`,
		},
		{
			name: "env value of the wrong type",
			src: `name: test
bindings:
  net0:
    type: tcp
    kind: server
    options:
      port: ${{ env.PORT }}
`,
			env:  map[string]string{"PORT": "eighty"},
			want: `sluice.yaml:7: bindings.net0.options.port: expected integer, got string`,
		},
		{
			name: "empty env value in a plain scalar is null",
			src: `name: test
bindings:
  net0:
    type: tcp
    kind: server
    options:
      host: ${{ env.HOST }}
`,
			env:  map[string]string{"HOST": ""},
			want: `sluice.yaml:7: bindings.net0.options.host: expected string, got null`,
		},
		{
			name: "unknown resolver",
			src: `name: test
bindings:
  net0:
    type: tcp
    kind: server
    options:
      host: ${{ vault.host }}
`,
			want: `sluice.yaml:7: bindings.net0.options.host: unknown resolver "vault" in ${{ vault.host }}`,
		},
		{
			name: "duplicate key",
			src: `name: test
bindings:
  net0:
    type: tcp
    kind: server
    type: http
`,
			want: `sluice.yaml:6: bindings.net0: duplicate key "type" (first defined at line 4)`,
		},
		{
			name: "bad name pattern",
			src: `name: 9test
bindings:
  9net:
    type: echo
    kind: server
`,
			want: `sluice.yaml:1: name: invalid name "9test": a name starts with a letter and goes on with letters, digits, '.', '_' or '-'
sluice.yaml:3: bindings: invalid name "9net": a name starts with a letter and goes on with letters, digits, '.', '_' or '-'`,
		},
		{
			name: "yaml syntax error",
			src: `name: test
bindings:
  net0:
    type: echo
   kind: server
`,
			want: `sluice.yaml:3: yaml: did not find expected key`, // the line of the mapping the YAML parser was in
		},
		{
			name: "yaml scanner error",
			src: `name: test
bindings:
  net0: {type: echo, kind: server}
  net1: type: echo
`,
			want: `sluice.yaml:4: yaml: mapping values are not allowed in this context`,
		},
		{
			name: "unknown anchor",
			src: `name: test
bindings:
  net0:
    type: tcp
    kind: server
    options:
      port: *port
`,
			want: `sluice.yaml:7: yaml: unknown anchor 'port' referenced`,
		},
		{
			name: "more than one document",
			src: `name: test
---
name: test2
`,
			want: `sluice.yaml:3: more than one YAML document; a configuration is one document`,
		},
		{
			name: "empty",
			src:  "# nothing here\n",
			want: `sluice.yaml:1: configuration is empty`,
		},
		{
			name: "not a mapping",
			src:  "- name: test\n",
			want: `sluice.yaml:1: expected mapping, got list`,
		},
		{
			name: "options on a type that takes none",
			src: `name: test
bindings:
  net0:
    type: echo
    kind: server
    options:
      port: 80
`,
			want: `sluice.yaml:6: bindings.net0.options: binding type "echo" does not accept "options"`,
		},
		{
			name: "with on a type that takes none",
			src: `name: test
bindings:
  net0:
    type: tcp
    kind: server
    routes:
      - exit: net0
        with:
          port: 80
`,
			want: `sluice.yaml:8: bindings.net0.routes[0].with: binding type "tcp" does not accept "with"`,
		},
		{
			name: "store, guard and route guard references",
			src: `name: test
bindings:
  app0:
    type: mcp
    kind: server
    options:
      cache:
        store: memory9
        authorization:
          jwt0: {}
    routes:
      - exit: app0
        guarded:
          jwt0: [read]
`,
			want: `sluice.yaml:8: bindings.app0.options.cache.store: no store named "memory9"
sluice.yaml:10: bindings.app0.options.cache.authorization: no guard named "jwt0"
sluice.yaml:14: bindings.app0.routes[0].guarded: no guard named "jwt0"`,
		},
		{
			name: "guard store and exporter vault references",
			src: `name: test
guards:
  test0:
    type: test
    store: memory9
telemetry:
  exporters:
    prometheus0:
      type: prometheus
      vault: secrets
`,
			want: `sluice.yaml:5: guards.test0.store: no store named "memory9"
sluice.yaml:10: telemetry.exporters.prometheus0.vault: no vault named "secrets"`,
		},
		{
			name: "entry on a kind that is not remote",
			src: `name: test
bindings:
  net0:
    type: tcp
    kind: server
    entry: app0
`,
			want: `sluice.yaml:6: bindings.net0.entry: only remote_client and remote_server bindings take an entry`,
		},
		{
			name: "fragment enum, required and range",
			src: `name: test
bindings:
  net0:
    type: tcp
    kind: server
    options:
      port: 70000
telemetry:
  exporters:
    p0:
      type: prometheus
      options:
        endpoints:
          - scheme: https
`,
			want: `sluice.yaml:7: bindings.net0.options.port: must be at most 65535
sluice.yaml:14: telemetry.exporters.p0.options.endpoints[0]: missing required key "port"
sluice.yaml:14: telemetry.exporters.p0.options.endpoints[0].scheme: must be http`,
		},
		{
			name: "dotted names are quoted in paths",
			src: `name: test
bindings:
  net0.v1:
    type: tcp
    kind: server
    exit: app9
`,
			want: `sluice.yaml:6: bindings["net0.v1"].exit: no binding named "app9"`,
		},
		{
			name: "every problem is reported, sorted by line",
			src: `name: test
bindings:
  net0:
    type: tcp
    kind: server
    exit: app9
    options:
      port: high
  app0:
    type: nope
    kind: proxy
  app1:
    kind: client
bogus: true
`,
			want: `sluice.yaml:6: bindings.net0.exit: no binding named "app9"
sluice.yaml:8: bindings.net0.options.port: expected integer, got string
sluice.yaml:10: bindings.app0.type: unknown binding type "nope" (known: echo, http, mcp, tcp)
sluice.yaml:12: bindings.app1: missing required key "type"
sluice.yaml:14: unknown key "bogus"`,
		},
	}
	s := testSchema(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := config.Load("sluice.yaml", []byte(tt.src), s, env(tt.env))
			require.Error(t, err)
			assert.Nil(t, cfg)
			assert.Equal(t, tt.want, err.Error())
			assert.ErrorIs(t, err, config.ErrInvalid)
			var list *config.ErrorList
			require.ErrorAs(t, err, &list)
			for _, e := range list.Errors() {
				assert.Equal(t, "sluice.yaml", e.File)
				assert.Positive(t, e.Line)
			}
		})
	}
}

func TestEnvSubstitution(t *testing.T) {
	const head = "name: test\nbindings:\n  net0:\n    type: tcp\n    kind: server\n    options:\n"
	tests := []struct {
		name string
		opts string
		env  map[string]string
		want map[string]any
	}{
		{
			name: "whole plain scalar keeps YAML typing",
			opts: "      port: ${{ env.PORT }}\n",
			env:  map[string]string{"PORT": "8080"},
			want: map[string]any{"port": 8080},
		},
		{
			name: "spaces are optional",
			opts: "      port: ${{env.PORT}}\n      host: ${{ env.HOST}}\n",
			env:  map[string]string{"PORT": "1", "HOST": "example.com"},
			want: map[string]any{"port": 1, "host": "example.com"},
		},
		{
			name: "text around an expression makes a string",
			opts: "      host: ${{ env.HOST }}.internal\n",
			env:  map[string]string{"HOST": "db"},
			want: map[string]any{"host": "db.internal"},
		},
		{
			name: "a quoted scalar stays a string",
			opts: "      host: \"${{ env.HOST }}\"\n",
			env:  map[string]string{"HOST": "8080"},
			want: map[string]any{"host": "8080"},
		},
		{
			name: "the text never becomes a list",
			opts: "      host: ${{ env.HOST }}\n",
			env:  map[string]string{"HOST": "[a, b]"},
			want: map[string]any{"host": "[a, b]"},
		},
		{
			name: "values are not substituted again",
			opts: "      host: ${{ env.HOST }}\n",
			env:  map[string]string{"HOST": "${{ env.OTHER }}"},
			want: map[string]any{"host": "${{ env.OTHER }}"},
		},
	}
	s := testSchema(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := config.Load("sluice.yaml", []byte(head+tt.opts), s, env(tt.env))
			require.NoError(t, err)
			assert.Equal(t, tt.want, cfg.Binding("net0").Options.Value())
		})
	}
}

func TestWithResolverAndExternal(t *testing.T) {
	src := []byte(`name: test
bindings:
  app0:
    type: mcp
    kind: server
    exit: app1
    options:
      cache:
        store: ${{ test.store }}
stores:
  memory0:
    type: memory
`)
	s := testSchema(t)
	_, err := config.Load("server.yaml", src, s)
	require.Error(t, err)
	assert.Equal(t, `server.yaml:6: bindings.app0.exit: no binding named "app1"
server.yaml:9: bindings.app0.options.cache.store: unknown resolver "test" in ${{ test.store }}`, err.Error())

	cfg, err := config.Load("server.yaml", src, s,
		config.WithExternal("app1"),
		config.WithResolver("test", func(key string) (string, bool) { return "memory0", key == "store" }))
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"cache": map[string]any{"store": "memory0"}}, cfg.Binding("app0").Options.Value())
}

func TestRawDecode(t *testing.T) {
	src := []byte(`name: test
bindings:
  app0:
    type: mcp
    kind: server
    options:
      cache:
        store: memory0
        ttl: 30
stores:
  memory0:
    type: memory
`)
	cfg, err := config.Load("sluice.yaml", src, testSchema(t))
	require.NoError(t, err)
	opts := cfg.Binding("app0").Options

	type cache struct {
		Store string `yaml:"store"`
		TTL   int    `yaml:"ttl"`
	}
	var good struct{ Cache cache }
	require.NoError(t, opts.Decode(&good))
	assert.Equal(t, cache{Store: "memory0", TTL: 30}, good.Cache)

	var strict struct {
		Cache struct {
			Store string `yaml:"store"`
		}
	}
	err = opts.Decode(&strict)
	require.Error(t, err)
	assert.Equal(t, `sluice.yaml:9: bindings.app0.options.cache: unknown key "ttl"`, err.Error())
	assert.ErrorIs(t, err, config.ErrInvalid)

	var inline struct {
		Cache struct {
			Store string         `yaml:"store"`
			Rest  map[string]any `yaml:",inline"`
		}
	}
	require.NoError(t, opts.Decode(&inline), "an inline map takes the other keys")
	assert.Equal(t, map[string]any{"ttl": 30}, inline.Cache.Rest)

	var typed struct {
		Cache struct {
			Store int `yaml:"store"`
			TTL   int `yaml:"ttl"`
		}
	}
	err = opts.Decode(&typed)
	require.Error(t, err)
	assert.Equal(t, `sluice.yaml:8: bindings.app0.options.cache.store: expected int, got string "memory0"`, err.Error())

	err = opts.Decode(good)
	require.Error(t, err)
	assert.NotErrorIs(t, err, config.ErrInvalid, "a non-pointer is the caller's mistake")
}

func TestRawWhere(t *testing.T) {
	src := []byte(`name: test
bindings:
  app0:
    type: mcp
    kind: server
    options:
      cache:
        store: memory0
stores:
  memory0:
    type: memory
`)
	cfg, err := config.Load("sluice.yaml", src, testSchema(t))
	require.NoError(t, err)
	opts := cfg.Binding("app0").Options
	tests := []struct {
		name string
		raw  *config.Raw
		key  string
		want string
	}{
		{name: "the value", raw: opts, want: "sluice.yaml:6: bindings.app0.options"},
		{name: "a key, at its line", raw: opts, key: "cache", want: "sluice.yaml:7: bindings.app0.options.cache"},
		{name: "a missing key, at the value", raw: opts, key: "ttl", want: "sluice.yaml:6: bindings.app0.options.ttl"},
		{name: "no file", raw: nil, key: "ttl", want: ".ttl"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.raw.Where(tt.key))
		})
	}
}

func TestLoadFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sluice.yaml")
	require.NoError(t, os.WriteFile(path, []byte("name: test\nbindings:\n  net0: {type: echo, kind: server, exit: nowhere}\n"), 0o600))
	_, err := config.LoadFile(path, testSchema(t))
	require.Error(t, err)
	assert.Equal(t, path+`:3: bindings.net0.exit: no binding named "nowhere"`, err.Error())

	_, err = config.LoadFile(filepath.Join(dir, "missing.yaml"), testSchema(t))
	require.Error(t, err)
	assert.ErrorIs(t, err, os.ErrNotExist)
}

func TestNilSchema(t *testing.T) {
	cfg, err := config.Load("sluice.yaml", []byte("name: test\n"), nil)
	require.NoError(t, err)
	assert.Equal(t, "test", cfg.Name)

	_, err = config.Load("sluice.yaml", []byte("name: test\nbindings:\n  net0: {type: echo, kind: server}\n"), nil)
	require.Error(t, err)
	assert.Equal(t, `sluice.yaml:3: bindings.net0.type: unknown binding type "echo" (no binding types are registered)`, err.Error())
}

func TestErrorList(t *testing.T) {
	_, err := config.Load("x.yaml", []byte("name: test\nb: 1\na: 2\n"), nil)
	var list *config.ErrorList
	require.ErrorAs(t, err, &list)
	errs := list.Errors()
	require.Len(t, errs, 2)
	assert.Equal(t, &config.Error{Pos: config.Pos{File: "x.yaml", Line: 2, Col: 1}, Msg: `unknown key "b"`}, errs[0])
	assert.Equal(t, 3, errs[1].Line)
	var one *config.Error
	require.ErrorAs(t, err, &one)
	assert.Equal(t, 2, one.Line)
	assert.True(t, errors.Is(one, config.ErrInvalid))
}

// TestHostileInput checks that inputs built to exhaust the loader fail
// quickly with an error at a line.
func TestHostileInput(t *testing.T) {
	laughs := "name: test\nbindings:\n  net0:\n    type: tcp\n    kind: server\n    options:\n      host: &a0 [x, x, x, x, x, x, x, x, x, x]\n"
	for i := 1; i < 10; i++ {
		laughs += "      l" + string(rune('0'+i)) + ": &a" + string(rune('0'+i)) + " ["
		for j := range 10 {
			if j > 0 {
				laughs += ", "
			}
			laughs += "*a" + string(rune('0'+i-1))
		}
		laughs += "]\n"
	}
	deep := "name: test\nbindings:\n  net0:\n    type: tcp\n    kind: server\n    options:\n      host: " +
		strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + "\n"
	s := testSchema(t)

	_, err := config.Load("sluice.yaml", []byte(laughs), s)
	require.Error(t, err)
	assert.Contains(t, strings.Split(err.Error(), "\n"),
		"sluice.yaml:7: bindings.net0.options.l4[7][9][0][0][1]: aliases expand to too many values (more than 100000)")

	_, err = config.Load("sluice.yaml", []byte(deep), s)
	require.Error(t, err)
	lines := strings.Split(err.Error(), "\n")
	require.Len(t, lines, 2)
	assert.Equal(t, "sluice.yaml:7: bindings.net0.options.host: expected string, got list", lines[0])
	assert.True(t, strings.HasPrefix(lines[1], "sluice.yaml:7: bindings.net0.options.host[0][0][0]"), lines[1])
	assert.True(t, strings.HasSuffix(lines[1], "[0][0][0]: nested more than 1000 levels deep"), lines[1])
	assert.Less(t, len(lines[1]), 400, "overlong paths are elided")
}

// TestConcurrentUse checks that a Schema serves concurrent loads and that
// workers may decode the same options at once.
func TestConcurrentUse(t *testing.T) {
	src, err := os.ReadFile("testdata/pipeline.yaml")
	require.NoError(t, err)
	s := testSchema(t)
	cfg, err := config.Load("pipeline.yaml", src, s, env(map[string]string{"PORT": "1"}))
	require.NoError(t, err)
	opts := cfg.Binding("mcp_server0").Options
	done := make(chan error, 8)
	for range 8 {
		go func() {
			if _, err := config.Load("pipeline.yaml", src, s, env(map[string]string{"PORT": "1"})); err != nil {
				done <- err
				return
			}
			var v struct {
				Cache struct {
					Store string
					TTL   int
				}
			}
			done <- opts.Decode(&v)
		}()
	}
	for range 8 {
		assert.NoError(t, <-done)
	}
}
