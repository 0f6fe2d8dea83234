package proxy

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func handlerWithRoutes(n int) *Handler {
	return &Handler{s: &settings{routes: make([]route, n)}}
}

// TestClientIDRoundTrip encodes route ids the way the downstream sees
// them and decodes them back, numbers and strings, escapes included.
func TestClientIDRoundTrip(t *testing.T) {
	h := handlerWithRoutes(12)
	for _, tc := range []struct {
		route int
		u     string
		p     string
	}{
		{1, `7`, `"1:7"`},
		{0, `-3`, `"0:-3"`},
		{11, `"abc"`, `"11:\"abc\""`},
		{2, `"a\\b\"c"`, `"2:\"a\\\\b\\\"c\""`},
		{3, `"é"`, `"3:\"é\""`},
	} {
		p := h.appendClientID(nil, tc.route, []byte(tc.u))
		assert.Equal(t, tc.p, string(p), "route %d id %s", tc.route, tc.u)
		route, u, ok := h.decodeClientID(nil, p)
		require.True(t, ok, "decode %s", p)
		assert.Equal(t, tc.route, route)
		assert.Equal(t, tc.u, string(u))
	}
}

// TestClientIDRefused refuses every id the proxy could not have made.
func TestClientIDRefused(t *testing.T) {
	h := handlerWithRoutes(2)
	for _, p := range []string{
		``, `7`, `"7"`, `"abc"`, `":7"`, `"2:7"`, `"9:7"`, `"01:7"`, `"-1:7"`, `"1:"`, `"1:x"`,
		`"1:{}"`, `"1:[1]"`, `"1:true"`, `"1:null"`, `"1:\"a"`, `"1:7`, `"1:7" `, `"1:7 8"`,
		`"99999:7"`, `"1:\u00"`,
	} {
		_, _, ok := h.decodeClientID(nil, []byte(p))
		assert.False(t, ok, "id %s", p)
	}
}

// TestClientIDOneRoute leaves the id as it is with one route, and still
// refuses one that is not a JSON-RPC id.
func TestClientIDOneRoute(t *testing.T) {
	h := handlerWithRoutes(1)
	assert.Equal(t, `"x"`, string(h.appendClientID(nil, 0, []byte(`"x"`))))
	route, u, ok := h.decodeClientID(nil, []byte(`"0:7"`))
	require.True(t, ok)
	assert.Equal(t, 0, route)
	assert.Equal(t, `"0:7"`, string(u), "the route's own id, whatever it looks like")
	for _, p := range []string{``, `x`, `{}`, `null`, `"a`} {
		_, _, ok := h.decodeClientID(nil, []byte(p))
		assert.False(t, ok, "id %s", p)
	}
}

// TestSplitPart cuts wholes and parts into parts that keep their order
// and positions.
func TestSplitPart(t *testing.T) {
	type part struct{ at, end, total, start int }
	collect := func(n, size, total, start int) []part {
		var got []part
		require.NoError(t, splitPart(n, size, total, start, func(at, end, total, start int) error {
			got = append(got, part{at, end, total, start})
			return nil
		}))
		return got
	}
	assert.Equal(t, []part{{0, 4, 10, 0}, {4, 8, 10, 4}, {8, 10, 10, 8}}, collect(10, 4, -1, 0),
		"a whole becomes parts of its own length")
	assert.Equal(t, []part{{0, 3, 100, 40}, {3, 6, 100, 43}}, collect(6, 3, 100, 40),
		"a part keeps its total and goes on from its start")
	assert.Equal(t, []part{{0, 5, 5, 0}}, collect(5, 8, 5, 0))
}
