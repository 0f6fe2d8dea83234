package binding_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/binding"
	_ "github.com/sluicehq/sluice/binding/http"
	"github.com/sluicehq/sluice/engine/config"
)

func TestResolveSystemChain(t *testing.T) {
	cfg := &config.Config{Name: "test", Bindings: []*config.Binding{
		{Name: "client0", Type: "http", Kind: "client"},
		{Name: "server0", Type: "http", Kind: "server", Routes: []*config.Route{{Exit: "sys:http_client"}}},
	}}
	require.NoError(t, binding.Resolve(cfg))
	assert.Equal(t, "sys:tcp_client", cfg.Binding("client0").Exit, "an http client gets the system tcp client")
	require.NotNil(t, cfg.Binding("sys:http_client"))
	assert.Equal(t, "sys:tcp_client", cfg.Binding("sys:http_client").Exit)
	require.NotNil(t, cfg.Binding("sys:tcp_client"))
	assert.Equal(t, "tcp", cfg.Binding("sys:tcp_client").Type)
	n := 0
	for _, b := range cfg.Bindings {
		if b.Name == "sys:tcp_client" {
			n++
		}
	}
	assert.Equal(t, 1, n, "added once")
}

func TestResolveUnknownSystemBinding(t *testing.T) {
	cfg := &config.Config{Name: "test", Bindings: []*config.Binding{
		{Name: "server0", Type: "http", Kind: "server", Exit: "sys:nope", Pos: config.Pos{File: "x.yaml", Line: 3}},
	}}
	err := binding.Resolve(cfg)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `x.yaml:3: bindings.server0: no system binding "sys:nope"`)
}
