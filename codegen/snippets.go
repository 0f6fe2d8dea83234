package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/sluicehq/sluice/idl"
)

// The functions here render the per-field pieces of the reader and builder
// templates. Each returns Go source; go/format tidies it afterwards.

func isCase(t *typ, f *field) bool {
	for _, c := range t.Cases {
		if c.F == f {
			return true
		}
	}
	return false
}

// dynName is the reader field that stores a non-constant field offset.
func dynName(t *typ, f *field) string {
	if isCase(t, f) {
		return "oCase"
	}
	return "o" + f.Go
}

// offExpr is the offset of f in the wrapped buffer.
func offExpr(t *typ, f *field) string {
	if f.Static && f.Off == 0 {
		return "f.off"
	}
	if f.Static {
		return fmt.Sprintf("f.off+%d", f.Off)
	}
	return "f." + dynName(t, f)
}

// sizeValue is an int expression for the value of size field s.
func sizeValue(t *typ, s *field) string {
	if s.Cat == catVarint {
		get, _ := varintFuncs(s.Prim)
		return fmt.Sprintf("func() int { v, _ := %s(f.buf[%s:f.limit]); return int(v) }()", get, offExpr(t, s))
	}
	return "int(" + readInt(s.Prim, s.Big, "f.buf", offExpr(t, s), intGoType(s.Prim)) + ")"
}

// staticPrefix returns how many leading fields have constant offsets and
// fixed sizes, and their total size: wrap checks them with one comparison.
func staticPrefix(t *typ) (n, size int) {
	for _, f := range t.Fields {
		if !f.Static || f.Size == 0 || f.Cat == catStruct {
			break
		}
		n++
		size = f.Off + f.Size
	}
	return n, size
}

// allStatic reports whether t is a struct of fixed-size fields at
// constant offsets only: its wrap is one bounds check, and its TryWrap is
// rendered as that check alone, small enough to inline where frames are
// dispatched.
func allStatic(t *typ) bool {
	n, _ := staticPrefix(t)
	return !t.Union && n > 0 && n == len(t.Fields)
}

// prefixCheck renders the single bounds check of the static prefix.
func prefixCheck(t *typ) string {
	n, size := staticPrefix(t)
	if n == 0 {
		return ""
	}
	var ends []string
	for _, f := range t.Fields[:n] {
		ends = append(ends, fmt.Sprint(f.Off+f.Size))
	}
	return fmt.Sprintf("if limit-p < %d {\nreturn flyweight.FieldAt(%sFieldNames[:], []int{%s}, limit-p), flyweight.ErrShort\n}\np += %d\n",
		size, lowerFirst(t.Name), strings.Join(ends, ", "), size)
}

// wrapStep validates f at p and advances p past it.
func wrapStep(t *typ, f *field) string {
	if n, _ := staticPrefix(t); f.Ordinal < n && !isCase(t, f) {
		return ""
	}
	var b strings.Builder
	if !f.Static {
		fmt.Fprintf(&b, "f.%s = p\n", dynName(t, f))
	}
	short := fmt.Sprintf("return %q, flyweight.ErrShort", f.Name)
	switch f.Cat {
	case catInt, catEnum, catOctetsN:
		fmt.Fprintf(&b, "if limit-p < %d { %s }\np += %d\n", f.Size, short, f.Size)
	case catVarint:
		get, _ := varintFuncs(f.Prim)
		fmt.Fprintf(&b, "if _, n := %s(buf[p:limit]); n == 0 { return %q, flyweight.ErrVarint } else { p += n }\n", get, f.Name)
	case catString:
		fmt.Fprintf(&b, "if limit-p < %d { %s }\n", f.Width, short)
		fmt.Fprintf(&b, "if n := %s; n < -1 { return %q, flyweight.ErrLength } else if n > limit-p-%d { %s } else { p += %d + max(n, 0) }\n",
			strLen(f, "buf", "p"), f.Name, f.Width, short, f.Width)
	case catOctetsSz:
		s := f.SizeBy
		fmt.Fprintf(&b, "{\n n := %s\n", strings.ReplaceAll(sizeValue(t, s), "f.limit", "limit"))
		if f.Null {
			fmt.Fprintf(&b, "if n < -1 { return %q, flyweight.ErrLength }\n", f.Name)
		} else {
			fmt.Fprintf(&b, "if n < 0 { return %q, flyweight.ErrLength }\n", f.Name)
		}
		fmt.Fprintf(&b, "if n > limit-p { %s }\np += max(n, 0)\n}\n", short)
	case catUnbounded:
		b.WriteString("p += limit - p // runs to the limit\n")
	case catStruct:
		fmt.Fprintf(&b, "{\nvar v %s\nif _, err := v.wrap(buf, p, limit); err != nil { return %q, err }\np = v.limit\n}\n", f.GoType, f.Name)
	case catArray:
		fmt.Fprintf(&b, "if end, err := %s(buf, p, limit); err != nil { return %q, err } else { p = end }\n",
			arrayValidator(f), f.Name)
	}
	return b.String()
}

// arrayValidator names the function that validates f's array: one per
// item type and header byte order in each generated file.
func arrayValidator(f *field) string {
	name := strings.NewReplacer("flyweight.", "", "[", "", "]", "", ",", "", " ", "", ".", "").Replace(f.Elem.View)
	if f.Big {
		name += "BE"
	}
	return "validate" + name + "Array"
}

// arrayValidators renders the validators the file's array fields call,
// in name order. Each wraps the items as their concrete type, so the item
// stays on the stack (through a type parameter it escapes: an allocation
// per array).
func arrayValidators(types []*typ) string {
	fns := map[string]*field{}
	for _, t := range types {
		for _, f := range append(append([]*field(nil), t.Fields...), casesFields(t)...) {
			if f.Cat == catArray {
				fns[arrayValidator(f)] = f
			}
		}
	}
	names := make([]string, 0, len(fns))
	for name := range fns {
		names = append(names, name)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, name := range names {
		f := fns[name]
		fmt.Fprintf(&b, "\n// %s checks the %s[] at buf[p:limit] and returns its end.\n", name, f.Elem.View)
		fmt.Fprintf(&b, "func %s(buf []byte, p, limit int) (int, error) {\n", name)
		fmt.Fprintf(&b, "items, end, count, err := flyweight.ArrayBounds(buf, p, limit, %d, %s)\nif err != nil { return 0, err }\n",
			f.Elem.MinSize, order(f.Big))
		fmt.Fprintf(&b, "var item %s\nq := items\nfor range count {\nif item.Wrap(buf, q, end) != nil { return 0, flyweight.ErrLength }\nq = item.Limit()\n}\n", f.Elem.View)
		b.WriteString("if q != end { return 0, flyweight.ErrLength }\nreturn end, nil\n}\n")
	}
	return b.String()
}

// strLen reads the signed length prefix of string field f at buf[at:].
func strLen(f *field, buf, at string) string {
	switch f.Width {
	case 1:
		return fmt.Sprintf("int(int8(%s[%s]))", buf, at)
	case 2:
		return fmt.Sprintf("int(int16(%s.Uint16(%s[%s:])))", order(f.Big), buf, at)
	}
	return fmt.Sprintf("int(int32(%s.Uint32(%s[%s:])))", order(f.Big), buf, at)
}

// getters renders the reader accessors of f.
func getters(t *typ, f *field) string {
	var b strings.Builder
	o := offExpr(t, f)
	recv := "func (f *" + t.Name + ") "
	onlyCase := ""
	if isCase(t, f) {
		onlyCase = fmt.Sprintf(" It is meaningful only when Kind() is %s.", caseConst(t, f))
	}
	switch f.Cat {
	case catInt, catEnum:
		typeName := f.GoType
		fmt.Fprintf(&b, "// %s returns %s.%s\n%s%s() %s { return %s }\n\n", f.Go, f.Name, onlyCase, recv, f.Go, typeName, readInt(f.Prim, f.Big, "f.buf", o, typeName))
		if f.Static && f.SizeFor == nil && !isCase(t, f) && !(t.Union && f == t.Kind) {
			fmt.Fprintf(&b, "// Set%s overwrites %s in place.\n%sSet%s(v %s) { %s }\n\n", f.Go, f.Name, recv, f.Go, typeName, writeInt(f.Prim, f.Big, "f.buf", o, "v"))
		}
	case catVarint:
		get, _ := varintFuncs(f.Prim)
		fmt.Fprintf(&b, "// %s returns %s.%s\n%s%s() %s { v, _ := %s(f.buf[%s:f.limit]); return v }\n\n", f.Go, f.Name, onlyCase, recv, f.Go, f.GoType, get, o)
	case catString:
		fmt.Fprintf(&b, "// Has%s reports whether %s is not null.%s\n%sHas%s() bool { return %s >= 0 }\n\n", f.Go, f.Name, onlyCase, recv, f.Go, strLen(f, "f.buf", o))
		fmt.Fprintf(&b, "// %s returns the bytes of %s, nil when null. The slice aliases the wrapped buffer: it is valid until that buffer is reused; do not retain it.%s\n", f.Go, f.Name, onlyCase)
		fmt.Fprintf(&b, "%s%s() []byte {\n o := %s\n n := %s\n if n < 0 { return nil }\n o += %d\n return f.buf[o : o+n : o+n]\n}\n\n", recv, f.Go, o, strLen(f, "f.buf", "o"), f.Width)
		fmt.Fprintf(&b, "// %sString returns a copy of %s (\"\" when null).\n%s%sString() string { return string(f.%s()) }\n\n", f.Go, f.Name, recv, f.Go, f.Go)
	case catOctetsN:
		fmt.Fprintf(&b, "// %s returns the %d bytes of %s. The slice aliases the wrapped buffer: it is valid until that buffer is reused; do not retain it.\n", f.Go, f.N, f.Name)
		fmt.Fprintf(&b, "%s%s() []byte { o := %s; return f.buf[o : o+%d : o+%d] }\n\n", recv, f.Go, o, f.N, f.N)
	case catOctetsSz:
		if f.Null {
			fmt.Fprintf(&b, "// Has%s reports whether %s is not null.\n%sHas%s() bool { return %s >= 0 }\n\n", f.Go, f.Name, recv, f.Go, sizeValue(t, f.SizeBy))
		}
		fmt.Fprintf(&b, "// %s returns the bytes of %s, nil when null. The slice aliases the wrapped buffer: it is valid until that buffer is reused; do not retain it.\n", f.Go, f.Name)
		fmt.Fprintf(&b, "%s%s() []byte {\n n := %s\n if n < 0 { return nil }\n o := %s\n return f.buf[o : o+n : o+n]\n}\n\n", recv, f.Go, sizeValue(t, f.SizeBy), o)
	case catUnbounded:
		fmt.Fprintf(&b, "// %s returns the bytes of %s, up to the limit. The slice aliases the wrapped buffer: it is valid until that buffer is reused; do not retain it.\n", f.Go, f.Name)
		fmt.Fprintf(&b, "%s%s() []byte { return f.buf[%s:f.limit:f.limit] }\n\n", recv, f.Go, o)
	case catStruct:
		fmt.Fprintf(&b, "// %s returns a view of %s over the same buffer.%s\n%s%s() %s {\n var v %s\n v.wrap(f.buf, %s, f.limit)\n return v\n}\n\n", f.Go, f.Name, onlyCase, recv, f.Go, f.GoType, f.GoType, o)
	case catArray:
		fmt.Fprintf(&b, "// %s returns a view of the items of %s.%s\n%s%s() flyweight.Array[%s] {\n o := %s\n n := int(int32(%s.Uint32(f.buf[o:])))\n c := int(int32(%s.Uint32(f.buf[o+4:])))\n return flyweight.MakeArray[%s](f.buf, o+8, o+8+n, c)\n}\n\n",
			f.Go, f.Name, onlyCase, recv, f.Go, elemArgs(f), o, order(f.Big), order(f.Big), elemArgs(f))
	}
	return b.String()
}

func elemArgs(f *field) string { return f.Elem.View + ", *" + f.Elem.View }

func builderArgs(f *field) string {
	return f.Elem.Builder + ", *" + f.Elem.Builder + ", " + orderType(f.Big)
}

func caseConst(t *typ, f *field) string {
	for _, c := range t.Cases {
		if c.F == f {
			return c.Const
		}
	}
	return ""
}

// childField declares the builder's storage for f: a size field's position
// or a nested builder.
func childField(t *typ, f *field) string {
	switch {
	case f.SizeFor != nil:
		return fmt.Sprintf("p%s int // where %s is written\n", f.Go, f.Name)
	case f.Cat == catStruct:
		return fmt.Sprintf("b%s %s\n", f.Go, f.Elem.Builder)
	case f.Cat == catArray:
		return fmt.Sprintf("a%s flyweight.ArrayBuilder[%s]\n", f.Go, builderArgs(f))
	}
	return ""
}

// ordinal of the field a setter writes: union cases share the kind's.
func ordinal(f *field) int { return f.Ordinal }

// setters renders the builder setters of f.
func setters(t *typ, f *field) string {
	if f.SizeFor != nil || (t.Union && f == t.Kind) {
		return ""
	}
	var b strings.Builder
	bt := t.Name + "Builder"
	recv := "func (b *" + bt + ") "
	i := ordinal(f)
	// pre writes the union kind before the case value.
	pre := ""
	caseNote := ""
	if isCase(t, f) {
		k := t.Kind
		pre = fmt.Sprintf("if !b.room(%d, %d) { return false }\n%s\nb.p += %d\n", i, k.Size, writeInt(k.Prim, k.Big, "b.buf", "b.p", caseConst(t, f)), k.Size)
		caseNote = fmt.Sprintf(" It selects case %s.", caseConst(t, f))
	}
	begin := func() string {
		if pre == "" {
			return fmt.Sprintf("b.advance(%d)", i)
		}
		return fmt.Sprintf("(b.advance(%d) && func() bool {\n%sreturn true }())", i, pre)
	}
	done := fmt.Sprintf("b.next = %d\n", i+1)
	if t.List {
		done = fmt.Sprintf("b.setPresent(%d)\n", i)
	}
	switch f.Cat {
	case catInt, catEnum:
		if fastPrefix(t, f) {
			// Wrap checked that the whole static prefix fits, and a
			// builder whose next field is this one has not failed and
			// has no child open: the setter is one comparison, plus the
			// defaults of the fields just before it when they were
			// skipped.
			fmt.Fprintf(&b, "// %s sets %s.\n%s%s(v %s) *%s {\n", f.Go, f.Name, recv, f.Go, f.GoType, bt)
			if run := inlineDefaults(t, i); len(run) > 0 {
				b.WriteString("switch b.next {\n")
				for _, d := range run {
					fmt.Fprintf(&b, "case %d: // %s skipped: its default\nv := %s\n%s\nb.p += %d\nfallthrough\n",
						d.Ordinal, d.Name, defaultLit(d), writeInt(d.Prim, d.Big, "b.buf", "b.p", "v"), d.Size)
				}
				fmt.Fprintf(&b, "case %d:\ndefault:\n if !b.advanceSlow(%d) { return b }\n}\n", i, i)
			} else {
				fmt.Fprintf(&b, "if b.next != %d && !b.advanceSlow(%d) {\n return b\n}\n", i, i)
			}
			fmt.Fprintf(&b, "%s\nb.p += %d\n%sreturn b\n}\n\n", writeInt(f.Prim, f.Big, "b.buf", "b.p", "v"), f.Size, done)
			break
		}
		if n, _ := staticPrefix(t); f.Ordinal < n && !t.List && !isCase(t, f) {
			// Wrap checked that the whole static prefix fits.
			fmt.Fprintf(&b, "// %s sets %s.\n%s%s(v %s) *%s {\n if %s {\n %s\n b.p += %d\n %s }\n return b\n}\n\n",
				f.Go, f.Name, recv, f.Go, f.GoType, bt, begin(), writeInt(f.Prim, f.Big, "b.buf", "b.p", "v"), f.Size, done)
			break
		}
		fmt.Fprintf(&b, "// %s sets %s.%s\n%s%s(v %s) *%s {\n if %s && b.room(%d, %d) {\n %s\n b.p += %d\n %s }\n return b\n}\n\n",
			f.Go, f.Name, caseNote, recv, f.Go, f.GoType, bt, begin(), i, f.Size, writeInt(f.Prim, f.Big, "b.buf", "b.p", "v"), f.Size, done)
	case catVarint:
		_, put := varintFuncs(f.Prim)
		fmt.Fprintf(&b, "// %s sets %s.%s\n%s%s(v %s) *%s {\n if %s {\n if n := (%s)(b.buf[b.p:b.max], v); n == 0 { b.fail(%d, flyweight.ErrOverflow) } else { b.p += n\n %s }\n }\n return b\n}\n\n",
			f.Go, f.Name, caseNote, recv, f.Go, f.GoType, bt, begin(), put, i, done)
	case catString:
		// The length prefix of this width and byte order is written
		// directly, as flyweight.PutStr would write it: a setter of a
		// header name or value is on every request's path.
		lenKind := map[int]idl.PrimKind{1: idl.Int8, 2: idl.Int16, 4: idl.Int32}[f.Width]
		for _, v := range []struct{ suffix, param string }{{"", "v string"}, {"Bytes", "v []byte"}} {
			fmt.Fprintf(&b, "// %s%s sets %s.%s\n%s%s%s(%s) *%s {\n if !%s { return b }\n n := len(v)\n"+
				"if n > %d { b.fail(%d, flyweight.ErrRange); return b }\n"+
				"if b.max-b.p < %d+n { b.fail(%d, flyweight.ErrOverflow); return b }\n"+
				"%s\nb.p += %d\nb.p += copy(b.buf[b.p:b.p+n], v)\n%s return b\n}\n\n",
				f.Go, v.suffix, f.Name, caseNote, recv, f.Go, v.suffix, v.param, bt, begin(),
				maxStrLen(f.Width), i, f.Width, i, writeInt(lenKind, f.Big, "b.buf", "b.p", "n"), f.Width, done)
		}
		fmt.Fprintf(&b, "// %sNull sets %s to null (length -1).%s\n%s%sNull() *%s {\n if %s && b.putStr(%d, %d, true, \"\") {\n %s }\n return b\n}\n\n",
			f.Go, f.Name, caseNote, recv, f.Go, bt, begin(), i, f.Width, done)
	case catOctetsN:
		fmt.Fprintf(&b, "// %s sets the %d bytes of %s; v must be exactly that long.%s\n%s%s(v []byte) *%s {\n if !%s { return b }\n if len(v) != %d { b.fail(%d, flyweight.ErrLength); return b }\n if b.room(%d, %d) {\n copy(b.buf[b.p:], v)\n b.p += %d\n %s }\n return b\n}\n\n",
			f.Go, f.N, f.Name, caseNote, recv, f.Go, bt, begin(), f.N, i, i, f.N, f.N, done)
	case catOctetsSz:
		fmt.Fprintf(&b, "// %s copies v into %s and sets %s to its length.%s\n%s%s(v []byte) *%s {\n if p := b.%sReserve(len(v)); p != nil { copy(p, v) }\n return b\n}\n\n",
			f.Go, f.Name, f.SizeBy.Name, caseNote, recv, f.Go, bt, f.Go)
		fmt.Fprintf(&b, "// %sReserve sets %s to n and returns the n bytes of %s to fill in place, or nil when the builder failed. The slice aliases the builder's buffer.%s\n%s%sReserve(n int) []byte {\n if !%s || !b.size%s(n) || !b.room(%d, n) { return nil }\n p := b.buf[b.p : b.p+n : b.p+n]\n b.p += n\n %s return p\n}\n\n",
			f.Go, f.SizeBy.Name, f.Name, caseNote, recv, f.Go, begin(), f.Go, i, done)
		if f.Null {
			fmt.Fprintf(&b, "// %sNull sets %s to null (%s = -1).%s\n%s%sNull() *%s {\n if %s && b.size%s(-1) {\n %s }\n return b\n}\n\n",
				f.Go, f.Name, f.SizeBy.Name, caseNote, recv, f.Go, bt, begin(), f.Go, done)
		}
		b.WriteString(sizeWriter(t, f))
	case catUnbounded:
		fmt.Fprintf(&b, "// %s copies v into %s.%s\n%s%s(v []byte) *%s {\n if p := b.%sReserve(len(v)); p != nil { copy(p, v) }\n return b\n}\n\n",
			f.Go, f.Name, caseNote, recv, f.Go, bt, f.Go)
		fmt.Fprintf(&b, "// %sReserve returns the next n bytes as %s, to fill in place, or nil when the builder failed. The slice aliases the builder's buffer.\n%s%sReserve(n int) []byte {\n if !%s || !b.room(%d, n) { return nil }\n p := b.buf[b.p : b.p+n : b.p+n]\n b.p += n\n %s return p\n}\n\n",
			f.Go, f.Name, recv, f.Go, begin(), i, done)
		fmt.Fprintf(&b, "// %sSlot returns where %s starts and the builder's max limit, so that another builder can write it in place; finish with %sEnd. ok is false when the builder failed.\n%s%sSlot() (off, maxLimit int, ok bool) {\n if !%s { return 0, 0, false }\n return b.p, b.max, true\n}\n\n",
			f.Go, f.Name, f.Go, recv, f.Go, begin())
		fmt.Fprintf(&b, "// %sBuffer returns the builder's buffer with %sSlot's results, so that an extension builder's WrapSlot takes them in one call.\n%s%sBuffer() (buf []byte, off, maxLimit int, ok bool) {\n off, maxLimit, ok = b.%sSlot()\n return b.buf, off, maxLimit, ok\n}\n\n",
			f.Go, f.Go, recv, f.Go, f.Go)
		fmt.Fprintf(&b, "// %sEnd ends %s at limit, after it was written in place from %sSlot.\n%s%sEnd(limit int) *%s {\n if b.err != nil { return b }\n if b.next != %d || limit < b.p || limit > b.max { b.fail(%d, flyweight.ErrBounds); return b }\n b.p = limit\n %s return b\n}\n\n",
			f.Go, f.Name, f.Go, recv, f.Go, bt, i, i, done)
		fmt.Fprintf(&b, "// %sDone ends %s at limit as %sEnd does or, when err (that of the builder that wrote it) is not nil, fails with err.\n%s%sDone(limit int, err error) *%s {\n if err != nil { return b.Fail(err) }\n return b.%sEnd(limit)\n}\n\n",
			f.Go, f.Name, f.Go, recv, f.Go, bt, f.Go)
	case catStruct:
		fmt.Fprintf(&b, "// %s starts %s and returns its builder, which writes in place until the next setter or Build.%s\n%s%s() *%s {\n if !%s { return b.b%s.Wrap(b.buf[:0], 0, 0) }\n b.open = %d\n %s return b.b%s.Wrap(b.buf, b.p, b.max)\n}\n\n",
			f.Go, f.Name, caseNote, recv, f.Go, f.Elem.Builder, begin(), f.Go, childID(t, f), done, f.Go)
	case catArray:
		fmt.Fprintf(&b, "// %s starts the array %s and returns its builder; add items with Item. It is finished by the next setter or Build.%s\n%s%s() *flyweight.ArrayBuilder[%s] {\n if !%s { return b.a%s.Init(b.buf[:0], 0, 0).Fail(flyweight.ErrOrder) }\n b.open = %d\n %s return b.a%s.Init(b.buf, b.p, b.max)\n}\n\n",
			f.Go, f.Name, caseNote, recv, f.Go, builderArgs(f), begin(), f.Go, childID(t, f), done, f.Go)
	}
	return b.String()
}

// sizeWriter renders the helper that writes the size field of octets f.
func sizeWriter(t *typ, f *field) string {
	s := f.SizeBy
	var b strings.Builder
	fmt.Fprintf(&b, "func (b *%sBuilder) size%s(n int) bool {\n", t.Name, f.Go)
	if s.Cat == catVarint {
		_, put := varintFuncs(s.Prim)
		min, max, _ := s.Prim.Range()
		fmt.Fprintf(&b, " if n < %d || n > %d { b.fail(%d, flyweight.ErrRange); return false }\n", min, max, f.Ordinal)
		fmt.Fprintf(&b, " w := (%s)(b.buf[b.p:b.max], %s(n))\n if w == 0 { b.fail(%d, flyweight.ErrOverflow); return false }\n b.p += w\n return true\n}\n\n", put, s.GoType, f.Ordinal)
		return b.String()
	}
	min, max, umax := s.Prim.Range()
	if !s.Prim.IsSigned() {
		min = -1 // -1 is not encodable: checked below
		_ = max
		fmt.Fprintf(&b, " if n < 0 || uint64(n) > %d { b.fail(%d, flyweight.ErrRange); return false }\n", umax, f.Ordinal)
	} else {
		fmt.Fprintf(&b, " if n < %d || n > %d { b.fail(%d, flyweight.ErrRange); return false }\n", min, max, f.Ordinal)
	}
	fmt.Fprintf(&b, " %s\n return true\n}\n\n", writeInt(s.Prim, s.Big, "b.buf", "b.p"+s.Go, "n"))
	return b.String()
}

// fillCase renders the case of the builder's fill method that writes the
// default of a field that was not set.
func fillCase(t *typ, f *field) string {
	missing := fmt.Sprintf("b.fail(%d, flyweight.ErrMissing)\nreturn false\n", f.Ordinal)
	var body string
	room := func(n int) string {
		return fmt.Sprintf("if !b.room(%d, %d) { return false }\n", f.Ordinal, n)
	}
	switch {
	case f.SizeFor != nil && f.Cat == catVarint:
		body = "// written with the octets it sizes\n"
	case f.SizeFor != nil:
		body = fmt.Sprintf("%sb.p%s = b.p\nb.p += %d\n", room(f.Size), f.Go, f.Size)
	case t.Union && f == t.Kind:
		body = missing
	case f.Cat == catInt || f.Cat == catEnum:
		if f.Default == nil {
			body = missing
		} else {
			body = room(f.Size) + "v := " + defaultLit(f) + "\n" + writeInt(f.Prim, f.Big, "b.buf", "b.p", "v") + fmt.Sprintf("\nb.p += %d\n", f.Size)
		}
	case f.Cat == catVarint:
		if f.Default == nil {
			body = missing
		} else {
			_, put := varintFuncs(f.Prim)
			body = fmt.Sprintf("n := (%s)(b.buf[b.p:b.max], %s)\nif n == 0 { b.fail(%d, flyweight.ErrOverflow); return false }\nb.p += n\n", put, defaultLit(f), f.Ordinal)
		}
	case f.Cat == catString:
		switch {
		case f.Default == nil:
			body = missing
		case f.Null:
			body = fmt.Sprintf("return b.putStr(%d, %d, true, \"\")\n", f.Ordinal, f.Width)
		default:
			body = fmt.Sprintf("return b.putStr(%d, %d, false, %q)\n", f.Ordinal, f.Width, f.Default.Str)
		}
	case f.Cat == catOctetsSz:
		if f.Null {
			body = fmt.Sprintf("return b.size%s(-1)\n", f.Go)
		} else {
			body = missing
		}
	case f.Cat == catOctetsN:
		body = missing
	case f.Cat == catUnbounded:
		body = "// empty\n"
	case f.Cat == catStruct:
		body = fmt.Sprintf("b.b%s.Wrap(b.buf, b.p, b.max)\nlimit, err := b.b%s.BuildLimit()\nif err != nil { b.Fail(err); return false }\nb.p = limit\n", f.Go, f.Go)
	case f.Cat == catArray:
		body = fmt.Sprintf("limit, err := b.a%s.Init(b.buf, b.p, b.max).BuildLimit()\nif err != nil { b.fail(%d, err); return false }\nb.p = limit\n", f.Go, f.Ordinal)
	}
	return fmt.Sprintf("case %d:\n%s", f.Ordinal, body)
}

// childID identifies the open nested builder: the field's ordinal, or for
// a union case (which shares the kind's ordinal) 1000 plus the case index.
func childID(t *typ, f *field) int {
	for i, c := range t.Cases {
		if c.F == f {
			return 1000 + i
		}
	}
	return f.Ordinal
}

// closeCase renders the case of closeChild that finishes f's nested builder.
func closeCase(t *typ, f *field) string {
	switch f.Cat {
	case catStruct:
		return fmt.Sprintf("case %d:\nlimit, err = b.b%s.BuildLimit()\n", childID(t, f), f.Go)
	case catArray:
		return fmt.Sprintf("case %d:\nlimit, err = b.a%s.BuildLimit()\n", childID(t, f), f.Go)
	}
	return ""
}

func defaultLit(f *field) string {
	d := f.Default
	switch d.Kind {
	case idl.IdentValue:
		return f.GoType + constName(d.Ident)
	case idl.IntValue:
		if d.Uint {
			return fmt.Sprintf("%s(%d)", f.GoType, uint64(d.Int))
		}
		return fmt.Sprintf("%s(%d)", f.GoType, d.Int)
	}
	return "0"
}

// listGetters renders the accessors of a list field: HasX, and getters that
// return the default (or the zero value) when the field is absent.
func listGetters(t *typ, f *field) string {
	var b strings.Builder
	recv := "func (f *" + t.Name + ") "
	bit := fmt.Sprintf("f.present&(1<<%d) != 0", f.Ordinal)
	fmt.Fprintf(&b, "// Has%s reports whether %s is present.\n%sHas%s() bool { return %s }\n\n", f.Go, f.Name, recv, f.Go, bit)
	o := offExpr(t, f)
	zero := "0"
	if f.Default != nil && (f.Cat == catInt || f.Cat == catEnum || f.Cat == catVarint) {
		zero = defaultLit(f)
	}
	switch f.Cat {
	case catInt, catEnum:
		fmt.Fprintf(&b, "// %s returns %s, or its default when absent.\n%s%s() %s {\n if !(%s) { return %s }\n return %s\n}\n\n",
			f.Go, f.Name, recv, f.Go, f.GoType, bit, zero, readInt(f.Prim, f.Big, "f.buf", o, f.GoType))
	case catVarint:
		get, _ := varintFuncs(f.Prim)
		fmt.Fprintf(&b, "// %s returns %s, or its default when absent.\n%s%s() %s {\n if !(%s) { return %s }\n v, _ := %s(f.buf[%s:f.limit])\n return v\n}\n\n",
			f.Go, f.Name, recv, f.Go, f.GoType, bit, zero, get, o)
	case catString:
		def := `""`
		if f.Default != nil && f.Default.Kind == idl.StringValue {
			def = fmt.Sprintf("%q", f.Default.Str)
		}
		fmt.Fprintf(&b, "// %s returns the bytes of %s, nil when absent or null. The slice aliases the wrapped buffer: it is valid until that buffer is reused; do not retain it.\n", f.Go, f.Name)
		fmt.Fprintf(&b, "%s%s() []byte {\n if !(%s) { return nil }\n o := %s\n n := %s\n if n < 0 { return nil }\n o += %d\n return f.buf[o : o+n : o+n]\n}\n\n", recv, f.Go, bit, o, strLen(f, "f.buf", "o"), f.Width)
		fmt.Fprintf(&b, "// %sString returns a copy of %s, or its default when absent.\n%s%sString() string {\n if !(%s) { return %s }\n return string(f.%s())\n}\n\n", f.Go, f.Name, recv, f.Go, bit, def, f.Go)
	case catOctetsN:
		fmt.Fprintf(&b, "// %s returns the %d bytes of %s, nil when absent. The slice aliases the wrapped buffer.\n%s%s() []byte {\n if !(%s) { return nil }\n o := %s\n return f.buf[o : o+%d : o+%d]\n}\n\n", f.Go, f.N, f.Name, recv, f.Go, bit, o, f.N, f.N)
	case catStruct:
		fmt.Fprintf(&b, "// %s returns a view of %s; the zero view when absent.\n%s%s() %s {\n var v %s\n if %s { v.wrap(f.buf, %s, f.limit) }\n return v\n}\n\n", f.Go, f.Name, recv, f.Go, f.GoType, f.GoType, bit, o)
	case catArray:
		fmt.Fprintf(&b, "// %s returns a view of the items of %s; empty when absent.\n%s%s() flyweight.Array[%s] {\n if !(%s) { return flyweight.Array[%s]{} }\n o := %s\n n := int(int32(%s.Uint32(f.buf[o:])))\n c := int(int32(%s.Uint32(f.buf[o+4:])))\n return flyweight.MakeArray[%s](f.buf, o+8, o+8+n, c)\n}\n\n",
			f.Go, f.Name, recv, f.Go, elemArgs(f), bit, elemArgs(f), o, order(f.Big), order(f.Big), elemArgs(f))
	}
	return b.String()
}

// wrapRoom renders wrapFail's report that the static prefix does not fit,
// so that the prefix setters need no check of their own.
func wrapRoom(t *typ) string {
	n, size := staticPrefix(t)
	if n == 0 || t.List {
		return ""
	}
	var ends []string
	for _, f := range t.Fields[:n] {
		ends = append(ends, fmt.Sprint(f.Off+f.Size))
	}
	return fmt.Sprintf("else if b.max-b.off < %d {\nb.err = &flyweight.Error{Type: %q, Field: flyweight.FieldAt(%sFieldNames[:], []int{%s}, b.max-b.off), Err: flyweight.ErrOverflow}\n}",
		size, t.Name, lowerFirst(t.Name), strings.Join(ends, ", "))
}

// wrapRoomCond renders the condition Wrap adds to its bounds check: the
// static prefix fits.
func wrapRoomCond(t *typ) string {
	n, size := staticPrefix(t)
	if n == 0 || t.List {
		return ""
	}
	return fmt.Sprintf(" || maxLimit-off < %d", size)
}

// hasString reports whether t has a string field (a case included), the
// only fields whose Null setter or default goes through putStr.
func hasString(t *typ) bool {
	for _, f := range t.Fields {
		if f.Cat == catString {
			return true
		}
	}
	for _, c := range t.Cases {
		if c.F.Cat == catString {
			return true
		}
	}
	return false
}

// maxStrLen is the longest string a signed length prefix of width bytes
// holds (flyweight.MaxLen).
func maxStrLen(width int) int {
	return 1<<(8*width-1) - 1
}

// maxInlineDefaults bounds how many skipped fields a setter or BuildLimit
// fills itself; a longer run goes through advanceSlow.
const maxInlineDefaults = 4

// fastPrefix reports whether f's setter takes the one-comparison fast
// path: an integer of a plain struct's static prefix. There, next == f's
// ordinal means the builder has not failed (a failure sets next to -1),
// no nested builder is open (nested fields come after the prefix), and
// p is f's offset, which Wrap checked fits.
func fastPrefix(t *typ, f *field) bool {
	n, _ := staticPrefix(t)
	return !t.List && !t.Union && !isCase(t, f) && f.Ordinal < n && f.SizeFor == nil &&
		(f.Cat == catInt || f.Cat == catEnum)
}

// inlineDefaults returns the run of fields just before field i, in order,
// whose defaults can be written inline when they were skipped: static
// prefix integers with a default, at most maxInlineDefaults of them.
func inlineDefaults(t *typ, i int) []*field {
	k := i
	for k > 0 && i-k < maxInlineDefaults {
		f := t.Fields[k-1]
		if !fastPrefix(t, f) || f.Default == nil {
			break
		}
		k--
	}
	return t.Fields[k:i]
}

// buildTail renders BuildLimit's fast path: when every field left is a
// defaulted prefix integer (at most maxInlineDefaults of them) or the
// trailing unbounded octets, which default to empty, it writes those
// defaults inline instead of through advanceSlow and fill.
func buildTail(t *typ) string {
	if t.List || t.Union || len(t.Fields) == 0 {
		return ""
	}
	end := len(t.Fields)
	k := end
	var rest *field
	if last := t.Fields[end-1]; last.Cat == catUnbounded {
		rest = last
		k--
	}
	run := inlineDefaults(t, k)
	if len(run) == 0 && rest == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString("if b.open < 0 {\nswitch b.next {\n")
	for _, d := range run {
		fmt.Fprintf(&b, "case %d: // %s skipped: its default\nv := %s\n%s\nb.p += %d\nfallthrough\n",
			d.Ordinal, d.Name, defaultLit(d), writeInt(d.Prim, d.Big, "b.buf", "b.p", "v"), d.Size)
	}
	if rest != nil {
		fmt.Fprintf(&b, "case %d: // %s skipped: empty\nfallthrough\n", rest.Ordinal, rest.Name)
	}
	fmt.Fprintf(&b, "case %d:\nb.next = %d\nreturn b.p, nil\n}\n}\n", end, end)
	return b.String()
}

// caseList joins the kind constants of cs for a switch case.
func caseList(cs []*ucase) string {
	consts := make([]string, len(cs))
	for i, c := range cs {
		consts[i] = c.Const
	}
	return strings.Join(consts, ", ")
}

// sharedGetters renders, for each field several struct cases of union t
// share, a function reporting which kinds have it and a reader accessor
// that returns it from whichever case is present.
func sharedGetters(t *typ) string {
	var b strings.Builder
	for _, sh := range t.Shared {
		fmt.Fprintf(&b, "// %s reports whether case kind of %s has %s.\nfunc %s(kind %s) bool {\nswitch kind {\ncase %s:\nreturn true\n}\nreturn false\n}\n\n",
			sharedName(t, sh), t.Name, sh.Name, sharedName(t, sh), t.Kind.GoType, caseList(sh.Cases))
		typeName, zero, note := sh.GoType, "0", "zero"
		if sh.Cat == catString {
			typeName, zero, note = "[]byte", "nil", "nil when null or"
		}
		fmt.Fprintf(&b, "// %s returns %s of the case present, %s when that case has none (see %s).", sh.Go, sh.Name, note, sharedName(t, sh))
		if sh.Cat == catString {
			b.WriteString(" The slice aliases the wrapped buffer: it is valid until that buffer is reused; do not retain it.")
		}
		fmt.Fprintf(&b, "\nfunc (f *%s) %s() %s {\nswitch f.Kind() {\n", t.Name, sh.Go, typeName)
		for _, c := range sh.Cases {
			fmt.Fprintf(&b, "case %s:\nv := f.%s()\nreturn v.%s()\n", c.Const, c.F.Go, sh.Go)
		}
		fmt.Fprintf(&b, "}\nreturn %s\n}\n\n", zero)
	}
	if len(t.Shared) > 0 {
		sharedView(&b, t)
	}
	return b.String()
}

// sharedView renders <Union>Shared, a struct of every shared field, and
// ReadShared, which fills one from the case present with a single view of
// that case, where each accessor above makes its own.
func sharedView(b *strings.Builder, t *typ) {
	fmt.Fprintf(b, "// %sShared holds the fields that several cases of %s share, as ReadShared reads them from the case present.\ntype %sShared struct {\n", t.Name, t.Name, t.Name)
	for _, sh := range t.Shared {
		typeName := sh.GoType
		if sh.Cat == catString {
			typeName = "[]byte"
		}
		fmt.Fprintf(b, "%s %s // %s\n", sh.Go, typeName, sh.Name)
	}
	fmt.Fprintf(b, "}\n\n// ReadShared sets s to the shared fields of the case present: a field that case has not is zero, and a string is nil when null and aliases the wrapped buffer.\nfunc (f *%s) ReadShared(s *%sShared) {\n*s = %sShared{}\nswitch f.Kind() {\n", t.Name, t.Name, t.Name)
	for _, c := range t.Cases {
		var names []string
		for _, sh := range t.Shared {
			for _, sc := range sh.Cases {
				if sc == c {
					names = append(names, sh.Go)
				}
			}
		}
		if len(names) == 0 {
			continue
		}
		lhs := make([]string, len(names))
		rhs := make([]string, len(names))
		for i, n := range names {
			lhs[i], rhs[i] = "s."+n, "v."+n+"()"
		}
		fmt.Fprintf(b, "case %s:\nv := f.%s()\n%s = %s\n", c.Const, c.F.Go, strings.Join(lhs, ", "), strings.Join(rhs, ", "))
	}
	b.WriteString("}\n}\n\n")
}

// sharedSetters renders, for a union whose struct cases share fields, Case,
// which selects a case by its kind, and for each shared field the setters
// that write it into the selected case.
func sharedSetters(t *typ) string {
	if len(t.Shared) == 0 {
		return ""
	}
	var b strings.Builder
	bt := t.Name + "Builder"
	fmt.Fprintf(&b, "// Case selects case kind, as that case's setter does, so that the setters of the fields several cases share write into it. A kind that names no case, or a case that holds a value rather than a nested type (its own setter takes the value), fails the builder.\nfunc (b *%s) Case(kind %s) *%s {\nswitch kind {\n", bt, t.Kind.GoType, bt)
	for _, c := range t.Cases {
		if c.F.Cat == catStruct {
			fmt.Fprintf(&b, "case %s:\nb.%s()\n", c.Const, c.F.Go)
		}
	}
	fmt.Fprintf(&b, "default:\nb.Fail(&flyweight.Error{Type: %q, Field: \"kind\", Err: flyweight.ErrKind})\n}\nreturn b\n}\n\n", t.Name)
	setter := func(sh *shared, name, params, args string) {
		fmt.Fprintf(&b, "// %s sets %s of the selected case; a case without %s fails the builder.\nfunc (b *%s) %s(%s) *%s {\nswitch b.open {\n", name, sh.Name, sh.Name, bt, name, params, bt)
		for _, c := range sh.Cases {
			fmt.Fprintf(&b, "case %d:\nb.b%s.%s(%s)\n", childID(t, c.F), c.F.Go, name, args)
		}
		fmt.Fprintf(&b, "default:\nb.Fail(&flyweight.Error{Type: %q, Field: %q, Err: flyweight.ErrCase})\n}\nreturn b\n}\n\n", t.Name, sh.Name)
	}
	for _, sh := range t.Shared {
		if sh.Cat == catString {
			setter(sh, sh.Go, "v string", "v")
			setter(sh, sh.Go+"Bytes", "v []byte", "v")
			setter(sh, sh.Go+"Null", "", "")
			continue
		}
		setter(sh, sh.Go, "v "+sh.GoType, "v")
	}
	return b.String()
}
