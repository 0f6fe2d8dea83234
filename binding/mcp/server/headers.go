package server

import (
	"bytes"
	"encoding/binary"
	"errors"

	"github.com/sluicehq/sluice/binding/http/h1"
)

// headerIter walks the headers of an HttpBeginEx in place. It reads the
// same encoding as the generated httpb.HttpBeginEx (compositeId, typeId,
// then the array: int32 byte length, int32 count, each HttpHeader a
// string8 name and a string16 value, little-endian), checking every
// length against the extension, but without flyweight.Array: its generic
// validation and All iterator each allocate on every call (the item they
// wrap escapes through the type parameter), and this is the hot path of
// every request.
type headerIter struct {
	buf    []byte
	p, end int
	left   int
}

// httpHeadersOffset is where the headers array starts: after compositeId
// (int64) and typeId (int32).
const httpHeadersOffset = 12

// httpHeaders returns an iterator over ext's headers, or false when ext is
// not an HttpBeginEx of typeID.
func httpHeaders(ext []byte, typeID int32) (headerIter, bool) {
	const items = httpHeadersOffset + 8
	if len(ext) < items || int32(binary.LittleEndian.Uint32(ext[8:])) != typeID {
		return headerIter{}, false
	}
	length := int(int32(binary.LittleEndian.Uint32(ext[httpHeadersOffset:])))
	count := int(int32(binary.LittleEndian.Uint32(ext[httpHeadersOffset+4:])))
	if length < 0 || count < 0 || length > len(ext)-items {
		return headerIter{}, false
	}
	return headerIter{buf: ext, p: items, end: items + length, left: count}, true
}

// next returns the next header; ok is false after the last one, or at a
// malformed one. A null name or value (length -1) reads as empty.
func (it *headerIter) next() (name, value []byte, ok bool) {
	if it.left <= 0 {
		return nil, nil, false
	}
	b, p := it.buf[:it.end], it.p
	if p >= len(b) {
		it.left = 0
		return nil, nil, false
	}
	n := int(int8(b[p]))
	p++
	if n < -1 || n > len(b)-p {
		it.left = 0
		return nil, nil, false
	}
	n = max(n, 0)
	name, p = b[p:p+n], p+n
	if len(b)-p < 2 {
		it.left = 0
		return nil, nil, false
	}
	m := int(int16(binary.LittleEndian.Uint16(b[p:])))
	p += 2
	if m < -1 || m > len(b)-p {
		it.left = 0
		return nil, nil, false
	}
	m = max(m, 0)
	value, it.p = b[p:p+m], p+m
	it.left--
	return name, value, true
}

// headerWriter writes an HttpBeginEx in place, in the encoding
// headerIter reads: compositeId 0, typeId, then the headers array, its
// byte length and count first. It is the generated
// httpb.HttpBeginExBuilder's encoding, for the head of every response,
// without its generic array builder, which costs several times as much
// per header. A header that does not fit, or whose name or value is
// longer than its length prefix allows, fails the writer.
type headerWriter struct {
	buf   []byte // up to the extension's limit
	off   int    // the extension's start
	p     int
	count int
	ok    bool
}

// headerItems is where the headers array's first item starts.
const headerItems = httpHeadersOffset + 8

// errHeadTooLarge reports a response head the frame cannot hold.
var errHeadTooLarge = errors.New("mcp server: response head too large")

// newHeaderWriter starts an HttpBeginEx at buf[off], writing no further
// than max, as a frame builder's ExtensionBuffer returns them; when ok is
// false (the frame builder failed) the writer fails.
func newHeaderWriter(buf []byte, off, max int, ok bool) headerWriter {
	return headerWriter{buf: buf[:max], off: off, p: off + headerItems, ok: ok && off >= 0 && max-off >= headerItems}
}

// item writes a header's name and the length of its value, n bytes, and
// returns where the value goes, or -1 when the header does not fit.
func (w *headerWriter) item(name string, n int) int {
	if !w.ok || len(name) > 127 || n > 32767 || len(w.buf)-w.p < 3+len(name)+n {
		w.ok = false
		return -1
	}
	w.buf[w.p] = byte(len(name))
	p := w.p + 1 + copy(w.buf[w.p+1:], name)
	binary.LittleEndian.PutUint16(w.buf[p:], uint16(n))
	w.p = p + 2 + n
	w.count++
	return p + 2
}

// add writes a header.
func (w *headerWriter) add(name, value string) {
	if at := w.item(name, len(value)); at >= 0 {
		copy(w.buf[at:], value)
	}
}

// addBytes writes a header whose value is bytes.
func (w *headerWriter) addBytes(name string, value []byte) {
	if at := w.item(name, len(value)); at >= 0 {
		copy(w.buf[at:], value)
	}
}

// finish writes the extension's prefix, compositeId 0 and typeID, and the
// array's length and count, and returns the extension's limit, or an error
// when a header did not fit.
func (w *headerWriter) finish(typeID int32) (int, error) {
	if !w.ok {
		return 0, errHeadTooLarge
	}
	binary.LittleEndian.PutUint64(w.buf[w.off:], 0)
	binary.LittleEndian.PutUint32(w.buf[w.off+8:], uint32(typeID))
	binary.LittleEndian.PutUint32(w.buf[w.off+httpHeadersOffset:], uint32(w.p-w.off-headerItems))
	binary.LittleEndian.PutUint32(w.buf[w.off+httpHeadersOffset+4:], uint32(w.count))
	return w.p, nil
}

// sdkAccept is the Accept value the MCP SDKs send (TypeScript, Go,
// Python), which scanAccept compares whole before it parses.
const sdkAccept = "application/json, text/event-stream"

// scanAccept reads the media ranges of an Accept field value (RFC 9110
// §12.5.1): whether it lists application/json, text/event-stream and
// */*, ASCII case-insensitively, ignoring parameters such as q. A range
// that merely starts with one of them (application/jsonl) is another
// type.
func scanAccept(v []byte) (json, sse, any bool) {
	if string(v) == sdkAccept {
		return true, true, false
	}
	for i := 0; i <= len(v); {
		var r []byte
		r, i = h1.NextElement(v, i)
		if p := bytes.IndexByte(r, ';'); p >= 0 {
			r = bytes.TrimRight(r[:p], " \t")
		}
		switch len(r) {
		case len("application/json"):
			json = json || h1.EqualFold(r, "application/json")
		case len("text/event-stream"):
			sse = sse || h1.EqualFold(r, "text/event-stream")
		case len("*/*"):
			any = any || string(r) == "*/*"
		}
	}
	return json, sse, any
}
