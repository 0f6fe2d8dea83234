package binding_test

import (
	"testing"

	"github.com/sluicehq/sluice/binding"
	_ "github.com/sluicehq/sluice/binding/all"
	"github.com/sluicehq/sluice/engine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRegistry(t *testing.T) {
	info, err := binding.Lookup("echo")
	require.NoError(t, err)
	assert.Equal(t, "binding.echo", info.ID())
	assert.Equal(t, []string{"server"}, info.Kinds)

	_, err = binding.Lookup("nope")
	assert.ErrorIs(t, err, binding.ErrUnknownType)
	assert.EqualError(t, err, `binding: unknown type "nope"`)

	a, err := binding.Factory("echo")
	require.NoError(t, err)
	b, err := binding.Factory("echo")
	require.NoError(t, err)
	assert.Equal(t, a, b, "one factory per type per process")

	var types []string
	for _, f := range binding.Fragments() {
		assert.Equal(t, "binding", f.Kind)
		types = append(types, f.Type)
	}
	assert.Contains(t, types, "echo")
}

func TestRegisterPanics(t *testing.T) {
	newEcho := func() engine.Binding { b, _ := binding.Factory("echo"); return b }
	assert.PanicsWithValue(t, `binding: Register called twice for type "echo"`, func() {
		binding.Register(binding.Info{Type: "echo", Kinds: []string{"server"}, New: newEcho})
	})
	assert.Panics(t, func() { binding.Register(binding.Info{Type: "x", New: newEcho}) }, "no kinds")
	assert.Panics(t, func() { binding.Register(binding.Info{Kinds: []string{"server"}, New: newEcho}) }, "no type")
	assert.PanicsWithValue(t, `binding kind: Register called twice for type "mcp.proxy"`, func() {
		binding.RegisterKind(binding.Kind{Type: "mcp", Kind: "proxy", New: newEcho})
	})
	assert.Panics(t, func() { binding.RegisterKind(binding.Kind{Type: "y", Kind: "server"}) }, "no New")
	assert.Panics(t, func() { binding.RegisterKind(binding.Kind{Type: "y", New: newEcho}) }, "no kind")
}

// TestKinds checks that a type whose kinds are packages of their own
// attaches each binding through its kind's factory, and names a kind that
// is not compiled in.
func TestKinds(t *testing.T) {
	info, err := binding.Lookup("mcp")
	require.NoError(t, err)
	assert.Nil(t, info.New, "mcp's kinds register themselves")
	assert.Equal(t, "binding.mcp.proxy", binding.Kind{Type: "mcp", Kind: "proxy"}.ID())

	f, err := binding.Factory("mcp")
	require.NoError(t, err)
	_, err = f.Attach(nil, &engine.BindingConfig{Name: "m0", Type: "mcp", Kind: "gateway"})
	assert.ErrorIs(t, err, binding.ErrUnknownKind)
	assert.ErrorContains(t, err, "mcp m0: kind gateway is not compiled in")
}

// TestProvisionedMissing: a binding attached without the state its
// Provision makes gets an error naming it, not a nil state.
func TestProvisionedMissing(t *testing.T) {
	cfg := &engine.BindingConfig{Name: "m1", Type: "mcp"}
	v, err := binding.Provisioned[*struct{ n int }](cfg)
	assert.Nil(t, v)
	assert.EqualError(t, err, "mcp m1: attached before it was provisioned")
}
