package frame_test

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/engine/frame"
)

// TestFixedWriters pins each fixed-shape writer to the generated builder:
// for random field values, payloads and extensions (null, empty and not),
// both write the same bytes, and a buffer one byte short gets 0 and is
// left as it was.
func TestFixedWriters(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	bytesOf := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	// nil, empty, short and longer: a nil payload is DATA's null one.
	blobs := func() []byte {
		switch rng.IntN(4) {
		case 0:
			return nil
		case 1:
			return []byte{}
		case 2:
			return bytesOf(1 + rng.IntN(8))
		}
		return bytesOf(100 + rng.IntN(400))
	}
	for range 500 {
		h := frame.Header{
			OriginID: rng.Int64() - rng.Int64(), RoutedID: rng.Int64(), StreamID: rng.Int64() - rng.Int64(),
			Sequence: rng.Int64(), Acknowledge: rng.Int64(), Maximum: rng.Int32() - rng.Int32(),
			Timestamp: rng.Int64(), TraceID: rng.Int64(), Authorization: rng.Int64() - rng.Int64(),
		}
		budget, pad, minimum, caps := rng.Int64(), rng.Int32()-rng.Int32(), rng.Int32(), uint8(rng.Uint32())
		payload, ext := blobs(), blobs()
		flags, reserved := frame.Flags(rng.Uint32()), rng.Int32()-rng.Int32()

		want := make([]byte, 2048)
		var wb frame.WindowBuilder
		wn, err := wb.Wrap(want, 0, len(want)).
			OriginID(h.OriginID).RoutedID(h.RoutedID).StreamID(h.StreamID).
			Sequence(h.Sequence).Acknowledge(h.Acknowledge).Maximum(h.Maximum).
			Timestamp(h.Timestamp).TraceID(h.TraceID).Authorization(h.Authorization).
			BudgetID(budget).Padding(pad).Minimum(minimum).Capabilities(caps).BuildLimit()
		require.NoError(t, err)
		check(t, "WINDOW", want[:wn], func(b []byte) int { return frame.PutWindow(b, &h, budget, pad, minimum, caps) })

		var eb frame.EndBuilder
		e := eb.Wrap(want, 0, len(want)).
			OriginID(h.OriginID).RoutedID(h.RoutedID).StreamID(h.StreamID).
			Sequence(h.Sequence).Acknowledge(h.Acknowledge).Maximum(h.Maximum).
			Timestamp(h.Timestamp).TraceID(h.TraceID).Authorization(h.Authorization)
		if len(ext) > 0 {
			e.Extension(ext)
		}
		en, err := e.BuildLimit()
		require.NoError(t, err)
		check(t, "END", want[:en], func(b []byte) int { return frame.PutEnd(b, &h, ext) })

		var db frame.DataBuilder
		d := db.Wrap(want, 0, len(want)).
			OriginID(h.OriginID).RoutedID(h.RoutedID).StreamID(h.StreamID).
			Sequence(h.Sequence).Acknowledge(h.Acknowledge).Maximum(h.Maximum).
			Timestamp(h.Timestamp).TraceID(h.TraceID).Authorization(h.Authorization).
			Flags(uint8(flags)).BudgetID(budget).Reserved(reserved)
		if payload == nil {
			d.PayloadNull()
		} else {
			d.Payload(payload)
		}
		if len(ext) > 0 {
			d.Extension(ext)
		}
		dn, err := d.BuildLimit()
		require.NoError(t, err)
		check(t, "DATA", want[:dn], func(b []byte) int { return frame.PutData(b, &h, flags, budget, reserved, payload, ext) })
	}
}

// check runs put over a buffer as long as want, which it must fill with
// want, and over one a byte shorter, which it must refuse untouched.
func check(t *testing.T, name string, want []byte, put func([]byte) int) {
	t.Helper()
	got := make([]byte, len(want))
	require.Equal(t, len(want), put(got), name)
	require.Equal(t, want, got, name)
	short := make([]byte, len(want)-1)
	assert.Zero(t, put(short), name)
	assert.Equal(t, make([]byte, len(short)), short, name)
}
