//go:build !amd64 || race || sluice_portable

package atomicx

import "sync/atomic"

// Portable reports whether the portable implementation was built; here it
// was (see the package doc for when).
const Portable = true

// StoreRelease stores v in *p. Every store the calling goroutine made
// before it is visible to a goroutine whose atomic load of *p returns v.
// Here it is p.Store.
func StoreRelease(p *atomic.Int64, v int64) { p.Store(v) }

// AddOwned adds n to *p for its only writer. Here it is p.Add.
func AddOwned(p *atomic.Int64, n int64) { p.Add(n) }
