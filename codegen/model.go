package main

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/sluicehq/sluice/idl"
)

// category is how a field is encoded and accessed.
type category uint8

const (
	catInt       category = iota + 1 // fixed-width integer
	catEnum                          // enum, encoded as its fixed-width base
	catVarint                        // varint32, varint64, varuint32
	catString                        // string8/16/32
	catOctetsN                       // octets[N]
	catOctetsSz                      // octets[sizeField]
	catUnbounded                     // octets to the limit
	catStruct                        // nested struct, union or list
	catArray                         // T[]
)

// field is one field of a generated type, with everything the templates need.
type field struct {
	F       *idl.Field
	Name    string // IDL name
	Go      string // exported Go name
	Ordinal int
	Cat     category
	Prim    idl.PrimKind // integer kind (catInt, catEnum, catVarint), string kind
	GoType  string       // Go type of the value (catInt, catEnum, catVarint), or of the view (catStruct)
	Size    int          // fixed encoded size, 0 if variable
	Static  bool         // the offset is a constant
	Off     int          // the constant offset, when Static
	Width   int          // string length prefix width
	N       int          // octets[N]
	SizeFor *field       // this is the size field of that octets field
	SizeBy  *field       // this octets field is sized by that field
	Elem    elemType     // catArray
	Default *idl.Value
	Null    bool // defaults to null
	Big     bool // network byte order
	Last    bool
}

type elemType struct {
	View    string // reader type
	Builder string // builder type
	MinSize int
}

// typ is one generated reader/builder pair: a struct, or a union (whose
// fields are the parent's fields followed by the kind).
type typ struct {
	Name    string
	Doc     string
	Fields  []*field
	Union   bool
	Kind    *field // union kind
	Cases   []*ucase
	Shared  []*shared // union: fields that several struct cases declare alike
	HasID   bool
	TypeID  uint32
	Extends bool // extends a parent: a frame extension, written in a frame builder's slot
	Big     bool
	Fixed   int // encoded size when every field is fixed, else -1
	MinSize int

	// Lists: the header and which fields are required.
	List       bool
	LenKind    idl.PrimKind
	CountKind  idl.PrimKind
	HasMissing bool
	Missing    int64
	Required   uint64 // bit i: field i is required
}

type ucase struct {
	Value int64
	Const string // Go constant name of the kind
	F     *field
}

// shared is a scalar or string field that two or more struct cases of a
// union declare with the same name and type, so that the union can read and
// set it whichever case is present.
type shared struct {
	*field          // as the first case declares it
	Cases  []*ucase // the cases that declare it, in case order
}

type enumType struct {
	Name   string
	Doc    string
	Base   string
	Values []enumValue
}

type enumValue struct {
	IDL, Const, Lit string
}

// goName turns an IDL identifier into an exported Go name, upper-casing the
// common initialisms (originId → OriginID).
func goName(s string) string {
	words := splitCamel(s)
	var b strings.Builder
	for _, w := range words {
		switch strings.ToLower(w) {
		case "id", "url", "uri", "json", "http", "sse", "ttl":
			b.WriteString(strings.ToUpper(w))
		default:
			r := []rune(w)
			r[0] = unicode.ToUpper(r[0])
			b.WriteString(string(r))
		}
	}
	return b.String()
}

// constName turns an enum constant (SERVER_TOOLS_LIST_CHANGED) into the Go
// suffix ServerToolsListChanged.
func constName(s string) string {
	var b strings.Builder
	for _, part := range strings.Split(s, "_") {
		if part == "" {
			continue
		}
		r := []rune(strings.ToLower(part))
		r[0] = unicode.ToUpper(r[0])
		b.WriteString(string(r))
	}
	return b.String()
}

func splitCamel(s string) []string {
	var words []string
	start := 0
	r := []rune(s)
	for i := 1; i < len(r); i++ {
		if unicode.IsUpper(r[i]) && !unicode.IsUpper(r[i-1]) {
			words = append(words, string(r[start:i]))
			start = i
		}
	}
	return append(words, string(r[start:]))
}

func intGoType(k idl.PrimKind) string {
	switch k {
	case idl.Int8:
		return "int8"
	case idl.Int16:
		return "int16"
	case idl.Int24, idl.Int32, idl.Varint32:
		return "int32"
	case idl.Int64, idl.Varint64:
		return "int64"
	case idl.Uint8:
		return "uint8"
	case idl.Uint16:
		return "uint16"
	case idl.Uint24, idl.Uint32, idl.Varuint32:
		return "uint32"
	case idl.Uint64:
		return "uint64"
	}
	return ""
}

func order(big bool) string {
	if big {
		return "binary.BigEndian"
	}
	return "binary.LittleEndian"
}

func orderType(big bool) string {
	if big {
		return "flyweight.BE"
	}
	return "flyweight.LE"
}

// readInt returns an expression reading a fixed-width integer of kind k at
// buf[at:] as Go type goType.
func readInt(k idl.PrimKind, big bool, buf, at, goType string) string {
	switch k.Size() {
	case 1:
		return fmt.Sprintf("%s(%s[%s])", goType, buf, at)
	case 2:
		return fmt.Sprintf("%s(%s.Uint16(%s[%s:]))", goType, order(big), buf, at)
	case 3:
		if k == idl.Int24 {
			return fmt.Sprintf("%s(flyweight.Int24(%s[%s:], %v))", goType, buf, at, big)
		}
		return fmt.Sprintf("%s(flyweight.Uint24(%s[%s:], %v))", goType, buf, at, big)
	case 4:
		return fmt.Sprintf("%s(%s.Uint32(%s[%s:]))", goType, order(big), buf, at)
	}
	return fmt.Sprintf("%s(%s.Uint64(%s[%s:]))", goType, order(big), buf, at)
}

// writeInt returns a statement writing v as a fixed-width integer of kind k
// at buf[at:].
func writeInt(k idl.PrimKind, big bool, buf, at, v string) string {
	switch k.Size() {
	case 1:
		return fmt.Sprintf("%s[%s] = byte(%s)", buf, at, v)
	case 2:
		return fmt.Sprintf("%s.PutUint16(%s[%s:], uint16(%s))", order(big), buf, at, v)
	case 3:
		return fmt.Sprintf("flyweight.PutUint24(%s[%s:], uint32(%s), %v)", buf, at, v, big)
	case 4:
		return fmt.Sprintf("%s.PutUint32(%s[%s:], uint32(%s))", order(big), buf, at, v)
	}
	return fmt.Sprintf("%s.PutUint64(%s[%s:], uint64(%s))", order(big), buf, at, v)
}

func varintFuncs(k idl.PrimKind) (get, put string) {
	switch k {
	case idl.Varint32:
		return "flyweight.Varint32", "flyweight.PutVarint32"
	case idl.Varint64:
		return "flyweight.Varint64", "flyweight.PutVarint64"
	}
	return "flyweight.Varuint32", "func(b []byte, v uint32) int { return flyweight.PutUvarint(b, uint64(v)) }"
}
