package telemetry

import (
	"math/bits"
	"sync/atomic"

	"github.com/sluicehq/sluice/internal/atomicx"
)

// cacheLine is the size every hot value is padded to, so that the values of
// two workers never share a cache line (false sharing would make each
// worker's increments invalidate the other's line). The allocator hands out
// objects of a 64-byte multiple size class at 64-byte aligned addresses, so
// a padded metric allocated on its own fills whole lines.
const cacheLine = 64

// Counter is a monotonic int64 count. It is updated lock-free by the worker
// that owns it and read concurrently by exporters. Updates are atomic adds,
// so a stray update from another goroutine is never lost, but each worker
// keeping to its own instance is what keeps them uncontended. The zero
// value is ready to use; [WorkerMetrics.Counter] hands out counters padded
// to their own cache line.
type Counter struct {
	v atomic.Int64
	_ [cacheLine - 8]byte
}

// Add adds n to the counter. n should not be negative: counters only go up,
// and exporters report them as such.
func (c *Counter) Add(n int64) { c.v.Add(n) }

// Inc adds one to the counter.
func (c *Counter) Inc() { c.v.Add(1) }

// AddOwned adds n to the counter for its owner, the one goroutine that
// updates it, such as the worker thread whose frames it counts. It is
// internal/atomicx's AddOwned, a load and a release store instead of Add's
// locked add (the atomicx package doc says why that is cheaper, and enough
// for one writer). An update from any other goroutine, by Add or AddOwned,
// could be lost; readers are unaffected.
func (c *Counter) AddOwned(n int64) { atomicx.AddOwned(&c.v, n) }

// IncOwned adds one to the counter for its owner (AddOwned).
func (c *Counter) IncOwned() { atomicx.AddOwned(&c.v, 1) }

// Value returns the current count.
func (c *Counter) Value() int64 { return c.v.Load() }

// Gauge is an int64 that goes up and down, such as the number of active
// streams. Like [Counter] it is updated lock-free and padded to its own
// cache line.
type Gauge struct {
	v atomic.Int64
	_ [cacheLine - 8]byte
}

// Add adds n, which may be negative, to the gauge.
func (g *Gauge) Add(n int64) { g.v.Add(n) }

// Inc adds one to the gauge.
func (g *Gauge) Inc() { g.v.Add(1) }

// Dec subtracts one from the gauge.
func (g *Gauge) Dec() { g.v.Add(-1) }

// IncOwned adds one to the gauge for its owner, the one goroutine that
// updates it ([Counter.AddOwned]).
func (g *Gauge) IncOwned() { atomicx.AddOwned(&g.v, 1) }

// DecOwned subtracts one from the gauge for its owner ([Counter.AddOwned]).
func (g *Gauge) DecOwned() { atomicx.AddOwned(&g.v, -1) }

// Set sets the gauge to v.
func (g *Gauge) Set(v int64) { g.v.Store(v) }

// Value returns the current value.
func (g *Gauge) Value() int64 { return g.v.Load() }

// HistogramBuckets is the number of buckets of a [Histogram]: enough for
// every non-negative int64.
const HistogramBuckets = 63

// BucketBound returns the exclusive upper bound of histogram bucket i,
// 2^(i+1), as Zilla's histograms define it: bucket 0 holds 0 and 1, bucket 1
// holds 2 and 3, bucket i > 0 holds [2^i, 2^(i+1)), and bucket 62 holds
// [2^62, 2^63). It is a uint64 because the last bound, 2^63, does not fit
// an int64.
func BucketBound(i int) uint64 { return 1 << (i + 1) }

// BucketOf returns the index of the bucket that v falls into. Negative values
// fall into bucket 0, like zero.
func BucketOf(v int64) int {
	// v|1 maps 0 to 1 so that both land in bucket 0 without a branch;
	// for v >= 1, bits.Len64(v)-1 is floor(log2 v), the bucket whose
	// bounds are [2^i, 2^(i+1)).
	return bits.Len64(uint64(max(v, 0))|1) - 1
}

// Histogram counts values into [HistogramBuckets] power-of-two buckets and
// keeps their sum, with the bucket layout of Zilla's histograms (see
// [BucketBound]). It is updated lock-free by the worker that owns it and
// read concurrently by exporters through [Histogram.Snapshot].
//
// The count is not stored: it is the sum of the buckets, which keeps a
// snapshot's count and buckets consistent even while the worker records, and
// saves the hot path an atomic add.
type Histogram struct {
	buckets [HistogramBuckets]atomic.Int64
	sum     atomic.Int64
	_       [cacheLine - 8]byte
}

// Record adds the value v. Negative values are recorded as zero.
func (h *Histogram) Record(v int64) {
	v = max(v, 0)
	h.buckets[BucketOf(v)].Add(1)
	h.sum.Add(v)
}

// Snapshot returns the histogram's current buckets, count and sum. While
// the owner records concurrently the snapshot may miss the newest values,
// but its Count always equals the sum of its Buckets.
func (h *Histogram) Snapshot() HistogramSnapshot {
	var s HistogramSnapshot
	h.addTo(&s)
	return s
}

// addTo adds h's current values into s, for sums across workers.
func (h *Histogram) addTo(s *HistogramSnapshot) {
	for i := range h.buckets {
		n := h.buckets[i].Load()
		s.Buckets[i] += n
		s.Count += n
	}
	s.Sum += h.sum.Load()
}

// HistogramSnapshot is a point-in-time copy of a [Histogram], or the sum of
// the histograms of one metric across workers.
type HistogramSnapshot struct {
	// Buckets[i] counts the values in bucket i (not cumulative); its
	// exclusive upper bound is [BucketBound](i).
	Buckets [HistogramBuckets]int64
	// Count is the number of values recorded, the sum of Buckets.
	Count int64
	// Sum is the sum of the values recorded; it wraps on int64 overflow.
	Sum int64
}
