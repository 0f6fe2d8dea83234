package client

import (
	"bytes"
	"encoding/binary"
	"strconv"
	"time"

	"github.com/sluicehq/sluice/binding/internal/streams"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/frame"
	"github.com/sluicehq/sluice/internal/freelist"
)

// sink receives the response of a call.
type sink interface {
	// onResponse is the response head: its status; h.httpEx holds the
	// headers during the call.
	onResponse(c *call, status int)
	// onBody is response body bytes, valid during the call; at the
	// response's END it has none, for the sink to take a JSON message its
	// bodyReader held until the body was over.
	onBody(c *call, p []byte)
	// onClose ends the call: the response ended (failed false), or the
	// request was refused, the response aborted or never came (true).
	onClose(c *call, failed bool)
}

// reqHead names an upstream request: its method and MCP headers.
type reqHead struct {
	method      string // POST, GET or DELETE
	sessionID   string
	version     string
	lastEventID []byte
	mcpMethod   []byte // 2026-07-28: Mcp-Method
	mcpName     []byte // 2026-07-28: Mcp-Name, already encoded
	bearer      []byte // "Bearer <credentials>" from the binding's guard; nil: none
	params      []paramHdr
}

// paramHdr is a Mcp-Param header: its whole name, and the encoded value.
type paramHdr struct {
	name  string
	value []byte
}

// call is one HTTP request to the upstream, an application stream to the
// exit (the http client): BEGIN with HttpBeginEx, the body as DATA, END.
// Its Stream sends the request (Out) and receives the response (In).
// END waits for the response head: until then a refused connection reaches
// the call as RESET; afterwards as ABORT of the response. Calls are
// recycled per worker once both directions are over.
type call struct {
	engine.Stream
	h      *handler
	fn     engine.MessageConsumer
	sink   sink
	body   []byte
	sent   int
	told   bool // the sink was told the call is over
	status int
	length int64 // the response's Content-Length, -1 if none
	got    int64 // response body bytes received
	held   bool  // the sink holds the response's credit back (grant offers none)
	// timer is the deadline of a call no owner times (expireIn), or 0.
	timer    int64
	expireFn func()
}

func (h *handler) newCall(s sink) *call {
	c := freelist.Pop(&h.freeC)
	if c == nil {
		c = &call{h: h}
		c.fn = c.onFrame
		c.expireFn = c.expire
	}
	c.sink, c.sent, c.told, c.status, c.held = s, 0, false, 0, false
	c.length, c.got = -1, 0
	c.body = c.body[:0]
	return c
}

// open sends the request head, with trace id traceID on every frame of
// the call; the body in c.body follows as the http client grants credit.
// It reports false when the stream could not open.
func (c *call) open(rh *reqHead, traceID int64) bool {
	h := c.h
	w := h.w
	c.Connect(w, h.cfg.ID, h.exitID, w.SupplyInitialID(h.exitID), c.fn)
	c.Out.Trace, c.In.Trace = traceID, traceID
	if c.BeginWith(0, func(b *frame.BeginBuilder) { c.writeHead(b, rh) }) != nil {
		c.Forgo() // a BEGIN that could not be built; a refused one gave the call up already
		c.recycle()
		return false
	}
	return true
}

// writeHead writes the request's HttpBeginEx into the BEGIN b.
func (c *call) writeHead(b *frame.BeginBuilder, rh *reqHead) {
	h := c.h
	s := h.s
	eb := h.httpExB.WrapSlot(b.ExtensionBuffer()).TypeID(h.httpTypeID)
	hs := eb.Headers()
	hs.Item().Name(":method").Value(rh.method)
	hs.Item().Name(":scheme").Value(s.scheme)
	hs.Item().Name(":authority").Value(s.authority)
	hs.Item().Name(":path").Value(s.path)
	switch rh.method {
	case "POST":
		hs.Item().Name("content-type").Value("application/json")
		hs.Item().Name("accept").Value("application/json, text/event-stream")
		hs.Item().Name("content-length").ValueBytes(strconv.AppendInt(h.idBuf[:0], int64(len(c.body)), 10))
	case "GET":
		hs.Item().Name("accept").Value("text/event-stream")
	}
	if rh.sessionID != "" {
		hs.Item().Name("mcp-session-id").Value(rh.sessionID)
	}
	if rh.version != "" {
		hs.Item().Name("mcp-protocol-version").Value(rh.version)
	}
	if rh.lastEventID != nil {
		hs.Item().Name("last-event-id").ValueBytes(rh.lastEventID)
	}
	if rh.mcpMethod != nil {
		hs.Item().Name("mcp-method").ValueBytes(rh.mcpMethod)
	}
	if rh.mcpName != nil {
		hs.Item().Name("mcp-name").ValueBytes(rh.mcpName)
	}
	for _, ph := range rh.params {
		hs.Item().Name(ph.name).ValueBytes(ph.value)
	}
	switch {
	case rh.bearer != nil:
		hs.Item().Name("authorization").ValueBytes(rh.bearer)
	case s.staticAuth != nil:
		// The gateway's own credentials go on the session's requests too
		// (initialize, its GET stream, DELETE).
		hs.Item().Name("authorization").ValueBytes(s.staticAuth)
	}
	b.ExtensionDone(eb.BuildLimit())
}

// onFrame receives the response and the throttle frames of the request.
// A response that breaks flow control fails the call; a malformed frame
// is dropped, unless it closed its direction.
func (c *call) onFrame(t frame.FrameType, buf []byte) {
	h := c.h
	switch t {
	case frame.FrameWindow:
		if _, err := c.OnWindow(buf); streams.Received(err, c.fail) {
			c.sendBody()
		}
	case frame.FrameReset:
		_, _ = c.OnReset(buf) // Out closes either way
		c.fail()
	case frame.FrameBegin:
		b, err := c.OnBegin(buf)
		if err != nil {
			return
		}
		h.readHead(b.Extension())
		if h.resp.twice {
			// Content-Type or Mcp-Session-Id given twice: the SDKs read
			// the first, the last or both joined.
			h.w.Logger().Warn("mcp client: upstream response names a header twice", "binding", h.cfg.Name)
			c.fail()
			return
		}
		status := h.resp.status
		c.status = status
		c.length = h.resp.length
		c.grant()
		c.sendBody()
		if !c.told {
			c.sink.onResponse(c, status)
		}
	case frame.FrameData:
		if d, err := c.OnData(buf); streams.Received(err, c.fail) {
			p := d.Payload()
			c.got += int64(len(p))
			if !c.told {
				c.sink.onBody(c, p)
			}
			c.grant()
		}
	case frame.FrameFlush:
		_, err := c.OnFlush(buf)
		streams.Received(err, c.fail)
	case frame.FrameEnd:
		_, _ = c.OnEnd(buf) // In closes either way
		c.endRequest()
		if !c.told {
			c.sink.onBody(c, nil) // the body is over: a JSON message held for it
		}
		c.close(false)
	case frame.FrameAbort:
		_, _ = c.OnAbort(buf) // In closes either way
		c.fail()
	}
}

// callWindow is the response credit a call keeps open: its sink buffers.
const callWindow = 64 << 10

// The http client cuts the body's DATA to any window, so the credit is
// renewed only once half of it is used (Flow.WindowDue): a reply of one
// DATA costs one WINDOW, not two.
func (c *call) grant() {
	if c.held || c.In.Closed() || !c.In.WindowDue(c.In.Seq, callWindow, 0) {
		return
	}
	c.In.Ack, c.In.Max = c.In.Seq, callWindow
	if c.Window() != nil {
		c.fail()
	}
}

// sendBody sends what the credit allows of the body; once it is all out
// and the response has begun, the request ends.
func (c *call) sendBody() {
	h := c.h
	for c.sent < len(c.body) && !c.Out.Closed() {
		n := int(min(int64(len(c.body)-c.sent), c.Out.Available()-int64(c.Out.Pad), int64(h.maxPayload)))
		if n <= 0 {
			return
		}
		if c.Data(frame.FlagsDataMessage, c.body[c.sent:c.sent+n], nil) != nil {
			c.fail()
			return
		}
		c.sent += n
	}
	if c.In.Opening() {
		c.endRequest()
	}
}

func (c *call) endRequest() {
	if c.Out.Closed() || c.sent < len(c.body) {
		return
	}
	if c.End(nil) != nil {
		c.fail()
	}
}

// abort tears the call down from our side: the request is aborted and the
// response reset. The sink is not told.
func (c *call) abort() {
	if c.sink == nil {
		return
	}
	c.told = true
	c.teardown()
	c.recycle()
}

// expireIn gives a call whose answer nobody waits for (discardSink) a
// deadline d from now, past which it is torn down, so that an upstream
// that never answers does not hold its stream and connection for ever.
func (c *call) expireIn(d time.Duration) {
	c.timer = c.h.w.TimerAt(c.h.w.Now().Add(d), c.expireFn)
}

func (c *call) expire() {
	c.timer = 0
	c.abort()
}

// abortCall aborts the call *owned names, if any, after its owner lets
// go of it (*owned = nil), so that the abort's onClose finds it gone.
func abortCall(owned **call) {
	if c := *owned; c != nil {
		*owned = nil
		c.abort()
	}
}

// ownedCall reports whether c, a call that closed, is the one *owned
// names, and then lets go of it: a call its owner had already let go of
// concerns the owner no more.
func ownedCall(owned **call, c *call) bool {
	if *owned != c {
		return false
	}
	*owned = nil
	return true
}

// bodyOver reports whether the response body has all come: its
// Content-Length is reached, or the response ended.
func (c *call) bodyOver() bool {
	return c.length >= 0 && c.got >= c.length || c.In.Closed()
}

// finish ends a call whose answer came. When the body its Content-Length
// announced has all arrived, the response's END is already on its way (the
// http client sends the last DATA and END together): the call waits for
// it, without telling the sink, rather than reset a response that is
// over (a RESET per tools/call, dropped by the engine on arrival). Any
// other call is aborted.
func (c *call) finish() {
	if c.sink == nil {
		return
	}
	if c.Out.Closed() && !c.In.Closed() && c.length >= 0 && c.got >= c.length {
		c.told = true
		return
	}
	c.abort()
}

func (c *call) fail() {
	c.teardown()
	c.close(true)
}

// teardown aborts the request and resets the response while they are
// open; a refused frame leaves nothing more to close.
func (c *call) teardown() {
	_ = c.Abort(nil)
	_ = c.Reset(nil)
}

// close tells the sink, once.
func (c *call) close(failed bool) {
	if c.sink != nil && !c.told {
		c.told = true
		c.sink.onClose(c, failed)
	}
	c.recycle()
}

// recycle returns the call to the worker's free list once both directions
// are over (a call whose stream never opened is over).
func (c *call) recycle() {
	if c.sink == nil || !c.Closed() {
		return
	}
	c.h.w.Disarm(&c.timer)
	c.sink = nil
	c.h.freeC = append(c.h.freeC, c)
}

// respHead is what the sinks read of a response head, valid during
// onResponse.
type respHead struct {
	status    int
	length    int64 // Content-Length, -1 if none or not a number
	sse       bool
	sessionID []byte
	auth      []byte
	twice     bool // Content-Type or Mcp-Session-Id given twice
}

// readHead reads a response's HttpBeginEx headers into h.resp. It walks
// the extension's array itself: the generated reader's validation of
// the array allocates, and this runs once per request. The layout is the
// core extension prefix (compositeId int64, typeId int32), then the
// headers array (int32 byte length, int32 count, the items).
func (h *handler) readHead(ext []byte) {
	h.resp = respHead{length: -1}
	const arrOff = 12
	if len(ext) < arrOff+8 || int32(binary.LittleEndian.Uint32(ext[8:])) != h.httpTypeID {
		return
	}
	length := int(int32(binary.LittleEndian.Uint32(ext[arrOff:])))
	count := int(int32(binary.LittleEndian.Uint32(ext[arrOff+4:])))
	p := arrOff + 8
	if length < 0 || count < 0 || length > len(ext)-p {
		return
	}
	end := p + length
	var ctypes, sids int
	for range count {
		if !h.hdr.TryWrap(ext, p, end) {
			break
		}
		p = h.hdr.Limit()
		switch string(h.hdr.Name()) {
		case ":status":
			h.resp.status = atoi(h.hdr.Value())
		case "content-type":
			ctypes++
			h.resp.sse = bytes.Contains(h.hdr.Value(), eventStream)
		case "content-length":
			h.resp.length = contentLength(h.hdr.Value())
		case "mcp-session-id":
			sids++
			h.resp.sessionID = h.hdr.Value()
		case "www-authenticate":
			h.resp.auth = h.hdr.Value()
		}
	}
	h.resp.twice = ctypes > 1 || sids > 1
}

var eventStream = []byte("text/event-stream")

// contentLength parses a Content-Length value: -1 unless it is 1 to 18
// digits.
func contentLength(b []byte) int64 {
	if len(b) == 0 || len(b) > 18 {
		return -1
	}
	var n int64
	for _, ch := range b {
		if ch < '0' || ch > '9' {
			return -1
		}
		n = n*10 + int64(ch-'0')
	}
	return n
}

func atoi(b []byte) int {
	n := 0
	for _, ch := range b {
		if ch < '0' || ch > '9' {
			return 0
		}
		n = n*10 + int(ch-'0')
	}
	return n
}
