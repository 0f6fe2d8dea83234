package tcp

import (
	"fmt"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sluicehq/sluice/engine"
)

// SettingWorkerCapacity bounds the connections the tcp servers of one
// worker hold at once, Zilla's zilla.engine.worker.capacity. A connection
// accepted beyond it is closed at once (its client reads the end of the
// stream), as Zilla's tcp server does.
const SettingWorkerCapacity = "engine.worker.capacity"

// maxDefaultCapacity bounds the default capacity of a worker.
const maxDefaultCapacity = 16384

// logInterval is the least time between two warnings of one kind from one
// worker (a full process fd table, a worker at capacity): the ones in
// between are counted and the next warning says how many.
const logInterval = 10 * time.Second

func init() {
	engine.RegisterSetting(engine.Setting{Name: SettingWorkerCapacity,
		Usage: "connections the tcp servers of one worker hold at once (default: half the open-file limit shared by the workers, at most 16384)",
		Check: func(v string) error {
			if n, err := strconv.Atoi(v); err != nil || n < 1 {
				return fmt.Errorf("%q: want a count of 1 or more", v)
			}
			return nil
		}})
}

// workerUsage counts the connections the tcp servers of one worker hold,
// against the worker's capacity. Only the worker's thread touches conns
// and the logs; handlers is guarded by the binding's mutex.
type workerUsage struct {
	conns, capacity int
	handlers        int
	refused, fdFull rateLog
}

// rateLog lets one warning through per logInterval and counts the ones it
// holds back.
type rateLog struct {
	next time.Time
	held int
}

// allow reports whether a warning may be logged now, and how many were
// held back since the last one.
func (r *rateLog) allow(now time.Time) (held int, ok bool) {
	if now.Before(r.next) {
		r.held++
		return 0, false
	}
	held, r.held = r.held, 0
	r.next = now.Add(logInterval)
	return held, true
}

// usageOf returns the usage of w, shared by the tcp servers attached to
// it; releaseUsage forgets it once the last of them detaches.
func (b *Binding) usageOf(w *engine.Worker) *workerUsage {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.usage == nil {
		b.usage = map[*engine.Worker]*workerUsage{}
	}
	u := b.usage[w]
	if u == nil {
		u = &workerUsage{capacity: workerCapacity(w)}
		b.usage[w] = u
	}
	u.handlers++
	return u
}

func (b *Binding) releaseUsage(w *engine.Worker) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if u := b.usage[w]; u != nil {
		if u.handlers--; u.handlers <= 0 {
			delete(b.usage, w)
		}
	}
}

// workerCapacity is the engine.worker.capacity setting or, unset, the
// worker's share of half the process's open-file limit (at most
// maxDefaultCapacity): the other half is left for upstream connections,
// listeners and files, so that a flood of clients meets the capacity
// before the process runs out of descriptors.
func workerCapacity(w *engine.Worker) int {
	workers := 1
	if e := w.Engine(); e != nil {
		if v, ok := e.Setting(SettingWorkerCapacity); ok {
			if n, err := strconv.Atoi(v); err == nil && n > 0 {
				return n
			}
		}
		workers = max(e.Workers(), 1)
	}
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil || lim.Cur == unix.RLIM_INFINITY {
		return maxDefaultCapacity
	}
	return int(max(1, min(lim.Cur/uint64(2*workers), maxDefaultCapacity)))
}

// released counts a server connection closed.
func (h *Handler) released() {
	if h.usage != nil {
		h.usage.conns--
	}
}
