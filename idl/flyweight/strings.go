package flyweight

// Width is the size of a string's length prefix: W8, W16 or W32.
type Width interface {
	W8 | W16 | W32
	Size() int
}

// W8 marks a string8: an int8 length prefix.
type W8 struct{}

// W16 marks a string16: an int16 length prefix.
type W16 struct{}

// W32 marks a string32: an int32 length prefix.
type W32 struct{}

func (W8) Size() int  { return 1 }
func (W16) Size() int { return 2 }
func (W32) Size() int { return 4 }

// GetLen decodes a signed length prefix of width bytes at b[0:]. -1 means null.
func GetLen[O Order](b []byte, width int) int {
	var o O
	switch width {
	case 1:
		return int(int8(b[0]))
	case 2:
		return int(int16(o.Uint16(b)))
	}
	return int(int32(o.Uint32(b)))
}

// PutLen encodes a signed length prefix of width bytes at b[0:].
func PutLen[O Order](b []byte, width, n int) {
	var o O
	switch width {
	case 1:
		b[0] = byte(int8(n))
	case 2:
		o.PutUint16(b, uint16(int16(n)))
	default:
		o.PutUint32(b, uint32(int32(n)))
	}
}

// MaxLen returns the largest length a prefix of width bytes can hold.
func MaxLen(width int) int {
	switch width {
	case 1:
		return 1<<7 - 1
	case 2:
		return 1<<15 - 1
	}
	return 1<<31 - 1
}

// String is the view of a string8/16/32 array item.
type String[W Width, O Order] struct {
	buf []byte
	off int
	n   int // -1 for null
}

// Wrap views the string at buf[off:limit].
func (s *String[W, O]) Wrap(buf []byte, off, limit int) error {
	var w W
	if off < 0 || limit > len(buf) || limit-off < w.Size() {
		return ErrShort
	}
	n := GetLen[O](buf[off:], w.Size())
	if n < -1 {
		return ErrLength
	}
	if n > limit-off-w.Size() {
		return ErrShort
	}
	s.buf, s.off, s.n = buf, off, n
	return nil
}

// Limit returns the offset after the string.
func (s *String[W, O]) Limit() int {
	var w W
	return s.off + w.Size() + max(s.n, 0)
}

// IsNull reports whether the length was -1.
func (s *String[W, O]) IsNull() bool { return s.n < 0 }

// Bytes returns the string's bytes, nil when null. The slice aliases the
// wrapped buffer: it is valid until that buffer is reused; do not retain it.
func (s *String[W, O]) Bytes() []byte {
	if s.n < 0 {
		return nil
	}
	var w W
	p := s.off + w.Size()
	return s.buf[p : p+s.n : p+s.n]
}

// String copies the string ("" when null).
func (s *String[W, O]) String() string { return string(s.Bytes()) }

// StringBuilder writes one string array item.
type StringBuilder[W Width, O Order] struct {
	buf      []byte
	off, max int
	end      int
	err      error
}

// Wrap positions the builder at buf[off:maxLimit].
func (b *StringBuilder[W, O]) Wrap(buf []byte, off, maxLimit int) *StringBuilder[W, O] {
	*b = StringBuilder[W, O]{buf: buf, off: off, max: maxLimit, end: -1}
	if off < 0 || maxLimit > len(buf) || off > maxLimit {
		b.err = ErrBounds
	}
	return b
}

// Set writes s.
func (b *StringBuilder[W, O]) Set(s string) *StringBuilder[W, O] {
	b.put(len(s))
	if b.err == nil {
		var w W
		copy(b.buf[b.off+w.Size():], s)
	}
	return b
}

// SetBytes writes v.
func (b *StringBuilder[W, O]) SetBytes(v []byte) *StringBuilder[W, O] {
	b.put(len(v))
	if b.err == nil {
		var w W
		copy(b.buf[b.off+w.Size():], v)
	}
	return b
}

// SetNull writes the null string (length -1).
func (b *StringBuilder[W, O]) SetNull() *StringBuilder[W, O] {
	b.put(-1)
	return b
}

func (b *StringBuilder[W, O]) put(n int) {
	if b.err != nil {
		return
	}
	var w W
	if n > MaxLen(w.Size()) {
		b.err = ErrRange
		return
	}
	if b.max-b.off < w.Size()+max(n, 0) {
		b.err = ErrOverflow
		return
	}
	PutLen[O](b.buf[b.off:], w.Size(), n)
	b.end = b.off + w.Size() + max(n, 0)
}

// BuildLimit returns the offset after the string.
func (b *StringBuilder[W, O]) BuildLimit() (int, error) {
	if b.err == nil && b.end < 0 {
		b.err = ErrMissing
	}
	return b.end, b.err
}
