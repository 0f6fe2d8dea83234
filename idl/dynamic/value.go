package dynamic

import (
	"fmt"
	"math"
	"math/big"
	"regexp"
	"strconv"

	"github.com/sluicehq/sluice/idl"
)

// A value is held as one of:
//   - int64: every integer and enum, canonically — signed kinds sign
//     extended, unsigned kinds zero extended, uint64 as its bits;
//   - str: a string or octets, possibly null;
//   - *array: the items of a T[] field;
//   - *node: a struct, union or list.

// str is a string or octets value.
type str struct {
	s    string
	null bool
}

// array holds the items of an array field, in order, and for a matcher
// the items that must not be present (headerMissing).
type array struct {
	items   []any
	missing []any
}

// node is a struct, union or list value: the fields set (a builder's or
// matcher's) or decoded, and a union's case.
type node struct {
	ti   *typeInfo
	vals map[*idl.Field]any
	kase *idl.Case
}

func newNode(ti *typeInfo) *node {
	return &node{ti: ti, vals: map[*idl.Field]any{}}
}

// num is an integer argument: v, or with big set the uint64 bits of a
// value above math.MaxInt64; huge spells a *big.Int beyond uint64, which
// fits no field.
type num struct {
	v    int64
	big  bool
	huge string
}

func (n num) String() string {
	if n.huge != "" {
		return n.huge
	}
	if n.big {
		return strconv.FormatUint(uint64(n.v), 10)
	}
	return strconv.FormatInt(n.v, 10)
}

// toNum converts any Go integer.
func toNum(a any) (num, bool) {
	switch a := a.(type) {
	case int:
		return num{v: int64(a)}, true
	case int8:
		return num{v: int64(a)}, true
	case int16:
		return num{v: int64(a)}, true
	case int32:
		return num{v: int64(a)}, true
	case int64:
		return num{v: a}, true
	case uint:
		return num{v: int64(a), big: uint64(a) > math.MaxInt64}, true
	case uint8:
		return num{v: int64(a)}, true
	case uint16:
		return num{v: int64(a)}, true
	case uint32:
		return num{v: int64(a)}, true
	case uint64:
		return num{v: int64(a), big: a > math.MaxInt64}, true
	case *big.Int:
		// The spec expression language keeps integer literals beyond
		// int64 as *big.Int, as JUEL falls back to BigInteger.
		switch {
		case a == nil:
			return num{}, false
		case a.IsInt64():
			return num{v: a.Int64()}, true
		case a.IsUint64():
			return num{v: int64(a.Uint64()), big: true}, true
		}
		return num{huge: a.String()}, true
	}
	return num{}, false
}

// fits reports whether n is in the range of integer kind k.
func (n num) fits(k idl.PrimKind) bool {
	if n.huge != "" {
		return false
	}
	lo, hi, hiU := k.Range()
	if n.big {
		return uint64(n.v) <= hiU && hiU > math.MaxInt64
	}
	return n.v >= lo && n.v <= hi
}

func rangeOf(k idl.PrimKind) string {
	lo, _, hiU := k.Range()
	return fmt.Sprintf("%s is %d..%d", k, lo, hiU)
}

// argString renders an argument for an error message.
func argString(a any) string {
	switch a := a.(type) {
	case nil:
		return "null"
	case string:
		return strconv.Quote(a)
	case []byte:
		return fmt.Sprintf("[]byte %q", a)
	}
	return fmt.Sprintf("%T %v", a, a)
}

// convert turns an argument into the value of field f (an item of f when f
// is an array): a range-checked int64 for integers and enums (an enum also
// by constant name), a str for strings and octets (a string, []byte, or nil
// for null).
func convert(f *idl.Field, arg any) (any, *Error) {
	bad := func(want string) *Error {
		return &Error{Msg: fmt.Sprintf("wrong argument %s: want %s", argString(arg), want), Kind: ErrArgs}
	}
	switch t := f.Type.Resolved.(type) {
	case *idl.Enum:
		if name, ok := arg.(string); ok {
			ev, ok := t.Lookup(name)
			if !ok {
				return nil, &Error{Msg: fmt.Sprintf("%q is not a constant of enum %s (%s)", name, t.Name, enumNames(t)), Kind: ErrRange}
			}
			return ev.Value, nil
		}
		n, ok := toNum(arg)
		if !ok {
			return nil, bad("a constant of enum " + t.Name + " (" + enumNames(t) + ") or an integer")
		}
		if k := t.BaseKind(); !n.fits(k) {
			return nil, &Error{Msg: fmt.Sprintf("%s out of range for enum %s (%s)", n, t.Name, rangeOf(k)), Kind: ErrRange}
		}
		return n.v, nil
	case *idl.Primitive:
		k := t.Kind
		switch {
		case k.IsInteger():
			n, ok := toNum(arg)
			if !ok {
				return nil, bad("an integer")
			}
			if !n.fits(k) {
				return nil, &Error{Msg: fmt.Sprintf("%s out of range (%s)", n, rangeOf(k)), Kind: ErrRange}
			}
			return n.v, nil
		case k.IsString():
			v, ok := toStr(arg)
			if !ok {
				return nil, bad("a string, bytes or null")
			}
			if max := maxLen(strWidth(k)); len(v.s) > max {
				return nil, &Error{Msg: fmt.Sprintf("%d bytes is too long for %s (at most %d)", len(v.s), k, max), Kind: ErrRange}
			}
			return v, nil
		case k == idl.Octets:
			v, ok := toStr(arg)
			if !ok {
				return nil, bad("bytes, a string or null")
			}
			return v, checkOctets(f, v)
		}
	}
	return nil, &Error{Msg: fmt.Sprintf("cannot set a value of %s from an argument", describe(f.Type.Resolved)), Kind: ErrArgs}
}

func toStr(arg any) (str, bool) {
	switch a := arg.(type) {
	case nil:
		return str{null: true}, true
	case string:
		return str{s: a}, true
	case []byte:
		return str{s: string(a)}, true
	}
	return str{}, false
}

// checkOctets validates octets for a field's form: octets[N] takes exactly
// N bytes; octets[size] at most what size can count, and null only when the
// field defaults to null (the generated readers refuse size -1 otherwise);
// plain octets are never null.
func checkOctets(f *idl.Field, v str) *Error {
	switch {
	case f.SizeLit > 0:
		if v.null || len(v.s) != f.SizeLit {
			return &Error{Msg: fmt.Sprintf("octets[%d] takes exactly %d bytes, got %s", f.SizeLit, f.SizeLit, strLen(v)), Kind: ErrRange}
		}
	case f.SizeField != nil:
		if v.null && !nullDefault(f) {
			return &Error{Msg: "cannot be null: only octets[size] fields that default to null can", Kind: ErrRange}
		}
		if k := sizeKind(f.SizeField); !(num{v: int64(len(v.s))}).fits(k) {
			return &Error{Msg: fmt.Sprintf("%d bytes do not fit size field %s (%s)", len(v.s), f.SizeField.Name, rangeOf(k)), Kind: ErrRange}
		}
	case v.null:
		return &Error{Msg: "unbounded octets cannot be null", Kind: ErrRange}
	}
	return nil
}

func strLen(v str) string {
	if v.null {
		return "null"
	}
	return strconv.Itoa(len(v.s))
}

func nullDefault(f *idl.Field) bool { return f.Default != nil && f.Default.Kind == idl.NullValue }

// sizeKind is the integer kind of a size field.
func sizeKind(f *idl.Field) idl.PrimKind {
	if e, ok := f.Type.Resolved.(*idl.Enum); ok {
		return e.BaseKind()
	}
	return f.Type.PrimKind()
}

func maxLen(width int) int {
	switch width {
	case 1:
		return math.MaxInt8
	case 2:
		return math.MaxInt16
	}
	return math.MaxInt32
}

func enumNames(e *idl.Enum) string {
	s := ""
	for i, v := range e.Values {
		if i > 0 {
			s += ", "
		}
		s += v.Name
	}
	return s
}

// defaultValue returns the IDL default of f, if it has one.
func defaultValue(f *idl.Field) (any, bool) {
	d := f.Default
	if d == nil || f.Array {
		return nil, false
	}
	switch d.Kind {
	case idl.IntValue:
		return d.Int, true
	case idl.StringValue:
		return str{s: d.Str}, true
	case idl.NullValue:
		return str{null: true}, true
	case idl.IdentValue:
		if e, ok := f.Type.Resolved.(*idl.Enum); ok {
			if ev, ok := e.Lookup(d.Ident); ok {
				return ev.Value, true
			}
		}
	}
	return nil, false
}

// intKind is the integer kind a field (or an item of it) is encoded as,
// or 0 when it is no integer or enum.
func intKind(t idl.Type) idl.PrimKind {
	switch t := t.(type) {
	case *idl.Enum:
		return t.BaseKind()
	case *idl.Primitive:
		if t.Kind.IsInteger() {
			return t.Kind
		}
	}
	return 0
}

// regex is a matcher's regular expression for a string or octets value,
// which must match all of it (as Java's Matcher.matches does).
type regex struct {
	re  *regexp.Regexp
	src string
}

func newRegex(f *idl.Field, arg any) (any, *Error) {
	if k := f.Type.PrimKind(); !k.IsString() && k != idl.Octets {
		return nil, &Error{Msg: fmt.Sprintf("a regular expression matches strings, not %s", describe(f.Type.Resolved)), Kind: ErrArgs}
	}
	src, ok := arg.(string)
	if !ok {
		return nil, &Error{Msg: fmt.Sprintf("wrong argument %s: want a regular expression string", argString(arg)), Kind: ErrArgs}
	}
	re, err := regexp.Compile(`^(?:` + src + `)$`)
	if err != nil {
		return nil, &Error{Msg: fmt.Sprintf("invalid regular expression %q: %v", src, err), Kind: ErrArgs}
	}
	return regex{re: re, src: src}, nil
}

// matches reports whether the decoded value v matches: a null never does.
func (r regex) matches(v any) bool {
	s, ok := v.(str)
	return ok && !s.null && r.re.MatchString(s.s)
}
