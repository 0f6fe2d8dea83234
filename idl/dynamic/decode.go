package dynamic

import (
	"encoding/binary"
	"fmt"
	"math/bits"

	"github.com/sluicehq/sluice/idl"
	"github.com/sluicehq/sluice/idl/flyweight"
)

// The decoder accepts exactly what the generated readers' Wrap accepts,
// checking every length against the limit, so hostile input is an error and
// never a panic. It keeps every field of a struct or union and the present
// fields of a list.

func malformed(path string, err error, msg string) *Error {
	if msg == "" {
		msg = err.Error()
		const prefix = "flyweight: "
		if len(msg) > len(prefix) && msg[:len(prefix)] == prefix {
			msg = msg[len(prefix):]
		}
	}
	return &Error{Path: path, Msg: msg, Kind: ErrMalformed, Err: err}
}

// decode reads a value of type ti at buf[p:limit] and returns it and the
// offset after it.
func decode(buf []byte, p, limit int, ti *typeInfo, path string) (*node, int, error) {
	n := newNode(ti)
	var err error
	switch {
	case ti.union != nil:
		if p, err = decodeFields(buf, p, limit, n, ti.fields, path); err != nil {
			return nil, 0, err
		}
		k := ti.union.SwitchKind()
		kind, q, err := getInt(buf, p, limit, k, ti.big)
		if err != nil {
			return nil, 0, malformed(path+".kind", err, "")
		}
		c := ti.caseByKind(kind)
		if c == nil {
			return nil, 0, malformed(path+".kind", flyweight.ErrKind, fmt.Sprintf("unknown union kind %s", formatInt(k, kind)))
		}
		n.kase = c
		if p, err = decodeFields(buf, q, limit, n, []*idl.Field{c.Field}, path); err != nil {
			return nil, 0, err
		}
	case ti.list != nil:
		if p, err = decodeList(buf, p, limit, n, path); err != nil {
			return nil, 0, err
		}
	default:
		if p, err = decodeFields(buf, p, limit, n, ti.fields, path); err != nil {
			return nil, 0, err
		}
	}
	return n, p, nil
}

func decodeFields(buf []byte, p, limit int, n *node, fields []*idl.Field, path string) (int, error) {
	for _, f := range fields {
		v, q, err := decodeField(buf, p, limit, n, f, path+"."+f.Name)
		if err != nil {
			return 0, err
		}
		n.vals[f] = v
		p = q
	}
	return p, nil
}

// decodeField reads field f of n (whose earlier fields hold any size).
func decodeField(buf []byte, p, limit int, n *node, f *idl.Field, path string) (any, int, error) {
	if !f.Array {
		return decodeItem(buf, p, limit, n, f, path)
	}
	if limit-p < 8 {
		return nil, 0, malformed(path, flyweight.ErrShort, "")
	}
	length := int(int32(getUint32(buf[p:], n.ti.big)))
	count := int(int32(getUint32(buf[p+4:], n.ti.big)))
	p += 8
	if length < 0 || count < 0 {
		return nil, 0, malformed(path, flyweight.ErrLength, fmt.Sprintf("invalid array length %d or count %d", length, count))
	}
	if limit-p < length {
		return nil, 0, malformed(path, flyweight.ErrShort, "")
	}
	end := p + length
	minSize := n.ti.schema.fieldMinSize(&idl.Field{Type: f.Type, SizeLit: f.SizeLit}, 0)
	if minSize > 0 && int64(count)*int64(minSize) > int64(length) || minSize == 0 && count > length+flyweight.MaxEmptyItems {
		return nil, 0, malformed(path, flyweight.ErrLength, fmt.Sprintf("array count %d does not fit its length %d", count, length))
	}
	arr := &array{items: make([]any, 0, count)}
	for i := 0; i < count; i++ {
		v, q, err := decodeItem(buf, p, end, n, f, fmt.Sprintf("%s[%d]", path, i))
		if err != nil {
			return nil, 0, err
		}
		arr.items = append(arr.items, v)
		p = q
	}
	if p != end {
		return nil, 0, malformed(path, flyweight.ErrLength, fmt.Sprintf("array items end %d bytes before its length", end-p))
	}
	return arr, p, nil
}

// decodeItem reads one value of f's type: f itself or an item of it.
func decodeItem(buf []byte, p, limit int, n *node, f *idl.Field, path string) (any, int, error) {
	t := f.Type.Resolved
	if composite(t) {
		return decode(buf, p, limit, n.ti.schema.infos[t], path)
	}
	if k := intKind(t); k != 0 {
		v, q, err := getInt(buf, p, limit, k, n.ti.big)
		if err != nil {
			return nil, 0, malformed(path, err, "")
		}
		return v, q, nil
	}
	k := f.Type.PrimKind()
	size := 0
	switch {
	case k.IsString():
		w := strWidth(k)
		if limit-p < w {
			return nil, 0, malformed(path, flyweight.ErrShort, "")
		}
		size = getLen(buf[p:], w, n.ti.big)
		p += w
		if size < -1 {
			return nil, 0, malformed(path, flyweight.ErrLength, fmt.Sprintf("invalid string length %d", size))
		}
	case f.SizeLit > 0:
		size = f.SizeLit
	case f.SizeField != nil:
		sv, ok := n.vals[f.SizeField].(int64)
		if !ok {
			return nil, 0, malformed(path, flyweight.ErrLength, "size field "+f.SizeField.Name+" not decoded")
		}
		if sv < -1 || sv == -1 && !nullDefault(f) || int64(int(sv)) != sv {
			return nil, 0, malformed(path, flyweight.ErrLength, fmt.Sprintf("invalid size %s", formatInt(sizeKind(f.SizeField), sv)))
		}
		size = int(sv)
	default:
		size = limit - p // plain octets run to the limit
	}
	if size > limit-p {
		return nil, 0, malformed(path, flyweight.ErrShort, "")
	}
	if size < 0 {
		return str{null: true}, p, nil
	}
	return str{s: string(buf[p : p+size])}, p + size, nil
}

// decodeList reads a list, as the generated list readers do.
func decodeList(buf []byte, p, limit int, n *node, path string) (int, error) {
	l := n.ti.list
	lenKind, countKind := l.LengthType.PrimKind(), l.CountType.PrimKind()
	if limit-p < lenKind.Size() {
		return 0, malformed(path+".length", flyweight.ErrShort, "")
	}
	length, p, _ := getInt(buf, p, limit, lenKind, n.ti.big)
	if length < 0 || length > int64(limit-p) {
		return 0, malformed(path+".length", flyweight.ErrShort, "")
	}
	limit = p + int(length)
	if limit-p < countKind.Size() {
		return 0, malformed(path+".count", flyweight.ErrShort, "")
	}
	count, p, _ := getInt(buf, p, limit, countKind, n.ti.big)
	var mask uint64
	if l.HasMissing {
		if count < 0 || count > int64(len(l.Fields)) {
			return 0, malformed(path+".count", flyweight.ErrLength, fmt.Sprintf("count %d exceeds the list's %d fields", count, len(l.Fields)))
		}
		for i, f := range l.Fields[:count] {
			if p < limit && buf[p] == byte(l.Missing) {
				p++
				continue
			}
			mask |= 1 << i
			v, q, err := decodeField(buf, p, limit, n, f, path+"."+f.Name)
			if err != nil {
				return 0, err
			}
			n.vals[f] = v
			p = q
		}
	} else {
		if limit-p < 8 {
			return 0, malformed(path+".count", flyweight.ErrShort, "")
		}
		mask = getUint64(buf[p:], n.ti.big)
		p += 8
		if mask>>len(l.Fields) != 0 || int64(bits.OnesCount64(mask)) != count {
			return 0, malformed(path+".count", flyweight.ErrLength, fmt.Sprintf("bit mask %#x does not match count %d", mask, count))
		}
		for i, f := range l.Fields {
			if mask&(1<<i) == 0 {
				continue
			}
			v, q, err := decodeField(buf, p, limit, n, f, path+"."+f.Name)
			if err != nil {
				return 0, err
			}
			n.vals[f] = v
			p = q
		}
	}
	if p != limit {
		return 0, malformed(path+".length", flyweight.ErrLength, fmt.Sprintf("fields end %d bytes before the list's length", limit-p))
	}
	for i, f := range l.Fields {
		if f.Required && mask&(1<<i) == 0 {
			return 0, malformed(path+"."+f.Name, flyweight.ErrMissing, "required list field absent")
		}
	}
	return p, nil
}

// getInt reads an integer of kind k at buf[p:limit], canonically.
func getInt(buf []byte, p, limit int, k idl.PrimKind, big bool) (int64, int, error) {
	switch k {
	case idl.Varint32:
		v, n := flyweight.Varint32(buf[p:limit])
		if n == 0 {
			return 0, 0, flyweight.ErrVarint
		}
		return int64(v), p + n, nil
	case idl.Varint64:
		v, n := flyweight.Varint64(buf[p:limit])
		if n == 0 {
			return 0, 0, flyweight.ErrVarint
		}
		return v, p + n, nil
	case idl.Varuint32:
		v, n := flyweight.Varuint32(buf[p:limit])
		if n == 0 {
			return 0, 0, flyweight.ErrVarint
		}
		return int64(v), p + n, nil
	}
	size := k.Size()
	if limit-p < size {
		return 0, 0, flyweight.ErrShort
	}
	b := buf[p : p+size]
	var v int64
	switch k {
	case idl.Int8:
		v = int64(int8(b[0]))
	case idl.Uint8:
		v = int64(b[0])
	case idl.Int16:
		v = int64(int16(getUint16(b, big)))
	case idl.Uint16:
		v = int64(getUint16(b, big))
	case idl.Int24:
		v = int64(flyweight.Int24(b, big))
	case idl.Uint24:
		v = int64(flyweight.Uint24(b, big))
	case idl.Int32:
		v = int64(int32(getUint32(b, big)))
	case idl.Uint32:
		v = int64(getUint32(b, big))
	default:
		v = int64(getUint64(b, big))
	}
	return v, p + size, nil
}

func getLen(b []byte, width int, big bool) int {
	switch width {
	case 1:
		return int(int8(b[0]))
	case 2:
		return int(int16(getUint16(b, big)))
	}
	return int(int32(getUint32(b, big)))
}

func getUint16(b []byte, big bool) uint16 {
	if big {
		return binary.BigEndian.Uint16(b)
	}
	return binary.LittleEndian.Uint16(b)
}

func getUint32(b []byte, big bool) uint32 {
	if big {
		return binary.BigEndian.Uint32(b)
	}
	return binary.LittleEndian.Uint32(b)
}

func getUint64(b []byte, big bool) uint64 {
	if big {
		return binary.BigEndian.Uint64(b)
	}
	return binary.LittleEndian.Uint64(b)
}
