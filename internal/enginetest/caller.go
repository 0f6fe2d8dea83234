package enginetest

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/frame"
	"github.com/sluicehq/sluice/engine/ring"
)

// Caller plays the binding in front of the one under test, one request
// stream at a time, on an [engine.Stream]: a BEGIN with its extension,
// the body as one DATA once the window admits all of it, then END. It
// grants the reply a window as its DATA come, keeps the reply's payload
// and the extension of its END, and reports each run on a channel. Once
// warm it allocates nothing, so that an allocation test or a benchmark
// measures the binding under test alone. Its methods but Call run on the
// worker's thread.
type Caller struct {
	engine.Stream
	w              *engine.Worker
	origin, target int64
	ext, body      []byte
	window         int32
	sent, finished bool
	left           int
	reply, endEx   []byte
	replyBuf       [4096]byte
	endExBuf       [256]byte
	done           chan bool
	onFrame        engine.MessageConsumer
	startFn        func()
}

// NewCaller returns a Caller from the binding origin to target on w that
// opens its streams with the BEGIN extension ext, sends body and grants
// the reply window bytes at a time.
func NewCaller(w *engine.Worker, origin, target int64, ext, body []byte, window int32) *Caller {
	c := &Caller{w: w, origin: origin, target: target, ext: ext, body: body, window: window, done: make(chan bool, 1)}
	c.onFrame, c.startFn = c.handle, c.start
	return c
}

// Call runs n streams, one after the other, and waits for the last. It
// reports false when a stream was refused, reset or aborted, and then
// runs no more.
func (c *Caller) Call(tb testing.TB, tm *Timer, n int) bool {
	tb.Helper()
	c.Start(n)
	return c.Wait(tb, tm)
}

// Start runs n streams, one after the other, without waiting: Wait
// waits for the last.
func (c *Caller) Start(n int) {
	c.left = n
	c.w.Dispatch(c.startFn)
}

// Wait waits for the streams Start began, and reports as Call does.
func (c *Caller) Wait(tb testing.TB, tm *Timer) bool {
	tb.Helper()
	return ReceiveBy(tb, tm, c.done, "the reply")
}

// Reply returns the payload of the last stream's reply, valid until the
// next Call.
func (c *Caller) Reply() []byte { return c.reply }

// EndEx returns the extension of the last reply's END, valid until the
// next Call.
func (c *Caller) EndEx() []byte { return c.endEx }

func (c *Caller) start() {
	c.Connect(c.w, c.origin, c.target, c.w.SupplyInitialID(c.target), c.onFrame)
	c.sent, c.finished, c.reply, c.endEx = false, false, c.replyBuf[:0], c.endExBuf[:0]
	if c.Begin(c.ext) != nil {
		c.done <- false
	}
}

func (c *Caller) handle(t frame.FrameType, buf []byte) {
	switch t {
	case frame.FrameWindow:
		if _, err := c.OnWindow(buf); err == nil && !c.sent && c.Out.CanSend(len(c.body)) {
			c.sent = true
			if c.Data(frame.FlagsDataMessage, c.body, nil) != nil || c.End(nil) != nil {
				c.finish(false)
			}
		}
	case frame.FrameBegin:
		if _, err := c.OnBegin(buf); err == nil {
			c.grant()
		}
	case frame.FrameData:
		if d, err := c.OnData(buf); err == nil {
			c.reply = append(c.reply, d.Payload()...)
			c.grant()
		}
	case frame.FrameEnd:
		if e, err := c.OnEnd(buf); err == nil {
			c.endEx = append(c.endEx, e.Extension()...)
		}
		if c.left--; c.left > 0 {
			c.start()
			return
		}
		c.finish(true)
	case frame.FrameAbort:
		_, _ = c.OnAbort(buf)
		c.finish(false)
	case frame.FrameReset:
		_, _ = c.OnReset(buf)
		c.finish(false)
	}
}

// grant lets the reply send window more bytes.
func (c *Caller) grant() {
	c.In.Grant(c.window)
	if c.Window() != nil {
		c.finish(false)
	}
}

// finish reports the run, once: a reply can be aborted and its request
// reset both.
func (c *Caller) finish(ok bool) {
	if !c.finished {
		c.finished, c.left = true, 0
		c.done <- ok
	}
}

// Accepted is the ids of a stream a test's fake binding accepted: the
// bindings it comes from and is routed to, and its two directions.
type Accepted struct {
	Origin, Routed     int64
	InitialID, ReplyID int64
}

// Accept reads the ids from the stream's BEGIN in buf, reporting false
// when buf is not a BEGIN.
func (a *Accepted) Accept(buf []byte) bool {
	var b frame.Begin
	if !b.TryWrap(buf, 0, len(buf)) {
		return false
	}
	a.Origin, a.Routed, a.InitialID = b.OriginID(), b.RoutedID(), b.StreamID()
	a.ReplyID = engine.ReplyID(a.InitialID)
	return true
}

// SendData sends payload, from w's thread, as one whole DATA with the
// header h that reserves its length, built in buf. full reports, with no
// error, rings too full to take it now: the caller tries again later.
func SendData(w *engine.Worker, buf []byte, h Head, payload []byte) (full bool, err error) {
	var d frame.DataBuilder
	n, err := Data(&d, buf, h, int32(len(payload)), payload)
	if err == nil {
		err = w.Send(frame.FrameData, buf[:n])
	}
	if errors.Is(err, ring.ErrFull) {
		return true, nil
	}
	return false, err
}

// Measure runs a benchmark whose rounds run(n) plays on a worker and
// waits for: 100 rounds to warm the pools and buffers up, then b.N timed,
// with allocations reported. run reports a failed round; Measure stops the
// benchmark on it.
func Measure(b *testing.B, run func(n int) error) {
	b.Helper()
	require.NoError(b, run(100), "warm-up")
	b.ReportAllocs()
	b.ResetTimer()
	require.NoError(b, run(b.N))
}
