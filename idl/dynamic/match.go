package dynamic

import (
	"fmt"
	"strings"

	"github.com/sluicehq/sluice/idl"
)

func mismatch(path, want, got string) *Error {
	return &Error{Path: path, Msg: fmt.Sprintf("expected %s, got %s", want, got), Kind: ErrMismatch}
}

// matchNode checks the fields set in want against the decoded got.
func matchNode(want, got *node, path string) error {
	for _, f := range want.ti.fields {
		if err := matchField(want, got, f, path); err != nil {
			return err
		}
	}
	if c := want.kase; c != nil {
		if got.kase != c {
			gotCase := "none"
			if got.kase != nil {
				gotCase = got.kase.Field.Name
			}
			return mismatch(path+".kind", c.Field.Name, gotCase)
		}
		return matchField(want, got, c.Field, path)
	}
	return nil
}

// matchField checks field f, if want sets it.
func matchField(want, got *node, f *idl.Field, path string) error {
	wv, ok := want.vals[f]
	if !ok {
		return nil
	}
	path += "." + f.Name
	gv, ok := got.vals[f]
	if !ok {
		// Only a list field can be absent; it reads as its default.
		if gv, ok = defaultValue(f); !ok {
			return mismatch(path, formatValue(f, wv), "absent")
		}
	}
	if f.Array {
		return matchArray(f, wv.(*array), gv.(*array), path)
	}
	return matchItem(f, wv, gv, path)
}

// matchItem checks one value of f's type.
func matchItem(f *idl.Field, want, got any, path string) error {
	switch w := want.(type) {
	case *node:
		return matchNode(w, got.(*node), path)
	case regex:
		if !w.matches(got) {
			return mismatch(path, formatItem(f, want), formatItem(f, got))
		}
		return nil
	}
	if want != got {
		return mismatch(path, formatItem(f, want), formatItem(f, got))
	}
	return nil
}

// matchArray checks that each item wanted is in got, in any order: Zilla's
// HttpFunctions matchers test each header given with anyMatch.
func matchArray(f *idl.Field, want, got *array, path string) error {
	for _, w := range want.items {
		found := false
		for _, g := range got.items {
			if matchItem(f, w, g, path) == nil {
				found = true
				break
			}
		}
		if !found {
			return &Error{Path: path, Msg: fmt.Sprintf("expected an item %s, got %s", formatItem(f, w), formatValue(f, got)),
				Kind: ErrMismatch}
		}
	}
	for _, w := range want.missing {
		for i, g := range got.items {
			if matchItem(f, w, g, path) == nil {
				return &Error{Path: fmt.Sprintf("%s[%d]", path, i), Msg: fmt.Sprintf("expected no item %s, got %s", formatItem(f, w), formatItem(f, g)),
					Kind: ErrMismatch}
			}
		}
	}
	return nil
}

// formatValue renders the value of field f.
func formatValue(f *idl.Field, v any) string {
	var b strings.Builder
	writeField(&b, f, v)
	return b.String()
}
