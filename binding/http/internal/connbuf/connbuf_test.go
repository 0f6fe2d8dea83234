package connbuf_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/binding/http/internal/connbuf"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/config"
)

// withPool runs fn on the thread of a worker whose buffer pool has slots
// slots of 32 KiB, the pool's owner, and waits for it. fn checks with
// assert: require stops only the test's own goroutine.
func withPool(t *testing.T, slots int, fn func(pool *engine.BufferPool)) {
	t.Helper()
	withWorker(t, slots, func(w *engine.Worker) { fn(w.BufferPool()) })
}

// withWorker is withPool with the worker itself.
func withWorker(t *testing.T, slots int, fn func(w *engine.Worker)) {
	t.Helper()
	e, err := engine.New(&config.Config{Name: "test"}, engine.WithWorkers(1), engine.WithPin(false),
		engine.WithBufferSlots(slots), engine.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	require.NoError(t, err)
	require.NoError(t, e.Start())
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = e.Stop(ctx)
	}()
	w := e.Worker(0)
	done := make(chan struct{})
	w.Dispatch(func() {
		defer close(done)
		fn(w)
	})
	<-done
}

// TestInbox follows the bytes of DATA frames through an Inbox: op is
// "receive" (Receive, then Consume of consume bytes, then Keep), "drop"
// or "fill" (a pool with no slot left, then receive).
func TestInbox(t *testing.T) {
	type step struct {
		op       string
		data     string
		consume  int
		wantOK   bool   // Receive and Keep both succeed
		wantLeft string // Bytes after the step
		wantHeld int    // slots held after the step
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{
			name:  "all processed in place holds nothing",
			steps: []step{{op: "receive", data: "GET / HTTP/1.1\r\n\r\n", consume: 18, wantOK: true}},
		},
		{
			name: "a part left waits in a slot for the rest",
			steps: []step{
				{op: "receive", data: "GET / HT", wantOK: true, wantLeft: "GET / HT", wantHeld: 1},
				{op: "receive", data: "TP/1.1\r\n\r\nGE", consume: 18, wantOK: true, wantLeft: "GE", wantHeld: 1},
				{op: "receive", data: "T", consume: 3, wantOK: true},
			},
		},
		{
			name: "drop gives the slot back",
			steps: []step{
				{op: "receive", data: "abc", wantOK: true, wantLeft: "abc", wantHeld: 1},
				{op: "drop"},
			},
		},
		{
			name:  "no slot for what is left",
			steps: []step{{op: "fill", data: "abc", consume: 1}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			withPool(t, 1, func(pool *engine.BufferPool) {
				var in connbuf.Inbox
				in.Init(pool)
				for i, s := range tt.steps {
					switch s.op {
					case "drop":
						in.Drop()
					case "fill":
						pool.Acquire(9)
						fallthrough
					case "receive":
						ok := in.Receive([]byte(s.data))
						in.Consume(s.consume)
						ok = in.Keep(7) && ok
						assert.Equal(t, s.wantOK, ok, "step %d", i)
					}
					assert.False(t, in.Handling(), "step %d", i)
					assert.Equal(t, s.wantLeft, string(in.Bytes()), "step %d", i)
					assert.Equal(t, len(s.wantLeft), in.Held(), "step %d", i)
					if s.op != "fill" {
						assert.Equal(t, s.wantHeld, pool.Acquired(), "step %d", i)
					}
				}
			})
		})
	}
}

func TestInboxBeyondSlot(t *testing.T) {
	withPool(t, 1, func(pool *engine.BufferPool) {
		var in connbuf.Inbox
		in.Init(pool)
		assert.True(t, in.Receive([]byte("x")))
		assert.True(t, in.Keep(7))
		assert.False(t, in.Receive(make([]byte, pool.SlotCapacity())), "a slot's worth beside a byte held")
		in.Drop()
		assert.Zero(t, pool.Acquired())
	})
}

func TestOutbox(t *testing.T) {
	withPool(t, 1, func(pool *engine.BufferPool) {
		var out connbuf.Outbox
		out.Init(pool)
		assert.Nil(t, out.Bytes())
		assert.True(t, out.Queue([]byte("HTTP/1.1 200 OK\r\n"), 7))
		assert.True(t, out.Queue([]byte("\r\n"), 7))
		assert.Equal(t, "HTTP/1.1 200 OK\r\n\r\n", string(out.Bytes()))
		assert.Equal(t, 1, pool.Acquired())

		out.Sent(9)
		assert.Equal(t, "200 OK\r\n\r\n", string(out.Bytes()))
		assert.Equal(t, 10, out.Len())
		assert.False(t, out.Queue(make([]byte, pool.SlotCapacity()), 7), "beyond the slot")
		assert.Equal(t, 10, out.Len(), "the bytes queued before stay")
		out.Sent(10)
		assert.Zero(t, out.Len())
		assert.Zero(t, pool.Acquired(), "the slot goes back once empty")

		assert.False(t, out.Queue(make([]byte, pool.SlotCapacity()+1), 7), "larger than a slot")
		assert.Zero(t, pool.Acquired(), "no empty slot is kept")

		assert.True(t, out.Queue([]byte("HTTP/1.1 200 OK\r\n\r\nhead"), 7))
		out.Truncate(19)
		assert.Equal(t, "HTTP/1.1 200 OK\r\n\r\n", string(out.Bytes()), "the last bytes are taken back")
		out.Truncate(30)
		assert.Equal(t, 19, out.Len(), "keeping more than waits changes nothing")
		out.Truncate(0)
		assert.Zero(t, out.Len())
		assert.Zero(t, pool.Acquired(), "the slot goes back once nothing waits")

		pool.Acquire(9)
		assert.False(t, out.Queue([]byte("x"), 7), "no slot free")
		assert.Zero(t, out.Len())
		out.Drop()
	})
}

func TestInboxGrant(t *testing.T) {
	withPool(t, 1, func(pool *engine.BufferPool) {
		var in connbuf.Inbox
		in.Init(pool)
		max := int32(pool.SlotCapacity())
		f := engine.Flow{Seq: 10, Ack: 0, Max: 0}
		assert.True(t, in.Grant(&f), "the first window")
		assert.Equal(t, engine.Flow{Seq: 10, Ack: 10, Max: max}, f)
		assert.False(t, in.Grant(&f), "nothing changed")

		// Three bytes received and held: acknowledged once processed.
		f.Seq = int64(max/2) + 13
		assert.True(t, in.Receive([]byte("abc")))
		assert.True(t, in.Keep(7))
		assert.True(t, in.Grant(&f), "more than half the window used")
		assert.Equal(t, engine.Flow{Seq: int64(max/2) + 13, Ack: int64(max/2) + 10, Max: max}, f)
		in.Drop()
	})
}

// TestInboxSettle: Settle keeps what is left of a DATA in a slot, as Keep
// does, and grants the window the slot has room for, acknowledging only
// the bytes processed; with no slot free it reports false.
func TestInboxSettle(t *testing.T) {
	withWorker(t, 1, func(w *engine.Worker) {
		pool := w.BufferPool()
		max := int32(pool.SlotCapacity())
		var s engine.Stream
		s.Accept(w, 1, 2, 3)
		s.In.Flow = engine.Flow{Seq: 3, Ack: 0, Max: max}

		var in connbuf.Inbox
		in.Init(pool)
		assert.True(t, in.Receive([]byte("abc")))
		assert.True(t, in.Settle(&s), "a slot is free and no WINDOW is due")
		assert.Equal(t, 3, in.Held())
		assert.Equal(t, "abc", string(in.Bytes()))
		assert.Equal(t, engine.Flow{Seq: 3, Ack: 0, Max: max}, s.In.Flow, "the bytes held are not acknowledged")

		// More than half the window used, all but the three bytes held
		// processed: a WINDOW acknowledges them.
		s.In.Seq = int64(max/2) + 3
		assert.True(t, in.Receive(nil))
		assert.True(t, in.Settle(&s))
		assert.Equal(t, engine.Flow{Seq: int64(max/2) + 3, Ack: int64(max / 2), Max: max}, s.In.Flow)

		var full connbuf.Inbox
		full.Init(pool)
		assert.True(t, full.Receive([]byte("def")))
		assert.False(t, full.Settle(&s), "the one slot is taken")
		assert.Empty(t, full.Bytes())
		in.Drop()
	})
}

// owner is a Conn's owner that counts its failures.
type owner struct {
	over  bool
	fails int
}

func (o *owner) Over() bool { return o.over }
func (o *owner) Fail()      { o.fails++ }

// TestConn: Settle keeps what is left of a DATA and fails the owner when
// no slot is free; Settle and Grant leave an owner that is over alone;
// Grant sends the WINDOW due; Send fails the owner when the DATA cannot
// go; Release gives both slots back.
func TestConn(t *testing.T) {
	withWorker(t, 2, func(w *engine.Worker) {
		pool := w.BufferPool()
		max := int32(pool.SlotCapacity())
		var o owner
		var c connbuf.Conn
		c.Init(pool, &o)
		c.Accept(w, 1, 2, 3)
		c.In.Flow = engine.Flow{Seq: 3, Ack: 0, Max: max}

		assert.True(t, c.Inbox.Receive([]byte("abc")))
		c.Settle()
		assert.Equal(t, 0, o.fails, "a slot is free and no WINDOW is due")
		assert.Equal(t, "abc", string(c.Input()))
		assert.True(t, c.Outbox.Queue([]byte("xyz"), 3))

		// Both slots are held by c: another connection's bytes have none.
		var o2 owner
		var c2 connbuf.Conn
		c2.Init(pool, &o2)
		c2.Accept(w, 1, 2, 5)
		assert.True(t, c2.Inbox.Receive([]byte("def")))
		c2.Settle()
		assert.Equal(t, 1, o2.fails, "no slot for what is left")

		o2.over = true
		assert.True(t, c2.Inbox.Receive([]byte("ghi")))
		c2.Settle()
		assert.Equal(t, 1, o2.fails, "an owner over is left alone")
		assert.True(t, c2.Inbox.Handling(), "nothing was settled")

		// More than half the window used and all processed: a WINDOW.
		c.Inbox.Consume(3)
		assert.True(t, c.Inbox.Receive(nil))
		assert.True(t, c.Inbox.Keep(3))
		c.In.Seq = int64(max/2) + 3
		o.over = true
		c.Grant()
		assert.Equal(t, int64(0), c.In.Ack, "an owner over grants nothing")
		o.over = false
		c.Grant()
		assert.Equal(t, engine.Flow{Seq: int64(max/2) + 3, Ack: int64(max/2) + 3, Max: max}, c.In.Flow)
		assert.Equal(t, 0, o.fails)

		c.Release()
		assert.Empty(t, c.Input())
		assert.Equal(t, 0, c.Outbox.Len())
		assert.True(t, c2.Inbox.Receive([]byte("jkl")))
		o2.over = false
		c2.Settle()
		assert.Equal(t, 1, o2.fails, "the slots c gave back are free")
		c2.Release()

		// c's stream was never begun: no DATA goes out on it.
		assert.False(t, c.Send([]byte("stu")))
		assert.Equal(t, 1, o.fails, "the DATA could not go")
	})
}
