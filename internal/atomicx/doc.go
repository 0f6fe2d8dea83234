// Package atomicx has the one store sync/atomic lacks that the engine's
// per-frame path needs: a release store, for a word that one goroutine
// writes and others read with atomic loads.
//
// sync/atomic's Store is sequentially consistent. On amd64 that is an XCHG,
// a full barrier that waits for every earlier store to leave the store
// buffer: after a frame has been copied into a ring record, the XCHG that
// publishes the record's header stalled for the copy's cache misses, and
// perf put three quarters of Ring.Write's time on the instruction after it
// (session 13). A consumer needs only release ordering: the payload visible
// before the header that publishes it. On amd64 every plain store already
// has that ordering (x86-TSO keeps stores in program order), so the release
// store is a plain MOV.
//
// Only the compiler could still reorder it, and Go's compiler does not move
// a store across an earlier store, a call or an atomic operation: stores
// are threaded on one memory chain in SSA. The race detector, which knows
// nothing of x86's ordering, would call the plain store a race, so builds
// with -race, and every other architecture, use sync/atomic's Store, which
// is at least a release store everywhere.
package atomicx
