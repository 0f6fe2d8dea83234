// Package atomicx has the stores sync/atomic lacks that the engine's
// per-frame path needs: a release store, StoreRelease, for a word that one
// goroutine writes and others read with atomic loads, and AddOwned, an add
// by that one writer. This comment is the one place that says why they are
// correct; the ring's and the metrics' comments point here.
//
// # Why not sync/atomic
//
// sync/atomic's Store is sequentially consistent. On amd64 that is an XCHG,
// a full barrier that waits for every earlier store to leave the store
// buffer: after a frame has been copied into a ring record, the XCHG that
// publishes the record's header stalls for the copy's cache misses (the
// profile is in bench/mcp/README.md). Add is a LOCK XADD, the same barrier.
// A reader needs less:
// that the stores the writer made before it publishes a value are visible
// to whoever sees the value, a release store (paired with the reader's
// atomic load, an acquire).
//
// # The memory-order argument (amd64, the fast path)
//
// The fast path is a plain 64-bit MOV through an unsafe pointer to the
// atomic.Int64. It is a release store because:
//
//   - the CPU: x86-TSO does not reorder a store with an earlier store, nor
//     a load with an earlier load, so a reader whose load returns the value
//     finds every store the writer made before it (and Go's atomic Load on
//     amd64 is a plain MOV too);
//   - the value arrives whole: an aligned 8-byte store is single-copy
//     atomic on amd64, and an atomic.Int64 is 8-byte aligned;
//   - the compiler: Go's compiler threads stores, calls and atomic
//     operations on one memory chain in SSA and does not move a store
//     across an earlier one, so the MOV stays after the stores it
//     publishes. It may drop a store that a later one to the same word
//     overwrites with nothing read between, which a reader cannot tell from
//     the two coming too close together to see the first.
//
// AddOwned is an atomic load and such a store, not a read-modify-write: it
// is correct for the word's only writer, whose own stores it always sees,
// and an update from a second writer would be lost.
//
// # The portable implementation
//
// Elsewhere StoreRelease is sync/atomic's Store and AddOwned its Add, which
// order at least as much on every architecture (arm64's weaker model would
// let a plain store pass earlier ones). The portable implementation is
// built
//
//   - on every architecture but amd64;
//   - under the race detector (-race, build tag race): the detector knows
//     Go's memory model, not x86's, and would report the plain store beside
//     the readers' atomic loads as a race, so the race runs of make test
//     check the ring, the engine and the metrics with the portable stores,
//     and the fast path is run by make test without -race;
//   - with the build tag sluice_portable, to run the portable stores on
//     amd64 without the race detector: to rule the fast path in or out when
//     chasing an ordering bug, or to measure what it saves.
//
// [Portable] reports which one was built.
package atomicx
