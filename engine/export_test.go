package engine

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/engine/config"
	"github.com/sluicehq/sluice/engine/frame"
	"github.com/sluicehq/sluice/engine/ring"
	"golang.org/x/sys/unix"
)

// NewIdleWorker returns the worker of a one-worker engine whose loop never
// runs: the test drives it from its own goroutine, as if on the worker's
// thread, and reads what it sent with ReadFrames.
func NewIdleWorker(tb testing.TB, ringCapacity int) *Worker {
	tb.Helper()
	e, err := New(&config.Config{Name: "test"}, WithWorkers(1), WithPin(false),
		WithRingCapacity(ringCapacity), WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		tb.Fatal(err)
	}
	r, err := ring.NewHeap(ringCapacity)
	if err != nil {
		tb.Fatal(err)
	}
	w, err := newWorker(e, 0, r)
	if err != nil {
		tb.Fatal(err)
	}
	e.workers = []*Worker{w}
	tb.Cleanup(func() { _ = w.poller.close() })
	return w
}

// ReadFrames hands fn each frame in w's ring, in order, and empties it.
func ReadFrames(w *Worker, fn func(t frame.FrameType, buf []byte)) int {
	n := w.ring.Read(func(t int32, buf []byte) { fn(frame.FrameType(t), buf) }, 1<<30)
	w.ring.Rewind()
	return n
}

// FillRing fills w's ring and then its backlog, so that the next frame
// w sends to itself is refused.
func FillRing(tb testing.TB, w *Worker) {
	tb.Helper()
	junk := make([]byte, 1024)
	for _, n := range []int{1024, 64, 0} {
		for {
			err := w.ring.Write(int32(frame.FrameData), junk[:n])
			if errors.Is(err, ring.ErrFull) {
				break
			}
			if err != nil {
				tb.Fatal(err)
			}
		}
		for w.enqueue(w, frame.FrameData, junk[:n]) {
		}
	}
}

// InEpollWait reports whether a thread of the process is blocked in
// epoll_pwait on w's epoll instance, as /proc/self/task/*/syscall shows
// it: the worker has parked in the kernel, past Parked being set and the
// last look at its ring. For tests that need the wait itself, such as one
// that a stop of the world has to interrupt.
func InEpollWait(w *Worker) bool {
	want := fmt.Sprintf("%d %#x ", unix.SYS_EPOLL_PWAIT, w.poller.epfd)
	tasks, _ := filepath.Glob("/proc/self/task/*/syscall")
	for _, path := range tasks {
		if b, err := os.ReadFile(path); err == nil && strings.HasPrefix(string(b), want) {
			return true
		}
	}
	return false
}
