package flyweight

import (
	"encoding/binary"
	"errors"
	"iter"
)

// Sentinel errors. Wrap and Build report them inside an *Error that names the
// type and field.
var (
	// ErrBounds reports an offset or limit outside the buffer.
	ErrBounds = errors.New("flyweight: offset or limit out of bounds")
	// ErrShort reports a buffer that ends inside a field.
	ErrShort = errors.New("flyweight: buffer too short")
	// ErrLength reports a length or count field with an impossible value.
	ErrLength = errors.New("flyweight: invalid length")
	// ErrVarint reports a malformed or overlong varint.
	ErrVarint = errors.New("flyweight: malformed varint")
	// ErrKind reports a union kind that names no case.
	ErrKind = errors.New("flyweight: unknown union kind")
	// ErrOverflow reports a builder that ran out of room.
	ErrOverflow = errors.New("flyweight: builder out of room")
	// ErrMissing reports a builder field without default that was not set.
	ErrMissing = errors.New("flyweight: required field not set")
	// ErrOrder reports a builder field set after a later field.
	ErrOrder = errors.New("flyweight: field set out of order")
	// ErrRange reports a value that does not fit its encoding.
	ErrRange = errors.New("flyweight: value out of range")
	// ErrCase reports a union builder setter for a field that the selected
	// case does not have, or that ran with no case selected.
	ErrCase = errors.New("flyweight: the selected case has no such field")
)

// Error locates a sentinel error at a type and field.
type Error struct {
	Type  string
	Field string
	Err   error
}

// Error formats as "flyweight: Data.payload: buffer too short".
func (e *Error) Error() string {
	msg := e.Err.Error()
	const prefix = "flyweight: "
	if len(msg) > len(prefix) && msg[:len(prefix)] == prefix {
		msg = msg[len(prefix):]
	}
	if e.Field == "" {
		return prefix + e.Type + ": " + msg
	}
	return prefix + e.Type + "." + e.Field + ": " + msg
}

// Unwrap returns the sentinel.
func (e *Error) Unwrap() error { return e.Err }

// Wrapper is implemented by every generated reader view and by the
// primitive element views of this package.
type Wrapper[T any] interface {
	*T
	Wrap(buf []byte, off, limit int) error
	Limit() int
}

// Array is a view of an IDL array T[]: an int32 byte length of the items,
// an int32 count, then the items. The zero Array is empty.
type Array[T any, P Wrapper[T]] struct {
	buf   []byte
	off   int // first item
	limit int // one past the last item
	count int
}

// MakeArray returns a view of count items in buf[off:limit]. Generated
// readers call it after validating the items.
func MakeArray[T any, P Wrapper[T]](buf []byte, off, limit, count int) Array[T, P] {
	return Array[T, P]{buf: buf, off: off, limit: limit, count: count}
}

// Len returns the number of items.
func (a Array[T, P]) Len() int { return a.count }

// Bytes returns the encoded items, valid as long as the wrapped buffer is not
// reused; do not retain it past that.
func (a Array[T, P]) Bytes() []byte { return a.buf[a.off:a.limit] }

// All yields each item's index and a view of it. The view is reused for
// every item: copy it to keep it past the iteration step.
func (a Array[T, P]) All() iter.Seq2[int, *T] {
	return func(yield func(int, *T) bool) {
		var item T
		p := a.off
		for i := 0; i < a.count; i++ {
			if P(&item).Wrap(a.buf, p, a.limit) != nil {
				return
			}
			if !yield(i, &item) {
				return
			}
			p = P(&item).Limit()
		}
	}
}

// MaxEmptyItems bounds the count of an array whose items may encode to zero
// bytes, so that a hostile count cannot make validation loop for long.
const MaxEmptyItems = 1 << 16

// ArrayBounds checks the header of the array at buf[off:limit] (its byte
// length and count, against limit and minSize) and returns the offset of
// its first item, its end and its count; the caller then wraps each item,
// which must end exactly at end. Generated code does that with the item's
// concrete type, so the item it wraps stays on the stack (wrapped through
// a type parameter, the item escapes: one allocation per array).
func ArrayBounds(buf []byte, off, limit, minSize int, order binary.ByteOrder) (items, end, count int, err error) {
	if off < 0 || limit > len(buf) || limit-off < 8 {
		return 0, 0, 0, ErrShort
	}
	length := int(int32(order.Uint32(buf[off:])))
	count = int(int32(order.Uint32(buf[off+4:])))
	items = off + 8
	if length < 0 || count < 0 {
		return 0, 0, 0, ErrLength
	}
	if limit-items < length {
		return 0, 0, 0, ErrShort
	}
	if minSize > 0 && int64(count)*int64(minSize) > int64(length) || minSize == 0 && count > length+MaxEmptyItems {
		return 0, 0, 0, ErrLength
	}
	end = items + length
	return items, end, count, nil
}

// FieldAt names the field in which a buffer of avail bytes ends, given the
// end offset of each field in order. Generated readers call it to report a
// short buffer after checking a run of fixed-size fields at once.
func FieldAt(names []string, ends []int, avail int) string {
	for i, end := range ends {
		if avail < end && i < len(names) {
			return names[i]
		}
	}
	return ""
}

// Cursor walks an array's items in order without allocating, for hot
// paths: All's view lives in its iterator and escapes through the type
// parameter, an allocation per loop (and the iterator another). The
// caller keeps a view of the item's concrete type on its stack, wraps it
// at each item Peek gives, and moves on with Advance:
//
//	buf, off, limit, ok := c.Peek()
//	if !ok || hd.Wrap(buf, off, limit) != nil { break }
//	c.Advance(hd.Limit())
type Cursor struct {
	buf         []byte
	next, limit int
	left        int
}

// Cursor returns a cursor at the array's first item.
func (a Array[T, P]) Cursor() Cursor {
	return Cursor{buf: a.buf, next: a.off, limit: a.limit, left: a.count}
}

// Peek returns the bounds to wrap the next item at, and false after the
// last one.
func (c *Cursor) Peek() (buf []byte, off, limit int, ok bool) {
	return c.buf, c.next, c.limit, c.left > 0
}

// Advance moves past the item just wrapped, which ends at next (its
// view's Limit).
func (c *Cursor) Advance(next int) {
	c.next = next
	c.left--
}
