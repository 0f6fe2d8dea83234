package server

import (
	"bytes"
	"encoding/binary"

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
// malformed one.
func (it *headerIter) next() (name, value []byte, ok bool) {
	if it.left <= 0 {
		return nil, nil, false
	}
	b, p := it.buf, it.p
	if p >= it.end {
		it.left = 0
		return nil, nil, false
	}
	n := int(int8(b[p]))
	if n < -1 || max(n, 0) > it.end-p-1 {
		it.left = 0
		return nil, nil, false
	}
	name = b[p+1 : p+1+max(n, 0)]
	p += 1 + max(n, 0)
	if it.end-p < 2 {
		it.left = 0
		return nil, nil, false
	}
	m := int(int16(binary.LittleEndian.Uint16(b[p:])))
	if m < -1 || max(m, 0) > it.end-p-2 {
		it.left = 0
		return nil, nil, false
	}
	value = b[p+2 : p+2+max(m, 0)]
	it.p = p + 2 + max(m, 0)
	it.left--
	return name, value, true
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
			json = json || asciiEqualFold(r, []byte("application/json"))
		case len("text/event-stream"):
			sse = sse || asciiEqualFold(r, []byte("text/event-stream"))
		case len("*/*"):
			any = any || string(r) == "*/*"
		}
	}
	return json, sse, any
}
