package engine_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/engine"
)

// Parked workers block in epoll_wait holding their Ps (rawio.EpollWait):
// the engine must keep a P free for everything else, and the runtime must
// still be able to stop the world while every worker is parked.
func TestParkedWorkersLeaveAPAndLetGCRun(t *testing.T) {
	e := start(t, 2*runtime.NumCPU())
	require.Greater(t, runtime.GOMAXPROCS(0), 2*runtime.NumCPU(), "GOMAXPROCS must exceed the running workers")
	// Every worker parked in epoll_wait, without a timeout (no timer is
	// armed), holding its P.
	for i := range e.Workers() {
		w := e.Worker(i)
		require.Eventually(t, func() bool { return engine.InEpollWait(w) }, 5*time.Second, time.Millisecond, "worker %d", i)
	}

	// Ordinary goroutines still run: they have a P of their own.
	done := make(chan struct{})
	go func() {
		var x uint64
		for i := range 1_000_000 {
			x += uint64(i)
		}
		_ = x
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("a goroutine did not run while the workers were parked")
	}

	// A stop-the-world collection preempts the parked workers (SIGURG
	// interrupts epoll_wait) instead of waiting for them to wake.
	gc := make(chan time.Duration, 1)
	go func() {
		t0 := time.Now()
		runtime.GC()
		gc <- time.Since(t0)
	}()
	select {
	case d := <-gc:
		require.Less(t, d, 2*time.Second)
	case <-time.After(10 * time.Second):
		t.Fatal("runtime.GC did not finish while the workers were parked")
	}
	_ = e
}

// A worker with an idle spin keeps polling for that long after its last
// work, then parks as any other. The spin is measured on the real clock
// (it is about the CPU, not the engine's time): the test does not race
// it, it checks that the worker is seen parked, and only once the spin
// has passed since its last work, a bound a slow machine cannot break.
func TestIdleSpinThenPark(t *testing.T) {
	const spin = 100 * time.Millisecond
	e := start(t, 1, engine.WithIdleSpin(spin))
	w := e.Worker(0)
	// Parks after its first spin, then work: the spin to measure.
	require.Eventually(t, w.Parked, 5*time.Second, time.Millisecond, "never parked after the spin")
	before := time.Now()
	require.NoError(t, e.Execute(0, func(*engine.Worker) {}))
	require.Eventually(t, w.Parked, 5*time.Second, time.Millisecond, "never parked after the spin")
	assert.GreaterOrEqual(t, time.Since(before), spin, "parked within the spin")
}
