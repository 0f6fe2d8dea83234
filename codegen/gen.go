package main

import (
	"bytes"
	"embed"
	"fmt"
	"go/format"
	"sort"
	"strings"
	"text/template"

	"github.com/sluicehq/sluice/idl"
)

//go:embed templates/*.tmpl
var templateFS embed.FS

var templates = template.Must(template.New("").Funcs(template.FuncMap{
	"wrapStep":      wrapStep,
	"getters":       getters,
	"setters":       setters,
	"fillCase":      fillCase,
	"closeCase":     closeCase,
	"childField":    childField,
	"sharedGetters": sharedGetters,
	"sharedSetters": sharedSetters,
	"quote":         func(s string) string { return fmt.Sprintf("%q", s) },
	"hex":           func(v uint32) string { return fmt.Sprintf("0x%08x", v) },
	"lower":         lowerFirst,
	"isModule":      func(s string) bool { return strings.Contains(s, ".") },
	"prefixCheck":   prefixCheck,
	"allStatic":     allStatic,
	"listGetters":   listGetters,
	"wrapRoom":      wrapRoom,
	"wrapRoomCond":  wrapRoomCond,
	"buildTail":     buildTail,
	"hasString":     hasString,
	"readKind":      func(k idl.PrimKind, big bool, at string) string { return readInt(k, big, "buf", at, "int") },
	"writeKind":     func(k idl.PrimKind, big bool, at, v string) string { return writeInt(k, big, "b.buf", at, v) },
	"readMask":      func(big bool, at string) string { return readInt(idl.Uint64, big, "buf", at, "uint64") },
	"writeMask":     func(big bool, at string) string { return writeInt(idl.Uint64, big, "b.buf", at, "b.mask") },
	"add":           func(a, b int) int { return a + b },
	"kindMax":       func(k idl.PrimKind) uint64 { _, _, m := k.Range(); return m },
	"kindRead": func(t *typ) string {
		return readInt(t.Kind.Prim, t.Kind.Big, "f.buf", offExpr(t, t.Kind), t.Kind.GoType)
	},
}).ParseFS(templateFS, "templates/*.tmpl"))

// Options control one generated file.
type Options struct {
	Package string // Go package name
	Source  string // IDL path shown in the header, relative to the module root
	// Readers and Builders switch the template groups; both default to on
	// when neither is set.
	NoBuilders bool
}

type fileData struct {
	Options
	Enums    []*enumType
	Types    []*typ
	Aliases  []alias
	Imports  []string
	Builders bool
}

type alias struct {
	Name, Target string
	Builder      bool
}

// Generate renders the Go source for the declarations of f. f must have
// been checked with idl.Check.
func Generate(f *idl.File, opts Options) ([]byte, error) {
	g := &generator{names: map[string]idl.Pos{}}
	data := fileData{Options: opts, Builders: !opts.NoBuilders}
	for _, d := range f.Decls() {
		if err := g.claim(d.DeclName(), d.DeclPos()); err != nil {
			return nil, err
		}
		switch d := d.(type) {
		case *idl.Enum:
			data.Enums = append(data.Enums, g.enum(d))
		case *idl.Struct:
			t, err := g.structType(d)
			if err != nil {
				return nil, err
			}
			data.Types = append(data.Types, t)
		case *idl.Union:
			t, err := g.unionType(d)
			if err != nil {
				return nil, err
			}
			data.Types = append(data.Types, t)
		case *idl.Typedef:
			if a, ok := g.typedef(d); ok {
				data.Aliases = append(data.Aliases, a)
			}
		case *idl.List:
			t, err := g.listType(d)
			if err != nil {
				return nil, err
			}
			data.Types = append(data.Types, t)
		}
	}
	for _, t := range data.Types {
		if err := checkMethodNames(t); err != nil {
			return nil, err
		}
		g.keepShared(t)
	}
	imports := map[string]bool{}
	var body bytes.Buffer
	for _, e := range data.Enums {
		imports["strconv"] = true
		if err := templates.ExecuteTemplate(&body, "enum.tmpl", e); err != nil {
			return nil, err
		}
	}
	for _, t := range data.Types {
		if t.List && (!t.HasMissing || t.Required != 0) {
			imports["math/bits"] = true
		}
		imports["encoding/binary"] = true
		imports["github.com/sluicehq/sluice/idl/flyweight"] = true
		reader, builder := "reader.tmpl", "builder.tmpl"
		if t.List {
			reader, builder = "list_reader.tmpl", "list_builder.tmpl"
		}
		if err := templates.ExecuteTemplate(&body, reader, t); err != nil {
			return nil, err
		}
		if data.Builders {
			if err := templates.ExecuteTemplate(&body, builder, t); err != nil {
				return nil, err
			}
		}
	}
	body.WriteString(arrayValidators(data.Types))
	if err := templates.ExecuteTemplate(&body, "alias.tmpl", data); err != nil {
		return nil, err
	}
	for imp := range imports {
		data.Imports = append(data.Imports, imp)
	}
	sort.Strings(data.Imports)
	var out bytes.Buffer
	if err := templates.ExecuteTemplate(&out, "file.tmpl", data); err != nil {
		return nil, err
	}
	out.Write(body.Bytes())
	src, err := format.Source(out.Bytes())
	if err != nil {
		return out.Bytes(), fmt.Errorf("%s: generated code does not format: %w", opts.Source, err)
	}
	// Unused imports are dropped by construction: binary is referenced by
	// every reader, strconv by every enum, and flyweight by every type.
	return src, nil
}

type generator struct {
	names map[string]idl.Pos
}

func (g *generator) claim(name string, pos idl.Pos) error {
	if prev, ok := g.names[name]; ok {
		return fmt.Errorf("%s: %s is declared again (first at %s); one Go package cannot hold both", pos, name, prev)
	}
	g.names[name] = pos
	return nil
}

func (g *generator) enum(e *idl.Enum) *enumType {
	et := &enumType{Name: e.Name, Base: intGoType(e.BaseKind()), Doc: scopeDoc(e)}
	for _, v := range e.Values {
		lit := fmt.Sprint(v.Value)
		if e.BaseKind() == idl.Uint64 && v.Value < 0 {
			lit = fmt.Sprint(uint64(v.Value))
		}
		et.Values = append(et.Values, enumValue{IDL: v.Name, Const: e.Name + constName(v.Name), Lit: lit})
	}
	return et
}

func scopeDoc(d idl.Decl) string {
	return d.DeclScope().QualifiedName() + "::" + d.DeclName()
}

func (g *generator) typedef(d *idl.Typedef) (alias, bool) {
	switch t := d.Target.Resolved.(type) {
	case *idl.Struct, *idl.Union:
		return alias{Name: d.Name, Target: t.TypeName(), Builder: true}, true
	case *idl.Enum:
		return alias{Name: d.Name, Target: t.Name}, true
	}
	return alias{}, false
}

func (g *generator) structType(s *idl.Struct) (*typ, error) {
	t := &typ{Name: s.Name, Doc: scopeDoc(s), HasID: s.HasTypeID, TypeID: s.TypeID, Extends: s.Extends != nil, Big: s.Scope.ByteOrder == idl.Network}
	if err := g.fields(t, s.AllFields()); err != nil {
		return nil, err
	}
	return t, nil
}

func (g *generator) unionType(u *idl.Union) (*typ, error) {
	t := &typ{Name: u.Name, Doc: scopeDoc(u), Union: true, Extends: u.Extends != nil, Big: u.Scope.ByteOrder == idl.Network}
	kindField := &idl.Field{Pos: u.Pos, Name: "kind", Type: u.Switch}
	fields := append(append([]*idl.Field(nil), u.ParentFields()...), kindField)
	if err := g.fields(t, fields); err != nil {
		return nil, err
	}
	t.Kind = t.Fields[len(t.Fields)-1]
	t.Fields[len(t.Fields)-1].Last = false
	caseOff, caseStatic := 0, t.Kind.Static
	if caseStatic {
		caseOff = t.Kind.Off + t.Kind.Size
	}
	minCase := -1
	for _, c := range u.Cases {
		f, err := g.field(t, c.Field, t.Kind.Ordinal, t.Big)
		if err != nil {
			return nil, err
		}
		f.Static, f.Off, f.Last = caseStatic, caseOff, true
		t.Cases = append(t.Cases, &ucase{Value: c.Kind, Const: t.Name + "Kind" + goName(c.Field.Name), F: f})
		if ms := minSize(f); minCase < 0 || ms < minCase {
			minCase = ms
		}
	}
	t.Fixed = -1
	t.MinSize += max(minCase, 0)
	t.Shared = g.sharedFields(t, u)
	return t, nil
}

// sharedFields finds the fields that two or more struct cases of u declare
// with one name and one scalar or string type. A name that some case
// declares with another type, or as a nested value, is left out, so that
// the union's accessor covers every case that has the name.
func (g *generator) sharedFields(t *typ, u *idl.Union) []*shared {
	byName := map[string]*shared{}
	mixed := map[string]bool{}
	var names []string
	for i, c := range u.Cases {
		s, ok := c.Field.Type.Resolved.(*idl.Struct)
		if !ok || c.Field.Array {
			continue
		}
		for _, f := range s.AllFields() {
			gf, err := g.field(t, f, 0, t.Big)
			if err != nil {
				// The case's own type reports the error when it is generated.
				mixed[f.Name] = true
				continue
			}
			switch gf.Cat {
			case catInt, catEnum, catVarint, catString:
			default:
				mixed[f.Name] = true
				continue
			}
			sh := byName[f.Name]
			switch {
			case sh == nil:
				sh = &shared{field: gf}
				byName[f.Name] = sh
				names = append(names, f.Name)
			case sh.Cat != gf.Cat || sh.Prim != gf.Prim || sh.GoType != gf.GoType || sh.Width != gf.Width:
				mixed[f.Name] = true
			}
			sh.Cases = append(sh.Cases, t.Cases[i])
		}
	}
	var out []*shared
	for _, n := range names {
		if sh := byName[n]; len(sh.Cases) >= 2 && !mixed[n] {
			if reserved[sh.Go] {
				sh.Go += "Field" // as the case's own type renames it
			}
			out = append(out, sh)
		}
	}
	return out
}

// sharedName is the package-level function that reports which kinds of
// union t have shared field sh.
func sharedName(t *typ, sh *shared) string { return t.Name + "Has" + sh.Go }

// sharedMethods lists the methods the union's reader and builder gain for
// sh.
func sharedMethods(sh *shared) []string {
	if sh.Cat == catString {
		return []string{sh.Go, sh.Go + "Bytes", sh.Go + "Null"}
	}
	return []string{sh.Go}
}

// keepShared drops the shared fields whose accessors would collide with a
// method of the union or with a declaration of the file, and claims the
// names of the rest. A union whose own methods or declarations take Case,
// ReadShared or <Union>Shared gets no shared accessors at all.
func (g *generator) keepShared(t *typ) {
	if len(t.Shared) == 0 {
		return
	}
	taken := map[string]bool{}
	for n := range reserved {
		taken[n] = true
	}
	for _, f := range append(append([]*field(nil), t.Fields...), casesFields(t)...) {
		for _, m := range methodNames(f) {
			taken[m] = true
		}
	}
	if _, declared := g.names[t.Name+"Shared"]; declared || taken["Case"] || taken["ReadShared"] {
		t.Shared = nil
		return
	}
	taken["Case"], taken["ReadShared"] = true, true
	kept := t.Shared[:0]
	for _, sh := range t.Shared {
		clash := false
		for _, m := range sharedMethods(sh) {
			clash = clash || taken[m]
		}
		if _, declared := g.names[sharedName(t, sh)]; clash || declared {
			continue
		}
		g.names[sharedName(t, sh)] = sh.F.Pos
		kept = append(kept, sh)
	}
	t.Shared = kept
	if len(kept) > 0 {
		g.names[t.Name+"Shared"] = kept[0].F.Pos
	}
}

func (g *generator) listType(l *idl.List) (*typ, error) {
	t := &typ{Name: l.Name, Doc: scopeDoc(l), List: true, Big: l.Scope.ByteOrder == idl.Network,
		HasMissing: l.HasMissing, Missing: l.Missing}
	t.LenKind = l.LengthType.Resolved.(*idl.Primitive).Kind
	t.CountKind = l.CountType.Resolved.(*idl.Primitive).Kind
	if len(l.Fields) > 64 {
		return nil, fmt.Errorf("%s: list %s: at most 64 fields", l.Pos, l.Name)
	}
	if err := g.fields(t, l.Fields); err != nil {
		return nil, err
	}
	for i, f := range t.Fields {
		f.Static = false
		if l.Fields[i].Required {
			t.Required |= 1 << i
		}
	}
	t.Fixed = -1
	t.MinSize = listHeaderSize(t.LenKind, t.CountKind, t.HasMissing)
	return t, nil
}

func listHeaderSize(l, c idl.PrimKind, missing bool) int {
	if missing {
		return l.Size() + c.Size()
	}
	return l.Size() + c.Size() + 8
}

// fields lays out fields in encoding order and computes static offsets.
func (g *generator) fields(t *typ, fs []*idl.Field) error {
	off, static := 0, true
	byName := map[*idl.Field]*field{}
	for i, f := range fs {
		gf, err := g.field(t, f, i, t.Big)
		if err != nil {
			return err
		}
		byName[f] = gf
		gf.Static, gf.Off = static, off
		if gf.Size > 0 && static {
			off += gf.Size
		} else {
			static = false
		}
		t.MinSize += minSize(gf)
		t.Fields = append(t.Fields, gf)
	}
	for _, gf := range t.Fields {
		if gf.F.SizeField != nil {
			gf.SizeBy = byName[gf.F.SizeField]
			gf.SizeBy.SizeFor = gf
		}
	}
	if len(t.Fields) > 0 {
		t.Fields[len(t.Fields)-1].Last = true
	}
	t.Fixed = -1
	if static {
		t.Fixed = off
	}
	return nil
}

func minSize(f *field) int {
	switch f.Cat {
	case catInt, catEnum, catOctetsN:
		return f.Size
	case catVarint:
		return 1
	case catString:
		return f.Width
	case catArray:
		return 8
	case catStruct:
		return f.Elem.MinSize
	}
	return 0
}

func (g *generator) field(t *typ, f *idl.Field, ordinal int, big bool) (*field, error) {
	gf := &field{F: f, Name: f.Name, Go: goName(f.Name), Ordinal: ordinal, Default: f.Default, Big: big}
	gf.Null = f.Default != nil && f.Default.Kind == idl.NullValue
	if f.Array {
		el, err := elemOf(f.Type.Resolved, big)
		if err != nil {
			return nil, fmt.Errorf("%s: field %s: %w", f.Pos, f.Name, err)
		}
		gf.Cat, gf.Elem = catArray, el
		return gf, nil
	}
	switch rt := f.Type.Resolved.(type) {
	case *idl.Primitive:
		k := rt.Kind
		gf.Prim = k
		switch {
		case k.Size() > 0:
			gf.Cat, gf.Size, gf.GoType = catInt, k.Size(), intGoType(k)
		case k == idl.Varint32 || k == idl.Varint64 || k == idl.Varuint32:
			gf.Cat, gf.GoType = catVarint, intGoType(k)
		case k.IsString():
			gf.Cat, gf.Width = catString, map[idl.PrimKind]int{idl.String8: 1, idl.String16: 2, idl.String32: 4}[k]
		case k == idl.Octets && f.SizeLit > 0:
			gf.Cat, gf.N, gf.Size = catOctetsN, f.SizeLit, f.SizeLit
		case k == idl.Octets && f.SizeName != "":
			gf.Cat = catOctetsSz
		case k == idl.Octets:
			gf.Cat = catUnbounded
		default:
			return nil, fmt.Errorf("%s: field %s: unsupported type %s", f.Pos, f.Name, k)
		}
	case *idl.Enum:
		k := rt.BaseKind()
		if k.Size() == 0 {
			return nil, fmt.Errorf("%s: field %s: enum %s must have a fixed-width base", f.Pos, f.Name, rt.Name)
		}
		gf.Cat, gf.Prim, gf.Size, gf.GoType = catEnum, k, k.Size(), rt.Name
	case *idl.Struct, *idl.Union, *idl.List:
		gf.Cat, gf.GoType = catStruct, rt.TypeName()
		gf.Elem = elemType{View: rt.TypeName(), Builder: rt.TypeName() + "Builder", MinSize: declMinSize(rt)}
		if s, ok := rt.(*idl.Struct); ok {
			if n, ok := structFixedSize(s); ok {
				gf.Size = n
			}
		}
	default:
		return nil, fmt.Errorf("%s: field %s: the Go generator does not support %s fields yet", f.Pos, f.Name, f.Type.Name)
	}
	return gf, nil
}

// structFixedSize reports the size of a struct whose fields are all fixed.
func structFixedSize(s *idl.Struct) (int, bool) {
	n := 0
	for _, f := range s.AllFields() {
		if f.Array {
			return 0, false
		}
		switch rt := f.Type.Resolved.(type) {
		case *idl.Primitive:
			switch {
			case rt.Kind.Size() > 0:
				n += rt.Kind.Size()
			case rt.Kind == idl.Octets && f.SizeLit > 0:
				n += f.SizeLit
			default:
				return 0, false
			}
		case *idl.Enum:
			if rt.BaseKind().Size() == 0 {
				return 0, false
			}
			n += rt.BaseKind().Size()
		case *idl.Struct:
			m, ok := structFixedSize(rt)
			if !ok {
				return 0, false
			}
			n += m
		default:
			return 0, false
		}
	}
	return n, true
}

// declMinSize is the smallest encoding of a struct or union, used to bound
// hostile array counts.
func declMinSize(t idl.Type) int {
	sum := func(fs []*idl.Field) int {
		n := 0
		for _, f := range fs {
			n += fieldMinSize(f)
		}
		return n
	}
	switch t := t.(type) {
	case *idl.Struct:
		return sum(t.AllFields())
	case *idl.List:
		return listHeaderSize(t.LengthType.Resolved.(*idl.Primitive).Kind, t.CountType.Resolved.(*idl.Primitive).Kind, t.HasMissing)
	case *idl.Union:
		n := sum(t.ParentFields()) + kindSize(t)
		least := -1
		for _, c := range t.Cases {
			if m := fieldMinSize(c.Field); least < 0 || m < least {
				least = m
			}
		}
		return n + max(least, 0)
	}
	return 0
}

func kindSize(u *idl.Union) int {
	switch rt := u.Switch.Resolved.(type) {
	case *idl.Primitive:
		if rt.Kind.Size() > 0 {
			return rt.Kind.Size()
		}
		return 1
	case *idl.Enum:
		return rt.BaseKind().Size()
	}
	return 1
}

func fieldMinSize(f *idl.Field) int {
	if f.Array {
		return 8
	}
	switch rt := f.Type.Resolved.(type) {
	case *idl.Primitive:
		switch {
		case rt.Kind.Size() > 0:
			return rt.Kind.Size()
		case rt.Kind == idl.String8:
			return 1
		case rt.Kind == idl.String16:
			return 2
		case rt.Kind == idl.String32:
			return 4
		case rt.Kind == idl.Octets:
			return f.SizeLit
		}
		return 1
	case *idl.Enum:
		return rt.BaseKind().Size()
	case *idl.Struct, *idl.Union, *idl.List:
		return declMinSize(rt)
	}
	return 0
}

func elemOf(t idl.Type, big bool) (elemType, error) {
	switch rt := t.(type) {
	case *idl.Struct, *idl.Union, *idl.List:
		return elemType{View: rt.TypeName(), Builder: rt.TypeName() + "Builder", MinSize: declMinSize(rt)}, nil
	case *idl.Enum:
		if rt.BaseKind().Size() == 0 || rt.BaseKind().Size() == 3 {
			return elemType{}, fmt.Errorf("arrays of enum %s (base %s) are not supported", rt.Name, rt.BaseKind())
		}
		return elemType{
			View:    fmt.Sprintf("flyweight.Int[%s, %s]", rt.Name, orderType(big)),
			Builder: fmt.Sprintf("flyweight.IntBuilder[%s, %s]", rt.Name, orderType(big)),
			MinSize: rt.BaseKind().Size(),
		}, nil
	case *idl.Primitive:
		k := rt.Kind
		switch {
		case k.IsString():
			w := map[idl.PrimKind]string{idl.String8: "W8", idl.String16: "W16", idl.String32: "W32"}[k]
			return elemType{
				View:    fmt.Sprintf("flyweight.String[flyweight.%s, %s]", w, orderType(big)),
				Builder: fmt.Sprintf("flyweight.StringBuilder[flyweight.%s, %s]", w, orderType(big)),
				MinSize: map[idl.PrimKind]int{idl.String8: 1, idl.String16: 2, idl.String32: 4}[k],
			}, nil
		case k.Size() > 0 && k.Size() != 3:
			return elemType{
				View:    fmt.Sprintf("flyweight.Int[%s, %s]", intGoType(k), orderType(big)),
				Builder: fmt.Sprintf("flyweight.IntBuilder[%s, %s]", intGoType(k), orderType(big)),
				MinSize: k.Size(),
			}, nil
		}
		return elemType{}, fmt.Errorf("arrays of %s are not supported", k)
	}
	return elemType{}, fmt.Errorf("arrays of %s are not supported", t.TypeName())
}

// reserved method names of readers and builders.
var reserved = map[string]bool{
	"Wrap": true, "TryWrap": true, "Limit": true, "Offset": true, "Sizeof": true,
	"Buffer": true, "Kind": true, "Build": true, "BuildLimit": true, "Fail": true,
	"WrapSlot": true,
}

// checkMethodNames renames fields whose methods would collide with the
// reserved ones, and reports collisions between fields.
func checkMethodNames(t *typ) error {
	seen := map[string]string{}
	all := append(append([]*field(nil), t.Fields...), casesFields(t)...)
	for _, f := range all {
		if reserved[f.Go] {
			f.Go += "Field"
		}
	}
	for _, f := range all {
		if t.Union && f == t.Kind {
			continue
		}
		for _, m := range methodNames(f) {
			if prev, ok := seen[m]; ok && prev != f.Name {
				return fmt.Errorf("%s: %s: fields %s and %s both generate method %s", f.F.Pos, t.Name, prev, f.Name, m)
			}
			seen[m] = f.Name
		}
	}
	return nil
}

func casesFields(t *typ) []*field {
	var fs []*field
	for _, c := range t.Cases {
		fs = append(fs, c.F)
	}
	return fs
}

func methodNames(f *field) []string {
	n := f.Go
	switch f.Cat {
	case catString:
		return []string{n, "Has" + n, n + "String", n + "Bytes", n + "Null"}
	case catOctetsSz:
		return []string{n, "Has" + n, n + "Reserve", n + "Null"}
	case catUnbounded:
		return []string{n, n + "Reserve", n + "Slot", n + "Buffer", n + "End", n + "Done"}
	case catInt, catEnum:
		return []string{n, "Set" + n}
	}
	return []string{n}
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}
