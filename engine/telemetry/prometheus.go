package telemetry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// PrometheusType is the type of the built-in Prometheus exporter.
const PrometheusType = "prometheus"

// The Prometheus exporter's option defaults.
const (
	PrometheusDefaultHost = "127.0.0.1"
	PrometheusDefaultPath = "/metrics"
)

// prometheusSchema is the JSON Schema of the prometheus exporter's options.
// It mirrors parsePrometheusOptions, which enforces the same rules for
// callers that skip schema validation.
const prometheusSchema = `{
  "type": "object",
  "properties": {
    "host": {
      "type": "string",
      "minLength": 1,
      "default": "127.0.0.1",
      "description": "Address to listen on."
    },
    "port": {
      "type": "integer",
      "minimum": 0,
      "maximum": 65535,
      "description": "Port to listen on; 0 picks a free port."
    },
    "path": {
      "type": "string",
      "pattern": "^/",
      "default": "/metrics",
      "description": "URL path that serves the metrics."
    }
  },
  "required": ["port"],
  "additionalProperties": false
}`

func init() {
	Register(ExporterInfo{
		Type:   PrometheusType,
		Schema: json.RawMessage(prometheusSchema),
		New:    newPrometheusExporter,
	})
}

type prometheusOptions struct {
	host string
	port int
	path string
}

// parsePrometheusOptions checks the options as the schema does; options
// decoded from YAML or JSON hold ints, int64s, uint64s or float64s for the
// port, depending on the decoder.
func parsePrometheusOptions(name string, options map[string]any) (prometheusOptions, error) {
	o := prometheusOptions{host: PrometheusDefaultHost, port: -1, path: PrometheusDefaultPath}
	invalid := func(key, format string, args ...any) error {
		return &OptionError{Exporter: name, Type: PrometheusType, Option: key, Reason: fmt.Sprintf(format, args...), Err: ErrInvalidOption}
	}
	keys := make([]string, 0, len(options))
	for k := range options {
		keys = append(keys, k)
	}
	slices.Sort(keys) // report the same key first every time
	for _, k := range keys {
		v := options[k]
		switch k {
		case "host":
			s, ok := v.(string)
			if !ok || s == "" {
				return o, invalid(k, "must be a non-empty string, got %s", describeValue(v))
			}
			o.host = s
		case "port":
			p, ok := integer(v)
			if !ok || p < 0 || p > math.MaxUint16 {
				return o, invalid(k, "must be an integer in 0..65535, got %s", describeValue(v))
			}
			o.port = int(p)
		case "path":
			s, ok := v.(string)
			if !ok || !strings.HasPrefix(s, "/") {
				return o, invalid(k, "must be a string starting with /, got %s", describeValue(v))
			}
			o.path = s
		default:
			return o, &OptionError{Exporter: name, Type: PrometheusType, Option: k, Err: ErrUnknownOption}
		}
	}
	if o.port < 0 {
		return o, invalid("port", "required")
	}
	return o, nil
}

// integer returns v as an int64 if it is an integral number of any of the
// types that YAML and JSON decoders produce.
func integer(v any) (int64, bool) {
	switch n := v.(type) {
	case int:
		return int64(n), true
	case int8:
		return int64(n), true
	case int16:
		return int64(n), true
	case int32:
		return int64(n), true
	case int64:
		return n, true
	case uint:
		return int64(min(uint64(n), math.MaxInt64)), true
	case uint8:
		return int64(n), true
	case uint16:
		return int64(n), true
	case uint32:
		return int64(n), true
	case uint64:
		return int64(min(n, math.MaxInt64)), true
	case float32:
		return integer(float64(n))
	case float64:
		if n != math.Trunc(n) || math.Abs(n) > 1<<53 {
			return 0, false
		}
		return int64(n), true
	case json.Number:
		i, err := n.Int64()
		return i, err == nil
	}
	return 0, false
}

func describeValue(v any) string {
	if v == nil {
		return "null"
	}
	if s, ok := v.(string); ok {
		return strconv.Quote(s)
	}
	return fmt.Sprintf("%v (%T)", v, v)
}

// prometheusExporter serves a Registry in the Prometheus text format over
// HTTP on its own listener.
type prometheusExporter struct {
	name    string
	opts    prometheusOptions
	handler http.Handler
	log     *slog.Logger

	mu      sync.Mutex
	started bool
	ln      net.Listener
	srv     *http.Server
	served  chan struct{} // closed when srv.Serve returns
}

func newPrometheusExporter(name string, options map[string]any, reg *Registry) (Exporter, error) {
	opts, err := parsePrometheusOptions(name, options)
	if err != nil {
		return nil, err
	}
	if reg == nil {
		return nil, fmt.Errorf("telemetry: exporter %q (%s): nil registry", name, PrometheusType)
	}
	preg := prometheus.NewRegistry()
	if err := preg.Register(newPrometheusCollector(reg)); err != nil {
		return nil, fmt.Errorf("telemetry: exporter %q (%s): %w", name, PrometheusType, err)
	}
	log := slog.With("exporter", name, "type", PrometheusType)
	metrics := promhttp.HandlerFor(preg, promhttp.HandlerOpts{
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelError),
		// A bad series should not hide the good ones.
		ErrorHandling: promhttp.ContinueOnError,
	})
	// Match the path exactly rather than through http.ServeMux: the path
	// is configuration, and ServeMux panics on patterns such as "/{".
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != opts.path {
			http.NotFound(w, r)
			return
		}
		metrics.ServeHTTP(w, r)
	})
	return &prometheusExporter{name: name, opts: opts, handler: handler, log: log}, nil
}

func (e *prometheusExporter) Start() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.started {
		return fmt.Errorf("%w: %q", ErrStarted, e.name)
	}
	addr := net.JoinHostPort(e.opts.host, strconv.Itoa(e.opts.port))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("telemetry: exporter %q (%s): listen: %w", e.name, PrometheusType, err)
	}
	e.started = true
	e.ln = ln
	e.srv = &http.Server{
		Handler: e.handler,
		// The only timeouts in this package: a scraper that stalls,
		// sending its request or reading the metrics, must not hold a
		// connection forever.
		ReadHeaderTimeout: 10 * time.Second,
		WriteTimeout:      time.Minute,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(e.log.Handler(), slog.LevelWarn),
	}
	e.served = make(chan struct{})
	go func(srv *http.Server, served chan<- struct{}) {
		defer close(served)
		// Serve returns ErrServerClosed once Stop shuts the server down;
		// any other error means the listener failed.
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			e.log.Error("telemetry: exporter stopped serving", "err", err)
		}
	}(e.srv, e.served)
	// The engine logs the start, through its own logger: a line here
	// went to slog's default handler, a second line in another format.
	return nil
}

func (e *prometheusExporter) Stop(ctx context.Context) error {
	e.mu.Lock()
	srv, served := e.srv, e.served
	e.srv, e.served = nil, nil // started stays true: no second Start
	e.mu.Unlock()
	if srv == nil {
		return nil
	}
	// Shutdown closes the listener at once, freeing the port, then waits
	// for the scrapes in flight; if ctx ends first, cut them off.
	err := srv.Shutdown(ctx)
	if err != nil {
		err = errors.Join(fmt.Errorf("telemetry: exporter %q (%s): shutdown: %w", e.name, PrometheusType, err), srv.Close())
	}
	<-served
	e.log.Info("telemetry: exporter stopped")
	return err
}

func (e *prometheusExporter) Addr() net.Addr {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ln == nil {
		return nil
	}
	return e.ln.Addr()
}

// prometheusCollector exposes a Registry to client_golang. It is unchecked
// (Describe sends nothing) because the set of metrics grows as bindings
// attach; Collect builds const metrics from the summed values at scrape
// time, so nothing is copied into client_golang between scrapes.
type prometheusCollector struct {
	reg *Registry

	mu    sync.Mutex
	descs map[promDescKey]*prometheus.Desc
}

type promDescKey struct {
	name string // the Sluice name
	keys string // label keys, comma-separated
}

func newPrometheusCollector(reg *Registry) *prometheusCollector {
	return &prometheusCollector{reg: reg, descs: make(map[promDescKey]*prometheus.Desc)}
}

func (c *prometheusCollector) Describe(chan<- *prometheus.Desc) {}

func (c *prometheusCollector) Collect(ch chan<- prometheus.Metric) {
	var group []Sample // the samples of one name, which Each yields together
	c.reg.Each(func(s Sample) {
		if len(group) > 0 && group[0].Name != s.Name {
			c.collectGroup(ch, group)
			group = group[:0]
		}
		group = append(group, s)
	})
	if len(group) > 0 {
		c.collectGroup(ch, group)
	}
}

// collectGroup sends the samples of one metric name. Histogram bucket i is
// exported with le="2^(i+1)", Zilla's bound, although Zilla's bound is
// exclusive and le is inclusive: a value of exactly 2^(i+1) is counted from
// the next bucket on. For integer values the tight le would be 2^(i+1)-1;
// the powers of two are kept so the bounds read the same as Zilla's.
// Prometheus wants every
// series of a family to have the same label names, so a series that lacks
// one of the group's keys gets it with an empty value, which Prometheus
// treats as absent.
func (c *prometheusCollector) collectGroup(ch chan<- prometheus.Metric, group []Sample) {
	keys := labelKeys(group)
	desc := c.desc(group[0].Description, keys)
	values := make([]string, len(keys)) // copied by each NewConst*
	_, scale := exportUnit(group[0].Description.Unit)
	for _, s := range group {
		for i, k := range keys {
			values[i], _ = s.Labels.Get(k)
		}
		var m prometheus.Metric
		var err error
		switch s.Kind {
		case KindCounter:
			m, err = prometheus.NewConstMetric(desc, prometheus.CounterValue, float64(s.Value)*scale, values...)
		case KindGauge:
			m, err = prometheus.NewConstMetric(desc, prometheus.GaugeValue, float64(s.Value)*scale, values...)
		case KindHistogram:
			// A const histogram keeps its map until the scrape is
			// written, so each needs its own.
			buckets := make(map[float64]uint64, HistogramBuckets)
			var cum uint64
			for i, n := range s.Histogram.Buckets {
				cum += uint64(n)
				buckets[float64(BucketBound(i))*scale] = cum
			}
			m, err = prometheus.NewConstHistogram(desc, uint64(s.Histogram.Count), float64(s.Histogram.Sum)*scale, buckets, values...)
		}
		if err != nil {
			// NewLabels admits only valid label names and UTF-8
			// values, so this is not expected; report it in the
			// scrape rather than panic in the server.
			m = prometheus.NewInvalidMetric(desc, err)
		}
		ch <- m
	}
}

// exportUnit is the unit a metric recorded in u is exported in, and the
// factor that converts its values: milliseconds are exported as seconds.
func exportUnit(u Unit) (Unit, float64) {
	if u == UnitMilliseconds {
		return "seconds", 1e-3
	}
	return u, 1
}

// labelKeys returns the union of the group's label keys, sorted.
func labelKeys(group []Sample) []string {
	var keys []string
	for _, s := range group {
		for k := range s.Labels.All() {
			if i, found := slices.BinarySearch(keys, k); !found {
				keys = slices.Insert(keys, i, k)
			}
		}
	}
	return keys
}

func (c *prometheusCollector) desc(d Description, keys []string) *prometheus.Desc {
	key := promDescKey{name: d.Name, keys: strings.Join(keys, ",")}
	c.mu.Lock()
	defer c.mu.Unlock()
	if desc, ok := c.descs[key]; ok {
		return desc
	}
	help := d.Help
	if help == "" {
		help = d.Name
	}
	desc := prometheus.NewDesc(prometheusName(d), help, keys, nil)
	c.descs[key] = desc
	return desc
}

// prometheusName spells a Sluice metric name the Prometheus way: dots
// become underscores, the unit is appended, and counters end in _total, so
// stream.data.sent (a counter of bytes) is stream_data_sent_bytes_total.
func prometheusName(d Description) string {
	n := strings.ReplaceAll(d.Name, ".", "_")
	unit, _ := exportUnit(d.Unit)
	if unit != UnitNone && !strings.HasSuffix(n, "_"+string(unit)) {
		n += "_" + string(unit)
	}
	if d.Kind == KindCounter && !strings.HasSuffix(n, "_total") {
		n += "_total"
	}
	return n
}
