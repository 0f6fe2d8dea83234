package telemetry

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/sluicehq/sluice/engine/spi"
	"net"
)

// Exporter serves or pushes a [Registry]'s metrics, configured under
// telemetry.exporters.
type Exporter interface {
	// Start begins exporting: for a pull exporter it binds its listener,
	// so that a port conflict is reported here, then serves in the
	// background. An exporter starts at most once.
	Start() error
	// Stop ends exporting and releases what Start acquired; a server
	// finishes the requests in flight unless ctx ends first. Stop before
	// Start, or a second Stop, does nothing.
	Stop(ctx context.Context) error
	// Addr returns the address the exporter listens on once started, with
	// the port the system picked when the configured one was 0; nil before
	// Start or for an exporter that does not listen.
	Addr() net.Addr
}

// ExporterInfo registers an exporter type.
type ExporterInfo struct {
	// Type is the exporter's type in configuration, e.g. "prometheus".
	Type string
	// Schema is the JSON Schema of the exporter's options, for config
	// validation.
	Schema json.RawMessage
	// New returns an exporter named name with the given options (decoded
	// from the configuration) over reg. It has no side effects: nothing is
	// bound until Start. Bad options are reported as an [*OptionError].
	New func(name string, options map[string]any, reg *Registry) (Exporter, error)
}

var exporters = spi.NewRegistry[ExporterInfo]("telemetry", ErrUnknownType)

// Register adds an exporter type. Call it from init(); it panics on an empty
// or duplicate type, a nil New, or a Schema that is not valid JSON.
func Register(info ExporterInfo) {
	if info.Type != "" && info.New == nil {
		panic(fmt.Sprintf("telemetry: Register %q: nil New", info.Type))
	}
	if len(info.Schema) > 0 && !json.Valid(info.Schema) {
		panic(fmt.Sprintf("telemetry: Register %q: schema is not valid JSON", info.Type))
	}
	exporters.Register(info.Type, info)
}

// LookupExporter returns the registration of exporter type typ, or an error
// matching [ErrUnknownType].
func LookupExporter(typ string) (ExporterInfo, error) { return exporters.Lookup(typ) }

// ExporterTypes returns the registered exporter types, sorted.
func ExporterTypes() []string { return exporters.Types() }
