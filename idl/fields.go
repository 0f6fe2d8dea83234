package idl

import (
	"fmt"
	"math"
	"slices"
)

// The field checks never materialize a struct's inherited fields (as
// AllFields does): with many children of a large parent that would be
// quadratic. They look names up per declaring struct instead, along extends
// chains that linkParents has made acyclic and at most MaxChainLength long.

// structInfo is what the field checks need to know about a struct.
type structInfo struct {
	names  map[string]int // own field name → index in Fields (first occurrence)
	offset int            // the number of inherited fields
}

func (c *checker) info(s *Struct) *structInfo {
	if in, ok := c.infos[s]; ok {
		return in
	}
	in := &structInfo{names: make(map[string]int, len(s.Fields))}
	for j, f := range s.Fields {
		if f == nil {
			continue
		}
		if _, dup := in.names[f.Name]; !dup {
			in.names[f.Name] = j
		}
	}
	if s.Parent != nil {
		in.offset = c.info(s.Parent).offset + len(s.Parent.Fields)
	}
	c.infos[s] = in
	return in
}

// lineage returns s and its ancestors, outermost first.
func lineage(s *Struct) []*Struct {
	var chain []*Struct
	for a := s; a != nil; a = a.Parent {
		chain = append(chain, a)
	}
	slices.Reverse(chain)
	return chain
}

// lookupField finds the first field named name in the encoding of s
// (inherited fields first): the field, the struct declaring it and its
// index in the encoding. s may be nil.
func (c *checker) lookupField(s *Struct, name string) (f *Field, owner *Struct, index int, ok bool) {
	for _, a := range lineage(s) {
		in := c.info(a)
		if j, found := in.names[name]; found {
			return a.Fields[j], a, in.offset + j, true
		}
	}
	return nil, nil, 0, false
}

// lastField returns the last field in the encoding of s, or nil.
func lastField(s *Struct) *Field {
	for a := s; a != nil; a = a.Parent {
		if n := len(a.Fields); n > 0 {
			return a.Fields[n-1]
		}
	}
	return nil
}

// typeUnbounded reports whether a value of type t runs to the end of the
// enclosing buffer: plain octets, a struct whose last field is unbounded,
// or a union with an unbounded case. Lists and arrays carry their length.
func (c *checker) typeUnbounded(t Type) bool {
	switch t := t.(type) {
	case *Primitive:
		return t.Kind == Octets
	case *Struct, *Union:
	default:
		return false
	}
	const (
		computing = iota + 1
		yes
		no
	)
	switch c.unbound[t] {
	case computing: // a containment cycle, reported elsewhere
		return false
	case yes:
		return true
	case no:
		return false
	}
	c.unbound[t] = computing
	result := false
	switch t := t.(type) {
	case *Struct:
		result = c.fieldUnbounded(lastField(t))
	case *Union:
		for _, cs := range t.Cases {
			if cs != nil && c.fieldUnbounded(cs.Field) {
				result = true
				break
			}
		}
	}
	c.unbound[t] = no
	if result {
		c.unbound[t] = yes
	}
	return result
}

// fieldUnbounded reports whether a field runs to the end of the buffer.
func (c *checker) fieldUnbounded(f *Field) bool {
	if f == nil || f.Type == nil || f.Array || f.SizeLit > 0 || f.SizeName != "" {
		return false
	}
	return c.typeUnbounded(f.Type.Resolved)
}

// unboundedWhat describes why a field is unbounded.
func unboundedWhat(f *Field) string {
	if f.Unbounded() {
		return "unbounded octets"
	}
	return fmt.Sprintf("unbounded (%s ends with unbounded data)", describe(f.Type.Resolved))
}

// checkInherited reports a field named like one inherited from parent.
func (c *checker) checkInherited(f *Field, parent *Struct) {
	if prev, owner, _, ok := c.lookupField(parent, f.Name); ok {
		c.errs.add(f.Pos, "duplicate field %q: already declared in %q at %s, inherited through extends", f.Name, owner.Name, prev.Pos)
	}
}

// checkStruct validates a struct's own fields in the context of its
// inherited ones.
func (c *checker) checkStruct(s *Struct) {
	in := c.info(s)
	for _, f := range s.Fields {
		if f != nil {
			f.SizeField, f.SizeOf = nil, nil
		}
	}
	if len(s.Fields) > 0 && s.Fields[0] != nil {
		if last := lastField(s.Parent); c.fieldUnbounded(last) {
			c.errs.add(s.Fields[0].Pos, "struct %q cannot add fields: inherited field %q is unbounded and must stay the last field",
				s.Name, last.Name)
		}
	}
	sized := map[*Field]*Field{}
	for j, f := range s.Fields {
		if f == nil || f.Type == nil {
			continue
		}
		if first := in.names[f.Name]; first != j {
			c.errs.add(f.Pos, "duplicate field %q (previous at %s)", f.Name, s.Fields[first].Pos)
		} else {
			c.checkInherited(f, s.Parent)
		}
		c.checkFieldType(f, memberOfStruct)
		c.checkDefault(f)
		if f.SizeName != "" {
			c.linkStructSize(s, f, in.offset+j, sized)
		}
		if j < len(s.Fields)-1 && c.fieldUnbounded(f) {
			c.errs.add(f.Pos, "%s field %q must be the last field of struct %q", unboundedWhat(f), f.Name, s.Name)
		}
	}
}

// linkStructSize links the octets[name] field f, at index i of the encoding
// of s, to its size field. sized maps the size fields already used in s.
func (c *checker) linkStructSize(s *Struct, f *Field, i int, sized map[*Field]*Field) {
	size, owner, idx, ok := c.lookupField(s, f.SizeName)
	switch {
	case !ok:
		c.errs.add(f.Pos, "unknown size field %q for octets field %q", f.SizeName, f.Name)
		return
	case idx >= i:
		c.errs.add(f.Pos, "size field %q of octets field %q must be declared before it", f.SizeName, f.Name)
		return
	case !c.validSize(f, size, idx == i-1):
		return
	}
	if prev, dup := sized[size]; dup {
		c.errs.add(f.Pos, "size field %q already sizes octets field %q; a size field may size only one field", size.Name, prev.Name)
		return
	}
	sized[size] = f
	f.SizeField = size
	if owner == s {
		// An inherited size field is shared with the parent's other
		// children, so only a size field of the same struct points back.
		size.SizeOf = f
	}
}

// validSize reports whether size can be the size field of octets field f;
// adjacent says whether size immediately precedes f in the encoding.
func (c *checker) validSize(f, size *Field, adjacent bool) bool {
	if size.Type == nil || size.Type.Resolved == nil {
		return false // unresolved: already reported
	}
	kind, isInt := integerKind(size.Type.Resolved)
	switch {
	case size.Array || !isInt:
		what := describe(size.Type.Resolved)
		if size.Array {
			what += "[]"
		}
		c.errs.add(f.Pos, "size field %q of octets field %q must be an integer, found %s", size.Name, f.Name, what)
	case size.Default != nil:
		c.errs.add(f.Pos, "size field %q of octets field %q cannot have a default (it is computed from the octets)", size.Name, f.Name)
	case f.Default != nil && f.Default.Kind == NullValue && !kind.IsSigned():
		c.errs.add(f.Pos, "size field %q must be a signed integer, not %s: octets field %q defaults to null, encoded as size -1",
			size.Name, kind, f.Name)
	case (kind == Varint32 || kind == Varint64 || kind == Varuint32) && !adjacent:
		c.errs.add(f.Pos, "varint size field %q must immediately precede octets field %q", size.Name, f.Name)
	default:
		return true
	}
	return false
}

// checkFieldType validates where a field's type may appear.
func (c *checker) checkFieldType(f *Field, in memberKind) {
	t := f.Type.Resolved
	if t == nil {
		return
	}
	p, isPrim := t.(*Primitive)
	octets := isPrim && p.Kind == Octets
	if (f.SizeLit > 0 || f.SizeName != "") && !octets {
		c.errs.add(f.Pos, "fixed-size and sized arrays are supported only for octets, not %s", describe(t))
		return
	}
	if f.Array && c.typeUnbounded(t) {
		if octets {
			c.errs.add(f.Pos, "octets cannot be an array element (field %q): use octets[N] or octets[sizeField]", f.Name)
		} else {
			c.errs.add(f.Pos, "array field %q: element type %s ends with unbounded data and cannot be an array element", f.Name, describe(t))
		}
		return
	}
	if in == memberOfList {
		switch {
		case octets:
			c.errs.add(f.Pos, "list field %q cannot be octets", f.Name)
		case !f.Array && c.typeUnbounded(t):
			c.errs.add(f.Pos, "list field %q cannot be unbounded: %s ends with unbounded data", f.Name, describe(t))
		}
	}
}

// checkDefault validates a field's default value against its type.
func (c *checker) checkDefault(f *Field) {
	d := f.Default
	if d == nil || f.Type == nil || f.Type.Resolved == nil {
		return
	}
	if f.Array {
		c.errs.add(d.Pos, "array field %q cannot have a default", f.Name)
		return
	}
	switch t := f.Type.Resolved.(type) {
	case *Primitive:
		k := t.Kind
		switch {
		case k.IsInteger():
			if d.Kind != IntValue {
				c.errs.add(d.Pos, "default of %s field %q must be an integer, found %s", k, f.Name, d)
				return
			}
			if n := (number{d.Int, d.Uint}); !n.fits(k) {
				c.errs.add(d.Pos, "default %s of field %q does not fit %s (%s)", n, f.Name, k, rangeOf(k))
			}
		case k.IsString():
			switch d.Kind {
			case NullValue:
			case StringValue:
				if max := maxStringLen(k); len(d.Str) > max {
					c.errs.add(d.Pos, "default of %s field %q is too long: %d bytes, the maximum is %d", k, f.Name, len(d.Str), max)
				}
			default:
				c.errs.add(d.Pos, "default of %s field %q must be a string or null, found %s", k, f.Name, d)
			}
		case k == Octets:
			switch {
			case d.Kind == NullValue && f.SizeName != "":
			case d.Kind == NullValue:
				c.errs.add(d.Pos, "null default is allowed only on strings and octets sized by a field (octets[sizeField]), not on %s field %q",
					octetsForm(f), f.Name)
			default:
				c.errs.add(d.Pos, "octets field %q cannot default to %s: only octets[sizeField] may default, to null", f.Name, d)
			}
		}
	case *Enum:
		if d.Kind == IdentValue {
			if _, ok := t.Lookup(d.Ident); ok {
				return
			}
			c.errs.add(d.Pos, "default of field %q: %q is not a constant of enum %q", f.Name, d.Ident, t.Name)
			return
		}
		c.errs.add(d.Pos, "default of enum field %q must be a constant of enum %q, found %s", f.Name, t.Name, d)
	default:
		c.errs.add(d.Pos, "field %q of %s cannot have a default", f.Name, describe(t))
	}
}

// maxStringLen is the longest string a string kind can hold: its length
// prefix is signed.
func maxStringLen(k PrimKind) int {
	switch k {
	case String8:
		return math.MaxInt8
	case String16:
		return math.MaxInt16
	}
	return math.MaxInt32
}

// octetsForm spells an octets field's type.
func octetsForm(f *Field) string {
	switch {
	case f.SizeLit > 0:
		return fmt.Sprintf("octets[%d]", f.SizeLit)
	case f.SizeName != "":
		return fmt.Sprintf("octets[%s]", f.SizeName)
	}
	return "unbounded octets"
}

// checkUnion validates a union's switch type, parent and cases.
func (c *checker) checkUnion(u *Union) {
	var (
		kind   PrimKind
		kindOK bool
		enum   *Enum
		names  = map[string]*Field{}
		values = map[int64]*Case{}
	)
	if u.Switch != nil && u.Switch.Resolved != nil {
		switch t := u.Switch.Resolved.(type) {
		case *Enum:
			enum = t
		default:
			if kind, kindOK = integerKind(t); !kindOK {
				c.errs.add(u.Switch.Pos, "switch type must be an integer type or an enum, found %s", describe(t))
			}
		}
	}
	if last := lastField(u.Parent); c.fieldUnbounded(last) {
		c.errs.add(u.Extends.Pos, "union %q cannot extend struct %q: its field %q is unbounded and must stay the last field",
			u.Name, u.Parent.Name, last.Name)
	}
	for _, cs := range u.Cases {
		if cs == nil {
			continue
		}
		c.caseValue(u, cs, enum, kind, kindOK, values)
		f := cs.Field
		if f == nil || f.Type == nil {
			continue
		}
		f.SizeField, f.SizeOf = nil, nil
		if prev, dup := names[f.Name]; dup {
			c.errs.add(f.Pos, "duplicate field %q (previous at %s)", f.Name, prev.Pos)
		} else {
			names[f.Name] = f
			c.checkInherited(f, u.Parent)
		}
		c.checkFieldType(f, memberOfCase)
		c.checkDefault(f)
		if f.SizeName != "" {
			// The kind separates the parent's fields from the case, so a
			// size field there is never adjacent.
			if size, _, _, ok := c.lookupField(u.Parent, f.SizeName); !ok {
				c.errs.add(f.Pos, "unknown size field %q for octets field %q", f.SizeName, f.Name)
			} else if c.validSize(f, size, false) {
				f.SizeField = size
			}
		}
	}
}

// caseValue resolves a case label to Case.Kind and reports duplicates.
func (c *checker) caseValue(u *Union, cs *Case, enum *Enum, kind PrimKind, kindOK bool, values map[int64]*Case) {
	v := cs.Value
	if v == nil {
		return
	}
	switch {
	case enum != nil:
		if v.Kind != IdentValue {
			c.errs.add(v.Pos, "case value must be a constant of switch enum %q, found %s", enum.Name, v)
			return
		}
		ev, ok := enum.Lookup(v.Ident)
		if !ok {
			c.errs.add(v.Pos, "case value %q is not a constant of switch enum %q", v.Ident, enum.Name)
			return
		}
		cs.Kind = ev.Value
	case kindOK:
		if v.Kind != IntValue {
			c.errs.add(v.Pos, "case value must be an integer for switch type %s, found %s", kind, v)
			return
		}
		if n := (number{v.Int, v.Uint}); !n.fits(kind) {
			c.errs.add(v.Pos, "case value %s does not fit switch type %s (%s)", n, kind, rangeOf(kind))
			return
		}
		cs.Kind = v.Int
	default:
		return
	}
	if prev, dup := values[cs.Kind]; dup {
		c.errs.add(v.Pos, "duplicate case value %s in union %q (previous at %s)", v, u.Name, prev.Value.Pos)
		return
	}
	values[cs.Kind] = cs
}

// checkList validates a list's parameters and fields.
func (c *checker) checkList(l *List) {
	checkParam := func(ref *TypeRef, what string) PrimKind {
		if ref == nil || ref.Resolved == nil {
			return 0
		}
		if p, ok := ref.Resolved.(*Primitive); ok && (p.Kind == Uint8 || p.Kind == Uint16 || p.Kind == Uint32) {
			return p.Kind
		}
		c.errs.add(ref.Pos, "list %s type must be uint8, uint16 or uint32, found %s", what, describe(ref.Resolved))
		return 0
	}
	checkParam(l.LengthType, "length")
	count := checkParam(l.CountType, "count")
	if l.HasMissing && (l.Missing < 0 || l.Missing > math.MaxUint8) {
		c.errs.add(l.Pos, "list missing-field byte %d does not fit uint8", l.Missing)
	}
	switch _, maxCount, _ := count.Range(); {
	case !l.HasMissing && len(l.Fields) > 64:
		c.errs.add(l.Pos, "list %q has %d fields, but a list without a missing-field byte has at most 64 (one bit each in a uint64 mask)",
			l.Name, len(l.Fields))
	case count != 0 && int64(len(l.Fields)) > maxCount:
		c.errs.add(l.Pos, "list %q has %d fields, more than its count type %s can count", l.Name, len(l.Fields), count)
	}
	names := map[string]*Field{}
	for _, f := range l.Fields {
		if f == nil || f.Type == nil {
			continue
		}
		f.SizeField, f.SizeOf = nil, nil
		if prev, dup := names[f.Name]; dup {
			c.errs.add(f.Pos, "duplicate field %q (previous at %s)", f.Name, prev.Pos)
		} else {
			names[f.Name] = f
		}
		c.checkFieldType(f, memberOfList)
		c.checkDefault(f)
	}
}
