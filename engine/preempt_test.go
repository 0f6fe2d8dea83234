package engine

import (
	"context"
	"os"
	"os/exec"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/engine/config"
)

// TestGCWhileParkedNoAsyncPreempt runs a garbage collection while a worker
// is parked, in a process started with GODEBUG=asyncpreemptoff=1. A parked
// worker blocks in epoll_wait; where that wait keeps the worker's P, only
// a preemption signal can stop it for the collection's stop of the world,
// and with asynchronous preemption off none comes: the collection, and
// with it every goroutine, waited for a socket event that never came.
func TestGCWhileParkedNoAsyncPreempt(t *testing.T) {
	if os.Getenv("SLUICE_TEST_GC_WHILE_PARKED") == "1" {
		gcWhileParked(t)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestGCWhileParkedNoAsyncPreempt$", "-test.v")
	cmd.Env = append(os.Environ(), "SLUICE_TEST_GC_WHILE_PARKED=1", "GODEBUG=asyncpreemptoff=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, ctx.Err(), "the collection did not finish in 30 s: the parked worker held the world\n%s", out)
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "collections done")
}

func gcWhileParked(t *testing.T) {
	require.True(t, asyncPreemptOff(), "GODEBUG=%s", os.Getenv("GODEBUG"))
	e, err := New(&config.Config{Name: "test"}, WithWorkers(1), WithPin(false), WithRingCapacity(1<<16))
	require.NoError(t, err)
	require.NoError(t, e.Start())
	defer func() { _ = e.Stop(context.Background()) }()
	for range 3 {
		// The worker blocked in its wait, not only about to be: the
		// collection has to stop it there.
		w := e.Worker(0)
		require.Eventually(t, func() bool { return InEpollWait(w) }, 5*time.Second, time.Millisecond)
		runtime.GC()
	}
	t.Log("collections done")
}

func TestGodebugFlag(t *testing.T) {
	for _, c := range []struct {
		list string
		def  bool
		want bool
	}{
		{"", false, false},
		{"", true, true},
		{"asyncpreemptoff=1", false, true},
		{"asyncpreemptoff=0", true, false},
		{"gctrace=1, asyncpreemptoff=2", false, true},
		{"asyncpreemptoff=1,asyncpreemptoff=0", false, false},
		{"asyncpreemptoff=yes", false, false}, // not a number: ignored
		{"asyncpreemptoffx=1,xasyncpreemptoff=1", false, false},
	} {
		assert.Equal(t, c.want, godebugFlag(c.list, "asyncpreemptoff", c.def), "%q", c.list)
	}
}
