package flyweighttest

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/idl/flyweight"
)

// Sentinel fills the bytes a builder must not touch.
const Sentinel = 0xa5

// Filled returns n bytes of b.
func Filled(n int, b byte) []byte {
	buf := make([]byte, n)
	for i := range buf {
		buf[i] = b
	}
	return buf
}

// AssertUntouched checks that the builder left b as [Filled] with [Sentinel].
func AssertUntouched(t *testing.T, b []byte, what string) {
	t.Helper()
	for i, c := range b {
		if c != Sentinel {
			assert.Failf(t, "builder wrote outside its value", "%s: byte %d is %#x", what, i, c)
			return
		}
	}
}

// CheckRoundTrip builds c at buf[off:], compares the bytes with c.Body, and
// reads them back with Build's view, a fresh reader, and a fresh reader over
// the hand-encoded body.
func CheckRoundTrip(t *testing.T, c Case, off int) {
	t.Helper()
	const pad = 16
	buf := Filled(off+len(c.Body)+pad, Sentinel)
	limit, got, err := c.Build(buf, off, len(buf))
	require.NoError(t, err, "Build")
	assert.Equal(t, c.Want, got, "getters of the view Build returned")
	require.GreaterOrEqual(t, limit, off, "Build's view ends before it starts")
	assert.Equal(t, off+len(c.Body), limit, "Build's view Limit()")
	assert.Equal(t, []byte(c.Body), buf[off:limit], "encoding")
	AssertUntouched(t, buf[:off], "before the value")
	AssertUntouched(t, buf[limit:], "after the value")

	buf2 := Filled(len(buf), Sentinel)
	limit2, builderLimit, err := c.BuildLimit(buf2, off, len(buf2))
	require.NoError(t, err, "BuildLimit")
	assert.Equal(t, limit, limit2, "BuildLimit")
	assert.Equal(t, limit, builderLimit, "builder Limit() after BuildLimit")
	assert.Equal(t, buf, buf2, "Build and BuildLimit write the same bytes")

	sp, got, err := c.Wrap(buf, off, limit)
	require.NoError(t, err, "Wrap of the built bytes")
	assert.Equal(t, c.Want, got, "getters of a fresh reader")
	assert.Equal(t, Span{Off: off, Limit: limit, Size: limit - off, SameBuf: true, Try: true}, sp)
	assert.Equal(t, sp.Off+sp.Size, sp.Limit, "Limit() == Offset() + Sizeof()")

	sp, _, err = c.Wrap(buf, off, len(buf))
	require.NoError(t, err, "Wrap with bytes after the value")
	assert.Equal(t, limit, sp.Limit, "bytes after the value are not part of it")

	hand := Enc(Filled(off, 0x5a)).Add(c.Body...)
	sp, got, err = c.Wrap(hand, off, len(hand))
	require.NoError(t, err, "Wrap of the hand-encoded bytes")
	assert.Equal(t, c.Want, got, "getters over the hand-encoded bytes")
	assert.Equal(t, len(hand), sp.Limit, "Limit() over the hand-encoded bytes")
}

// CheckWrapTruncated checks that every proper prefix of c.Body, alone or
// inside the whole body, fails to wrap with ErrShort, naming c's type and
// the field in which it ends.
func CheckWrapTruncated(t *testing.T, c Case) {
	t.Helper()
	full := []byte(c.Body)
	for k := 0; k < len(full); k++ {
		for _, buf := range [][]byte{full[:k:k], full} {
			sp, _, err := c.Wrap(buf, 0, k)
			require.Errorf(t, err, "Wrap of %d of %d bytes", k, len(full))
			assert.ErrorIsf(t, err, flyweight.ErrShort, "Wrap of %d of %d bytes", k, len(full))
			assert.Falsef(t, sp.Try, "TryWrap of %d of %d bytes", k, len(full))
			var fe *flyweight.Error
			if assert.ErrorAs(t, err, &fe) {
				assert.Equal(t, c.Type, fe.Type)
				assert.NotEmpty(t, fe.Field, "the field in which the buffer ends")
			}
		}
	}
}

// CheckBuildOverflow checks that building c with room for fewer bytes than
// c.Body fails with ErrOverflow and writes nothing outside the room.
func CheckBuildOverflow(t *testing.T, c Case) {
	t.Helper()
	const off = 3
	for k := 0; k < len(c.Body); k++ {
		buf := Filled(off+len(c.Body)+8, Sentinel)
		_, _, err := c.Build(buf, off, off+k)
		require.Errorf(t, err, "Build with room for %d of %d bytes", k, len(c.Body))
		assert.ErrorIsf(t, err, flyweight.ErrOverflow, "Build with room for %d of %d bytes", k, len(c.Body))
		AssertUntouched(t, buf[:off], "before the value")
		AssertUntouched(t, buf[off+k:], fmt.Sprintf("past maxLimit %d", off+k))
	}
}

// RunRoundTrip runs [CheckRoundTrip] on every case at offsets 0 and 7, in
// subtests named after the case, then "offset N".
func RunRoundTrip(t *testing.T, cases []Case) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			for _, off := range []int{0, 7} {
				t.Run(fmt.Sprintf("offset %d", off), func(t *testing.T) {
					CheckRoundTrip(t, c, off)
				})
			}
		})
	}
}

// RunWrapTruncated runs [CheckWrapTruncated] on every case, in subtests named
// after the case.
func RunWrapTruncated(t *testing.T, cases []Case) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) { CheckWrapTruncated(t, c) })
	}
}

// RunBuildOverflow runs [CheckBuildOverflow] on every case, in subtests named
// after the case.
func RunBuildOverflow(t *testing.T, cases []Case) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) { CheckBuildOverflow(t, c) })
	}
}
