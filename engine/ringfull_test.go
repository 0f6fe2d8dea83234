package engine_test

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/frame"
	"github.com/sluicehq/sluice/engine/ring"
)

// lockedBuffer is a log sink safe for the worker's thread and the test's.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestRingFullWarns: a frame refused because the target's ring is full is
// an error for the sender, and a warning in the log that names the
// capacity, once however many frames are refused in the second.
func TestRingFullWarns(t *testing.T) {
	var logs lockedBuffer
	e := start(t, 1, engine.WithRingCapacity(1<<16),
		engine.WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))))
	require.NoError(t, e.Execute(0, func(w *engine.Worker) {
		buf := make([]byte, 512)
		var b frame.WindowBuilder
		n, err := b.Wrap(buf, 0, len(buf)).
			OriginID(1).RoutedID(2).StreamID(3).Sequence(0).Acknowledge(0).Maximum(0).TraceID(0).
			BudgetID(0).Padding(0).BuildLimit()
		require.NoError(t, err)
		sent := 0
		for ; sent < 1<<16; sent++ {
			if err = w.Send(frame.FrameWindow, buf[:n]); err != nil {
				break
			}
		}
		require.ErrorIs(t, err, ring.ErrFull, "after %d frames", sent)
		for range 10 {
			require.ErrorIs(t, w.Send(frame.FrameWindow, buf[:n]), ring.ErrFull)
		}
	}))
	out := logs.String()
	assert.Equal(t, 1, strings.Count(out, "the worker's ring is full"), out)
	assert.Contains(t, out, "capacity=65536")
}
