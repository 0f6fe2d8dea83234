package telemetry_test

import (
	"io"
	"net/http"
	"strconv"
	"testing"

	"github.com/sluicehq/sluice/engine/telemetry"
)

func BenchmarkCounterAdd(b *testing.B) {
	c := telemetry.NewRegistry(1).Worker(0).Counter(telemetry.StreamDataSent, app0)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		c.Add(int64(i))
	}
}

func BenchmarkGaugeAdd(b *testing.B) {
	g := telemetry.NewRegistry(1).Worker(0).Gauge(telemetry.StreamActiveSent, app0)
	b.ReportAllocs()
	for b.Loop() {
		g.Add(1)
	}
}

func BenchmarkHistogramRecord(b *testing.B) {
	h := telemetry.NewRegistry(1).Worker(0).Histogram("test.request.size", app0)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		h.Record(int64(i & 0xffff))
	}
}

// BenchmarkCounterAddPerWorker has every goroutine update its own worker's
// counter, as workers do; with the padding their counters never share a
// cache line, so the cost stays that of an uncontended add.
func BenchmarkCounterAddPerWorker(b *testing.B) {
	reg := telemetry.NewRegistry(64)
	next := make(chan int, 64)
	for i := range 64 {
		next <- i
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		c := reg.Worker(<-next).Counter(telemetry.StreamDataSent, app0)
		for pb.Next() {
			c.Add(1)
		}
	})
}

// BenchmarkWorkerCounterLookup is the attach-time lookup of an existing
// metric.
func BenchmarkWorkerCounterLookup(b *testing.B) {
	w := telemetry.NewRegistry(4).Worker(2)
	w.Counter(telemetry.StreamOpensSent, app0)
	b.ReportAllocs()
	for b.Loop() {
		labels, _ := telemetry.BindingLabels("test", "app0")
		w.Counter(telemetry.StreamOpensSent, labels)
	}
}

// BenchmarkGather sums 100 bindings' stream metrics and a histogram each
// across 8 workers.
func BenchmarkGather(b *testing.B) {
	reg := populated(8, 100)
	b.ReportAllocs()
	for b.Loop() {
		reg.Each(func(telemetry.Sample) {})
	}
}

// BenchmarkPrometheusScrape is one scrape over HTTP of the same registry.
func BenchmarkPrometheusScrape(b *testing.B) {
	reg := populated(8, 100)
	info, err := telemetry.LookupExporter(telemetry.PrometheusType)
	if err != nil {
		b.Fatal(err)
	}
	exp, err := info.New("prometheus0", map[string]any{"port": 0}, reg)
	if err != nil {
		b.Fatal(err)
	}
	if err := exp.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = exp.Stop(b.Context()) })
	url := "http://" + exp.Addr().String() + "/metrics"
	b.ReportAllocs()
	for b.Loop() {
		resp, err := http.Get(url)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
	}
}

func populated(workers, bindings int) *telemetry.Registry {
	reg := telemetry.NewRegistry(workers)
	names := []string{
		telemetry.StreamOpensSent, telemetry.StreamOpensReceived,
		telemetry.StreamClosesSent, telemetry.StreamClosesReceived,
		telemetry.StreamErrorsSent, telemetry.StreamErrorsReceived,
		telemetry.StreamDataSent, telemetry.StreamDataReceived,
	}
	for i := range workers {
		w := reg.Worker(i)
		for j := range bindings {
			labels, _ := telemetry.BindingLabels("test", "app"+strconv.Itoa(j))
			for _, n := range names {
				w.Counter(n, labels).Add(int64(i + j))
			}
			w.Gauge(telemetry.StreamActiveSent, labels).Set(int64(j))
			w.Histogram("test.request.size", labels).Record(int64(i * j))
		}
	}
	return reg
}
