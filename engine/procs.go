package engine

import (
	"runtime"
	"sync"
)

// A parked worker blocks in epoll_wait without giving up its P (see
// rawio.EpollWait), so every running worker holds one of the runtime's
// GOMAXPROCS Ps for as long as it runs. procs keeps one P more than the
// running workers of every engine in the process, so the runtime's other
// goroutines (the control plane, timers, garbage collection's background
// work, a test's own goroutines) always have one to run on.
var procs struct {
	mu      sync.Mutex
	workers int
}

// startProcs is GOMAXPROCS as the process started, before any engine
// raised it.
var startProcs = runtime.GOMAXPROCS(0)

// DefaultWorkers is the number of workers an engine runs when not told:
// one per CPU the process may use, which is GOMAXPROCS at start (the CPU
// affinity mask and, since Go 1.25, a container's CPU limit), not the
// machine's CPU count.
func DefaultWorkers() int { return startProcs }

// holdP counts a worker that is about to run and raises GOMAXPROCS if the
// workers would otherwise hold every P. It never lowers GOMAXPROCS: once
// the workers stop, an extra P costs nothing.
func holdP() {
	procs.mu.Lock()
	defer procs.mu.Unlock()
	procs.workers++
	if runtime.GOMAXPROCS(0) <= procs.workers {
		runtime.GOMAXPROCS(procs.workers + 1)
	}
}

// releaseP uncounts a worker that has stopped.
func releaseP() {
	procs.mu.Lock()
	procs.workers--
	procs.mu.Unlock()
}
