package flyweight

import (
	"encoding/binary"
	"unsafe"
)

// Order is a byte order usable as a type parameter: LE or BE.
type Order interface {
	LE | BE
	Uint16([]byte) uint16
	Uint32([]byte) uint32
	Uint64([]byte) uint64
	PutUint16([]byte, uint16)
	PutUint32([]byte, uint32)
	PutUint64([]byte, uint64)
}

// LE is little-endian byte order, the IDL's "native".
type LE struct{}

func (LE) Uint16(b []byte) uint16       { return binary.LittleEndian.Uint16(b) }
func (LE) Uint32(b []byte) uint32       { return binary.LittleEndian.Uint32(b) }
func (LE) Uint64(b []byte) uint64       { return binary.LittleEndian.Uint64(b) }
func (LE) PutUint16(b []byte, v uint16) { binary.LittleEndian.PutUint16(b, v) }
func (LE) PutUint32(b []byte, v uint32) { binary.LittleEndian.PutUint32(b, v) }
func (LE) PutUint64(b []byte, v uint64) { binary.LittleEndian.PutUint64(b, v) }

// BE is big-endian byte order, the IDL's "network".
type BE struct{}

func (BE) Uint16(b []byte) uint16       { return binary.BigEndian.Uint16(b) }
func (BE) Uint32(b []byte) uint32       { return binary.BigEndian.Uint32(b) }
func (BE) Uint64(b []byte) uint64       { return binary.BigEndian.Uint64(b) }
func (BE) PutUint16(b []byte, v uint16) { binary.BigEndian.PutUint16(b, v) }
func (BE) PutUint32(b []byte, v uint32) { binary.BigEndian.PutUint32(b, v) }
func (BE) PutUint64(b []byte, v uint64) { binary.BigEndian.PutUint64(b, v) }

// Int24 decodes a signed 24-bit integer.
func Int24(b []byte, bigEndian bool) int32 { return int32(Uint24(b, bigEndian)<<8) >> 8 }

// Uint24 decodes an unsigned 24-bit integer.
func Uint24(b []byte, bigEndian bool) uint32 {
	_ = b[2]
	if bigEndian {
		return uint32(b[0])<<16 | uint32(b[1])<<8 | uint32(b[2])
	}
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16
}

// PutUint24 encodes the low 24 bits of v.
func PutUint24(b []byte, v uint32, bigEndian bool) {
	_ = b[2]
	if bigEndian {
		b[0], b[1], b[2] = byte(v>>16), byte(v>>8), byte(v)
		return
	}
	b[0], b[1], b[2] = byte(v), byte(v>>8), byte(v>>16)
}

// Uvarint decodes an unsigned varint of at most maxLen bytes. n is the
// number of bytes read, or 0 when b ends inside the varint or it is longer
// than maxLen.
func Uvarint(b []byte, maxLen int) (v uint64, n int) {
	var shift uint
	for i := 0; i < len(b) && i < maxLen; i++ {
		c := b[i]
		v |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return v, i + 1
		}
		shift += 7
	}
	return 0, 0
}

// Varint32 decodes a zig-zag varint32 (protobuf sint32).
func Varint32(b []byte) (int32, int) {
	u, n := Uvarint(b, 5)
	if u > 1<<32-1 {
		return 0, 0
	}
	return int32(uint32(u)>>1) ^ -int32(uint32(u)&1), n
}

// Varint64 decodes a zig-zag varint64 (protobuf sint64).
func Varint64(b []byte) (int64, int) {
	u, n := Uvarint(b, 10)
	return int64(u>>1) ^ -int64(u&1), n
}

// Varuint32 decodes an unsigned varint32.
func Varuint32(b []byte) (uint32, int) {
	u, n := Uvarint(b, 5)
	if u > 1<<32-1 {
		return 0, 0
	}
	return uint32(u), n
}

// PutUvarint encodes v into b and returns the bytes written, or 0 when b is
// too short.
func PutUvarint(b []byte, v uint64) int {
	i := 0
	for v >= 0x80 {
		if i >= len(b) {
			return 0
		}
		b[i] = byte(v) | 0x80
		v >>= 7
		i++
	}
	if i >= len(b) {
		return 0
	}
	b[i] = byte(v)
	return i + 1
}

// PutVarint32 zig-zag encodes v.
func PutVarint32(b []byte, v int32) int { return PutUvarint(b, uint64(uint32(v<<1)^uint32(v>>31))) }

// PutVarint64 zig-zag encodes v.
func PutVarint64(b []byte, v int64) int { return PutUvarint(b, uint64(v<<1)^uint64(v>>63)) }

// Integer lists the fixed-width integer types that can be array items.
type Integer interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64
}

// Int is the view of one fixed-width integer array item.
type Int[T Integer, O Order] struct {
	buf []byte
	off int
}

func sizeOf[T Integer]() int {
	var v T
	return int(unsafe.Sizeof(v))
}

// Wrap views the integer at buf[off:].
func (x *Int[T, O]) Wrap(buf []byte, off, limit int) error {
	if off < 0 || limit > len(buf) || limit-off < sizeOf[T]() {
		return ErrShort
	}
	x.buf, x.off = buf, off
	return nil
}

// Limit returns the offset after the integer.
func (x *Int[T, O]) Limit() int { return x.off + sizeOf[T]() }

// Value decodes the integer.
func (x *Int[T, O]) Value() T {
	var o O
	b := x.buf[x.off:]
	switch sizeOf[T]() {
	case 1:
		return T(b[0])
	case 2:
		return T(o.Uint16(b))
	case 4:
		return T(o.Uint32(b))
	}
	return T(o.Uint64(b))
}

// IntBuilder writes one fixed-width integer array item.
type IntBuilder[T Integer, O Order] struct {
	buf      []byte
	off, max int
	set      bool
	err      error
}

// Wrap positions the builder at buf[off:maxLimit].
func (b *IntBuilder[T, O]) Wrap(buf []byte, off, maxLimit int) *IntBuilder[T, O] {
	*b = IntBuilder[T, O]{buf: buf, off: off, max: maxLimit}
	if off < 0 || maxLimit > len(buf) || off > maxLimit {
		b.err = ErrBounds
	}
	return b
}

// Set writes v.
func (b *IntBuilder[T, O]) Set(v T) *IntBuilder[T, O] {
	if b.err != nil {
		return b
	}
	n := sizeOf[T]()
	if b.max-b.off < n {
		b.err = ErrOverflow
		return b
	}
	var o O
	p := b.buf[b.off:]
	switch n {
	case 1:
		p[0] = byte(v)
	case 2:
		o.PutUint16(p, uint16(v))
	case 4:
		o.PutUint32(p, uint32(v))
	default:
		o.PutUint64(p, uint64(v))
	}
	b.set = true
	return b
}

// BuildLimit returns the offset after the item.
func (b *IntBuilder[T, O]) BuildLimit() (int, error) {
	if b.err == nil && !b.set {
		b.err = ErrMissing
	}
	return b.off + sizeOf[T](), b.err
}
