package dynamic_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/idl/dynamic"
)

func TestDiff(t *testing.T) {
	const request = `typeId(1).header(":scheme", "http").header(":method", "GET").header(":path", "/mcp").build()`
	tests := []struct {
		name      string
		typ       string
		want, got string // chains building the expected and observed values
		diff      string // "" for equal values
	}{
		{"equal", "HttpBeginEx", request, request, ""},
		{"header name", "HttpBeginEx", request,
			`typeId(1).header(":scheme", "http").header(":method", "GET").header(":authority", "localhost").build()`,
			`HttpBeginEx.headers[2].name: expected ":path", observed ":authority"`},
		{"header order", "HttpBeginEx", request,
			`typeId(1).header(":method", "GET").header(":scheme", "http").header(":path", "/mcp").build()`,
			`HttpBeginEx.headers[0].name: expected ":scheme", observed ":method"`},
		{"header missing", "HttpBeginEx", request,
			`typeId(1).header(":scheme", "http").header(":method", "GET").build()`,
			`HttpBeginEx.headers: expected 3 items, observed 2: missing {name: ":path", value: "/mcp"}`},
		{"header extra", "HttpBeginEx", `typeId(1).header(":scheme", "http").build()`,
			`typeId(1).header(":scheme", "http").header("x", "y").build()`,
			`HttpBeginEx.headers: expected 1 items, observed 2: extra {name: "x", value: "y"}`},
		{"inherited field", "HttpBeginEx", request, `typeId(2).header(":scheme", "http").build()`,
			`HttpBeginEx.typeId: expected 1, observed 2`},
		{"union kind", "McpBeginEx", `typeId(3).toolsCall().sessionId("s").name("x").build().build()`,
			`typeId(3).toolsList().sessionId("s").build().build()`,
			`McpBeginEx.kind: expected toolsCall, observed toolsList`},
		{"case field", "McpBeginEx", `typeId(3).toolsCall().sessionId("s").name("x").build().build()`,
			`typeId(3).toolsCall().sessionId("s").name("y").build().build()`,
			`McpBeginEx.toolsCall.name: expected "x", observed "y"`},
		{"null", "McpBeginEx", `typeId(3).lifecycle().sessionId("s").build().build()`,
			`typeId(3).lifecycle().build().build()`,
			`McpBeginEx.lifecycle.sessionId: expected "s", observed null`},
	}
	s := builtin(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want, err := build(t, s, tt.typ, tt.want)
			require.NoError(t, err)
			got, err := build(t, s, tt.typ, tt.got)
			require.NoError(t, err)
			err = s.Diff(tt.typ, want, got)
			if tt.diff == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Equal(t, tt.diff, err.Error())
			assert.ErrorIs(t, err, dynamic.ErrMismatch)
		})
	}
}

func TestDiffMalformed(t *testing.T) {
	s := builtin(t)
	good, err := build(t, s, "HttpBeginEx", `typeId(1).header(":method", "GET").build()`)
	require.NoError(t, err)
	err = s.Diff("HttpBeginEx", good, good[:len(good)-2])
	require.Error(t, err)
	assert.ErrorIs(t, err, dynamic.ErrMalformed)
	assert.Contains(t, err.Error(), "observed value: ")
	err = s.Diff("HttpBeginEx", append(good, 0), good)
	require.Error(t, err)
	assert.ErrorIs(t, err, dynamic.ErrMalformed)
	assert.Contains(t, err.Error(), "expected value: 1 trailing byte after the value")
	assert.ErrorIs(t, s.Diff("NoSuchType", good, good), dynamic.ErrUnknownType)
}

func TestOpen(t *testing.T) {
	s := builtin(t)
	b, err := s.NewBuilder("ProxyBeginEx")
	require.NoError(t, err)
	_, err = b.Call("typeId", 1)
	require.NoError(t, err)
	inet, err := b.Open("address", "inet4")
	require.NoError(t, err)
	assert.Equal(t, "ProxyBeginEx.address.inet4", inet.Path())
	for _, set := range [][2]any{{"protocol", "STREAM"}, {"source", "\x7f\x00\x00\x01"}, {"destination", "\x7f\x00\x00\x01"},
		{"sourcePort", 80}, {"destinationPort", 8080}} {
		_, err = inet.Call(set[0].(string), set[1])
		require.NoError(t, err)
	}
	back, err := inet.Call("build")
	require.NoError(t, err)
	assert.Same(t, b, back, "build() returns to the builder Open was called on")
	out, err := b.Call("build")
	require.NoError(t, err)
	m, err := s.Decode("ProxyBeginEx", out.([]byte))
	require.NoError(t, err)
	assert.Equal(t, "inet4", m["address"].(map[string]any)["kind"])
	assert.Equal(t, int64(80), m["address"].(map[string]any)["inet4"].(map[string]any)["sourcePort"])

	mt, err := s.NewMatcher("ProxyBeginEx")
	require.NoError(t, err)
	none, err := mt.Open("address", "none")
	require.NoError(t, err)
	back, err = none.Call("build")
	require.NoError(t, err)
	assert.Same(t, mt, back)
	assert.ErrorContains(t, mt.Match(out.([]byte)), "ProxyBeginEx.address.kind: expected none, got inet4")

	_, err = b.Open("typeId")
	assert.ErrorIs(t, err, dynamic.ErrArgs, "a scalar field opens nothing")
	_, err = b.Open()
	assert.ErrorIs(t, err, dynamic.ErrArgs)
	_, err = b.Open("address", "nope")
	assert.ErrorIs(t, err, dynamic.ErrUnknownMethod)
}
