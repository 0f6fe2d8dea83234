package dynamic

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/sluicehq/sluice/idl"
	"github.com/sluicehq/sluice/idl/flyweight"
)

// encode appends the encoding of n to buf, exactly as the generated
// builders write it: fields in IDL order, unset fields at their defaults.
func encode(buf []byte, n *node, path string) ([]byte, error) {
	switch {
	case n.ti.union != nil:
		return encodeUnion(buf, n, path)
	case n.ti.list != nil:
		return encodeList(buf, n, path)
	}
	return encodeFields(buf, n, path, n.ti.fields, nil)
}

// encodeFields writes fields of n in order. extra is a union's selected
// case field, which a parent field may size.
func encodeFields(buf []byte, n *node, path string, fields []*idl.Field, extra *idl.Field) ([]byte, error) {
	var err error
	for _, f := range fields {
		sized := n.ti.sized[f]
		if sized == nil && extra != nil && extra.SizeField == f {
			sized = extra
		}
		if sized != nil {
			if buf, err = encodeSize(buf, n, path, f, sized); err != nil {
				return buf, err
			}
			continue
		}
		v, ok := n.vals[f]
		if !ok {
			if v, ok = defaultValue(f); !ok && !implicitDefault(f) {
				return buf, missing(n, path, f)
			}
		}
		if buf, err = encodeField(buf, n.ti, f, v, path+"."+f.Name); err != nil {
			return buf, err
		}
	}
	return buf, nil
}

// implicitDefault reports the fields a builder may leave unset although
// they have no IDL default: nested values (built from their own
// defaults), arrays (empty) and plain octets (empty).
func implicitDefault(f *idl.Field) bool {
	return f.Array || composite(f.Type.Resolved) || f.Unbounded()
}

func missing(n *node, path string, f *idl.Field) error {
	return &Error{Path: path + "." + f.Name, Msg: fmt.Sprintf("required field %s.%s not set", n.ti.name, f.Name), Kind: ErrMissing}
}

// encodeSize writes size field f with the length of the octets it sizes
// (-1 for null).
func encodeSize(buf []byte, n *node, path string, f, sized *idl.Field) ([]byte, error) {
	v, ok := n.vals[sized]
	if !ok {
		if v, ok = defaultValue(sized); !ok {
			return buf, missing(n, path, sized)
		}
	}
	s := v.(str)
	size := int64(len(s.s))
	if s.null {
		size = -1
	}
	return putInt(buf, intKind(f.Type.Resolved), n.ti.big, size), nil
}

// encodeField writes the value v of field f (nil for an unset field with
// an implicit default) of a value of type ti.
func encodeField(buf []byte, ti *typeInfo, f *idl.Field, v any, path string) ([]byte, error) {
	if !f.Array {
		return encodeItem(buf, ti, f, v, path)
	}
	start := len(buf)
	buf = append(buf, make([]byte, 8)...)
	arr, _ := v.(*array)
	count := 0
	if arr != nil {
		var err error
		for i, item := range arr.items {
			if buf, err = encodeItem(buf, ti, f, item, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return buf, err
			}
		}
		count = len(arr.items)
	}
	length := len(buf) - start - 8
	if length > math.MaxInt32 || count > math.MaxInt32 {
		return buf, &Error{Path: path, Msg: "array longer than an int32 length can hold", Kind: ErrRange}
	}
	putUint32(buf[start:], ti.big, uint32(length))
	putUint32(buf[start+4:], ti.big, uint32(count))
	return buf, nil
}

// encodeItem writes one value of f's type: f itself, or an item of it.
func encodeItem(buf []byte, ti *typeInfo, f *idl.Field, v any, path string) ([]byte, error) {
	t := f.Type.Resolved
	if composite(t) {
		child, _ := v.(*node)
		if child == nil {
			child = newNode(ti.schema.infos[t])
		}
		return encode(buf, child, path)
	}
	if k := intKind(t); k != 0 {
		return putInt(buf, k, ti.big, v.(int64)), nil
	}
	k := f.Type.PrimKind()
	s, _ := v.(str) // nil for unset plain octets: empty
	if k.IsString() {
		w := strWidth(k)
		n := int64(len(s.s))
		if s.null {
			n = -1
		}
		buf = putInt(buf, map[int]idl.PrimKind{1: idl.Int8, 2: idl.Int16, 4: idl.Int32}[w], ti.big, n)
	}
	return append(buf, s.s...), nil
}

// encodeUnion writes the parent's fields, the kind, then the case.
func encodeUnion(buf []byte, n *node, path string) ([]byte, error) {
	c := n.kase
	if c == nil {
		// The parent's fields come first, and so do their errors.
		if _, err := encodeFields(buf, n, path, n.ti.fields, nil); err != nil {
			return buf, err
		}
		var cases string
		for i, c := range n.ti.union.Cases {
			if i > 0 {
				cases += ", "
			}
			cases += c.Field.Name + "()"
		}
		return buf, &Error{Path: path + ".kind", Msg: fmt.Sprintf("no case of union %s selected: call one of %s", n.ti.name, cases), Kind: ErrMissing}
	}
	buf, err := encodeFields(buf, n, path, n.ti.fields, c.Field)
	if err != nil {
		return buf, err
	}
	buf = putInt(buf, n.ti.union.SwitchKind(), n.ti.big, c.Kind)
	return encodeFields(buf, n, path, []*idl.Field{c.Field}, nil)
}

// encodeList writes the length, the count, then — without a missing
// byte — the bit mask of the fields present and those fields, or — with
// one — every field up to the last present, an absent one as that byte.
func encodeList(buf []byte, n *node, path string) ([]byte, error) {
	l := n.ti.list
	lenKind, countKind := l.LengthType.PrimKind(), l.CountType.PrimKind()
	start := len(buf)
	header := lenKind.Size() + countKind.Size()
	if !l.HasMissing {
		header += 8
	}
	buf = append(buf, make([]byte, header)...)
	last := -1
	for i, f := range l.Fields {
		if _, ok := n.vals[f]; ok {
			last = i
		} else if f.Required {
			return buf, missing(n, path, f)
		}
	}
	var (
		mask  uint64
		count int
		err   error
	)
	for i, f := range l.Fields {
		v, present := n.vals[f]
		if !present {
			if l.HasMissing && i < last {
				buf = append(buf, byte(l.Missing))
				count++
			}
			continue
		}
		at := len(buf)
		fpath := path + "." + f.Name
		if buf, err = encodeField(buf, n.ti, f, v, fpath); err != nil {
			return buf, err
		}
		if l.HasMissing && len(buf) > at && buf[at] == byte(l.Missing) {
			return buf, &Error{Path: fpath, Msg: fmt.Sprintf("its encoding starts with the list's missing-field byte 0x%02x, so it would read as absent", l.Missing),
				Kind: ErrRange}
		}
		mask |= 1 << i
		count++
	}
	length := len(buf) - start - lenKind.Size()
	if _, hi, _ := lenKind.Range(); int64(length) > hi {
		return buf, &Error{Path: path, Msg: fmt.Sprintf("%d bytes do not fit the list's %s length", length, lenKind), Kind: ErrRange}
	}
	if _, hi, _ := countKind.Range(); int64(count) > hi {
		return buf, &Error{Path: path, Msg: fmt.Sprintf("%d fields do not fit the list's %s count", count, countKind), Kind: ErrRange}
	}
	hdr := putInt(nil, lenKind, n.ti.big, int64(length))
	hdr = putInt(hdr, countKind, n.ti.big, int64(count))
	if !l.HasMissing {
		hdr = putUint64(hdr, n.ti.big, mask)
	}
	copy(buf[start:], hdr)
	return buf, nil
}

// putInt appends v, canonical for kind k, in the byte order.
func putInt(buf []byte, k idl.PrimKind, big bool, v int64) []byte {
	switch k {
	case idl.Varint32:
		var b [5]byte
		return append(buf, b[:flyweight.PutVarint32(b[:], int32(v))]...)
	case idl.Varint64:
		var b [10]byte
		return append(buf, b[:flyweight.PutVarint64(b[:], v)]...)
	case idl.Varuint32:
		var b [5]byte
		return append(buf, b[:flyweight.PutUvarint(b[:], uint64(uint32(v)))]...)
	}
	switch k.Size() {
	case 1:
		return append(buf, byte(v))
	case 2:
		if big {
			return binary.BigEndian.AppendUint16(buf, uint16(v))
		}
		return binary.LittleEndian.AppendUint16(buf, uint16(v))
	case 3:
		var b [3]byte
		flyweight.PutUint24(b[:], uint32(v), big)
		return append(buf, b[:]...)
	case 4:
		if big {
			return binary.BigEndian.AppendUint32(buf, uint32(v))
		}
		return binary.LittleEndian.AppendUint32(buf, uint32(v))
	}
	return putUint64(buf, big, uint64(v))
}

func putUint64(buf []byte, big bool, v uint64) []byte {
	if big {
		return binary.BigEndian.AppendUint64(buf, v)
	}
	return binary.LittleEndian.AppendUint64(buf, v)
}

func putUint32(b []byte, big bool, v uint32) {
	if big {
		binary.BigEndian.PutUint32(b, v)
		return
	}
	binary.LittleEndian.PutUint32(b, v)
}
