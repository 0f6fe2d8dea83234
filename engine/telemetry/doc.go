// Package telemetry holds Sluice's metrics: per-worker counters, gauges and
// histograms updated lock-free on the hot path, a registry that sums them
// across workers, and the exporter SPI with the built-in Prometheus
// exporter.
//
// # Concepts
//
// A metric is a dotted name, as Zilla spells it (stream.opens.sent,
// http.request.size, mcp.…), plus a [Labels] set such as
// {namespace="test", binding="app0"}. [Describe] records a name's [Kind],
// [Unit] and help text; the stream.* names ([StreamOpensSent], …) are
// described here, and the packages that own http.* and mcp.* describe
// theirs from init().
//
// Every worker has its own instance of each metric, so a worker's updates
// never contend with another's: [Counter], [Gauge] and [Histogram] are
// typed sync/atomic values padded to a cache line, updated with no lock and
// no allocation, and read concurrently by exporters. A [Histogram] has
// Zilla's 63 buckets, bucket i holding values below 2^(i+1)
// ([BucketBound]), and a sum.
//
// A [Registry] holds the metrics of a process with N workers. Creating or
// finding a metric through [Registry.Worker] takes a lock, so it is done
// when a binding is attached; the returned pointer is stable and is what
// the worker updates per frame. [Registry.Each] and [Registry.Gather] sum
// each metric across workers (histograms bucket by bucket) for export.
//
// An [Exporter] publishes a registry. Exporter types register an
// [ExporterInfo] from init() with [Register], with a JSON Schema of their
// options, and are found by [LookupExporter]; the configuration's
// telemetry.exporters names which to start. The built-in "prometheus"
// exporter serves the text exposition format over HTTP, with options host
// (default 127.0.0.1), port (required, 0 picks a free one) and path
// (default /metrics). It spells names the Prometheus way: dots become
// underscores, the unit is appended and counters end in _total, so
// stream.data.sent is stream_data_sent_bytes_total; histograms are
// exported with le bounds 2^(i+1).
//
// Nothing here reads the clock: durations are recorded by the caller, in
// the unit its metric names.
//
// # Usage
//
// At attach time, on the worker:
//
//	labels, err := telemetry.BindingLabels(cfg.Namespace, cfg.Name)
//	if err != nil {
//		return nil, err
//	}
//	m := reg.Worker(w.Index())
//	h.opens = m.Counter(telemetry.StreamOpensReceived, labels)
//	h.active = m.Gauge(telemetry.StreamActiveReceived, labels)
//	h.bytes = m.Counter(telemetry.StreamDataReceived, labels)
//
// Per frame:
//
//	h.opens.Inc()
//	h.active.Inc()
//	h.bytes.Add(int64(len(payload)))
//
// Exporting:
//
//	info, err := telemetry.LookupExporter("prometheus")
//	if err != nil {
//		return err
//	}
//	exp, err := info.New("prometheus0", map[string]any{"port": 9090}, reg)
//	if err != nil {
//		return err // e.g. unknown option "prot"
//	}
//	if err := exp.Start(); err != nil {
//		return err
//	}
//	defer exp.Stop(ctx)
package telemetry
