package server

import (
	"bytes"
	"errors"
	"net/netip"
	"strconv"
	"time"

	"github.com/sluicehq/sluice/binding"
	"github.com/sluicehq/sluice/binding/http"
	"github.com/sluicehq/sluice/binding/http/h1"
	"github.com/sluicehq/sluice/binding/http/internal/connbuf"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/frame"
	"github.com/sluicehq/sluice/engine/frame/proxy"
	"github.com/sluicehq/sluice/engine/guard"
	"github.com/sluicehq/sluice/idl/flyweight"
	"github.com/sluicehq/sluice/internal/flagset"
)

// server is the http server kind on one worker. Each network stream (a
// connection, from tcp) is a serverConn; each request on it opens one
// application stream whose BEGIN carries an HttpBeginEx with the request
// headers in Zilla's order (:scheme, :method and :path, then the header
// fields with lower-case names, hop-by-hop ones dropped and Host turned
// into :authority where it stands), whose DATA is
// the decoded body and whose END ends it. The application's reply BEGIN
// carries :status and the response headers; its DATA is the response
// body, written as it arrives (content-length framed when the app gives a
// length, chunked one chunk per DATA otherwise, so SSE streams through,
// and delimited by the close for HTTP/1.0), and its END ends the response
// with its trailers. Requests on a connection are answered in order:
// pipelined requests wait in the connection's buffer until the response
// before them is complete.
//
// The server answers by itself, with a short text/plain body, what never
// reaches the app: malformed or oversized requests (RFC 9112 statuses
// from package h1, then close), no route (404), authorization (401, 403),
// and an app that refuses a request with RESET (503, or the :status of
// its HttpResetEx, then close).
type server struct {
	w      *engine.Worker
	cfg    *engine.BindingConfig
	s      *settings
	typeID int32
	// proxyTypeID and proxyEx read the network BEGIN's ProxyBeginEx.
	proxyTypeID int32
	proxyEx     proxy.ProxyBeginEx
	pool        *engine.BufferPool

	// Flyweights reused for every frame.
	begin   frame.Begin
	hdr     frame.Frame
	exB     http.HttpBeginExBuilder
	ex      http.HttpBeginEx
	endEx   http.HttpEndEx
	resetEx http.HttpResetEx
	lower   []byte // scratch for lower-casing header names
	pathBuf []byte // scratch for an absolute-form target's path
	authBuf []byte // scratch for an :authority with its default port added
	head    []byte // scratch for response heads

	// requestEx writes the HttpBeginEx of req into an app BEGIN; it is
	// made once, so that opening a stream allocates nothing. A request
	// the extension cannot carry fails the frame, with the status to
	// answer in refusal.
	requestEx func(*frame.BeginBuilder)
	req       *h1.RequestHead
	secureReq bool   // h.req came on a TLS connection: its :scheme is https
	remoteReq []byte // h.req's client address, empty when its connection named none
	refusal   int

	// conns lists the open connections, linked through serverConn.prev
	// and next, for Drain; draining is set once Drain has run.
	conns    *serverConn
	draining bool
}

func init() { http.RegisterKind("server", newServer) }

// newServer compiles the configuration and makes the server for one
// worker.
func newServer(w *engine.Worker, cfg *engine.BindingConfig, opts *http.Options) (engine.Handler, error) {
	s, err := compile(w, cfg, opts)
	if err != nil {
		return nil, err
	}
	// A head waits in one buffer slot until it is complete: one that may
	// be larger than a slot could never complete, and the connection
	// would stall with its window shut instead of getting its 431.
	if room := w.BufferPool().SlotCapacity() - 1; s.limits.MaxHeaderBytes > room {
		s.limits.MaxHeaderBytes = room
	}
	h := &server{
		w: w, cfg: cfg, s: s, typeID: w.Labels().Supply("http"), proxyTypeID: w.Labels().Supply("proxy"), pool: w.BufferPool(),
		lower: make([]byte, 0, 256), head: make([]byte, 0, 4096),
	}
	h.requestEx = h.writeRequestEx
	return h, nil
}

// NewStream accepts each network stream (connection).
func (h *server) NewStream(_ frame.FrameType, buf []byte) engine.MessageConsumer {
	if !h.begin.TryWrap(buf, 0, len(buf)) {
		return nil
	}
	c := &serverConn{h: h}
	c.Init(h.pool, c)
	c.Accept(h.w, h.begin.OriginID(), h.begin.RoutedID(), h.begin.StreamID())
	c.req.Headers = make([]h1.Header, 0, min(h.s.limits.MaxHeaders, h1.DefaultMaxHeaders))
	c.x.c = c
	c.x.onApp = c.x.onMessage
	c.onTimerFn = c.onTimer
	c.link()
	return c.onNet
}

// connState is where a connection is in its sequence of requests.
type connState uint8

// Connection states.
const (
	stateHead     connState = iota // waiting for a request head
	stateBody                      // forwarding the request body
	stateResponse                  // the request is complete; waiting for the response
	stateDraining                  // an error response was sent; input is discarded
	stateClosed                    // both directions are over and the buffers released
)

// connFlags are what a connection holds besides its state and its
// stream's.
type connFlags uint8

const (
	connProcessing   connFlags = 1 << iota // process is running: nested calls leave it to the loop
	connCorked                             // a response head waits in out for the body's first bytes
	connLastResponse                       // the connection closes once the response in progress is out
	connDiscarding                         // input is read and dropped while the response goes on
	connSecure                             // the network BEGIN's ProxyBeginEx names a TLS version: :scheme is https
)

// serverConn is one HTTP/1.1 connection. Its stream is the network's: In
// carries the bytes the client sends, Out the response bytes; both carry
// the trace id of the connection's BEGIN.
type serverConn struct {
	// The network stream; Inbox holds request bytes, Outbox response bytes.
	connbuf.Conn
	h     *server
	state connState
	flags flagset.Set[connFlags]
	// corked is the length of the head connCorked holds back: the last
	// bytes of Outbox.
	corked int
	req    h1.RequestHead
	x      exchange

	// deadline is when the client's time for what the connection waits
	// on (wait) runs out; timerID is the engine timer armed for timerAt,
	// 0 when none is. A deadline that moves later leaves the timer as it
	// is, and the timer re-arms itself when it fires early, so refreshing
	// a deadline per DATA costs no timer operation.
	deadline  time.Time
	timerAt   time.Time
	timerID   int64
	wait      waitKind
	onTimerFn func()

	// remote is the client's address as the network BEGIN's ProxyBeginEx
	// names it (the IP, without the port), which every request of the
	// connection carries as :remote-address; remoteLen is 0 when the
	// BEGIN named none.
	remote    [maxRemote]byte
	remoteLen uint8

	// prev and next link the server's open connections (server.conns).
	prev, next *serverConn
}

// maxRemote bounds the text of a client's IP address: an IPv6 address
// with a zone fits.
const maxRemote = 64

// waitKind is what a connection waits for from its client, each with its
// own timeout.
type waitKind uint8

const (
	waitNone   waitKind = iota // the app's turn: no client timeout runs
	waitHead                   // a request head, from its first byte or the connection's start
	waitBody                   // the next bytes of a request body
	waitIdle                   // the next request on a kept-alive connection
	waitLinger                 // the client's end, after the connection's last response
)

// await starts the timeout of kind: the client must bring it about
// before the kind's timeout passes.
func (c *serverConn) await(kind waitKind) {
	s := c.h.s
	var d time.Duration
	switch kind {
	case waitNone:
		c.wait, c.deadline = waitNone, time.Time{}
		return
	case waitHead:
		d = s.header
	case waitBody:
		d = s.body
	case waitIdle:
		d = s.idle
	case waitLinger:
		d = lingerTimeout
	}
	c.wait = kind
	c.deadline = c.h.w.Now().Add(d)
	if c.timerID != 0 {
		if !c.timerAt.After(c.deadline) {
			return // fires first, and re-arms for the deadline
		}
		c.h.w.Cancel(c.timerID)
	}
	c.timerAt = c.deadline
	c.timerID = c.h.w.TimerAt(c.deadline, c.onTimerFn)
}

// onTimer acts on a deadline passed: a request head or body that does not
// come in time gets 408 (RFC 9110 §15.5.9) and the connection closes; an
// idle connection closes; one whose client does not close after its last
// response is reset.
func (c *serverConn) onTimer() {
	c.timerID = 0
	if c.state == stateClosed || c.wait == waitNone {
		return
	}
	if now := c.h.w.Now(); now.Before(c.deadline) {
		c.timerAt = c.deadline
		c.timerID = c.h.w.TimerAt(c.deadline, c.onTimerFn)
		return
	}
	if c.Outbox.Len() > 0 && c.wait != waitBody {
		// A response is still going out: its write is bounded by the
		// network (tcp's write-timeout), and the client's time starts
		// once it is out.
		c.await(c.wait)
		return
	}
	switch c.wait {
	case waitHead:
		if len(c.Input()) == 0 {
			c.closeIdle()
			return
		}
		c.fail(408, "request head timeout")
	case waitBody:
		if c.x.flags.Has(xDraining) {
			// The rest of a body nobody reads any more is late: the
			// connection closes, its response being out.
			c.abortAll()
			return
		}
		if c.state == stateBody && (!c.x.Out.Opened() || c.x.Out.Available() <= int64(c.x.Out.Pad)) {
			// The app holds the body back: the client is not late.
			c.await(waitBody)
			return
		}
		c.fail(408, "request body timeout")
	case waitIdle:
		c.closeIdle()
	case waitLinger:
		c.abortAll()
	}
}

// closeIdle closes a connection that carries no request: its reply ends,
// and the client has lingerTimeout to close its side.
func (c *serverConn) closeIdle() {
	c.state = stateDraining
	c.Inbox.Drop()
	c.await(waitLinger)
	c.endReply()
	c.Grant()
}

// stopTimer disarms the connection's timer once it is closed.
func (c *serverConn) stopTimer() {
	c.wait, c.deadline = waitNone, time.Time{}
	c.h.w.Disarm(&c.timerID)
}

// exchangeFlags are what an exchange knows of its request and response
// besides its app stream's state.
type exchangeFlags uint8

const (
	xChunked       exchangeFlags = 1 << iota // the request body is chunked
	xKeepAlive                               // the connection may carry another request after this one
	xHead                                    // a HEAD request: no response body
	xContinue                                // 100 Continue is owed once the app grants credit
	xResponseBegun                           // the response head is written
	xCrossOrigin                             // the response carries the CORS fields of a cross-origin policy
	xStanding                                // a GET whose response, once begun, is an event stream: it stands open rather than being in flight
	xDraining                                // the response is out before the body's end: the rest is read and dropped (drainBody)
)

// framing is how a response body is delimited on the connection.
type framing uint8

const (
	bodyLength     framing = iota // content-length bytes (responseRemaining)
	bodyChunked                   // chunked, one chunk per DATA
	bodyUntilClose                // up to the close (HTTP/1.0)
	bodyNone                      // no body: a HEAD request, a 204 or a 304
)

// exchange is the request/response in progress on a connection. There is
// at most one; its consumer is reused across requests. Its stream is the
// app's: Out carries the request, In the response.
type exchange struct {
	engine.Stream
	c                 *serverConn
	onApp             engine.MessageConsumer
	flags             flagset.Set[exchangeFlags]
	framing           framing // the response's, once it has begun
	remaining         int64   // content-length body bytes still to forward, or -1
	dec               h1.ChunkedDecoder
	minor             int // the request's HTTP/1.x minor version
	responseRemaining int64
	session           int64
	origin            []byte // copy of the Origin header for CORS, in originBuf
	originBuf         [256]byte
	bodyBytes         int64
}

// open reports whether the exchange's app stream is open: begun, and not
// yet closed both ways.
func (x *exchange) open() bool { return x.Out.Opening() && !x.Closed() }

// requestDone reports whether the request needs nothing more from the
// connection: its app stream was never opened (the server answers it by
// itself), or its request side is closed.
func (x *exchange) requestDone() bool { return !x.Out.Opening() || x.Out.Closed() }

// onNet handles the network stream's frames: the connection's bytes in,
// and the throttle of the response bytes out. A frame out of the stream's
// order or beyond its flow control tears the connection down; a malformed
// one is dropped, but for END, ABORT and RESET, which close their
// direction all the same.
func (c *serverConn) onNet(t frame.FrameType, buf []byte) {
	var err error
	switch t {
	case frame.FrameBegin:
		var b frame.Begin
		if b, err = c.OnBegin(buf); err == nil {
			c.In.Trace, c.Out.Trace, c.Out.Auth = b.TraceID(), b.TraceID(), b.Authorization()
			if c.h.readProxy(c, b.Extension()) {
				c.flags.Set(connSecure)
			}
			// The reply opens at once: tcp starts writing once it has it.
			if c.Begin(nil) != nil {
				c.abortAll()
				return
			}
			c.await(waitHead)
			c.Grant()
		}
	case frame.FrameData:
		var d frame.Data
		if d, err = c.OnData(buf); err == nil {
			c.onNetData(d.Payload())
		}
	case frame.FrameFlush:
		_, err = c.OnFlush(buf)
	case frame.FrameWindow:
		if _, err = c.OnWindow(buf); err == nil {
			c.flushOut()
			c.x.grantResponse()
			if c.state == stateHead && c.Outbox.Len() == 0 {
				c.resume()
			}
		}
	case frame.FrameEnd:
		_, _ = c.OnEnd(buf)
		c.onNetEnd()
		// The client's end may come after the reply's: both are over.
		c.closeIfDone()
		if c.h.draining {
			c.drain()
		}
	case frame.FrameAbort:
		_, _ = c.OnAbort(buf)
		c.abortAll()
	case frame.FrameReset:
		_, _ = c.OnReset(buf)
		c.abortAll()
	}
	if binding.Violation(err) {
		c.abortAll()
	}
}

func (c *serverConn) onNetData(p []byte) {
	if c.state == stateDraining || c.state == stateClosed || c.flags.Has(connDiscarding) {
		c.Grant()
		return
	}
	if !c.Inbox.Receive(p) {
		// The peer sent beyond the window granted.
		c.abortAll()
		return
	}
	switch {
	case c.state == stateHead && c.wait == waitIdle:
		// The next request's first bytes: its head has header-timeout
		// from now on.
		c.await(waitHead)
	case c.state == stateBody && c.wait == waitBody:
		c.await(waitBody)
	}
	c.process()
	c.Settle()
}

func (c *serverConn) onNetEnd() {
	if x := &c.x; x.flags.Has(xStanding|xResponseBegun) && x.open() && len(c.Input()) == 0 {
		// The client left its event stream: a stream may write nothing
		// for a long time, so no write would notice soon. It is reset
		// now, as Go's server cancels a request whose connection reads
		// EOF, freeing what the app holds for it (an MCP session's one
		// GET stream).
		c.abortAll()
		return
	}
	switch c.state {
	case stateHead, stateBody:
		// Requests already buffered are still answered, in order; a head
		// or a body cut short is answered by nextRequest or
		// bodyCutShort, and an empty buffer ends the reply.
		c.resume()
	case stateDraining:
		c.endReply()
	}
}

// resume processes the buffered input after something that may let it
// move on (app credit, network credit, a response complete) and offers the
// network the room that frees. Nested in onNetData it does nothing: that
// handler keeps its own input and grants when done.
func (c *serverConn) resume() {
	if c.flags.Has(connProcessing) || c.Inbox.Handling() {
		return
	}
	c.process()
	c.Settle()
}

// process parses and forwards as much input as it can.
func (c *serverConn) process() {
	if c.flags.Has(connProcessing) {
		return
	}
	c.flags.Set(connProcessing)
	for c.step() {
	}
	c.flags.Unset(connProcessing)
}

func (c *serverConn) step() bool {
	switch c.state {
	case stateHead:
		return c.nextRequest()
	case stateBody:
		if c.x.flags.Has(xDraining) {
			return c.x.drainBody()
		}
		if c.x.forwardBody() {
			return true
		}
		if c.In.Closed() && c.state == stateBody {
			c.bodyCutShort()
		}
	}
	return false
}

// bodyCutShort handles the end of the input while a request body is being
// forwarded. A client may half-close once its request is written: a body
// that is all here is still forwarded. One cut short abandons the request.
// A response under way still goes out, as the connection's last;
// otherwise the client gets a 400, as for a head cut short, and the app an
// ABORT (and RESET): waiting for its answer could be waiting forever,
// since a RESET it sends after the ABORT reaches no one.
func (c *serverConn) bodyCutShort() {
	switch {
	case c.x.bodyBuffered():
	case c.x.flags.Has(xResponseBegun):
		c.x.abortRequest()
		c.Inbox.Drop()
		c.state = stateResponse
		c.await(waitNone)
		c.flags.Set(connLastResponse)
	default:
		c.fail(400, "incomplete request body")
	}
}

// nextRequest parses the next request head and opens its app stream. It
// reports whether it made progress.
func (c *serverConn) nextRequest() bool {
	if c.Outbox.Len() > 0 || c.flags.Has(connLastResponse) {
		return false
	}
	in := c.Input()
	if len(in) == 0 {
		if c.In.Closed() {
			c.endReply()
		}
		return false
	}
	n, err := h1.ParseRequestHead(in, &c.req, c.h.s.limits)
	if err != nil {
		var perr *h1.Error
		if errors.As(err, &perr) {
			c.fail(perr.Status, perr.Reason)
			return false
		}
		if !errors.Is(err, h1.ErrIncomplete) {
			c.fail(400, err.Error())
			return false
		}
		if c.In.Closed() {
			c.fail(400, "incomplete request")
		}
		return false
	}
	c.Inbox.Consume(n)
	c.x.start(&c.req)
	return true
}

// fail answers a request the server cannot take (malformed, too large,
// unsupported) with status, then closes the connection once the response
// is written. RFC 9112 §6.3 has a server close after a framing error, and
// nothing after a bad head can be trusted to start the next request. A
// response already under way cannot be followed by another: the
// connection is aborted instead. The response is Zilla's: the status
// line, Server and Connection: close, with no body; reason says why for
// the code and is not sent.
func (c *serverConn) fail(status int, reason string) {
	x := &c.x
	if x.flags.Has(xResponseBegun) && x.open() {
		c.abortAll()
		return
	}
	x.abortRequest()
	x.resetResponse()
	x.release()
	c.state = stateDraining
	c.await(waitLinger)
	head := h1.AppendStatusLine(c.h.head[:0], 1, status)
	if status == 400 && reason == obsFoldReason {
		// Zilla names the cause in the reason phrase of this one.
		head = append(c.h.head[:0], "HTTP/1.1 400 Bad Request - obsolete line folding not supported\r\n"...)
	}
	c.h.head = c.h.appendClosingTail(c.h.appendServer(head))
	c.writeNet(c.h.head)
	c.Inbox.Drop()
	c.endReply()
}

// obsFoldReason is the reason h1 gives a head with obsolete line folding.
const obsFoldReason = "obsolete line folding"

// appendServer adds the Server field of the http.server.header setting,
// when it is set, to a response the server writes itself.
func (h *server) appendServer(head []byte) []byte {
	if len(h.s.server) == 0 {
		return head
	}
	return h1.AppendHeader(head, []byte("Server"), h.s.server)
}

// appendClosingTail ends the head of a response the server writes itself
// and closes after, as Zilla's do: Connection: close and no body, so the
// body is the empty rest of the connection.
func (h *server) appendClosingTail(head []byte) []byte {
	return append(head, "Connection: close\r\n\r\n"...)
}

// writeNet sends response bytes as far as the network window allows and
// queues the rest.
func (c *serverConn) writeNet(p []byte) {
	if c.Out.Closed() {
		return
	}
	if c.Outbox.Len() == 0 && !c.flags.Has(connCorked) {
		p = p[c.sendWindowed(p):]
		if len(p) == 0 || c.Out.Closed() {
			return
		}
	}
	if c.Outbox.Queue(p, c.ReplyID()) {
		return
	}
	if c.flags.Has(connCorked) && c.Outbox.Len() == 0 {
		// No slot to hold the head back: send it now.
		c.flags.Unset(connCorked)
		if p = p[c.sendWindowed(p):]; len(p) == 0 {
			return
		}
	}
	c.abortAll()
}

// uncork sends the response bytes held back by the head.
func (c *serverConn) uncork() {
	if c.flags.Has(connCorked) {
		c.flags.Unset(connCorked)
		c.flushOut()
	}
}

// sendWindowed sends what the network window allows of p, in DATA frames
// the write buffer can hold, and returns the number of bytes sent.
func (c *serverConn) sendWindowed(p []byte) int {
	sent := 0
	for sent < len(p) && !c.Out.Closed() {
		n := int(min(c.Out.Available()-int64(c.Out.Pad), int64(len(p)-sent), int64(c.maxPayload())))
		if n <= 0 {
			break
		}
		c.Send(p[sent : sent+n])
		sent += n
	}
	return sent
}

// maxPayload bounds the payload of one DATA frame: the whole frame, header
// and all, must fit the worker's write buffer.
func (c *serverConn) maxPayload() int { return len(c.h.w.WriteBuffer()) - frameRoom }

// frameRoom is what a DATA frame's header may take beyond its payload.
const frameRoom = 256

// flushOut sends what the window allows of the queued response bytes, and
// ends the reply once they are out if it is to close.
func (c *serverConn) flushOut() {
	if c.flags.Has(connCorked) {
		return
	}
	if c.Outbox.Len() > 0 {
		n := c.sendWindowed(c.Outbox.Bytes())
		if c.Out.Closed() {
			return
		}
		if c.Outbox.Sent(n); c.Outbox.Len() > 0 {
			return
		}
	}
	if c.flags.Has(connLastResponse) && c.state != stateBody && c.state != stateResponse {
		c.endReply()
	}
}

// endReply ends the network reply (the connection's write side) once the
// queued bytes are out.
func (c *serverConn) endReply() {
	if c.Out.Closed() || !c.Out.Opening() {
		return
	}
	if c.Outbox.Len() > 0 {
		c.flags.Set(connLastResponse)
		return
	}
	if c.End(nil) != nil {
		c.abortAll()
		return
	}
	c.closeIfDone()
}

// closeIfDone releases the connection once both directions are over.
func (c *serverConn) closeIfDone() {
	if c.state != stateClosed && c.Closed() {
		c.unlink()
		c.state = stateClosed
		c.stopTimer()
		c.Release()
		c.x.release()
	}
}

// Over reports whether the connection is closed; with Fail it makes the
// connection its Conn's owner.
func (c *serverConn) Over() bool { return c.state == stateClosed }

// Fail tears the connection down (abortAll): a grant or a send that
// cannot be had leaves it unable to go on.
func (c *serverConn) Fail() { c.abortAll() }

// abortAll tears the connection down: ABORT and RESET on both the network
// and the app stream in progress.
func (c *serverConn) abortAll() {
	if c.state == stateClosed {
		return
	}
	c.flags.Unset(connCorked)
	c.x.abortRequest()
	c.x.resetResponse()
	c.x.release()
	// Each direction is closed whether the ring takes its frame or not,
	// and one already closed is left alone: there is nothing left to try.
	_ = c.Abort(nil)
	_ = c.Reset(nil)
	c.closeIfDone()
}

// headerValue finds a request header by lower-case name (pseudo-headers
// included), for routing and authorization.
func (c *serverConn) headerValue(name []byte) ([]byte, bool) {
	r := &c.req
	if len(name) > 0 && name[0] == ':' {
		switch string(name) {
		case ":method":
			return r.Method, true
		case ":path":
			// An absolute-form target routes by its path, as the app
			// will see it.
			return c.h.targetPath(r.Target), true
		case ":authority":
			if r.Host == nil {
				return nil, false
			}
			secure := c.flags.Has(connSecure)
			if scheme, _, _, ok := absoluteForm(r.Target); ok {
				secure = string(scheme) == "https"
			}
			return c.h.fullAuthority(r.Host, secure), true
		case ":scheme":
			if c.flags.Has(connSecure) {
				return schemeHTTPS, true
			}
			return schemeHTTP, true
		}
		return nil, false
	}
	for i := range r.Headers {
		if h1.EqualFold(r.Headers[i].Name, name) {
			return r.Headers[i].Value, true
		}
	}
	return nil, false
}

// start begins the exchange for the request head just parsed.
func (x *exchange) start(r *h1.RequestHead) {
	c := x.c
	h := c.h
	*x = exchange{c: c, onApp: x.onApp, remaining: r.ContentLength, minor: r.Minor}
	if r.Chunked {
		x.flags.Set(xChunked)
	}
	if r.KeepAlive && !h.draining {
		x.flags.Set(xKeepAlive)
	}
	if string(r.Method) == "HEAD" {
		x.flags.Set(xHead)
	}
	if string(r.Method) == "GET" {
		x.flags.Set(xStanding)
	}
	x.dec.Limits = h.s.limits
	if o, ok := c.headerValue([]byte("origin")); ok && len(o) <= len(x.originBuf) {
		x.origin = x.originBuf[:copy(x.originBuf[:], o)]
	}
	c.state = stateBody
	if !x.flags.Has(xChunked) && x.remaining < 0 {
		x.remaining = 0
	}
	if x.flags.Has(xChunked) || x.remaining > 0 {
		c.await(waitBody)
	} else {
		c.await(waitNone)
	}
	if h.s.maxBody >= 0 && x.remaining > h.s.maxBody {
		c.fail(413, "request body too large")
		return
	}
	if !knownMethod(r.Method) {
		// Zilla's server implements the methods of RFC 9110 and PATCH;
		// any other is a 501 (RFC 9110 §9.1).
		c.fail(501, "method not implemented")
		return
	}
	if string(r.Method) == "CONNECT" {
		// Tunnels are not implemented, and a 2xx to CONNECT turns the
		// connection into one (RFC 9110 §9.3.6); a client may already be
		// sending tunnel bytes, so the connection closes too.
		c.fail(501, "CONNECT is not supported")
		return
	}
	if name := c.givenTwice(); name != nil {
		// The server would read one value, another reader of the request
		// perhaps another (RFC 9110 §5.3).
		c.fail(400, "given twice: "+string(name))
		return
	}
	if cs := h.s.cors; cs != nil {
		if c.preflighted(x) {
			x.preflight(cs)
			return
		}
		// A request with an Origin passes when the policy is
		// cross-origin and allows it, or when it is same-origin; a
		// cross-origin response gets the CORS fields.
		same := x.origin != nil && c.sameOrigin(x.origin)
		if x.origin != nil && !same && !(cs.crossOrigin && cs.allowOrigin(x.origin)) {
			x.respondLocal(403, nil)
			return
		}
		if cs.crossOrigin && !same {
			x.flags.Set(xCrossOrigin)
		}
	}
	// Route.
	exitID := h.s.exitID
	var rt *http.Route
	for i := range h.s.routes {
		if h.s.routes[i].Match(c.headerValue) {
			rt = &h.s.routes[i]
			exitID = rt.ExitID
			break
		}
	}
	if exitID == 0 {
		x.respondLocal(404, nil)
		return
	}
	// Authorize.
	if az := h.s.authz; az != nil {
		cred, ok := az.credentials(c)
		if !ok {
			x.respondLocal(401, az)
			return
		}
		x.session = az.guard.Reauthorize(c.In.Trace, h.cfg.ID, 0, cred)
		if x.session == guard.NotAuthorized || x.session == guard.NeedsPreauthorize {
			// Credentials given but refused: 403, as Zilla answers; 401
			// is for a request that carries none.
			x.session = 0
			x.respondLocal(403, nil)
			return
		}
		if rt != nil && rt.Roles != nil {
			if roles, ok := rt.Roles[az.guardName]; ok && !az.guard.Verify(x.session, roles) {
				x.respondLocal(403, nil)
				return
			}
		}
	}
	if status := x.doBegin(r, exitID); status != 0 {
		x.respondLocal(status, nil)
		return
	}
	// RFC 9110 §10.1.1: 100 Continue invites the body, so it waits, as
	// in net/http, until the app is ready to read it: its first credit.
	// An app that answers first never asks for the body.
	if r.ExpectContinue && (x.flags.Has(xChunked) || x.remaining > 0) {
		x.flags.Set(xContinue)
	}
}

// credentials extracts the credentials from the configured header, query
// parameter or cookie.
func (az *authorizer) credentials(c *serverConn) (string, bool) {
	for _, src := range az.sources {
		var v []byte
		var ok bool
		switch src.kind {
		case 'h':
			v, ok = c.headerValue(src.name)
		case 'q':
			v, ok = queryParam(c.req.Target, src.name)
		case 'c':
			if cookies, found := c.headerValue([]byte("cookie")); found {
				v, ok = cookieValue(cookies, src.name)
			}
		}
		if !ok || !bytes.HasPrefix(v, src.prefix) || !bytes.HasSuffix(v, src.suffix) || len(v) < len(src.prefix)+len(src.suffix) {
			continue
		}
		cred := v[len(src.prefix) : len(v)-len(src.suffix)]
		if len(cred) > 0 {
			return string(cred), true
		}
	}
	return "", false
}

// givenTwice returns the name of a header or query parameter the request
// gives more than once, of those the server reads one value of
// (settings.readOnce), or nil.
func (c *serverConn) givenTwice() []byte {
	r := &c.req
	for _, name := range c.h.s.once {
		n := 0
		for i := range r.Headers {
			if h1.EqualFold(r.Headers[i].Name, name) {
				n++
			}
		}
		if n > 1 {
			return name
		}
	}
	if len(c.h.s.onceQuery) > 0 {
		_, query, _ := bytes.Cut(r.Target, []byte("?"))
		for _, name := range c.h.s.onceQuery {
			if _, n := pair(query, '&', false, name); n > 1 {
				return name
			}
		}
	}
	if len(c.h.s.onceCookie) > 0 {
		cookies, _ := c.headerValue([]byte("cookie"))
		for _, name := range c.h.s.onceCookie {
			if _, n := pair(cookies, ';', true, name); n > 1 {
				return name
			}
		}
	}
	return nil
}

// pair finds the name=value pairs named name in list, pairs separated by
// sep (a cookie's with the spaces around them trimmed): the first one's
// value, and how many there are, counted up to two.
func pair(list []byte, sep byte, trim bool, name []byte) (v []byte, n int) {
	for len(list) > 0 && n < 2 {
		var kv []byte
		kv, list, _ = bytes.Cut(list, []byte{sep})
		if trim {
			kv = bytes.TrimSpace(kv)
		}
		if k, val, _ := bytes.Cut(kv, []byte("=")); bytes.Equal(k, name) {
			if n == 0 {
				v = val
			}
			n++
		}
	}
	return v, n
}

func queryParam(target, name []byte) ([]byte, bool) {
	_, q, ok := bytes.Cut(target, []byte("?"))
	if !ok {
		return nil, false
	}
	v, n := pair(q, '&', false, name)
	return v, n > 0
}

func cookieValue(header, name []byte) ([]byte, bool) {
	v, n := pair(header, ';', true, name)
	return v, n > 0
}

// doBegin opens the app stream to exitID with the request headers in an
// HttpBeginEx. It returns 0, or the status to answer when the stream
// cannot open: 400 for an absolute-form target without an authority, 431
// for headers the extension cannot carry (a name beyond the 255 bytes of
// its string8, or more than a frame holds), 503 when the engine refuses.
func (x *exchange) doBegin(r *h1.RequestHead, exitID int64) int {
	c := x.c
	h := c.h
	x.Connect(h.w, h.cfg.ID, exitID, h.w.SupplyInitialID(exitID), x.onApp)
	x.Out.Trace, x.In.Trace, x.Out.Auth = c.In.Trace, c.In.Trace, x.session
	h.req, h.refusal, h.secureReq = r, 0, c.flags.Has(connSecure)
	h.remoteReq = c.remote[:c.remoteLen]
	err := x.BeginWith(0, h.requestEx)
	h.req, h.remoteReq = nil, nil
	switch {
	case err == nil:
		return 0
	case h.refusal != 0:
		return h.refusal
	}
	return 503
}

// errRefused fails a BEGIN whose request the extension cannot carry.
var errRefused = errors.New("http server: request cannot be forwarded")

// writeRequestEx is requestEx: it writes the HttpBeginEx of h.req in
// place, or fails the BEGIN with the status to answer in h.refusal.
func (h *server) writeRequestEx(b *frame.BeginBuilder) {
	r := h.req
	off, max, ok := b.ExtensionSlot()
	if !ok {
		h.refusal = 503
		return
	}
	eb := h.exB.Wrap(h.w.WriteBuffer(), off, max).TypeID(h.typeID)
	hs := eb.Headers()
	// Zilla's order: :scheme, :method and :path, then :authority, which
	// an absolute-form target names at once and a Host field names where
	// it stands among the fields.
	authority := r.Host
	if scheme, abs, path, ok := absoluteForm(r.Target); ok {
		// A proxy's request (RFC 9112 §3.2.2): the target names the
		// scheme and the authority, and a Host header is ignored. The
		// scheme travels on, so that an https target is never sent in
		// cleartext by an http client that speaks no TLS.
		if len(abs) == 0 {
			h.refuse(b, 400)
			return
		}
		path = h.rootedPath(path)
		hs.Item().Name(":scheme").ValueBytes(scheme)
		hs.Item().Name(":method").ValueBytes(r.Method)
		hs.Item().Name(":path").ValueBytes(path)
		hs.Item().Name(":authority").ValueBytes(h.fullAuthority(abs, string(scheme) == "https"))
		authority = nil
	} else {
		if h.secureReq {
			hs.Item().Name(":scheme").Value("https")
		} else {
			hs.Item().Name(":scheme").Value("http")
		}
		hs.Item().Name(":method").ValueBytes(r.Method)
		hs.Item().Name(":path").ValueBytes(r.Target)
	}
	if len(h.remoteReq) > 0 {
		// Sluice's: the client's address, which no field of the request
		// can name (a field name holds no ':'), for the app's limits per
		// client.
		hs.Item().Name(":remote-address").ValueBytes(h.remoteReq)
	}
	options := false
	for i := range r.Headers {
		options = options || h1.EqualFold(r.Headers[i].Name, "connection")
	}
	for i := range r.Headers {
		hd := &r.Headers[i]
		if h1.EqualFold(hd.Name, "host") {
			if authority != nil {
				hs.Item().Name(":authority").ValueBytes(h.fullAuthority(authority, h.secureReq))
				authority = nil
			}
			continue
		}
		if h1.EqualFold(hd.Name, "transfer-encoding") {
			// The parser let through only a body whose last coding is
			// chunked; the app hears of it, as Zilla tells it.
			hs.Item().Name("transfer-encoding").Value("chunked")
			continue
		}
		if h1.HopByHop(hd.Name) || options && connectionOption(r, hd.Name) {
			continue
		}
		if len(hd.Name) > maxHeaderName {
			h.refuse(b, 431)
			return
		}
		hs.Item().NameBytes(h.lowerName(hd.Name)).ValueBytes(hd.Value)
	}
	if authority != nil {
		// A Host the parser took from elsewhere than a field.
		hs.Item().Name(":authority").ValueBytes(h.fullAuthority(authority, h.secureReq))
	}
	limit, err := eb.BuildLimit()
	if err != nil {
		h.refuse(b, 431)
		return
	}
	b.ExtensionEnd(limit)
}

// refuse fails the BEGIN being built, to be answered with status.
func (h *server) refuse(b *frame.BeginBuilder, status int) {
	h.refusal = status
	b.Fail(errRefused)
}

// maxHeaderName is the longest name an HttpHeader's string8 holds.
const maxHeaderName = 255

// connectionOption reports whether name is listed in the request's
// Connection fields. RFC 9110 §7.6.1: an intermediary removes the fields
// the connection options name before forwarding a message; they belong to
// the hop.
func connectionOption(r *h1.RequestHead, name []byte) bool {
	for i := range r.Headers {
		hd := &r.Headers[i]
		if !h1.EqualFold(hd.Name, "connection") {
			continue
		}
		for v := hd.Value; len(v) > 0; {
			var opt []byte
			opt, v, _ = bytes.Cut(v, []byte(","))
			if h1.EqualFold(bytes.TrimSpace(opt), name) {
				return true
			}
		}
	}
	return false
}

func (h *server) lowerName(name []byte) []byte {
	h.lower = h.lower[:0]
	for _, ch := range name {
		if 'A' <= ch && ch <= 'Z' {
			ch += 'a' - 'A'
		}
		h.lower = append(h.lower, ch)
	}
	return h.lower
}

// sendContinue writes the 100 Continue owed to an Expect: 100-continue
// request once the app has granted credit for its body, unless the final
// response has begun.
func (x *exchange) sendContinue() {
	if !x.flags.Has(xContinue) || x.flags.Has(xResponseBegun) || x.Out.Available() <= int64(x.Out.Pad) {
		return
	}
	x.flags.Unset(xContinue)
	x.c.writeNet(continueResponse)
}

var continueResponse = []byte("HTTP/1.1 100 Continue\r\n\r\n")

// bodyBuffered reports whether the input holds the rest of the request
// body, so that it can all be forwarded though no more input will come. A
// malformed chunked body counts as buffered: forwardBody answers it.
func (x *exchange) bodyBuffered() bool {
	in := x.c.Input()
	if !x.flags.Has(xChunked) {
		return int64(len(in)) >= x.remaining
	}
	d := x.dec
	for len(in) > 0 {
		_, used, done, err := d.Decode(in)
		if done || err != nil {
			return true
		}
		in = in[used:]
	}
	return false
}

// forwardBody sends what the app window allows of the request body, and
// ends the request once the body is through. Nothing moves before the
// app's first WINDOW, not even the END of a request without a body: the
// engine drops throttle frames for a stream whose END it has carried, so
// an app (or the engine, for an exit with no handler) that refuses the
// stream with RESET would otherwise never be heard, and the client never
// answered. It reports whether it made progress.
func (x *exchange) forwardBody() bool {
	c := x.c
	if x.requestDone() {
		c.state = stateResponse
		c.await(waitNone)
		return true
	}
	if !x.Out.Opened() {
		return false
	}
	chunked := x.flags.Has(xChunked)
	if !chunked && x.remaining == 0 {
		x.endRequest()
		return true
	}
	in := c.Input()
	if len(in) == 0 {
		return false
	}
	avail := x.Out.Available() - int64(x.Out.Pad)
	if avail <= 0 {
		return false
	}
	data, used, done, err := x.bodyPiece(in, int(min(avail, int64(c.maxPayload()))))
	if err != nil {
		status, reason := 400, "malformed chunked body"
		var perr *h1.Error
		if errors.As(err, &perr) {
			status, reason = perr.Status, perr.Reason
		}
		c.fail(status, reason)
		return false
	}
	if len(data) > 0 {
		if chunked && c.h.s.maxBody >= 0 && x.bodyBytes+int64(len(data)) > c.h.s.maxBody {
			c.fail(413, "request body too large")
			return false
		}
		if !x.sendBody(data) {
			return false
		}
	}
	x.takeBody(used)
	if done {
		x.endRequest()
	}
	return used > 0 || done
}

// bodyPiece returns the next piece of the request body from in, reading
// at most limit bytes of it: the body bytes, the input bytes they take,
// whether the body ends there, and the error of a malformed chunked body.
// takeBody then consumes what the caller used.
func (x *exchange) bodyPiece(in []byte, limit int) (data []byte, used int, done bool, err error) {
	if !x.flags.Has(xChunked) {
		n := int(min(int64(len(in)), x.remaining, int64(limit)))
		return in[:n], n, int64(n) == x.remaining, nil
	}
	if len(in) > limit {
		in = in[:limit]
	}
	return x.dec.Decode(in)
}

// takeBody consumes used bytes of input that bodyPiece read.
func (x *exchange) takeBody(used int) {
	x.c.Inbox.Consume(used)
	if !x.flags.Has(xChunked) {
		x.remaining -= int64(used)
	}
}

// sendBody sends p, which the app's window has room for, as one DATA.
func (x *exchange) sendBody(p []byte) bool {
	if x.Data(frame.FlagsDataMessage, p, nil) != nil {
		x.c.abortAll()
		return false
	}
	x.bodyBytes += int64(len(p))
	return true
}

// endRequest ends the app stream's request side. An END the ring refuses
// leaves the app with half a request: the connection is torn down.
func (x *exchange) endRequest() {
	x.c.state = stateResponse
	x.c.await(waitNone)
	if x.End(nil) != nil {
		x.c.abortAll()
	}
}

// abortRequest aborts the request side when the client goes away. The
// request side is closed whether the ring takes the ABORT or not, and one
// never opened or already closed is left alone: its error says nothing
// the exchange acts on.
func (x *exchange) abortRequest() { _ = x.Abort(nil) }

// resetResponse refuses the rest of the response when the connection
// dies. The response side is closed whether the ring takes the RESET or
// not.
func (x *exchange) resetResponse() {
	if x.open() {
		_ = x.Reset(nil)
	}
}

// release ends the exchange's hold on its session.
func (x *exchange) release() {
	if x.session != 0 {
		if az := x.c.h.s.authz; az != nil {
			az.guard.Deauthorize(x.session)
		}
		x.session = 0
	}
}

// onMessage handles the app stream's reply frames and the throttle of its
// request side. Only the current request's stream is heard: the consumer
// serves every request on the connection. A frame out of the stream's
// order or beyond its flow control tears the connection down.
func (x *exchange) onMessage(t frame.FrameType, buf []byte) {
	c := x.c
	h := c.h
	if !x.open() || !h.hdr.TryWrap(buf, 0, len(buf)) {
		return
	}
	if id := h.hdr.StreamID(); id != x.InitialID() && id != x.ReplyID() {
		return
	}
	var err error
	switch t {
	case frame.FrameWindow:
		if _, err = x.OnWindow(buf); err == nil {
			x.sendContinue()
			c.resume()
		}
	case frame.FrameReset:
		x.onRequestReset(buf)
	case frame.FrameBegin:
		var b frame.Begin
		if b, err = x.OnBegin(buf); err == nil {
			x.onResponseBegin(b.Extension())
		}
	case frame.FrameData:
		var d frame.Data
		if d, err = x.OnData(buf); err == nil {
			x.onResponseData(d.Payload())
		}
	case frame.FrameFlush:
		_, err = x.OnFlush(buf)
	case frame.FrameEnd:
		// An END without a BEGIN is no response: it is answered as an
		// ABORT is, rather than leave the client without one.
		e, endErr := x.OnEnd(buf)
		if x.flags.Has(xResponseBegun) && !errors.Is(endErr, engine.ErrMalformedFrame) {
			x.onResponseEnd(e.Extension())
		} else {
			x.onResponseAbort()
		}
	case frame.FrameAbort:
		_, _ = x.OnAbort(buf)
		x.onResponseAbort()
	}
	if binding.Violation(err) {
		c.abortAll()
	}
}

// onRequestReset handles the app's RESET of the request. The engine
// delivers no throttle frame after the request's END, so it comes while
// the request is still being forwarded.
func (x *exchange) onRequestReset(buf []byte) {
	c := x.c
	r, err := x.OnReset(buf)
	x.flags.Unset(xContinue)
	if !x.flags.Has(xResponseBegun) {
		// The app refused the request: 404, or the 4xx/5xx :status of
		// an HttpResetEx with its other headers (retry-after, say). What
		// is left of its body will not be read, so then the connection
		// closes after the answer (respondRefused).
		var ex *http.HttpResetEx
		if err == nil {
			ex = c.h.resetExOf(r.Extension())
		}
		x.resetResponse()
		x.respondRefused(ex)
		return
	}
	if c.state != stateBody {
		return
	}
	// The app has what it needs and is answering. The rest of the body
	// is read and dropped as it comes, so that a client still sending it
	// is not stalled before it reads the response: by its framing when
	// the response promised the next request on this connection
	// (drainBody), else all of the input, the connection closing after
	// the response.
	if x.flags.Has(xKeepAlive) && !c.flags.Has(connLastResponse) {
		x.flags.Set(xDraining)
		c.await(waitNone)
		c.resume()
		return
	}
	x.discardRest()
}

// discardRest reads and drops all the input while the response goes on;
// the connection closes after it.
func (x *exchange) discardRest() {
	c := x.c
	c.Inbox.Drop()
	c.flags.Set(connDiscarding | connLastResponse)
	c.state = stateResponse
	c.await(waitNone)
	c.Grant()
}

// resetExOf returns the HttpResetEx in ext, or nil.
func (h *server) resetExOf(ext []byte) *http.HttpResetEx {
	if h.resetEx.TryWrap(ext, 0, len(ext)) && h.resetEx.TypeID() == h.typeID {
		return &h.resetEx
	}
	return nil
}

// resetStatus returns the status that answers a request the app refused:
// the 4xx or 5xx :status of its HttpResetEx, or 503.
func resetStatus(ex *http.HttpResetEx) int {
	status := 404
	if ex == nil {
		return status
	}
	for hc, hd := ex.Headers().Cursor(), new(http.HttpHeader); http.NextHeader(&hc, hd); {
		if string(hd.Name()) == ":status" {
			if s, err := strconv.Atoi(string(hd.Value())); err == nil && s >= 400 && s <= 599 {
				status = s
			}
		}
	}
	return status
}

// onResponseAbort ends an exchange whose response the app gave up: with
// a 502 when none has reached the client, and otherwise by closing the
// connection abruptly, so that the client sees its response was cut
// short.
func (x *exchange) onResponseAbort() {
	x.abortRequest()
	if x.flags.Has(xResponseBegun) && !x.retractHead() {
		x.c.abortAll()
		return
	}
	x.respondLocal(502, nil)
}

// failResponse ends an exchange whose response the app cannot frame (a
// body longer or shorter than its content-length): the app's reply is
// reset and the client told as onResponseAbort tells it.
func (x *exchange) failResponse() {
	x.resetResponse()
	x.onResponseAbort()
}

// retractHead takes back a response head that still waits, corked, for
// the body's first bytes, so that the client can be answered as if the
// response had never begun: nothing of it has left. It reports whether
// there was such a head.
func (x *exchange) retractHead() bool {
	c := x.c
	if !c.flags.Has(connCorked) {
		return false
	}
	// Bytes queued before the head (a 100 Continue the window had no room
	// for) stay, and go once the window admits them: uncork flushes.
	c.Outbox.Truncate(c.Outbox.Len() - c.corked)
	c.uncork()
	x.flags.Unset(xResponseBegun)
	return true
}

// onResponseBegin writes the response head from the reply HttpBeginEx:
// the status line, the app's headers in its order (hop-by-hop fields
// dropped), then the framing the server chooses: the app's content-length
// when it gave a valid one, else chunked, else (to an HTTP/1.0 client)
// the body up to the close.
func (x *exchange) onResponseBegin(ext []byte) {
	c := x.c
	h := c.h
	status := 200
	var length int64 = -1
	sse := false
	ok := h.ex.TryWrap(ext, 0, len(ext))
	if ok {
		for hc, hd := h.ex.Headers().Cursor(), new(http.HttpHeader); http.NextHeader(&hc, hd); {
			name := hd.Name()
			switch {
			case string(name) == ":status":
				status = -1
				if s, ok := h1.ParseDecimal(hd.Value()); ok && s >= 100 && s <= 599 {
					status = int(s)
				}
			case h1.EqualFold(name, "content-length"):
				if n, ok := h1.ParseDecimal(hd.Value()); ok && length < 0 {
					length = n
				}
			case h1.EqualFold(name, "content-type"):
				sse = bytes.HasPrefix(hd.Value(), []byte("text/event-stream"))
			}
		}
	}
	if status < 200 {
		// An interim status cannot end the exchange and an invalid one
		// cannot be sent: the app's answer is no response.
		x.abortRequest()
		x.resetResponse()
		x.flags.Unset(xKeepAlive)
		x.respondLocal(502, nil)
		return
	}
	x.flags.Set(xResponseBegun)
	if x.flags.Has(xContinue) {
		// The client, still owed 100 Continue, may send the body or,
		// seeing a final status, its next request in its place: the
		// connection cannot be read one way, so it closes after this
		// response, as Go's server closes it.
		x.flags.Unset(xContinue | xKeepAlive)
	}
	if !x.requestDone() && !x.flags.Has(xChunked) && x.remaining == 0 {
		// A request without a body waits for the app's first WINDOW to
		// end (forwardBody); an app that answers has taken it.
		x.endRequest()
	}
	// RFC 9110 §8.6: no content-length in a 204; RFC 9112 §6.3: a
	// response to HEAD, a 204 and a 304 end with their head.
	noLength := status == 204
	head := h1.AppendStatusLine(h.head[:0], 1, status)
	if len(h.s.server) > 0 && !(ok && hasHeader(&h.ex, "server")) {
		head = h1.AppendHeader(head, []byte("Server"), h.s.server)
	}
	wroteClose := false
	if ok {
		wroteLength := false
		for hc, hd := h.ex.Headers().Cursor(), new(http.HttpHeader); http.NextHeader(&hc, hd); {
			name := hd.Name()
			if len(name) > 0 && !wroteClose && h1.EqualFold(name, "connection") && h1.EqualFold(hd.Value(), "close") {
				// The app closes the connection after its response: the
				// field stays where the app put it, as Zilla writes it.
				head = h1.AppendHeader(head, []byte("Connection"), []byte("close"))
				wroteClose = true
				x.flags.Unset(xKeepAlive)
				continue
			}
			if len(name) == 0 || name[0] == ':' || h1.HopByHop(name) && !h1.EqualFold(name, "upgrade") {
				// Upgrade goes out as the app wrote it: a 426 names the
				// protocols it wants (RFC 9110 §15.5.22), as Zilla passes
				// it on.
				continue
			}
			if h1.EqualFold(name, "content-length") {
				// One valid content-length, as parsed, in its place: the
				// framing must be what the server applies.
				if wroteLength || length < 0 || noLength {
					continue
				}
				wroteLength = true
				head = h1.AppendHeaderTitle(head, name, strconv.AppendInt(h.lower[:0], length, 10))
				continue
			}
			head = h1.AppendHeaderTitle(head, name, hd.Value())
		}
	}
	switch {
	case x.flags.Has(xHead) || status == 204 || status == 304:
		x.framing = bodyNone
	case length >= 0:
		x.framing, x.responseRemaining = bodyLength, length
	case !x.flags.Has(xKeepAlive):
		// The connection closes after this response (the request or the
		// app said so): its end marks the body's, as Zilla frames it,
		// with no chunking.
		x.framing = bodyUntilClose
	case x.minor == 0:
		// RFC 9112 §6.1: no transfer coding to an HTTP/1.0 client; the
		// body ends with the connection (§6.3).
		x.framing = bodyUntilClose
		x.flags.Unset(xKeepAlive)
	default:
		x.framing = bodyChunked
		head = h1.AppendHeader(head, []byte("Transfer-Encoding"), []byte("chunked"))
	}
	var headers flyweight.Array[http.HttpHeader, *http.HttpHeader]
	if ok {
		headers = h.ex.Headers()
	}
	head = x.appendCORS(head, headers, ok)
	head = x.appendConnection(head, wroteClose)
	head = append(head, '\r', '\n')
	h.head = head
	// The head waits for the body's first bytes (or its end), so that a
	// small response leaves in one write; an event stream's goes at once.
	if !sse {
		c.flags.Set(connCorked)
		c.corked = len(head)
		x.flags.Unset(xStanding)
	}
	c.writeNet(head)
	x.grantResponse()
}

// appendConnection adds the Connection field a response needs and settles
// whether the connection persists: close when it closes for the
// request's or the server's reasons (unless the app's own close was
// written, wroteClose), nothing when the client has only half-closed, as
// Zilla writes it, and keep-alive to an HTTP/1.0 client that keeps it.
func (x *exchange) appendConnection(head []byte, wroteClose bool) []byte {
	if x.closing() {
		if !wroteClose && (!x.flags.Has(xKeepAlive) || x.c.flags.Has(connLastResponse)) {
			head = h1.AppendHeader(head, []byte("Connection"), []byte("close"))
		}
		x.flags.Unset(xKeepAlive)
	} else if x.minor == 0 {
		// RFC 9112 §9.3: an HTTP/1.0 connection persists only when the
		// response says so.
		head = h1.AppendHeader(head, []byte("Connection"), []byte("keep-alive"))
	}
	return head
}

// closing reports whether the connection closes after this response: the
// request asked for it, the server decided it, or the client has
// half-closed with nothing more buffered. A body not all read when the
// response ends is read and dropped first (drainBody).
func (x *exchange) closing() bool {
	c := x.c
	if !x.flags.Has(xKeepAlive) || c.flags.Has(connLastResponse) {
		return true
	}
	return c.In.Closed() && len(c.Input()) == 0
}

// grantResponse offers the app what the network window allows, less the
// chunk framing each DATA may need (as padding).
func (x *exchange) grantResponse() {
	c := x.c
	if !x.open() || !x.flags.Has(xResponseBegun) {
		return
	}
	pad := c.Out.Pad
	if x.framing == bodyChunked {
		pad += 12 // hex size, CRLF, CRLF
	}
	if c.flags.Has(connCorked) && c.Out.Available()-int64(c.Outbox.Len()+int(pad)) <= 0 {
		// The window has no room for body bytes beside the head: send
		// the head alone rather than wait.
		c.uncork()
	}
	avail := c.Out.Available() - int64(c.Outbox.Len())
	if avail < 0 {
		avail = 0
	}
	// The app may have bytes in flight: offer the window relative to what
	// it has sent and we have written.
	max := int32(min(avail, int64(c.h.pool.SlotCapacity())))
	ack := x.In.Seq
	if !x.In.WindowDue(ack, max, pad) {
		return
	}
	x.In.Ack, x.In.Max, x.In.Pad = ack, max, pad
	if x.Window() != nil {
		c.abortAll()
	}
}

func (x *exchange) onResponseData(p []byte) {
	c := x.c
	h := c.h
	if x.framing == bodyNone || len(p) == 0 {
		x.grantResponse()
		return
	}
	switch x.framing {
	case bodyChunked:
		// One chunk per DATA, written at once, so an event stream
		// reaches the client event by event.
		chunk := append(h1.AppendChunkHeader(h.head[:0], len(p)), p...)
		chunk = append(chunk, '\r', '\n')
		h.head = chunk
		c.writeNet(chunk)
	case bodyUntilClose:
		c.writeNet(p)
	default:
		if int64(len(p)) > x.responseRemaining {
			// More body than the app's content-length: the response
			// cannot be framed.
			x.failResponse()
			return
		}
		x.responseRemaining -= int64(len(p))
		c.writeNet(p)
	}
	c.uncork()
	x.grantResponse()
}

func (x *exchange) onResponseEnd(ext []byte) {
	c := x.c
	h := c.h
	switch {
	case x.framing == bodyChunked:
		tail := append(h.head[:0], "0\r\n"...)
		if h.endEx.TryWrap(ext, 0, len(ext)) {
			for hc, hd := h.endEx.Trailers().Cursor(), new(http.HttpHeader); http.NextHeader(&hc, hd); {
				// As net/http: no framing fields among the trailers
				// (RFC 9110 §6.5.1).
				name := hd.Name()
				if len(name) == 0 || name[0] == ':' || h1.HopByHop(name) || h1.EqualFold(name, "content-length") {
					continue
				}
				tail = h1.AppendHeaderTitle(tail, name, hd.Value())
			}
		}
		tail = append(tail, '\r', '\n')
		h.head = tail
		c.writeNet(tail)
	case x.framing == bodyLength && x.responseRemaining > 0:
		// Less body than the app's content-length: only an abrupt close
		// tells the client its response is incomplete, once any of it
		// has left.
		x.failResponse()
		return
	}
	c.uncork()
	x.complete()
}

// complete finishes the exchange and moves on to the next request.
func (x *exchange) complete() {
	c := x.c
	if !x.requestDone() {
		// The app answered before reading the whole body: it hears no
		// more of it.
		x.abortRequest()
		if x.flags.Has(xKeepAlive) && !c.flags.Has(connLastResponse) && !c.flags.Has(connDiscarding) && c.state == stateBody {
			// The response, without Connection: close, promised the
			// client its next request on this connection: the rest of
			// the body is read and dropped first, as Go's server does.
			// (A response to a client owed 100 Continue closes the
			// connection: onResponseBegin.)
			x.flags.Set(xDraining)
		} else {
			x.flags.Unset(xKeepAlive)
		}
	}
	x.release()
	if x.flags.Has(xDraining) {
		// The rest of the body, refused by the app (onRequestReset) or
		// unread, is dropped before the next request; the client has
		// body-timeout to send it.
		c.await(waitBody)
		c.resume()
		return
	}
	x.moveOn()
}

// drainBody reads and drops what is left of a request body nobody reads
// any more, by the body's framing, and moves on to the next request at
// its end, or waits for the response's end if it still goes on; a chunked
// body passing limits.body, or one malformed or cut short, closes the
// connection instead. It reports whether it made progress.
func (x *exchange) drainBody() bool {
	c := x.c
	in := c.Input()
	if len(in) == 0 {
		if !c.In.Closed() {
			return false
		}
		x.stopDraining()
		return false
	}
	data, used, done, err := x.bodyPiece(in, len(in))
	x.bodyBytes += int64(len(data))
	if err != nil || c.h.s.maxBody >= 0 && x.bodyBytes > c.h.s.maxBody {
		x.stopDraining()
		return false
	}
	x.takeBody(used)
	if used == 0 && !done {
		return false
	}
	if done {
		x.flags.Unset(xDraining)
		if x.open() {
			// The response goes on: complete moves on at its end.
			c.state = stateResponse
			c.await(waitNone)
			return true
		}
		x.moveOn()
	}
	return true
}

// stopDraining gives up a body that cannot be read to its end: the
// connection closes, after the response if it still goes on.
func (x *exchange) stopDraining() {
	x.flags.Unset(xDraining | xKeepAlive)
	if x.open() {
		x.discardRest()
		return
	}
	x.moveOn()
}

// moveOn takes the connection past a finished exchange: to the next
// request, or to its close.
func (x *exchange) moveOn() {
	c := x.c
	if !x.flags.Has(xKeepAlive) || c.flags.Has(connLastResponse) {
		c.flags.Set(connLastResponse)
		c.state = stateDraining
		c.await(waitLinger)
		c.Inbox.Drop()
		c.endReply()
		c.Grant()
		return
	}
	c.state = stateHead
	if len(c.Input()) == 0 {
		c.await(waitIdle)
	} else {
		c.await(waitHead)
	}
	c.resume()
}

// respondLocal answers the request without the app (404 no route, 401,
// 403, 502), in Zilla's form: the status line, Server, WWW-Authenticate
// for a 401, Connection: close and no body, the connection closing after
// it.
func (x *exchange) respondLocal(status int, az *authorizer) {
	c := x.c
	h := c.h
	x.flags.Unset(xContinue)
	x.release()
	head := h.appendServer(h1.AppendStatusLine(h.head[:0], 1, status))
	if status == 401 && az != nil {
		challenge := []byte("Bearer")
		if az.realm != "" {
			challenge = append(challenge, ` realm="`+az.realm+`"`...)
		}
		head = h1.AppendHeader(head, []byte("WWW-Authenticate"), challenge)
	}
	x.flags.Unset(xKeepAlive)
	h.head = h.appendClosingTail(head)
	c.writeNet(h.head)
	x.complete()
}

// respondRefused answers a request the app refused with a RESET, as
// Zilla does: the :status of its HttpResetEx (404 without one) and its
// other headers (or Content-Length: 0), written as a response of the
// app's would be, CORS fields included; no body follows.
func (x *exchange) respondRefused(ex *http.HttpResetEx) {
	c := x.c
	h := c.h
	x.flags.Unset(xContinue)
	x.release()
	if x.flags.Has(xChunked) || x.remaining > 0 {
		// The request body is not read: the connection closes.
		x.flags.Unset(xKeepAlive)
	}
	head := h1.AppendStatusLine(h.head[:0], 1, resetStatus(ex))
	var headers flyweight.Array[http.HttpHeader, *http.HttpHeader]
	if ex != nil {
		headers = ex.Headers()
	}
	wroteLength, wroteServer := false, false
	for hc, hd := headers.Cursor(), new(http.HttpHeader); ex != nil && http.NextHeader(&hc, hd); {
		name := hd.Name()
		if len(name) == 0 || name[0] == ':' || h1.HopByHop(name) {
			continue
		}
		if h1.EqualFold(name, "content-length") {
			// No body follows, whatever the app said.
			if !wroteLength {
				head = h1.AppendHeader(head, []byte("Content-Length"), []byte("0"))
			}
			wroteLength = true
			continue
		}
		wroteServer = wroteServer || h1.EqualFold(name, "server")
		head = h1.AppendHeaderTitle(head, name, hd.Value())
	}
	if !wroteLength {
		head = h1.AppendHeader(head, []byte("Content-Length"), []byte("0"))
	}
	if !wroteServer {
		head = h.appendServer(head)
	}
	head = x.appendCORS(head, headers, ex != nil)
	h.head = append(x.appendConnection(head, false), '\r', '\n')
	c.writeNet(h.head)
	x.complete()
}

// fullAuthority returns authority with its scheme's default port added
// when it names none ("localhost" as "localhost:80", or ":443" when
// secure): Zilla's :authority always carries a port, and routes match it
// so. It writes into h.authBuf, so the result lasts until the next call.
func (h *server) fullAuthority(authority []byte, secure bool) []byte {
	if len(authority) == 0 || bytes.IndexByte(authority, ':') >= 0 {
		return authority
	}
	port := ":80"
	if secure {
		port = ":443"
	}
	h.authBuf = append(append(h.authBuf[:0], authority...), port...)
	return h.authBuf
}

// knownMethod reports whether the server implements method.
func knownMethod(method []byte) bool {
	switch string(method) {
	case "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "CONNECT", "OPTIONS", "TRACE":
		return true
	}
	return false
}

// hasHeader reports whether the response's BEGIN extension has the named
// field (name in lower case).
func hasHeader(ex *http.HttpBeginEx, name string) bool {
	for hc, hd := ex.Headers().Cursor(), new(http.HttpHeader); http.NextHeader(&hc, hd); {
		if h1.EqualFold(hd.Name(), name) {
			return true
		}
	}
	return false
}

// readProxy reads a network BEGIN's extension: when it is a ProxyBeginEx,
// it keeps the client's address in c.remote, and reports whether its
// infos name a TLS version: the connection came through TLS, so its
// requests are https, as Zilla's server decides.
func (h *server) readProxy(c *serverConn, ext []byte) bool {
	c.remoteLen = 0
	if !h.proxyEx.TryWrap(ext, 0, len(ext)) || h.proxyEx.TypeID() != h.proxyTypeID {
		return false
	}
	c.remoteLen = uint8(len(appendRemote(c.remote[:0], h.proxyEx.Address())))
	for _, info := range h.proxyEx.Infos().All() {
		if info.Kind() != proxy.ProxyInfoTypeSecure {
			continue
		}
		if sec := info.Secure(); sec.Kind() == proxy.ProxySecureInfoTypeVersion {
			return true
		}
	}
	return false
}

// appendRemote appends the text of an address's source IP to dst, which
// it fills to at most its capacity; a UNIX or unnamed address, or a text
// that is not an IP, appends nothing.
func appendRemote(dst []byte, a proxy.ProxyAddress) []byte {
	var ip netip.Addr
	switch a.Kind() {
	case proxy.ProxyAddressFamilyInet:
		in := a.Inet()
		if !in.HasSource() {
			return dst
		}
		src := in.Source()
		if len(src) > cap(dst) {
			return dst
		}
		// The text is checked, so that what a request carries is an IP
		// whatever wrote the BEGIN.
		var err error
		if ip, err = netip.ParseAddr(string(src)); err != nil {
			return dst
		}
	case proxy.ProxyAddressFamilyInet4:
		in := a.Inet4()
		ip = netip.AddrFrom4([4]byte(in.Source()))
	case proxy.ProxyAddressFamilyInet6:
		in := a.Inet6()
		ip = netip.AddrFrom16([16]byte(in.Source()))
	default:
		return dst
	}
	ip = ip.Unmap()
	if ip.BitLen() == 128 && len(ip.Zone()) > cap(dst)-40 {
		return dst
	}
	return ip.AppendTo(dst)
}

// targetPath returns the :path of a request target: the target itself,
// or the path and query of an absolute-form one, rooted (see rootedPath).
// Routes match the value the app is sent. It may write into h.pathBuf, so
// the result lasts until the next call.
func (h *server) targetPath(target []byte) []byte {
	if _, _, rest, ok := absoluteForm(target); ok {
		return h.rootedPath(rest)
	}
	return target
}

// rootedPath returns the path and query of an absolute-form target as a
// :path: "http://host" and "http://host?q" ask for the root, "/" and
// "/?q". It may write into h.pathBuf.
func (h *server) rootedPath(rest []byte) []byte {
	if len(rest) > 0 && rest[0] == '/' {
		return rest
	}
	h.pathBuf = append(append(h.pathBuf[:0], '/'), rest...)
	return h.pathBuf
}

// The schemes absoluteForm returns, shared rather than made per request.
var schemeHTTP, schemeHTTPS = []byte("http"), []byte("https")

// absoluteForm splits an absolute-form request target, http:// or
// https:// (either case), into its scheme (lower case), authority and the
// rest (path and query, possibly empty). ok is false for every other
// target.
func absoluteForm(target []byte) (scheme, authority, rest []byte, ok bool) {
	switch {
	case len(target) >= 7 && h1.EqualFold(target[:7], "http://"):
		scheme, rest = schemeHTTP, target[7:]
	case len(target) >= 8 && h1.EqualFold(target[:8], "https://"):
		scheme, rest = schemeHTTPS, target[8:]
	default:
		return nil, nil, nil, false
	}
	end := len(rest)
	for i, c := range rest {
		if c == '/' || c == '?' || c == '#' {
			end = i
			break
		}
	}
	return scheme, rest[:end], rest[end:], true
}
