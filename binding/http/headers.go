package http

import "github.com/sluicehq/sluice/idl/flyweight"

// NextHeader wraps hd at c's next header and moves c past it; false after
// the last. With hd on the caller's stack, a loop over a frame's headers
// allocates nothing:
//
//	var hd HttpHeader
//	for c := ex.Headers().Cursor(); NextHeader(&c, &hd); {
//		...
//	}
func NextHeader(c *flyweight.Cursor, hd *HttpHeader) bool {
	buf, off, limit, ok := c.Peek()
	if !ok || !hd.TryWrap(buf, off, limit) {
		return false
	}
	c.Advance(hd.Limit())
	return true
}
