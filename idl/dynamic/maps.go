package dynamic

import (
	"fmt"
	"slices"

	"github.com/sluicehq/sluice/idl"
)

// toMap converts a decoded node as Decode documents.
func toMap(n *node) map[string]any {
	m := make(map[string]any, len(n.vals)+1)
	for f, v := range n.vals {
		m[f.Name] = toAny(f, v)
	}
	if n.kase != nil {
		m["kind"] = n.kase.Field.Name
	}
	return m
}

func toAny(f *idl.Field, v any) any {
	if arr, ok := v.(*array); ok {
		items := make([]any, len(arr.items))
		for i, item := range arr.items {
			items[i] = itemAny(f, item)
		}
		return items
	}
	return itemAny(f, v)
}

func itemAny(f *idl.Field, v any) any {
	switch v := v.(type) {
	case *node:
		return toMap(v)
	case int64:
		switch t := f.Type.Resolved.(type) {
		case *idl.Enum:
			for _, ev := range t.Values {
				if ev.Value == v {
					return ev.Name
				}
			}
		case *idl.Primitive:
			if t.Kind == idl.Uint64 {
				return uint64(v)
			}
		}
		return v
	case str:
		if v.null {
			return nil
		}
		if f.Type.PrimKind() == idl.Octets {
			return []byte(v.s)
		}
		return v.s
	}
	return nil
}

// fromMap sets the fields of n from a map shaped like Decode's result.
// Size fields, which a builder computes, are ignored.
func fromMap(n *node, path string, vals map[string]any) error {
	known := map[string]bool{}
	for _, f := range n.ti.fields {
		known[f.Name] = true
		v, ok := vals[f.Name]
		if !ok || n.ti.sized[f] != nil {
			continue
		}
		if err := setFromAny(n, path, f, v); err != nil {
			return err
		}
	}
	if u := n.ti.union; u != nil {
		known["kind"] = true
		kind, ok := vals["kind"]
		var c *idl.Case
		for _, uc := range u.Cases {
			known[uc.Field.Name] = true
			if _, set := vals[uc.Field.Name]; set && !ok || uc.Field.Name == kind {
				c = uc
			}
		}
		if c == nil {
			return &Error{Path: path + ".kind", Msg: fmt.Sprintf("no case of union %s given (kind %v)", n.ti.name, kind), Kind: ErrMissing}
		}
		selectCase(n, c)
		if v, ok := vals[c.Field.Name]; ok {
			if err := setFromAny(n, path, c.Field, v); err != nil {
				return err
			}
		}
	}
	var unknown []string
	for name := range vals {
		if !known[name] {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return &Error{Path: path + "." + unknown[0], Msg: fmt.Sprintf("unknown field of %s (fields: %s)", describe(n.ti.t), n.ti.methodNames()),
			Kind: ErrUnknownMethod}
	}
	return nil
}

func setFromAny(n *node, path string, f *idl.Field, v any) error {
	fpath := path + "." + f.Name
	if !f.Array {
		val, err := itemFromAny(n.ti, f, v, fpath)
		if err != nil {
			return err
		}
		n.vals[f] = val
		return nil
	}
	items, ok := v.([]any)
	if !ok && v != nil {
		return &Error{Path: fpath, Msg: fmt.Sprintf("wrong value %s: want a []any of items", argString(v)), Kind: ErrArgs}
	}
	arr := &array{items: make([]any, 0, len(items))}
	for i, item := range items {
		val, err := itemFromAny(n.ti, f, item, fmt.Sprintf("%s[%d]", fpath, i))
		if err != nil {
			return err
		}
		arr.items = append(arr.items, val)
	}
	n.vals[f] = arr
	return nil
}

func itemFromAny(ti *typeInfo, f *idl.Field, v any, path string) (any, error) {
	if it, ok := ti.schema.infos[f.Type.Resolved]; ok {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, &Error{Path: path, Msg: fmt.Sprintf("wrong value %s: want a map[string]any of the fields of %s", argString(v), describe(it.t)),
				Kind: ErrArgs}
		}
		child := newNode(it)
		if err := fromMap(child, path, m); err != nil {
			return nil, err
		}
		return child, nil
	}
	val, err := convert(f, v)
	if err != nil {
		err.Path = path
		return nil, err
	}
	return val, nil
}
