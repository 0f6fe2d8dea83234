package idl

import (
	"cmp"
	"errors"
	"fmt"
	"os"
)

// primitives holds the one shared *Primitive of each kind.
var primitives = func() []*Primitive {
	ps := make([]*Primitive, len(primNames))
	for k := range primNames {
		ps[k] = &Primitive{Kind: PrimKind(k)}
	}
	return ps
}()

// Prim returns the shared *Primitive of kind k, the value Check stores in
// TypeRef.Resolved, so primitives can be compared by pointer. It returns
// nil for an invalid kind.
func Prim(k PrimKind) *Primitive {
	if k == 0 || int(k) >= len(primitives) {
		return nil
	}
	return primitives[k]
}

// Decls returns the declarations of every scope of the file, depth-first in
// source order: a nested scope's declarations come where the scope does.
func (f *File) Decls() []Decl {
	var out []Decl
	for _, s := range f.Scopes {
		out = s.appendDecls(out)
	}
	return out
}

// AllDecls returns the declarations of s and of its nested scopes,
// depth-first in source order.
func (s *Scope) AllDecls() []Decl {
	return s.appendDecls(nil)
}

func (s *Scope) appendDecls(out []Decl) []Decl {
	if s == nil {
		return out
	}
	// Decls and Scopes are separate lists; merge them by position.
	d, n := 0, 0
	for d < len(s.Decls) || n < len(s.Scopes) {
		if n == len(s.Scopes) || d < len(s.Decls) && posBefore(s.Decls[d].DeclPos(), s.Scopes[n].Pos) {
			out = append(out, s.Decls[d])
			d++
			continue
		}
		out = s.Scopes[n].appendDecls(out)
		n++
	}
	return out
}

func posBefore(a, b Pos) bool {
	return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Col, b.Col)) < 0
}

// Structs returns the structs of the file, depth-first in source order.
func (f *File) Structs() []*Struct { return declsOf[*Struct](f) }

// Unions returns the unions of the file, depth-first in source order.
func (f *File) Unions() []*Union { return declsOf[*Union](f) }

// Enums returns the enums of the file, depth-first in source order.
func (f *File) Enums() []*Enum { return declsOf[*Enum](f) }

// Lists returns the lists of the file, depth-first in source order.
func (f *File) Lists() []*List { return declsOf[*List](f) }

// Typedefs returns the typedefs of the file, depth-first in source order.
func (f *File) Typedefs() []*Typedef { return declsOf[*Typedef](f) }

func declsOf[T Decl](f *File) []T {
	var out []T
	for _, d := range f.Decls() {
		if t, ok := d.(T); ok {
			out = append(out, t)
		}
	}
	return out
}

// QualifiedName returns a declaration's name qualified by its scopes:
// core::stream::Frame.
func QualifiedName(d Decl) string {
	if d.DeclScope() == nil {
		return d.DeclName()
	}
	return d.DeclScope().QualifiedName() + "::" + d.DeclName()
}

// Lookup finds a declaration by qualified name (core::stream::Frame) in
// the files, merging scopes of the same name as Check does.
func Lookup(name string, files ...*File) (Decl, bool) {
	c := &checker{root: newNamespace(), nsOf: map[*Scope]*namespace{}}
	for _, f := range files {
		if f != nil {
			for _, s := range f.Scopes {
				c.collect(s, c.root)
			}
		}
	}
	d := c.lookup("::"+name, nil)
	return d, d != nil
}

// PrimKind returns the kind of the primitive the reference resolved to, or
// 0 when it resolved to a declared type or is unresolved.
func (r *TypeRef) PrimKind() PrimKind {
	if p, ok := r.Resolved.(*Primitive); ok {
		return p.Kind
	}
	return 0
}

// SwitchKind returns the integer kind the union's discriminator is encoded
// as: the switch primitive, or the base of the switch enum. It returns 0
// when the switch type is unresolved or invalid.
func (u *Union) SwitchKind() PrimKind {
	if u.Switch == nil {
		return 0
	}
	switch t := u.Switch.Resolved.(type) {
	case *Primitive:
		if t.Kind.IsInteger() {
			return t.Kind
		}
	case *Enum:
		return t.BaseKind()
	}
	return 0
}

// SizedBy returns the field of the struct (own or inherited) that the size
// field size gives the length of, or nil. Field.SizeOf is set only when
// the size field and the octets field are declared in the same struct,
// because an inherited size field is shared with the parent's other
// children; SizedBy answers in the context of s.
func (s *Struct) SizedBy(size *Field) *Field {
	for _, f := range s.AllFields() {
		if f.SizeField == size {
			return f
		}
	}
	return nil
}

// ParseFiles reads, parses and checks the named files together. Parse
// errors of all files are reported before checking.
func ParseFiles(paths ...string) ([]*File, error) {
	var (
		files []*File
		errs  ErrorList
	)
	for _, path := range paths {
		src, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("idl: %w", err)
		}
		f, err := Parse(path, src)
		if list := ErrorList(nil); errors.As(err, &list) {
			errs = append(errs, list...)
			continue
		}
		files = append(files, f)
	}
	if len(errs) > 0 {
		errs.sort(paths)
		return nil, errs
	}
	if err := Check(files...); err != nil {
		return nil, err
	}
	return files, nil
}
