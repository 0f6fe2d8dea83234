package engine

import (
	"github.com/sluicehq/sluice/engine/config"
	"github.com/sluicehq/sluice/engine/frame"
)

// MessageConsumer receives the frames of one stream: the frames running in
// its direction, or the throttle frames running against it. buf holds
// exactly one frame and is valid only during the call: do not retain it.
type MessageConsumer func(t frame.FrameType, buf []byte)

// Binding is one binding type's process-wide factory. The engine attaches
// each configured binding of that type to every worker.
type Binding interface {
	// Attach prepares cfg on worker w and returns its handler. It runs on
	// w's thread before any frame for the binding arrives.
	Attach(w *Worker, cfg *BindingConfig) (Handler, error)
}

// Provisioner is implemented by a Binding whose configured bindings keep
// state that the binding's handlers on every worker of one engine share
// (compiled options, tables). A factory is process-wide and serves every
// engine of the process, so that state cannot live in the factory. The
// engine calls Provision once per configured binding, after the workers
// have started and before any of them attaches the binding, and hands
// its result to every worker's Attach as [BindingConfig.State]. An error
// fails [Engine.Start], naming the binding.
type Provisioner interface {
	Provision(e *Engine, cfg *BindingConfig) (any, error)
}

// CleanerUpper is implemented by a provisioned state that holds resources.
// The engine calls Cleanup once, after every worker has detached the
// binding: on [Engine.Detach], or on [Engine.Stop] once the workers have
// finished (not when Stop gives up waiting for them). Its error is
// returned by the call that detached the binding.
type CleanerUpper interface {
	Cleanup() error
}

// Handler is a binding attached to one worker.
type Handler interface {
	// NewStream is offered each initial BEGIN routed to the binding. It
	// returns the consumer of the stream's initial frames and of the
	// throttle frames of its reply, or nil to refuse the stream, which the
	// engine answers with RESET. The consumer then receives that BEGIN.
	NewStream(t frame.FrameType, buf []byte) MessageConsumer
}

// Detacher is implemented by handlers that release resources (listeners,
// timers) when their binding is detached. Open streams have already been
// sent ABORT and RESET by then.
type Detacher interface {
	Detach()
}

// Drainer is implemented by handlers that can finish the work in flight
// before the engine stops ([Engine.Drain]). Drain runs once, on the
// worker's thread: the handler takes no new work (a server closes its
// listening sockets) and closes each of its streams once what it carries
// is done. Drained, also on the worker's thread, reports whether nothing
// the handler drains is left open.
type Drainer interface {
	Drain()
	Drained() bool
}

// BindingConfig is a configured binding as a worker sees it, with its names
// resolved to ids.
type BindingConfig struct {
	ID        int64  // namespace<<32 | binding label id
	Namespace string // the config's name
	Name      string
	Type      string
	Kind      string
	TypeID    int32 // label id of Type, the extensions' typeId
	ExitID    int64 // the id of the binding named by exit, 0 when none
	Config    *config.Binding

	state any // what the binding's Provisioner returned
}

// State returns what the binding's [Provisioner] returned for this engine,
// nil when its factory is none.
func (c *BindingConfig) State() any { return c.state }

// Routes returns the configured routes.
func (c *BindingConfig) Routes() []*config.Route { return c.Config.Routes }

// Options returns the binding's raw options, nil when absent.
func (c *BindingConfig) Options() *config.Raw { return c.Config.Options }
