package engine_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

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

// payloads is a binding that reports the payload of every DATA it gets.
type payloads struct{ got chan string }

func (p *payloads) Attach(*engine.Worker, *engine.BindingConfig) (engine.Handler, error) {
	return p, nil
}

func (p *payloads) NewStream(frame.FrameType, []byte) engine.MessageConsumer {
	return func(t frame.FrameType, buf []byte) {
		var d frame.Data
		if t == frame.FrameData && d.TryWrap(buf, 0, len(buf)) {
			p.got <- string(d.Payload())
		}
	}
}

// TestBacklog: frames a full ring refuses wait in the sender's backlog
// and arrive, in order, once the ring drains: a worker that sends three
// times its ring's worth of DATA in one go loses none. Past the backlog
// (twice the ring) Send fails with ring.ErrFull. Each condition is one
// warning in the log, naming the capacity, however often it recurs in the
// second.
func TestBacklog(t *testing.T) {
	const capacity = 1 << 16
	var logs lockedBuffer
	rec := &payloads{got: make(chan string, 1<<14)}
	e := start(t, 1, engine.WithRingCapacity(capacity), engine.WithExternal("ext0", rec),
		engine.WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))))
	c := newClient(e, 0, "ext0")
	c.begin(t, 0, "")

	// Each DATA is 200 bytes of payload and about 90 of frame: 3 × 64 KiB
	// is about 680 of them, of which the ring takes about 220.
	const frames = 600
	data := func(w *engine.Worker, i int) error {
		var b frame.DataBuilder
		buf := w.WriteBuffer()
		p := fmt.Sprintf("%-200d", i)
		n, err := b.Wrap(buf, 0, len(buf)).OriginID(c.originID).RoutedID(c.routedID).StreamID(c.initialID).
			Sequence(int64(i * 200)).Acknowledge(0).Maximum(0).TraceID(0).Authorization(0).
			Flags(3).BudgetID(0).Reserved(200).Payload([]byte(p)).BuildLimit()
		require.NoError(t, err)
		return w.Send(frame.FrameData, buf[:n])
	}
	require.NoError(t, e.Execute(0, func(w *engine.Worker) {
		for i := range frames {
			require.NoError(t, data(w, i), "DATA %d", i)
		}
	}))
	for i := range frames {
		select {
		case p := <-rec.got:
			require.Equal(t, fmt.Sprintf("%-200d", i), p, "DATA %d in order", i)
		case <-time.After(5 * time.Second):
			t.Fatalf("DATA %d did not arrive", i)
		}
	}
	out := logs.String()
	assert.Equal(t, 1, strings.Count(out, "frames wait in the sender's backlog"), out)
	assert.Contains(t, out, "capacity=65536")
	assert.NotContains(t, out, "refused")

	// Past the ring and the backlog, Send fails.
	require.NoError(t, e.Execute(0, func(w *engine.Worker) {
		var err error
		sent := 0
		for ; sent < 10*frames && err == nil; sent++ {
			err = data(w, frames+sent)
		}
		require.ErrorIs(t, err, ring.ErrFull)
		assert.Greater(t, sent, frames, "the ring and the backlog took more than the ring holds")
		for range 10 {
			require.ErrorIs(t, data(w, 0), ring.ErrFull)
		}
	}))
	out = logs.String()
	assert.Equal(t, 1, strings.Count(out, "a frame was refused"), out)
}
