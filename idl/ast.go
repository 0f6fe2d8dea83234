package idl

import (
	"fmt"
	"strings"
)

// Pos is a position in an IDL source file. Lines and columns count from 1;
// columns count bytes.
type Pos struct {
	File string
	Line int
	Col  int
}

// String formats the position as file:line:col.
func (p Pos) String() string {
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
}

// ByteOrder is the byte order of the multi-byte integers of a scope.
type ByteOrder uint8

const (
	// Native is the default: the byte order of the machines Sluice runs on,
	// which is little endian on every supported platform (amd64, arm64).
	Native ByteOrder = iota
	// Network is big endian, selected by "option byteorder network;".
	Network
)

// String returns the IDL spelling of the byte order.
func (o ByteOrder) String() string {
	if o == Network {
		return "network"
	}
	return "native"
}

// File is one parsed IDL file: its top-level scopes in source order.
type File struct {
	Name   string
	Scopes []*Scope
}

// Scope is a named namespace. Scopes nest; their qualified name joins the
// names with "::" (core::stream).
type Scope struct {
	Pos       Pos
	Name      string
	Parent    *Scope
	ByteOrder ByteOrder // inherited from the parent unless the scope sets it
	Scopes    []*Scope  // nested scopes, in source order
	Decls     []Decl    // type declarations, in source order
}

// QualifiedName returns the scope's name joined with its parents' by "::".
func (s *Scope) QualifiedName() string {
	if s.Parent == nil {
		return s.Name
	}
	return s.Parent.QualifiedName() + "::" + s.Name
}

// Decl is a named type declaration: *Struct, *Union, *Enum, *Typedef or *List.
type Decl interface {
	DeclName() string
	DeclPos() Pos
	DeclScope() *Scope
}

// Type is what a TypeRef resolves to: a *Primitive or a *Struct, *Union,
// *Enum or *List declaration (typedefs are resolved through).
type Type interface {
	TypeName() string
}

// PrimKind enumerates the built-in types.
type PrimKind uint8

// The built-in types.
const (
	Int8 PrimKind = iota + 1
	Int16
	Int24
	Int32
	Int64
	Uint8
	Uint16
	Uint24
	Uint32
	Uint64
	Varint32  // zig-zag encoded signed varint, at most 5 bytes
	Varint64  // zig-zag encoded signed varint, at most 10 bytes
	Varuint32 // unsigned varint, at most 5 bytes
	String8   // int8 length (-1 = null) then bytes
	String16  // int16 length (-1 = null) then bytes
	String32  // int32 length (-1 = null) then bytes
	Octets    // raw bytes: unbounded, [N] or [sizeField]
)

var primNames = [...]string{
	Int8: "int8", Int16: "int16", Int24: "int24", Int32: "int32", Int64: "int64",
	Uint8: "uint8", Uint16: "uint16", Uint24: "uint24", Uint32: "uint32", Uint64: "uint64",
	Varint32: "varint32", Varint64: "varint64", Varuint32: "varuint32",
	String8: "string8", String16: "string16", String32: "string32",
	Octets: "octets",
}

// String returns the IDL spelling of the kind.
func (k PrimKind) String() string {
	if int(k) < len(primNames) && primNames[k] != "" {
		return primNames[k]
	}
	return fmt.Sprintf("PrimKind(%d)", uint8(k))
}

// PrimKindOf returns the built-in type named name, if there is one.
func PrimKindOf(name string) (PrimKind, bool) {
	for k, n := range primNames {
		if n != "" && n == name {
			return PrimKind(k), true
		}
	}
	return 0, false
}

// Size returns the encoded size of a fixed-width integer, or 0 for the
// variable-size kinds (varints, strings and octets).
func (k PrimKind) Size() int {
	switch k {
	case Int8, Uint8:
		return 1
	case Int16, Uint16:
		return 2
	case Int24, Uint24:
		return 3
	case Int32, Uint32:
		return 4
	case Int64, Uint64:
		return 8
	}
	return 0
}

// IsInteger reports whether k is a fixed-width or variable-width integer.
func (k PrimKind) IsInteger() bool { return k >= Int8 && k <= Varuint32 }

// IsSigned reports whether k is a signed integer.
func (k PrimKind) IsSigned() bool {
	switch k {
	case Int8, Int16, Int24, Int32, Int64, Varint32, Varint64:
		return true
	}
	return false
}

// IsString reports whether k is string8, string16 or string32.
func (k PrimKind) IsString() bool { return k == String8 || k == String16 || k == String32 }

// Range returns the smallest and largest value of an integer kind. For
// uint64 the largest value does not fit int64; max is then reported as
// math.MaxInt64 and maxUnsigned carries the true bound.
func (k PrimKind) Range() (min int64, max int64, maxUnsigned uint64) {
	switch k {
	case Int8:
		return -1 << 7, 1<<7 - 1, 1<<7 - 1
	case Int16:
		return -1 << 15, 1<<15 - 1, 1<<15 - 1
	case Int24:
		return -1 << 23, 1<<23 - 1, 1<<23 - 1
	case Int32, Varint32:
		return -1 << 31, 1<<31 - 1, 1<<31 - 1
	case Int64, Varint64:
		return -1 << 63, 1<<63 - 1, 1<<63 - 1
	case Uint8:
		return 0, 1<<8 - 1, 1<<8 - 1
	case Uint16:
		return 0, 1<<16 - 1, 1<<16 - 1
	case Uint24:
		return 0, 1<<24 - 1, 1<<24 - 1
	case Uint32, Varuint32:
		return 0, 1<<32 - 1, 1<<32 - 1
	case Uint64:
		return 0, 1<<63 - 1, 1<<64 - 1
	}
	return 0, 0, 0
}

// Primitive is a built-in type. The checker shares one *Primitive per kind.
type Primitive struct {
	Kind PrimKind
}

// TypeName returns the IDL spelling.
func (p *Primitive) TypeName() string { return p.Kind.String() }

// TypeRef is a use of a type by name, e.g. "int32" or "core::stream::Extension".
type TypeRef struct {
	Pos  Pos
	Name string
	// Resolved is set by Check: the *Primitive, *Struct, *Union, *Enum or
	// *List named, with typedefs followed to their end.
	Resolved Type
	// Typedefs lists the typedefs followed to reach Resolved, outermost
	// first; empty when the name named the type directly.
	Typedefs []*Typedef
}

// Struct is "struct Name [extends Parent] [[0xTYPEID]] { fields }".
type Struct struct {
	Pos     Pos
	Name    string
	Scope   *Scope
	Extends *TypeRef // nil when the struct extends nothing
	// HasTypeID and TypeID record the optional [0x…] type id.
	HasTypeID bool
	TypeID    uint32
	Fields    []*Field // own fields, in source order

	// Set by Check.
	Parent *Struct // resolved Extends
}

func (s *Struct) DeclName() string  { return s.Name }
func (s *Struct) DeclPos() Pos      { return s.Pos }
func (s *Struct) DeclScope() *Scope { return s.Scope }
func (s *Struct) TypeName() string  { return s.Name }

// AllFields returns the inherited fields (outermost parent first) followed
// by the struct's own fields: the order in which they are encoded.
func (s *Struct) AllFields() []*Field {
	if s.Parent == nil {
		return s.Fields
	}
	parent := s.Parent.AllFields()
	all := make([]*Field, 0, len(parent)+len(s.Fields))
	return append(append(all, parent...), s.Fields...)
}

// Union is "union Name switch (Kind) [extends Parent] { case V: T name; … }".
// It encodes the parent's fields, then the kind, then the selected case.
type Union struct {
	Pos     Pos
	Name    string
	Scope   *Scope
	Switch  *TypeRef // an integer type or an enum
	Extends *TypeRef // nil when the union extends nothing
	Cases   []*Case

	// Set by Check.
	Parent *Struct
}

func (u *Union) DeclName() string  { return u.Name }
func (u *Union) DeclPos() Pos      { return u.Pos }
func (u *Union) DeclScope() *Scope { return u.Scope }
func (u *Union) TypeName() string  { return u.Name }

// ParentFields returns the fields inherited through extends, in encoding order.
func (u *Union) ParentFields() []*Field {
	if u.Parent == nil {
		return nil
	}
	return u.Parent.AllFields()
}

// Case is one arm of a union.
type Case struct {
	Pos   Pos
	Value *Value // an integer literal or an enum constant of the switch enum
	Field *Field

	// Set by Check: the numeric kind value (an enum constant's value).
	Kind int64
}

// Enum is "enum Name [(base)] { A, B(2), … }". Without a base the values are
// uint8 ordinals.
type Enum struct {
	Pos    Pos
	Name   string
	Scope  *Scope
	Base   *TypeRef // nil means uint8
	Values []*EnumValue
}

func (e *Enum) DeclName() string  { return e.Name }
func (e *Enum) DeclPos() Pos      { return e.Pos }
func (e *Enum) DeclScope() *Scope { return e.Scope }
func (e *Enum) TypeName() string  { return e.Name }

// BaseKind returns the integer kind the enum is encoded as.
func (e *Enum) BaseKind() PrimKind {
	if e.Base != nil {
		if p, ok := e.Base.Resolved.(*Primitive); ok {
			return p.Kind
		}
	}
	return Uint8
}

// Lookup returns the value named name.
func (e *Enum) Lookup(name string) (*EnumValue, bool) {
	for _, v := range e.Values {
		if v.Name == name {
			return v, true
		}
	}
	return nil, false
}

// EnumValue is one constant of an enum.
type EnumValue struct {
	Pos      Pos
	Name     string
	Value    int64 // the explicit value, or the ordinal
	Explicit bool
	// Uint reports that Value holds the uint64 bits of a value above
	// math.MaxInt64 (possible only with a uint64 base), as Value.Uint does.
	Uint bool
}

// Typedef is "typedef Target as Name;".
type Typedef struct {
	Pos    Pos
	Name   string
	Scope  *Scope
	Target *TypeRef
}

func (t *Typedef) DeclName() string  { return t.Name }
func (t *Typedef) DeclPos() Pos      { return t.Pos }
func (t *Typedef) DeclScope() *Scope { return t.Scope }

// List is "list<LengthType, CountType[, missing]> Name { [required] T f; … }".
//
// Encoding (Sluice's; Zilla's generated list classes are not byte-verified):
// the length (bytes that follow the length field), the count of fields
// present, then either — without a missing byte — a uint64 bitmask of the
// fields present followed by those fields, or — with a missing byte — every
// field up to the last present one, an absent field written as that byte.
type List struct {
	Pos        Pos
	Name       string
	Scope      *Scope
	LengthType *TypeRef
	CountType  *TypeRef
	HasMissing bool
	Missing    int64
	Fields     []*Field
}

func (l *List) DeclName() string  { return l.Name }
func (l *List) DeclPos() Pos      { return l.Pos }
func (l *List) DeclScope() *Scope { return l.Scope }
func (l *List) TypeName() string  { return l.Name }

// Field is a member of a struct, list or union case.
type Field struct {
	Pos      Pos
	Name     string
	Type     *TypeRef
	Array    bool   // T[]: int32 byte length, int32 count, then the items
	SizeLit  int    // octets[N]: N > 0; 0 otherwise
	SizeName string // octets[field]: the name of an earlier integer field
	Default  *Value // nil when the field has no default
	Required bool   // list fields only

	// Set by Check.
	SizeField *Field // resolved SizeName
	SizeOf    *Field // when this field is the size field of a later octets field
}

// Unbounded reports whether the field is a plain "octets" that runs to the
// limit of the enclosing buffer.
func (f *Field) Unbounded() bool {
	p, ok := f.Type.Resolved.(*Primitive)
	return ok && p.Kind == Octets && !f.Array && f.SizeLit == 0 && f.SizeName == ""
}

// ValueKind is the kind of a literal.
type ValueKind uint8

// Literal kinds.
const (
	IntValue    ValueKind = iota + 1 // 42, -1, 0x7f, 4000000001L
	StringValue                      // "text"
	NullValue                        // null
	IdentValue                       // ENUM_CONSTANT
)

// Value is a literal in a default or a case label.
type Value struct {
	Pos   Pos
	Kind  ValueKind
	Int   int64  // IntValue; a literal above math.MaxInt64 is stored as its uint64 bits with Uint set
	Uint  bool   // IntValue written above math.MaxInt64
	Str   string // StringValue (unescaped)
	Ident string // IdentValue
}

// String renders the value as it would be written in IDL.
func (v *Value) String() string {
	switch v.Kind {
	case IntValue:
		if v.Uint {
			return fmt.Sprint(uint64(v.Int))
		}
		return fmt.Sprint(v.Int)
	case StringValue:
		return fmt.Sprintf("%q", v.Str)
	case NullValue:
		return "null"
	case IdentValue:
		return v.Ident
	}
	return "?"
}

// Error is one problem found in an IDL file.
type Error struct {
	Pos Pos
	Msg string
}

// Error formats as "file:line:col: message".
func (e *Error) Error() string { return e.Pos.String() + ": " + e.Msg }

// ErrorList collects the problems of a parse or check, in source order.
type ErrorList []*Error

// Error joins the errors, one per line.
func (l ErrorList) Error() string {
	msgs := make([]string, len(l))
	for i, e := range l {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "\n")
}

// Err returns nil for an empty list, else the list.
func (l ErrorList) Err() error {
	if len(l) == 0 {
		return nil
	}
	return l
}
