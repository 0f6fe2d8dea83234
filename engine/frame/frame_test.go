package frame_test

import (
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/engine/frame"
	"github.com/sluicehq/sluice/idl/flyweight"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// unhex decodes a hand-written hex string; spaces and newlines are ignored.
func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	require.NoError(t, err)
	return b
}

// The common header used by every pinned encoding: each field has its own
// byte pattern, written little-endian, so a field at the wrong offset or in
// the wrong order shows in the diff.
const header = `
08 07 06 05 04 03 02 01
18 17 16 15 14 13 12 11
28 27 26 25 24 23 22 21
38 37 36 35 34 33 32 31
48 47 46 45 44 43 42 41
54 53 52 51
68 67 66 65 64 63 62 61
78 77 76 75 74 73 72 71
11 10 0f 0e 0d 0c 0b 0a`

const (
	originID      = 0x0102030405060708
	routedID      = 0x1112131415161718
	streamID      = 0x2122232425262728
	sequence      = 0x3132333435363738
	acknowledge   = 0x4142434445464748
	maximum       = 0x51525354
	timestamp     = 0x6162636465666768
	traceID       = 0x7172737475767778
	authorization = 0x0a0b0c0d0e0f1011
)

// headerSetter is the part of every frame builder that writes the header.
type headerSetter[B any] interface {
	OriginID(int64) B
	RoutedID(int64) B
	StreamID(int64) B
	Sequence(int64) B
	Acknowledge(int64) B
	Maximum(int32) B
	Timestamp(int64) B
	TraceID(int64) B
	Authorization(int64) B
}

func setHeader[B headerSetter[B]](b B) B {
	return b.OriginID(originID).RoutedID(routedID).StreamID(streamID).
		Sequence(sequence).Acknowledge(acknowledge).Maximum(maximum).
		Timestamp(timestamp).TraceID(traceID).Authorization(authorization)
}

// headerGetter is the part of every frame reader that reads the header.
type headerGetter interface {
	OriginID() int64
	RoutedID() int64
	StreamID() int64
	Sequence() int64
	Acknowledge() int64
	Maximum() int32
	Timestamp() int64
	TraceID() int64
	Authorization() int64
}

func assertHeader(t *testing.T, f headerGetter) {
	t.Helper()
	assert.Equal(t, int64(originID), f.OriginID())
	assert.Equal(t, int64(routedID), f.RoutedID())
	assert.Equal(t, int64(streamID), f.StreamID())
	assert.Equal(t, int64(sequence), f.Sequence())
	assert.Equal(t, int64(acknowledge), f.Acknowledge())
	assert.Equal(t, int32(maximum), f.Maximum())
	assert.Equal(t, int64(timestamp), f.Timestamp())
	assert.Equal(t, int64(traceID), f.TraceID())
	assert.Equal(t, int64(authorization), f.Authorization())
}

// TestPinnedEncodings builds each frame and compares it with a hand-written
// encoding, then wraps that encoding and reads every field back.
func TestPinnedEncodings(t *testing.T) {
	ext := []byte("ex")
	tests := []struct {
		name  string
		build func(buf []byte) (int, error)
		want  string
		read  func(t *testing.T, buf []byte)
	}{
		{
			name: "begin",
			build: func(buf []byte) (int, error) {
				var b frame.BeginBuilder
				setHeader(b.Wrap(buf, 0, len(buf))).Affinity(0x42).Extension(ext)
				return b.BuildLimit()
			},
			want: header + `
42 00 00 00 00 00 00 00
00 00 00 00 00 00 00 00
65 78`,
			read: func(t *testing.T, buf []byte) {
				var f frame.Begin
				require.NoError(t, f.Wrap(buf, 0, len(buf)))
				assertHeader(t, &f)
				assert.Equal(t, int64(0x42), f.Affinity())
				assert.Equal(t, int64(0), f.RedirectedID())
				assert.Equal(t, ext, f.Extension())
				assert.Equal(t, 84, len(buf)-len(f.Extension()), "BEGIN extension offset")
			},
		},
		{
			name: "data",
			build: func(buf []byte) (int, error) {
				var b frame.DataBuilder
				setHeader(b.Wrap(buf, 0, len(buf))).Flags(uint8(frame.FlagsDataMessage)).
					BudgetID(0x99).Reserved(0x10).Payload([]byte("hello")).Extension(ext)
				return b.BuildLimit()
			},
			want: header + `
03
99 00 00 00 00 00 00 00
10 00 00 00
05 00 00 00
68 65 6c 6c 6f
65 78`,
			read: func(t *testing.T, buf []byte) {
				var f frame.Data
				require.NoError(t, f.Wrap(buf, 0, len(buf)))
				assertHeader(t, &f)
				assert.Equal(t, frame.FlagsDataMessage, frame.Flags(f.Flags()))
				assert.Equal(t, int64(0x99), f.BudgetID())
				assert.Equal(t, int32(0x10), f.Reserved())
				assert.Equal(t, int32(5), f.Length())
				assert.True(t, f.HasPayload())
				assert.Equal(t, []byte("hello"), f.Payload())
				assert.Equal(t, ext, f.Extension())
				assert.Equal(t, []byte{5, 0, 0, 0}, buf[81:85], "DATA length offset")
				assert.Equal(t, []byte("hello"), buf[85:90], "DATA payload offset")
			},
		},
		{
			name: "data with null payload and defaults",
			build: func(buf []byte) (int, error) {
				var b frame.DataBuilder
				setHeader(b.Wrap(buf, 0, len(buf))).BudgetID(0).Reserved(0)
				return b.BuildLimit()
			},
			want: header + `
03
00 00 00 00 00 00 00 00
00 00 00 00
ff ff ff ff`,
			read: func(t *testing.T, buf []byte) {
				var f frame.Data
				require.NoError(t, f.Wrap(buf, 0, len(buf)))
				assert.Equal(t, int32(-1), f.Length())
				assert.False(t, f.HasPayload())
				assert.Nil(t, f.Payload())
				assert.Empty(t, f.Extension())
			},
		},
		{
			name: "end",
			build: func(buf []byte) (int, error) {
				var b frame.EndBuilder
				setHeader(b.Wrap(buf, 0, len(buf))).Extension(ext)
				return b.BuildLimit()
			},
			want: header + `
00 00 00 00 00 00 00 00
00 00 00 00
65 78`,
			read: func(t *testing.T, buf []byte) {
				var f frame.End
				require.NoError(t, f.Wrap(buf, 0, len(buf)))
				assertHeader(t, &f)
				assert.Equal(t, int64(0), f.BudgetID())
				assert.Equal(t, int32(0), f.Reserved())
				assert.Equal(t, ext, f.Extension())
			},
		},
		{
			name: "abort",
			build: func(buf []byte) (int, error) {
				var b frame.AbortBuilder
				setHeader(b.Wrap(buf, 0, len(buf))).Extension(ext)
				return b.BuildLimit()
			},
			want: header + `65 78`,
			read: func(t *testing.T, buf []byte) {
				var f frame.Abort
				require.NoError(t, f.Wrap(buf, 0, len(buf)))
				assertHeader(t, &f)
				assert.Equal(t, ext, f.Extension())
			},
		},
		{
			name: "flush",
			build: func(buf []byte) (int, error) {
				var b frame.FlushBuilder
				setHeader(b.Wrap(buf, 0, len(buf))).BudgetID(0x77).Extension(ext)
				return b.BuildLimit()
			},
			want: header + `
77 00 00 00 00 00 00 00
00 00 00 00
65 78`,
			read: func(t *testing.T, buf []byte) {
				var f frame.Flush
				require.NoError(t, f.Wrap(buf, 0, len(buf)))
				assertHeader(t, &f)
				assert.Equal(t, int64(0x77), f.BudgetID())
				assert.Equal(t, int32(0), f.Reserved())
				assert.Equal(t, ext, f.Extension())
			},
		},
		{
			name: "reset",
			build: func(buf []byte) (int, error) {
				var b frame.ResetBuilder
				setHeader(b.Wrap(buf, 0, len(buf))).Extension(ext)
				return b.BuildLimit()
			},
			want: header + `65 78`,
			read: func(t *testing.T, buf []byte) {
				var f frame.Reset
				require.NoError(t, f.Wrap(buf, 0, len(buf)))
				assertHeader(t, &f)
				assert.Equal(t, ext, f.Extension())
			},
		},
		{
			name: "window",
			build: func(buf []byte) (int, error) {
				var b frame.WindowBuilder
				setHeader(b.Wrap(buf, 0, len(buf))).BudgetID(0x55).Padding(0x20).Minimum(0x10).
					Capabilities(1 << frame.CapabilityChallenge)
				return b.BuildLimit()
			},
			want: header + `
55 00 00 00 00 00 00 00
20 00 00 00
10 00 00 00
01`,
			read: func(t *testing.T, buf []byte) {
				var f frame.Window
				require.NoError(t, f.Wrap(buf, 0, len(buf)))
				assertHeader(t, &f)
				assert.Equal(t, int64(0x55), f.BudgetID())
				assert.Equal(t, int32(0x20), f.Padding())
				assert.Equal(t, int32(0x10), f.Minimum())
				assert.Equal(t, uint8(1), f.Capabilities())
				assert.Equal(t, frame.WindowSize, f.Sizeof())
			},
		},
		{
			name: "signal",
			build: func(buf []byte) (int, error) {
				var b frame.SignalBuilder
				setHeader(b.Wrap(buf, 0, len(buf))).CancelID(0x66).SignalID(7).ContextID(9).Payload([]byte("hi"))
				return b.BuildLimit()
			},
			want: header + `
66 00 00 00 00 00 00 00
07 00 00 00
09 00 00 00
02 00 00 00
68 69`,
			read: func(t *testing.T, buf []byte) {
				var f frame.Signal
				require.NoError(t, f.Wrap(buf, 0, len(buf)))
				assertHeader(t, &f)
				assert.Equal(t, int64(0x66), f.CancelID())
				assert.Equal(t, int32(7), f.SignalID())
				assert.Equal(t, int32(9), f.ContextID())
				assert.Equal(t, []byte("hi"), f.Payload())
			},
		},
		{
			name: "challenge",
			build: func(buf []byte) (int, error) {
				var b frame.ChallengeBuilder
				setHeader(b.Wrap(buf, 0, len(buf))).Extension(ext)
				return b.BuildLimit()
			},
			want: header + `65 78`,
			read: func(t *testing.T, buf []byte) {
				var f frame.Challenge
				require.NoError(t, f.Wrap(buf, 0, len(buf)))
				assertHeader(t, &f)
				assert.Equal(t, ext, f.Extension())
			},
		},
		{
			name: "redirect",
			build: func(buf []byte) (int, error) {
				var b frame.RedirectBuilder
				setHeader(b.Wrap(buf, 0, len(buf))).Affinity(0x42).Extension(ext)
				return b.BuildLimit()
			},
			want: header + `
42 00 00 00 00 00 00 00
65 78`,
			read: func(t *testing.T, buf []byte) {
				var f frame.Redirect
				require.NoError(t, f.Wrap(buf, 0, len(buf)))
				assertHeader(t, &f)
				assert.Equal(t, int64(0x42), f.Affinity())
				assert.Equal(t, ext, f.Extension())
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			buf := make([]byte, 256)
			limit, err := tt.build(buf)
			require.NoError(t, err)
			want := unhex(t, tt.want)
			assert.Equal(t, want, buf[:limit])
			tt.read(t, want)
		})
	}
}

func TestFrameSizes(t *testing.T) {
	assert.Equal(t, 68, frame.FrameSize)
	assert.Equal(t, 68, frame.HeaderSize)
	assert.Equal(t, 12, frame.ExtensionPrefixSize)
	assert.Equal(t, 85, frame.WindowSize)
	assert.Equal(t, 85, frame.DataPayloadOffset)
}

// TestDataPayloadInPlace writes a payload at DataPayloadOffset first and
// the header after, as a socket read into a claimed frame does: the
// builder must leave the payload where it is.
func TestDataPayloadInPlace(t *testing.T) {
	buf := make([]byte, 128)
	copy(buf[frame.DataPayloadOffset:], "read first")
	var b frame.DataBuilder
	p := b.Wrap(buf, 0, len(buf)).OriginID(1).RoutedID(2).StreamID(3).
		Sequence(4).Acknowledge(5).Maximum(6).Flags(3).BudgetID(0).Reserved(10).
		PayloadReserve(10)
	require.Equal(t, "read first", string(p))
	limit, err := b.BuildLimit()
	require.NoError(t, err)
	assert.Equal(t, frame.DataPayloadOffset+10, limit)
	var d frame.Data
	require.NoError(t, d.Wrap(buf, 0, limit))
	assert.Equal(t, "read first", string(d.Payload()))
	assert.Equal(t, int32(10), d.Length())
}

func TestFrameTypes(t *testing.T) {
	tests := []struct {
		name     string
		typ      frame.FrameType
		id       uint32
		throttle bool
	}{
		{"BEGIN", frame.FrameBegin, 0x00000001, false},
		{"DATA", frame.FrameData, 0x00000002, false},
		{"END", frame.FrameEnd, 0x00000003, false},
		{"ABORT", frame.FrameAbort, 0x00000004, false},
		{"FLUSH", frame.FrameFlush, 0x00000005, false},
		{"RESET", frame.FrameReset, 0x40000001, true},
		{"WINDOW", frame.FrameWindow, 0x40000002, true},
		{"SIGNAL", frame.FrameSignal, 0x40000003, true},
		{"CHALLENGE", frame.FrameChallenge, 0x40000004, true},
		{"REDIRECT", frame.FrameRedirect, 0x40000005, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.id, uint32(tt.typ))
			assert.Equal(t, tt.name, tt.typ.String())
			assert.Equal(t, tt.throttle, tt.typ.IsThrottle())
			assert.True(t, tt.typ.Valid())
		})
	}
	assert.Equal(t, "UNKNOWN_FRAME_6", frame.FrameType(6).String())
	assert.Equal(t, "UNKNOWN_FRAME_1073741824", frame.FrameType(0x40000000).String())
	assert.False(t, frame.FrameType(0).Valid())
}

func TestFlags(t *testing.T) {
	f := frame.FlagsDataMessage
	assert.True(t, f.Has(frame.FlagDataInit))
	assert.True(t, f.Has(frame.FlagDataFin))
	assert.False(t, f.Has(frame.FlagDataIncomplete))
	assert.False(t, (frame.FlagDataFin | frame.FlagDataSkip).Has(frame.FlagsDataMessage))
	assert.Equal(t, "capability CHALLENGE", "capability "+frame.CapabilityChallenge.String())
}

// TestWrapTruncated cuts a valid DATA frame at every length: each cut must
// fail with a typed error naming a field, and never panic.
func TestWrapTruncated(t *testing.T) {
	buf := make([]byte, 256)
	var b frame.DataBuilder
	setHeader(b.Wrap(buf, 0, len(buf))).BudgetID(1).Reserved(2).Payload([]byte("payload"))
	limit, err := b.BuildLimit()
	require.NoError(t, err)
	for n := 0; n < 92; n++ { // 85 + len("payload"): any shorter cuts the payload
		var f frame.Data
		err := f.Wrap(buf[:n], 0, n)
		require.Error(t, err, "length %d", n)
		var fe *flyweight.Error
		require.True(t, errors.As(err, &fe))
		assert.Equal(t, "Data", fe.Type)
		assert.NotEmpty(t, fe.Field, "length %d", n)
		assert.False(t, f.TryWrap(buf[:n], 0, n))
	}
	var f frame.Data
	require.NoError(t, f.Wrap(buf[:limit], 0, limit))

	err = f.Wrap(buf, 0, 40)
	assert.EqualError(t, err, "flyweight: Data.maximum: buffer too short")
	assert.ErrorIs(t, err, flyweight.ErrShort)
	assert.ErrorIs(t, f.Wrap(buf, 10, 5), flyweight.ErrBounds)
	assert.ErrorIs(t, f.Wrap(buf, 0, len(buf)+1), flyweight.ErrBounds)
	assert.ErrorIs(t, f.Wrap(buf, -1, 10), flyweight.ErrBounds)
}

func TestWrapHostileLength(t *testing.T) {
	buf := make([]byte, 128)
	var b frame.DataBuilder
	setHeader(b.Wrap(buf, 0, len(buf))).BudgetID(1).Reserved(2).Payload([]byte("x"))
	limit, err := b.BuildLimit()
	require.NoError(t, err)
	for _, length := range []uint32{0xfffffffe, 0x7fffffff, 2} {
		buf[81], buf[82], buf[83], buf[84] = byte(length), byte(length>>8), byte(length>>16), byte(length>>24)
		var f frame.Data
		err := f.Wrap(buf[:limit], 0, limit)
		require.Error(t, err, "length %#x", length)
		assert.Contains(t, err.Error(), "Data.payload")
	}
}

func TestBuilderErrors(t *testing.T) {
	t.Run("overflow", func(t *testing.T) {
		buf := make([]byte, 90)
		var b frame.DataBuilder
		setHeader(b.Wrap(buf, 0, len(buf))).BudgetID(1).Reserved(2).Payload(make([]byte, 10))
		_, err := b.Build()
		assert.ErrorIs(t, err, flyweight.ErrOverflow)
		assert.EqualError(t, err, "flyweight: Data.payload: builder out of room")
	})
	t.Run("missing", func(t *testing.T) {
		buf := make([]byte, 128)
		var b frame.WindowBuilder
		b.Wrap(buf, 0, len(buf)).OriginID(1).RoutedID(2).StreamID(3).Sequence(0).Acknowledge(0).Maximum(0).BudgetID(0)
		_, err := b.Build()
		assert.ErrorIs(t, err, flyweight.ErrMissing)
		assert.EqualError(t, err, "flyweight: Window.padding: required field not set")
	})
	t.Run("order", func(t *testing.T) {
		buf := make([]byte, 128)
		var b frame.BeginBuilder
		setHeader(b.Wrap(buf, 0, len(buf))).Affinity(1).StreamID(3)
		_, err := b.Build()
		assert.ErrorIs(t, err, flyweight.ErrOrder)
	})
	t.Run("bad wrap", func(t *testing.T) {
		var b frame.AbortBuilder
		_, err := setHeader(b.Wrap(make([]byte, 10), 0, 20)).Build()
		assert.ErrorIs(t, err, flyweight.ErrBounds)
	})
}

// TestExtensionDone ends an extension written in place at its limit, or
// fails the frame with the error of the builder that wrote it.
func TestExtensionDone(t *testing.T) {
	buf := make([]byte, 256)
	var b frame.BeginBuilder
	setHeader(b.Wrap(buf, 0, len(buf))).Affinity(3)
	off, maxLimit, ok := b.ExtensionSlot()
	require.True(t, ok)
	var ext frame.ExtensionBuilder
	limit, err := ext.Wrap(buf, off, maxLimit).CompositeID(0).TypeID(42).BuildLimit()
	require.NoError(t, err)
	begin, err := b.ExtensionDone(limit, nil).Build()
	require.NoError(t, err)
	assert.Equal(t, 84+12, begin.Sizeof())

	setHeader(b.Wrap(buf, 0, len(buf))).Affinity(3)
	_, _, ok = b.ExtensionSlot()
	require.True(t, ok)
	failed := errors.New("extension too large")
	_, err = b.ExtensionDone(0, failed).Build()
	assert.ErrorIs(t, err, failed)
}

// TestBuildInPlace writes a DATA payload straight into the frame and an
// extension through the slot API, as a binding does when it builds a frame
// in a claimed ring record.
func TestBuildInPlace(t *testing.T) {
	buf := make([]byte, 256)
	var b frame.BeginBuilder
	setHeader(b.Wrap(buf, 8, len(buf))).Affinity(3)
	off, maxLimit, ok := b.ExtensionSlot()
	require.True(t, ok)
	assert.Equal(t, 8+84, off)
	var ext frame.ExtensionBuilder
	e, err := ext.Wrap(buf, off, maxLimit).CompositeID(0).TypeID(42).Build()
	require.NoError(t, err)
	begin, err := b.ExtensionEnd(e.Limit()).Build()
	require.NoError(t, err)
	assert.Equal(t, 8, begin.Offset())
	assert.Equal(t, 84+12, begin.Sizeof())
	var got frame.Extension
	require.NoError(t, got.Wrap(begin.Extension(), 0, len(begin.Extension())))
	assert.Equal(t, int32(42), got.TypeID())

	var d frame.DataBuilder
	setHeader(d.Wrap(buf, 0, len(buf))).BudgetID(0).Reserved(3)
	p := d.PayloadReserve(3)
	require.Len(t, p, 3)
	copy(p, "abc")
	data, err := d.Build()
	require.NoError(t, err)
	assert.Equal(t, []byte("abc"), data.Payload())

	data.SetStreamID(77)
	assert.Equal(t, int64(77), data.StreamID())
}

// TestHeaderExtensionEvent round-trips the three structs that are not frames:
// the common header on its own, the extension prefix and the event record.
func TestHeaderExtensionEvent(t *testing.T) {
	buf := make([]byte, 128)

	var hb frame.FrameBuilder
	h, err := setHeader(hb.Wrap(buf, 4, len(buf))).Build()
	require.NoError(t, err)
	assert.Equal(t, frame.FrameSize, h.Sizeof())
	assert.Equal(t, unhex(t, header), buf[4:4+frame.FrameSize])
	var hr frame.Frame
	require.NoError(t, hr.Wrap(buf, 4, len(buf)))
	assertHeader(t, &hr)

	var eb frame.ExtensionBuilder
	e, err := eb.Wrap(buf, 0, len(buf)).TypeID(7).Build()
	require.NoError(t, err)
	assert.Equal(t, unhex(t, "00 00 00 00 00 00 00 00 07 00 00 00"), buf[:e.Limit()])
	assert.Equal(t, int64(0), e.CompositeID())
	assert.Equal(t, int32(7), e.TypeID())

	var vb frame.EventBuilder
	ev, err := vb.Wrap(buf, 0, len(buf)).ID(3).Timestamp(4).TraceID(5).NamespacedID(6).Extension([]byte("x")).Build()
	require.NoError(t, err)
	assert.Equal(t, unhex(t, `03 00 00 00 04 00 00 00 00 00 00 00 05 00 00 00 00 00 00 00 06 00 00 00 00 00 00 00 78`), buf[:ev.Limit()])
	var er frame.Event
	require.NoError(t, er.Wrap(buf, 0, ev.Limit()))
	assert.Equal(t, int32(3), er.ID())
	assert.Equal(t, int64(4), er.Timestamp())
	assert.Equal(t, int64(5), er.TraceID())
	assert.Equal(t, int64(6), er.NamespacedID())
	assert.Equal(t, []byte("x"), er.Extension())
}
