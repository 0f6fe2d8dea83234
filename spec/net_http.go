package spec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/dlclark/regexp2"

	"github.com/sluicehq/sluice/binding/http/h1"
)

// httpNetwork adds k3po's http:// transport to a network. An http://
// connect or accept opens the transport its option http:transport names
// (tcp://host:port of its own address by default) on the wrapped network
// and speaks HTTP/1.1 over it: a connect is one request and its response,
// an accepted block one request of a transport connection, which may carry
// several in turn. The script stream sees the peer's message body as DATA
// and its end as END; the head is read and written with the http: configs
// (see httpConn.exec). Other addresses pass through.
type httpNetwork struct {
	network
	mu      sync.Mutex
	servers map[string]*httpServer // by transport address
	wires   []*wire
	closed  bool
}

func newHTTPNetwork(n network) *httpNetwork {
	return &httpNetwork{network: n, servers: map[string]*httpServer{}}
}

func isHTTP(uri string) bool { return strings.HasPrefix(uri, "http://") }

// httpTransportOf returns the parsed http:// address and the transport
// address it runs on.
func httpTransportOf(uri string, o *streamOptions) (*url.URL, string, error) {
	u, err := url.Parse(uri)
	if err != nil || u.Host == "" {
		return nil, "", fmt.Errorf("address %q: want http://host[:port]/path", uri)
	}
	if o.httpTransport != "" {
		return u, o.httpTransport, nil
	}
	port := u.Port()
	if port == "" {
		port = "80"
	}
	return u, "tcp://" + u.Hostname() + ":" + port, nil
}

// transportKey is the address a stream occupies on the underlying
// network: the transport of an http:// address, else the address itself.
func transportKey(uri string, o *streamOptions) string {
	if !isHTTP(uri) {
		return uri
	}
	if _, t, err := httpTransportOf(uri, o); err == nil {
		return t
	}
	return uri
}

// track keeps w to stop when the network closes, or stops it at once
// when the network has already closed.
func (n *httpNetwork) track(w *wire) {
	n.mu.Lock()
	closed := n.closed
	if !closed {
		n.wires = append(n.wires, w)
	}
	n.mu.Unlock()
	if closed {
		w.stop()
	}
}

func (n *httpNetwork) dial(ctx context.Context, uri string, o *streamOptions) (conn, error) {
	if !isHTTP(uri) {
		return n.network.dial(ctx, uri, o)
	}
	u, tr, err := httpTransportOf(uri, o)
	if err != nil {
		return nil, err
	}
	c, err := n.network.dial(ctx, tr, o)
	if err != nil {
		return nil, err
	}
	w := newWire(c, *o, false)
	n.track(w)
	hc := newHTTPConn(w, false, u)
	hc.raw = uri
	w.reader = &msgReader{w: w, cur: hc}
	go w.pump()
	return hc, nil
}

func (n *httpNetwork) listen(uri string, o *streamOptions) (listener, error) {
	if !isHTTP(uri) {
		return n.network.listen(uri, o)
	}
	u, tr, err := httpTransportOf(uri, o)
	if err != nil {
		return nil, err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	srv := n.servers[tr]
	if srv == nil {
		l, err := n.network.listen(tr, o)
		if err != nil {
			return nil, err
		}
		ctx, cancel := context.WithCancel(context.Background())
		srv = &httpServer{n: n, l: l, opts: *o, cancel: cancel}
		n.servers[tr] = srv
		go srv.serve(ctx)
	}
	r := &httpRoute{srv: srv, path: u.EscapedPath(), reqs: make(chan *httpConn, mailboxSize), errs: make(chan error, 1)}
	srv.mu.Lock()
	srv.routes = append(srv.routes, r)
	srv.mu.Unlock()
	return r, nil
}

func (n *httpNetwork) close() {
	n.mu.Lock()
	servers, wires := n.servers, n.wires
	n.servers, n.wires, n.closed = map[string]*httpServer{}, nil, true
	n.mu.Unlock()
	for _, s := range servers {
		s.cancel()
		s.l.close()
	}
	for _, w := range wires {
		w.stop()
	}
	n.network.close()
}

// httpServer accepts the transport connections of one transport address
// and hands each request to the accept whose path it falls under.
type httpServer struct {
	n      *httpNetwork
	l      listener
	opts   streamOptions
	cancel context.CancelFunc
	mu     sync.Mutex
	routes []*httpRoute
}

func (srv *httpServer) serve(ctx context.Context) {
	for {
		c, err := srv.l.accept(ctx)
		if err != nil {
			return
		}
		w := newWire(c, srv.opts, true)
		srv.n.track(w)
		w.reader = &msgReader{w: w, request: true, srv: srv}
		w.accept()
		go w.pump()
	}
}

// route finds the accept for a request path: the only one, or the one with
// the longest path that is a prefix of it.
func (srv *httpServer) route(path string) *httpRoute {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if len(srv.routes) == 1 {
		return srv.routes[0]
	}
	var best *httpRoute
	for _, r := range srv.routes {
		if strings.HasPrefix(path, r.path) && (best == nil || len(r.path) > len(best.path)) {
			best = r
		}
	}
	return best
}

// httpRoute is one http:// accept: the requests routed to it, in order.
type httpRoute struct {
	srv  *httpServer
	path string
	reqs chan *httpConn
	errs chan error
}

func (r *httpRoute) accept(ctx context.Context) (conn, error) {
	select {
	case hc := <-r.reqs:
		return hc, nil
	case err := <-r.errs:
		return nil, err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (r *httpRoute) close() {}

func (r *httpRoute) fail(err error) {
	select {
	case r.errs <- err:
	default:
	}
}

// wire is the transport stream under HTTP: it follows the zilla://
// transport's flow control (the window granted, credit for DATA sent) the
// way a script stream with the same options would, and feeds what arrives
// to its msgReader. One goroutine pumps the transport's frames; the
// script streams write from theirs.
type wire struct {
	c      conn
	opts   streamOptions
	server bool
	reader *msgReader

	sendMu  sync.Mutex // serialises frames sent
	writeMu sync.Mutex // keeps one message write's frames together

	mu        sync.Mutex
	changed   chan struct{} // closed and replaced on every change below
	credit    int64
	padding   int
	peerBegun bool
	peerBegin frame
	reset     bool
	beginSent bool
	outDone   bool // END or ABORT sent
	inEnded   bool // the peer's END arrived while no message was in progress
	pending   int  // exchanges whose message out is not yet complete

	done     chan struct{}
	stopOnce sync.Once
}

func newWire(c conn, o streamOptions, server bool) *wire {
	return &wire{c: c, opts: o, server: server, changed: make(chan struct{}), done: make(chan struct{})}
}

func (w *wire) stop() {
	w.stopOnce.Do(func() {
		close(w.done)
		w.c.close()
	})
}

// notify wakes whoever waits on w.changed; w.mu must be held.
func (w *wire) notify() {
	close(w.changed)
	w.changed = make(chan struct{})
}

func (w *wire) send(f frame) error {
	f.authorization = w.opts.authorization
	w.sendMu.Lock()
	defer w.sendMu.Unlock()
	return w.c.send(context.Background(), f)
}

func (w *wire) grant(credit int64) {
	if credit <= 0 {
		return
	}
	_ = w.send(frame{kind: frameWindow, credit: credit, padding: w.opts.padding,
		budgetID: w.opts.budgetID, capabilities: w.opts.capabilities})
}

// accept answers a transport connection as an accept does at connected:
// its window, and in duplex its BEGIN.
func (w *wire) accept() {
	if w.opts.update != "none" {
		w.grant(w.opts.window)
	}
	if w.opts.transmission == "duplex" {
		_ = w.begin()
	}
}

// begin sends this side's BEGIN once.
func (w *wire) begin() error {
	w.mu.Lock()
	sent := w.beginSent
	w.beginSent = true
	w.mu.Unlock()
	if sent {
		return nil
	}
	return w.send(frame{kind: frameBegin, affinity: w.opts.affinity})
}

func (w *wire) pump() {
	q := w.c.inbox()
	for {
		for _, f := range q.take() {
			w.absorb(f)
		}
		select {
		case <-q.ready:
		case <-w.done:
			return
		}
	}
}

func (w *wire) absorb(f frame) {
	switch f.kind {
	case frameBegin:
		w.mu.Lock()
		w.peerBegun, w.peerBegin = true, f
		w.notify()
		w.mu.Unlock()
		if !w.server && w.opts.update != "none" {
			w.grant(w.opts.window)
		}
		w.reader.begun(f)
	case frameWindow:
		w.mu.Lock()
		w.credit += f.credit
		w.padding = f.padding
		w.notify()
		w.mu.Unlock()
	case frameReset:
		w.mu.Lock()
		w.reset = true
		w.notify()
		w.mu.Unlock()
		w.reader.reset(f)
	case frameData:
		if u := w.opts.update; u != "none" && u != "handshake" {
			w.grant(int64(f.reserved))
		}
		w.reader.feed(f.payload)
	case frameEnd:
		w.reader.end()
	case frameAbort:
		w.reader.abort(f)
	}
}

// write sends b as DATA within the credit granted, split as the credit
// allows.
func (w *wire) write(ctx context.Context, b []byte) error {
	w.writeMu.Lock()
	defer w.writeMu.Unlock()
	if err := w.begin(); err != nil {
		return err
	}
	for len(b) > 0 {
		w.mu.Lock()
		for w.opts.throttle != "none" && w.credit <= int64(w.padding) && !w.reset && !w.outDone {
			ch := w.changed
			w.mu.Unlock()
			select {
			case <-ch:
			case <-ctx.Done():
				return fmt.Errorf("timed out waiting for the transport's WINDOW to send %d bytes", len(b))
			}
			w.mu.Lock()
		}
		if w.reset {
			w.mu.Unlock()
			return errors.New("the transport was reset")
		}
		if w.outDone {
			w.mu.Unlock()
			return errors.New("the transport is already closed")
		}
		size := len(b)
		if w.opts.throttle != "none" {
			size = min(size, int(w.credit)-w.padding)
		}
		reserved := size + w.padding
		w.credit -= int64(reserved)
		w.mu.Unlock()
		f := frame{kind: frameData, payload: bytes.Clone(b[:size]), flags: flagInit | flagFin,
			reserved: reserved, budgetID: w.opts.budgetID}
		if err := w.send(f); err != nil {
			return err
		}
		b = b[size:]
	}
	return nil
}

// finish sends END (or ABORT) on the transport once.
func (w *wire) finish(kind frameKind) error {
	w.mu.Lock()
	if w.outDone {
		w.mu.Unlock()
		return nil
	}
	w.outDone = true
	w.notify()
	w.mu.Unlock()
	if err := w.begin(); err != nil {
		return err
	}
	return w.send(frame{kind: kind})
}

// exchangeDone records that one exchange finished writing its message;
// once the peer has ended its side and none is left, the transport ends
// too.
func (w *wire) exchangeDone() {
	w.mu.Lock()
	w.pending--
	end := w.inEnded && w.pending <= 0
	w.mu.Unlock()
	if end {
		_ = w.finish(frameEnd)
	}
}

// Reader states.
const (
	rsHead       = iota // waiting for a head
	rsLength            // a body of known length
	rsChunked           // a chunked body
	rsUntilClose        // a response body delimited by the transport's END
	rsRaw               // after an upgrade: bytes pass through
	rsDone              // a client's response is complete
)

// msgReader decodes the messages arriving on a wire with the h1 parsers:
// responses to the one request of a client wire, or the requests of a
// server wire, each opening an exchange on the accept it routes to.
type msgReader struct {
	w       *wire
	request bool
	srv     *httpServer
	cur     *httpConn
	buf     []byte
	state   int
	remain  int64
	chunked h1.ChunkedDecoder
	framing []byte // chunked framing bytes since the last data, for the trailers
	failed  bool
}

func (r *msgReader) begun(f frame) {
	if !r.request {
		r.cur.push(frame{kind: frameBegin, authorization: f.authorization})
		r.cur.push(frame{kind: frameWindow, credit: unbounded})
	}
}

func (r *msgReader) reset(f frame) {
	if r.cur != nil {
		r.cur.push(frame{kind: frameReset, ext: f.ext})
	}
}

// abort passes the transport's ABORT to the exchange still reading or
// writing its message; one that is done with both has nothing to abort.
func (r *msgReader) abort(f frame) {
	if r.cur != nil && !r.cur.finished() {
		r.cur.push(frame{kind: frameAbort, ext: f.ext})
	}
}

func (r *msgReader) end() {
	switch {
	case r.state == rsUntilClose || r.state == rsRaw:
		r.cur.finishRead(nil)
		r.state = rsDone
	case r.request && r.state == rsHead && len(r.buf) == 0 || r.state == rsDone:
		// The peer is done with the connection: end it too once every
		// message this side writes on it is out.
		w := r.w
		w.mu.Lock()
		w.inEnded = true
		end := w.pending <= 0
		w.mu.Unlock()
		if end {
			_ = w.finish(frameEnd)
		}
	case r.cur != nil:
		r.cur.push(frame{kind: frameAbort})
	}
}

func (r *msgReader) feed(b []byte) {
	if r.failed || r.state == rsDone {
		return
	}
	r.buf = append(r.buf, b...)
	for len(r.buf) > 0 && !r.failed {
		switch r.state {
		case rsHead:
			if !r.head() {
				return
			}
		case rsLength:
			n := int(min(r.remain, int64(len(r.buf))))
			r.cur.pushData(r.buf[:n])
			r.buf, r.remain = r.buf[n:], r.remain-int64(n)
			if r.remain == 0 {
				r.complete(nil)
			}
		case rsChunked:
			data, used, done, err := r.chunked.Decode(r.buf)
			if err != nil {
				r.fail(fmt.Errorf("chunked body: %v", err))
				return
			}
			if len(data) > 0 {
				r.cur.pushData(data)
				r.framing = r.framing[:0]
			} else {
				r.framing = append(r.framing, r.buf[:used]...)
			}
			r.buf = r.buf[used:]
			if done {
				trailers, err := parseTrailers(r.framing)
				if err != nil {
					r.fail(err)
					return
				}
				r.complete(trailers)
			}
		case rsUntilClose, rsRaw:
			r.cur.pushData(r.buf)
			r.buf = nil
		case rsDone:
			r.buf = nil
		}
	}
}

// head parses a head from the buffer; false when it needs more bytes.
func (r *msgReader) head() bool {
	if r.request {
		var h h1.RequestHead
		n, in, err := parseRequestHead(r.buf, &h)
		if errors.Is(err, h1.ErrIncomplete) {
			return false
		}
		if err != nil {
			r.fail(fmt.Errorf("request head %s: %v", quoteBytes(r.buf), err))
			return false
		}
		r.openExchange(in, string(h.Host))
		r.buf = r.buf[n:]
		switch {
		case h.Chunked:
			r.startChunked()
		case h.ContentLength > 0:
			r.state, r.remain = rsLength, h.ContentLength
		case hasHeader(r.cur.in.headers, "Upgrade"):
			r.state = rsRaw
		default:
			r.complete(nil)
		}
		return true
	}
	var h h1.ResponseHead
	n, err := h1.ParseResponseHead(r.buf, &h, h1.Limits{})
	if errors.Is(err, h1.ErrIncomplete) {
		return false
	}
	if err != nil {
		r.fail(fmt.Errorf("response head %s: %v", quoteBytes(r.buf), err))
		return false
	}
	r.buf = r.buf[n:]
	r.cur.setHead(&httpHead{
		version: "HTTP/1." + strconv.Itoa(h.Minor), status: h.Status, reason: string(h.Reason),
		headers: copyHeaders(h.Headers),
	})
	switch {
	case h.Status == 101:
		r.state = rsRaw
	case h.Status < 200 || h.Status == 204 || h.Status == 205 || h.Status == 304 || r.cur.sentMethod() == "HEAD":
		r.complete(nil)
	case h.Chunked:
		r.startChunked()
	case h.ContentLength > 0:
		r.state, r.remain = rsLength, h.ContentLength
	case h.ContentLength == 0:
		r.complete(nil)
	default:
		r.state = rsUntilClose
	}
	return true
}

func (r *msgReader) startChunked() {
	r.state = rsChunked
	r.chunked.Reset()
	r.framing = r.framing[:0]
}

// openExchange starts the exchange of a request head and hands it to the
// accept it routes to, or answers 404 when none does.
func (r *msgReader) openExchange(in *httpHead, host string) {
	u, _ := url.Parse(in.target)
	if u == nil || !u.IsAbs() {
		u, _ = url.Parse("http://" + host + in.target)
	}
	if u == nil {
		u = &url.URL{Scheme: "http", Host: host, Path: "/"}
	}
	hc := newHTTPConn(r.w, true, u)
	hc.in = in
	hc.version = in.version
	r.cur = hc
	route := r.srv.route(u.EscapedPath())
	if route == nil {
		// Written off the pump, which must go on taking the WINDOW it
		// may wait for.
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), RunTimeout)
			defer cancel()
			_ = r.w.write(ctx, []byte(in.version+" 404 Not Found\r\n\r\n"))
			r.w.exchangeDone()
		}()
		return
	}
	r.w.mu.Lock()
	auth := r.w.peerBegin.authorization
	r.w.mu.Unlock()
	hc.push(frame{kind: frameBegin, authorization: auth})
	hc.push(frame{kind: frameWindow, credit: unbounded})
	select {
	case route.reqs <- hc:
	default:
		route.fail(fmt.Errorf("too many requests pending on %s", route.path))
	}
}

// parseRequestHead parses a request head with h1, as leniently as Netty's
// decoder under k3po: an HTTP/1.1 request in absolute-form needs no Host
// field, a later HTTP/1.x version reads as HTTP/1.1 (keeping its text),
// and a transfer coding other than chunked leaves the request without a
// body. Each retry parses a copy of the head amended for the error (the
// version rewritten, a Host line added, the Transfer-Encoding name
// masked), then the fields are read back from buf at their places.
func parseRequestHead(buf []byte, h *h1.RequestHead) (int, *httpHead, error) {
	cp := buf
	version, inject, shift := "", -1, 0
	for try := 0; ; try++ {
		n, err := h1.ParseRequestHead(cp, h, h1.Limits{})
		if err == nil {
			return n - shift, requestHead(buf, cp, h, version, inject, shift), nil
		}
		var e *h1.Error
		eol := bytes.IndexByte(cp, '\n')
		if try == 3 || !errors.As(err, &e) || eol < 0 {
			return 0, nil, err
		}
		if try == 0 {
			cp = bytes.Clone(buf)
		}
		line := bytes.TrimSuffix(cp[:eol], []byte("\r"))
		sp := bytes.LastIndexByte(line, ' ')
		switch {
		case e.Status == 505:
			v := string(line[sp+1:])
			if sp < 0 || len(v) != len("HTTP/1.1") || !strings.HasPrefix(v, "HTTP/1.") {
				return 0, nil, err
			}
			version = v
			copy(cp[sp+1:], "HTTP/1.1")
		case e.Reason == "missing Host header" && inject < 0:
			u, perr := url.Parse(string(line[bytes.IndexByte(line, ' ')+1 : max(sp, 0)]))
			if perr != nil || !u.IsAbs() || u.Host == "" {
				return 0, nil, err
			}
			ins := "Host: " + u.Host + "\r\n"
			inject, shift = eol+1, len(ins)
			cp = append(cp[:inject:inject], append([]byte(ins), cp[inject:]...)...)
		case e.Status == 501 || e.Reason == "chunked is not the final transfer coding":
			masked := false
			for i := 0; i+len("\ntransfer-encoding:") <= len(cp); i++ {
				if cp[i] == '\n' && h1.EqualFold(cp[i+1:i+len("\ntransfer-encoding:")], "transfer-encoding:") {
					cp[i+1] = 'X'
					masked = true
				}
			}
			if !masked {
				return 0, nil, err
			}
		default:
			return 0, nil, err
		}
	}
}

// requestHead reads a parsed head's fields back from buf, where parsed
// is the amended copy h's views point into.
func requestHead(buf, parsed []byte, h *h1.RequestHead, version string, inject, shift int) *httpHead {
	orig := func(v []byte) (string, bool) {
		if len(v) == 0 {
			return "", true
		}
		off := cap(parsed) - cap(v)
		if inject >= 0 && off >= inject {
			if off < inject+shift {
				return "", false
			}
			off -= shift
		}
		return string(buf[off : off+len(v)]), true
	}
	if version == "" {
		// The request line's own version text: h1 reads a later
		// HTTP/1.x as HTTP/1.1, as Netty does, but the script sees what
		// was sent.
		version = "HTTP/1." + strconv.Itoa(h.Minor)
		if eol := bytes.IndexByte(buf, '\n'); eol > 0 {
			line := bytes.TrimSuffix(buf[:eol], []byte("\r"))
			if v := line[bytes.LastIndexByte(line, ' ')+1:]; bytes.HasPrefix(v, []byte("HTTP/1.")) {
				version = string(v)
			}
		}
	}
	in := &httpHead{method: string(h.Method), target: string(h.Target), version: version}
	for _, f := range h.Headers {
		name, ok := orig(f.Name)
		if !ok {
			continue
		}
		value, _ := orig(f.Value)
		in.headers = append(in.headers, httpField{name, value})
	}
	return in
}

// complete ends the message being read.
func (r *msgReader) complete(trailers []httpField) {
	r.cur.finishRead(trailers)
	if r.request {
		r.state = rsHead
	} else {
		r.state = rsDone
	}
}

func (r *msgReader) fail(err error) {
	r.failed = true
	if r.cur != nil && !r.request {
		r.cur.failRead(err)
		return
	}
	if r.srv != nil {
		r.srv.mu.Lock()
		routes := r.srv.routes
		r.srv.mu.Unlock()
		for _, route := range routes {
			route.fail(err)
		}
	}
}

// parseTrailers reads the trailer section out of the framing that ended a
// chunked body: the last chunk's line, the trailer fields and the empty
// line. The fields are parsed as a head's are.
func parseTrailers(framing []byte) ([]httpField, error) {
	b := bytes.TrimPrefix(framing, []byte("\r\n"))
	_, section, ok := bytes.Cut(b, []byte("\n"))
	if !ok || len(bytes.TrimSpace(section)) == 0 {
		return nil, nil
	}
	var h h1.ResponseHead
	if _, err := h1.ParseResponseHead(append([]byte("HTTP/1.1 200 OK\r\n"), section...), &h, h1.Limits{}); err != nil {
		return nil, fmt.Errorf("trailers %s: %v", quoteBytes(section), err)
	}
	return copyHeaders(h.Headers), nil
}

// httpField is one header or trailer field.
type httpField struct{ name, value string }

func copyHeaders(hs []h1.Header) []httpField {
	out := make([]httpField, len(hs))
	for i, h := range hs {
		out[i] = httpField{string(h.Name), string(h.Value)}
	}
	return out
}

func hasHeader(hs []httpField, name string) bool {
	for _, h := range hs {
		if strings.EqualFold(h.name, name) {
			return true
		}
	}
	return false
}

func headerValues(hs []httpField, name string) []string {
	var vs []string
	for _, h := range hs {
		if strings.EqualFold(h.name, name) {
			vs = append(vs, h.value)
		}
	}
	return vs
}

// setHeader replaces every field named name by one at the end, as Netty's
// HttpHeaders.set does.
func setHeader(hs []httpField, name, value string) []httpField {
	out := hs[:0:0]
	for _, h := range hs {
		if !strings.EqualFold(h.name, name) {
			out = append(out, h)
		}
	}
	return append(out, httpField{name, value})
}

// httpHead is a message head as read.
type httpHead struct {
	method, target, version string
	status                  int
	reason                  string
	headers                 []httpField
}

// Write states of an httpConn, after k3po's http channel sinks.
const (
	wsHead     = iota // nothing written: the head waits for content, flush or close
	wsBuffered        // content buffered to compute Content-Length (write http:content-length)
	wsChunked         // head out, content goes as chunks
	wsStreamed        // head out with Content-Length, content follows as is
	wsUpgraded        // Upgrade or 101: bytes pass through
	wsClose           // Connection: close: content runs to the transport's END
	wsComplete        // the message is out
)

// httpConn is one HTTP exchange as a script stream sees it: on a connect
// the request it writes and the response it reads, on an accepted block
// the reverse. DATA written is the message body, END its end; the head is
// set with write http:… before the first content, flush or close, as
// k3po's http transport does, and the peer's head is matched by
// read http:….
type httpConn struct {
	w      *wire
	server bool
	uri    *url.URL // connect: its address; accepted: the request's effective URI
	raw    string   // connect: its address as written
	out    *queue

	method, version string
	headers         []httpField
	trailers        []httpField
	status          int
	reason          string
	maxBuffered     int
	wstate          int
	buffered        []byte
	bufHead         []httpField
	remain          int64 // wsStreamed: content still to come
	outDone         bool

	mu       sync.Mutex
	changed  chan struct{}
	in       *httpHead
	inTrail  []httpField
	inDone   bool
	inErr    error
	inBroken frameKind // ABORT or RESET before the message was read
	sent     string    // the method of the request sent, for the response's framing
	wroteAll bool      // the message out is complete
}

func (hc *httpConn) sentMethod() string {
	hc.mu.Lock()
	defer hc.mu.Unlock()
	return hc.sent
}

func newHTTPConn(w *wire, server bool, u *url.URL) *httpConn {
	hc := &httpConn{w: w, server: server, uri: u, out: newQueue(), changed: make(chan struct{}),
		method: "GET", version: "HTTP/1.1", status: 200, reason: "OK"}
	w.mu.Lock()
	w.pending++
	w.mu.Unlock()
	return hc
}

func (hc *httpConn) inbox() *queue   { return hc.out }
func (hc *httpConn) maxData(int) int { return math.MaxInt }

func (hc *httpConn) close() {
	if !hc.server {
		hc.w.stop()
	}
}

func (hc *httpConn) notify() {
	close(hc.changed)
	hc.changed = make(chan struct{})
}

// push delivers a frame to the script stream; an ABORT or RESET also wakes
// a read http:… waiting for the head.
func (hc *httpConn) push(f frame) {
	if f.kind == frameAbort || f.kind == frameReset {
		hc.mu.Lock()
		if hc.inBroken == 0 {
			hc.inBroken = f.kind
		}
		hc.notify()
		hc.mu.Unlock()
	}
	hc.out.push(f)
}

func (hc *httpConn) pushData(b []byte) {
	if len(b) == 0 {
		return
	}
	hc.out.push(frame{kind: frameData, payload: bytes.Clone(b), flags: flagInit | flagFin, reserved: len(b)})
}

func (hc *httpConn) setHead(h *httpHead) {
	hc.mu.Lock()
	hc.in = h
	hc.notify()
	hc.mu.Unlock()
}

func (hc *httpConn) finishRead(trailers []httpField) {
	hc.mu.Lock()
	hc.inTrail, hc.inDone = trailers, true
	hc.notify()
	hc.mu.Unlock()
	hc.out.push(frame{kind: frameEnd})
}

func (hc *httpConn) failRead(err error) {
	hc.mu.Lock()
	hc.inErr = err
	hc.notify()
	hc.mu.Unlock()
	hc.out.push(frame{kind: frameAbort})
}

// finished reports whether the message was read and the message out
// was written.
func (hc *httpConn) finished() bool {
	hc.mu.Lock()
	defer hc.mu.Unlock()
	return hc.inDone && hc.wroteAll
}

// send takes the script stream's frames: DATA is content, END the end of
// the message, ABORT and RESET abort the transport.
func (hc *httpConn) send(ctx context.Context, f frame) error {
	switch f.kind {
	case frameBegin:
		if !hc.server {
			return hc.w.begin()
		}
	case frameData:
		return hc.write(ctx, f.payload)
	case frameEnd:
		return hc.closeOut(ctx)
	case frameAbort:
		return hc.abortOut(ctx)
	case frameReset:
		return hc.w.send(frame{kind: frameReset, ext: f.ext})
	}
	return nil
}

// complete marks the message written.
func (hc *httpConn) complete() { hc.wstate = wsComplete }

// settle tells the wire, once, that the message is out: the wire may end
// once every exchange on it is complete. It runs after the writes that
// complete the message.
func (hc *httpConn) settle() {
	if hc.wstate == wsComplete && !hc.outDone {
		hc.outDone = true
		hc.mu.Lock()
		hc.wroteAll = true
		hc.mu.Unlock()
		hc.w.exchangeDone()
	}
}

func contentLength(hs []httpField) (int64, bool) {
	vs := headerValues(hs, "Content-Length")
	if len(vs) == 0 {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(vs[0]), 10, 64)
	return n, err == nil
}

func isChunked(hs []httpField) bool {
	for _, v := range headerValues(hs, "Transfer-Encoding") {
		if strings.EqualFold(strings.TrimSpace(v), "chunked") {
			return true
		}
	}
	return false
}

func connectionClose(hs []httpField) bool {
	for _, v := range headerValues(hs, "Connection") {
		if v == "close" {
			return true
		}
	}
	return false
}

// target is the request-target: origin-form when a Host header is set,
// absolute-form otherwise (RFC 7230 §5.3), as k3po chooses.
func (hc *httpConn) target(hs []httpField) string {
	if !hasHeader(hs, "Host") {
		return hc.raw
	}
	t := hc.uri.EscapedPath()
	if hc.uri.RawQuery != "" {
		t += "?" + hc.uri.RawQuery
	}
	return t
}

// encodeHead renders the start line and hs, in order, as Netty's HTTP/1.1
// encoder writes them.
func (hc *httpConn) encodeHead(hs []httpField) []byte {
	var b []byte
	if hc.server {
		b = fmt.Appendf(b, "%s %d %s\r\n", hc.version, hc.status, hc.reason)
	} else {
		b = fmt.Appendf(b, "%s %s %s\r\n", hc.method, hc.target(hs), hc.version)
		hc.mu.Lock()
		hc.sent = hc.method
		hc.mu.Unlock()
	}
	for _, h := range hs {
		b = append(b, h.name...)
		b = append(b, ": "...)
		b = append(b, h.value...)
		b = append(b, "\r\n"...)
	}
	return append(b, "\r\n"...)
}

func (hc *httpConn) writeHead(ctx context.Context, hs []httpField, content []byte) error {
	return hc.w.write(ctx, append(hc.encodeHead(hs), content...))
}

// writeChunk sends b as one chunk; empty content is the last chunk, as
// Netty encodes it.
func (hc *httpConn) writeChunk(ctx context.Context, b []byte) error {
	if len(b) == 0 {
		hc.complete()
		return hc.w.write(ctx, []byte("0\r\n\r\n"))
	}
	c := h1.AppendChunkHeader(nil, len(b))
	c = append(c, b...)
	return hc.w.write(ctx, append(c, "\r\n"...))
}

func (hc *httpConn) writeLastChunk(ctx context.Context) error {
	b := []byte("0\r\n")
	for _, t := range hc.trailers {
		b = append(b, t.name+": "+t.value+"\r\n"...)
	}
	hc.complete()
	return hc.w.write(ctx, append(b, "\r\n"...))
}

// streamed sends content after a head with Content-Length.
func (hc *httpConn) streamed(ctx context.Context, b []byte) error {
	hc.remain -= int64(len(b))
	if hc.remain <= 0 {
		hc.complete()
	}
	return hc.w.write(ctx, b)
}

func (hc *httpConn) write(ctx context.Context, b []byte) error {
	defer hc.settle()
	switch hc.wstate {
	case wsHead:
		hs := slicesClone(hc.headers)
		if hc.server {
			return hc.writeResponse(ctx, hs, b)
		}
		return hc.writeRequest(ctx, hs, b)
	case wsBuffered:
		if len(hc.buffered)+len(b) > hc.maxBuffered {
			return errors.New("exceeded the maximum content buffered to compute Content-Length")
		}
		hc.buffered = append(hc.buffered, b...)
		return nil
	case wsChunked:
		return hc.writeChunk(ctx, b)
	case wsStreamed:
		return hc.streamed(ctx, b)
	case wsUpgraded, wsClose:
		return hc.w.write(ctx, b)
	}
	return errors.New("write after the HTTP message was complete")
}

func (hc *httpConn) writeRequest(ctx context.Context, hs []httpField, b []byte) error {
	switch cl, ok := contentLength(hs); {
	case ok:
		hc.wstate, hc.remain = wsStreamed, cl-int64(len(b))
		if hc.remain <= 0 {
			hc.complete()
		}
		return hc.writeHead(ctx, hs, b)
	case isChunked(hs):
		hc.wstate = wsChunked
		if err := hc.writeHead(ctx, hs, nil); err != nil {
			return err
		}
		return hc.writeChunk(ctx, b)
	case hasHeader(hs, "Upgrade"):
		hc.wstate = wsUpgraded
		return hc.writeHead(ctx, hs, b)
	case hc.maxBuffered >= len(b):
		hc.wstate, hc.buffered, hc.bufHead = wsBuffered, bytes.Clone(b), hs
		return nil
	}
	return errors.New("request content needs an Upgrade, Content-Length or Transfer-Encoding: chunked header, or write http:content-length")
}

// writeResponse sends or buffers the response head with its first
// content. Sluice streams content that falls short of a Content-Length
// set by the script, where k3po would buffer it.
func (hc *httpConn) writeResponse(ctx context.Context, hs []httpField, b []byte) error {
	cl, hasCL := contentLength(hs)
	switch {
	case hc.status == 101:
		hc.wstate = wsUpgraded
		return hc.writeHead(ctx, hs, b)
	case hasCL:
		hc.wstate, hc.remain = wsStreamed, cl-int64(len(b))
		if hc.remain <= 0 {
			hc.complete()
		}
		return hc.writeHead(ctx, hs, b)
	case isChunked(hs):
		hc.wstate = wsChunked
		if err := hc.writeHead(ctx, hs, nil); err != nil {
			return err
		}
		return hc.writeChunk(ctx, b)
	case connectionClose(hs):
		hc.wstate = wsClose
		return hc.writeHead(ctx, hs, b)
	case hc.maxBuffered >= len(b):
		hc.wstate, hc.buffered, hc.bufHead = wsBuffered, bytes.Clone(b), hs
		return nil
	}
	return errors.New("response content needs a Content-Length, Transfer-Encoding: chunked or Connection: close header, or write http:content-length")
}

// flush sends the head if it has not gone out, and buffered content with
// its computed Content-Length.
func (hc *httpConn) flush(ctx context.Context) error {
	defer hc.settle()
	switch hc.wstate {
	case wsBuffered:
		hs := setHeader(hc.bufHead, "Content-Length", strconv.Itoa(len(hc.buffered)))
		b := hc.buffered
		hc.buffered = nil
		hc.complete()
		return hc.writeHead(ctx, hs, b)
	case wsHead:
	default:
		return nil
	}
	hs := slicesClone(hc.headers)
	if hc.server {
		switch {
		case hc.status == 101:
			hc.wstate = wsUpgraded
		case isChunked(hs):
			hc.wstate = wsChunked
		case connectionClose(hs):
			hc.wstate = wsClose
		default:
			// RFC 7230 §3.3: no Content-Length on 1xx, 204, 205 and 304.
			if hc.status >= 200 && hc.maxBuffered > 0 && hc.status != 204 && hc.status != 205 && hc.status != 304 {
				hs = setHeader(hs, "Content-Length", "0")
			}
			hc.complete()
		}
		return hc.writeHead(ctx, hs, nil)
	}
	switch cl, ok := contentLength(hs); {
	case ok:
		hc.wstate, hc.remain = wsStreamed, cl
		if cl <= 0 {
			hc.complete()
		}
	case isChunked(hs):
		hc.wstate = wsChunked
	case hasHeader(hs, "Upgrade"):
		hc.wstate = wsUpgraded
	case strings.EqualFold(hc.method, "GET") || strings.EqualFold(hc.method, "HEAD"):
		hc.complete()
	case hc.maxBuffered > 0:
		hs = setHeader(hs, "Content-Length", "0")
		hc.complete()
	default:
		return fmt.Errorf("a %s request without content needs an Upgrade, Content-Length or Transfer-Encoding: chunked header, or write http:content-length", hc.method)
	}
	return hc.writeHead(ctx, hs, nil)
}

// closeOut ends the message: the last chunk with any trailers, or the
// head and buffered content; an upgraded exchange, or a response with
// Connection: close, ends the transport.
func (hc *httpConn) closeOut(ctx context.Context) error {
	defer hc.settle()
	if hc.wstate == wsChunked {
		return hc.writeLastChunk(ctx)
	}
	if err := hc.flush(ctx); err != nil {
		return err
	}
	switch hc.wstate {
	case wsChunked:
		// A request whose head went out with this close has no chunks
		// and, as k3po writes it, no last chunk either.
		if hc.server {
			return hc.writeLastChunk(ctx)
		}
	case wsUpgraded, wsClose:
		hc.complete()
		return hc.w.finish(frameEnd)
	}
	return nil
}

// abortOut flushes what is buffered, then aborts the transport.
func (hc *httpConn) abortOut(ctx context.Context) error {
	if hc.wstate == wsBuffered || !hc.server {
		_ = hc.flush(ctx)
	}
	return hc.w.finish(frameAbort)
}

func slicesClone(hs []httpField) []httpField { return append([]httpField(nil), hs...) }

// exec plays the commands an http:// stream handles itself: the http:
// configs and write flush. It reports false for the commands the stream
// plays as frames.
func (hc *httpConn) exec(ctx context.Context, s *stream, cmd Command) (bool, error) {
	switch c := cmd.(type) {
	case *WriteConfig:
		return true, hc.writeConfig(s, c)
	case *ReadConfig:
		return true, hc.readConfig(ctx, s, c)
	case *WriteFlush:
		if err := s.ensureBegin(ctx, c); err != nil {
			return true, err
		}
		if err := hc.flush(ctx); err != nil {
			return true, s.failf(c, "%v", err)
		}
		return true, nil
	}
	return false, nil
}

func (hc *httpConn) writeConfig(s *stream, c *WriteConfig) error {
	name, ok := strings.CutPrefix(c.Name, "http:")
	if !ok {
		return s.unsupported(c, fmt.Sprintf("command %q", commandName(c)))
	}
	vals := make([]string, len(c.Values))
	for i, v := range c.Values {
		b, err := s.sr.bytesOf(v)
		if err != nil {
			return s.failf(c, "%v", err)
		}
		vals[i] = string(b)
	}
	want := func(n int, what string) error {
		if len(vals) != n {
			return s.failf(c, "write http:%s wants %s, got %d values", name, what, len(vals))
		}
		return nil
	}
	switch name {
	case "method":
		if err := want(1, "a method"); err != nil {
			return err
		}
		m := strings.TrimSpace(vals[0])
		if !h1.ValidMethod([]byte(m)) {
			return s.failf(c, "write http:method: %q is not a method token", vals[0])
		}
		hc.method = m
	case "version":
		if err := want(1, "a version"); err != nil {
			return err
		}
		v := strings.ToUpper(strings.TrimSpace(vals[0]))
		if !validVersion(v) {
			return s.failf(c, "write http:version: %q is not a version such as HTTP/1.1", vals[0])
		}
		hc.version = v
	case "status":
		if err := want(2, "a code and a reason"); err != nil {
			return err
		}
		code, err := strconv.Atoi(strings.TrimSpace(vals[0]))
		if err != nil || code < 0 {
			return s.failf(c, "write http:status: %q is not a status code", vals[0])
		}
		hc.status, hc.reason = code, vals[1]
	case "header", "trailer":
		if len(vals) < 2 {
			return s.failf(c, "write http:%s wants a name and at least one value", name)
		}
		if !h1.ValidHeaderName([]byte(vals[0])) {
			return s.failf(c, "write http:%s: %q is not a field name", name, vals[0])
		}
		for _, v := range vals[1:] {
			if strings.ContainsAny(v, "\r\n") {
				return s.failf(c, "write http:%s: the value %q has a line break", name, v)
			}
			f := httpField{vals[0], v}
			if name == "header" {
				hc.headers = append(hc.headers, f)
			} else {
				hc.trailers = append(hc.trailers, f)
			}
		}
	case "host":
		if err := want(0, "no value"); err != nil {
			return err
		}
		hc.headers = setHeader(hc.headers, "Host", hc.uri.Host)
	case "content-length":
		if err := want(0, "no value"); err != nil {
			return err
		}
		hc.maxBuffered = 1<<31 - 1
	default:
		return s.unsupported(c, fmt.Sprintf("command %q", commandName(c)))
	}
	return nil
}

// validVersion checks a protocol version such as HTTP/1.1.
func validVersion(v string) bool {
	proto, num, ok := strings.Cut(v, "/")
	major, minor, ok2 := strings.Cut(num, ".")
	return ok && ok2 && proto != "" && !strings.ContainsAny(proto, " \t") && isDigits(major) && isDigits(minor)
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// waitHead waits for the peer's head (the response on a connect; an
// accepted exchange has its request head from the start). A connect whose
// request is still held back sends it first: a response cannot come
// before it.
func (hc *httpConn) waitHead(ctx context.Context, s *stream, c *ReadConfig, complete bool) (*httpHead, error) {
	if !hc.server && (hc.wstate == wsHead || hc.wstate == wsBuffered) {
		if err := s.ensureBegin(ctx, c); err != nil {
			return nil, err
		}
		if err := hc.flush(ctx); err != nil {
			return nil, s.failf(c, "%v", err)
		}
	}
	for {
		hc.mu.Lock()
		h, err, broken, done, ch := hc.in, hc.inErr, hc.inBroken, hc.inDone, hc.changed
		hc.mu.Unlock()
		switch {
		case err != nil:
			return nil, s.failf(c, "expected %s, observed %v", c, err)
		case h != nil && (!complete || done):
			return h, nil
		case broken != 0:
			return nil, s.failf(c, "expected %s, observed %s", c, broken)
		}
		select {
		case <-ch:
		case <-ctx.Done():
			what := "the HTTP response head"
			if complete {
				what = "the end of the HTTP message"
			}
			return nil, s.sr.ctxErr(ctx, c, what)
		}
	}
}

func (hc *httpConn) readConfig(ctx context.Context, s *stream, c *ReadConfig) error {
	name, ok := strings.CutPrefix(c.Name, "http:")
	if !ok {
		return s.unsupported(c, fmt.Sprintf("command %q", commandName(c)))
	}
	switch name {
	case "method", "version", "status", "header", "trailer":
	default:
		return s.unsupported(c, fmt.Sprintf("command %q", commandName(c)))
	}
	h, err := hc.waitHead(ctx, s, c, name == "trailer")
	if err != nil {
		return err
	}
	if c.Missing && name != "header" {
		return s.failf(c, "read http:%s takes no missing", name)
	}
	switch name {
	case "method":
		method := h.method
		if !hc.server {
			method = hc.method
		}
		return hc.match(s, c, c.Values, []string{method}, true, "method "+method)
	case "version":
		return hc.match(s, c, c.Values, []string{h.version}, false, "version "+h.version)
	case "status":
		code, reason := h.status, h.reason
		if hc.server {
			code, reason = hc.status, hc.reason
		}
		return hc.match(s, c, c.Values, []string{strconv.Itoa(code), reason}, false, fmt.Sprintf("status %d %q", code, reason))
	}
	fields := &h.headers
	what := "header"
	if name == "trailer" {
		hc.mu.Lock()
		fields = &hc.inTrail
		hc.mu.Unlock()
		what = "trailer"
	}
	if len(c.Values) == 0 {
		return s.failf(c, "read http:%s wants a name", name)
	}
	fname, ok := c.Values[0].(*Text)
	if !ok {
		return s.failf(c, "read http:%s wants a literal name, got %s", name, c.Values[0])
	}
	vals := headerValues(*fields, fname.Text)
	if c.Missing {
		if len(vals) > 0 {
			return s.failf(c, "expected no %s %q, observed %q", what, fname.Text, vals)
		}
		return nil
	}
	if len(vals) == 0 {
		return s.failf(c, "expected %s, observed no %s %q (%s)", c, what, fname.Text, describeFields(*fields))
	}
	for _, m := range c.Values[1:] {
		if err := hc.matchField(s, c, fields, fname.Text, m, what); err != nil {
			return err
		}
	}
	return nil
}

// matchField matches one value of the field named name, as k3po does: a
// single value must match; among several, the first that matches is
// taken out so that the next matcher sees the others.
func (hc *httpConn) matchField(s *stream, c *ReadConfig, fields *[]httpField, name string, m Matcher, what string) error {
	vals := headerValues(*fields, name)
	if len(vals) == 1 {
		ok, err := hc.matchValue(s, m, vals[0], true)
		if err != nil {
			return s.failf(c, "%v", err)
		}
		if !ok {
			return s.failf(c, "expected %s, observed %s %s: %q", c, what, name, vals[0])
		}
		return nil
	}
	for i, f := range *fields {
		if !strings.EqualFold(f.name, name) {
			continue
		}
		ok, err := hc.matchValue(s, m, f.value, true)
		if err != nil {
			return s.failf(c, "%v", err)
		}
		if ok {
			*fields = append((*fields)[:i:i], (*fields)[i+1:]...)
			return nil
		}
	}
	return s.failf(c, "expected %s, observed %s %s: %q", c, what, name, vals)
}

// match matches the operands against values in order: a method must match
// whole, a version, status code or reason from its start.
func (hc *httpConn) match(s *stream, c *ReadConfig, ms []Matcher, values []string, whole bool, observed string) error {
	if len(ms) > len(values) {
		return s.failf(c, "%s takes at most %d values, got %d", commandName(c), len(values), len(ms))
	}
	for i, m := range ms {
		ok, err := hc.matchValue(s, m, values[i], whole)
		if err != nil {
			return s.failf(c, "%v", err)
		}
		if !ok {
			return s.failf(c, "expected %s, observed %s", c, observed)
		}
	}
	return nil
}

// matchValue matches one operand against v; a regex captures its named
// groups as strings.
func (hc *httpConn) matchValue(s *stream, m Matcher, v string, whole bool) (bool, error) {
	if re, ok := m.(*Regex); ok {
		pat := `\A(?:` + re.Pattern + `)`
		if whole {
			pat += `\z`
		}
		rx, err := regexp2.Compile(pat, regexp2.None)
		if err != nil {
			return false, fmt.Errorf("regex /%s/: %v", re.Pattern, err)
		}
		match, err := rx.FindStringMatch(v)
		if err != nil {
			return false, fmt.Errorf("regex /%s/: %v", re.Pattern, err)
		}
		if match == nil {
			return false, nil
		}
		for _, name := range re.Groups {
			if g := match.GroupByName(name); g != nil {
				s.sr.capture(name, g.String())
			}
		}
		return true, nil
	}
	want, err := s.sr.bytesOf(m)
	if err != nil {
		return false, err
	}
	if whole {
		return v == string(want), nil
	}
	return strings.HasPrefix(v, string(want)), nil
}

func describeFields(fs []httpField) string {
	if len(fs) == 0 {
		return "no fields"
	}
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = f.name + ": " + f.value
	}
	return strconv.Quote(strings.Join(parts, ", "))
}
