package telemetry

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Registry holds a process's metrics, one instance of each per worker. A
// worker looks its metrics up through [Registry.Worker] when a binding is
// attached, keeps the pointers, and updates them lock-free per frame;
// exporters read the sums across workers with [Registry.Each] or
// [Registry.Gather].
//
// Metrics are never removed: counters keep counting across a binding's
// detach and re-attach, as exporters expect of them.
type Registry struct {
	workers []WorkerMetrics

	mu     sync.Mutex
	index  map[seriesKey]*series
	series []*series       // sorted by name, then labels
	kinds  map[string]Kind // the kind of each name in use
}

// WorkerMetrics is one worker's view of a [Registry]: it creates and finds
// the metrics that worker updates.
type WorkerMetrics struct {
	reg   *Registry
	index int
}

type seriesKey struct {
	name   string
	labels Labels
}

// series is one metric name and label set, with an instance per worker. It
// is immutable once created: only the metric values change.
type series struct {
	desc       Description
	labels     Labels
	counters   []*Counter
	gauges     []*Gauge
	histograms []*Histogram
}

// NewRegistry returns an empty registry for the given number of workers;
// it panics if workers < 1.
func NewRegistry(workers int) *Registry {
	if workers < 1 {
		panic(fmt.Sprintf("telemetry: NewRegistry(%d): need at least one worker", workers))
	}
	r := &Registry{
		workers: make([]WorkerMetrics, workers),
		index:   make(map[seriesKey]*series),
		kinds:   make(map[string]Kind),
	}
	for i := range r.workers {
		r.workers[i] = WorkerMetrics{reg: r, index: i}
	}
	return r
}

// Workers returns the number of workers.
func (r *Registry) Workers() int { return len(r.workers) }

// Worker returns worker i's metrics; it panics if i is out of range.
func (r *Registry) Worker(i int) *WorkerMetrics { return &r.workers[i] }

// Index returns the worker's index.
func (w *WorkerMetrics) Index() int { return w.index }

// Counter returns this worker's counter name{labels}, creating it (for
// every worker) on first use. Lookup takes a lock: call it when a binding
// is attached and keep the pointer, which stays the same for the life of
// the registry. It panics if name is not a valid metric name or is already
// in use, or described, as another kind; metric names are constants in
// code.
func (w *WorkerMetrics) Counter(name string, labels Labels) *Counter {
	return w.reg.lookup(name, labels, KindCounter).counters[w.index]
}

// Gauge returns this worker's gauge name{labels}, like [WorkerMetrics.Counter].
func (w *WorkerMetrics) Gauge(name string, labels Labels) *Gauge {
	return w.reg.lookup(name, labels, KindGauge).gauges[w.index]
}

// Histogram returns this worker's histogram name{labels}, like
// [WorkerMetrics.Counter].
func (w *WorkerMetrics) Histogram(name string, labels Labels) *Histogram {
	return w.reg.lookup(name, labels, KindHistogram).histograms[w.index]
}

func (r *Registry) lookup(name string, labels Labels, kind Kind) *series {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s, ok := r.index[seriesKey{name, labels}]; ok {
		if s.desc.Kind != kind {
			panic(fmt.Sprintf("telemetry: metric %q is a %s, not a %s", name, s.desc.Kind, kind))
		}
		return s
	}
	desc, described := LookupDescription(name)
	if !described {
		if err := checkName(name); err != nil {
			panic(err)
		}
		desc = Description{Name: name, Kind: kind}
	}
	if desc.Kind != kind {
		panic(fmt.Sprintf("telemetry: metric %q is described as a %s, not a %s", name, desc.Kind, kind))
	}
	if k, ok := r.kinds[name]; ok && k != kind {
		panic(fmt.Sprintf("telemetry: metric %q is a %s, not a %s", name, k, kind))
	}
	r.kinds[name] = kind

	s := &series{desc: desc, labels: labels}
	n := len(r.workers)
	// Each instance is allocated on its own so that it sits on its own
	// cache line(s), away from every other worker's.
	switch kind {
	case KindCounter:
		s.counters = make([]*Counter, n)
		for i := range s.counters {
			s.counters[i] = new(Counter)
		}
	case KindGauge:
		s.gauges = make([]*Gauge, n)
		for i := range s.gauges {
			s.gauges[i] = new(Gauge)
		}
	case KindHistogram:
		s.histograms = make([]*Histogram, n)
		for i := range s.histograms {
			s.histograms[i] = new(Histogram)
		}
	}
	r.index[seriesKey{name, labels}] = s
	i, _ := slices.BinarySearchFunc(r.series, s, compareSeries)
	r.series = slices.Insert(r.series, i, s)
	return s
}

func compareSeries(a, b *series) int {
	if c := strings.Compare(a.desc.Name, b.desc.Name); c != 0 {
		return c
	}
	return a.labels.compare(b.labels)
}

// Sample is one metric, name{labels}, summed across workers.
type Sample struct {
	Description        // Name, Kind, Unit and Help
	Labels      Labels // the metric's labels
	// Value is the sum of a counter or gauge; zero for a histogram.
	Value int64
	// Histogram is the element-wise sum of a histogram's buckets, counts
	// and sums; zero for a counter or gauge.
	Histogram HistogramSnapshot
}

// Each calls fn with every metric summed across workers, sorted by name and
// then labels. It takes the registry's lock only to list the metrics, so fn
// may use the registry; the values are read lock-free while workers update
// them.
func (r *Registry) Each(fn func(Sample)) {
	r.mu.Lock()
	ss := slices.Clone(r.series)
	r.mu.Unlock()
	for _, s := range ss {
		fn(s.sum())
	}
}

// Gather returns every metric summed across workers, sorted as by
// [Registry.Each].
func (r *Registry) Gather() []Sample {
	var out []Sample
	r.Each(func(s Sample) { out = append(out, s) })
	return out
}

func (s *series) sum() Sample {
	out := Sample{Description: s.desc, Labels: s.labels}
	switch s.desc.Kind {
	case KindCounter:
		for _, c := range s.counters {
			out.Value += c.Value()
		}
	case KindGauge:
		for _, g := range s.gauges {
			out.Value += g.Value()
		}
	case KindHistogram:
		for _, h := range s.histograms {
			h.addTo(&out.Histogram)
		}
	}
	return out
}
