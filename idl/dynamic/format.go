package dynamic

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/sluicehq/sluice/idl"
)

func itoa(n int) string { return strconv.Itoa(n) }

// formatNode renders the fields held by n (all of them for a decoded
// value; those set for a builder or matcher). top prefixes the type name.
func formatNode(n *node, top bool) string {
	var b strings.Builder
	writeNode(&b, n, top)
	return b.String()
}

func writeNode(b *strings.Builder, n *node, top bool) {
	if top {
		b.WriteString(n.ti.name)
	}
	b.WriteByte('{')
	first := true
	sep := func() {
		if !first {
			b.WriteString(", ")
		}
		first = false
	}
	for _, f := range n.ti.fields {
		if v, ok := n.vals[f]; ok {
			sep()
			b.WriteString(f.Name)
			b.WriteString(": ")
			writeField(b, f, v)
		}
	}
	if c := n.kase; c != nil {
		sep()
		b.WriteString("kind: ")
		b.WriteString(c.Field.Name)
		if v, ok := n.vals[c.Field]; ok {
			b.WriteString(", ")
			b.WriteString(c.Field.Name)
			b.WriteString(": ")
			writeField(b, c.Field, v)
		}
	}
	b.WriteByte('}')
}

func writeField(b *strings.Builder, f *idl.Field, v any) {
	arr, ok := v.(*array)
	if !ok {
		writeItem(b, f, v)
		return
	}
	b.WriteByte('[')
	for i, item := range arr.items {
		if i > 0 {
			b.WriteString(", ")
		}
		writeItem(b, f, item)
	}
	b.WriteByte(']')
	for _, item := range arr.missing {
		b.WriteString(" without ")
		writeItem(b, f, item)
	}
}

func writeItem(b *strings.Builder, f *idl.Field, v any) {
	b.WriteString(formatItem(f, v))
}

// formatItem renders one value of f's type.
func formatItem(f *idl.Field, v any) string {
	switch v := v.(type) {
	case *node:
		return formatNode(v, false)
	case regex:
		return "/" + strings.ReplaceAll(v.src, "/", `\/`) + "/"
	case int64:
		if e, ok := f.Type.Resolved.(*idl.Enum); ok {
			return enumName(e, v)
		}
		return formatInt(intKind(f.Type.Resolved), v)
	case str:
		if v.null {
			return "null"
		}
		if f.Type.PrimKind() == idl.Octets && !printable(v.s) {
			return hexBytes([]byte(v.s))
		}
		return strconv.Quote(v.s)
	}
	return "?"
}

// formatInt renders a canonical integer of kind k.
func formatInt(k idl.PrimKind, v int64) string {
	if k == idl.Uint64 {
		return strconv.FormatUint(uint64(v), 10)
	}
	return strconv.FormatInt(v, 10)
}

// enumName returns the name of the constant of e with value v, or
// Enum(v) when none has it.
func enumName(e *idl.Enum, v int64) string {
	for _, ev := range e.Values {
		if ev.Value == v {
			return ev.Name
		}
	}
	return e.Name + "(" + formatInt(e.BaseKind(), v) + ")"
}

// printable reports whether octets read well as a quoted string.
func printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r < 0x20 && r != '\n' && r != '\r' && r != '\t' || r == 0x7f {
			return false
		}
	}
	return true
}

// hexBytes renders bytes as k3po writes them: [0x01 0x02].
func hexBytes(p []byte) string {
	const digits = "0123456789abcdef"
	var b strings.Builder
	b.WriteByte('[')
	for i, c := range p {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString("0x")
		b.WriteByte(digits[c>>4])
		b.WriteByte(digits[c&0xf])
	}
	b.WriteByte(']')
	return b.String()
}
