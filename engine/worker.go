package engine

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sluicehq/sluice/engine/frame"
	"github.com/sluicehq/sluice/engine/guard"
	"github.com/sluicehq/sluice/engine/ring"
	"github.com/sluicehq/sluice/engine/store"
	"github.com/sluicehq/sluice/engine/telemetry"
)

// Idle strategy (ZILLA.md §8 "Backoff"): spin, then park in epoll_wait
// until a producer, a socket or the next timer's deadline wakes the
// worker. Zilla's backoff also yields between spinning and parking; a Go
// worker cannot yield cheaply: its goroutine is locked to its thread, so
// runtime.Gosched hands the P to another thread and back through futexes
// (with 64 yields per idle spell, a gateway under light load spent most of
// its CPU in futex calls).
const (
	idleSpins = 64
	// idleSpinsAlone is the spin of a worker that has no other worker to
	// wait for: only its own sockets and timers, which epoll reports as
	// well, and dispatched tasks, which wake it, can give it work.
	idleSpinsAlone = 4
	// pollEvery is how often an idle worker's spin polls its sockets.
	pollEvery = 8
	// readBatch bounds the records drained per loop pass, so sockets and
	// timers are served even under a flood of frames.
	readBatch = 256
	// expireBatch bounds the timers fired per loop pass.
	expireBatch = 256
	// timerTick is the resolution of the timer wheel.
	timerTick = time.Millisecond
)

// entry is a registered stream or throttle handler and the binding that
// owns it, so that detaching the binding can close it.
type entry struct {
	fn      MessageConsumer
	owner   int64
	metrics *streamMetrics
}

// Worker is one engine thread: it owns an inbound ring, an epoll poller,
// a timer wheel and the handlers of the streams it serves. Every method
// except Dispatch and Index must be called on the worker's own thread, that
// is from a MessageConsumer, a Handler, a timer or a dispatched function.
type Worker struct {
	index  int
	engine *Engine
	ring   *ring.Ring
	poller *poller
	timers *timerWheel
	spins  int // idle passes before parking
	log    *slog.Logger

	running  bool // set by Start before the loop runs
	parked   atomic.Bool
	stopping atomic.Bool
	done     chan struct{}
	// lastRefused and lastBacklogWarn are when refused and backlogWarn
	// last warned.
	lastRefused, lastBacklogWarn time.Time
	// backlogs holds, per target worker, frames its full ring refused;
	// backlogged is their bytes in all (backlog.go).
	backlogs   []backlog
	backlogged int

	streams   streamTable
	throttles streamTable
	// bound holds the attached bindings by id; byLabel indexes the same
	// by the binding's label (the id's low 32 bits, small integers), so
	// that the lookups of every BEGIN and sent frame skip the map. Two
	// namespaces may attach bindings of one name: the second is found
	// through bound.
	bound   map[int64]*boundBinding
	byLabel []*boundBinding
	stores  map[string]store.Handler
	guards  map[string]guard.Handler
	pool    *BufferPool

	streamCounter int64
	traceCounter  int64
	budgetCounter int64
	cancelCounter int64

	taskMu  sync.Mutex
	tasks   []func()
	spare   []func()
	pending atomic.Int32

	// forwardTo is the binding an initial BEGIN was last handed to by
	// Forward, while handleBeginInitial asks for its consumer; forwards
	// counts the hand-overs of that BEGIN so far.
	forwardTo *boundBinding
	forwards  int

	writeBuf []byte
	frames   streamFrames // the builders of every Stream served here
	header   frame.Frame
	forward  frame.Frame
	signal   frame.SignalBuilder
	reset    frame.ResetBuilder
	abort    frame.AbortBuilder
	readFn   func(int32, []byte)
}

// ErrUnknownBinding reports a frame or stream for a binding that is not
// attached to the worker.
var ErrUnknownBinding = errors.New("engine: unknown binding")

func newWorker(e *Engine, index int, r *ring.Ring) (*Worker, error) {
	p, err := newPoller()
	if err != nil {
		return nil, err
	}
	spins := idleSpins
	if e.opts.Workers == 1 {
		spins = idleSpinsAlone
	}
	w := &Worker{
		index:     index,
		engine:    e,
		ring:      r,
		poller:    p,
		timers:    newTimerWheel(timerTick, e.clock()),
		spins:     spins,
		log:       e.log.With("worker", index),
		done:      make(chan struct{}),
		streams:   newStreamTable(index),
		throttles: newStreamTable(index),
		bound:     map[int64]*boundBinding{},
		stores:    map[string]store.Handler{},
		guards:    map[string]guard.Handler{},
		pool:      newBufferPool(e.opts.BufferSlots, e.opts.SlotCapacity),
		writeBuf:  make([]byte, e.opts.SlotCapacity+1024),
		backlogs:  make([]backlog, e.opts.Workers),
	}
	w.readFn = w.handleRead
	return w, nil
}

// Index returns the worker's index, 0 to Workers-1.
func (w *Worker) Index() int { return w.index }

// Engine returns the engine the worker belongs to.
func (w *Worker) Engine() *Engine { return w.engine }

// Logger returns the engine's logger with the worker's index attached,
// for bindings to log their lifecycle events with.
func (w *Worker) Logger() *slog.Logger { return w.log }

// WriteBuffer returns the worker's scratch buffer for building frames
// before Send copies them into a ring. It is reused by every call.
func (w *Worker) WriteBuffer() []byte { return w.writeBuf }

// Labels returns the process-wide label table.
func (w *Worker) Labels() *Labels { return w.engine.labels }

// Now returns the engine clock's time.
func (w *Worker) Now() time.Time { return w.engine.clock() }

// SupplyInitialID allocates an initial stream id for a stream to the
// binding routedID. The stream lands on this worker (ZILLA.md §3: "prefer
// the local worker").
func (w *Worker) SupplyInitialID(routedID int64) int64 {
	return w.SupplyInitialIDOn(w.index)
}

// SupplyInitialIDOn allocates an initial stream id whose stream is served
// by worker target.
func (w *Worker) SupplyInitialIDOn(target int) int64 {
	w.streamCounter += 2
	return streamID(w.index, target, w.streamCounter)
}

// SupplyTraceID allocates a trace id.
func (w *Worker) SupplyTraceID() int64 {
	w.traceCounter++
	return int64(w.index)<<clientShift | w.traceCounter&counterMask
}

// SupplyBudgetID allocates a budget id owned by this worker.
func (w *Worker) SupplyBudgetID() int64 {
	w.budgetCounter++
	return int64(w.index)<<clientShift | w.budgetCounter&counterMask
}

// ResolveID returns the id of the binding named name in the worker's
// namespace.
func (w *Worker) ResolveID(name string) (int64, bool) {
	return w.engine.resolveID(name)
}

// NewStream opens a stream from this worker. buf holds the initial BEGIN,
// whose stream id came from SupplyInitialID; sender receives the reply
// frames and the throttle frames of the initial direction.
func (w *Worker) NewStream(buf []byte, sender MessageConsumer) error {
	if !w.header.TryWrap(buf, 0, len(buf)) {
		return errors.New("engine: new stream: malformed BEGIN")
	}
	id := w.header.StreamID()
	if !IsInitial(id) || ClientIndex(id) != w.index {
		return fmt.Errorf("engine: new stream: id %#x was not allocated by worker %d", id, w.index)
	}
	owner := w.header.OriginID()
	if err := w.Send(frame.FrameBegin, buf); err != nil {
		return err
	}
	m := w.bindingMetrics(owner)
	w.throttles.put(id, entry{fn: sender, owner: owner, metrics: m})
	w.streams.put(ReplyID(id), entry{fn: sender, owner: owner, metrics: m})
	m.openedSent()
	return nil
}

// Send writes one frame into the ring of the worker that serves its
// stream. A full ring refuses the frame with ring.ErrFull.
func (w *Worker) Send(t frame.FrameType, buf []byte) error {
	if len(buf) < frame.HeaderSize {
		return errors.New("engine: send: frame shorter than its header")
	}
	if !w.header.TryWrap(buf, 0, len(buf)) {
		return errors.New("engine: send: malformed frame")
	}
	id := w.header.StreamID()
	throttle := t.IsThrottle()
	target := w.engine.workers[targetIndex(id, throttle)]
	if !w.backlogs[target.index].empty() {
		// Frames for target wait already: this one goes after them.
		if !w.enqueue(target, t, buf) {
			w.refused(target, ring.ErrFull)
			return ring.ErrFull
		}
	} else if err := target.ring.Write(int32(t), buf); err != nil {
		if !errors.Is(err, ring.ErrFull) || !w.enqueue(target, t, buf) {
			w.refused(target, err)
			return err
		}
	} else if target.parked.Load() {
		target.poller.wake()
	}
	w.bindingMetrics(senderID(id, w.header.OriginID(), w.header.RoutedID(), throttle)).sent(t, buf)
	w.afterSend(t, id)
	return nil
}

// refused reports a frame that neither the target's ring nor the sender's
// backlog took: a warning at most once a second per sending worker. The
// frames in flight to that worker outgrew its capacity
// ([Options.RingCapacity]) and then the backlog; each sender decides
// whether to try again or fail its stream.
func (w *Worker) refused(target *Worker, err error) {
	if !errors.Is(err, ring.ErrFull) {
		return
	}
	now := w.engine.clock()
	if now.Sub(w.lastRefused) < time.Second {
		return
	}
	w.lastRefused = now
	w.log.Warn("engine: a frame was refused: the worker's ring is full; raise the ring capacity if this recurs",
		"target", target.index, "capacity", target.ring.Capacity(), "backlog", w.backlogged)
}

// afterSend updates the sender's registrations for the frame t it sent on
// id, and the active gauges with them (streamMetrics). The sender of END
// or ABORT expects no further throttle frames, and the sender of RESET no
// further data (ZILLA.md §3).
//
// A reply exists once its BEGIN is sent: a receiver that RESETs the
// initial stream before it has begun the reply gives the reply up, and
// the engine forgets it on both sides (here, and in handleRead where the
// initiator reads that RESET). Without this rule a refused stream whose
// reply never begins would leave the receiver's throttle entry for the
// reply and the initiator's stream entry for it behind for good. A
// receiver that answers a refused request (a 413, say) begins its reply
// before it sends the RESET.
func (w *Worker) afterSend(t frame.FrameType, id int64) {
	switch t {
	case frame.FrameBegin:
		if !IsInitial(id) {
			if s := w.throttles.ref(id); s != nil && !s.replied {
				s.replied = true
				s.e.metrics.openedSent()
			}
		}
	case frame.FrameEnd, frame.FrameAbort:
		w.dropThrottle(id)
	case frame.FrameReset:
		w.dropStream(id)
		if IsInitial(id) {
			w.throttles.removeUnreplied(ReplyID(id))
		}
	}
}

// dropStream forgets the handler of the data frames on id, a direction
// this worker receives, and counts the direction closed if it had begun.
func (w *Worker) dropStream(id int64) (entry, bool) {
	e, begun, ok := w.streams.take(id)
	if ok && begun {
		e.metrics.closedReceived()
	}
	return e, ok
}

// dropThrottle forgets the handler of the throttle frames on id, a
// direction this worker sends, and counts the direction closed if it had
// begun.
func (w *Worker) dropThrottle(id int64) (entry, bool) {
	e, begun, ok := w.throttles.take(id)
	if ok && begun {
		e.metrics.closedSent()
	}
	return e, ok
}

// Dispatch runs fn on the worker's thread. It is safe from any goroutine
// and is how asynchronous completions (stores, guards) come back.
func (w *Worker) Dispatch(fn func()) {
	w.taskMu.Lock()
	w.tasks = append(w.tasks, fn)
	w.taskMu.Unlock()
	w.pending.Add(1)
	if w.parked.Load() {
		w.poller.wake()
	}
}

// SignalAt delivers a SIGNAL frame to the throttle handler of streamID at
// deadline, and returns an id for Cancel.
func (w *Worker) SignalAt(deadline time.Time, originID, routedID, streamID, traceID int64, signalID, contextID int32) int64 {
	w.cancelCounter++
	cancelID := w.cancelCounter
	w.timers.schedule(cancelID, deadline, func() {
		w.deliverSignal(cancelID, originID, routedID, streamID, traceID, signalID, contextID)
	})
	return cancelID
}

// SignalNow delivers a SIGNAL frame to the throttle handler of streamID as
// soon as the worker reads its ring.
func (w *Worker) SignalNow(originID, routedID, streamID, traceID int64, signalID, contextID int32) {
	w.deliverSignal(-1, originID, routedID, streamID, traceID, signalID, contextID)
}

// TimerAt runs fn on the worker's thread at deadline, and returns an id for
// Cancel.
func (w *Worker) TimerAt(deadline time.Time, fn func()) int64 {
	w.cancelCounter++
	w.timers.schedule(w.cancelCounter, deadline, fn)
	return w.cancelCounter
}

// Cancel disarms a signal or timer, reporting whether it was still armed.
func (w *Worker) Cancel(cancelID int64) bool { return w.timers.cancel(cancelID) }

// Disarm cancels the signal or timer *cancelID names, if one is armed, and
// sets *cancelID to zero, which no signal or timer is given: the idiom of
// a binding that keeps the id of its one pending timer in a field.
func (w *Worker) Disarm(cancelID *int64) {
	if *cancelID != 0 {
		w.timers.cancel(*cancelID)
		*cancelID = 0
	}
}

// FireTimers fires the signals and timers due by the engine's clock now,
// as the worker's loop does on each pass, and returns how many fired. It
// is for tests that move a manual clock ([WithClock]): time stands still
// for the loop between the test's moves, so the test fires what the move
// made due through [Engine.Execute], and when Execute returns every timer
// armed before the move and due at the new time has fired. A timer that
// one of them arms for a time already past fires on a later pass.
func (w *Worker) FireTimers() int { return w.timers.expire(w.engine.clock(), math.MaxInt) }

// RegisterFD adds a socket to the worker's poller; fn runs on the worker's
// thread with the ready epoll events.
func (w *Worker) RegisterFD(fd int, events uint32, fn func(events uint32)) error {
	return w.poller.register(fd, events, fn)
}

// ModifyFD changes the epoll events of a registered socket.
func (w *Worker) ModifyFD(fd int, events uint32) error { return w.poller.modify(fd, events) }

// UnregisterFD removes a socket from the worker's poller.
func (w *Worker) UnregisterFD(fd int) error { return w.poller.unregister(fd) }

func (w *Worker) deliverSignal(cancelID, originID, routedID, streamID, traceID int64, signalID, contextID int32) {
	n, err := w.signal.Wrap(w.writeBuf, 0, len(w.writeBuf)).
		OriginID(originID).RoutedID(routedID).StreamID(streamID).
		Sequence(0).Acknowledge(0).Maximum(0).Timestamp(w.timestamp()).TraceID(traceID).
		CancelID(cancelID).SignalID(signalID).ContextID(contextID).
		BuildLimit()
	if err != nil {
		w.log.Error("build signal", "err", err)
		return
	}
	if err := w.ring.Write(int32(frame.FrameSignal), w.writeBuf[:n]); err != nil {
		w.log.Error("signal refused", "stream", streamID, "err", err)
	}
}

func (w *Worker) timestamp() int64 {
	if !w.engine.opts.Timestamps {
		return 0
	}
	return w.engine.clock().UnixNano()
}

// run is the worker loop: poll sockets, fire timers, drain the ring, run
// dispatched tasks, and back off when there was nothing to do.
func (w *Worker) run(ready chan<- error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	holdP()
	defer releaseP()
	w.pin()
	ready <- nil
	defer close(w.done)

	idle := 0
	var idleSince time.Time // when an IdleSpin spell began
	spin := w.engine.opts.IdleSpin
	polled := false // park's epoll_wait has just run the sockets' handlers
	sincePoll := 0  // passes since the sockets were last polled
	for !w.stopping.Load() {
		// Each poll is a system call, so sockets are polled only where
		// one can find something the passes would not otherwise reach
		// soon:
		//   - after a pass with work, when frames are still waiting in the
		//     ring, or when pollEvery passes in a row have had work, so
		//     that a flood of frames or tasks does not starve the sockets;
		//     after a pass that emptied the ring, the worker is about to
		//     park, and park's epoll_wait, which returns at once when a
		//     socket is ready, is the poll (a non-blocking poll first
		//     would be an epoll_pwait per wake-up, mostly for nothing);
		//   - on every pollEvery-th pass of an idle spell, so that the
		//     spin that waits for the ring costs no system call;
		//   - never on the pass right after a wake-up: the wait has just
		//     reported every ready socket.
		work := 0
		// An empty ring starts again at offset 0, so that the socket
		// reads and frames of the next burst land in memory the caches
		// still hold, not in the next stretch of a ring of many megabytes.
		w.ring.Rewind()
		due := idle%pollEvery == 0
		if idle == 0 {
			due = sincePoll >= pollEvery || w.ring.Size() > 0
		}
		sincePoll++
		if due && !polled {
			work = w.poller.poll(0)
			sincePoll = 0
		}
		polled = false
		work += w.timers.expire(w.engine.clock(), expireBatch)
		work += w.ring.Read(w.readFn, readBatch)
		work += w.runTasks()
		work += w.drainBacklog()
		if work > 0 {
			idle = 0
			continue
		}
		idle++
		if idle <= w.spins {
			continue
		}
		if spin > 0 {
			// Real time, not the engine's clock: a spin is about the CPU.
			if idle == w.spins+1 {
				idleSince = time.Now()
				continue
			}
			if idle%pollEvery != 0 || time.Since(idleSince) < spin {
				continue
			}
		}
		var waited bool
		if waited, polled = w.park(); waited {
			sincePoll = 0
		}
		idle = 0
	}
	w.drainOnStop()
}

// Parked reports whether the worker is blocked waiting for work. It is
// safe from any goroutine, for diagnostics and tests.
func (w *Worker) Parked() bool { return w.parked.Load() }

// park blocks in epoll_wait until woken, then runs the handlers of the
// sockets that were ready. It reports whether it waited (it does not when
// work came in as it was about to) and whether the wait reported any
// socket. A producer writes
// the eventfd only when it sees parked set after its commit; setting parked
// before the last look at the ring means one of the two always sees the
// other.
func (w *Worker) park() (waited, ready bool) {
	w.parked.Store(true)
	if w.ring.Size() > 0 || w.pending.Load() > 0 || w.stopping.Load() {
		w.parked.Store(false)
		return false, false
	}
	timeout := -1
	if d := w.timers.wait(w.engine.clock()); d >= 0 {
		// Round up: waking before the deadline only to park again
		// wastes a wake-up, and the wheel never fires a timer early.
		timeout = int((d + time.Millisecond - 1) / time.Millisecond)
	}
	if w.backlogged > 0 {
		// Frames wait for a full ring: look again soon.
		timeout = int(backlogRetry / time.Millisecond)
	}
	n := w.poller.wait(timeout)
	w.parked.Store(false)
	w.poller.dispatch(n)
	return true, n > 0
}

// pin locks the worker's thread to one CPU where the OS allows it; where it
// does not (containers, restricted cpusets), the worker runs unpinned.
//
// Workers are pinned only when they leave at least one CPU free. With every
// CPU held by a pinned worker thread, the Go runtime's own threads and the
// thread a parked worker wakes on have to preempt a pinned worker, which
// turns a cross-worker round trip of microseconds into hundreds of them.
func (w *Worker) pin() {
	if !w.engine.opts.Pin {
		return
	}
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return
	}
	cpus := make([]int, 0, set.Count())
	for cpu := 0; cpu < 1024 && len(cpus) < set.Count(); cpu++ {
		if set.IsSet(cpu) {
			cpus = append(cpus, cpu)
		}
	}
	if len(cpus) <= w.engine.opts.Workers {
		w.log.Debug("cpu pinning skipped: no cpu left for the runtime", "cpus", len(cpus), "workers", w.engine.opts.Workers)
		return
	}
	var one unix.CPUSet
	one.Set(cpus[w.index%len(cpus)])
	if err := unix.SchedSetaffinity(0, &one); err != nil {
		w.log.Debug("cpu pinning not permitted", "err", err)
	}
}

func (w *Worker) runTasks() int {
	if w.pending.Load() == 0 {
		return 0
	}
	w.taskMu.Lock()
	tasks := w.tasks
	w.tasks = w.spare[:0]
	w.taskMu.Unlock()
	for i, fn := range tasks {
		w.pending.Add(-1)
		fn()
		tasks[i] = nil
	}
	w.spare = tasks[:0]
	return len(tasks)
}

// handleRead dispatches one frame read from the ring.
func (w *Worker) handleRead(msgType int32, buf []byte) {
	t := frame.FrameType(msgType)
	if !w.header.TryWrap(buf, 0, len(buf)) {
		w.log.Error("malformed frame dropped", "type", t, "length", len(buf))
		return
	}
	id := w.header.StreamID()
	if id == 0 {
		w.handleSystem(t, buf)
		return
	}
	// A frame that closes its direction takes the entry out in the same
	// probe that finds it.
	var e entry
	var ok bool
	if t.IsThrottle() {
		if t == frame.FrameReset {
			e, ok = w.dropThrottle(id)
			if IsInitial(id) {
				// A reply that had not begun is given up with its
				// initial stream (afterSend).
				w.streams.removeUnreplied(ReplyID(id))
			}
		} else {
			e, ok = w.throttles.get(id)
		}
		if ok {
			e.metrics.received(t, buf)
			e.fn(t, buf)
		}
		return
	}
	switch t {
	case frame.FrameEnd, frame.FrameAbort:
		e, ok = w.dropStream(id)
	case frame.FrameBegin:
		if s := w.streams.ref(id); s != nil {
			// Only reply ids are in streams before their BEGIN.
			if !s.replied {
				s.replied = true
				if !IsInitial(id) {
					s.e.metrics.openedReceived()
				}
			}
			e, ok = s.e, true
		}
	default:
		e, ok = w.streams.get(id)
	}
	if ok {
		e.metrics.received(t, buf)
		e.fn(t, buf)
		return
	}
	if t == frame.FrameBegin && IsInitial(id) {
		w.handleBeginInitial(buf, id)
	}
}

func (w *Worker) handleBeginInitial(buf []byte, id int64) {
	routedID := w.header.RoutedID()
	b := w.binding(routedID)
	var fn MessageConsumer
	if b != nil {
		w.forwardTo, w.forwards = nil, 0
		fn = b.h.NewStream(frame.FrameBegin, buf)
		if w.forwardTo != nil {
			// Handed on (Forward): the stream is the last binding's.
			b, routedID = w.forwardTo, w.forwardTo.id
			w.forwardTo = nil
		}
	}
	if fn == nil {
		w.refuse(buf)
		return
	}
	m := b.metrics
	w.streams.put(id, entry{fn: fn, owner: routedID, metrics: m})
	w.throttles.put(ReplyID(id), entry{fn: fn, owner: routedID, metrics: m})
	m.received(frame.FrameBegin, buf)
	m.openedReceived()
	fn(frame.FrameBegin, buf)
}

// maxForwards bounds how many times one BEGIN is handed on by Forward, so
// that bindings forwarding to each other in a cycle have the stream
// refused instead of recursing without end.
const maxForwards = 8

// Forward hands the initial BEGIN that a Handler's NewStream is looking
// at on to the binding exit, as if it had been routed there in the first
// place: it sets the BEGIN's routedId to exit, in place, and returns what
// exit's NewStream returns, which the caller's NewStream then returns as
// its own. From then on the stream is exit's (its frames, its metrics, its
// end when exit detaches); the forwarding binding sees none of it. A
// binding forwards a stream it would only relay unchanged, which saves
// the second stream and every frame of it.
//
// Forward returns nil when exit is not attached to this worker, when
// begin is not an initial BEGIN, when the BEGIN has already been handed on
// maxForwards times, or when exit's NewStream refuses it; the BEGIN's
// routedId is then as it was, and the caller serves the stream itself or
// refuses it. It may be called only from a NewStream that the worker
// called for begin, which must return a non-nil result of Forward as its
// own.
func (w *Worker) Forward(exit int64, begin []byte) MessageConsumer {
	b := w.binding(exit)
	if b == nil || w.forwards >= maxForwards || !w.forward.TryWrap(begin, 0, len(begin)) ||
		!IsInitial(w.forward.StreamID()) {
		return nil
	}
	routed := w.forward.RoutedID()
	w.forward.SetRoutedID(exit)
	prev := w.forwardTo
	w.forwardTo = b
	w.forwards++
	fn := b.h.NewStream(frame.FrameBegin, begin)
	if fn == nil {
		// Refused there: the BEGIN is the caller's again, as it was.
		w.forwardTo = prev
		if w.forward.TryWrap(begin, 0, len(begin)) {
			w.forward.SetRoutedID(routed)
		}
	}
	return fn
}

// refuse answers an unroutable or refused BEGIN with RESET.
func (w *Worker) refuse(begin []byte) {
	var h frame.Frame
	if !h.TryWrap(begin, 0, len(begin)) {
		return
	}
	n, err := w.reset.Wrap(w.writeBuf, 0, len(w.writeBuf)).
		OriginID(h.OriginID()).RoutedID(h.RoutedID()).StreamID(h.StreamID()).
		Sequence(h.Sequence()).Acknowledge(h.Acknowledge()).Maximum(0).
		Timestamp(w.timestamp()).TraceID(h.TraceID()).Authorization(h.Authorization()).
		BuildLimit()
	if err == nil {
		err = w.Send(frame.FrameReset, w.writeBuf[:n])
	}
	if err != nil {
		w.log.Error("reset of refused stream failed", "stream", h.StreamID(), "err", err)
	}
}

// handleSystem handles frames on stream id 0: budget credit and resumes.
func (w *Worker) handleSystem(t frame.FrameType, buf []byte) {
	switch t {
	case frame.FrameFlush:
		var f frame.Flush
		if f.TryWrap(buf, 0, len(buf)) {
			w.engine.budgets.resume(w, f.BudgetID())
		}
	}
}

// attach attaches a configured binding on this worker's thread.
func (w *Worker) attach(b Binding, cfg *BindingConfig) error {
	h, err := b.Attach(w, cfg)
	if err != nil {
		return fmt.Errorf("%s.%s: %w", cfg.Namespace, cfg.Name, err)
	}
	labels, err := telemetry.BindingLabels(cfg.Namespace, cfg.Name)
	if err != nil {
		return fmt.Errorf("%s.%s: %w", cfg.Namespace, cfg.Name, err)
	}
	bb := &boundBinding{id: cfg.ID, h: h, metrics: newStreamMetrics(w.Metrics(), labels)}
	w.bound[cfg.ID] = bb
	if label := int(uint32(cfg.ID)); label < maxLabelIndex {
		if label >= len(w.byLabel) {
			w.byLabel = append(w.byLabel, make([]*boundBinding, label+1-len(w.byLabel))...)
		}
		if w.byLabel[label] == nil {
			w.byLabel[label] = bb
		}
	}
	return nil
}

// maxLabelIndex bounds byLabel: a binding whose label is at or above it
// is found through bound alone.
const maxLabelIndex = 1 << 12

// boundBinding is a binding attached to the worker.
type boundBinding struct {
	id      int64
	h       Handler
	metrics *streamMetrics
}

// binding returns the binding attached under id, or nil.
func (w *Worker) binding(id int64) *boundBinding {
	if label := uint64(uint32(id)); label < uint64(len(w.byLabel)) {
		if b := w.byLabel[label]; b != nil && b.id == id {
			return b
		}
	}
	return w.bound[id]
}

// bindingMetrics returns the stream metrics of binding id, nil when it is
// not attached here.
func (w *Worker) bindingMetrics(id int64) *streamMetrics {
	if b := w.binding(id); b != nil {
		return b.metrics
	}
	return nil
}

// detach closes every stream the binding still has open on this worker,
// sending its handlers ABORT and RESET as if the peers had, and then
// releases the binding (ZILLA.md §3).
func (w *Worker) detach(id int64) {
	// The handlers the synthesized frames reach may close other streams
	// of the binding: each id is looked up again before its turn.
	for _, sid := range w.streams.ids(nil, id) {
		if e, ok := w.streams.get(sid); ok && e.owner == id {
			w.dropStream(sid)
			w.synthesize(frame.FrameAbort, sid, e)
		}
	}
	for _, sid := range w.throttles.ids(nil, id) {
		if e, ok := w.throttles.get(sid); ok && e.owner == id {
			w.dropThrottle(sid)
			w.synthesize(frame.FrameReset, sid, e)
		}
	}
	b := w.bound[id]
	if b == nil {
		return
	}
	if d, ok := b.h.(Detacher); ok {
		d.Detach()
	}
	delete(w.bound, id)
	if label := int(uint32(id)); label < len(w.byLabel) && w.byLabel[label] == b {
		w.byLabel[label] = nil
		// Another namespace's binding of the same label takes the slot.
		for oid, o := range w.bound {
			if int(uint32(oid)) == label {
				w.byLabel[label] = o
				break
			}
		}
	}
}

// synthesize delivers an ABORT or RESET built by the engine to e, with
// sequence MaxInt64 as Zilla does, so the handler cleans up and tells its
// own peers.
func (w *Worker) synthesize(t frame.FrameType, id int64, e entry) {
	buf := make([]byte, frame.HeaderSize+16)
	var n int
	var err error
	if t == frame.FrameAbort {
		n, err = w.abort.Wrap(buf, 0, len(buf)).OriginID(0).RoutedID(e.owner).StreamID(id).
			Sequence(1<<63 - 1).Acknowledge(0).Maximum(0).BuildLimit()
	} else {
		n, err = w.reset.Wrap(buf, 0, len(buf)).OriginID(0).RoutedID(e.owner).StreamID(id).
			Sequence(1<<63 - 1).Acknowledge(0).Maximum(0).BuildLimit()
	}
	if err != nil {
		w.log.Error("synthesize", "frame", t, "err", err)
		return
	}
	e.fn(t, buf[:n])
}

// drain asks each handler that is a Drainer to finish its work in flight.
func (w *Worker) drain() {
	for _, b := range w.bound {
		if d, ok := b.h.(Drainer); ok {
			d.Drain()
		}
	}
}

// drained reports whether every handler that is a Drainer is done.
func (w *Worker) drained() bool {
	for _, b := range w.bound {
		if d, ok := b.h.(Drainer); ok && !d.Drained() {
			return false
		}
	}
	return true
}

// drainOnStop detaches every binding, so open streams are aborted and
// sockets released. The engine closes the poller once every worker is done,
// since until then a peer may still wake this one.
func (w *Worker) drainOnStop() {
	for id := range w.bound {
		w.detach(id)
	}
	w.runTasks()
}

// Streams returns the number of open stream and throttle registrations, for
// tests and diagnostics.
func (w *Worker) Streams() (streams, throttles int) { return w.streams.len(), w.throttles.len() }

// systemFlush tells peer that budget id has credit again.
func (w *Worker) systemFlush(peer *Worker, budgetID int64) {
	var b frame.FlushBuilder
	n, err := b.Wrap(w.writeBuf, 0, len(w.writeBuf)).OriginID(0).RoutedID(0).StreamID(0).
		Sequence(0).Acknowledge(0).Maximum(0).BudgetID(budgetID).BuildLimit()
	if err == nil {
		err = peer.ring.Write(int32(frame.FrameFlush), w.writeBuf[:n])
	}
	if err != nil {
		w.log.Error("budget flush refused", "budget", budgetID, "err", err)
		return
	}
	if peer.parked.Load() {
		peer.poller.wake()
	}
}

// Budgets returns the process-wide shared credit pools.
func (w *Worker) Budgets() *Budgets { return w.engine.budgets }
