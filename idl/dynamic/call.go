package dynamic

import (
	"fmt"
	"strings"

	"github.com/sluicehq/sluice/idl"
)

// step is the outcome of one method call on a node.
type step struct {
	child *node  // a nested value to continue with, or nil to stay
	path  string // the child's path
	build bool   // the call was build()
}

// call applies one method of the k3po-style chain to n, whose path is
// path. matcher relaxes the rules that only make sense for building: a
// matcher may name a size field, to check its decoded value.
func call(n *node, path, name string, args []any, matcher bool) (step, error) {
	if name == "build" {
		if len(args) != 0 {
			return step{}, &Error{Path: path, Msg: fmt.Sprintf("build takes no arguments, got %d", len(args)), Kind: ErrArgs}
		}
		return step{build: true}, nil
	}
	m, ok := n.ti.methods[name]
	regex := false
	if base, isRegex := strings.CutSuffix(name, "Regex"); !ok && isRegex && matcher {
		// headerRegex(":date", ".*"): the method base, with its last
		// argument a regular expression the decoded string must match,
		// as Zilla's HttpFunctions matchers have it.
		m, ok = n.ti.methods[base]
		regex = ok
	}
	if base, isMissing := strings.CutSuffix(name, "Missing"); !ok && isMissing && matcher {
		// headerMissing("alt-svc"): no item of the array may match the
		// fields given, as Zilla's HttpFunctions matchers have it.
		if bm, found := n.ti.methods[base]; found && bm.f.Array {
			return step{}, setMissing(n, path, bm, name, args)
		}
	}
	if !ok {
		return step{}, &Error{Path: path, Msg: fmt.Sprintf("unknown method %q of %s (methods: %s)", name, describe(n.ti.t), n.ti.methodNames()),
			Kind: ErrUnknownMethod}
	}
	if regex && (len(args) == 0 || composite(m.f.Type.Resolved) && !m.f.Array) {
		return step{}, &Error{Path: path + "." + m.f.Name, Msg: fmt.Sprintf("%s takes a regular expression as its last argument", name), Kind: ErrArgs}
	}
	if m.c != nil {
		selectCase(n, m.c)
		switch {
		case m.kind != mCase || len(args) != 0:
		case m.f.Array:
			// An array case named without items selects the case with
			// an empty array; its singular appends items.
			if _, ok := n.vals[m.f]; !ok {
				n.vals[m.f] = &array{}
			}
			return step{}, nil
		case !composite(m.f.Type.Resolved):
			// A scalar case named without a value only selects the case:
			// a matcher then checks the kind alone; a builder writes the
			// case's default or fails as missing.
			return step{}, nil
		}
	}
	return setField(n, path, m.f, args, mode{matcher: matcher, appendOnly: m.kind == mAppend, regex: regex})
}

// mode qualifies a call: made on a matcher, through an array's singular,
// or through a Regex method.
type mode struct {
	matcher, appendOnly, regex bool
}

// selectCase makes c the union's case, dropping another case's value.
func selectCase(n *node, c *idl.Case) {
	if n.kase != c {
		if n.kase != nil {
			delete(n.vals, n.kase.Field)
		}
		n.kase = c
	}
}

// setField applies a call naming field f (or, with appendOnly, the
// singular of array field f).
func setField(n *node, path string, f *idl.Field, args []any, md mode) (step, error) {
	fpath := path + "." + f.Name
	wrap := func(err *Error) error {
		if err.Path == "" {
			err.Path = fpath
		} else {
			err.Path = fpath + err.Path
		}
		return err
	}
	if f.Array {
		arr, _ := n.vals[f].(*array)
		if arr == nil {
			arr = &array{}
		}
		if it, ok := itemInfo(n.ti, f); ok {
			item := newNode(it)
			if len(args) > 0 {
				if err := fillPositional(item, args, md); err != nil {
					err.Path = fmt.Sprintf("[%d]%s", len(arr.items), err.Path)
					return step{}, wrap(err)
				}
			}
			arr.items = append(arr.items, item)
			n.vals[f] = arr
			if len(args) > 0 {
				return step{}, nil
			}
			return step{child: item, path: fmt.Sprintf("%s[%d]", fpath, len(arr.items)-1)}, nil
		}
		if md.appendOnly && len(args) == 0 {
			return step{}, wrap(&Error{Msg: "takes at least one item to append", Kind: ErrArgs})
		}
		items := make([]any, 0, len(args))
		for i, a := range args {
			v, err := convertArg(f, a, md.regex)
			if err != nil {
				err.Path = fmt.Sprintf("[%d]", len(arr.items)+i)
				return step{}, wrap(err)
			}
			items = append(items, v)
		}
		arr.items = append(arr.items, items...)
		n.vals[f] = arr
		return step{}, nil
	}
	if sized := n.ti.sized[f]; sized != nil && !md.matcher {
		return step{}, wrap(&Error{Msg: fmt.Sprintf("is the size of %s and is computed from it; set %s instead", sized.Name, sized.Name),
			Kind: ErrComputed})
	}
	if composite(f.Type.Resolved) {
		if len(args) != 0 {
			return step{}, wrap(&Error{Msg: fmt.Sprintf("takes no arguments: %s() opens the %s, whose fields are set in turn, then build()",
				f.Name, describe(f.Type.Resolved)), Kind: ErrArgs})
		}
		child, _ := n.vals[f].(*node)
		if child == nil {
			child = newNode(nodeInfo(n.ti, f))
			n.vals[f] = child
		}
		return step{child: child, path: fpath}, nil
	}
	if len(args) != 1 {
		return step{}, wrap(&Error{Msg: fmt.Sprintf("takes 1 argument, got %d", len(args)), Kind: ErrArgs})
	}
	v, err := convertArg(f, args[0], md.regex)
	if err != nil {
		return step{}, wrap(err)
	}
	n.vals[f] = v
	return step{}, nil
}

// setMissing records, on a matcher, an item of the array named by m that
// the decoded array must not hold: the item's leading fields are args, in
// IDL order, as header(name, value) takes them, and the fields not given
// are not compared.
func setMissing(n *node, path string, m method, name string, args []any) error {
	f := m.f
	fpath := path + "." + f.Name
	if len(args) == 0 {
		return &Error{Path: fpath, Msg: fmt.Sprintf("%s takes the item that must be absent", name), Kind: ErrArgs}
	}
	if m.c != nil {
		selectCase(n, m.c)
	}
	arr, _ := n.vals[f].(*array)
	if arr == nil {
		arr = &array{}
	}
	var item any
	if it, ok := itemInfo(n.ti, f); ok {
		in := newNode(it)
		if err := fillPositional(in, args, mode{matcher: true}); err != nil {
			err.Path = fpath + err.Path
			return err
		}
		item = in
	} else {
		if len(args) != 1 {
			return &Error{Path: fpath, Msg: fmt.Sprintf("%s takes 1 argument, got %d", name, len(args)), Kind: ErrArgs}
		}
		v, err := convert(f, args[0])
		if err != nil {
			err.Path = fpath
			return err
		}
		item = v
	}
	arr.missing = append(arr.missing, item)
	n.vals[f] = arr
	return nil
}

// convertArg converts an argument, or compiles it as a regular expression.
func convertArg(f *idl.Field, arg any, regex bool) (any, *Error) {
	if regex {
		return newRegex(f, arg)
	}
	return convert(f, arg)
}

// fillPositional sets the fields of a new array item from args, in IDL
// order: header(":method", "GET") for an HttpHeader{name, value}. Size
// fields are skipped (computed) by a builder.
func fillPositional(item *node, args []any, md mode) *Error {
	if item.ti.union != nil {
		return &Error{Msg: fmt.Sprintf("items of %s cannot be given as arguments: call with no arguments, then select a case",
			describe(item.ti.t)), Kind: ErrArgs}
	}
	var settable []*idl.Field
	for _, f := range item.ti.fields {
		if md.matcher || item.ti.sized[f] == nil {
			settable = append(settable, f)
		}
	}
	if len(args) > len(settable) {
		return &Error{Msg: fmt.Sprintf("%d arguments for %s, which has %d fields", len(args), describe(item.ti.t), len(settable)), Kind: ErrArgs}
	}
	for i, a := range args {
		f := settable[i]
		if f.Array || composite(f.Type.Resolved) {
			return &Error{Path: "." + f.Name, Msg: fmt.Sprintf("cannot be given as an argument (%s): call with no arguments to open the item", fieldDesc(f)),
				Kind: ErrArgs}
		}
		v, err := convertArg(f, a, md.regex && i == len(args)-1)
		if err != nil {
			err.Path = "." + f.Name
			return err
		}
		item.vals[f] = v
	}
	return nil
}

func fieldDesc(f *idl.Field) string {
	if f.Array {
		return describe(f.Type.Resolved) + "[]"
	}
	return describe(f.Type.Resolved)
}

// nodeInfo returns the typeInfo of composite field f of the type ti. The
// schema holds an info for every declared composite type; ti's field types
// are among them.
func nodeInfo(ti *typeInfo, f *idl.Field) *typeInfo {
	return ti.schema.infos[f.Type.Resolved]
}

// itemInfo returns the typeInfo of the items of array field f, when they
// are composite.
func itemInfo(ti *typeInfo, f *idl.Field) (*typeInfo, bool) {
	it, ok := ti.schema.infos[f.Type.Resolved]
	return it, ok
}
