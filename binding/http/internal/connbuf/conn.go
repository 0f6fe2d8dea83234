package connbuf

import (
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/frame"
)

// Owner is the connection a [Conn] serves: it says when the connection is
// over, after which Conn sends nothing, and how it fails when a slot, a
// WINDOW or a DATA cannot be had.
type Owner interface {
	// Over reports whether the connection is closed and its bytes given
	// back.
	Over() bool
	// Fail tears down what a failed send or grant leaves unable to go
	// on: the connection, or the exchange it carries.
	Fail()
}

// Conn is the network side of an HTTP/1.1 connection, which the server
// and client kinds share: its stream, the bytes it holds between frames,
// and the grants and sends that fail the same way on both sides. Each
// kind's connection embeds one and is its Owner.
type Conn struct {
	engine.Stream
	Inbox  Inbox  // bytes received and not yet processed
	Outbox Outbox // bytes to send that the window does not yet admit
	owner  Owner
}

// Init readies c's buffers to take slots from pool, for owner.
func (c *Conn) Init(pool *engine.BufferPool, owner Owner) {
	c.Inbox.Init(pool)
	c.Outbox.Init(pool)
	c.owner = owner
}

// Input returns the bytes waiting to be processed (Inbox.Bytes). They
// stay where they are until the next DATA, so views of a parsed head
// remain valid while its message is handled.
func (c *Conn) Input() []byte { return c.Inbox.Bytes() }

// Settle ends the handling of a DATA, keeping what is left of it, and
// offers the sender the room the rest frees (Inbox.Settle); the owner
// fails when that cannot be done. An owner over does nothing.
func (c *Conn) Settle() {
	if !c.owner.Over() && !c.Inbox.Settle(&c.Stream) {
		c.owner.Fail()
	}
}

// Grant offers the sender as much window as the inbox has room for
// (Inbox.Offer); the owner fails when the WINDOW cannot go. An owner
// over does nothing.
func (c *Conn) Grant() {
	if !c.owner.Over() && c.Inbox.Offer(&c.Stream) != nil {
		c.owner.Fail()
	}
}

// Send sends p, which the window has room for, as one DATA. It reports
// false when the DATA could not go, and the owner has failed.
func (c *Conn) Send(p []byte) bool {
	if c.Data(frame.FlagsDataMessage, p, nil) != nil {
		c.owner.Fail()
		return false
	}
	return true
}

// Release gives both buffers' slots back: the connection is closed.
func (c *Conn) Release() {
	c.Inbox.Drop()
	c.Outbox.Drop()
}
