//go:build amd64 && !race && !sluice_portable

package atomicx

import (
	"sync/atomic"
	"unsafe"
)

// Portable reports whether the portable implementation was built; here it
// was not: the stores are plain MOVs (see the package doc for why they are
// release stores on amd64).
const Portable = false

// StoreRelease stores v in *p. Every store the calling goroutine made
// before it is visible to a goroutine whose atomic load of *p returns v.
// Unlike p.Store, it is not a full barrier: a load after it may be
// satisfied before the store is visible. One writer only: two goroutines
// storing to p race.
func StoreRelease(p *atomic.Int64, v int64) {
	*(*int64)(unsafe.Pointer(p)) = v
}

// AddOwned adds n to *p for its only writer: a load and a release store,
// without the lock prefix of p.Add. Readers on other goroutines see each
// value it stores whole, but updates from a second writer would be lost.
func AddOwned(p *atomic.Int64, n int64) {
	*(*int64)(unsafe.Pointer(p)) = p.Load() + n
}
