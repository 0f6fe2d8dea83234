package engine_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/config"
	"github.com/sluicehq/sluice/engine/frame"
)

// drainer is a binding whose handlers hold work until the test lets it
// go: Drain counts its calls and Drained reports whether done is closed.
type drainer struct {
	drains atomic.Int32
	done   chan struct{}
	once   sync.Once
}

func (d *drainer) Attach(*engine.Worker, *engine.BindingConfig) (engine.Handler, error) {
	return drainHandler{d}, nil
}

func (d *drainer) finish() { d.once.Do(func() { close(d.done) }) }

type drainHandler struct{ d *drainer }

func (h drainHandler) NewStream(frame.FrameType, []byte) engine.MessageConsumer { return nil }
func (h drainHandler) Drain()                                                   { h.d.drains.Add(1) }
func (h drainHandler) Drained() bool {
	select {
	case <-h.d.done:
		return true
	default:
		return false
	}
}

func startDrainer(t *testing.T, d *drainer) *engine.Engine {
	t.Helper()
	cfg := &config.Config{Name: "drain", Bindings: []*config.Binding{{Name: "a", Type: "drainer", Kind: "server"}}}
	e, err := engine.New(cfg, engine.WithWorkers(2), engine.WithRingCapacity(1<<16), engine.WithPin(false),
		engine.WithLogger(quiet), engine.WithBindings(func(string) (engine.Binding, error) { return d, nil }))
	require.NoError(t, err)
	require.NoError(t, e.Start())
	t.Cleanup(func() { _ = stopNow(t, e) })
	return e
}

// TestDrainWaits: Drain asks each worker's handler to drain once, however
// often it is called, and returns when all of them are drained.
func TestDrainWaits(t *testing.T) {
	d := &drainer{done: make(chan struct{})}
	e := startDrainer(t, d)
	returned := make(chan error, 1)
	go func() { returned <- e.Drain(context.Background()) }()
	require.Eventually(t, func() bool { return d.drains.Load() == 2 }, 5*time.Second, time.Millisecond)
	select {
	case err := <-returned:
		t.Fatalf("Drain returned %v with work in flight", err)
	default:
	}
	d.finish()
	select {
	case err := <-returned:
		require.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("Drain did not return once drained")
	}
	require.NoError(t, e.Drain(context.Background()))
	assert.Equal(t, int32(2), d.drains.Load(), "Drain runs once per worker")
	require.NoError(t, stopNow(t, e))
	assert.ErrorIs(t, e.Drain(context.Background()), engine.ErrStopped)
}

// TestDrainDeadline: Drain gives up when its context ends, saying so, and
// Stop then stops the engine all the same.
func TestDrainDeadline(t *testing.T) {
	d := &drainer{done: make(chan struct{})}
	e := startDrainer(t, d)
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("grace period over"))
	err := e.Drain(ctx)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "engine: drain: grace period over")
	require.NoError(t, stopNow(t, e))
}
