package flyweighttest

import "encoding/binary"

// Enc is a hand encoding of expected bytes, little-endian as the IDL files
// declare. Every method returns a new encoding and leaves its receiver as it
// was, so encodings that share a prefix never alias.
type Enc []byte

// Add appends raw bytes.
func (e Enc) Add(b ...byte) Enc { return append(e[:len(e):len(e)], b...) }

// U8 appends a uint8 (or int8, enum, union kind).
func (e Enc) U8(v uint8) Enc { return e.Add(v) }

// U16 appends a uint16.
func (e Enc) U16(v uint16) Enc { return e.Add(binary.LittleEndian.AppendUint16(nil, v)...) }

// I32 appends an int32.
func (e Enc) I32(v int32) Enc { return e.Add(binary.LittleEndian.AppendUint32(nil, uint32(v))...) }

// I64 appends an int64.
func (e Enc) I64(v int64) Enc { return e.Add(binary.LittleEndian.AppendUint64(nil, uint64(v))...) }

// Ext appends the core::stream::Extension prefix: compositeId, then typeId.
func (e Enc) Ext(compositeID int64, typeID int32) Enc { return e.I64(compositeID).I32(typeID) }

// Str16 appends a string16: an int16 length, then the bytes.
func (e Enc) Str16(s string) Enc { return e.U16(uint16(len(s))).Add([]byte(s)...) }

// Null16 appends the null string16: length -1.
func (e Enc) Null16() Enc { return e.U16(0xffff) }

// NStr8 appends a string8: an int8 length, -1 for null, then the bytes.
func (e Enc) NStr8(s NStr) Enc {
	if s.Null {
		return e.Add(0xff)
	}
	return e.Add(byte(len(s.S))).Add([]byte(s.S)...)
}

// NStr16 appends a string16 that may be null: [Enc.Str16] or [Enc.Null16].
func (e Enc) NStr16(s NStr) Enc {
	if s.Null {
		return e.Null16()
	}
	return e.Str16(s.S)
}

// Array appends an IDL array T[]: the int32 byte length of the items, the
// int32 count, then the items.
func (e Enc) Array(items ...Enc) Enc {
	var body Enc
	for _, item := range items {
		body = body.Add(item...)
	}
	return e.I32(int32(len(body))).I32(int32(len(items))).Add(body...)
}
