// Package connbuf holds the bytes an HTTP/1.1 connection keeps between
// frames: those it has received and not yet processed ([Inbox]), and
// those it has to send and the window does not yet admit ([Outbox]).
//
// [Conn] is the network side of a connection built on them, which both
// kinds embed: its stream, its Inbox and Outbox, and the grants and sends
// whose failure its [Owner] handles.
//
// Both boxes live in the worker's [engine.BufferPool]: a slot is taken only
// when bytes must outlast the frame that brought them, and given back as
// soon as it is empty, so that an idle connection holds none. The http
// server and client kinds each keep one of each per connection, on the
// worker's thread.
//
//	var in connbuf.Inbox
//	in.Init(w.BufferPool())
//	if !in.Receive(payload) { ... } // beyond the window granted
//	n := parse(in.Bytes())
//	in.Consume(n)
//	if !in.Keep(streamID) { ... } // no slot for what is left
package connbuf
