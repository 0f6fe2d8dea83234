package engine

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/engine/config"
	"github.com/sluicehq/sluice/engine/frame"
)

func TestStreamIDs(t *testing.T) {
	id := streamID(3, 5, 42)
	assert.True(t, IsInitial(id))
	assert.Equal(t, 3, ClientIndex(id))
	assert.Equal(t, 5, ServerIndex(id))
	assert.Equal(t, id&^1, ReplyID(id))
	assert.False(t, IsInitial(ReplyID(id)))
	assert.Equal(t, int64(0x0305_0000_0000_002b), id)

	// Stream frames on the initial id and throttles on the reply id go to
	// the server; the rest go back to the client.
	assert.Equal(t, 5, targetIndex(id, false))
	assert.Equal(t, 3, targetIndex(id, true))
	assert.Equal(t, 3, targetIndex(ReplyID(id), false))
	assert.Equal(t, 5, targetIndex(ReplyID(id), true))

	b := BindingID(7, 9)
	assert.Equal(t, int64(7)<<32|9, b)
	assert.Equal(t, int32(7), NamespaceID(b))
	assert.Equal(t, int32(9), LocalID(b))
}

func TestLabels(t *testing.T) {
	l := NewLabels()
	a := l.Supply("http")
	assert.Equal(t, int32(1), a)
	assert.Equal(t, a, l.Supply("http"))
	assert.Equal(t, int32(2), l.Supply("mcp"))
	assert.Equal(t, "mcp", l.Name(2))
	assert.Equal(t, "", l.Name(99))
	_, ok := l.Lookup("tcp")
	assert.False(t, ok)
}

func TestTimerWheel(t *testing.T) {
	base := time.Unix(1000, 0)
	w := newTimerWheel(time.Millisecond, base)
	var fired []int64
	rec := func(id int64) func() { return func() { fired = append(fired, id) } }
	w.schedule(1, base.Add(5*time.Millisecond), rec(1))
	w.schedule(2, base.Add(2*time.Millisecond), rec(2))
	w.schedule(3, base.Add(2*time.Second), rec(3)) // several turns of the wheel out
	w.schedule(4, base.Add(3*time.Millisecond), rec(4))
	assert.True(t, w.cancel(4))

	assert.Equal(t, 0, w.expire(base.Add(time.Millisecond), 100))
	assert.Equal(t, 1, w.expire(base.Add(2*time.Millisecond), 100))
	assert.Equal(t, 1, w.expire(base.Add(10*time.Millisecond), 100))
	assert.Equal(t, []int64{2, 1}, fired)
	assert.Equal(t, 0, w.expire(base.Add(600*time.Millisecond), 100), "a timer a turn out stays armed")
	assert.True(t, w.pending())
	assert.Equal(t, 1, w.expire(base.Add(5*time.Second), 100))
	assert.Equal(t, []int64{2, 1, 3}, fired)
	assert.False(t, w.pending())

	// A timer scheduled in the past fires on the next expiry, and a
	// firing timer may schedule another into the same slot.
	w.schedule(5, base, func() {
		fired = append(fired, 5)
		w.schedule(6, base, rec(6))
	})
	assert.Equal(t, 1, w.expire(base.Add(6*time.Second), 100))
	assert.Equal(t, 1, w.expire(base.Add(7*time.Second), 100))
	assert.Equal(t, []int64{2, 1, 3, 5, 6}, fired)

	// The batch limit defers the rest to the next pass.
	for i := int64(10); i < 15; i++ {
		w.schedule(i, base.Add(8*time.Second), rec(i))
	}
	assert.Equal(t, 2, w.expire(base.Add(9*time.Second), 2))
	assert.Equal(t, 3, w.expire(base.Add(9*time.Second), 10))
}

func TestFlow(t *testing.T) {
	buf := make([]byte, 256)
	window := func(seq, ack int64, max int32, pad int32) *frame.Window {
		var b frame.WindowBuilder
		w, err := b.Wrap(buf, 0, len(buf)).OriginID(1).RoutedID(2).StreamID(3).
			Sequence(seq).Acknowledge(ack).Maximum(max).BudgetID(0).Padding(pad).Build()
		require.NoError(t, err)
		return &w
	}
	var sender Flow
	assert.False(t, sender.CanSend(1), "no credit before the first WINDOW")
	require.NoError(t, sender.OnWindow(window(0, 0, 100, 10)))
	assert.True(t, sender.CanSend(90))
	assert.False(t, sender.CanSend(91), "padding counts against the window")
	assert.Equal(t, int32(60), sender.Send(50))
	assert.Equal(t, int64(40), sender.Available())
	assert.ErrorIs(t, sender.OnWindow(window(60, 70, 100, 10)), ErrSequence, "ack beyond seq")
	assert.ErrorIs(t, sender.OnWindow(window(100, 0, 100, 10)), ErrSequence, "seq beyond what was sent")
	require.NoError(t, sender.OnWindow(window(60, 60, 100, 10)))
	assert.Equal(t, int64(100), sender.Available())

	data := func(seq int64, reserved int32) *frame.Data {
		var b frame.DataBuilder
		d, err := b.Wrap(buf, 0, len(buf)).OriginID(1).RoutedID(2).StreamID(3).
			Sequence(seq).Acknowledge(0).Maximum(0).BudgetID(0).Reserved(reserved).Payload(nil).Build()
		require.NoError(t, err)
		return &d
	}
	var receiver Flow
	receiver.Grant(100)
	require.NoError(t, receiver.OnData(data(0, 60)))
	assert.ErrorIs(t, receiver.OnData(data(60, 41)), ErrWindowOverrun)
	assert.ErrorIs(t, receiver.OnData(data(10, 1)), ErrSequence)
	require.NoError(t, receiver.OnData(data(60, 40)))
	assert.True(t, receiver.Grant(100))
	assert.Equal(t, int64(100), receiver.Ack)
}

// TestExitsFirst checks that bindings are attached after what they lead to:
// a tcp server after the http server behind it, which comes after both its
// route exits; a cycle keeps the configured order.
func TestExitsFirst(t *testing.T) {
	ids := map[string]int64{"tcp0": 1, "http0": 2, "app0": 3, "app1": 4, "a": 5, "b": 6}
	mk := func(name, exit string, routes ...string) *attached {
		b := &config.Binding{Name: name, Exit: exit}
		for _, r := range routes {
			b.Routes = append(b.Routes, &config.Route{Exit: r})
		}
		return &attached{cfg: &BindingConfig{ID: ids[name], Name: name, ExitID: ids[exit], Config: b}}
	}
	list := []*attached{mk("tcp0", "http0"), mk("http0", "", "app0", "app1"), mk("app0", ""), mk("a", "b"), mk("b", "a"), mk("app1", "")}
	var names []string
	for _, a := range exitsFirst(list, ids) {
		names = append(names, a.cfg.Name)
	}
	assert.Equal(t, []string{"app0", "app1", "http0", "tcp0", "b", "a"}, names)
}

func TestFlowWindowDue(t *testing.T) {
	fresh := Flow{}
	assert.True(t, fresh.WindowDue(0, 8192, 0), "the first window")
	assert.False(t, fresh.WindowDue(0, 0, 0), "nothing to offer")

	f := Flow{Seq: 1000, Ack: 0, Max: 8192}
	assert.False(t, f.WindowDue(0, 8192, 0), "unchanged")
	assert.False(t, f.WindowDue(1000, 8192, 0), "the sender still has 7192 of 8192")
	f.Seq = 4096
	assert.False(t, f.WindowDue(4096, 8192, 0), "4096 left is half the window: enough")
	f.Seq = 4097
	assert.True(t, f.WindowDue(4097, 8192, 0), "4095 left: below half")
	f.Seq = 1000
	assert.True(t, f.WindowDue(1000, 8192, 12), "padding changed")
	assert.True(t, f.WindowDue(0, 4096, 0), "credit taken back")
	assert.False(t, f.WindowDue(1000, 12000, 0), "more credit while half of it is left can wait")
	assert.True(t, f.WindowDue(1000, 16384, 0), "7192 left is less than half of the new 16384")
}

func TestFlowKeep(t *testing.T) {
	f := Flow{Seq: 1000, Ack: 500, Max: 1000} // the sender may go to 1500
	assert.Equal(t, int32(500), f.Keep(1000, 200), "a smaller offer is raised to the credit given")
	assert.Equal(t, int32(800), f.Keep(1000, 800), "a larger one stands")
	assert.Equal(t, int32(1000), f.Keep(500, 0), "nothing acknowledged: the whole window stays")
	assert.Equal(t, int32(0), (&Flow{}).Keep(0, 0))
}

// TestNoPollAfterWake checks that the pass right after a wake-up does not
// poll the sockets again: the epoll_wait that woke the worker has just
// reported every ready one. A worker woken by a socket that gives it no
// other work then parks again without a non-blocking poll.
func TestNoPollAfterWake(t *testing.T) {
	w, peer, handled := socketWorker(t)
	require.Eventually(t, w.Parked, 2*time.Second, time.Millisecond)

	polls := make(chan int, 1)
	count := func() int {
		w.Dispatch(func() { polls <- w.poller.polls })
		return <-polls
	}
	count() // let the start's tasks settle
	require.Eventually(t, w.Parked, 2*time.Second, time.Millisecond)
	before := count()
	require.Eventually(t, w.Parked, 2*time.Second, time.Millisecond)
	const wakes = 50
	for i := range wakes {
		_, err := unix.Write(peer, []byte{byte(i)})
		require.NoError(t, err)
		require.Eventually(t, func() bool { return handled.Load() == int64(i+1) && w.Parked() }, 2*time.Second, time.Millisecond)
	}
	// The wake-ups by the socket add no non-blocking poll; they added one
	// each before the pass after a wake-up skipped it (52 in all). The
	// bound, half the wake-ups, is the one that held when a wait that
	// returned nothing (a preemption signal) was still followed by a poll.
	assert.LessOrEqual(t, count()-before, wakes/2, "non-blocking polls over %d wake-ups by a socket", wakes)
}

// socketWorker starts a one-worker engine with one end of a socketpair
// registered on its poller; the handler reads what came and counts it.
func socketWorker(t *testing.T) (w *Worker, peer int, handled *atomic.Int64) {
	t.Helper()
	e, err := New(&config.Config{Name: "test"}, WithWorkers(1), WithPin(false), WithRingCapacity(1<<16))
	require.NoError(t, err)
	require.NoError(t, e.Start())
	t.Cleanup(func() { _ = e.Stop(context.Background()) })
	w = e.Worker(0)
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	require.NoError(t, err)
	t.Cleanup(func() { _ = unix.Close(fds[0]); _ = unix.Close(fds[1]) })
	handled = new(atomic.Int64)
	registered := make(chan error, 1)
	w.Dispatch(func() {
		registered <- w.RegisterFD(fds[0], unix.EPOLLIN, func(uint32) {
			var buf [16]byte
			_, _ = unix.Read(fds[0], buf[:])
			handled.Add(1)
		})
	})
	require.NoError(t, <-registered)
	return w, fds[1], handled
}

// TestNoPollAfterWork checks that a pass with work that leaves the ring
// empty is not followed by a non-blocking poll: the worker is about to
// park, and park's epoll_wait is the poll. Fifty tasks, each run alone
// and followed by parking, made fifty polls before.
func TestNoPollAfterWork(t *testing.T) {
	w, _, _ := socketWorker(t)
	polls := make(chan int, 1)
	count := func() int {
		w.Dispatch(func() { polls <- w.poller.polls })
		return <-polls
	}
	require.Eventually(t, w.Parked, 2*time.Second, time.Millisecond)
	before := count()
	const tasks = 50
	for range tasks {
		require.Eventually(t, w.Parked, 2*time.Second, time.Millisecond)
		done := make(chan struct{})
		w.Dispatch(func() { close(done) })
		<-done
	}
	require.Eventually(t, w.Parked, 2*time.Second, time.Millisecond)
	// The poller counts only non-blocking polls; a wait that a signal
	// interrupts may add one now and then.
	assert.LessOrEqual(t, count()-before, tasks/10, "non-blocking polls over %d tasks", tasks)
}

// TestPollDuringFlood checks that a worker kept busy without pause, here
// by a task that dispatches itself again and again, still serves its
// sockets: it polls every pollEvery passes of work.
func TestPollDuringFlood(t *testing.T) {
	w, peer, handled := socketWorker(t)
	require.Eventually(t, w.Parked, 2*time.Second, time.Millisecond)
	const steps = 100_000
	var step, servedAt atomic.Int64
	servedAt.Store(-1)
	finished := make(chan struct{})
	var next func()
	next = func() {
		if handled.Load() > 0 && servedAt.Load() < 0 {
			servedAt.Store(step.Load())
		}
		if step.Add(1) == 1 {
			_, err := unix.Write(peer, []byte{1})
			assert.NoError(t, err)
		}
		if step.Load() < steps {
			w.Dispatch(next)
			return
		}
		close(finished)
	}
	w.Dispatch(next)
	select {
	case <-finished:
	case <-time.After(10 * time.Second):
		t.Fatal("the task chain did not finish")
	}
	at := servedAt.Load()
	require.GreaterOrEqual(t, at, int64(0), "the socket was not served during %d passes of work", steps)
	assert.LessOrEqual(t, at, int64(4*pollEvery), "the socket waited %d passes", at)
}

type fixedBinding struct{ h Handler }

func (b fixedBinding) Attach(*Worker, *BindingConfig) (Handler, error) { return b.h, nil }

type namedHandler string

func (namedHandler) NewStream(frame.FrameType, []byte) MessageConsumer { return nil }

// TestBindingLookupSharedLabel: bindings are found by id through byLabel,
// indexed by the id's label. Two namespaces may attach bindings of one
// name (one label): each is still found as itself, and when the one
// holding the label's slot detaches, the other takes the slot.
func TestBindingLookupSharedLabel(t *testing.T) {
	w, _, _ := socketWorker(t)
	const label = 7
	a := int64(1)<<32 | label
	b := int64(2)<<32 | label
	big := int64(1)<<32 | maxLabelIndex + 5
	done := make(chan struct{})
	w.Dispatch(func() {
		defer close(done)
		for id, name := range map[int64]string{a: "a", b: "b", big: "big"} {
			cfg := &BindingConfig{ID: id, Namespace: fmt.Sprint("ns", id>>32), Name: name}
			assert.NoError(t, w.attach(fixedBinding{namedHandler(name)}, cfg))
		}
		for id, name := range map[int64]string{a: "a", b: "b", big: "big"} {
			if got := w.binding(id); assert.NotNil(t, got, name) {
				assert.Equal(t, namedHandler(name), got.h)
				assert.NotNil(t, got.metrics)
			}
		}
		assert.Nil(t, w.binding(int64(3)<<32|label), "no binding of namespace 3")
		holder := w.byLabel[label].id
		other := a + b - holder
		w.detach(holder)
		assert.Nil(t, w.binding(holder))
		assert.Equal(t, other, w.byLabel[label].id, "the other binding of the label takes its slot")
		w.detach(other)
		assert.Nil(t, w.binding(other))
		assert.Nil(t, w.byLabel[label])
		assert.NotNil(t, w.binding(big))
	})
	<-done
}

// TestPollerHandlersByFD: the poller finds each ready fd's handler by its
// number, one past the end of what it holds included, and an unregistered
// fd's handler runs no more, while another fd registered later in the
// same slot range still does.
func TestPollerHandlersByFD(t *testing.T) {
	p, err := newPoller()
	require.NoError(t, err)
	defer p.close()

	pipe := func() (r, w int) {
		var fds [2]int
		require.NoError(t, unix.Pipe2(fds[:], unix.O_NONBLOCK|unix.O_CLOEXEC))
		t.Cleanup(func() { unix.Close(fds[0]); unix.Close(fds[1]) })
		return fds[0], fds[1]
	}
	ra, wa := pipe()
	// A high descriptor, so that the handler table has to grow past it.
	rb, err := unix.FcntlInt(uintptr(ra), unix.F_DUPFD_CLOEXEC, 200)
	require.NoError(t, err)
	t.Cleanup(func() { unix.Close(rb) })

	var gotA, gotB int
	require.NoError(t, p.register(ra, unix.EPOLLIN, func(uint32) { gotA++ }))
	require.NoError(t, p.register(rb, unix.EPOLLIN, func(uint32) { gotB++ }))
	_, err = unix.Write(wa, []byte{1})
	require.NoError(t, err)
	require.Equal(t, 2, p.poll(0))
	require.Equal(t, 1, gotA)
	require.Equal(t, 1, gotB)

	require.NoError(t, p.unregister(rb))
	require.Equal(t, 1, p.poll(0), "the pipe is still readable through ra")
	require.Equal(t, 2, gotA)
	require.Equal(t, 1, gotB, "an unregistered fd's handler ran")
}
