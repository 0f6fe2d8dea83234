package flyweight

// ItemBuilder is implemented by every generated builder and by the
// primitive item builders of this package.
type ItemBuilder[B any] interface {
	*B
	Wrap(buf []byte, off, maxLimit int) *B
	BuildLimit() (int, error)
}

// ArrayBuilder writes an IDL array T[]: it reserves the int32 length and
// count, hands out one item builder per Item call, and fills in the length
// and count when finished.
type ArrayBuilder[B any, P ItemBuilder[B], O Order] struct {
	buf   []byte
	start int // the length field
	p     int // end of the last finished item
	max   int
	count int
	open  bool
	err   error
	item  B
}

// Init positions the builder at buf[off:maxLimit] and reserves the header.
// Generated builders call it; users get an initialised ArrayBuilder from the
// field's setter.
func (a *ArrayBuilder[B, P, O]) Init(buf []byte, off, maxLimit int) *ArrayBuilder[B, P, O] {
	a.buf, a.start, a.max, a.count, a.open, a.err = buf, off, maxLimit, 0, false, nil
	a.p = off + 8
	if off < 0 || maxLimit > len(buf) || off > maxLimit {
		a.err = ErrBounds
	} else if maxLimit-off < 8 {
		a.err = ErrOverflow
	}
	return a
}

// Fail makes the builder refuse all further items with err.
func (a *ArrayBuilder[B, P, O]) Fail(err error) *ArrayBuilder[B, P, O] {
	if a.err == nil {
		a.err = err
	}
	return a
}

func (a *ArrayBuilder[B, P, O]) close() {
	if !a.open {
		return
	}
	a.open = false
	limit, err := P(&a.item).BuildLimit()
	if err != nil {
		a.Fail(err)
		return
	}
	a.p = limit
	a.count++
}

// Item finishes the previous item and returns the builder of the next one.
// The returned builder is reused for every item.
func (a *ArrayBuilder[B, P, O]) Item() *B {
	a.close()
	if a.err != nil {
		// An item builder over an empty window fails on its first setter,
		// so a broken chain stays harmless.
		P(&a.item).Wrap(a.buf[:0], 0, 0)
		return &a.item
	}
	a.open = true
	return P(&a.item).Wrap(a.buf, a.p, a.max)
}

// Len returns the number of items finished so far, plus the open one.
func (a *ArrayBuilder[B, P, O]) Len() int {
	if a.open {
		return a.count + 1
	}
	return a.count
}

// BuildLimit finishes the last item, writes the length and count, and
// returns the offset after the array.
func (a *ArrayBuilder[B, P, O]) BuildLimit() (int, error) {
	a.close()
	if a.err != nil {
		return a.p, a.err
	}
	var o O
	o.PutUint32(a.buf[a.start:], uint32(int32(a.p-a.start-8)))
	o.PutUint32(a.buf[a.start+4:], uint32(int32(a.count)))
	return a.p, nil
}

// PutStr writes a string with a width-byte signed length prefix at buf[p:]
// and returns the offset after it. null writes length -1 and ignores s.
func PutStr[S ~string | ~[]byte](buf []byte, p, maxLimit, width int, bigEndian, null bool, s S) (int, error) {
	n := len(s)
	if null {
		n = -1
	}
	if n > MaxLen(width) {
		return p, ErrRange
	}
	if maxLimit-p < width+max(n, 0) {
		return p, ErrOverflow
	}
	if bigEndian {
		PutLen[BE](buf[p:], width, n)
	} else {
		PutLen[LE](buf[p:], width, n)
	}
	p += width
	return p + copy(buf[p:p+max(n, 0)], s), nil
}

// StrLen decodes the width-byte signed length prefix at buf[p:].
func StrLen(buf []byte, p, width int, bigEndian bool) int {
	if bigEndian {
		return GetLen[BE](buf[p:], width)
	}
	return GetLen[LE](buf[p:], width)
}
