package tcp

import (
	"errors"
	"net/netip"

	"golang.org/x/sys/unix"

	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/frame"
	"github.com/sluicehq/sluice/engine/frame/proxy"
	"github.com/sluicehq/sluice/engine/ring"
	"github.com/sluicehq/sluice/internal/rawio"
)

// The state of a connection's stream, one direction at a time. "out" is
// the direction the binding sends DATA on, bytes read from the socket
// (the initial direction of a server's stream, the reply of a client's);
// "in" is the direction it receives DATA on, bytes to write to the
// socket.
const (
	outOpened  uint16 = 1 << iota // BEGIN sent to the application
	outClosed                     // END or ABORT sent, or RESET received
	inOpened                      // the application's BEGIN received
	inClosing                     // END received; bytes may still wait to be written
	inClosed                      // written out and shut down, ABORT received or RESET sent
	connecting                    // a client resolves or connects
)

// Control frames the ring had no room for: a full ring refuses a frame
// rather than blocking (ARCHITECTURE.md §4), so the frame waits, flagged,
// and is sent once the worker has drained its ring. It is built from the
// stream's state at that time: a deferred WINDOW, say, carries the latest
// acknowledgement.
const (
	pendBegin uint8 = 1 << iota
	pendWindow
	pendEnd
	pendAbort
	pendReset
)

// epollEvents is the interest of a connected socket. It is edge-triggered
// (see the package doc): readiness is remembered in conn.readable and
// conn.writable, so stopping and resuming on the window needs no
// epoll_ctl.
const epollEvents = unix.EPOLLIN | unix.EPOLLOUT | unix.EPOLLRDHUP | unix.EPOLLET

// conn is one TCP connection and the stream that carries it: a server's
// accepted socket or a client's connected one. Everything runs on the
// worker's thread.
type conn struct {
	h      *Handler
	fd     int
	server bool
	state  uint16

	originID, routedID int64
	outID, inID        int64
	out                engine.Flow // bytes read from the socket, sent as DATA
	in                 engine.Flow // DATA received, written to the socket
	// claim is the size of the next read's ring claim (see readNet).
	claim int

	// Socket readiness, as the last edge and the last syscall left it.
	// rdhup records that the peer has closed its side: a short read then
	// does not mean the socket is drained, since the end is still to read.
	readable, writable, rdhup bool

	// pend holds bytes received from the application that the socket has
	// not taken yet: pend[pendOff:pendOff+pendLen]. It is a buffer pool
	// slot (or, when the pool is exhausted, a buffer of the connection's
	// own) and is released once empty.
	pend             []byte
	pendOff, pendLen int
	slot             int

	// The connection's ends for the BEGIN: src opened it, dst accepted.
	src, dst netip.AddrPort

	pending uint8 // control frames deferred by a full ring

	onAppFn    engine.MessageConsumer
	onEventsFn func(events uint32)
	retryFn    func()
	retrying   bool
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
	if c.state&connecting != 0 && !c.onConnectEvent(events) {
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
	if events&unix.EPOLLERR != 0 && c.fd >= 0 && c.state&(outOpened|outClosed) != outOpened {
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
func (c *conn) readNet() {
	h := c.h
	for c.readable && c.fd >= 0 && c.state&outClosed == 0 && c.state&outOpened != 0 {
		n := c.out.Available() - int64(c.out.Pad)
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
		fc, err := h.w.Claim(frame.FrameData, c.outID, frame.DataPayloadOffset+int(n))
		if err != nil {
			// The ring is full: it drains in this loop pass.
			c.retryLater()
			return
		}
		r, err := rawio.Recv(c.fd, fc.Buf[frame.DataPayloadOffset:])
		switch {
		case err == nil && r > 0:
			reserved := int32(r) + c.out.Pad
			h.dataB.Wrap(fc.Buf, 0, len(fc.Buf)).
				OriginID(c.originID).RoutedID(c.routedID).StreamID(c.outID).
				Sequence(c.out.Seq).Acknowledge(c.out.Ack).Maximum(c.out.Max).
				TraceID(h.w.SupplyTraceID()).
				Flags(uint8(frame.FlagsDataMessage)).BudgetID(c.out.Budget).Reserved(reserved).
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
			c.out.Seq += int64(reserved)
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

// retryLater sends the deferred frames and reads again once the worker
// has drained its ring.
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
	p := c.pending
	c.pending = 0
	if p&pendBegin != 0 {
		c.doBegin()
		if c.pending&pendBegin != 0 {
			c.pending |= p // nothing else goes before the BEGIN
			return
		}
	}
	traceID := c.h.w.SupplyTraceID()
	if p&pendWindow != 0 {
		c.doWindow(traceID)
	}
	if p&pendEnd != 0 {
		c.sendEnd(traceID)
	}
	if p&pendAbort != 0 {
		c.doAbort(traceID)
	}
	if p&pendReset != 0 {
		c.doReset(traceID)
	}
	c.readNet()
}

// deferred records the outcome of sending the control frame flag: a full
// ring defers it (see retry), any other error is returned.
func (c *conn) deferred(flag uint8, err error) error {
	if errors.Is(err, ring.ErrFull) {
		c.pending |= flag
		c.retryLater()
		return nil
	}
	c.pending &^= flag
	return err
}

// onNetEnd handles the peer's FIN: the stream's out direction ends.
func (c *conn) onNetEnd() {
	c.readable = false
	c.doEnd(c.h.w.SupplyTraceID())
	c.closeIfDone()
}

// onNetError handles a broken socket (reset by the peer, a failed write):
// the stream is torn down both ways.
func (c *conn) onNetError(error) {
	c.fail()
}

// onApp receives the application's frames: those of the in direction and
// the throttle frames of the out direction.
func (c *conn) onApp(t frame.FrameType, buf []byte) {
	h := c.h
	switch t {
	case frame.FrameBegin:
		if h.begin.TryWrap(buf, 0, len(buf)) {
			c.onAppBegin(&h.begin)
		}
	case frame.FrameData:
		if h.data.TryWrap(buf, 0, len(buf)) {
			c.onAppData(&h.data)
		}
	case frame.FrameFlush:
		if h.flush.TryWrap(buf, 0, len(buf)) {
			c.onAppFlush(&h.flush)
		}
	case frame.FrameEnd:
		if h.end.TryWrap(buf, 0, len(buf)) {
			c.onAppEnd(&h.end)
		}
	case frame.FrameAbort:
		c.state |= inClosed
		c.fail()
	case frame.FrameWindow:
		if h.windowR.TryWrap(buf, 0, len(buf)) {
			c.onAppWindow(&h.windowR)
		}
	case frame.FrameReset:
		c.state |= outClosed
		c.fail()
	}
}

func (c *conn) onAppBegin(b *frame.Begin) {
	if c.state&inOpened != 0 {
		return
	}
	c.state |= inOpened
	c.in.Seq, c.in.Ack = b.Sequence(), b.Acknowledge()
	if c.server {
		c.grant(b.TraceID())
		return
	}
	c.onClientBegin(b)
}

// grant opens the in direction's window: the application may have as
// many bytes in flight as the connection's buffer can hold.
func (c *conn) grant(traceID int64) {
	c.in.Max = c.h.window
	c.doWindow(traceID)
}

func (c *conn) onAppData(d *frame.Data) {
	if c.state&(inClosing|inClosed) != 0 || c.fd < 0 {
		return
	}
	if err := c.in.OnData(d); err != nil {
		// spec: a receiver that gets data beyond its window resets.
		c.fail()
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
		if c.slot = pool.Acquire(c.inID); c.slot != engine.NoSlot {
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
	copy(c.pend[c.pendOff+c.pendLen:], p)
	c.pendLen += len(p)
	return true
}

// flush writes the stashed bytes once the socket is writable again.
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
		}
		if c.pendLen == 0 {
			c.release()
		}
		c.acknowledge(c.h.w.SupplyTraceID())
	}
	if c.pendLen == 0 && c.state&inClosing != 0 {
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
// response and the http client's request).
func (c *conn) acknowledge(traceID int64) {
	if c.state&inClosed != 0 {
		return
	}
	ack := c.in.Seq - int64(c.pendLen)
	if !c.in.WindowDue(ack, c.in.Max, c.in.Pad) {
		return
	}
	c.in.Ack = ack
	c.doWindow(traceID)
}

func (c *conn) onAppFlush(f *frame.Flush) {
	if err := c.in.OnFrame(f.Sequence() + int64(max(f.Reserved(), 0))); err != nil {
		c.fail()
		return
	}
	c.acknowledge(f.TraceID())
}

// onAppEnd shuts the socket's sending side down once every byte is
// written: the peer reads its end of stream after the last byte.
func (c *conn) onAppEnd(e *frame.End) {
	c.state |= inClosing
	if c.pendLen == 0 && c.state&connecting == 0 && c.fd >= 0 {
		c.shutdownWrite()
	}
}

func (c *conn) shutdownWrite() {
	c.state = c.state&^inClosing | inClosed
	c.release()
	if err := unix.Shutdown(c.fd, unix.SHUT_WR); err != nil {
		c.onNetError(err)
		return
	}
	c.closeIfDone()
}

func (c *conn) onAppWindow(w *frame.Window) {
	if c.state&outClosed != 0 {
		return
	}
	if err := c.out.OnWindow(w); err != nil || w.Padding() < 0 {
		c.fail()
		return
	}
	c.readNet()
}

// closeIfDone closes the socket once both directions have closed in
// order.
func (c *conn) closeIfDone() {
	if c.state&(outClosed|inClosed) == outClosed|inClosed {
		c.closeSocket(false)
	}
}

// fail tears the connection down: every direction of the stream still
// open is closed abortively (ABORT what the binding sends, RESET what it
// receives) and the socket is reset, with SO_LINGER 0, so that the peer
// sees RST rather than an orderly end. A client whose reply has not
// begun sends only the RESET, as a refused stream does.
func (c *conn) fail() {
	traceID := c.h.w.SupplyTraceID()
	if c.state&(outOpened|outClosed) == outOpened {
		c.doAbort(traceID)
	}
	c.state |= outClosed
	// A server's stream exists once its BEGIN went; a client's is the
	// application's.
	if c.state&inClosed == 0 && (!c.server || c.state&outOpened != 0) {
		c.doReset(traceID)
	}
	c.pending &^= pendBegin | pendWindow
	c.state = c.state&^(inClosing|connecting) | inClosed
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
}

// doEnd ends the out direction.
func (c *conn) doEnd(traceID int64) {
	if c.state&(outOpened|outClosed) != outOpened {
		return
	}
	c.state |= outClosed
	c.sendEnd(traceID)
}

func (c *conn) sendEnd(traceID int64) {
	h := c.h
	buf := h.w.WriteBuffer()
	n, err := h.endB.Wrap(buf, 0, len(buf)).
		OriginID(c.originID).RoutedID(c.routedID).StreamID(c.outID).
		Sequence(c.out.Seq).Acknowledge(c.out.Ack).Maximum(c.out.Max).
		TraceID(traceID).
		BuildLimit()
	if err == nil {
		err = h.w.Send(frame.FrameEnd, buf[:n])
	}
	if c.deferred(pendEnd, err) != nil {
		c.state &^= outClosed
		c.fail()
	}
}

func (c *conn) doAbort(traceID int64) {
	h := c.h
	buf := h.w.WriteBuffer()
	n, err := h.abortB.Wrap(buf, 0, len(buf)).
		OriginID(c.originID).RoutedID(c.routedID).StreamID(c.outID).
		Sequence(c.out.Seq).Acknowledge(c.out.Ack).Maximum(c.out.Max).
		TraceID(traceID).
		BuildLimit()
	if err == nil {
		err = h.w.Send(frame.FrameAbort, buf[:n])
	}
	if err = c.deferred(pendAbort, err); err != nil {
		h.w.Logger().Warn("tcp: abort not sent", "binding", h.cfg.Name, "stream", c.outID, "err", err)
	}
}

func (c *conn) doReset(traceID int64) {
	h := c.h
	buf := h.w.WriteBuffer()
	n, err := h.resetB.Wrap(buf, 0, len(buf)).
		OriginID(c.originID).RoutedID(c.routedID).StreamID(c.inID).
		Sequence(c.in.Seq).Acknowledge(c.in.Ack).Maximum(c.in.Max).
		TraceID(traceID).
		BuildLimit()
	if err == nil {
		err = h.w.Send(frame.FrameReset, buf[:n])
	}
	if err = c.deferred(pendReset, err); err != nil {
		h.w.Logger().Warn("tcp: reset not sent", "binding", h.cfg.Name, "stream", c.inID, "err", err)
	}
}

// doWindow tells the application the in direction's credit.
func (c *conn) doWindow(traceID int64) {
	if c.state&inClosed != 0 {
		c.pending &^= pendWindow
		return
	}
	h := c.h
	buf := h.w.WriteBuffer()
	n, err := h.windowB.Wrap(buf, 0, len(buf)).
		OriginID(c.originID).RoutedID(c.routedID).StreamID(c.inID).
		Sequence(c.in.Seq).Acknowledge(c.in.Ack).Maximum(c.in.Max).
		TraceID(traceID).
		BudgetID(0).Padding(0).Minimum(0).Capabilities(0).
		BuildLimit()
	if err == nil {
		err = h.w.Send(frame.FrameWindow, buf[:n])
	}
	if c.deferred(pendWindow, err) != nil {
		c.fail()
	}
}

// doBegin begins the out direction: a server opens its stream to the exit
// with it, a client begins its reply and then opens the application's
// window. The BEGIN carries the connection's addresses.
func (c *conn) doBegin() {
	h := c.h
	traceID := h.w.SupplyTraceID()
	begin, err := c.buildBegin(traceID, c.src, c.dst)
	if err == nil {
		if c.server {
			err = h.w.NewStream(begin, c.onAppFn)
		} else {
			err = h.w.Send(frame.FrameBegin, begin)
		}
	}
	if err = c.deferred(pendBegin, err); err != nil {
		h.w.Logger().Warn("tcp: stream not opened", "binding", h.cfg.Name, "err", err)
		c.fail()
		return
	}
	if c.pending&pendBegin != 0 {
		return
	}
	c.state |= outOpened
	if !c.server {
		c.grant(traceID)
		if c.state&inClosing != 0 && c.fd >= 0 {
			c.shutdownWrite()
		}
	}
}

// buildBegin writes the BEGIN of the out direction into the write buffer,
// its extension a ProxyBeginEx with the connection's addresses, src the
// side that opened the connection and dst the side that accepted it.
func (c *conn) buildBegin(traceID int64, src, dst netip.AddrPort) ([]byte, error) {
	h := c.h
	buf := h.w.WriteBuffer()
	b := h.beginB.Wrap(buf, 0, len(buf)).
		OriginID(c.originID).RoutedID(c.routedID).StreamID(c.outID).
		Sequence(c.out.Seq).Acknowledge(c.out.Ack).Maximum(c.out.Max).
		TraceID(traceID).
		Affinity(0).RedirectedID(0)
	off, limit, ok := b.ExtensionSlot()
	if ok {
		var sb, db [64]byte
		h.proxyB.Wrap(buf, off, limit).TypeID(h.proxyTypeID).
			Address().Inet().Protocol(proxy.ProxyAddressProtocolStream).
			SourceBytes(src.Addr().Unmap().AppendTo(sb[:0])).
			DestinationBytes(dst.Addr().Unmap().AppendTo(db[:0])).
			SourcePort(src.Port()).DestinationPort(dst.Port())
		end, err := h.proxyB.BuildLimit()
		if err != nil {
			b.Fail(err)
		} else {
			b.ExtensionEnd(end)
		}
	}
	n, err := b.BuildLimit()
	if err != nil {
		return nil, err
	}
	return buf[:n], nil
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
