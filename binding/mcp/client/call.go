package client

import (
	"bytes"
	"encoding/binary"
	"strconv"

	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/frame"
	"github.com/sluicehq/sluice/internal/freelist"
)

// sink receives the response of a call.
type sink interface {
	// onResponse is the response head: its status; h.httpEx holds the
	// headers during the call.
	onResponse(c *call, status int)
	// onBody is response body bytes, valid during the call.
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
}

// call is one HTTP request to the upstream, an application stream to the
// exit (the http client): BEGIN with HttpBeginEx, the body as DATA, END.
// END waits for the response head: until then a refused connection reaches
// the call as RESET; afterwards as ABORT of the response. Calls are
// recycled per worker once both directions are over.
type call struct {
	h                  *handler
	fn                 engine.MessageConsumer
	sink               sink
	initialID, replyID int64
	traceID            int64
	out, in            engine.Flow
	body               []byte
	sent               int
	state              uint8
	status             int
	length             int64 // the response's Content-Length, -1 if none
	got                int64 // response body bytes received
}

const (
	callInitialDone uint8 = 1 << iota // END or ABORT sent, or RESET received
	callReplyDone                     // END or ABORT received, or RESET sent
	callBegun                         // response BEGIN received
	callClosed                        // the sink was told
)

func (h *handler) newCall(s sink) *call {
	c := freelist.Pop(&h.freeC)
	if c == nil {
		c = &call{h: h}
		c.fn = c.onFrame
	}
	c.sink, c.sent, c.state, c.status = s, 0, 0, 0
	c.length, c.got = -1, 0
	c.out, c.in = engine.Flow{}, engine.Flow{}
	c.body = c.body[:0]
	return c
}

// open sends the request head; the body in c.body follows as the http
// client grants credit. It reports false when the stream could not open.
func (c *call) open(rh *reqHead, traceID int64) bool {
	h := c.h
	w := h.w
	c.initialID = w.SupplyInitialID(h.exitID)
	c.replyID = engine.ReplyID(c.initialID)
	c.traceID = traceID
	s := h.s
	buf := w.WriteBuffer()
	b := h.beginB.Wrap(buf, 0, len(buf)).
		OriginID(h.cfg.ID).RoutedID(h.exitID).StreamID(c.initialID).
		Sequence(0).Acknowledge(0).Maximum(0).
		TraceID(traceID).Authorization(0).Affinity(0)
	off, max, ok := b.ExtensionSlot()
	if !ok {
		c.recycle()
		return false
	}
	eb := h.httpExB.Wrap(buf, off, max).TypeID(h.httpTypeID)
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
	limit, err := eb.BuildLimit()
	if err != nil {
		c.recycle()
		return false
	}
	n, err := b.ExtensionEnd(limit).BuildLimit()
	if err != nil || w.NewStream(buf[:n], c.fn) != nil {
		c.recycle()
		return false
	}
	return true
}

func (c *call) onFrame(t frame.FrameType, buf []byte) {
	h := c.h
	switch t {
	case frame.FrameWindow:
		if h.window.TryWrap(buf, 0, len(buf)) {
			if c.out.OnWindow(&h.window) != nil {
				c.fail()
				return
			}
			c.sendBody()
		}
	case frame.FrameReset:
		c.state |= callInitialDone
		c.fail()
	case frame.FrameBegin:
		if h.begin.TryWrap(buf, 0, len(buf)) {
			c.state |= callBegun
			c.in.Seq, c.in.Ack = h.begin.Sequence(), h.begin.Acknowledge()
			ext := h.begin.Extension()
			h.readHead(ext)
			status := h.resp.status
			c.status = status
			c.length = h.resp.length
			c.grant()
			c.sendBody()
			if c.state&callClosed == 0 {
				c.sink.onResponse(c, status)
			}
		}
	case frame.FrameData:
		if h.data.TryWrap(buf, 0, len(buf)) {
			if c.in.OnData(&h.data) != nil {
				c.fail()
				return
			}
			c.got += int64(len(h.data.Payload()))
			if c.state&callClosed == 0 {
				c.sink.onBody(c, h.data.Payload())
			}
			c.grant()
		}
	case frame.FrameFlush:
		if h.flush.TryWrap(buf, 0, len(buf)) {
			_ = c.in.OnFrame(h.flush.Sequence())
		}
	case frame.FrameEnd:
		c.state |= callReplyDone
		c.endRequest()
		c.close(false)
	case frame.FrameAbort:
		c.state |= callReplyDone
		c.fail()
	}
}

// callWindow is the response credit a call keeps open: its sink buffers.
const callWindow = 64 << 10

// The http client cuts the body's DATA to any window, so the credit is
// renewed only once half of it is used (Flow.WindowDue): a reply of one
// DATA costs one WINDOW, not two.
func (c *call) grant() {
	if c.state&callReplyDone != 0 || !c.in.WindowDue(c.in.Seq, callWindow, 0) {
		return
	}
	c.in.Ack, c.in.Max = c.in.Seq, callWindow
	h := c.h
	buf := h.w.WriteBuffer()
	n, err := h.windowB.Wrap(buf, 0, len(buf)).
		OriginID(h.cfg.ID).RoutedID(h.exitID).StreamID(c.replyID).
		Sequence(c.in.Seq).Acknowledge(c.in.Ack).Maximum(c.in.Max).
		TraceID(c.traceID).BudgetID(0).Padding(0).
		BuildLimit()
	if err == nil {
		_ = h.w.Send(frame.FrameWindow, buf[:n])
	}
}

// sendBody sends what the credit allows of the body; once it is all out
// and the response has begun, the request ends.
func (c *call) sendBody() {
	h := c.h
	for c.sent < len(c.body) && c.state&callInitialDone == 0 {
		n := int(min(int64(len(c.body)-c.sent), c.out.Available()-int64(c.out.Pad), int64(h.maxPayload)))
		if n <= 0 {
			return
		}
		buf := h.w.WriteBuffer()
		reserved := c.out.Send(n)
		m, err := h.dataB.Wrap(buf, 0, len(buf)).
			OriginID(h.cfg.ID).RoutedID(h.exitID).StreamID(c.initialID).
			Sequence(c.out.Seq - int64(reserved)).Acknowledge(c.out.Ack).Maximum(c.out.Max).
			TraceID(c.traceID).
			Flags(3).BudgetID(c.out.Budget).Reserved(reserved).Payload(c.body[c.sent : c.sent+n]).
			BuildLimit()
		if err == nil {
			err = h.w.Send(frame.FrameData, buf[:m])
		}
		if err != nil {
			c.fail()
			return
		}
		c.sent += n
	}
	if c.state&callBegun != 0 {
		c.endRequest()
	}
}

func (c *call) endRequest() {
	if c.state&callInitialDone != 0 || c.sent < len(c.body) {
		return
	}
	c.state |= callInitialDone
	h := c.h
	buf := h.w.WriteBuffer()
	n, err := h.endB.Wrap(buf, 0, len(buf)).
		OriginID(h.cfg.ID).RoutedID(h.exitID).StreamID(c.initialID).
		Sequence(c.out.Seq).Acknowledge(c.out.Ack).Maximum(c.out.Max).
		TraceID(c.traceID).
		BuildLimit()
	if err == nil {
		_ = h.w.Send(frame.FrameEnd, buf[:n])
	}
}

// abort tears the call down from our side: the request is aborted and the
// response reset. The sink is not told.
func (c *call) abort() {
	if c.sink == nil {
		return
	}
	c.state |= callClosed
	c.teardown()
	c.recycle()
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
	if c.state&(callInitialDone|callReplyDone) == callInitialDone && c.length >= 0 && c.got >= c.length {
		c.state |= callClosed
		return
	}
	c.abort()
}

func (c *call) fail() {
	c.teardown()
	c.close(true)
}

func (c *call) teardown() {
	h := c.h
	buf := h.w.WriteBuffer()
	if c.state&callInitialDone == 0 {
		c.state |= callInitialDone
		n, err := h.abortB.Wrap(buf, 0, len(buf)).
			OriginID(h.cfg.ID).RoutedID(h.exitID).StreamID(c.initialID).
			Sequence(c.out.Seq).Acknowledge(c.out.Ack).Maximum(c.out.Max).
			TraceID(c.traceID).
			BuildLimit()
		if err == nil {
			_ = h.w.Send(frame.FrameAbort, buf[:n])
		}
	}
	if c.state&callReplyDone == 0 {
		c.state |= callReplyDone
		n, err := h.resetB.Wrap(buf, 0, len(buf)).
			OriginID(h.cfg.ID).RoutedID(h.exitID).StreamID(c.replyID).
			Sequence(c.in.Seq).Acknowledge(c.in.Ack).Maximum(c.in.Max).
			TraceID(c.traceID).
			BuildLimit()
		if err == nil {
			_ = h.w.Send(frame.FrameReset, buf[:n])
		}
	}
}

// close tells the sink, once.
func (c *call) close(failed bool) {
	if c.sink != nil && c.state&callClosed == 0 {
		c.state |= callClosed
		c.sink.onClose(c, failed)
	}
	c.recycle()
}

// recycle returns the call to the worker's free list once both directions
// are over (a call whose stream never opened counts as over).
func (c *call) recycle() {
	if c.sink == nil {
		return
	}
	if c.state&(callInitialDone|callReplyDone) != callInitialDone|callReplyDone && c.initialID != 0 && c.state != 0 {
		return
	}
	c.sink = nil
	c.initialID = 0
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
	for range count {
		if !h.hdr.TryWrap(ext, p, end) {
			return
		}
		p = h.hdr.Limit()
		switch string(h.hdr.Name()) {
		case ":status":
			h.resp.status = atoi(h.hdr.Value())
		case "content-type":
			h.resp.sse = bytes.Contains(h.hdr.Value(), eventStream)
		case "content-length":
			h.resp.length = contentLength(h.hdr.Value())
		case "mcp-session-id":
			h.resp.sessionID = h.hdr.Value()
		case "www-authenticate":
			h.resp.auth = h.hdr.Value()
		}
	}
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
