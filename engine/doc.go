// Package engine is the Sluice runtime: workers, rings, streams and flow
// control.
//
// A configuration wires bindings (tcp, http, mcp, …) into a pipeline. The
// bindings never call each other: a binding writes a frame into the inbound
// ring of the worker that owns the target stream, and that worker's loop
// dispatches the frame to the stream's handler. Each binding is therefore a
// single-threaded state machine per stream, driven only by frames. The frame
// layout, type ids and stream-id scheme are Zilla's (ARCHITECTURE.md §3), so
// Zilla's wire-order scripts read the same against Sluice.
//
// An [Engine] is built from a loaded configuration and a binding resolver,
// then started; every configured binding is attached to every [Worker]:
//
//	e, err := engine.New(cfg, engine.WithWorkers(2), engine.WithBindings(binding.Factory))
//	err = e.Start()
//	defer e.Stop(ctx)
//
// A binding implements [Binding] (its per-worker Attach) and [Handler]
// (NewStream, offered each initial BEGIN routed to it). Handlers write
// frames with [Worker.Send] and open streams of their own with
// [Worker.NewStream]; both copy the frame into the ring of the worker that
// serves the stream, even when that is the same worker. [Worker.Claim]
// is the zero-copy alternative: it reserves room for a frame in that ring,
// where the binding writes it in place (a socket read goes straight into a
// DATA payload) and publishes it with [FrameClaim.Commit]. A NewStream that
// would only relay a stream unchanged to another binding can hand it over
// instead with [Worker.Forward]: the other binding then serves the stream
// as if it had been routed there, and the relaying stream is never made.
//
// A binding keeps its side of each stream in a [Stream], set up by
// [Stream.Accept] for a stream routed to it or [Stream.Connect] for one it
// opens. Its senders ([Stream.Begin], [Stream.Data], [Stream.End],
// [Stream.Window], [Stream.Reset], …) build each frame with builders the
// worker shares and keep the direction's flow and open/closed state; its
// receive helpers ([Stream.OnData], [Stream.OnWindow], …) check and record
// what arrives. A second END or ABORT sends nothing, and a frame the ring
// refuses closes its direction.
//
// # Binding lifecycle
//
// A binding type's factory is process-wide: every engine of the process
// (tests run several at once) shares it. A configured binding goes
// through these steps on each engine:
//
//  1. The factory comes from the binding registry; making it has no side
//     effects.
//  2. Provision, when the factory is a [Provisioner]: once per engine,
//     after the workers start and before any of them attaches the
//     binding. What it returns is the engine's instance of the binding,
//     the state its handlers on every worker share ([BindingConfig.State]).
//  3. Attach, on every worker's thread, returns the worker's [Handler].
//  4. NewStream, on the worker, for each initial BEGIN routed to it.
//  5. Drain, on every worker, when the engine drains before it stops
//     ([Engine.Drain]) and the handler is a [Drainer]: it takes no new
//     work and closes its streams as what they carry is done. Zilla has
//     no such step (its engine aborts the open streams when it closes);
//     Sluice drains so that SIGTERM does not cut requests in flight.
//  6. Detach, on every worker, when the binding is detached or the engine
//     stops: its open streams are aborted, then a [Detacher] handler
//     releases what it holds.
//  7. Cleanup, when the provisioned state is a [CleanerUpper]: once, after
//     every worker has detached the binding.
//
// Engine settings ([WithSetting], [Engine.Setting]) are name=value pairs
// beside the configuration that a binding reads when it is provisioned, as
// Zilla's bindings read its engine configuration properties: ids a test
// fixes, timeouts. Bindings declare theirs with [RegisterSetting]; [New]
// refuses a name no binding declares.
//
// # Streams and frames
//
// A stream has two directions. The initial direction runs from the initiator
// to the target and the reply direction runs back. Every direction goes
// through the same lifecycle:
//
//  1. BEGIN opens the direction. It carries the routing ids and a typed
//     extension (for example the HTTP headers or the MCP request kind).
//  2. DATA carries payload bytes, charged against the receiver's window.
//     FLUSH moves the stream forward without payload, to send an extension
//     or to push a deferred BEGIN out.
//  3. END closes the direction in order; ABORT closes it abruptly. Either
//     one retires the stream handler for that direction.
//
// Throttle frames travel against the data, on the same stream id:
//
//   - WINDOW grants the sender credit.
//   - RESET refuses the direction and retires its throttle handler. A
//     receiver that RESETs the initial direction before it has begun the
//     reply gives the reply up as well: the engine forgets the reply on
//     both sides. To answer a refused request (a 413, say), begin the
//     reply first, then RESET.
//   - CHALLENGE asks the sender to act, for example to authorize again.
//   - SIGNAL is raised by the engine itself to deliver a due timer or the
//     completion of asynchronous work back on the stream's worker.
//
// # Flow control
//
// Each direction tracks sequence, acknowledge, maximum and padding. A
// sender may write while sequence - acknowledge + reserved <= maximum, and
// every DATA reserves its length plus the padding.
//
// Flow control bounds each stream, not the sum of all streams: a few
// hundred streams each with its window of DATA on each hop can outgrow a
// worker's ring. Rings are sized as Zilla sizes them, to hold the worker's
// buffer pool (32 MiB by default), and a frame a full ring refuses waits
// in the sender's backlog, per target worker and in order, until the ring
// drains (backlog.go); Claim refuses while frames for its target wait, so
// it cannot pass them. Only when the backlog too is full (twice the ring)
// does Send fail with ring.ErrFull, and each of the two conditions is a
// warning in the log, at most once a second per worker. A ring never
// blocks and never drops a frame it took.
//
// # Stream ids
//
// Stream ids are int64 values with a fixed layout:
//
//   - Initial ids are odd; the reply id is replyID = initialID &^ 1.
//   - Bits 62..56 hold the worker that allocated the id and bits 54..48 the
//     target worker the initial stream is delivered to.
//   - Stream id 0 is reserved for system messages.
//
// # Workers
//
// There are N workers (sluice start -w, by default one per CPU). Each is a
// goroutine locked to its OS thread and pinned to a CPU where the OS allows
// it and the workers leave a CPU free, and owns an inbound ring, an epoll poller for the sockets it serves, a
// timer wheel ([Worker.SignalAt], [Worker.TimerAt]) and a [BufferPool], so
// the hot path needs no locks and allocates nothing. Its loop polls sockets,
// fires due timers, drains its ring in bounded batches and runs the
// functions other goroutines handed it with [Worker.Dispatch]; when idle it
// spins, yields, then parks in epoll_wait. A producer writes the worker's
// eventfd only when it sees the worker parked, so a busy pipeline makes no
// wake-up syscalls.
//
// # Components
//
// Configured stores, guards and telemetry exporters are created once per
// process; each worker attaches to the stores and guards ([Worker.Store],
// [Worker.Guard]), whose asynchronous completions come back through
// Dispatch. Every binding's streams are counted per worker (opens, closes,
// errors, bytes and active streams, each way) in [Engine.Telemetry].
package engine
