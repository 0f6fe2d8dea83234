package engine_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/frame"
	"github.com/sluicehq/sluice/engine/ring"
)

// claimData writes a DATA frame in place: the payload first, straight into
// the claimed room as a socket read would, then the header for the bytes
// actually written. It claims room for max payload bytes.
func (c *client) claimData(t *testing.T, w *engine.Worker, max int, payload string) error {
	t.Helper()
	fc, err := w.Claim(frame.FrameData, c.initialID, frame.DataPayloadOffset+max)
	if err != nil {
		return err
	}
	n := copy(fc.Buf[frame.DataPayloadOffset:], payload)
	seq := c.initial.Seq
	reserved := c.initial.Send(n)
	var b frame.DataBuilder
	b.Wrap(fc.Buf, 0, len(fc.Buf)).OriginID(c.originID).RoutedID(c.routedID).StreamID(c.initialID).
		Sequence(seq).Acknowledge(c.initial.Ack).Maximum(c.initial.Max).
		BudgetID(0).Reserved(reserved).PayloadReserve(n)
	limit, err := b.BuildLimit()
	require.NoError(t, err)
	return fc.Commit(limit)
}

// TestClaimData sends DATA written in place in the target worker's ring,
// shorter than claimed, on the same worker and across workers: echo sees
// ordinary frames and answers them.
func TestClaimData(t *testing.T) {
	for _, target := range []int{0, 1} {
		t.Run(map[int]string{0: "same worker", 1: "across workers"}[target], func(t *testing.T) {
			e := start(t, 2)
			c := newClient(e, 0, "app0")
			c.begin(t, target, "")
			c.expect(t, frame.FrameBegin)
			c.window(t, 8192)
			c.expect(t, frame.FrameWindow)

			c.on(t, func(w *engine.Worker) {
				require.NoError(t, c.claimData(t, w, 4096, "zero-copy"))
				require.NoError(t, c.claimData(t, w, 9, "exactly 9"))
			})
			assert.Equal(t, "zero-copy", c.expect(t, frame.FrameData).payload)
			assert.Equal(t, "exactly 9", c.expect(t, frame.FrameData).payload)

			// An END built in place retires the stream like a sent one.
			c.on(t, func(w *engine.Worker) {
				fc, err := w.Claim(frame.FrameEnd, c.initialID, 256)
				require.NoError(t, err)
				var b frame.EndBuilder
				n, err := b.Wrap(fc.Buf, 0, len(fc.Buf)).OriginID(c.originID).RoutedID(c.routedID).
					StreamID(c.initialID).Sequence(c.initial.Seq).Acknowledge(c.initial.Ack).
					Maximum(c.initial.Max).BuildLimit()
				require.NoError(t, err)
				require.NoError(t, fc.Commit(n))
			})
			c.expect(t, frame.FrameEnd)
			require.Eventually(t, func() bool {
				open := 0
				for i := range 2 {
					require.NoError(t, e.Execute(i, func(w *engine.Worker) {
						s, th := w.Streams()
						open += s + th
					}))
				}
				return open == 0
			}, 2*time.Second, 5*time.Millisecond)
		})
	}
}

// TestClaimAbort withdraws a claim: nothing reaches the stream, and the
// ring carries on.
func TestClaimAbort(t *testing.T) {
	e := start(t, 1)
	c := newClient(e, 0, "app0")
	c.begin(t, 0, "")
	c.expect(t, frame.FrameBegin)
	c.window(t, 8192)
	c.expect(t, frame.FrameWindow)
	c.on(t, func(w *engine.Worker) {
		fc, err := w.Claim(frame.FrameData, c.initialID, 512)
		require.NoError(t, err)
		copy(fc.Buf[frame.DataPayloadOffset:], "never sent")
		fc.Abort()
		fc.Abort() // a finished claim: no-op
	})
	c.expectNone(t)
	require.True(t, c.data(t, "after"))
	assert.Equal(t, "after", c.expect(t, frame.FrameData).payload)
}

// TestClaimMisuse: every misuse is an error, never a panic or a frame.
func TestClaimMisuse(t *testing.T) {
	e := start(t, 1)
	c := newClient(e, 0, "app0")
	c.begin(t, 0, "")
	c.expect(t, frame.FrameBegin)
	c.on(t, func(w *engine.Worker) {
		_, err := w.Claim(frame.FrameType(99), c.initialID, 128)
		assert.Error(t, err)
		_, err = w.Claim(frame.FrameData, c.initialID, frame.HeaderSize-1)
		assert.Error(t, err)
		_, err = w.Claim(frame.FrameData, c.initialID, w.Engine().Worker(0).MaxFrame()+(1<<20))
		assert.ErrorIs(t, err, ring.ErrTooLarge)

		fc, err := w.Claim(frame.FrameData, c.initialID, 256)
		require.NoError(t, err)
		assert.ErrorIs(t, fc.Commit(257), engine.ErrClaim, "longer than claimed")
		assert.ErrorIs(t, fc.Commit(100), engine.ErrClaim, "already withdrawn")

		fc, err = w.Claim(frame.FrameData, c.initialID, 256)
		require.NoError(t, err)
		var b frame.DataBuilder
		n, err := b.Wrap(fc.Buf, 0, len(fc.Buf)).OriginID(c.originID).RoutedID(c.routedID).
			StreamID(c.initialID + 2).Sequence(0).Acknowledge(0).Maximum(0).
			BudgetID(0).Reserved(0).Payload(nil).BuildLimit()
		require.NoError(t, err)
		err = fc.Commit(n)
		assert.ErrorIs(t, err, engine.ErrClaim, "a frame for another stream")
		assert.True(t, errors.Is(err, engine.ErrClaim))

		var zero engine.FrameClaim
		assert.ErrorIs(t, zero.Commit(frame.HeaderSize), engine.ErrClaim)
	})
	c.expectNone(t)
}

func TestClaimNoAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	e := start(t, 1)
	c := newClient(e, 0, "app0")
	c.begin(t, 0, "")
	c.expect(t, frame.FrameBegin)
	c.on(t, func(w *engine.Worker) {
		allocs := testing.AllocsPerRun(100, func() {
			fc, err := w.Claim(frame.FrameFlush, c.initialID, 128)
			if err != nil {
				panic(err)
			}
			fc.Abort()
		})
		assert.Zero(t, allocs)
	})
}
