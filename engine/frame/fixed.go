package frame

import (
	"encoding/binary"
	"math"
)

// Writers of the three frames a stream sends most, in their common shape:
// WINDOW, END and DATA with their extension, if any, given as bytes. Each
// checks the buffer once and stores every field at its offset, where the
// generated builders keep per-field state so that fields can be set in
// any order and extensions built in place, bookkeeping that costs several
// times the stores on the engine's hottest path. TestFixedWriters pins
// every writer to its builder's bytes.

// Header is the common header of every frame (idl/core.idl).
type Header struct {
	OriginID, RoutedID, StreamID int64
	Sequence, Acknowledge        int64
	Maximum                      int32
	Timestamp                    int64
	TraceID, Authorization       int64
}

// EndFixedSize is the size of an END frame before its extension: the
// header, budgetId and reserved.
const EndFixedSize = HeaderSize + 8 + 4

func (h *Header) put(b []byte) {
	_ = b[HeaderSize-1]
	le := binary.LittleEndian
	le.PutUint64(b[0:], uint64(h.OriginID))
	le.PutUint64(b[8:], uint64(h.RoutedID))
	le.PutUint64(b[16:], uint64(h.StreamID))
	le.PutUint64(b[24:], uint64(h.Sequence))
	le.PutUint64(b[32:], uint64(h.Acknowledge))
	le.PutUint32(b[40:], uint32(h.Maximum))
	le.PutUint64(b[44:], uint64(h.Timestamp))
	le.PutUint64(b[52:], uint64(h.TraceID))
	le.PutUint64(b[60:], uint64(h.Authorization))
}

// PutWindow writes a WINDOW frame to b and returns its size, or 0 when b
// is too short for it.
func PutWindow(b []byte, h *Header, budgetID int64, padding, minimum int32, capabilities uint8) int {
	if len(b) < WindowSize {
		return 0
	}
	h.put(b)
	le := binary.LittleEndian
	le.PutUint64(b[HeaderSize:], uint64(budgetID))
	le.PutUint32(b[HeaderSize+8:], uint32(padding))
	le.PutUint32(b[HeaderSize+12:], uint32(minimum))
	b[HeaderSize+16] = capabilities
	return WindowSize
}

// PutEnd writes an END frame, with budgetId and reserved 0 and extension
// ext, to b and returns its size, or 0 when b is too short for it.
func PutEnd(b []byte, h *Header, ext []byte) int {
	n := EndFixedSize + len(ext)
	if len(b) < n {
		return 0
	}
	h.put(b)
	le := binary.LittleEndian
	le.PutUint64(b[HeaderSize:], 0)
	le.PutUint32(b[HeaderSize+8:], 0)
	copy(b[EndFixedSize:n], ext)
	return n
}

// PutData writes a DATA frame to b, its payload null (length -1) when
// payload is nil, and returns its size, or 0 when b is too short for it
// or the payload is longer than an int32 counts.
func PutData(b []byte, h *Header, flags Flags, budgetID int64, reserved int32, payload, ext []byte) int {
	n := DataPayloadOffset + len(payload) + len(ext)
	if len(b) < n || len(payload) > math.MaxInt32 {
		return 0
	}
	h.put(b)
	le := binary.LittleEndian
	b[HeaderSize] = uint8(flags)
	le.PutUint64(b[HeaderSize+1:], uint64(budgetID))
	le.PutUint32(b[HeaderSize+9:], uint32(reserved))
	length := int32(len(payload))
	if payload == nil {
		length = -1
	}
	le.PutUint32(b[HeaderSize+13:], uint32(length))
	copy(b[DataPayloadOffset:], payload)
	copy(b[DataPayloadOffset+len(payload):n], ext)
	return n
}
