package engine

import (
	"sync"
	"sync/atomic"
)

// Budgets are shared credit pools (ZILLA.md §2): a creditor worker owns a
// budget id and credits it; debitors on any worker claim from it. A debitor
// that comes up short registers a resume callback; the next credit sends a
// system FLUSH (stream id 0) to each waiting worker, which runs the
// callbacks on its own thread. Connection-level credit split across
// streams (HTTP/2) is the intended use.
type Budgets struct {
	mu      sync.Mutex
	entries map[int64]*budget
}

type budget struct {
	remaining atomic.Int64
	watchers  atomic.Uint64 // bit i: worker i waits for credit
	waitMu    sync.Mutex
	waiting   map[int][]func() // per worker, touched under waitMu
}

func newBudgets() *Budgets { return &Budgets{entries: map[int64]*budget{}} }

func (b *Budgets) get(id int64, create bool) *budget {
	b.mu.Lock()
	defer b.mu.Unlock()
	e := b.entries[id]
	if e == nil && create {
		e = &budget{waiting: map[int][]func(){}}
		b.entries[id] = e
	}
	return e
}

// Credit adds n to budget id on behalf of worker w, creating it on first
// use, and wakes the workers waiting for credit.
func (b *Budgets) Credit(w *Worker, id int64, n int64) int64 {
	e := b.get(id, true)
	total := e.remaining.Add(n)
	if watchers := e.watchers.Swap(0); watchers != 0 {
		for i, peer := range w.engine.workers {
			if watchers&(1<<i) != 0 {
				w.systemFlush(peer, id)
			}
		}
	}
	return total
}

// Claim takes between min and max bytes from budget id and returns what it
// took, 0 when less than min was available. When it falls short of max and
// resume is not nil, resume runs on w's thread after the next credit.
func (b *Budgets) Claim(w *Worker, id int64, min, max int64, resume func()) int64 {
	e := b.get(id, false)
	if e == nil {
		return 0
	}
	for {
		have := e.remaining.Load()
		take := min64(have, max)
		if take < min {
			take = 0
		}
		if take > 0 && !e.remaining.CompareAndSwap(have, have-take) {
			continue
		}
		if take < max && resume != nil {
			e.waitMu.Lock()
			e.waiting[w.index] = append(e.waiting[w.index], resume)
			e.waitMu.Unlock()
			e.watchers.Or(1 << w.index)
		}
		return take
	}
}

// Remaining returns the credit left in budget id.
func (b *Budgets) Remaining(id int64) int64 {
	if e := b.get(id, false); e != nil {
		return e.remaining.Load()
	}
	return 0
}

// Release forgets budget id.
func (b *Budgets) Release(id int64) {
	b.mu.Lock()
	delete(b.entries, id)
	b.mu.Unlock()
}

// resume runs the callbacks worker w registered for budget id.
func (b *Budgets) resume(w *Worker, id int64) {
	e := b.get(id, false)
	if e == nil {
		return
	}
	e.waitMu.Lock()
	fns := e.waiting[w.index]
	delete(e.waiting, w.index)
	e.waitMu.Unlock()
	for _, fn := range fns {
		fn()
	}
}

func min64(a, b int64) int64 {
	if a < b {
		return a
	}
	return b
}
