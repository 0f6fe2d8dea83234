package flyweighttest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/idl/flyweight"
)

// WrapError is a buffer that a reader must refuse.
type WrapError struct {
	Name string
	Wrap func([]byte) error // wraps a fresh reader over all of its buffer, such as WrapAs[V]
	Buf  Enc
	Want error // the sentinel error
	// Type and Field are what the *flyweight.Error names.
	Type, Field string
}

// RunWrapErrors checks, in a subtest per case, that Wrap fails with a
// *flyweight.Error that wraps Want and names Type and Field, also in its
// message.
func RunWrapErrors(t *testing.T, tests []WrapError) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.Name, func(t *testing.T) {
			err := tc.Wrap(tc.Buf)
			require.Error(t, err)
			assert.ErrorIs(t, err, tc.Want)
			var fe *flyweight.Error
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, tc.Type, fe.Type)
			assert.Equal(t, tc.Field, fe.Field)
			assert.Contains(t, err.Error(), tc.Type+"."+tc.Field)
		})
	}
}

// BuildError is a build that must fail.
type BuildError struct {
	Name  string
	Build func(buf []byte) error // builds into buf, 64 KiB and 64 bytes of zeros
	Want  error                  // the error, or the sentinel error it wraps
	// Type and Field are what the *flyweight.Error names; Type is "" when the
	// error is not a *flyweight.Error, Field "" when it names no field.
	Type, Field string
}

// RunBuildErrors checks, in a subtest per case, that Build fails with an
// error that wraps Want and, unless Type is "", is a *flyweight.Error naming
// Type and Field, "Type.Field" also in its message unless Field is "".
func RunBuildErrors(t *testing.T, tests []BuildError) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.Name, func(t *testing.T) {
			err := tc.Build(make([]byte, 1<<16+64))
			require.Error(t, err)
			assert.ErrorIs(t, err, tc.Want)
			if tc.Type == "" {
				return
			}
			var fe *flyweight.Error
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, tc.Type, fe.Type)
			assert.Equal(t, tc.Field, fe.Field)
			if tc.Field != "" {
				assert.Contains(t, err.Error(), tc.Type+"."+tc.Field)
			}
		})
	}
}

// RunWrapBounds runs check in a subtest for each way an offset and limit can
// lie outside buf: a negative offset, an offset past the limit, and a limit
// past the end of buf.
func RunWrapBounds(t *testing.T, buf []byte, check func(t *testing.T, off, limit int)) {
	t.Helper()
	tests := []struct {
		name       string
		off, limit int
	}{
		{name: "negative offset", off: -1, limit: len(buf)},
		{name: "offset past limit", off: 3, limit: 2},
		{name: "limit past the buffer", off: 0, limit: len(buf) + 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { check(t, tc.off, tc.limit) })
	}
}
