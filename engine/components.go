package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/sluicehq/sluice/engine/config"
	"github.com/sluicehq/sluice/engine/guard"
	"github.com/sluicehq/sluice/engine/store"
	"github.com/sluicehq/sluice/engine/telemetry"
)

// components are the process-wide stores, guards and exporters of a
// configuration. Workers attach to the stores and guards; the exporters
// read the telemetry registry from their own goroutines.
type components struct {
	stores    map[string]store.Store
	guards    map[string]guard.Guard
	exporters []telemetry.Exporter
}

func options(raw *config.Raw) map[string]any {
	if raw == nil {
		return nil
	}
	m, _ := raw.Value().(map[string]any)
	return m
}

// open creates the configured stores, guards and exporters, and starts the
// exporters.
func (e *Engine) openComponents() error {
	c := &e.components
	c.stores, c.guards = map[string]store.Store{}, map[string]guard.Guard{}
	for _, s := range e.cfg.Stores {
		st, err := store.New(s.Type, s.Name, options(s.Options), store.ClockFunc(e.clock))
		if err != nil {
			return fmt.Errorf("engine: %s: %w", s.Pos, err)
		}
		c.stores[s.Name] = st
	}
	for _, g := range e.cfg.Guards {
		gd, err := guard.New(g.Type, g.Name, options(g.Options), guard.ClockFunc(e.clock))
		if err != nil {
			return fmt.Errorf("engine: %s: %w", g.Pos, err)
		}
		c.guards[g.Name] = gd
	}
	for _, x := range e.cfg.Telemetry.Exporters {
		info, err := telemetry.LookupExporter(x.Type)
		if err != nil {
			return fmt.Errorf("engine: %s: %w", x.Pos, err)
		}
		exp, err := info.New(x.Name, options(x.Options), e.telemetry)
		if err != nil {
			return fmt.Errorf("engine: %s: %w", x.Pos, err)
		}
		if err := exp.Start(); err != nil {
			return fmt.Errorf("engine: exporter %s: %w", x.Name, err)
		}
		c.exporters = append(c.exporters, exp)
		e.log.Info("exporter started", "exporter", x.Name, "type", x.Type, "addr", exp.Addr())
	}
	return nil
}

// closeComponents stops the exporters and closes the guards and stores.
func (e *Engine) closeComponents(ctx context.Context) error {
	c := &e.components
	var errs []error
	for _, x := range c.exporters {
		errs = append(errs, x.Stop(ctx))
	}
	for _, g := range c.guards {
		errs = append(errs, g.Close())
	}
	for _, s := range c.stores {
		errs = append(errs, s.Close())
	}
	c.exporters, c.guards, c.stores = nil, nil, nil
	return errors.Join(errs...)
}

// Telemetry returns the engine's metrics registry.
func (e *Engine) Telemetry() *telemetry.Registry { return e.telemetry }

// attachComponents gives worker w its handlers of every store and guard.
func (w *Worker) attachComponents() {
	for name, s := range w.engine.components.stores {
		w.stores[name] = s.Attach(w)
	}
	for name, g := range w.engine.components.guards {
		w.guards[name] = g.Attach(w)
	}
}

// Store returns this worker's handler of the store configured as name.
// Its callbacks run on this worker.
func (w *Worker) Store(name string) (store.Handler, bool) {
	h, ok := w.stores[name]
	return h, ok
}

// Guard returns this worker's handler of the guard configured as name.
func (w *Worker) Guard(name string) (guard.Handler, bool) {
	h, ok := w.guards[name]
	return h, ok
}

// Metrics returns this worker's telemetry, for bindings' own metrics.
func (w *Worker) Metrics() *telemetry.WorkerMetrics { return w.engine.telemetry.Worker(w.index) }

// BufferPool returns this worker's pool of slots for partial messages.
func (w *Worker) BufferPool() *BufferPool { return w.pool }

// ComponentFragments returns the config schema fragments of every
// registered store, guard and exporter type; binding.Fragments gives the
// bindings'.
func ComponentFragments() []config.Fragment {
	var frags []config.Fragment
	for _, typ := range store.Types() {
		if info, err := store.Lookup(typ); err == nil {
			frags = append(frags, config.Fragment{Kind: "store", Type: typ, Options: info.Schema})
		}
	}
	for _, typ := range guard.Types() {
		if info, err := guard.Lookup(typ); err == nil {
			frags = append(frags, config.Fragment{Kind: "guard", Type: typ, Options: info.Schema})
		}
	}
	for _, typ := range telemetry.ExporterTypes() {
		if info, err := telemetry.LookupExporter(typ); err == nil {
			frags = append(frags, config.Fragment{Kind: "exporter", Type: typ, Options: info.Schema})
		}
	}
	return frags
}
