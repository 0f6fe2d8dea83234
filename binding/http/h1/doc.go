// Package h1 is Sluice's HTTP/1.1 codec: a zero-allocation parser for
// request and response heads, an incremental decoder for chunked bodies,
// and encoders for heads and chunks. The http binding's server and client
// (binding/http/server and binding/http/client) sit on it; it knows
// nothing of streams, frames or sockets, only bytes as they arrive from
// TCP, in pieces and possibly many pipelined messages to a buffer.
//
// # Heads
//
// [ParseRequestHead] and [ParseResponseHead] parse the head at the start
// of a buffer into a [RequestHead] or [ResponseHead] whose fields are
// views into that buffer, valid while it is unchanged. They return the
// head's length n, so buf[n:] starts the body or the next message. The
// caller keeps one head value per connection, its Headers made with
// enough capacity for the field count it expects; parsing then allocates
// nothing. A head with more fields than that (up to [Limits.MaxHeaders])
// grows Headers by append once, and the larger array is reused after.
//
// While the buffer holds part of a valid head, they return
// [ErrIncomplete] and n == 0: read more, append, and parse the whole
// buffer again (a head is at most [Limits.MaxHeaderBytes], so reparsing
// costs little and keeps no state). As soon as a head is certain to be
// invalid or too large — a bad byte in the method, a target beyond
// [Limits.MaxTarget] before its line ends, more than
// [Limits.MaxHeaderBytes] bytes with no end in sight, a field beyond
// [Limits.MaxHeaders] — they return an [*Error] instead, whose Status is
// the response a server sends before closing the connection (see
// [AppendErrorResponse]).
//
// The grammar is RFC 9112's, read strictly where a lenient reading
// lets a gateway and an origin see different messages (RFC 9112 §11.2):
// single SP separators in the request line, no whitespace before a
// field's colon, no obs-fold, no control bytes in values, Content-Length
// fields that agree, Transfer-Encoding only as a single final chunked and
// never with Content-Length or in HTTP/1.0, exactly one Host in HTTP/1.1.
// Leniency is kept where RFC 9112 allows it and common servers practise
// it: a bare LF ends a head line as CRLF does (§2.2; net/http and nginx
// accept it), up to four empty lines before a request line are skipped
// (§2.2; net/http's server skips them after a POST), and obs-text is
// accepted in targets and values. Body framing per §6.3 is the caller's,
// since it depends on the request method; the heads report ContentLength,
// Chunked and KeepAlive to decide it.
//
// The tests use net/http's ReadRequest as an oracle: what h1 accepts, it
// accepts and reads the same, with two exceptions. h1 accepts several
// Content-Length values that agree numerically ("5" and "005", or the
// list "5, 5"), as RFC 9110 §8.6 allows, where net/http wants textually
// identical fields; and it leaves the Trailer field alone, where net/http
// rejects a chunked request that announces Content-Length,
// Transfer-Encoding or Trailer as trailers. Conversely h1 rejects, among
// others, obs-fold, Transfer-Encoding in HTTP/1.0 or beside
// Content-Length, invalid Host values, targets in the wrong form for
// their method, and versions other than HTTP/1.0 and HTTP/1.1, all of
// which net/http's ReadRequest accepts.
//
// # Chunked bodies
//
// A [ChunkedDecoder] turns a chunked body into data views, whatever the
// split of its input, keeping its partial state between calls. Every line
// of chunked framing must end in CRLF. Chunk extensions are checked and
// skipped; trailer fields are checked and dropped.
//
// # Encoding
//
// [AppendStatusLine], [AppendRequestLine], [AppendHeader],
// [AppendContentLength], [AppendHeadEnd], [AppendChunkHeader],
// [AppendChunkEnd], [AppendLastChunk] and [AppendErrorResponse] append
// wire bytes to a buffer, allocating only when it lacks room. They escape
// or replace what the caller passes rather than emit a byte that would end
// a line early.
//
// # Usage
//
//	var req h1.RequestHead
//	req.Headers = make([]h1.Header, 0, 32)
//	n, err := h1.ParseRequestHead(in, &req, h1.DefaultLimits())
//	var perr *h1.Error
//	switch {
//	case errors.Is(err, h1.ErrIncomplete):
//		// read more into in and call again
//	case errors.As(err, &perr):
//		out = h1.AppendErrorResponse(out, perr.Status, perr.Reason)
//		// write out, then close
//	default:
//		in = in[n:]
//		if req.Chunked {
//			data, used, done, err := dec.Decode(in)
//			// forward data, in = in[used:], until done
//		}
//	}
//
//	out = h1.AppendStatusLine(out[:0], 1, 200)
//	out = h1.AppendHeader(out, []byte("Content-Type"), []byte("application/json"))
//	out = h1.AppendContentLength(out, int64(len(body)))
//	out = h1.AppendHeadEnd(out)
package h1
