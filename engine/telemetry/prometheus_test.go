package telemetry_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/engine/telemetry"
)

// Test-only names, described once per test binary as a binding would.
func init() {
	telemetry.Describe("test.request.size", telemetry.KindHistogram, telemetry.UnitBytes, "Size of test requests.")
	telemetry.Describe("test.request.duration", telemetry.KindHistogram, telemetry.Unit("milliseconds"), "Duration of test requests.")
	telemetry.Describe("test.elicitation.completed", telemetry.KindCounter, telemetry.UnitNone, "Completed elicitations by action.")
}

// startPrometheus starts a prometheus exporter over reg with options and
// stops it when the test ends.
func startPrometheus(t *testing.T, reg *telemetry.Registry, options map[string]any) telemetry.Exporter {
	t.Helper()
	info, err := telemetry.LookupExporter(telemetry.PrometheusType)
	require.NoError(t, err)
	exp, err := info.New("prometheus0", options, reg)
	require.NoError(t, err)
	require.NoError(t, exp.Start())
	t.Cleanup(func() { assert.NoError(t, exp.Stop(context.Background())) })
	return exp
}

// scrape GETs path from exp and returns the status and body.
func scrape(t *testing.T, exp telemetry.Exporter, path string) (int, string) {
	t.Helper()
	resp, err := http.Get("http://" + exp.Addr().String() + path)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

func lines(body string) []string { return strings.Split(strings.TrimSpace(body), "\n") }

func TestPrometheusExposition(t *testing.T) {
	reg := telemetry.NewRegistry(2)
	w0, w1 := reg.Worker(0), reg.Worker(1)
	w0.Counter(telemetry.StreamOpensSent, app0).Add(2)
	w1.Counter(telemetry.StreamOpensSent, app0).Inc()
	w0.Counter(telemetry.StreamOpensSent, app1).Inc()
	w0.Counter(telemetry.StreamDataSent, app0).Add(1000)
	w1.Counter(telemetry.StreamDataSent, app0).Add(500)
	w0.Gauge(telemetry.StreamActiveReceived, app0).Set(3)
	w1.Gauge(telemetry.StreamActiveReceived, app0).Add(-1)
	h0, h1 := w0.Histogram("test.request.size", app0), w1.Histogram("test.request.size", app0)
	h0.Record(0)
	h0.Record(1)
	h1.Record(3)
	h1.Record(1024)
	// Series of one name with different label keys: the missing key is
	// exported empty, which Prometheus reads as absent.
	w0.Counter("test.elicitation.completed", app0).Inc()
	w0.Counter("test.elicitation.completed", telemetry.MustLabels("namespace", "test", "binding", "app0", "action", "accept")).Add(4)
	// Milliseconds are exported as seconds.
	telemetry.Describe("test.answer.duration", telemetry.KindHistogram, telemetry.UnitMilliseconds, "Time to answer.")
	w0.Histogram("test.answer.duration", app0).Record(1500)
	// An undescribed name gets its kind from use and its name as help.
	w1.Gauge("test.undescribed.level", telemetry.Labels{}).Set(9)

	exp := startPrometheus(t, reg, map[string]any{"host": "127.0.0.1", "port": 0})
	status, body := scrape(t, exp, "/metrics")
	require.Equal(t, http.StatusOK, status)
	got := lines(body)

	want := []string{
		"# HELP stream_opens_sent_total The number of opened sent streams.",
		"# TYPE stream_opens_sent_total counter",
		`stream_opens_sent_total{binding="app0",namespace="test"} 3`,
		`stream_opens_sent_total{binding="app1",namespace="test"} 1`,
		"# HELP stream_data_sent_bytes_total The count of bytes of data on sent streams.",
		"# TYPE stream_data_sent_bytes_total counter",
		`stream_data_sent_bytes_total{binding="app0",namespace="test"} 1500`,
		"# HELP stream_active_received The number of currently active received streams.",
		"# TYPE stream_active_received gauge",
		`stream_active_received{binding="app0",namespace="test"} 2`,
		"# HELP test_request_size_bytes Size of test requests.",
		"# TYPE test_request_size_bytes histogram",
		`test_request_size_bytes_bucket{binding="app0",namespace="test",le="2"} 2`,
		`test_request_size_bytes_bucket{binding="app0",namespace="test",le="4"} 3`,
		`test_request_size_bytes_bucket{binding="app0",namespace="test",le="1024"} 3`,
		`test_request_size_bytes_bucket{binding="app0",namespace="test",le="2048"} 4`,
		`test_request_size_bytes_bucket{binding="app0",namespace="test",le="9.223372036854776e+18"} 4`,
		`test_request_size_bytes_bucket{binding="app0",namespace="test",le="+Inf"} 4`,
		`test_request_size_bytes_sum{binding="app0",namespace="test"} 1028`,
		`test_request_size_bytes_count{binding="app0",namespace="test"} 4`,
		`test_elicitation_completed_total{action="",binding="app0",namespace="test"} 1`,
		`test_elicitation_completed_total{action="accept",binding="app0",namespace="test"} 4`,
		"# TYPE test_answer_duration_seconds histogram",
		`test_answer_duration_seconds_bucket{binding="app0",namespace="test",le="1.024"} 0`,
		`test_answer_duration_seconds_bucket{binding="app0",namespace="test",le="2.048"} 1`,
		`test_answer_duration_seconds_sum{binding="app0",namespace="test"} 1.5`,
		"# HELP test_undescribed_level test.undescribed.level",
		"# TYPE test_undescribed_level gauge",
		"test_undescribed_level 9",
	}
	for _, line := range want {
		assert.Contains(t, got, line)
	}
	// A metric that is not created is not exported; there are 63 finite
	// buckets per histogram.
	assert.NotContains(t, body, "stream_opens_received")
	assert.Equal(t, 63, strings.Count(body, `test_request_size_bytes_bucket{binding="app0",namespace="test",le="`)-1)

	// Values are read at each scrape.
	w1.Counter(telemetry.StreamOpensSent, app0).Add(10)
	_, body = scrape(t, exp, "/metrics")
	assert.Contains(t, lines(body), `stream_opens_sent_total{binding="app0",namespace="test"} 13`)
}

func TestPrometheusPath(t *testing.T) {
	reg := telemetry.NewRegistry(1)
	reg.Worker(0).Counter(telemetry.StreamOpensSent, app0).Inc()
	exp := startPrometheus(t, reg, map[string]any{"port": 0, "path": "/custom/{metrics}"})

	status, body := scrape(t, exp, "/custom/%7Bmetrics%7D")
	require.Equal(t, http.StatusOK, status)
	assert.Contains(t, lines(body), `stream_opens_sent_total{binding="app0",namespace="test"} 1`)

	status, _ = scrape(t, exp, "/metrics")
	assert.Equal(t, http.StatusNotFound, status)

	addr, ok := exp.Addr().(*net.TCPAddr)
	require.True(t, ok)
	assert.Equal(t, "127.0.0.1", addr.IP.String(), "default host")
	assert.NotZero(t, addr.Port)
}

func TestPrometheusOptions(t *testing.T) {
	tests := []struct {
		name    string
		options map[string]any
		is      error
		want    string
	}{
		{name: "unknown option", options: map[string]any{"port": 0, "prot": 9090}, is: telemetry.ErrUnknownOption,
			want: `telemetry: exporter "prometheus0" (prometheus): unknown option "prot"`},
		{name: "endpoints", options: map[string]any{"endpoints": []any{}}, is: telemetry.ErrUnknownOption,
			want: `telemetry: exporter "prometheus0" (prometheus): unknown option "endpoints"`},
		{name: "no port", options: map[string]any{"host": "0.0.0.0"}, is: telemetry.ErrInvalidOption,
			want: `telemetry: exporter "prometheus0" (prometheus): option "port": required`},
		{name: "nil options", options: nil, is: telemetry.ErrInvalidOption,
			want: `telemetry: exporter "prometheus0" (prometheus): option "port": required`},
		{name: "port too big", options: map[string]any{"port": 65536}, is: telemetry.ErrInvalidOption,
			want: `telemetry: exporter "prometheus0" (prometheus): option "port": must be an integer in 0..65535, got 65536 (int)`},
		{name: "port negative", options: map[string]any{"port": int64(-1)}, is: telemetry.ErrInvalidOption,
			want: `option "port": must be an integer in 0..65535, got -1 (int64)`},
		{name: "port huge uint", options: map[string]any{"port": uint64(math.MaxUint64)}, is: telemetry.ErrInvalidOption,
			want: `option "port": must be an integer in 0..65535, got 18446744073709551615 (uint64)`},
		{name: "port string", options: map[string]any{"port": "9090"}, is: telemetry.ErrInvalidOption,
			want: `option "port": must be an integer in 0..65535, got "9090"`},
		{name: "port fraction", options: map[string]any{"port": 90.5}, is: telemetry.ErrInvalidOption,
			want: `option "port": must be an integer in 0..65535, got 90.5 (float64)`},
		{name: "port null", options: map[string]any{"port": nil}, is: telemetry.ErrInvalidOption,
			want: `option "port": must be an integer in 0..65535, got null`},
		{name: "host empty", options: map[string]any{"port": 0, "host": ""}, is: telemetry.ErrInvalidOption,
			want: `option "host": must be a non-empty string, got ""`},
		{name: "host number", options: map[string]any{"port": 0, "host": 127}, is: telemetry.ErrInvalidOption,
			want: `option "host": must be a non-empty string, got 127 (int)`},
		{name: "relative path", options: map[string]any{"port": 0, "path": "metrics"}, is: telemetry.ErrInvalidOption,
			want: `option "path": must be a string starting with /, got "metrics"`},
	}
	info, err := telemetry.LookupExporter(telemetry.PrometheusType)
	require.NoError(t, err)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			exp, err := info.New("prometheus0", tt.options, telemetry.NewRegistry(1))
			require.ErrorIs(t, err, tt.is)
			assert.Nil(t, exp)
			assert.ErrorContains(t, err, tt.want)
			var oe *telemetry.OptionError
			require.ErrorAs(t, err, &oe)
			assert.Equal(t, "prometheus0", oe.Exporter)
			assert.Equal(t, "prometheus", oe.Type)
		})
	}

	// The number types YAML and JSON decoders produce are all accepted.
	for _, port := range []any{0, int32(0), int64(0), uint64(0), 0.0, json.Number("0")} {
		exp, err := info.New("prometheus0", map[string]any{"port": port}, telemetry.NewRegistry(1))
		require.NoError(t, err, "port %#v", port)
		assert.Nil(t, exp.Addr(), "not started")
	}
}

func TestPrometheusLifecycle(t *testing.T) {
	info, err := telemetry.LookupExporter(telemetry.PrometheusType)
	require.NoError(t, err)
	reg := telemetry.NewRegistry(1)
	exp, err := info.New("prometheus0", map[string]any{"port": 0}, reg)
	require.NoError(t, err)
	require.NoError(t, exp.Stop(context.Background()), "stop before start does nothing")
	assert.Nil(t, exp.Addr())
	require.NoError(t, exp.Start())
	assert.ErrorIs(t, exp.Start(), telemetry.ErrStarted)
	addr := exp.Addr().String()
	status, _ := scrape(t, exp, "/metrics")
	require.Equal(t, http.StatusOK, status)

	t.Run("port in use", func(t *testing.T) {
		port := exp.Addr().(*net.TCPAddr).Port
		other, err := info.New("prometheus1", map[string]any{"port": port}, reg)
		require.NoError(t, err)
		err = other.Start()
		require.Error(t, err)
		assert.Contains(t, err.Error(), `telemetry: exporter "prometheus1" (prometheus): listen: `)
		assert.Contains(t, err.Error(), "address already in use")
	})

	require.NoError(t, exp.Stop(context.Background()))
	require.NoError(t, exp.Stop(context.Background()), "second stop does nothing")
	assert.ErrorIs(t, exp.Start(), telemetry.ErrStarted, "an exporter starts once")

	// Stop frees the port: it can be bound again at once, and nothing
	// answers there any more.
	_, err = http.Get("http://" + addr + "/metrics")
	require.Error(t, err)
	ln, err := net.Listen("tcp", addr)
	require.NoError(t, err)
	require.NoError(t, ln.Close())
}

// TestPrometheusScrapeWhileUpdating scrapes concurrently with two workers
// updating and a binding attaching; run with -race.
func TestPrometheusScrapeWhileUpdating(t *testing.T) {
	reg := telemetry.NewRegistry(2)
	exp := startPrometheus(t, reg, map[string]any{"port": 0})
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := range reg.Workers() {
		w := reg.Worker(i)
		wg.Go(func() {
			for j := 0; ; j++ {
				select {
				case <-stop:
					return
				default:
				}
				labels := telemetry.MustLabels("namespace", "test", "binding", "app"+strconv.Itoa(j%8))
				w.Counter(telemetry.StreamOpensSent, labels).Inc()
				w.Histogram("test.request.size", labels).Record(int64(j))
			}
		})
	}
	for range 5 {
		status, body := scrape(t, exp, "/metrics")
		require.Equal(t, http.StatusOK, status, body)
	}
	close(stop)
	wg.Wait()
}

func TestPrometheusStopTimeout(t *testing.T) {
	reg := telemetry.NewRegistry(1)
	info, err := telemetry.LookupExporter(telemetry.PrometheusType)
	require.NoError(t, err)
	exp, err := info.New("prometheus0", map[string]any{"port": 0}, reg)
	require.NoError(t, err)
	require.NoError(t, exp.Start())

	// A connection that has not finished its request holds up a graceful
	// Stop; a done context cuts it off. The server accepts connections in
	// order, so once the scrape on a later connection is answered, conn
	// is tracked by the server.
	conn, err := net.Dial("tcp", exp.Addr().String())
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.Write([]byte("GET /metrics HTTP/1.1\r\nHost: x\r\n")) // headers unfinished
	require.NoError(t, err)
	status, _ := scrape(t, exp, "/metrics")
	require.Equal(t, http.StatusOK, status)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = exp.Stop(ctx)
	require.ErrorIs(t, err, context.Canceled)
	assert.ErrorContains(t, err, `telemetry: exporter "prometheus0" (prometheus): shutdown: context canceled`)

	// Stop closed the unfinished connection: reading ends with EOF (or a
	// reset), not the deadline.
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
	_, err = io.ReadAll(conn)
	assert.False(t, errors.Is(err, os.ErrDeadlineExceeded), "connection still open")
}
