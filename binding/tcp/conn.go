package tcp

import (
	"errors"
	"net/netip"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sluicehq/sluice/binding/internal/streams"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/frame"
	"github.com/sluicehq/sluice/engine/frame/proxy"
	"github.com/sluicehq/sluice/internal/rawio"
)

// epollEvents is the interest of a connected socket. It is edge-triggered
// (see the package doc): readiness is remembered in conn.readable and
// conn.writable, so stopping and resuming on the window needs no
// epoll_ctl.
const epollEvents = unix.EPOLLIN | unix.EPOLLOUT | unix.EPOLLRDHUP | unix.EPOLLET

// conn is one TCP connection and the stream that carries it: a server's
// accepted socket or a client's connected one. Out is the direction the
// binding sends DATA on, bytes read from the socket (the initial
// direction of a server's stream, the reply of a client's); In is the
// direction it receives DATA on, bytes to write to the socket.
// Everything runs on the worker's thread.
type conn struct {
	engine.Stream

	h      *Handler
	fd     int
	server bool
	// claim is the size of the next read's ring claim (see readNet).
	claim int

	// Socket readiness, as the last edge and the last syscall left it.
	// rdhup records that the peer has closed its side: a short read then
	// does not mean the socket is drained, since the end is still to read.
	readable, writable, rdhup bool
	// connecting is set while a client resolves or connects; shut once
	// the socket's sending side is shut down after the application's END.
	connecting, shut bool

	// pend holds bytes received from the application that the socket has
	// not taken yet: pend[pendOff:pendOff+pendLen]. It is a buffer pool
	// slot (or, when the pool is exhausted, a buffer of the connection's
	// own) and is released once empty.
	pend             []byte
	pendOff, pendLen int
	slot             int

	// The connection's ends for the BEGIN: src opened it, dst accepted.
	src, dst netip.AddrPort

	onAppFn    engine.MessageConsumer
	onEventsFn func(events uint32)
	retryFn    func()
	retrying   bool

	// writeBy is when the socket must have taken some of the bytes in
	// pend; the timer armed for it, writeTimer, re-arms itself when
	// writeBy has moved on.
	writeBy        time.Time
	writeTimer     int64
	onWriteTimerFn func()
}

func newConn(h *Handler, server bool) *conn {
	c := &conn{h: h, fd: -1, server: server, slot: engine.NoSlot}
	c.onAppFn = c.onApp
	c.onEventsFn = c.onEvents
	return c
}

// register adds the socket to the worker's poller.
func (c *conn) register() error {
	if err := c.h.w.RegisterFD(c.fd, epollEvents, c.onEventsFn); err != nil {
		return err
	}
	c.h.conns[c] = struct{}{}
	c.readable, c.writable = true, true
	return nil
}

// onEvents handles the socket's readiness.
func (c *conn) onEvents(events uint32) {
	if c.fd < 0 {
		return
	}
	if c.connecting && !c.onConnectEvent(events) {
		return
	}
	if events&(unix.EPOLLRDHUP|unix.EPOLLHUP|unix.EPOLLERR) != 0 {
		c.rdhup = true
	}
	if events&(unix.EPOLLIN|unix.EPOLLRDHUP|unix.EPOLLHUP|unix.EPOLLERR) != 0 {
		// Bytes that arrived before a reset are still read first: the
		// read after them reports the error.
		c.readable = true
		c.readNet()
	}
	// With the out direction open, reading (or peeking, without a
	// window) reports the error after the bytes before it; otherwise it
	// is taken here.
	if events&unix.EPOLLERR != 0 && c.fd >= 0 && !c.outOpen() {
		if err := socketError(c.fd); err != nil {
			c.onNetError(err)
			return
		}
	}
	if events&(unix.EPOLLOUT|unix.EPOLLHUP) != 0 && c.fd >= 0 {
		c.writable = true
		c.flush()
	}
}

// outOpen reports whether the out direction has begun and not closed:
// whether bytes read from the socket can go out as DATA.
func (c *conn) outOpen() bool { return c.Out.Opening() && !c.Out.Closed() }

// minClaim is the smallest ring claim a read makes. A claim is ring space
// the read's frame takes whether the bytes come or not, and the consumer
// zeroes all of it, so a claim much larger than the messages (MCP requests
// and answers are mostly 200 to 500 bytes) makes the ring walk through
// more memory than a core's cache holds when many calls are in flight
// (bench/mcp/README.md, "Measurements behind constants"). A bigger message
// costs one more read, after which the claim doubles.
const minClaim = 1 << 10

// readNet reads the socket into DATA frames while the application's
// window allows: each read lands straight in a frame claimed in the ring
// of the application's worker, never more than the window less the
// padding. When the window is exhausted the bytes stay in the kernel,
// whose receive window then pushes back on the peer.
//
// The DATA is built in the claim rather than sent through the Stream, so
// its header comes from the Stream's fields here (but for authorization,
// which tcp leaves 0, the builder's default) and Out's sequence advances
// once the frame is committed.
func (c *conn) readNet() {
	h := c.h
	for c.readable && c.fd >= 0 && c.outOpen() {
		n := c.Out.Available() - int64(c.Out.Pad)
		if n <= 0 {
			c.peekEnd()
			return
		}
		// The claim follows what the reads bring: it doubles while reads
		// fill it and halves back when they come in far under it. A read
		// commits only what arrived, and the rest of its claim becomes
		// ring padding, which the ring's consumer zeroes: claiming the
		// whole window for a 300-byte request cost more in zeroing than
		// the request's own processing.
		if c.claim == 0 {
			c.claim = minClaim
		}
		n = min(n, int64(h.maxPayload), int64(c.claim))
		fc, err := h.w.Claim(frame.FrameData, c.OutID(), frame.DataPayloadOffset+int(n))
		if err != nil {
			// The ring is full: it drains in this loop pass.
			c.retryLater()
			return
		}
		r, err := rawio.Recv(c.fd, fc.Buf[frame.DataPayloadOffset:])
		switch {
		case err == nil && r > 0:
			reserved := c.Out.Reserved(r)
			c.Out.Trace = h.w.SupplyTraceID()
			h.dataB.Wrap(fc.Buf, 0, len(fc.Buf)).
				OriginID(c.OriginID()).RoutedID(c.RoutedID()).StreamID(c.OutID()).
				Sequence(c.Out.Seq).Acknowledge(c.Out.Ack).Maximum(c.Out.Max).
				TraceID(c.Out.Trace).
				Flags(uint8(frame.FlagsDataMessage)).BudgetID(c.Out.Budget).Reserved(reserved).
				PayloadReserve(r)
			limit, err := h.dataB.BuildLimit()
			if err != nil {
				fc.Abort()
				c.fail()
				return
			}
			if err := fc.Commit(limit); err != nil {
				c.fail()
				return
			}
			c.Out.Seq += int64(reserved)
			switch {
			case r == int(n):
				c.claim = min(2*c.claim, h.maxPayload)
			case r < c.claim/4:
				c.claim = max(c.claim/2, minClaim)
			}
			if r < int(n) && !c.rdhup {
				// A short read emptied the socket; the next arrival is a
				// new edge.
				c.readable = false
			}
		case err == nil:
			fc.Abort()
			c.onNetEnd()
		case errors.Is(err, unix.EINTR):
			fc.Abort()
		case errors.Is(err, unix.EAGAIN):
			fc.Abort()
			c.readable = false
		default:
			fc.Abort()
			c.onNetError(err)
		}
	}
}

// peekEnd looks, without a window to read into, whether all the peer
// has left to send is its end, so that END need not wait for credit.
func (c *conn) peekEnd() {
	if !c.rdhup {
		return
	}
	var b [1]byte
	n, _, err := unix.Recvfrom(c.fd, b[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
	switch {
	case err == nil && n == 0:
		c.onNetEnd()
	case err != nil && !errors.Is(err, unix.EAGAIN) && !errors.Is(err, unix.EINTR):
		c.onNetError(err)
	}
}

// retryLater reads again once the worker has drained its ring: a claim
// is refused while frames for the ring wait in the worker's backlog.
func (c *conn) retryLater() {
	if c.retrying {
		return
	}
	if c.retryFn == nil {
		c.retryFn = c.retry
	}
	c.retrying = true
	c.h.w.Dispatch(c.retryFn)
}

func (c *conn) retry() {
	c.retrying = false
	c.readNet()
}

// onNetEnd handles the peer's FIN: the stream's out direction ends.
func (c *conn) onNetEnd() {
	c.readable = false
	if c.Out.Opening() {
		c.Out.Trace = c.h.w.SupplyTraceID()
		if err := c.End(nil); err != nil {
			c.fail()
			return
		}
	}
	c.closeIfDone()
}

// onNetError handles a broken socket (reset by the peer, a failed write):
// the stream is torn down both ways.
func (c *conn) onNetError(error) {
	c.fail()
}

// onApp receives the application's frames: those of the in direction and
// the throttle frames of the out direction. A frame that does not parse
// is dropped; one that breaks the protocol (spec: a receiver that gets
// data beyond its window resets) tears the connection down.
func (c *conn) onApp(t frame.FrameType, buf []byte) {
	switch t {
	case frame.FrameBegin:
		if b, err := c.OnBegin(buf); err == nil {
			c.onAppBegin(&b)
		}
	case frame.FrameData:
		if d, err := c.OnData(buf); streams.ReceivedOpen(err, c.fail) {
			c.onAppData(&d)
		}
	case frame.FrameFlush:
		if f, err := c.OnFlush(buf); streams.ReceivedOpen(err, c.fail) {
			c.acknowledge(f.TraceID())
		}
	case frame.FrameEnd:
		if _, err := c.OnEnd(buf); !errors.Is(err, engine.ErrMalformedFrame) {
			c.onAppEnd()
		}
	case frame.FrameAbort:
		c.OnAbort(buf) // closes In whatever it returns
		c.fail()
	case frame.FrameWindow:
		w, err := c.OnWindow(buf)
		switch {
		case errors.Is(err, engine.ErrMalformedFrame):
		case err != nil || w.Padding() < 0:
			c.fail()
		default:
			c.readNet()
		}
	case frame.FrameReset:
		c.OnReset(buf) // closes Out whatever it returns
		c.fail()
	}
}

func (c *conn) onAppBegin(b *frame.Begin) {
	if c.server {
		c.grant(b.TraceID())
		return
	}
	c.onClientBegin(b)
}

// grant opens the in direction's window: the application may have as
// many bytes in flight as the connection's buffer can hold.
func (c *conn) grant(traceID int64) {
	c.In.Max = c.h.window
	c.doWindow(traceID)
}

func (c *conn) onAppData(d *frame.Data) {
	if c.fd < 0 {
		return
	}
	payload := d.Payload()
	if c.pendLen == 0 && c.writable {
		n, err := writeSome(c.fd, payload)
		if err != nil {
			c.onNetError(err)
			return
		}
		payload = payload[n:]
		if len(payload) > 0 {
			c.writable = false
		}
	}
	if len(payload) > 0 && !c.stash(payload) {
		c.fail()
		return
	}
	c.acknowledge(d.TraceID())
}

// writeSome writes as much of p as the socket takes without blocking.
func writeSome(fd int, p []byte) (int, error) {
	written := 0
	for written < len(p) {
		n, err := rawio.Send(fd, p[written:])
		switch {
		case err == nil:
			written += n
		case errors.Is(err, unix.EINTR):
		case errors.Is(err, unix.EAGAIN):
			return written, nil
		default:
			return written, err
		}
	}
	return written, nil
}

// stash keeps bytes the socket did not take until it is writable again.
func (c *conn) stash(p []byte) bool {
	if c.pend == nil {
		pool := c.h.w.BufferPool()
		if c.slot = pool.Acquire(c.InID()); c.slot != engine.NoSlot {
			c.pend = pool.Buffer(c.slot)
		} else {
			c.pend = make([]byte, c.h.window)
		}
		c.pendOff, c.pendLen = 0, 0
	}
	if c.pendLen+len(p) > len(c.pend) {
		return false // beyond the window granted: OnData let it through only if the window is wrong
	}
	if c.pendOff+c.pendLen+len(p) > len(c.pend) {
		copy(c.pend, c.pend[c.pendOff:c.pendOff+c.pendLen])
		c.pendOff = 0
	}
	if c.pendLen == 0 {
		c.expectWrite()
	}
	copy(c.pend[c.pendOff+c.pendLen:], p)
	c.pendLen += len(p)
	return true
}

// expectWrite gives the socket write-timeout from now to take some of the
// bytes waiting for it. Moving the deadline later costs no timer
// operation: the timer re-arms itself when it fires early.
func (c *conn) expectWrite() {
	h := c.h
	c.writeBy = h.w.Now().Add(h.s.writeTimeout)
	if c.writeTimer != 0 {
		return
	}
	if c.onWriteTimerFn == nil {
		c.onWriteTimerFn = c.onWriteTimer
	}
	c.writeTimer = h.w.TimerAt(c.writeBy, c.onWriteTimerFn)
}

// onWriteTimer resets the connection when its socket has taken none of
// the bytes waiting for it within write-timeout: a peer that stops
// reading holds a buffer and, through flow control, the application. A
// connect still in progress then is refused.
func (c *conn) onWriteTimer() {
	c.writeTimer = 0
	if c.fd < 0 || c.pendLen == 0 && !c.connecting {
		return
	}
	if c.h.w.Now().Before(c.writeBy) {
		c.writeTimer = c.h.w.TimerAt(c.writeBy, c.onWriteTimerFn)
		return
	}
	if c.connecting {
		c.refuse(errors.New("connect timed out"))
		return
	}
	c.h.w.Logger().Debug("tcp: write timeout", "binding", c.h.cfg.Name, "stream", c.OutID(), "pending", c.pendLen)
	c.fail()
}

// flush writes the stashed bytes once the socket is writable again, and
// shuts its sending side down once they are out after the application's
// END.
func (c *conn) flush() {
	if c.pendLen > 0 {
		n, err := writeSome(c.fd, c.pend[c.pendOff:c.pendOff+c.pendLen])
		if err != nil {
			c.onNetError(err)
			return
		}
		c.pendOff += n
		c.pendLen -= n
		if c.pendLen > 0 {
			c.writable = false
			if n > 0 {
				c.expectWrite()
			}
		}
		if c.pendLen == 0 {
			c.release()
		}
		c.acknowledge(c.h.w.SupplyTraceID())
	}
	if c.pendLen == 0 && c.In.Closed() && !c.shut {
		c.shutdownWrite()
	}
}

// release gives the write buffer back.
func (c *conn) release() {
	if c.slot != engine.NoSlot {
		c.h.w.BufferPool().Release(c.slot)
		c.slot = engine.NoSlot
	}
	c.pend, c.pendOff, c.pendLen = nil, 0, 0
}

// acknowledge tells the application how far its bytes have reached the
// socket: everything received but what still waits in the buffer. Credit
// returns only as bytes leave, so a slow peer slows the application. The
// socket is a byte stream, so its senders cut their DATA to any window
// and the credit can wait until half of it is used (Flow.WindowDue): one
// WINDOW per half window written rather than one per DATA, which through
// the gateway is two WINDOW frames fewer per tools/call (the http server's
// response and the http client's request). Once the application has
// ended, no WINDOW goes back: it expects none.
func (c *conn) acknowledge(traceID int64) {
	if c.In.Closed() {
		return
	}
	ack := c.In.Seq - int64(c.pendLen)
	if !c.In.WindowDue(ack, c.In.Max, c.In.Pad) {
		return
	}
	c.In.Ack = ack
	c.doWindow(traceID)
}

// onAppEnd shuts the socket's sending side down once every byte is
// written: the peer reads its end of stream after the last byte.
func (c *conn) onAppEnd() {
	if c.pendLen == 0 && !c.connecting && c.fd >= 0 {
		c.shutdownWrite()
	}
}

func (c *conn) shutdownWrite() {
	c.shut = true
	c.release()
	if err := unix.Shutdown(c.fd, unix.SHUT_WR); err != nil {
		c.onNetError(err)
		return
	}
	c.closeIfDone()
}

// closeIfDone closes the socket once both directions have closed in
// order.
func (c *conn) closeIfDone() {
	if c.Out.Closed() && c.shut {
		c.closeSocket(false)
	}
}

// fail tears the connection down: every direction of the stream still
// open is closed abortively (ABORT what the binding sends, RESET what it
// receives) and the socket is reset, with SO_LINGER 0, so that the peer
// sees RST rather than an orderly end. A client whose reply has not
// begun sends only the RESET, as a refused stream does.
func (c *conn) fail() {
	h := c.h
	traceID := h.w.SupplyTraceID()
	if c.Out.Opening() {
		c.Out.Trace = traceID
		if err := c.Abort(nil); err != nil {
			h.w.Logger().Warn("tcp: abort not sent", "binding", h.cfg.Name, "stream", c.OutID(), "err", err)
		}
	}
	// A server's stream exists once its BEGIN went; a client's is the
	// application's.
	if !c.server || c.Out.Opening() {
		c.In.Trace = traceID
		if err := c.Reset(nil); err != nil {
			h.w.Logger().Warn("tcp: reset not sent", "binding", h.cfg.Name, "stream", c.InID(), "err", err)
		}
	}
	c.connecting = false
	c.closeSocket(true)
}

// closeSocket closes the socket, abortively (RST) or not, and releases
// the connection's resources.
func (c *conn) closeSocket(abortive bool) {
	if c.fd < 0 {
		return
	}
	h := c.h
	if abortive {
		_ = unix.SetsockoptLinger(c.fd, unix.SOL_SOCKET, unix.SO_LINGER, &unix.Linger{Onoff: 1, Linger: 0})
	}
	if _, ok := h.conns[c]; ok {
		_ = h.w.UnregisterFD(c.fd)
		delete(h.conns, c)
	}
	_ = unix.Close(c.fd)
	c.fd = -1
	c.readable, c.writable = false, false
	c.release()
	h.w.Disarm(&c.writeTimer)
	if c.server {
		h.released()
	}
}

// doWindow tells the application the in direction's credit.
func (c *conn) doWindow(traceID int64) {
	c.In.Trace = traceID
	if err := c.Window(); err != nil {
		c.fail()
	}
}

// doBegin begins the out direction: a server opens its stream to the exit
// with it, a client begins its reply and then opens the application's
// window. The BEGIN carries the connection's addresses.
func (c *conn) doBegin() {
	h := c.h
	traceID := h.w.SupplyTraceID()
	c.Out.Trace = traceID
	if err := c.BeginWith(0, func(b *frame.BeginBuilder) { c.beginEx(b) }); err != nil {
		h.w.Logger().Warn("tcp: stream not opened", "binding", h.cfg.Name, "err", err)
		c.fail()
		return
	}
	if !c.server {
		c.grant(traceID)
		if c.In.Closed() && c.fd >= 0 && !c.shut {
			c.shutdownWrite()
		}
	}
}

// beginEx writes the BEGIN's extension in place: a ProxyBeginEx with the
// connection's addresses, src the side that opened the connection and
// dst the side that accepted it.
func (c *conn) beginEx(b *frame.BeginBuilder) {
	h := c.h
	var sb, db [64]byte
	h.proxyB.WrapSlot(b.ExtensionBuffer()).TypeID(h.proxyTypeID).
		Address().Inet().Protocol(proxy.ProxyAddressProtocolStream).
		SourceBytes(c.src.Addr().Unmap().AppendTo(sb[:0])).
		DestinationBytes(c.dst.Addr().Unmap().AppendTo(db[:0])).
		SourcePort(c.src.Port()).DestinationPort(c.dst.Port())
	b.ExtensionDone(h.proxyB.BuildLimit())
}

// socketError returns the socket's pending error, SO_ERROR.
func socketError(fd int) error {
	v, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ERROR)
	if err != nil {
		return err
	}
	if v != 0 {
		return unix.Errno(v)
	}
	return nil
}
