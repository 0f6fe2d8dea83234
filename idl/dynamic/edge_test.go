package dynamic_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/idl"
	"github.com/sluicehq/sluice/idl/dynamic"
)

// edgeIDL has constructs the Go generator does not support or the other
// IDL files do not use; their encodings are pinned by hand.
const edgeIDL = `
scope edge
{
    struct Leaf { int8 x; }
    struct Inner { int8 a; Leaf leaf; }
    struct Outer { Inner[] inners; }

    struct SizedParent { int16 len; }
    union SizedUnion switch (uint8) extends SizedParent
    {
        case 1: octets[len] data;
        case 2: int8 other;
    }

    enum Huge (uint64) { TOP(18446744073709551615), ONE(1) }
    struct WithHuge { Huge h = TOP; }

    union VarSwitch switch (varuint32)
    {
        case 300: int8 x;
    }

    struct Arrays { varint32[] vs; int24[] ts; uint64[] us; }
}
`

func edgeSchema(t *testing.T) *dynamic.Schema {
	t.Helper()
	f, err := idl.Parse("edge.idl", []byte(edgeIDL))
	require.NoError(t, err)
	require.NoError(t, idl.Check(f))
	s, err := dynamic.NewSchema(f)
	require.NoError(t, err)
	return s
}

func TestEdgeEncodings(t *testing.T) {
	s := edgeSchema(t)
	tests := []struct {
		name   string
		typ    string
		chain  string
		want   []byte
		format string
	}{
		{"case sized by a parent field", "SizedUnion", `data("abc").build()`,
			[]byte{3, 0, 1, 'a', 'b', 'c'}, `SizedUnion{len: 3, kind: data, data: "abc"}`},
		{"parent size field of another case", "SizedUnion", `len(7).other(-1).build()`,
			[]byte{7, 0, 2, 0xff}, `SizedUnion{len: 7, kind: other, other: -1}`},
		{"uint64 enum", "WithHuge", `build()`,
			[]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, `WithHuge{h: TOP}`},
		{"uint64 enum by value", "WithHuge", `h(1).build()`, []byte{1, 0, 0, 0, 0, 0, 0, 0}, `WithHuge{h: ONE}`},
		{"varint switch", "VarSwitch", `x(5).build()`, []byte{0xac, 0x02, 5}, `VarSwitch{kind: x, x: 5}`},
		{"varint, int24 and uint64 arrays", "Arrays", `v(-1).v(64).t(-2).u(18446744073709551615).build()`,
			[]byte{
				3, 0, 0, 0, 2, 0, 0, 0, 0x01, 0x80, 0x01,
				3, 0, 0, 0, 1, 0, 0, 0, 0xfe, 0xff, 0xff,
				8, 0, 0, 0, 1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
			},
			`Arrays{vs: [-1, 64], ts: [-2], us: [18446744073709551615]}`},
		{"nested item fields", "Outer", `inners().a(1).leaf().x(2).build().build().build()`,
			[]byte{2, 0, 0, 0, 1, 0, 0, 0, 1, 2}, `Outer{inners: [{a: 1, leaf: {x: 2}}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := build(t, s, tt.typ, tt.chain)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.format, s.Format(tt.typ, got))
			m, err := s.NewMatcher(tt.typ)
			require.NoError(t, err)
			_, err = chain(t, m, tt.chain)
			require.NoError(t, err)
			assert.NoError(t, m.Match(got))
			dec, err := s.Decode(tt.typ, got)
			require.NoError(t, err)
			again, err := s.Encode(tt.typ, dec)
			require.NoError(t, err)
			assert.Equal(t, got, again)
		})
	}
}

func TestEdgeErrors(t *testing.T) {
	s := edgeSchema(t)
	tests := []struct {
		name  string
		typ   string
		chain string
		kind  error
		msg   string
	}{
		{"composite item field as argument", "Outer", `inner(1, 2)`, dynamic.ErrArgs,
			`Outer.inners[0].leaf: cannot be given as an argument (struct Leaf)`},
		{"parent size field unset for another case", "SizedUnion", `other(1).build()`, dynamic.ErrMissing,
			`SizedUnion.len: required field SizedUnion.len not set`},
		{"uint64 enum range", "WithHuge", `h(-1)`, dynamic.ErrRange, `WithHuge.h: -1 out of range for enum Huge`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := s.NewBuilder(tt.typ)
			require.NoError(t, err)
			_, err = chain(t, b, tt.chain)
			require.Error(t, err)
			assert.ErrorIs(t, err, tt.kind)
			assert.Contains(t, err.Error(), tt.msg)
		})
	}
}

func TestMatcherAccessors(t *testing.T) {
	s := builtin(t)
	m, err := s.NewMatcher("McpBeginEx")
	require.NoError(t, err)
	c, err := m.Call("toolsCall")
	require.NoError(t, err)
	cm := c.(*dynamic.Matcher)
	assert.Equal(t, "McpBeginEx.toolsCall", cm.Path())
	assert.Equal(t, "McpToolsCallBeginEx", cm.Type().TypeName())
	assert.Same(t, m, cm.Root())
	_, err = cm.Call("name", "x")
	require.NoError(t, err)
	assert.Equal(t, `{name: "x"}`, cm.String())
	assert.Equal(t, "McpBeginEx", m.Path())
}
