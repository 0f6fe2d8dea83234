package telemetry_test

import (
	"math"
	"sync"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/engine/telemetry"
)

// parallel runs fn(g) on n goroutines at once and waits for them.
func parallel(n int, fn func(g int)) {
	var wg sync.WaitGroup
	for g := range n {
		wg.Go(func() { fn(g) })
	}
	wg.Wait()
}

func TestMetricsConcurrentUpdates(t *testing.T) {
	const n = 10000
	t.Run("counter", func(t *testing.T) {
		var c telemetry.Counter
		parallel(2, func(g int) {
			for range n {
				if g == 0 {
					c.Inc()
				} else {
					c.Add(2)
				}
			}
		})
		assert.Equal(t, int64(3*n), c.Value())
	})
	t.Run("gauge", func(t *testing.T) {
		var g telemetry.Gauge
		g.Set(100)
		parallel(2, func(i int) {
			for range n {
				if i == 0 {
					g.Inc()
				} else {
					g.Add(-3)
				}
			}
			if i == 0 {
				g.Dec()
			}
		})
		assert.Equal(t, int64(100+n-3*n-1), g.Value())
	})
	t.Run("histogram", func(t *testing.T) {
		var h telemetry.Histogram
		parallel(2, func(g int) {
			for i := range n {
				h.Record(int64(g*1000 + i%4)) // g0: 0..3, g1: 1000..1003
			}
		})
		s := h.Snapshot()
		assert.Equal(t, int64(2*n), s.Count)
		assert.Equal(t, int64(n/4*(0+1+2+3)+n/4*(4000+0+1+2+3)), s.Sum)
		assert.Equal(t, int64(n/2), s.Buckets[0]) // 0, 1
		assert.Equal(t, int64(n/2), s.Buckets[1]) // 2, 3
		assert.Equal(t, int64(n), s.Buckets[9])   // 1000..1003 < 1024
	})
}

func TestHistogramBuckets(t *testing.T) {
	tests := []struct {
		name   string
		v      int64
		bucket int
	}{
		{name: "negative", v: -5, bucket: 0},
		{name: "0", v: 0, bucket: 0},
		{name: "1", v: 1, bucket: 0},
		{name: "2", v: 2, bucket: 1},
		{name: "3", v: 3, bucket: 1},
		{name: "4", v: 4, bucket: 2},
		{name: "1023", v: 1023, bucket: 9},
		{name: "1024", v: 1024, bucket: 10},
		{name: "2^62-1", v: 1<<62 - 1, bucket: 61},
		{name: "2^62", v: 1 << 62, bucket: 62},
		{name: "max int64", v: math.MaxInt64, bucket: 62},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.bucket, telemetry.BucketOf(tt.v))
			// Bucket i holds the values below its exclusive bound 2^(i+1)
			// and at or above the bound of bucket i-1.
			if tt.v >= 0 {
				assert.Less(t, uint64(tt.v), telemetry.BucketBound(tt.bucket))
			}
			if tt.bucket > 0 {
				assert.GreaterOrEqual(t, uint64(tt.v), telemetry.BucketBound(tt.bucket-1))
			}

			var h telemetry.Histogram
			h.Record(tt.v)
			var want telemetry.HistogramSnapshot
			want.Buckets[tt.bucket] = 1
			want.Count = 1
			want.Sum = max(tt.v, 0)
			assert.Equal(t, want, h.Snapshot())
		})
	}
}

func TestBucketBound(t *testing.T) {
	assert.Equal(t, uint64(2), telemetry.BucketBound(0))
	assert.Equal(t, uint64(1024), telemetry.BucketBound(9))
	assert.Equal(t, uint64(1)<<63, telemetry.BucketBound(telemetry.HistogramBuckets-1))
}

// TestMetricSizes pins the padding: a counter or gauge fills one cache line,
// so two workers' instances never share one.
func TestMetricSizes(t *testing.T) {
	assert.Equal(t, uintptr(64), unsafe.Sizeof(telemetry.Counter{}))
	assert.Equal(t, uintptr(64), unsafe.Sizeof(telemetry.Gauge{}))
	assert.Equal(t, uintptr(63*8+8+56), unsafe.Sizeof(telemetry.Histogram{}))
}

func TestHotPathAllocs(t *testing.T) {
	var c telemetry.Counter
	var g telemetry.Gauge
	var h telemetry.Histogram
	tests := []struct {
		name string
		fn   func()
	}{
		{name: "Counter.Add", fn: func() { c.Add(3) }},
		{name: "Counter.Inc", fn: func() { c.Inc() }},
		{name: "Gauge.Add", fn: func() { g.Add(-1) }},
		{name: "Gauge.Set", fn: func() { g.Set(7) }},
		{name: "Histogram.Record", fn: func() { h.Record(1500) }},
		{name: "Histogram.Snapshot", fn: func() { _ = h.Snapshot() }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Zero(t, testing.AllocsPerRun(100, tt.fn))
		})
	}
}

// TestOwnedUpdates: the owner's updates add up like the atomic ones and mix
// with them.
func TestOwnedUpdates(t *testing.T) {
	var c telemetry.Counter
	c.AddOwned(5)
	c.IncOwned()
	c.Inc()
	assert.Equal(t, int64(7), c.Value())
	var g telemetry.Gauge
	g.IncOwned()
	g.IncOwned()
	g.DecOwned()
	g.Add(10)
	assert.Equal(t, int64(11), g.Value())
}
