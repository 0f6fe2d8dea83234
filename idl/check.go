package idl

import (
	"fmt"
	"math"
	"strings"
)

// MaxChainLength is the longest chain of extends (ancestors of a struct) or
// of typedefs (typedefs followed from one name) that Check accepts. Real
// chains are short; the bound keeps checking hostile input linear.
const MaxChainLength = 64

// Check resolves the names of the files together and validates them. Scopes
// of the same qualified name merge across files, so a type in one file can
// extend or use a type declared in another.
//
// Check fills in the fields the model marks "Set by Check": TypeRef.Resolved
// and Typedefs, Struct.Parent, Union.Parent, Case.Kind, Field.SizeField and
// SizeOf, and the implicit EnumValue values. SizeOf is set only when the
// size field and its octets field are declared in the same struct: an
// inherited size field is shared by the parent's children (see
// Struct.SizedBy). Check returns an ErrorList sorted by position, or nil.
// It may be called again on the same files.
func Check(files ...*File) error {
	c := &checker{
		root:     newNamespace(),
		nsOf:     map[*Scope]*namespace{},
		typedefs: map[*Typedef]*typedefState{},
		infos:    map[*Struct]*structInfo{},
		unbound:  map[Type]uint8{},
	}
	var names []string
	seen := map[*File]bool{}
	for _, f := range files {
		if f == nil || seen[f] {
			continue
		}
		seen[f] = true
		names = append(names, f.Name)
		for _, s := range f.Scopes {
			c.collect(s, c.root)
		}
	}
	c.reportConflicts(c.root)
	c.resolveAll()
	c.linkParents()
	for _, d := range c.decls {
		if e, ok := d.(*Enum); ok {
			c.checkEnum(e)
		}
	}
	c.checkContainment()
	for _, d := range c.decls {
		switch d := d.(type) {
		case *Struct:
			c.checkStruct(d)
		case *Union:
			c.checkUnion(d)
		case *List:
			c.checkList(d)
		}
	}
	c.errs.sort(names)
	return c.errs.Err()
}

// namespace is the merged content of every scope of one qualified name.
type namespace struct {
	scopes     map[string]*namespace
	scopePos   map[string]Pos // where the first scope of each name is
	decls      map[string]Decl
	declsOrder []Decl
}

func newNamespace() *namespace {
	return &namespace{scopes: map[string]*namespace{}, scopePos: map[string]Pos{}, decls: map[string]Decl{}}
}

type typedefState struct {
	busy, done bool
	resolved   Type
	chain      []*Typedef
}

type checker struct {
	errs     ErrorList
	root     *namespace
	nsOf     map[*Scope]*namespace
	decls    []Decl // every declaration, depth-first in file order
	typedefs map[*Typedef]*typedefState
	tdStack  []*Typedef
	infos    map[*Struct]*structInfo
	unbound  map[Type]uint8 // memoized typeUnbounded: 1 computing, 2 yes, 3 no
}

// collect registers a scope's declarations and nested scopes in ns.
func (c *checker) collect(s *Scope, parent *namespace) {
	if s == nil {
		return
	}
	ns := parent.scopes[s.Name]
	if ns == nil {
		ns = newNamespace()
		parent.scopes[s.Name] = ns
		parent.scopePos[s.Name] = s.Pos
	}
	c.nsOf[s] = ns
	for _, d := range s.Decls {
		if d == nil {
			continue
		}
		name := d.DeclName()
		if _, prim := PrimKindOf(name); prim {
			c.errs.add(d.DeclPos(), "%q is a built-in type name and cannot be declared", name)
			continue
		}
		if prev, dup := ns.decls[name]; dup {
			c.errs.add(d.DeclPos(), "duplicate declaration of %q in scope %s (previous declaration at %s)",
				name, s.QualifiedName(), prev.DeclPos())
			continue
		}
		ns.decls[name] = d
		ns.declsOrder = append(ns.declsOrder, d)
		c.decls = append(c.decls, d)
	}
	for _, sub := range s.Scopes {
		c.collect(sub, ns)
	}
}

// reportConflicts reports declarations named like a sibling scope, which
// would make qualified names ambiguous.
func (c *checker) reportConflicts(ns *namespace) {
	for _, d := range ns.declsOrder {
		if pos, ok := ns.scopePos[d.DeclName()]; ok {
			c.errs.add(d.DeclPos(), "declaration %q conflicts with the scope of the same name at %s", d.DeclName(), pos)
		}
	}
	for _, sub := range ns.scopes {
		c.reportConflicts(sub)
	}
}

// lookup finds the declaration a type name refers to: a qualified name
// from the root, an unqualified one in scope and then each enclosing scope.
func (c *checker) lookup(name string, from *Scope) Decl {
	if strings.Contains(name, "::") {
		parts := strings.Split(strings.TrimPrefix(name, "::"), "::")
		ns := c.root
		for _, part := range parts[:len(parts)-1] {
			if ns = ns.scopes[part]; ns == nil {
				return nil
			}
		}
		return ns.decls[parts[len(parts)-1]]
	}
	for s := from; s != nil; s = s.Parent {
		if ns := c.nsOf[s]; ns != nil {
			if d, ok := ns.decls[name]; ok {
				return d
			}
		}
	}
	return nil
}

// resolve sets ref.Resolved and ref.Typedefs, reporting unknown names.
func (c *checker) resolve(ref *TypeRef, from *Scope) {
	if ref == nil {
		return
	}
	ref.Resolved, ref.Typedefs = nil, nil
	if k, ok := PrimKindOf(ref.Name); ok {
		ref.Resolved = Prim(k)
		return
	}
	switch d := c.lookup(ref.Name, from).(type) {
	case nil:
		c.errs.add(ref.Pos, "unknown type %q", ref.Name)
	case *Typedef:
		st := c.typedef(d)
		if st.resolved != nil {
			ref.Resolved = st.resolved
			ref.Typedefs = append([]*Typedef{d}, st.chain...)
		}
	case Type:
		ref.Resolved = d
	}
}

// typedef resolves a typedef's target once, detecting cycles.
func (c *checker) typedef(d *Typedef) *typedefState {
	st := c.typedefs[d]
	if st == nil {
		st = &typedefState{}
		c.typedefs[d] = st
	}
	if st.done {
		return st
	}
	if st.busy {
		names := []string{}
		for i := len(c.tdStack) - 1; i >= 0; i-- {
			if c.tdStack[i] == d {
				for _, td := range c.tdStack[i:] {
					names = append(names, td.Name)
				}
				break
			}
		}
		c.errs.add(d.Pos, "typedef cycle: %s -> %s", strings.Join(names, " -> "), d.Name)
		return &typedefState{}
	}
	st.busy = true
	c.tdStack = append(c.tdStack, d)
	if d.Target != nil {
		c.resolve(d.Target, d.Scope)
		st.resolved, st.chain = d.Target.Resolved, d.Target.Typedefs
	}
	c.tdStack = c.tdStack[:len(c.tdStack)-1]
	st.busy, st.done = false, true
	if len(st.chain) >= MaxChainLength {
		c.errs.add(d.Pos, "typedef %q starts a chain of more than %d typedefs", d.Name, MaxChainLength)
		st.resolved, st.chain = nil, nil
	}
	return st
}

// resolveAll resolves every type reference.
func (c *checker) resolveAll() {
	resolveFields := func(fields []*Field, scope *Scope) {
		for _, f := range fields {
			if f != nil {
				c.resolve(f.Type, scope)
			}
		}
	}
	for _, d := range c.decls {
		switch d := d.(type) {
		case *Struct:
			c.resolve(d.Extends, d.Scope)
			resolveFields(d.Fields, d.Scope)
		case *Union:
			c.resolve(d.Switch, d.Scope)
			c.resolve(d.Extends, d.Scope)
			for _, cs := range d.Cases {
				if cs != nil {
					resolveFields([]*Field{cs.Field}, d.Scope)
				}
			}
		case *Enum:
			c.resolve(d.Base, d.Scope)
		case *Typedef:
			c.typedef(d)
		case *List:
			c.resolve(d.LengthType, d.Scope)
			c.resolve(d.CountType, d.Scope)
			resolveFields(d.Fields, d.Scope)
		}
	}
}

// describe names a resolved type for messages.
func describe(t Type) string {
	switch t := t.(type) {
	case *Primitive:
		return t.Kind.String()
	case *Struct:
		return fmt.Sprintf("struct %q", t.Name)
	case *Union:
		return fmt.Sprintf("union %q", t.Name)
	case *Enum:
		return fmt.Sprintf("enum %q", t.Name)
	case *List:
		return fmt.Sprintf("list %q", t.Name)
	}
	return "an unknown type"
}

// parentStruct returns the struct an extends clause names, reporting any
// other kind of type.
func (c *checker) parentStruct(ref *TypeRef) *Struct {
	if ref == nil || ref.Resolved == nil {
		return nil
	}
	p, ok := ref.Resolved.(*Struct)
	if !ok {
		c.errs.add(ref.Pos, "extends must name a struct, found %s", describe(ref.Resolved))
	}
	return p
}

// linkParents sets Struct.Parent and Union.Parent and breaks extends cycles.
func (c *checker) linkParents() {
	var structs []*Struct
	for _, d := range c.decls {
		switch d := d.(type) {
		case *Struct:
			d.Parent = c.parentStruct(d.Extends)
			structs = append(structs, d)
		case *Union:
			d.Parent = c.parentStruct(d.Extends)
		}
	}
	const (
		white = iota
		onPath
		done
	)
	color := map[*Struct]int{}
	for _, s := range structs {
		var path []*Struct
		cur := s
		for cur != nil && color[cur] == white {
			color[cur] = onPath
			path = append(path, cur)
			cur = cur.Parent
		}
		if cur != nil && color[cur] == onPath {
			last := path[len(path)-1]
			var names []string
			for i := len(path) - 1; i >= 0; i-- {
				if path[i] == cur {
					for _, p := range path[i:] {
						names = append(names, p.Name)
					}
					break
				}
			}
			c.errs.add(last.Extends.Pos, "struct extends cycle: %s -> %s", strings.Join(names, " -> "), cur.Name)
			last.Parent = nil
		}
		for _, p := range path {
			color[p] = done
		}
	}

	// Bound the extends chains: depth counts a struct's ancestors.
	depth := map[*Struct]int{}
	for _, s := range structs {
		var path []*Struct
		cur := s
		for cur != nil {
			if _, known := depth[cur]; known {
				break
			}
			path = append(path, cur)
			cur = cur.Parent
		}
		base := -1
		if cur != nil {
			base = depth[cur]
		}
		for i := len(path) - 1; i >= 0; i-- {
			p := path[i]
			d := base + 1
			if d > MaxChainLength {
				c.errs.add(p.Extends.Pos, "struct %q has more than %d ancestors through extends", p.Name, MaxChainLength)
				p.Parent, d = nil, 0
			}
			depth[p], base = d, d
		}
	}
}

// number is an integer literal: int64 bits, and whether they stand for a
// uint64 above math.MaxInt64.
type number struct {
	v int64
	u bool
}

func (n number) String() string {
	if n.u {
		return fmt.Sprint(uint64(n.v))
	}
	return fmt.Sprint(n.v)
}

// succ returns n+1, or false when n is math.MaxUint64.
func (n number) succ() (number, bool) {
	switch {
	case n.u && uint64(n.v) == math.MaxUint64:
		return number{}, false
	case n.u:
		return number{n.v + 1, true}, true
	case n.v == math.MaxInt64:
		return number{math.MinInt64, true}, true
	}
	return number{n.v + 1, false}, true
}

// fits reports whether n is in the range of the integer kind k.
func (n number) fits(k PrimKind) bool {
	lo, hi, hiU := k.Range()
	if n.u {
		return uint64(n.v) <= hiU
	}
	return n.v >= lo && n.v <= hi
}

// rangeOf describes the range of an integer kind.
func rangeOf(k PrimKind) string {
	lo, _, hi := k.Range()
	if lo < 0 {
		_, hiS, _ := k.Range()
		return fmt.Sprintf("%d..%d", lo, hiS)
	}
	return fmt.Sprintf("0..%d", hi)
}

// integerKind returns the kind of an integer primitive type.
func integerKind(t Type) (PrimKind, bool) {
	p, ok := t.(*Primitive)
	if !ok || !p.Kind.IsInteger() {
		return 0, false
	}
	return p.Kind, true
}

// checkEnum validates an enum's base and fills in its implicit values.
func (c *checker) checkEnum(e *Enum) {
	base, baseOK := Uint8, true
	if e.Base != nil {
		base, baseOK = integerKind(e.Base.Resolved)
		if !baseOK && e.Base.Resolved != nil {
			c.errs.add(e.Base.Pos, "enum base must be an integer type, found %s", describe(e.Base.Resolved))
		}
	}
	names := map[string]*EnumValue{}
	values := map[int64]*EnumValue{}
	next, nextOK := number{}, true
	for _, v := range e.Values {
		if v == nil {
			continue
		}
		if prev, dup := names[v.Name]; dup {
			c.errs.add(v.Pos, "duplicate enum constant %q in enum %q (previous at %s)", v.Name, e.Name, prev.Pos)
		} else {
			names[v.Name] = v
		}
		n := number{v.Value, v.Uint}
		if !v.Explicit {
			if !nextOK {
				c.errs.add(v.Pos, "value of enum constant %q overflows uint64", v.Name)
				continue
			}
			n = next
			v.Value, v.Uint = n.v, n.u
		}
		next, nextOK = n.succ()
		if !baseOK {
			continue
		}
		if !n.fits(base) {
			c.errs.add(v.Pos, "value %s of enum constant %q does not fit %s (%s)", n, v.Name, base, rangeOf(base))
			continue
		}
		if prev, dup := values[n.v]; dup {
			c.errs.add(v.Pos, "enum constant %q has the same value %s as %q", v.Name, n, prev.Name)
			continue
		}
		values[n.v] = v
	}
}

// edge is a by-value containment: the type at to is part of the encoding
// of the declaration holding it, through field (nil for extends) at pos.
type edge struct {
	to    Type
	field *Field
	pos   Pos
}

// members lists the struct, union and list types a declaration contains
// by value, arrays included.
func members(t Type) []edge {
	var out []edge
	add := func(f *Field) {
		if f == nil || f.Type == nil {
			return
		}
		switch f.Type.Resolved.(type) {
		case *Struct, *Union, *List:
			out = append(out, edge{to: f.Type.Resolved, field: f, pos: f.Pos})
		}
	}
	switch t := t.(type) {
	case *Struct:
		if t.Parent != nil {
			out = append(out, edge{to: t.Parent, pos: t.Extends.Pos})
		}
		for _, f := range t.Fields {
			add(f)
		}
	case *Union:
		if t.Parent != nil {
			out = append(out, edge{to: t.Parent, pos: t.Extends.Pos})
		}
		for _, cs := range t.Cases {
			if cs != nil {
				add(cs.Field)
			}
		}
	case *List:
		for _, f := range t.Fields {
			add(f)
		}
	}
	return out
}

func typeName(t Type) string {
	if t == nil {
		return "?"
	}
	return t.TypeName()
}

// checkContainment reports types that contain themselves by value.
func (c *checker) checkContainment() {
	const (
		white = iota
		onPath
		done
	)
	color := map[Type]int{}
	var path []Type
	var visit func(t Type)
	visit = func(t Type) {
		color[t] = onPath
		path = append(path, t)
		for _, e := range members(t) {
			switch color[e.to] {
			case white:
				visit(e.to)
			case onPath:
				var names []string
				for i := len(path) - 1; i >= 0; i-- {
					if path[i] == e.to {
						for _, p := range path[i:] {
							names = append(names, typeName(p))
						}
						break
					}
				}
				how := "through its parent"
				if e.field != nil {
					how = fmt.Sprintf("through field %q", e.field.Name)
				}
				c.errs.add(e.pos, "%s contains itself by value %s (%s -> %s)",
					describe(t), how, strings.Join(names, " -> "), typeName(e.to))
			}
		}
		path = path[:len(path)-1]
		color[t] = done
	}
	for _, d := range c.decls {
		if t, ok := d.(Type); ok && color[t] == white {
			visit(t)
		}
	}
}
