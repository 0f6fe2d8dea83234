package dynamic

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/sluicehq/sluice/idl"
)

// Schema is the set of types of some checked IDL files, ready for building,
// matching, decoding and formatting values by type name. It is immutable and
// safe for concurrent use; the Builders and Matchers it makes are not.
type Schema struct {
	qualified map[string]idl.Type   // core::stream::Begin → type
	simple    map[string][]idl.Type // Begin → the distinct types of that name
	infos     map[idl.Type]*typeInfo
	minSizes  map[idl.Type]int
	frozen    bool
}

// NewSchema indexes the types of files, which must have been checked
// together by idl.Check (or come from idl.Builtin). It reports files whose
// references are unresolved, which would mean they were not checked.
func NewSchema(files ...*idl.File) (*Schema, error) {
	s := &Schema{
		qualified: map[string]idl.Type{},
		simple:    map[string][]idl.Type{},
		infos:     map[idl.Type]*typeInfo{},
		minSizes:  map[idl.Type]int{},
	}
	var decls []idl.Decl
	for _, f := range files {
		if f != nil {
			decls = append(decls, f.Decls()...)
		}
	}
	for _, d := range decls {
		if err := checked(d); err != nil {
			return nil, err
		}
	}
	for _, d := range decls {
		var t idl.Type
		switch d := d.(type) {
		case *idl.Typedef:
			t = d.Target.Resolved
		case idl.Type:
			t = d
		}
		if t == nil {
			continue
		}
		s.qualified[idl.QualifiedName(d)] = t
		if !slices.Contains(s.simple[d.DeclName()], t) {
			s.simple[d.DeclName()] = append(s.simple[d.DeclName()], t)
		}
	}
	for _, d := range decls {
		if t, ok := d.(idl.Type); ok {
			if err := s.index(t); err != nil {
				return nil, err
			}
		}
	}
	for t := range s.infos {
		s.minSize(t, 0)
	}
	s.frozen = true // from here on the schema is only read
	return s, nil
}

// index makes the typeInfo of a struct, union or list and of the composite
// types its fields use, which may be declared in files not given to
// NewSchema.
func (s *Schema) index(t idl.Type) error {
	if !composite(t) || s.infos[t] != nil {
		return nil
	}
	if err := checked(t.(idl.Decl)); err != nil {
		return err
	}
	var parent *idl.Struct
	switch t := t.(type) {
	case *idl.Struct:
		parent = t.Parent
	case *idl.Union:
		parent = t.Parent
	}
	if parent != nil {
		if err := s.index(parent); err != nil {
			return err
		}
	}
	var ti *typeInfo
	var fields []*idl.Field
	switch t := t.(type) {
	case *idl.Struct:
		ti = newStructInfo(t)
	case *idl.Union:
		ti = newUnionInfo(t)
		for _, c := range t.Cases {
			fields = append(fields, c.Field)
		}
	case *idl.List:
		ti = newListInfo(t)
	}
	ti.schema = s
	s.infos[t] = ti
	for _, f := range append(fields, ti.fields...) {
		if err := s.index(f.Type.Resolved); err != nil {
			return err
		}
	}
	return nil
}

// checked reports a declaration that idl.Check has not resolved.
func checked(d idl.Decl) error {
	unresolved := func(what string, r *idl.TypeRef) error {
		if r == nil || r.Resolved == nil {
			return fmt.Errorf("dynamic: %s: %s of %s is unresolved: check the files with idl.Check first", d.DeclPos(), what, d.DeclName())
		}
		return nil
	}
	fields := func(fs []*idl.Field) error {
		for _, f := range fs {
			if f == nil {
				return fmt.Errorf("dynamic: %s: %s has a nil field", d.DeclPos(), d.DeclName())
			}
			if err := unresolved("field "+f.Name, f.Type); err != nil {
				return err
			}
			if f.SizeName != "" && f.SizeField == nil {
				return fmt.Errorf("dynamic: %s: size field %s of %s.%s is unresolved: check the files with idl.Check first",
					f.Pos, f.SizeName, d.DeclName(), f.Name)
			}
		}
		return nil
	}
	switch d := d.(type) {
	case *idl.Struct:
		if d.Extends != nil && d.Parent == nil {
			return unresolved("the parent", nil)
		}
		return fields(d.Fields)
	case *idl.Union:
		if d.Extends != nil && d.Parent == nil {
			return unresolved("the parent", nil)
		}
		if err := unresolved("the switch type", d.Switch); err != nil {
			return err
		}
		if d.SwitchKind() == 0 {
			return fmt.Errorf("dynamic: %s: union %s has an invalid switch type", d.Pos, d.Name)
		}
		for _, c := range d.Cases {
			if c == nil || c.Field == nil {
				return fmt.Errorf("dynamic: %s: union %s has an empty case", d.Pos, d.Name)
			}
			if err := fields([]*idl.Field{c.Field}); err != nil {
				return err
			}
		}
	case *idl.List:
		for _, r := range []*idl.TypeRef{d.LengthType, d.CountType} {
			if err := unresolved("a parameter", r); err != nil {
				return err
			}
			if k := r.PrimKind(); k.Size() == 0 || !k.IsInteger() {
				return fmt.Errorf("dynamic: %s: list %s has an invalid parameter %s", d.Pos, d.Name, r.Name)
			}
		}
		return fields(d.Fields)
	case *idl.Typedef:
		return unresolved("the target", d.Target)
	}
	return nil
}

var builtinSchema = sync.OnceValues(func() (*Schema, error) {
	files, err := idl.Builtin()
	if err != nil {
		return nil, err
	}
	return NewSchema(files...)
})

// Builtin returns the schema of Sluice's own IDL files (idl.Builtin): the
// core frames and the http and mcp extensions. It is built once.
func Builtin() (*Schema, error) { return builtinSchema() }

// Lookup finds a type by simple name ("McpBeginEx") or by qualified name
// ("mcp::stream::McpBeginEx", a leading "::" allowed). Typedefs resolve to
// their target. A simple name declared in several scopes is ambiguous and
// not found; use the qualified name.
func (s *Schema) Lookup(name string) (idl.Type, bool) {
	if strings.Contains(name, "::") {
		t, ok := s.qualified[strings.TrimPrefix(name, "::")]
		return t, ok
	}
	if ts := s.simple[name]; len(ts) == 1 {
		return ts[0], true
	}
	return nil, false
}

// Types returns the qualified names of the structs, unions and lists of
// the schema, sorted: the types NewBuilder, NewMatcher, Decode and Format
// accept.
func (s *Schema) Types() []string {
	var out []string
	for name, t := range s.qualified {
		if _, ok := s.infos[t]; ok {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// info finds the struct, union or list named name.
func (s *Schema) info(name string) (*typeInfo, error) {
	t, ok := s.Lookup(name)
	if !ok {
		if ts := s.simple[name]; len(ts) > 1 {
			var names []string
			for q, t := range s.qualified {
				if slices.Contains(ts, t) && strings.HasSuffix(q, "::"+name) {
					names = append(names, q)
				}
			}
			slices.Sort(names)
			return nil, &Error{Path: name, Msg: "ambiguous type name; use one of " + strings.Join(names, ", "), Kind: ErrUnknownType}
		}
		return nil, &Error{Path: name, Msg: "unknown type", Kind: ErrUnknownType}
	}
	ti := s.infos[t]
	if ti == nil {
		return nil, &Error{Path: name, Msg: fmt.Sprintf("%s is not a struct, union or list", describe(t)), Kind: ErrUnknownType}
	}
	return ti, nil
}

func describe(t idl.Type) string {
	switch t := t.(type) {
	case *idl.Primitive:
		return t.Kind.String()
	case *idl.Enum:
		return "enum " + t.Name
	case *idl.Struct:
		return "struct " + t.Name
	case *idl.Union:
		return "union " + t.Name
	case *idl.List:
		return "list " + t.Name
	}
	return fmt.Sprint(t)
}

// methodKind says what calling a method of a Builder or Matcher does.
type methodKind uint8

const (
	mField  methodKind = iota + 1 // set a field (or open its builder)
	mCase                         // select a union case
	mAppend                       // append an item to an array field (the singular)
)

type method struct {
	kind methodKind
	f    *idl.Field
	c    *idl.Case // the case selected, for mCase and an mAppend of a case field
}

// typeInfo is what the builder, matcher and codec need to know about one
// struct, union or list.
type typeInfo struct {
	schema *Schema
	t      idl.Type
	name   string
	big    bool         // network byte order
	fields []*idl.Field // struct: all fields; union: the parent's; list: its fields
	union  *idl.Union
	list   *idl.List
	// sized maps a size field to the octets field of fields it sizes; such
	// a size field is computed, never set.
	sized   map[*idl.Field]*idl.Field
	methods map[string]method
	names   []string // method names in registration order, for errors
}

func newInfo(t idl.Type, name string, scope *idl.Scope, fields []*idl.Field) *typeInfo {
	ti := &typeInfo{t: t, name: name, big: scope != nil && scope.ByteOrder == idl.Network, fields: fields,
		sized: map[*idl.Field]*idl.Field{}, methods: map[string]method{}}
	for _, f := range fields {
		if f.SizeField != nil {
			ti.sized[f.SizeField] = f
		}
	}
	for _, f := range fields {
		ti.add(f.Name, method{kind: mField, f: f})
	}
	return ti
}

func newStructInfo(t *idl.Struct) *typeInfo {
	ti := newInfo(t, t.Name, t.Scope, t.AllFields())
	ti.addSingulars(nil)
	return ti
}

func newUnionInfo(t *idl.Union) *typeInfo {
	ti := newInfo(t, t.Name, t.Scope, t.ParentFields())
	ti.union = t
	for _, c := range t.Cases {
		ti.add(c.Field.Name, method{kind: mCase, f: c.Field, c: c})
	}
	ti.addSingulars(t.Cases)
	return ti
}

func newListInfo(t *idl.List) *typeInfo {
	ti := newInfo(t, t.Name, t.Scope, t.Fields)
	ti.list = t
	ti.addSingulars(nil)
	return ti
}

// add registers a method unless the name is taken: fields come first, then
// cases, then singulars, and "build" is always the builder's own.
func (ti *typeInfo) add(name string, m method) {
	if _, taken := ti.methods[name]; taken || name == "build" {
		return
	}
	ti.methods[name] = m
	ti.names = append(ti.names, name)
}

// addSingulars registers, for each array field or case, its name without
// a trailing "s" (headers → header) as the method appending one item; and,
// when the type has a single array, "item" as another.
func (ti *typeInfo) addSingulars(cases []*idl.Case) {
	var arrays []method
	for _, f := range ti.fields {
		if f.Array {
			arrays = append(arrays, method{kind: mAppend, f: f})
		}
	}
	for _, c := range cases {
		if c.Field.Array {
			arrays = append(arrays, method{kind: mAppend, f: c.Field, c: c})
		}
	}
	for _, m := range arrays {
		if s, ok := singular(m.f.Name); ok {
			ti.add(s, m)
		}
	}
	if len(arrays) == 1 {
		ti.add("item", arrays[0])
	}
}

func singular(name string) (string, bool) {
	s := strings.TrimSuffix(name, "s")
	return s, s != name && s != ""
}

// methodNames lists the methods of the type, for error messages.
func (ti *typeInfo) methodNames() string {
	return strings.Join(append(slices.Clone(ti.names), "build"), ", ")
}

// caseByKind finds the union case of a kind value.
func (ti *typeInfo) caseByKind(kind int64) *idl.Case {
	for _, c := range ti.union.Cases {
		if c.Kind == kind {
			return c
		}
	}
	return nil
}

// composite reports whether t is a struct, union or list: a value with
// fields of its own, set through a child builder.
func composite(t idl.Type) bool {
	switch t.(type) {
	case *idl.Struct, *idl.Union, *idl.List:
		return true
	}
	return false
}

// minSize returns the smallest encoding of a value of type t, which bounds
// the count of an array of t (as flyweight.ArrayBounds does). Types nest
// only finitely (Check rejects containment cycles); depth guards anyway.
func (s *Schema) minSize(t idl.Type, depth int) int {
	if n, ok := s.minSizes[t]; ok {
		return n
	}
	if depth > 256 {
		return 0
	}
	sum := func(fs []*idl.Field) int {
		n := 0
		for _, f := range fs {
			n += s.fieldMinSize(f, depth+1)
		}
		return n
	}
	n := 0
	switch t := t.(type) {
	case *idl.Struct:
		n = sum(t.AllFields())
	case *idl.Union:
		n = sum(t.ParentFields()) + kindMinSize(t.SwitchKind())
		least := -1
		for _, c := range t.Cases {
			if m := s.fieldMinSize(c.Field, depth+1); least < 0 || m < least {
				least = m
			}
		}
		n += max(least, 0)
	case *idl.List:
		n = t.LengthType.PrimKind().Size() + t.CountType.PrimKind().Size()
		if !t.HasMissing {
			n += 8
		}
	case *idl.Enum:
		n = t.BaseKind().Size()
	case *idl.Primitive:
		n = primMinSize(t.Kind, 0)
	}
	if composite(t) && !s.frozen {
		s.minSizes[t] = n
	}
	return n
}

func (s *Schema) fieldMinSize(f *idl.Field, depth int) int {
	if f.Array {
		return 8
	}
	if p, ok := f.Type.Resolved.(*idl.Primitive); ok {
		return primMinSize(p.Kind, f.SizeLit)
	}
	return s.minSize(f.Type.Resolved, depth)
}

func primMinSize(k idl.PrimKind, sizeLit int) int {
	switch {
	case k.Size() > 0:
		return k.Size()
	case k == idl.Varint32 || k == idl.Varint64 || k == idl.Varuint32:
		return 1
	case k.IsString():
		return strWidth(k)
	case k == idl.Octets:
		return sizeLit
	}
	return 0
}

func kindMinSize(k idl.PrimKind) int {
	if k.Size() > 0 {
		return k.Size()
	}
	return 1
}

// strWidth is the size of a string kind's length prefix.
func strWidth(k idl.PrimKind) int {
	switch k {
	case idl.String8:
		return 1
	case idl.String16:
		return 2
	}
	return 4
}
