package server

import "github.com/sluicehq/sluice/engine"

// Drain lets each connection finish the request it is serving, then
// closes it, as Go's http.Server.Shutdown does: a connection waiting for
// a request, with none of it read, closes at once; a request under way is
// answered with Connection: close (or, when its head is out, the
// connection closes after it); a request whose head has begun to arrive
// is served the same way. A GET's event stream is not work in flight but
// a standing stream that would keep the connection open for ever: it
// ends now, cleanly, and its client reconnects elsewhere. A request whose
// client has closed its side is taken for abandoned and aborted, as Go's
// server cancels a request whose connection reads EOF: nothing would
// notice that client is gone until more of the response is written, and
// an event stream may write nothing for a long time.
func (h *server) Drain() {
	h.draining = true
	for c := h.conns; c != nil; {
		next := c.next
		c.drain()
		c = next
	}
}

// Drained reports whether every connection is closed.
func (h *server) Drained() bool { return h.conns == nil }

func (c *serverConn) drain() {
	x := &c.x
	switch c.state {
	case stateClosed, stateDraining:
	case stateHead:
		if len(c.Input()) > 0 {
			// Part of a request is here: it is answered, then the
			// connection closes (start keeps no keep-alive now).
			return
		}
		c.flags.Set(connLastResponse)
		c.state = stateDraining
		c.endReply()
	default:
		switch {
		case x.flags.Has(xStanding|xResponseBegun) && x.open():
			x.endStanding()
		case c.In.Closed():
			c.abortAll()
		default:
			c.flags.Set(connLastResponse)
		}
	}
}

// endStanding ends a standing event stream: the app's response stream is
// reset, as when its client goes, and the client gets the body's end,
// after which the connection closes.
func (x *exchange) endStanding() {
	c := x.c
	x.resetResponse()
	if x.framing == bodyChunked {
		tail := append(c.h.head[:0], "0\r\n\r\n"...)
		c.h.head = tail
		c.writeNet(tail)
	}
	c.flags.Set(connLastResponse)
	c.uncork()
	x.complete()
}

// link adds c to the server's open connections.
func (c *serverConn) link() {
	h := c.h
	c.next = h.conns
	if h.conns != nil {
		h.conns.prev = c
	}
	h.conns = c
}

// unlink removes c from the server's open connections.
func (c *serverConn) unlink() {
	h := c.h
	if c.prev != nil {
		c.prev.next = c.next
	} else if h.conns == c {
		h.conns = c.next
	}
	if c.next != nil {
		c.next.prev = c.prev
	}
	c.prev, c.next = nil, nil
}

var _ engine.Drainer = (*server)(nil)
