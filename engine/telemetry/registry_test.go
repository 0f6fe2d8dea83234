package telemetry_test

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/engine/telemetry"
)

var (
	app0 = telemetry.MustLabels("namespace", "test", "binding", "app0")
	app1 = telemetry.MustLabels("namespace", "test", "binding", "app1")
)

func TestRegistryPointers(t *testing.T) {
	reg := telemetry.NewRegistry(2)
	require.Equal(t, 2, reg.Workers())
	w0, w1 := reg.Worker(0), reg.Worker(1)
	assert.Same(t, w0, reg.Worker(0))
	assert.Equal(t, 0, w0.Index())
	assert.Equal(t, 1, w1.Index())
	assert.Panics(t, func() { reg.Worker(2) })

	app0Again := telemetry.MustLabels("binding", "app0", "namespace", "test")

	t.Run("counter", func(t *testing.T) {
		c := w0.Counter(telemetry.StreamOpensSent, app0)
		assert.Same(t, c, w0.Counter(telemetry.StreamOpensSent, app0Again))
		assert.NotSame(t, c, w0.Counter(telemetry.StreamOpensSent, app1))
		assert.NotSame(t, c, w0.Counter(telemetry.StreamOpensReceived, app0))
		assert.NotSame(t, c, w1.Counter(telemetry.StreamOpensSent, app0))
		assert.Same(t, w1.Counter(telemetry.StreamOpensSent, app0), w1.Counter(telemetry.StreamOpensSent, app0Again))
	})
	t.Run("gauge", func(t *testing.T) {
		g := w0.Gauge(telemetry.StreamActiveSent, app0)
		assert.Same(t, g, w0.Gauge(telemetry.StreamActiveSent, app0Again))
		assert.NotSame(t, g, w0.Gauge(telemetry.StreamActiveSent, app1))
		assert.NotSame(t, g, w1.Gauge(telemetry.StreamActiveSent, app0))
	})
	t.Run("histogram", func(t *testing.T) {
		h := w0.Histogram("test.pointers.size", app0)
		assert.Same(t, h, w0.Histogram("test.pointers.size", app0Again))
		assert.NotSame(t, h, w0.Histogram("test.pointers.size", app1))
		assert.NotSame(t, h, w1.Histogram("test.pointers.size", app0))
	})
	t.Run("no labels", func(t *testing.T) {
		c := w0.Counter("test.pointers.unlabelled", telemetry.Labels{})
		assert.Same(t, c, w0.Counter("test.pointers.unlabelled", telemetry.Labels{}))
		assert.NotSame(t, c, w0.Counter("test.pointers.unlabelled", app0))
	})
}

func TestRegistryMisuse(t *testing.T) {
	tests := []struct {
		name string
		fn   func(w *telemetry.WorkerMetrics)
		want string
	}{
		{
			name: "described kind",
			fn:   func(w *telemetry.WorkerMetrics) { w.Gauge(telemetry.StreamOpensSent, app0) },
			want: `telemetry: metric "stream.opens.sent" is described as a counter, not a gauge`,
		},
		{
			name: "kind in use",
			fn: func(w *telemetry.WorkerMetrics) {
				w.Counter("test.misuse.kind", app0)
				w.Histogram("test.misuse.kind", app1)
			},
			want: `telemetry: metric "test.misuse.kind" is a counter, not a histogram`,
		},
		{
			name: "same series other kind",
			fn: func(w *telemetry.WorkerMetrics) {
				w.Gauge("test.misuse.series", app0)
				w.Counter("test.misuse.series", app0)
			},
			want: `telemetry: metric "test.misuse.series" is a gauge, not a counter`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := telemetry.NewRegistry(1)
			assert.PanicsWithValue(t, tt.want, func() { tt.fn(reg.Worker(0)) })
		})
	}
	for _, name := range []string{"", "stream..opens", "stream.opens-sent", ".x", "x.", "1x"} {
		t.Run("name "+name, func(t *testing.T) {
			reg := telemetry.NewRegistry(1)
			assert.PanicsWithError(t, `telemetry: invalid metric name: `+quoteName(name), func() {
				reg.Worker(0).Counter(name, app0)
			})
		})
	}
	assert.Panics(t, func() { telemetry.NewRegistry(0) })
}

func quoteName(name string) string {
	if name == "" {
		return "empty"
	}
	return `"` + name + `": want dot-separated [a-zA-Z_][a-zA-Z0-9_]* segments`
}

func TestRegistryGather(t *testing.T) {
	reg := telemetry.NewRegistry(3)
	for i := range reg.Workers() {
		w := reg.Worker(i)
		w.Counter(telemetry.StreamOpensSent, app0).Add(int64(i + 1)) // 1+2+3
		w.Counter(telemetry.StreamOpensSent, app1).Inc()             // 3
		w.Gauge(telemetry.StreamActiveSent, app0).Set(int64(10 * i)) // 0+10+20
		h := w.Histogram("test.gather.size", app0)
		h.Record(1)
		h.Record(int64(1000 * i)) // 0, 1000, 2000
	}
	// A metric no worker touched is exported as zero.
	reg.Worker(0).Counter(telemetry.StreamErrorsSent, app0)

	var wantHist telemetry.HistogramSnapshot
	wantHist.Buckets[0] = 4  // 1, 1, 1, 0
	wantHist.Buckets[9] = 1  // 1000
	wantHist.Buckets[10] = 1 // 2000
	wantHist.Count = 6
	wantHist.Sum = 3 + 3000

	sent, _ := telemetry.LookupDescription(telemetry.StreamOpensSent)
	active, _ := telemetry.LookupDescription(telemetry.StreamActiveSent)
	errs, _ := telemetry.LookupDescription(telemetry.StreamErrorsSent)
	want := []telemetry.Sample{
		{Description: active, Labels: app0, Value: 30},
		{Description: errs, Labels: app0, Value: 0},
		{Description: sent, Labels: app0, Value: 6},
		{Description: sent, Labels: app1, Value: 3},
		{
			Description: telemetry.Description{Name: "test.gather.size", Kind: telemetry.KindHistogram},
			Labels:      app0,
			Histogram:   wantHist,
		},
	}
	assert.Equal(t, want, reg.Gather())

	var names []string
	reg.Each(func(s telemetry.Sample) { names = append(names, s.Name+s.Labels.String()) })
	assert.Equal(t, []string{
		`stream.active.sent{binding="app0",namespace="test"}`,
		`stream.errors.sent{binding="app0",namespace="test"}`,
		`stream.opens.sent{binding="app0",namespace="test"}`,
		`stream.opens.sent{binding="app1",namespace="test"}`,
		`test.gather.size{binding="app0",namespace="test"}`,
	}, names)
}

// TestRegistryConcurrent has two workers update their metrics while an
// exporter gathers and a third goroutine attaches new bindings; run with
// -race.
func TestRegistryConcurrent(t *testing.T) {
	const n = 5000
	reg := telemetry.NewRegistry(2)
	var wg sync.WaitGroup
	for i := range reg.Workers() {
		c := reg.Worker(i).Counter(telemetry.StreamDataSent, app0)
		g := reg.Worker(i).Gauge(telemetry.StreamActiveSent, app0)
		h := reg.Worker(i).Histogram("test.concurrent.size", app0)
		wg.Go(func() {
			for j := range n {
				c.Add(10)
				g.Inc()
				h.Record(int64(j))
			}
		})
	}
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			for _, s := range reg.Gather() {
				if s.Kind == telemetry.KindHistogram {
					var total int64
					for _, b := range s.Histogram.Buckets {
						total += b
					}
					assert.Equal(t, total, s.Histogram.Count)
				}
			}
			reg.Worker(i%2).Counter(telemetry.StreamOpensSent, telemetry.MustLabels("binding", "b"+string(rune('a'+i%26))))
		}
	}()
	wg.Wait()
	close(stop)
	<-stopped

	got := map[string]telemetry.Sample{}
	reg.Each(func(s telemetry.Sample) { got[s.Name] = s })
	assert.Equal(t, int64(2*n*10), got[telemetry.StreamDataSent].Value)
	assert.Equal(t, int64(2*n), got[telemetry.StreamActiveSent].Value)
	assert.Equal(t, int64(2*n), got["test.concurrent.size"].Histogram.Count)
	assert.Equal(t, int64(2*(n*(n-1)/2)), got["test.concurrent.size"].Histogram.Sum)
}

func TestDescribe(t *testing.T) {
	ds := telemetry.Descriptions()
	var names []string
	for _, d := range ds {
		names = append(names, d.Name)
	}
	assert.Subset(t, names, []string{
		"stream.opens.sent", "stream.opens.received",
		"stream.closes.sent", "stream.closes.received",
		"stream.errors.sent", "stream.errors.received",
		"stream.data.sent", "stream.data.received",
		"stream.active.sent", "stream.active.received",
	})
	assert.IsNonDecreasing(t, names)

	d, ok := telemetry.LookupDescription(telemetry.StreamDataReceived)
	require.True(t, ok)
	assert.Equal(t, telemetry.Description{
		Name: "stream.data.received", Kind: telemetry.KindCounter, Unit: telemetry.UnitBytes,
		Help: "The count of bytes of data on received streams.",
	}, d)
	d, ok = telemetry.LookupDescription(telemetry.StreamActiveReceived)
	require.True(t, ok)
	assert.Equal(t, telemetry.KindGauge, d.Kind)
	_, ok = telemetry.LookupDescription("test.undescribed")
	assert.False(t, ok)

	d, ok = telemetry.LookupDescription("test.request.duration") // described by init
	require.True(t, ok)
	assert.Equal(t, telemetry.Unit("milliseconds"), d.Unit)

	assert.PanicsWithValue(t, `telemetry: Describe "stream.opens.sent": already described`, func() {
		telemetry.Describe(telemetry.StreamOpensSent, telemetry.KindCounter, telemetry.UnitNone, "again")
	})
	assert.Panics(t, func() { telemetry.Describe("bad name", telemetry.KindCounter, telemetry.UnitNone, "") })
	assert.Panics(t, func() { telemetry.Describe("test.describe.kind", telemetry.Kind(9), telemetry.UnitNone, "") })
	assert.Panics(t, func() { telemetry.Describe("test.describe.unit", telemetry.KindGauge, "per second", "") })

	assert.Equal(t, "counter", telemetry.KindCounter.String())
	assert.Equal(t, "gauge", telemetry.KindGauge.String())
	assert.Equal(t, "histogram", telemetry.KindHistogram.String())
	assert.Equal(t, "UNKNOWN_KIND_0", telemetry.Kind(0).String())
}
