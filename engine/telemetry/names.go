package telemetry

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Kind is the kind of a metric.
type Kind uint8

// The metric kinds.
const (
	KindCounter Kind = iota + 1
	KindGauge
	KindHistogram
)

var kindNames = [...]string{KindCounter: "counter", KindGauge: "gauge", KindHistogram: "histogram"}

func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return fmt.Sprintf("UNKNOWN_KIND_%d", uint8(k))
}

// Unit is the unit of a metric's values, used by exporters to name it (a
// Prometheus counter of bytes is exported as name_bytes_total). The empty
// unit is a plain count.
type Unit string

// The units of the described metrics. Any other identifier is a valid Unit
// too; values are int64s, so a duration is best recorded in a fine unit
// such as Unit("nanoseconds").
const (
	UnitNone  Unit = ""
	UnitBytes Unit = "bytes"
	// UnitMilliseconds records a duration in whole milliseconds; the
	// Prometheus exporter publishes it in seconds, Prometheus's base unit.
	UnitMilliseconds Unit = "milliseconds"
)

// Description describes a known metric name.
type Description struct {
	Name string // dotted, as Zilla names it: stream.opens.sent
	Kind Kind
	Unit Unit
	Help string
}

// The stream metrics, recorded on every stream by the engine, with Zilla's
// names (StreamMetricGroup): "received" counts the streams a binding
// accepts, "sent" the streams it opens.
const (
	StreamOpensSent      = "stream.opens.sent"
	StreamOpensReceived  = "stream.opens.received"
	StreamClosesSent     = "stream.closes.sent"
	StreamClosesReceived = "stream.closes.received"
	StreamErrorsSent     = "stream.errors.sent"
	StreamErrorsReceived = "stream.errors.received"
	StreamDataSent       = "stream.data.sent"
	StreamDataReceived   = "stream.data.received"
	StreamActiveSent     = "stream.active.sent"
	StreamActiveReceived = "stream.active.received"
)

func init() {
	Describe(StreamOpensSent, KindCounter, UnitNone, "The number of opened sent streams.")
	Describe(StreamOpensReceived, KindCounter, UnitNone, "The number of opened received streams.")
	Describe(StreamClosesSent, KindCounter, UnitNone, "The number of closed sent streams.")
	Describe(StreamClosesReceived, KindCounter, UnitNone, "The number of closed received streams.")
	Describe(StreamErrorsSent, KindCounter, UnitNone, "The number of errors on sent streams.")
	Describe(StreamErrorsReceived, KindCounter, UnitNone, "The number of errors on received streams.")
	Describe(StreamDataSent, KindCounter, UnitBytes, "The count of bytes of data on sent streams.")
	Describe(StreamDataReceived, KindCounter, UnitBytes, "The count of bytes of data on received streams.")
	Describe(StreamActiveSent, KindGauge, UnitNone, "The number of currently active sent streams.")
	Describe(StreamActiveReceived, KindGauge, UnitNone, "The number of currently active received streams.")
}

var descriptions = struct {
	sync.RWMutex
	m map[string]Description
}{m: make(map[string]Description)}

// Describe adds name to the table of known metrics, with its kind, unit and
// help text. Packages that define metrics (the engine's stream.*, the http
// and mcp bindings' http.* and mcp.*) call it from init(). It panics on an
// invalid name or kind, or a name already described.
//
// A [Registry] creates metrics of undescribed names too, taking their kind
// from first use; describing them gives exporters the help text and unit and
// catches a metric used with the wrong kind.
func Describe(name string, kind Kind, unit Unit, help string) {
	if err := checkName(name); err != nil {
		panic(err)
	}
	if kind < KindCounter || kind > KindHistogram {
		panic(fmt.Sprintf("telemetry: Describe %q: invalid kind %d", name, kind))
	}
	if unit != UnitNone && !isIdent(string(unit)) {
		panic(fmt.Sprintf("telemetry: Describe %q: invalid unit %q", name, unit))
	}
	descriptions.Lock()
	defer descriptions.Unlock()
	if _, dup := descriptions.m[name]; dup {
		panic(fmt.Sprintf("telemetry: Describe %q: already described", name))
	}
	descriptions.m[name] = Description{Name: name, Kind: kind, Unit: unit, Help: help}
}

// LookupDescription returns the description of name, and whether it has one.
func LookupDescription(name string) (Description, bool) {
	descriptions.RLock()
	defer descriptions.RUnlock()
	d, ok := descriptions.m[name]
	return d, ok
}

// Descriptions returns every described metric, sorted by name.
func Descriptions() []Description {
	descriptions.RLock()
	defer descriptions.RUnlock()
	ds := make([]Description, 0, len(descriptions.m))
	for _, d := range descriptions.m {
		ds = append(ds, d)
	}
	slices.SortFunc(ds, func(a, b Description) int { return strings.Compare(a.Name, b.Name) })
	return ds
}

// checkName reports whether name is a valid metric name: dot-separated
// segments of [a-zA-Z_][a-zA-Z0-9_]*, so that every exporter can spell it
// (Prometheus replaces the dots with underscores).
func checkName(name string) error {
	if name == "" {
		return fmt.Errorf("%w: empty", ErrInvalidName)
	}
	for seg := range strings.SplitSeq(name, ".") {
		if !isIdent(seg) {
			return fmt.Errorf("%w: %q: want dot-separated [a-zA-Z_][a-zA-Z0-9_]* segments", ErrInvalidName, name)
		}
	}
	return nil
}
