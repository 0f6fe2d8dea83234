package client

import (
	"bytes"
	"encoding/binary"
	"errors"
	"net"
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
	"github.com/sluicehq/sluice/internal/flagset"
	"github.com/sluicehq/sluice/internal/freelist"
)

// client is the http client kind on one worker. Each application stream
// is one request: its BEGIN's HttpBeginEx names :method, :scheme,
// :authority and :path with the request headers; DATA is the body and END
// ends it. The request goes out on a keep-alive connection to :authority,
// taken from the worker's idle pool (the one idle longest) or opened through the exit (a tcp
// client) with a ProxyBeginEx naming the host and port. The response comes
// back on the reply: a BEGIN with :status and the headers, the body as
// DATA as it arrives (content-length, chunked, or up to the close), and
// END. It speaks plain HTTP only: a request whose :scheme is not http
// (https, until Sluice has TLS) is refused with RESET rather than sent in
// cleartext. A connection the server keeps alive returns to the pool, which
// closes it after idle-timeout (90 s) unused, or sooner when the server's
// Keep-Alive field names a shorter timeout (keepAliveFor), and at once when
// the pool already holds max-idle (256) idle connections to its authority.
type client struct {
	w           *engine.Worker
	cfg         *engine.BindingConfig
	s           *settings
	typeID      int32
	proxyTypeID int32
	pool        *engine.BufferPool
	// idle holds a pool per authority with a live connection: a
	// connection keeps its pool, so that returning it or closing it looks
	// nothing up, and the pool leaves the map with the authority's last
	// connection.
	idle map[string]*idlePool

	hdr   frame.Frame
	begin frame.Begin
	exB   http.HttpBeginExBuilder
	// resetExB builds the HttpResetEx of a refusal with a status.
	resetExB http.HttpResetExBuilder
	ex       http.HttpBeginEx
	proxyB   proxy.ProxyBeginExBuilder
	head     []byte
	fields   []byte // the header fields onBegin forwards, before head takes them
	lower    []byte
	key      []byte // the idle map key of a request's authority and exit
	credBuf  []byte // scratch for injected credentials and the path they extend
	// free holds finished exchanges for the next requests (release).
	free []*clientExchange

	// The extensions the client writes in place, into the frames the
	// engine.Stream senders build, from the fields below them. They are
	// made once, so that sending allocates nothing.
	proxyEx    func(*frame.BeginBuilder) // a connection's ProxyBeginEx, to host:port
	responseEx func(*frame.BeginBuilder) // a reply's HttpBeginEx, from resp
	statusEx   func(*frame.ResetBuilder) // a refusal's HttpResetEx, with :status status
	host       string
	port       uint16
	resp       *h1.ResponseHead
	status     string
}

func init() { http.RegisterKind("client", newClient) }

// newClient compiles the configuration and makes the client for one
// worker.
func newClient(w *engine.Worker, cfg *engine.BindingConfig, opts *http.Options) (engine.Handler, error) {
	s, err := compile(w, cfg, opts)
	if err != nil {
		return nil, err
	}
	h := &client{
		w: w, cfg: cfg, s: s, typeID: w.Labels().Supply("http"), proxyTypeID: w.Labels().Supply("proxy"),
		pool: w.BufferPool(), idle: map[string]*idlePool{},
		head: make([]byte, 0, 4096), fields: make([]byte, 0, 4096), lower: make([]byte, 0, 256),
	}
	h.proxyEx, h.responseEx, h.statusEx = h.writeProxyEx, h.writeResponseEx, h.writeStatusEx
	return h, nil
}

// exchangeFlags are what an exchange knows besides its stream's state.
type exchangeFlags uint8

const (
	xFree          exchangeFlags = 1 << iota // in the client's free list
	xChunked                                 // the request body goes out chunked
	xAwaitingReply                           // the app ended its request with END and waits for the response
	xTimedOut                                // no response head came within header-timeout
)

// clientExchange is one request stream from the application: In carries
// the request, Out the response. Finished exchanges are kept for the next
// requests (release); onApp drops a frame that is not for the exchange's
// current streams, so a frame for a finished use can never reach the
// next one.
type clientExchange struct {
	engine.Stream
	h      *client
	fn     engine.MessageConsumer // onApp, made once per exchange
	flags  flagset.Set[exchangeFlags]
	c      *clientConn
	method string
}

// replyDone reports whether the response is over: its reply is closed,
// or will never begin, the app having given its request up rather than
// ended it.
func (x *clientExchange) replyDone() bool {
	return x.Out.Closed() || x.In.Closed() && !x.Out.Opening() && !x.flags.Has(xAwaitingReply)
}

// connState is where a connection is in its life.
type connState uint8

// Connection states.
const (
	connConnecting connState = iota
	connBusy
	connIdle
	connClosed
)

// framing is how a response body is delimited.
type framing uint8

// Response body framings.
const (
	bodyNone framing = iota
	bodyLength
	bodyChunked
	bodyUntilClose
)

// connFlags are what a connection holds besides its state and its
// stream's.
type connFlags uint8

const (
	connCorked     connFlags = 1 << iota // a request head waits in the out slot for the body's first bytes
	connHeadParsed                       // the response head is parsed: its body follows
	connKeepAlive                        // the connection may carry another request after this one
	connInAborted                        // the network aborted: fail once buffered body bytes are delivered
)

// clientConn is one connection: a stream to the exit, whose Out carries
// the request bytes and In the response bytes, both with the trace id of
// the request that opened it.
type clientConn struct {
	// The network stream; Inbox holds response bytes, Outbox request bytes.
	connbuf.Conn
	h         *client
	authority string
	state     connState
	flags     flagset.Set[connFlags]
	x         *clientExchange
	resp      h1.ResponseHead
	body      framing
	remaining int64
	dec       h1.ChunkedDecoder
	pool      *idlePool     // its authority's pool
	idleSince time.Time     // when it last went idle
	idleFor   time.Duration // how long it may stay idle (keepAliveFor)
	idleTimer int64         // the idle timer armed, or 0 (idleExpired)
	timerAt   time.Time     // when that timer fires
	onIdle    func()        // its function, made once per connection
	headBy    time.Time     // the response head's deadline (header-timeout), or zero
}

// NewStream takes a request stream.
func (h *client) NewStream(_ frame.FrameType, buf []byte) engine.MessageConsumer {
	if !h.begin.TryWrap(buf, 0, len(buf)) {
		return nil
	}
	x := freelist.Pop(&h.free)
	if x == nil {
		x = new(clientExchange)
		x.fn = x.onApp
	}
	fn := x.fn
	*x = clientExchange{h: h, fn: fn}
	x.Accept(h.w, h.begin.OriginID(), h.begin.RoutedID(), h.begin.StreamID())
	trace := h.begin.TraceID()
	x.In.Trace, x.Out.Trace, x.Out.Auth = trace, trace, h.begin.Authorization()
	return fn
}

// release keeps a finished exchange for the next request: one whose
// request and response have both ended and whose connection has let it
// go. The engine delivers nothing on either stream after that (ENDs, an
// ABORT or a RESET closed them); onApp checks the stream id regardless.
func (x *clientExchange) release() {
	if x.flags.Has(xFree) || !x.In.Closed() || !x.replyDone() || x.c != nil {
		return
	}
	x.flags.Set(xFree)
	x.h.free = append(x.h.free, x)
}

// onApp handles the request's frames and the throttle of the response. A
// frame out of the stream's order or beyond its flow control fails the
// exchange; a malformed one is dropped, but for END, ABORT and RESET,
// which close their direction all the same.
func (x *clientExchange) onApp(t frame.FrameType, buf []byte) {
	h := x.h
	if x.flags.Has(xFree) || !h.hdr.TryWrap(buf, 0, len(buf)) {
		return
	}
	if id := h.hdr.StreamID(); id != x.InitialID() && id != x.ReplyID() {
		return // a frame for an earlier use of this exchange
	}
	defer x.release()
	var err error
	switch t {
	case frame.FrameBegin:
		var b frame.Begin
		if b, err = x.OnBegin(buf); err == nil {
			x.onBegin(b.Extension())
		}
	case frame.FrameData:
		var d frame.Data
		if d, err = x.OnData(buf); err == nil {
			x.onData(d.Payload())
		}
	case frame.FrameFlush:
		_, err = x.OnFlush(buf)
	case frame.FrameEnd:
		_, _ = x.OnEnd(buf)
		x.onEnd()
	case frame.FrameAbort:
		_, _ = x.OnAbort(buf)
		x.fail()
	case frame.FrameWindow:
		if _, err = x.OnWindow(buf); err == nil && x.c != nil {
			x.c.resume()
		}
	case frame.FrameReset:
		_, _ = x.OnReset(buf)
		x.fail()
	}
	if binding.Violation(err) {
		x.fail()
	}
}

// onBegin picks a connection for the request and writes its head.
func (x *clientExchange) onBegin(ext []byte) {
	h := x.h
	if !h.ex.TryWrap(ext, 0, len(ext)) {
		x.refuse()
		return
	}
	// One pass over the headers: the pseudo-headers make the request
	// line, and the fields to forward go to h.fields, which follows it.
	var method, path, authority []byte
	var length int64 = -1
	fields := h.fields[:0]
	inj, cred := h.s.inject, ""
	if inj != nil && guard.Authorized(x.Out.Auth) {
		cred = inj.guard.Credentials(x.Out.Auth)
	}
	injectedHeader, injectedCookie := false, false
	for hc, hd := h.ex.Headers().Cursor(), new(http.HttpHeader); http.NextHeader(&hc, hd); {
		name := hd.Name()
		if len(name) > 0 && name[0] == ':' {
			switch string(name) {
			case ":method":
				method = hd.Value()
			case ":path":
				path = hd.Value()
			case ":authority":
				authority = hd.Value()
			case ":scheme":
				if !h1.EqualFold(hd.Value(), "http") {
					// No TLS here yet: an https request is refused, never
					// sent in cleartext.
					x.refuseBadGateway()
					return
				}
			}
			continue
		}
		if string(name) == "content-length" {
			if n, ok := h1.ParseDecimal(hd.Value()); ok {
				length = n
			}
		}
		if len(name) == 0 || h1.HopByHop(name) || h1.EqualFold(name, "host") {
			continue
		}
		if cred != "" && inj.header.Name != "" && h1.EqualFold(name, inj.header.Name) {
			// The session's credentials replace the app's, in place.
			fields = h1.AppendHeaderTitle(fields, name, inj.header.AppendValue(h.credBuf[:0], cred))
			injectedHeader = true
			continue
		}
		if cred != "" && inj.cookie.Name != "" && h1.EqualFold(name, "cookie") {
			v := append(append(h.credBuf[:0], hd.Value()...), "; "...)
			v = inj.cookie.AppendValue(append(append(v, inj.cookie.Name...), '='), cred)
			fields = h1.AppendHeaderTitle(fields, name, v)
			injectedCookie = true
			continue
		}
		fields = h1.AppendHeaderTitle(fields, name, hd.Value())
	}
	if cred != "" {
		// Credentials the app's headers had no place for go last, and a
		// query parameter after the path's own, as Zilla's client adds
		// them.
		if inj.header.Name != "" && !injectedHeader {
			fields = h1.AppendHeaderTitle(fields, []byte(inj.header.Name), inj.header.AppendValue(h.credBuf[:0], cred))
		}
		if inj.cookie.Name != "" && !injectedCookie {
			v := inj.cookie.AppendValue(append(append(h.credBuf[:0], inj.cookie.Name...), '='), cred)
			fields = h1.AppendHeader(fields, []byte("Cookie"), v)
		}
		if inj.query.Name != "" && len(path) > 0 {
			sep := byte('?')
			if bytes.IndexByte(path, '?') >= 0 {
				sep = '&'
			}
			q := append(append(append(h.credBuf[:0], path...), sep), inj.query.Name...)
			path = inj.query.AppendValue(append(q, '='), cred)
			h.credBuf = path
		}
	}
	h.fields = fields
	if len(method) == 0 || len(path) == 0 || len(authority) == 0 {
		x.refuse()
		return
	}
	exitID := h.s.exitID
	for i := range h.s.routes {
		if h.s.routes[i].Match(h.requestHeader) {
			exitID = h.s.routes[i].ExitID
			break
		}
	}
	if exitID == 0 {
		x.refuse()
		return
	}
	x.method = methodString(method)
	c := h.connection(authority, exitID, x)
	if c == nil {
		x.refuse()
		return
	}
	head := h1.AppendRequestLine(h.head[:0], method, path)
	head = h1.AppendHeader(head, []byte("Host"), authority)
	head = append(head, fields...)
	switch {
	case length >= 0:
	case x.method == "GET" || x.method == "HEAD" || x.method == "DELETE" || x.method == "OPTIONS" || x.method == "TRACE":
		// No body is expected; one that comes anyway is refused.
	default:
		x.flags.Set(xChunked)
		head = h1.AppendHeader(head, []byte("Transfer-Encoding"), []byte("chunked"))
	}
	head = append(head, '\r', '\n')
	h.head = head
	if length > 0 || x.flags.Has(xChunked) {
		// Hold the head back for the body's first bytes, so that a small
		// request leaves in one write (one syscall, one segment) rather
		// than two.
		c.cork(head)
	} else {
		c.write(head)
	}
	x.grantRequest()
}

// requestHeader is the value of the request header name (lower case,
// pseudo-headers included) in h.ex, for matching routes.
func (h *client) requestHeader(name []byte) ([]byte, bool) {
	for hc, hd := h.ex.Headers().Cursor(), new(http.HttpHeader); http.NextHeader(&hc, hd); {
		if bytes.Equal(hd.Name(), name) {
			return hd.Value(), true
		}
	}
	return nil, false
}

// connection returns an idle connection to authority through exitID, or
// opens one. Pools are keyed by authority and exit; the key becomes a
// string only for a new pool: indexing the map with string(key) does not
// allocate.
func (h *client) connection(authorityB []byte, exitID int64, x *clientExchange) *clientConn {
	h.key = binary.BigEndian.AppendUint64(append(h.key[:0], authorityB...), uint64(exitID))
	if h.s.inject != nil {
		// A client that sends sessions' credentials keeps a pool per
		// session: its connections carry the session's authorization.
		h.key = binary.BigEndian.AppendUint64(h.key, uint64(x.Out.Auth))
	}
	p := h.idle[string(h.key)]
	if p != nil {
		for c := p.pop(); c != nil; c = p.pop() {
			if c.state == connIdle {
				// Its idle timer, if armed, stays armed: when it fires,
				// idleExpired finds the connection busy (and disarms it)
				// or idle again since (and re-arms it for that spell).
				c.attach(x)
				return c
			}
		}
	}
	authority := string(authorityB)
	host, port, err := splitAuthority(authority)
	if err != nil {
		return nil
	}
	if p == nil {
		p = &idlePool{key: string(h.key)}
		h.idle[p.key] = p
	}
	p.live++
	c := &clientConn{h: h, authority: authority, pool: p, flags: flagset.Of(connKeepAlive)}
	c.Init(h.pool, c)
	c.onIdle = c.idleExpired
	c.Connect(h.w, h.cfg.ID, exitID, h.w.SupplyInitialID(exitID), c.onNet)
	c.Out.Trace, c.In.Trace = x.In.Trace, x.In.Trace
	if h.s.inject != nil {
		c.Out.Auth = x.Out.Auth
	}
	h.host, h.port = host, port
	if c.BeginWith(0, h.proxyEx) != nil {
		c.leavePool()
		return nil
	}
	c.attach(x)
	c.state = connConnecting
	return c
}

// writeProxyEx is proxyEx: the ProxyBeginEx that asks the exit for a
// stream connection to h.host and h.port.
func (h *client) writeProxyEx(b *frame.BeginBuilder) {
	pb := h.proxyB.WrapSlot(b.ExtensionBuffer()).TypeID(h.proxyTypeID)
	pb.Address().Inet().Protocol(proxy.ProxyAddressProtocolStream).
		Source("").Destination(h.host).SourcePort(0).DestinationPort(h.port)
	b.ExtensionDone(pb.BuildLimit())
}

// methodString returns method as a string, without allocating for the
// methods requests use.
func methodString(method []byte) string {
	switch string(method) {
	case "GET":
		return "GET"
	case "POST":
		return "POST"
	case "DELETE":
		return "DELETE"
	case "PUT":
		return "PUT"
	case "HEAD":
		return "HEAD"
	case "OPTIONS":
		return "OPTIONS"
	case "PATCH":
		return "PATCH"
	}
	return string(method)
}

// splitAuthority reads host[:port], port 80 by default.
func splitAuthority(a string) (string, uint16, error) {
	host, port, err := net.SplitHostPort(a)
	if err != nil {
		// No port.
		return a, 80, nil
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil || p == 0 {
		return "", 0, errors.New("bad port")
	}
	return host, uint16(p), nil
}

func (c *clientConn) attach(x *clientExchange) {
	c.x, x.c = x, c
	c.flags.Unset(connCorked | connHeadParsed)
	c.state = connBusy
	c.headBy = time.Time{}
	c.body, c.remaining = bodyNone, 0
	c.dec.Reset()
	c.resp.Headers = c.resp.Headers[:0]
	if c.resp.Headers == nil {
		c.resp.Headers = make([]h1.Header, 0, c.h.s.limits.MaxHeaders)
	}
}

func (x *clientExchange) onData(p []byte) {
	c := x.c
	if c == nil {
		// Body for a request that has no connection.
		x.fail()
		return
	}
	if x.flags.Has(xChunked) {
		chunk := append(h1.AppendChunkHeader(x.h.head[:0], len(p)), p...)
		chunk = append(chunk, '\r', '\n')
		x.h.head = chunk
		c.write(chunk)
	} else {
		c.write(p)
	}
	x.grantRequest()
}

func (x *clientExchange) onEnd() {
	x.flags.Set(xAwaitingReply)
	c := x.c
	if c == nil {
		return
	}
	if x.flags.Has(xChunked) {
		c.write([]byte("0\r\n\r\n"))
	}
	c.uncork()
	c.maybeDone()
	if c.x == x && !c.flags.Has(connHeadParsed) {
		c.expectHead()
	}
}

// expectHead gives the upstream header-timeout, from the request's end,
// to begin its response, as Go's Transport's ResponseHeaderTimeout does.
// The deadline shares the connection's timer (idleExpired).
func (c *clientConn) expectHead() {
	h := c.h
	if h.s.headerTimeout <= 0 {
		return
	}
	c.headBy = h.w.Now().Add(h.s.headerTimeout)
	if c.idleTimer != 0 && !c.timerAt.After(c.headBy) {
		return // it fires first, and re-arms for headBy
	}
	h.w.Disarm(&c.idleTimer)
	c.idleTimer, c.timerAt = h.w.TimerAt(c.headBy, c.onIdle), c.headBy
}

// grantRequest offers the app what the connection's window allows.
func (x *clientExchange) grantRequest() {
	c := x.c
	h := x.h
	if c == nil || x.In.Closed() {
		return
	}
	pad := c.Out.Pad
	if x.flags.Has(xChunked) {
		pad += 12
	}
	avail := int64(h.pool.SlotCapacity() - c.Outbox.Len())
	if c.Out.Max > 0 {
		avail = min(avail, c.Out.Available()-int64(c.Outbox.Len()))
	}
	if avail < 0 {
		avail = 0
	}
	max := int32(avail)
	if !x.In.WindowDue(x.In.Seq, max, pad) {
		// The app cuts its body to any window: it hears again once half
		// of it is used, or when the buffer takes credit back.
		return
	}
	x.In.Ack, x.In.Max, x.In.Pad = x.In.Seq, max, pad
	if x.Window() != nil {
		x.fail()
	}
}

// refuse resets a request that cannot be sent.
func (x *clientExchange) refuse() { x.refuseWith("") }

// refuseBadGateway refuses a request for an upstream this client cannot
// speak to, with an HttpResetEx whose :status, 502, an http server
// answers with.
func (x *clientExchange) refuseBadGateway() { x.refuseWith("502") }

// refuseWith resets the request, with an HttpResetEx carrying status
// unless it is empty. The request is closed whether the ring takes the
// RESET or not, and with it the reply, which has not begun: the app
// cannot be told more.
func (x *clientExchange) refuseWith(status string) {
	if status == "" {
		_ = x.Reset(nil)
		return
	}
	x.h.status = status
	_ = x.ResetWith(x.h.statusEx)
}

// writeStatusEx is statusEx: the HttpResetEx with :status h.status. One
// that does not fit is left out.
func (h *client) writeStatusEx(b *frame.ResetBuilder) {
	eb := h.resetExB.WrapSlot(b.ExtensionBuffer()).TypeID(h.typeID)
	eb.Headers().Item().Name(":status").Value(h.status)
	if limit, err := eb.BuildLimit(); err == nil {
		b.ExtensionEnd(limit)
	}
}

// fail ends the exchange abruptly: the app's request is reset and its
// response aborted, and the connection, whose state is unknown, closes.
func (x *clientExchange) fail() {
	if !x.In.Closed() {
		x.refuse()
	}
	x.abortReply()
	if c := x.c; c != nil {
		x.c = nil
		c.x = nil
		c.close(true)
	}
	x.release()
}

// abortReply ends the response abruptly. Nothing was answered yet to an
// app whose request is still open: the RESET that refused it gave the
// reply up too (engine: a RESET before the reply's BEGIN). One that has
// ended its request can no longer be reset, and waits for a response
// that will not come from upstream: it gets a 503 with retry-after: 0
// and no body, as Zilla's client answers an upstream that failed before
// its response. The reply is closed whether the ring takes its frames or not.
func (x *clientExchange) abortReply() {
	switch {
	case x.Out.Opening():
		_ = x.Abort(nil)
	case x.flags.Has(xAwaitingReply) && !x.Out.Closed():
		head := &upstreamFailed
		if x.flags.Has(xTimedOut) {
			head = &upstreamTimedOut
		}
		if x.doReplyBegin(head) {
			x.doReplyEnd()
		}
	}
}

// cork queues a request head without sending it: the next write (the
// body's first bytes) or uncork sends it.
func (c *clientConn) cork(head []byte) {
	if c.state == connClosed || c.Out.Closed() {
		return
	}
	if c.queue(head) {
		c.flags.Set(connCorked)
	}
}

// uncork sends a corked head (a request whose body never came).
func (c *clientConn) uncork() {
	if c.flags.Has(connCorked) {
		c.flags.Unset(connCorked)
		c.flushOut()
	}
}

// write sends request bytes on the connection, queueing them until it is
// connected or has window.
func (c *clientConn) write(p []byte) {
	if c.state == connClosed || c.Out.Closed() {
		return
	}
	c.flags.Unset(connCorked) // the bytes join the head held back
	if c.Outbox.Len() == 0 && c.Out.CanSend(len(p)) {
		c.Send(p)
		return
	}
	if c.queue(p) {
		c.flushOut()
	}
}

// queue appends p to the connection's out slot, failing the exchange when
// there is no slot or no room.
func (c *clientConn) queue(p []byte) bool {
	if !c.Outbox.Queue(p, c.InitialID()) {
		c.Fail()
		return false
	}
	return true
}

func (c *clientConn) flushOut() {
	if c.flags.Has(connCorked) {
		return
	}
	for n := c.Outbox.Len(); n > 0; n = c.Outbox.Len() {
		avail := c.Out.Available() - int64(c.Out.Pad)
		if avail <= 0 {
			return
		}
		n = int(min(avail, int64(n)))
		if !c.Send(c.Outbox.Bytes()[:n]) {
			return
		}
		c.Outbox.Sent(n)
	}
}

// Over reports whether the connection is closed; with Fail it makes the
// connection its Conn's owner.
func (c *clientConn) Over() bool { return c.state == connClosed }

// Fail fails the exchange in progress, or closes the connection when it
// carries none.
func (c *clientConn) Fail() {
	if x := c.x; x != nil {
		x.fail()
	} else {
		c.close(true)
	}
}

// onNet handles the connection's reply (the response bytes) and the
// throttle of its request bytes. A frame out of the stream's order or
// beyond its flow control fails the exchange; a malformed one is dropped,
// but for END, ABORT and RESET, which close their direction all the same.
func (c *clientConn) onNet(t frame.FrameType, buf []byte) {
	var err error
	switch t {
	case frame.FrameBegin:
		if _, err = c.OnBegin(buf); err == nil {
			c.Grant()
		}
	case frame.FrameData:
		var d frame.Data
		if d, err = c.OnData(buf); err == nil {
			c.onNetData(d.Payload())
		}
	case frame.FrameFlush:
		_, err = c.OnFlush(buf)
	case frame.FrameEnd:
		_, _ = c.OnEnd(buf)
		c.onNetEnd()
	case frame.FrameAbort:
		_, _ = c.OnAbort(buf)
		c.flags.Set(connInAborted)
		if c.x != nil && c.flags.Has(connHeadParsed) && len(c.Input()) > 0 {
			// Deliver the body bytes already received, then abort.
			c.process()
			if len(c.Input()) > 0 {
				return
			}
		}
		c.Fail()
		c.close(true)
	case frame.FrameWindow:
		if _, err = c.OnWindow(buf); err == nil {
			c.flushOut()
			if c.x != nil {
				c.x.grantRequest()
			}
		}
	case frame.FrameReset:
		// Refused (connect failed) or reset mid-request.
		_, _ = c.OnReset(buf)
		c.Fail()
		c.close(true)
	}
	if binding.Violation(err) {
		c.Fail()
	}
}

func (c *clientConn) onNetData(p []byte) {
	if c.state == connClosed {
		return
	}
	if c.x == nil {
		// Bytes with no request outstanding: the connection is broken.
		c.close(true)
		return
	}
	if !c.Inbox.Receive(p) {
		c.Fail()
		return
	}
	c.process()
	c.Settle()
}

// resume forwards the body bytes held for the app's window once it has
// room, then ends their handling as a DATA's ends: a slot emptied goes
// back to the pool, and the upstream is offered the room freed.
func (c *clientConn) resume() {
	if c.Inbox.Handling() {
		return
	}
	c.process()
	c.Settle()
}

// process parses the response head and forwards the body as the app's
// window allows.
func (c *clientConn) process() {
	x := c.x
	for x != nil && c.x == x && !x.replyDone() {
		in := c.Input()
		if !c.flags.Has(connHeadParsed) {
			if len(in) == 0 {
				return
			}
			n, err := h1.ParseResponseHead(in, &c.resp, c.h.s.limits)
			if err != nil {
				if errors.Is(err, h1.ErrIncomplete) {
					return
				}
				c.Fail()
				return
			}
			c.Inbox.Consume(n)
			if c.resp.Status < 200 {
				// 100 Continue and other interim responses are skipped.
				continue
			}
			c.flags.Set(connHeadParsed)
			c.flags.Unset(connKeepAlive)
			if c.resp.KeepAlive {
				if c.idleFor = c.keepAliveFor(); c.idleFor > 0 {
					c.flags.Set(connKeepAlive)
				}
			}
			switch {
			case x.method == "HEAD" || c.resp.Status == 204 || c.resp.Status == 304:
				c.body = bodyNone
			case c.resp.Chunked:
				c.body = bodyChunked
				c.dec.Reset()
			case c.resp.ContentLength >= 0:
				c.body, c.remaining = bodyLength, c.resp.ContentLength
			default:
				c.body = bodyUntilClose
				c.flags.Unset(connKeepAlive)
			}
			if !x.doReplyBegin(&c.resp) {
				c.Fail()
				return
			}
			if c.body == bodyNone || (c.body == bodyLength && c.remaining == 0) {
				x.doReplyEnd()
				c.maybeDone()
				return
			}
			continue
		}
		if len(in) == 0 {
			switch {
			case c.flags.Has(connInAborted):
				c.Fail()
				c.close(true)
			case c.In.Closed() && c.body == bodyUntilClose:
				x.doReplyEnd()
				c.flags.Unset(connKeepAlive)
				c.maybeDone()
			case c.In.Closed():
				c.Fail() // the body was cut short
			}
			return
		}
		avail := x.Out.Available() - int64(x.Out.Pad)
		if avail <= 0 {
			return
		}
		limit := int(min(avail, int64(len(c.h.w.WriteBuffer())-256)))
		switch c.body {
		case bodyLength:
			n := int(min(int64(len(in)), c.remaining, int64(limit)))
			if !x.doReplyData(in[:n]) {
				c.Fail()
				return
			}
			c.Inbox.Consume(n)
			c.remaining -= int64(n)
			if c.remaining == 0 {
				x.doReplyEnd()
				c.maybeDone()
				return
			}
		case bodyChunked:
			src := in
			if len(src) > limit {
				src = src[:limit]
			}
			data, used, done, err := c.dec.Decode(src)
			if err != nil || len(data) > 0 && !x.doReplyData(data) {
				c.Fail()
				return
			}
			c.Inbox.Consume(used)
			if done {
				x.doReplyEnd()
				c.maybeDone()
				return
			}
			if used == 0 {
				return
			}
		case bodyUntilClose:
			n := min(len(in), limit)
			if !x.doReplyData(in[:n]) {
				c.Fail()
				return
			}
			c.Inbox.Consume(n)
		default:
			return
		}
	}
}

func (c *clientConn) onNetEnd() {
	if c.state == connClosed {
		return
	}
	if x := c.x; x != nil && !x.replyDone() {
		if c.flags.Has(connHeadParsed) {
			// Body bytes that came before the END may be waiting for
			// the app's window: process delivers them, then ends the
			// response (a body read until close) or fails it (one cut
			// short) once they are out.
			c.process()
			return
		}
		c.Fail()
		return
	}
	c.close(false)
}

// maybeDone returns the connection to the pool, or closes it, once both
// the request and the response are complete.
func (c *clientConn) maybeDone() {
	x := c.x
	if x == nil || !x.In.Closed() || !x.replyDone() {
		return
	}
	c.x, x.c = nil, nil
	x.release()
	if !c.flags.Has(connKeepAlive) || c.In.Closed() || len(c.Input()) > 0 || c.pool.idle() >= c.h.s.maxIdle {
		c.close(false)
		return
	}
	c.state = connIdle
	c.pool.push(c)
	c.idleSince = c.h.w.Now()
	deadline := c.idleSince.Add(c.idleFor)
	if c.timerAt.After(deadline) {
		// The last answer shortened the idle time the server allows.
		c.h.w.Disarm(&c.idleTimer)
	}
	if c.idleTimer == 0 {
		c.idleTimer, c.timerAt = c.h.w.TimerAt(deadline, c.onIdle), deadline
	}
}

// keepAliveFor returns how long the connection may wait idle after the
// answer just parsed: idle-timeout, or less when the server's Keep-Alive
// field says it closes idle connections sooner (Node's servers say
// timeout=5). A request sent on a connection the server is closing meets
// the close and fails, so the pool lets go a second early (half the time
// for a timeout of 2 s or less), as undici does; 0 means not to keep it.
func (c *clientConn) keepAliveFor() time.Duration {
	d := c.h.s.idle
	if secs, ok := h1.KeepAliveTimeout(c.resp.Headers); ok {
		server := time.Duration(secs) * time.Second
		if server > 2*time.Second {
			server -= time.Second
		} else {
			server /= 2
		}
		d = min(d, server)
	}
	return d
}

// idlePool is a client's pool for one authority: its idle connections in
// the order they went idle, and how many connections to the authority are
// live, idle or not.
//
// A request takes the connection idle longest (FIFO). Taking the one idle
// shortest (LIFO, as net/http's Transport does) hands it back to an
// upstream whose thread for it has often not yet gone back to waiting: a
// Go server then reads the new request at once, ahead of the connections
// queued before it, and under load the requests that wait behind such hot
// connections make the tail. Through bench/mcp's gateway at 64 in flight
// with the upstream saturated, p99 read 36–84 ms with LIFO and 20 ms with
// FIFO, at the same rate (the upstream alone: 16 ms).
type idlePool struct {
	key   string        // its key in the client's idle map: authority and exit
	conns []*clientConn // conns[head:] are idle, the longest idle first
	head  int
	live  int
}

// idle returns how many connections wait in the pool.
func (p *idlePool) idle() int { return len(p.conns) - p.head }

// push queues c, gone idle, behind the others.
func (p *idlePool) push(c *clientConn) {
	if p.head > 0 && len(p.conns) == cap(p.conns) {
		// Reuse the room the popped ones left rather than grow.
		n := copy(p.conns, p.conns[p.head:])
		clear(p.conns[n:])
		p.conns, p.head = p.conns[:n], 0
	}
	p.conns = append(p.conns, c)
}

// pop takes the connection idle longest, or nil.
func (p *idlePool) pop() *clientConn {
	if p.head == len(p.conns) {
		return nil
	}
	c := p.conns[p.head]
	p.conns[p.head] = nil
	if p.head++; p.head == len(p.conns) {
		p.conns, p.head = p.conns[:0], 0
	}
	return c
}

// remove takes c out of the queue, if it waits there.
func (p *idlePool) remove(c *clientConn) {
	for i := p.head; i < len(p.conns); i++ {
		if p.conns[i] == c {
			copy(p.conns[i:], p.conns[i+1:])
			p.conns[len(p.conns)-1] = nil
			p.conns = p.conns[:len(p.conns)-1]
			if p.head == len(p.conns) {
				p.conns, p.head = p.conns[:0], 0
			}
			return
		}
	}
}

// leavePool takes a closing connection out of its pool, and the pool out
// of the client with the authority's last connection.
func (c *clientConn) leavePool() {
	p := c.pool
	if p == nil {
		return
	}
	c.pool = nil
	p.remove(c)
	if p.live--; p.live == 0 {
		delete(c.h.idle, p.key)
	}
}

// idleExpired runs when the idle timer fires. A connection taken from the
// pool keeps its timer rather than cancelling it (a cancel and a new
// timer per request cost more than the rare late firing), so the timer
// may find the connection busy, which disarms it unless the response
// head is due (headBy: it fails the exchange past it, with 504), or idle
// again since a later time, which arms it for the rest of that spell.
func (c *clientConn) idleExpired() {
	c.idleTimer = 0
	if c.state != connIdle && c.state != connClosed && c.x != nil && !c.flags.Has(connHeadParsed) && !c.headBy.IsZero() {
		if now := c.h.w.Now(); now.Before(c.headBy) {
			c.idleTimer, c.timerAt = c.h.w.TimerAt(c.headBy, c.onIdle), c.headBy
			return
		}
		c.x.flags.Set(xTimedOut)
		c.Fail()
		return
	}
	if c.state != connIdle {
		return
	}
	deadline := c.idleSince.Add(c.idleFor)
	if c.h.w.Now().Before(deadline) {
		c.idleTimer, c.timerAt = c.h.w.TimerAt(deadline, c.onIdle), deadline
		return
	}
	c.close(false)
}

// close ends the connection: gracefully with END, or abruptly with ABORT
// and RESET.
func (c *clientConn) close(abrupt bool) {
	if c.state == connClosed {
		return
	}
	c.state = connClosed
	h := c.h
	h.w.Disarm(&c.idleTimer)
	c.leavePool()
	// Each direction is closed whether the ring takes its frame or not,
	// and one already closed is left alone: the connection is over
	// either way. A graceful close leaves the reply open for the peer's
	// own END.
	if abrupt {
		_ = c.Abort(nil)
		_ = c.Reset(nil)
	} else {
		_ = c.End(nil)
	}
	c.Release()
}

// upstreamFailed is the response head of an exchange whose upstream
// failed before it answered: 503 with retry-after: 0, as Zilla's client
// answers, since the request may well succeed on a fresh connection.
var upstreamFailed = h1.ResponseHead{Minor: 1, Status: 503, Headers: []h1.Header{{Name: []byte("Retry-After"), Value: []byte("0")}}}

// upstreamTimedOut is the response head of an exchange whose upstream
// began no response within header-timeout: 504, as nginx answers when
// proxy_read_timeout runs out.
var upstreamTimedOut = h1.ResponseHead{Minor: 1, Status: 504}

// doReplyBegin answers the app with :status and the response headers. It
// reports false when the reply could not begin.
func (x *clientExchange) doReplyBegin(r *h1.ResponseHead) bool {
	h := x.h
	h.resp = r
	err := x.BeginWith(0, h.responseEx)
	h.resp = nil
	return err == nil
}

// writeResponseEx is responseEx: the HttpBeginEx of h.resp, its :status
// and its headers but the hop-by-hop ones, with lower-case names.
func (h *client) writeResponseEx(b *frame.BeginBuilder) {
	r := h.resp
	eb := h.exB.WrapSlot(b.ExtensionBuffer()).TypeID(h.typeID)
	hs := eb.Headers()
	var status [3]byte
	hs.Item().Name(":status").ValueBytes(strconv.AppendInt(status[:0], int64(r.Status), 10))
	for i := range r.Headers {
		hd := &r.Headers[i]
		if h1.HopByHop(hd.Name) && !h1.EqualFold(hd.Name, "upgrade") {
			// Upgrade reaches the app, as Zilla passes it: a 426 names
			// the protocols the server wants.
			continue
		}
		hs.Item().NameBytes(lowerInto(&h.lower, hd.Name)).ValueBytes(hd.Value)
	}
	b.ExtensionDone(eb.BuildLimit())
}

func lowerInto(dst *[]byte, name []byte) []byte {
	b := (*dst)[:0]
	for _, ch := range name {
		if 'A' <= ch && ch <= 'Z' {
			ch += 'a' - 'A'
		}
		b = append(b, ch)
	}
	*dst = b
	return b
}

// doReplyData sends p to the app. It reports false when the DATA could
// not go: the reply is then closed (the app's rings refused it).
func (x *clientExchange) doReplyData(p []byte) bool {
	return x.Data(frame.FlagsDataMessage, p, nil) == nil
}

// doReplyEnd ends the response. The reply is closed whether the ring
// takes the END or not, and one already closed is left alone: there is
// nothing more to send either way.
func (x *clientExchange) doReplyEnd() { _ = x.End(nil) }
