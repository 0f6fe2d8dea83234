package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/sluicehq/sluice/engine/config"
	"github.com/sluicehq/sluice/engine/ring"
	"github.com/sluicehq/sluice/engine/telemetry"
)

// Options configure an Engine.
type Options struct {
	// Workers is the number of workers; 0 means one per CPU.
	Workers int
	// Dir is the engine directory. Each worker's ring is the mmap'd file
	// Dir/data<N>, readable from outside. Empty means rings on the heap.
	Dir string
	// RingCapacity is the data capacity of each worker's ring in bytes, a
	// power of two; 0 (the default) sizes it as Zilla does, to hold its
	// buffer pool: SlotCapacity × BufferSlots (32 MiB), rounded up to a
	// power of two. The ring holds every frame sent to the worker and not
	// yet read, and each stream may have its window of DATA in flight on
	// each hop: a ring sized for a few streams refuses frames when a few
	// hundred large responses cross the gateway at once. Like the pool,
	// its pages are supplied as they are first used.
	RingCapacity int
	// SlotCapacity bounds one frame: the worker's write buffer holds it.
	// It is also the size of a buffer pool slot.
	SlotCapacity int
	// BufferSlots is the number of slots in each worker's buffer pool
	// (1024 by default: 32 MiB of address space per worker, whose pages
	// the OS supplies only as slots are first used).
	BufferSlots int
	// Pin pins each worker's thread to a CPU where the OS allows it and
	// the workers leave at least one CPU free (see Worker.pin).
	Pin bool
	// Timestamps stamps the frames the engine builds with the clock.
	Timestamps bool
	// IdleSpin is how long an idle worker keeps polling before it parks
	// in epoll_wait (0: a few passes only). Parking costs nothing while
	// idle but a wake-up of its thread when work comes, which on a VM,
	// whose idle vCPU the host deschedules, adds hundreds of µs to a
	// request and a wake-up's CPU to each sender; spinning for about an
	// upstream's turnaround trades CPU under light load for latency.
	IdleSpin time.Duration
	// Logger receives the engine's structured logs.
	Logger *slog.Logger
	// Clock is the engine's time source.
	Clock func() time.Time
	// Bindings resolves a binding type to its factory.
	Bindings func(typ string) (Binding, error)
	// External attaches bindings that the configuration names (as an exit)
	// but does not declare, such as a spec script playing app0.
	External map[string]Binding
	// Labels is the label table to use, nil for a new one. A spec runner
	// shares its table so that zilla:id in scripts and the engine agree.
	Labels *Labels
	// Settings are the engine settings by name (see [Setting]), which
	// bindings read when they are provisioned.
	Settings map[string]string
}

// Option sets an Options field.
type Option func(*Options)

// WithWorkers sets the number of workers.
func WithWorkers(n int) Option { return func(o *Options) { o.Workers = n } }

// WithDir sets the engine directory for the mmap'd rings.
func WithDir(dir string) Option { return func(o *Options) { o.Dir = dir } }

// WithRingCapacity sets each worker's ring capacity in bytes.
func WithRingCapacity(n int) Option { return func(o *Options) { o.RingCapacity = n } }

// WithIdleSpin sets how long an idle worker polls before parking.
func WithIdleSpin(d time.Duration) Option { return func(o *Options) { o.IdleSpin = max(d, 0) } }

// WithPin turns CPU pinning on or off.
func WithPin(pin bool) Option { return func(o *Options) { o.Pin = pin } }

// WithLogger sets the logger.
func WithLogger(l *slog.Logger) Option { return func(o *Options) { o.Logger = l } }

// WithClock sets the time source.
func WithClock(clock func() time.Time) Option { return func(o *Options) { o.Clock = clock } }

// WithBufferSlots sets the number of slots in each worker's buffer pool.
func WithBufferSlots(n int) Option { return func(o *Options) { o.BufferSlots = n } }

// WithLabels makes the engine use labels as its label table.
func WithLabels(labels *Labels) Option { return func(o *Options) { o.Labels = labels } }

// WithExternal attaches b under name, a binding the configuration refers
// to without declaring it: the engine-driven spec runner plays such
// bindings from outside the config.
func WithExternal(name string, b Binding) Option {
	return func(o *Options) {
		if o.External == nil {
			o.External = map[string]Binding{}
		}
		o.External[name] = b
	}
}

// WithBindings sets the binding type resolver.
func WithBindings(lookup func(typ string) (Binding, error)) Option {
	return func(o *Options) { o.Bindings = lookup }
}

// Engine runs the workers of one process and the bindings of one
// configuration.
type Engine struct {
	opts     Options
	cfg      *config.Config
	log      *slog.Logger
	clock    func() time.Time
	labels   *Labels
	budgets  *Budgets
	workers  []*Worker
	rings    []*ring.Ring
	ids      map[string]int64
	attached []*attached
	settings map[string]string

	telemetry  *telemetry.Registry
	components components

	mu       sync.Mutex
	started  bool
	stopped  bool
	draining bool
}

type attached struct {
	binding Binding
	cfg     *BindingConfig
	// provisioned: Provision ran and its state awaits Cleanup; guarded
	// by the engine's mutex once the workers run.
	provisioned bool
}

// ErrStopped reports a call on an engine that has stopped.
var ErrStopped = errors.New("engine: stopped")

// New prepares an engine for cfg. Nothing runs until Start.
func New(cfg *config.Config, opts ...Option) (*Engine, error) {
	o := Options{
		Workers:      DefaultWorkers(),
		SlotCapacity: 32 << 10,
		BufferSlots:  1024,
		Pin:          true,
		Timestamps:   true,
		Logger:       slog.Default(),
		Clock:        time.Now,
	}
	for _, opt := range opts {
		opt(&o)
	}
	if o.Workers <= 0 {
		o.Workers = DefaultWorkers()
	}
	if o.RingCapacity <= 0 {
		o.RingCapacity = 1
		// At least 16 slots, so that a whole slot's frame stays under
		// the ring's largest record (an eighth of it).
		for o.RingCapacity < max(o.SlotCapacity*o.BufferSlots, 16*o.SlotCapacity) {
			o.RingCapacity <<= 1
		}
	}
	if o.Workers > MaxWorkers {
		return nil, fmt.Errorf("engine: %d workers: at most %d", o.Workers, MaxWorkers)
	}
	settings, err := checkSettings(o.Settings, o.Logger)
	if err != nil {
		return nil, err
	}
	e := &Engine{
		opts:     o,
		cfg:      cfg,
		log:      o.Logger,
		clock:    o.Clock,
		labels:   o.Labels,
		budgets:  newBudgets(),
		ids:      map[string]int64{},
		settings: settings,
	}
	if e.labels == nil {
		e.labels = NewLabels()
	}
	e.telemetry = telemetry.NewRegistry(o.Workers)
	if cfg == nil {
		cfg = &config.Config{Name: "sluice"}
		e.cfg = cfg
	}
	ns := e.labels.Supply(cfg.Name)
	for _, b := range cfg.Bindings {
		e.ids[b.Name] = BindingID(ns, e.labels.Supply(b.Name))
	}
	external := make([]string, 0, len(o.External))
	for name := range o.External {
		if _, dup := e.ids[name]; dup {
			return nil, fmt.Errorf("engine: external binding %s is also declared in the configuration", name)
		}
		external = append(external, name)
	}
	sort.Strings(external)
	for _, name := range external {
		e.ids[name] = BindingID(ns, e.labels.Supply(name))
	}
	for _, b := range cfg.Bindings {
		if o.Bindings == nil {
			return nil, fmt.Errorf("engine: binding %s: no binding types registered", b.Name)
		}
		factory, err := o.Bindings(b.Type)
		if err != nil {
			return nil, fmt.Errorf("engine: binding %s: %w", b.Name, err)
		}
		bc := &BindingConfig{
			ID:        e.ids[b.Name],
			Namespace: cfg.Name,
			Name:      b.Name,
			Type:      b.Type,
			Kind:      b.Kind,
			TypeID:    e.labels.Supply(b.Type),
			Config:    b,
		}
		if b.Exit != "" {
			bc.ExitID = e.ids[b.Exit]
		}
		e.attached = append(e.attached, &attached{binding: factory, cfg: bc})
	}
	for _, name := range external {
		b := &config.Binding{Name: name, Type: "external", Kind: "external"}
		e.attached = append(e.attached, &attached{binding: o.External[name], cfg: &BindingConfig{
			ID: e.ids[name], Namespace: cfg.Name, Name: name, Type: b.Type, Kind: b.Kind,
			TypeID: e.labels.Supply(b.Type), Config: b,
		}})
	}
	e.attached = exitsFirst(e.attached, e.ids)
	return e, nil
}

// exitsFirst orders bindings so that each is attached after every binding
// its exit and routes lead to. A binding such as a tcp server accepts
// connections as soon as it is attached; attached before the bindings
// behind it, its first streams would be refused by a worker that does not
// know them yet. Bindings in a cycle keep their configured order.
func exitsFirst(list []*attached, ids map[string]int64) []*attached {
	byID := make(map[int64]*attached, len(list))
	for _, a := range list {
		byID[a.cfg.ID] = a
	}
	const (
		unseen = iota
		visiting
		done
	)
	state := make(map[*attached]int, len(list))
	out := make([]*attached, 0, len(list))
	var visit func(a *attached)
	visit = func(a *attached) {
		if state[a] != unseen {
			return // done, or a cycle: keep the order we have
		}
		state[a] = visiting
		if next, ok := byID[a.cfg.ExitID]; ok && a.cfg.ExitID != 0 {
			visit(next)
		}
		if a.cfg.Config != nil {
			for _, r := range a.cfg.Config.Routes {
				if next, ok := byID[ids[r.Exit]]; ok {
					visit(next)
				}
			}
		}
		state[a] = done
		out = append(out, a)
	}
	for _, a := range list {
		visit(a)
	}
	return out
}

// Labels returns the engine's label table.
func (e *Engine) Labels() *Labels { return e.labels }

// Workers returns the number of workers.
func (e *Engine) Workers() int { return e.opts.Workers }

// Catalog reports whether the namespace declares a catalog called name.
func (e *Engine) Catalog(name string) bool { return e.cfg.Catalog(name) != nil }

// Worker returns worker i.
func (e *Engine) Worker(i int) *Worker { return e.workers[i] }

// Budgets returns the shared credit pools.
func (e *Engine) Budgets() *Budgets { return e.budgets }

// Dir returns the engine directory, "" when the rings live on the heap.
func (e *Engine) Dir() string { return e.opts.Dir }

// BindingNames returns the configured binding names, sorted.
func (e *Engine) BindingNames() []string {
	names := make([]string, 0, len(e.ids))
	for n := range e.ids {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func (e *Engine) resolveID(name string) (int64, bool) {
	id, ok := e.ids[name]
	return id, ok
}

// ResolveID returns the id of the binding named name.
func (e *Engine) ResolveID(name string) (int64, bool) { return e.resolveID(name) }

// Start creates the rings, starts the workers, provisions every binding
// whose factory is a [Provisioner], then attaches every binding to every
// worker. On error nothing is left running and what was provisioned is
// cleaned up.
func (e *Engine) Start() (err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.started {
		return errors.New("engine: already started")
	}
	e.started = true
	defer func() {
		if err != nil {
			e.shutdown()
		}
	}()
	if e.opts.Dir != "" {
		if err := os.MkdirAll(e.opts.Dir, 0o755); err != nil {
			return fmt.Errorf("engine: %w", err)
		}
	}
	if err := e.openComponents(); err != nil {
		return err
	}
	for i := 0; i < e.opts.Workers; i++ {
		var r *ring.Ring
		var err error
		if e.opts.Dir != "" {
			r, err = ring.Map(filepath.Join(e.opts.Dir, fmt.Sprintf("data%d", i)), e.opts.RingCapacity)
		} else {
			r, err = ring.NewHeap(e.opts.RingCapacity)
		}
		if err != nil {
			return fmt.Errorf("engine: ring of worker %d: %w", i, err)
		}
		e.rings = append(e.rings, r)
		w, err := newWorker(e, i, r)
		if err != nil {
			return err
		}
		e.workers = append(e.workers, w)
	}
	for _, w := range e.workers {
		ready := make(chan error, 1)
		w.running = true
		go w.run(ready)
		if err := <-ready; err != nil {
			return err
		}
	}
	if err := e.onEachWorker(func(w *Worker) error { w.attachComponents(); return nil }); err != nil {
		return err
	}
	for _, a := range e.attached {
		if err := e.provision(a); err != nil {
			return err
		}
	}
	for _, a := range e.attached {
		if err := e.onEachWorker(func(w *Worker) error { return w.attach(a.binding, a.cfg) }); err != nil {
			return err
		}
		e.log.Info("binding attached", "namespace", a.cfg.Namespace, "binding", a.cfg.Name,
			"type", a.cfg.Type, "kind", a.cfg.Kind, "workers", len(e.workers))
	}
	return nil
}

// provision runs a's Provisioner, if its factory is one, and keeps the
// state for the workers' Attach.
func (e *Engine) provision(a *attached) error {
	p, ok := a.binding.(Provisioner)
	if !ok {
		return nil
	}
	state, err := p.Provision(e, a.cfg)
	if err != nil {
		// The shape of an Attach error: the binding, then its own words.
		return fmt.Errorf("%s.%s: %w", a.cfg.Namespace, a.cfg.Name, err)
	}
	a.cfg.state, a.provisioned = state, true
	return nil
}

// cleanup runs the Cleanup of a's provisioned state, once, after every
// worker has detached a. The caller holds the engine's mutex.
func (e *Engine) cleanup(a *attached) error {
	if !a.provisioned {
		return nil
	}
	a.provisioned = false
	c, ok := a.cfg.state.(CleanerUpper)
	if !ok {
		return nil
	}
	if err := c.Cleanup(); err != nil {
		return fmt.Errorf("%s.%s: cleanup: %w", a.cfg.Namespace, a.cfg.Name, err)
	}
	return nil
}

// onEachWorker runs fn on every worker's thread and waits for all of them.
func (e *Engine) onEachWorker(fn func(w *Worker) error) error {
	errs := make([]error, len(e.workers))
	var wg sync.WaitGroup
	for i, w := range e.workers {
		wg.Add(1)
		w.Dispatch(func() {
			defer wg.Done()
			errs[i] = fn(w)
		})
	}
	wg.Wait()
	// A configuration error fails on every worker alike: report it once.
	seen := map[string]bool{}
	kept := errs[:0]
	for _, err := range errs {
		if err != nil && !seen[err.Error()] {
			seen[err.Error()] = true
			kept = append(kept, err)
		}
	}
	return errors.Join(kept...)
}

// Execute runs fn on worker i's thread and waits for it.
func (e *Engine) Execute(i int, fn func(w *Worker)) error {
	e.mu.Lock()
	stopped := e.stopped
	e.mu.Unlock()
	if stopped {
		return ErrStopped
	}
	done := make(chan struct{})
	e.workers[i].Dispatch(func() {
		defer close(done)
		fn(e.workers[i])
	})
	<-done
	return nil
}

// Detach detaches the binding named name from every worker: its open
// streams are sent ABORT and RESET and it receives no new ones.
func (e *Engine) Detach(name string) error {
	id, ok := e.ids[name]
	if !ok {
		return fmt.Errorf("%w: %q", ErrUnknownBinding, name)
	}
	if err := e.onEachWorker(func(w *Worker) error {
		w.detach(id)
		return nil
	}); err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, a := range e.attached {
		if a.cfg.ID == id {
			return e.cleanup(a)
		}
	}
	return nil
}

// drainPoll is how often Drain asks the workers whether their handlers
// are done.
const drainPoll = 10 * time.Millisecond

// Drain lets the work in flight finish before a Stop: every worker calls
// Drain on each of its handlers that is a [Drainer] (once, however often
// Drain is called), then Drain waits until all of them report Drained or
// ctx is done, whose error it then returns. What is still open when it
// returns is aborted by Stop. Zilla's engine has no such step: its close
// aborts the open streams at once, as Stop does.
func (e *Engine) Drain(ctx context.Context) error {
	e.mu.Lock()
	if e.stopped || !e.started {
		e.mu.Unlock()
		return ErrStopped
	}
	if !e.draining {
		e.draining = true
		_ = e.onEachWorker(func(w *Worker) error { w.drain(); return nil })
	}
	e.mu.Unlock()
	tick := time.NewTicker(drainPoll)
	defer tick.Stop()
	for {
		drained, err := e.drained()
		if err != nil || drained {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("engine: drain: %w", context.Cause(ctx))
		case <-tick.C:
		}
	}
}

// drained reports whether every worker's drainers are done.
func (e *Engine) drained() (bool, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stopped {
		return false, ErrStopped
	}
	busy := errors.New("busy")
	err := e.onEachWorker(func(w *Worker) error {
		if !w.drained() {
			return busy
		}
		return nil
	})
	return err == nil, nil
}

// Stop stops the workers: each detaches its bindings (aborting their open
// streams), the provisioned bindings are cleaned up, and the rings are
// unmapped. It waits until ctx is done for the
// workers to finish.
func (e *Engine) Stop(ctx context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stopped {
		return nil
	}
	return e.stopWorkers(ctx)
}

func (e *Engine) stopWorkers(ctx context.Context) error {
	e.stopped = true
	for _, w := range e.workers {
		w.stopping.Store(true)
		w.poller.wake()
	}
	for _, w := range e.workers {
		if !w.running {
			_ = w.poller.close()
			continue
		}
		select {
		case <-w.done:
		case <-ctx.Done():
			return fmt.Errorf("engine: stop: worker %d: %w", w.index, ctx.Err())
		}
	}
	var errs []error
	for _, w := range e.workers {
		if w.running {
			errs = append(errs, w.poller.close())
		}
	}
	// Every worker has detached every binding: provisioned states go, in
	// the reverse of the order they came.
	for i := len(e.attached) - 1; i >= 0; i-- {
		errs = append(errs, e.cleanup(e.attached[i]))
	}
	for _, r := range e.rings {
		errs = append(errs, r.Close())
	}
	errs = append(errs, e.closeComponents(ctx))
	return errors.Join(errs...)
}

// shutdown undoes a failed Start.
func (e *Engine) shutdown() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := e.stopWorkers(ctx); err != nil {
		e.log.Error("engine shutdown", "err", err)
	}
}

// String describes the engine for logs.
func (e *Engine) String() string {
	return fmt.Sprintf("engine{namespace=%s workers=%d bindings=%s}", e.cfg.Name, e.opts.Workers,
		strings.Join(e.BindingNames(), ","))
}
