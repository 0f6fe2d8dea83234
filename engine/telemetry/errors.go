package telemetry

import (
	"errors"
	"fmt"
)

var (
	// ErrUnknownType is returned by [LookupExporter] for an exporter type
	// that no package registered.
	ErrUnknownType = errors.New("telemetry: unknown exporter type")

	// ErrUnknownOption is returned when an exporter's options hold a key
	// its type does not define; options are strict, like the rest of the
	// configuration.
	ErrUnknownOption = errors.New("telemetry: unknown option")

	// ErrInvalidOption is returned when a known option is missing or has
	// the wrong shape, for example a port out of range.
	ErrInvalidOption = errors.New("telemetry: invalid option")

	// ErrInvalidLabels is returned by [NewLabels] for a malformed set.
	ErrInvalidLabels = errors.New("telemetry: invalid labels")

	// ErrInvalidName reports a metric name that is not dot-separated
	// identifiers. [Describe] and [WorkerMetrics] panic with it: metric
	// names are constants in code, not configuration.
	ErrInvalidName = errors.New("telemetry: invalid metric name")

	// ErrStarted is returned by an exporter's Start when it is already
	// running, or has been stopped (an exporter starts at most once).
	ErrStarted = errors.New("telemetry: exporter already started")
)

// OptionError is an exporter configuration error: the exporter's name and
// type, the option at fault and why. It matches [ErrUnknownOption] or
// [ErrInvalidOption] with errors.Is.
type OptionError struct {
	Exporter string // the configured name, e.g. prometheus0
	Type     string // the exporter type, e.g. prometheus
	Option   string
	Reason   string // empty for an unknown option
	Err      error  // ErrUnknownOption or ErrInvalidOption
}

func (e *OptionError) Error() string {
	if e.Err == ErrUnknownOption {
		return fmt.Sprintf("telemetry: exporter %q (%s): unknown option %q", e.Exporter, e.Type, e.Option)
	}
	return fmt.Sprintf("telemetry: exporter %q (%s): option %q: %s", e.Exporter, e.Type, e.Option, e.Reason)
}

func (e *OptionError) Unwrap() error { return e.Err }
