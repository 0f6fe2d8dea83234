package spi_test

import (
	"encoding/json"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/sluicehq/sluice/engine/spi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var errUnknown = errors.New("thing: unknown type")

func TestRegistry(t *testing.T) {
	r := spi.NewRegistry[int]("thing", errUnknown)
	r.Register("b", 2)
	r.Register("a", 1)
	v, err := r.Lookup("a")
	require.NoError(t, err)
	assert.Equal(t, 1, v)
	_, err = r.Lookup("c")
	assert.ErrorIs(t, err, errUnknown)
	assert.EqualError(t, err, `thing: unknown type "c"`)
	assert.Equal(t, []string{"a", "b"}, r.Types())
	assert.PanicsWithValue(t, "thing: Register with empty type", func() { r.Register("", 0) })
	assert.PanicsWithValue(t, `thing: Register called twice for type "a"`, func() { r.Register("a", 3) })
}

func TestCheckKeys(t *testing.T) {
	errOpt := errors.New("thing: unknown option")
	assert.NoError(t, spi.CheckKeys(map[string]any{"a": 1}, errOpt, "a", "b"))
	err := spi.CheckKeys(map[string]any{"z": 1, "y": 2, "a": 3}, errOpt, "a")
	assert.ErrorIs(t, err, errOpt)
	assert.EqualError(t, err, `thing: unknown option "y"`)
}

func TestAdapters(t *testing.T) {
	ran := false
	spi.DispatcherFunc(func(fn func()) { fn() }).Dispatch(func() { ran = true })
	assert.True(t, ran)
	at := time.Unix(5, 0)
	assert.Equal(t, at, spi.ClockFunc(func() time.Time { return at }).Now())
	assert.WithinDuration(t, time.Now(), spi.SystemClock{}.Now(), time.Second)
}

// TestInteger: every integral form decoders give is taken, and nothing
// else: fractions, values past int64, strings.
func TestInteger(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want int64
		ok   bool
	}{
		{7, 7, true}, {int32(-3), -3, true}, {int64(1 << 40), 1 << 40, true}, {uint(5), 5, true},
		{uint32(9), 9, true}, {uint64(11), 11, true}, {float64(12), 12, true}, {json.Number("13"), 13, true},
		{1.5, 0, false}, {uint64(math.MaxUint64), 0, false}, {json.Number("1.5"), 0, false},
		{1e19, 0, false}, {"7", 0, false}, {nil, 0, false},
	} {
		n, ok := spi.Integer(tc.v)
		assert.Equal(t, tc.ok, ok, "%#v", tc.v)
		if tc.ok {
			assert.Equal(t, tc.want, n, "%#v", tc.v)
		}
	}
}
