package toolkit_test

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/frame"
	"github.com/sluicehq/sluice/internal/enginetest"
)

// driver is the external binding the tests' streams come from; it plays
// the mcp server kind.
const driver = "driver"

// startEngine starts an engine with one toolkit binding, app0.
func startEngine(t *testing.T, opts ...engine.Option) (*engine.Engine, int32) {
	t.Helper()
	cfg, err := enginetest.Load("toolkit.yaml", "name: test\nbindings:\n  app0:\n    type: toolkit\n    kind: server\n", driver)
	require.NoError(t, err)
	labels := engine.NewLabels()
	e := enginetest.New(t, cfg, append([]engine.Option{
		engine.WithRingCapacity(1 << 20), engine.WithLabels(labels), engine.WithExternal(driver, enginetest.Refuse{}),
	}, opts...)...)
	return enginetest.Run(t, e), labels.Supply("mcp")
}

// startClocked starts the engine as startEngine does, on a manual clock.
func startClocked(t *testing.T) (*engine.Engine, int32, *enginetest.Clock) {
	t.Helper()
	clock := enginetest.NewClock()
	e, mcpID := startEngine(t, engine.WithClock(clock.Now))
	return e, mcpID, clock
}

func requireReleased(t *testing.T, e *engine.Engine) {
	t.Helper()
	require.Eventually(t, func() bool { return enginetest.Released(e) }, 2*time.Second, 5*time.Millisecond,
		"a worker still holds a stream or a buffer slot")
}

// call is one request stream into app0, played the way the mcp server
// kind plays it. Its fields are the worker's while it runs; done hands it
// to the test.
type call struct {
	// What the test sets.
	ext         []byte // the BEGIN extension
	params      []byte
	chunk       int   // the params go in DATA frames of at most chunk bytes; 0: as credit allows
	end         bool  // END after the params
	window      int32 // the reply credit, granted again as data arrives
	abortAfter  int   // after this many FLUSH, ABORT the initial stream
	resetAfter  int   // after this many FLUSH, RESET the reply
	noParamsYet bool  // hold the params back

	w                  *engine.Worker
	originID, routedID int64
	initialID, replyID int64
	seq, ack           int64 // the initial stream: sent, and acknowledged by the toolkit
	max                int32
	inSeq              int64 // the reply: received
	sent               int
	ended, aborted     bool
	buf                []byte

	// What the toolkit did.
	windowed   bool
	refused    bool   // RESET of the initial stream
	resetEx    []byte // its extension
	begun      bool
	beginEx    []byte
	out        []byte
	dataFrames int
	maxPayload int
	flags      []frame.Flags
	flushes    [][]byte
	closed     string // "end" or "abort"
	endEx      []byte
	late       atomic.Int32 // frames after the stream was aborted
	err        error
	done       chan struct{}
	finished   bool
}

func (c *call) run(t *testing.T, e *engine.Engine, worker int) {
	t.Helper()
	c.launch(e, worker)
	enginetest.Receive(t, c.done, "the toolkit")
	require.NoError(t, c.err)
}

// launch starts the call from worker without waiting for it.
func (c *call) launch(e *engine.Engine, worker int) {
	c.prepare(e, worker)
	c.w.Dispatch(c.start)
}

// prepare readies the call to start from worker.
func (c *call) prepare(e *engine.Engine, worker int) {
	c.w = e.Worker(worker)
	c.originID, _ = e.ResolveID(driver)
	c.routedID, _ = e.ResolveID("app0")
	c.buf = make([]byte, 64<<10)
	c.done = make(chan struct{})
	if c.window == 0 {
		c.window = 8192
	}
}

// runTicking runs the call as run does, on an engine whose clock is clock:
// a long running operation's steps are signals on the engine's clock, so
// it moves the clock step at a time, letting the workers read what came
// between moves, until the call is done. It returns how far it moved the
// clock. The toolkit takes the operation's start from the clock when the
// params are in, which may be after a move or two: the clock has moved at
// least the operation's duration by the time it is over.
func (c *call) runTicking(t *testing.T, e *engine.Engine, worker int, clock *enginetest.Clock, step time.Duration) time.Duration {
	t.Helper()
	c.launch(e, worker)
	moved := time.Duration(0)
	for range 1000 {
		enginetest.Settle(t, e)
		select {
		case <-c.done:
			require.NoError(t, c.err)
			return moved
		default:
		}
		clock.Tick(t, e, step)
		moved += step
	}
	t.Fatalf("the call was not done after the clock moved %v", moved)
	return moved
}

func (c *call) start() {
	c.initialID, c.replyID = enginetest.StreamIDs(c.w, c.routedID)
	initial := enginetest.Head{OriginID: c.originID, RoutedID: c.routedID, StreamID: c.initialID}
	if err := enginetest.OpenStream(c.w, c.buf, initial, c.ext, c.onMessage); err != nil {
		c.finish(err)
	}
}

func (c *call) finish(err error) {
	if c.finished {
		return
	}
	c.finished, c.err = true, err
	close(c.done)
}

func (c *call) onMessage(t frame.FrameType, buf []byte) {
	if c.aborted {
		c.late.Add(1)
	}
	var h frame.Frame
	if !h.TryWrap(buf, 0, len(buf)) {
		c.finish(errors.New("malformed frame"))
		return
	}
	switch {
	case t == frame.FrameWindow && h.StreamID() == c.initialID:
		c.windowed = true
		c.ack, c.max = h.Acknowledge(), h.Maximum()
		c.pump()
	case t == frame.FrameReset && h.StreamID() == c.initialID:
		var r frame.Reset
		if r.TryWrap(buf, 0, len(buf)) {
			c.resetEx = append([]byte(nil), r.Extension()...)
		}
		c.refused = true
		if !c.begun {
			// Refused before the reply opened: the server resets the
			// reply it will never read, which releases the toolkit's
			// throttle registration.
			c.send(frame.FrameReset, c.replyID, c.inSeq, c.inSeq, 0)
			c.finish(nil)
		}
	case t == frame.FrameBegin && h.StreamID() == c.replyID:
		var b frame.Begin
		if b.TryWrap(buf, 0, len(buf)) {
			c.beginEx = append([]byte(nil), b.Extension()...)
		}
		c.begun = true
		c.inSeq = h.Sequence()
		c.grant()
	case t == frame.FrameData && h.StreamID() == c.replyID:
		var d frame.Data
		if !d.TryWrap(buf, 0, len(buf)) {
			c.finish(errors.New("malformed DATA"))
			return
		}
		c.out = append(c.out, d.Payload()...)
		c.dataFrames++
		c.maxPayload = max(c.maxPayload, len(d.Payload()))
		c.flags = append(c.flags, frame.Flags(d.Flags()))
		if int64(len(c.out)) > c.inSeq+int64(c.window) {
			c.finish(errors.New("the toolkit overran the reply window"))
		}
		c.inSeq = d.Sequence() + int64(d.Reserved())
		c.grant()
	case t == frame.FrameFlush && h.StreamID() == c.replyID:
		var f frame.Flush
		if f.TryWrap(buf, 0, len(buf)) {
			c.flushes = append(c.flushes, append([]byte(nil), f.Extension()...))
		}
		if c.abortAfter > 0 && len(c.flushes) == c.abortAfter {
			c.aborted = true
			c.send(frame.FrameAbort, c.initialID, c.seq, c.ack, c.max)
			c.finish(nil)
		}
		if c.resetAfter > 0 && len(c.flushes) == c.resetAfter {
			c.aborted = true
			c.send(frame.FrameReset, c.replyID, c.inSeq, c.inSeq, c.window)
			c.finish(nil)
		}
	case t == frame.FrameEnd && h.StreamID() == c.replyID:
		var e frame.End
		if e.TryWrap(buf, 0, len(buf)) {
			c.endEx = append([]byte(nil), e.Extension()...)
		}
		c.closed = "end"
		c.finish(nil)
	case t == frame.FrameAbort && h.StreamID() == c.replyID:
		c.closed = "abort"
		c.finish(nil)
	}
}

// pump sends what the toolkit's window allows of the params, then END.
func (c *call) pump() {
	if c.ended || c.refused || c.aborted || c.noParamsYet {
		return
	}
	for c.sent < len(c.params) {
		n := min(len(c.params)-c.sent, int(c.ack+int64(c.max)-c.seq))
		if c.chunk > 0 {
			n = min(n, c.chunk)
		}
		if n <= 0 {
			return
		}
		initial := enginetest.Head{OriginID: c.originID, RoutedID: c.routedID, StreamID: c.initialID, Seq: c.seq, Ack: c.ack, Max: c.max}
		full, err := enginetest.SendData(c.w, c.buf, initial, c.params[c.sent:c.sent+n])
		if full {
			c.w.Dispatch(c.pump)
			return
		}
		if err != nil {
			c.finish(err)
			return
		}
		c.seq += int64(n)
		c.sent += n
	}
	if c.end {
		c.ended = true
		c.send(frame.FrameEnd, c.initialID, c.seq, c.ack, c.max)
	}
}

// grant acknowledges everything received and offers the window again.
func (c *call) grant() {
	if c.aborted {
		return
	}
	c.send(frame.FrameWindow, c.replyID, c.inSeq, c.inSeq, c.window)
}

func (c *call) send(t frame.FrameType, id, seq, ack int64, maximum int32) {
	h := enginetest.Head{OriginID: c.originID, RoutedID: c.routedID, StreamID: id, Seq: seq, Ack: ack, Max: maximum}
	if err := enginetest.SendFrame(c.w, c.buf, t, h); err != nil {
		c.finish(err)
	}
}

// after runs fn on the call's worker and waits for it, so the test reads
// the call's fields in order with the worker.
func (c *call) after(fn func()) {
	done := make(chan struct{})
	c.w.Dispatch(func() { fn(); close(done) })
	<-done
}

// beginEx builds a request's BEGIN extension.
type beginEx func(b *mcp.McpBeginExBuilder)

func buildBeginEx(typeID int32, f beginEx) []byte {
	buf := make([]byte, 1024)
	var b mcp.McpBeginExBuilder
	b.Wrap(buf, 0, len(buf)).TypeID(typeID)
	f(&b)
	n, err := b.BuildLimit()
	if err != nil {
		panic(err)
	}
	return buf[:n]
}

func toolsCallEx(typeID int32, name string, contentLength int32) []byte {
	return buildBeginEx(typeID, func(b *mcp.McpBeginExBuilder) {
		b.ToolsCall().SessionID("s1").Name(name).ContentLength(contentLength)
	})
}

func resetError(t *testing.T, ext []byte) (int32, string) {
	t.Helper()
	var ex mcp.McpResetEx
	require.NoError(t, ex.Wrap(ext, 0, len(ext)))
	require.Equal(t, mcp.McpResetExKindError, ex.Kind())
	e := ex.Error()
	return e.Code(), e.MessageString()
}

func outcome(t *testing.T, ext []byte) mcp.McpOutcome {
	t.Helper()
	if len(ext) == 0 {
		return mcp.McpOutcomeOk
	}
	var ex mcp.McpEndEx
	require.NoError(t, ex.Wrap(ext, 0, len(ext)))
	return ex.Outcome()
}

// TestReplySplitToWindow: a result larger than the reply's credit goes in
// fragments that each fit it, INIT first and FIN last.
func TestReplySplitToWindow(t *testing.T) {
	e, mcpID := startEngine(t)
	c := &call{
		ext:    buildBeginEx(mcpID, func(b *mcp.McpBeginExBuilder) { b.ToolsList().SessionID("s1") }),
		params: []byte(`{}`), end: true, window: 64,
	}
	c.run(t, e, 0)
	assert.Equal(t, "end", c.closed)
	assert.True(t, strings.HasPrefix(string(c.out), `{"tools":[{"name":"echo"`), string(c.out))
	assert.True(t, strings.HasSuffix(string(c.out), `}}]}`), string(c.out))
	assert.Greater(t, c.dataFrames, 10)
	assert.LessOrEqual(t, c.maxPayload, 64)
	assert.Equal(t, frame.FlagDataInit, c.flags[0])
	assert.Equal(t, frame.FlagDataFin, c.flags[len(c.flags)-1])
	for _, f := range c.flags[1 : len(c.flags)-1] {
		assert.Zero(t, f)
	}
	requireReleased(t, e)
}

// TestParamsInPieces: params split across frames are answered once they
// are complete, without waiting for END, whether the BEGIN gave their
// length or not.
func TestParamsInPieces(t *testing.T) {
	params := `{"name":"echo","arguments":{"message":"a } { \" ] ["}}`
	for _, contentLength := range []int32{-1, int32(len(params))} {
		e, mcpID := startEngine(t)
		c := &call{ext: toolsCallEx(mcpID, "echo", contentLength), params: []byte(params), chunk: 3}
		c.run(t, e, 1)
		assert.Equal(t, "end", c.closed)
		assert.Equal(t, `{"content":[{"type":"text","text":"Echo: a } { \" ] ["}]}`, string(c.out))
		assert.Equal(t, mcp.McpOutcomeOk, outcome(t, c.endEx))
		// The initial stream is still open: end it, as the server does
		// once it has its answer.
		c.after(func() { c.send(frame.FrameEnd, c.initialID, c.seq, c.ack, c.max) })
		requireReleased(t, e)
	}
}

// TestReplyBeginEx: the reply's BEGIN echoes the request's kind, session
// and name, and leaves contentLength unknown.
func TestReplyBeginEx(t *testing.T) {
	e, mcpID := startEngine(t)
	c := &call{ext: toolsCallEx(mcpID, "echo", 40), params: []byte(`{"arguments":{"message":"x"}}`), end: true}
	c.run(t, e, 0)
	var ex mcp.McpBeginEx
	require.NoError(t, ex.Wrap(c.beginEx, 0, len(c.beginEx)))
	assert.Equal(t, mcpID, ex.TypeID())
	require.Equal(t, mcp.McpBeginExKindToolsCall, ex.Kind())
	call := ex.ToolsCall()
	assert.Equal(t, "s1", call.SessionIDString())
	assert.Equal(t, "echo", call.NameString())
	assert.Equal(t, int32(-1), call.ContentLength())
	requireReleased(t, e)
}

// TestErrorOutcome: params that are not an object, known only at END, get
// the error object and outcome ERROR.
func TestErrorOutcome(t *testing.T) {
	e, mcpID := startEngine(t)
	c := &call{ext: toolsCallEx(mcpID, "echo", -1), params: []byte(`"just a string"`), end: true}
	c.run(t, e, 0)
	assert.Equal(t, "end", c.closed)
	assert.Equal(t, `{"code":-32602,"message":"Invalid params: not a JSON object"}`, string(c.out))
	assert.Equal(t, mcp.McpOutcomeError, outcome(t, c.endEx))
	requireReleased(t, e)
}

// TestRefused: streams the toolkit does not serve are refused at BEGIN
// with McpResetEx.error, and the reply never opens.
func TestRefused(t *testing.T) {
	tests := []struct {
		name string
		ext  func(mcpID int32) []byte
		code int32
		msg  string
	}{
		{"no extension", func(int32) []byte { return nil }, -32600, "Invalid request: not an MCP application stream"},
		{"another type", func(mcpID int32) []byte { return toolsCallEx(mcpID+100, "echo", -1) }, -32600, "Invalid request: not an MCP application stream"},
		{"unknown kind", func(mcpID int32) []byte {
			ext := make([]byte, 13)
			ext[8] = byte(mcpID)
			ext[12] = 42
			return ext
		}, -32601, "Method not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, mcpID := startEngine(t)
			c := &call{ext: tt.ext(mcpID), params: []byte(`{}`), end: true}
			c.run(t, e, 0)
			require.True(t, c.refused)
			assert.False(t, c.begun)
			code, msg := resetError(t, c.resetEx)
			assert.Equal(t, tt.code, code)
			assert.Equal(t, tt.msg, msg)
			requireReleased(t, e)
		})
	}
}

// TestParamsTooLarge: params that outgrow the buffer slot get the initial
// stream reset and the error outcome on the reply.
func TestParamsTooLarge(t *testing.T) {
	e, mcpID := startEngine(t)
	params := []byte(`{"arguments":{"message":"` + strings.Repeat("x", 40<<10))
	c := &call{ext: toolsCallEx(mcpID, "echo", -1), params: params, chunk: 8 << 10, end: true}
	c.run(t, e, 0)
	require.True(t, c.refused)
	code, _ := resetError(t, c.resetEx)
	assert.Equal(t, int32(-32602), code)
	assert.Equal(t, `{"code":-32602,"message":"Invalid params: too large"}`, string(c.out))
	assert.Equal(t, mcp.McpOutcomeError, outcome(t, c.endEx))
	requireReleased(t, e)
}

// TestBusy: with every buffer slot taken, a request is refused at once.
func TestBusy(t *testing.T) {
	e, mcpID := startEngine(t, engine.WithBufferSlots(1), engine.WithWorkers(1))
	holder := &call{ext: toolsCallEx(mcpID, "echo", -1), noParamsYet: true}
	holder.w = e.Worker(0)
	holder.originID, _ = e.ResolveID(driver)
	holder.routedID, _ = e.ResolveID("app0")
	holder.buf = make([]byte, 64<<10)
	holder.done = make(chan struct{})
	holder.window = 8192
	holder.after(holder.start)
	require.Eventually(t, func() bool {
		var windowed bool
		holder.after(func() { windowed = holder.windowed })
		return windowed
	}, 2*time.Second, time.Millisecond)

	c := &call{ext: toolsCallEx(mcpID, "echo", -1), params: []byte(`{}`), end: true}
	c.run(t, e, 0)
	require.True(t, c.refused)
	code, msg := resetError(t, c.resetEx)
	assert.Equal(t, int32(-32603), code)
	assert.Equal(t, "Server busy", msg)

	holder.after(func() {
		holder.noParamsYet = false
		holder.params = []byte(`{"arguments":{"message":"late"}}`)
		holder.end = true
		holder.pump()
	})
	<-holder.done
	assert.Equal(t, `{"content":[{"type":"text","text":"Echo: late"}]}`, string(holder.out))
	requireReleased(t, e)
}

// startLong starts an engine on a manual clock and prepares a call of
// long_running_operation with params.
func startLong(t *testing.T, params string) (*engine.Engine, *call, *enginetest.Clock) {
	t.Helper()
	e, mcpID, clock := startClocked(t)
	return e, &call{ext: toolsCallEx(mcpID, "long_running_operation", -1), params: []byte(params)}, clock
}

// TestLongWithoutToken: without a progress token no FLUSH goes out, only
// the result once the duration is over (on a manual clock).
func TestLongWithoutToken(t *testing.T) {
	e, c, clock := startLong(t, `{"arguments":{"duration":0.1,"steps":4}}`)
	c.end = true
	moved := c.runTicking(t, e, 1, clock, 10*time.Millisecond)
	assert.GreaterOrEqual(t, moved, 100*time.Millisecond)
	assert.Empty(t, c.flushes)
	assert.Equal(t, `{"content":[{"type":"text","text":"Long running operation completed. Duration: 0.1 seconds, Steps: 4."}]}`, string(c.out))
	requireReleased(t, e)
}

// TestProgress: one FLUSH per step, in order, then the result (on a
// manual clock).
func TestProgress(t *testing.T) {
	e, c, clock := startLong(t, `{"arguments":{"duration":0.03,"steps":3},"_meta":{"progressToken":"tok-1"}}`)
	c.end = true
	c.runTicking(t, e, 0, clock, 5*time.Millisecond)
	require.Len(t, c.flushes, 3)
	for i, ext := range c.flushes {
		var ex mcp.McpFlushEx
		require.NoError(t, ex.Wrap(ext, 0, len(ext)))
		require.Equal(t, mcp.McpFlushExKindProgress, ex.Kind())
		p := ex.Progress()
		assert.Equal(t, `"tok-1"`, p.TokenString())
		assert.True(t, p.HasID())
		assert.Empty(t, p.IDString())
		assert.Equal(t, int64(i+1), p.Progress())
		assert.Equal(t, int64(3), p.Total())
	}
	assert.Equal(t, "end", c.closed)
	requireReleased(t, e)
}

// TestCancel: a long-running operation that the server cancels stops:
// after the ABORT of its initial stream the toolkit sends nothing more,
// and once the reply is reset too nothing of the stream is left. The
// engine runs on a manual clock, moved on past two more steps after the
// cancellation.
func TestCancel(t *testing.T) {
	for _, abort := range []bool{true, false} {
		name := "reset"
		if abort {
			name = "abort"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			// A step every 200ms.
			e, c, clock := startLong(t, `{"arguments":{"duration":2,"steps":10},"_meta":{"progressToken":7}}`)
			if abort {
				c.abortAfter = 1 // the initial stream is still open: no END
			} else {
				c.end, c.resetAfter = true, 1
			}
			c.runTicking(t, e, 0, clock, 200*time.Millisecond)
			// Two more steps would have gone out by now.
			clock.Tick(t, e, 500*time.Millisecond)
			enginetest.Settle(t, e)
			enginetest.Settle(t, e)
			assert.Zero(t, c.late.Load(), "the toolkit sent frames after the cancellation")
			if abort {
				c.after(func() { c.send(frame.FrameReset, c.replyID, c.inSeq, c.inSeq, c.window) })
			}
			requireReleased(t, e)
		})
	}
}

// TestLifecycle: the lifecycle reply carries the session id and the
// toolkit's capabilities; END ends it, ABORT aborts it.
func TestLifecycle(t *testing.T) {
	for _, close := range []frame.FrameType{frame.FrameEnd, frame.FrameAbort} {
		t.Run(close.String(), func(t *testing.T) {
			e, mcpID := startEngine(t)
			c := &call{ext: buildBeginEx(mcpID, func(b *mcp.McpBeginExBuilder) {
				b.Lifecycle().SessionID("s1").Capabilities(uint16(mcp.McpCapabilitiesClientElicitation))
			}), noParamsYet: true}
			c.prepare(e, 0)
			c.after(c.start)
			require.Eventually(t, func() bool {
				var ok bool
				c.after(func() { ok = c.begun && c.windowed })
				return ok
			}, 2*time.Second, time.Millisecond)
			c.after(func() { c.send(close, c.initialID, c.seq, c.ack, c.max) })
			<-c.done
			var ex mcp.McpBeginEx
			require.NoError(t, ex.Wrap(c.beginEx, 0, len(c.beginEx)))
			require.Equal(t, mcp.McpBeginExKindLifecycle, ex.Kind())
			lc := ex.Lifecycle()
			assert.Equal(t, "s1", lc.SessionIDString())
			assert.Equal(t, uint16(2063), lc.Capabilities())
			if close == frame.FrameEnd {
				assert.Equal(t, "end", c.closed)
			} else {
				assert.Equal(t, "abort", c.closed)
			}
			requireReleased(t, e)
		})
	}
}
