package dynamic

import (
	"fmt"

	"github.com/sluicehq/sluice/idl"
)

// Diff decodes expected and observed, each one value of the struct, union
// or list named typeName, and reports the first field, in IDL order, whose
// values differ:
//
//	HttpBeginEx.headers[2].name: expected ":path", observed ":authority"
//
// It returns nil when both decode to the same value. The error is an
// *Error of kind ErrMismatch whose Path names the field; bytes that do not
// decode give an *Error of kind ErrMalformed saying which side failed.
func (s *Schema) Diff(typeName string, expected, observed []byte) error {
	ti, err := s.info(typeName)
	if err != nil {
		return err
	}
	want, err := decodeAll(expected, ti)
	if err != nil {
		return side("expected", err)
	}
	got, err := decodeAll(observed, ti)
	if err != nil {
		return side("observed", err)
	}
	if e := diffNode(want, got, ti.name); e != nil {
		return e
	}
	if string(expected) != string(observed) {
		// Two encodings of one value: only a decoder laxer than the
		// encoder can get here, but the bytes still differ.
		return &Error{Path: ti.name, Msg: fmt.Sprintf("the same value encoded differently: expected %s, observed %s",
			hexBytes(expected), hexBytes(observed)), Kind: ErrMismatch}
	}
	return nil
}

// side says which of Diff's values err, a decoding error, came from.
func side(which string, err error) error {
	if e, ok := err.(*Error); ok {
		c := *e
		c.Msg = which + " value: " + c.Msg
		return &c
	}
	return err
}

func differ(path, want, got string) *Error {
	return &Error{Path: path, Msg: fmt.Sprintf("expected %s, observed %s", want, got), Kind: ErrMismatch}
}

// diffNode compares two decoded values of one type.
func diffNode(want, got *node, path string) *Error {
	for _, f := range want.ti.fields {
		if e := diffField(want, got, f, path); e != nil {
			return e
		}
	}
	if want.kase != got.kase {
		return differ(path+".kind", caseName(want.kase), caseName(got.kase))
	}
	if c := want.kase; c != nil {
		return diffField(want, got, c.Field, path)
	}
	return nil
}

func caseName(c *idl.Case) string {
	if c == nil {
		return "none"
	}
	return c.Field.Name
}

// diffField compares field f of two decoded values; a list field absent
// from one reads as its default, as the generated readers have it.
func diffField(want, got *node, f *idl.Field, path string) *Error {
	path += "." + f.Name
	wv, wok := want.vals[f]
	gv, gok := got.vals[f]
	if !wok {
		wv, wok = defaultValue(f)
	}
	if !gok {
		gv, gok = defaultValue(f)
	}
	switch {
	case !wok && !gok:
		return nil
	case !gok:
		return differ(path, formatValue(f, wv), "absent")
	case !wok:
		return differ(path, "absent", formatValue(f, gv))
	}
	if f.Array {
		return diffArray(f, wv.(*array), gv.(*array), path)
	}
	return diffItem(f, wv, gv, path)
}

// diffArray compares items in order, then the counts.
func diffArray(f *idl.Field, want, got *array, path string) *Error {
	for i := range min(len(want.items), len(got.items)) {
		if e := diffItem(f, want.items[i], got.items[i], fmt.Sprintf("%s[%d]", path, i)); e != nil {
			return e
		}
	}
	switch n, m := len(want.items), len(got.items); {
	case n > m:
		return &Error{Path: path, Msg: fmt.Sprintf("expected %d items, observed %d: missing %s", n, m, formatItem(f, want.items[m])),
			Kind: ErrMismatch}
	case m > n:
		return &Error{Path: path, Msg: fmt.Sprintf("expected %d items, observed %d: extra %s", n, m, formatItem(f, got.items[n])),
			Kind: ErrMismatch}
	}
	return nil
}

// diffItem compares one value of f's type.
func diffItem(f *idl.Field, want, got any, path string) *Error {
	if w, ok := want.(*node); ok {
		return diffNode(w, got.(*node), path)
	}
	if want != got {
		return differ(path, formatItem(f, want), formatItem(f, got))
	}
	return nil
}
