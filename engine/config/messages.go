package config

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"go.yaml.in/yaml/v3"
)

// validate runs the schema over the converted document and turns each
// failure into an Error in plain words at its line.
func (t *tree) validate(s *Schema) []*Error {
	err := s.sch.Validate(t.root)
	if err == nil {
		return nil
	}
	var verr *jsonschema.ValidationError
	if !errors.As(err, &verr) {
		return []*Error{{Pos: Pos{t.file, 1, 1}, Msg: err.Error()}}
	}
	var leaves []*jsonschema.ValidationError
	flatten(verr, &leaves)
	var out []*Error
	for _, leaf := range leaves {
		out = append(out, t.describe(leaf, s)...)
	}
	return out
}

// flatten collects the failures that say something about the document,
// dropping the wrappers (allOf, $ref, if/then groups) around them. Of a
// failed anyOf or oneOf it keeps the alternative the document came closest
// to, since listing why every alternative failed only confuses.
func flatten(e *jsonschema.ValidationError, out *[]*jsonschema.ValidationError) {
	switch k := e.ErrorKind.(type) {
	case *kind.Schema, *kind.Group, *kind.AllOf, *kind.Reference:
		if len(e.Causes) == 0 {
			*out = append(*out, e)
		}
		for _, c := range e.Causes {
			flatten(c, out)
		}
	case *kind.AnyOf:
		*out = append(*out, closest(e)...)
	case *kind.OneOf:
		if k.Subschemas == nil {
			*out = append(*out, closest(e)...)
		} else {
			*out = append(*out, e)
		}
	default:
		*out = append(*out, e)
	}
}

// closest picks the failures of the alternative of e that got furthest. If
// every alternative failed on the value's type alone, it merges them into
// one type error ("expected string or mapping, got integer").
func closest(e *jsonschema.ValidationError) []*jsonschema.ValidationError {
	var wants []string
	var got string
	var best []*jsonschema.ValidationError
	bestDepth := -1
	for _, c := range e.Causes {
		var leaves []*jsonschema.ValidationError
		flatten(c, &leaves)
		if k, ok := onlyType(leaves, e.InstanceLocation); ok {
			got = k.Got
			for _, w := range k.Want {
				if !slices.Contains(wants, w) {
					wants = append(wants, w)
				}
			}
			continue
		}
		depth := 0
		for _, l := range leaves {
			depth = max(depth, len(l.InstanceLocation))
		}
		if depth > bestDepth || (depth == bestDepth && len(leaves) < len(best)) {
			best, bestDepth = leaves, depth
		}
	}
	if best != nil {
		return best
	}
	if len(wants) == 0 {
		return []*jsonschema.ValidationError{e}
	}
	return []*jsonschema.ValidationError{{
		InstanceLocation: e.InstanceLocation,
		ErrorKind:        &kind.Type{Got: got, Want: wants},
	}}
}

// onlyType reports whether leaves is a single type error at loc.
func onlyType(leaves []*jsonschema.ValidationError, loc []string) (*kind.Type, bool) {
	if len(leaves) != 1 || !slices.Equal(leaves[0].InstanceLocation, loc) {
		return nil, false
	}
	k, ok := leaves[0].ErrorKind.(*kind.Type)
	return k, ok
}

func hasKey(m map[string]any, key string) bool {
	_, ok := m[key]
	return ok
}

// findKey returns the location of the first mapping, in pointer order,
// that has key, or the root.
func (t *tree) findKey(key string) []string {
	var best string
	found := false
	for ptr, l := range t.locs {
		if l.val.Kind != yaml.MappingNode || !slices.Contains(l.keys, key) {
			continue
		}
		if !found || ptr < best {
			best, found = ptr, true
		}
	}
	if !found || best == "" {
		return nil
	}
	toks := strings.Split(best[1:], "/")
	for i, tok := range toks {
		toks[i] = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
	}
	return toks
}

// componentOf says which component a location is inside: for
// bindings/app0/options/port it returns FragmentBinding, "app0" and the
// tokens after the name.
func componentOf(toks []string) (kind, name string, rest []string, ok bool) {
	switch {
	case len(toks) >= 2 && toks[0] == "bindings":
		return FragmentBinding, toks[1], toks[2:], true
	case len(toks) >= 2 && toks[0] == "guards":
		return FragmentGuard, toks[1], toks[2:], true
	case len(toks) >= 2 && toks[0] == "stores":
		return FragmentStore, toks[1], toks[2:], true
	case len(toks) >= 2 && toks[0] == "vaults":
		return FragmentVault, toks[1], toks[2:], true
	case len(toks) >= 3 && toks[0] == "telemetry" && toks[1] == "exporters":
		return FragmentExporter, toks[2], toks[3:], true
	}
	return "", "", nil, false
}

// componentType returns the type: of the component at the head of toks.
func (t *tree) componentType(toks []string) string {
	k, name, _, ok := componentOf(toks)
	if !ok {
		return ""
	}
	var parent []string
	if k == FragmentExporter {
		parent = []string{"telemetry", "exporters", name}
	} else {
		parent = toks[:2]
	}
	m, _ := t.at(parent).(map[string]any)
	typ, _ := m["type"].(string)
	return typ
}

// at returns the generic value at toks, or nil.
func (t *tree) at(toks []string) any {
	v := t.root
	for _, tok := range toks {
		switch x := v.(type) {
		case map[string]any:
			v = x[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

// describe words one schema failure.
func (t *tree) describe(e *jsonschema.ValidationError, s *Schema) []*Error {
	toks := e.InstanceLocation
	ptr := ptrOf(toks)
	if t.isTainted(ptr) {
		return nil
	}
	at := func(msg string) []*Error { return []*Error{t.errorAt(ptr, msg)} }
	switch k := e.ErrorKind.(type) {
	case *kind.Type:
		got := typeName(k.Got)
		switch t.at(toks).(type) {
		case int, int64, uint64:
			got = "integer"
		}
		return at(fmt.Sprintf("expected %s, got %s", typeNames(k.Want), got))
	case *kind.Required:
		var out []*Error
		for _, m := range k.Missing {
			e := t.errorAt(ptr, fmt.Sprintf("missing required key %q", m))
			e.ptr = "" // about a key, not the mapping's value
			out = append(out, e)
		}
		return out
	case *kind.AdditionalProperties:
		var out []*Error
		props := slices.Clone(k.Properties)
		sort.Strings(props)
		for _, p := range props {
			out = append(out, t.keyError(toks, p, fmt.Sprintf("unknown key %q", p)))
		}
		return out
	case *kind.PropertyNames:
		// The validator may report a propertyNames failure under a sibling's
		// location (it does not copy the location slice), so check that the
		// mapping has the key, else find one that does.
		if m, ok := t.at(toks).(map[string]any); !ok || !hasKey(m, k.Property) {
			toks = t.findKey(k.Property)
		}
		msg := fmt.Sprintf("invalid key %q", k.Property)
		var causes []*jsonschema.ValidationError
		for _, c := range e.Causes {
			flatten(c, &causes)
		}
		for _, c := range causes {
			if p, ok := c.ErrorKind.(*kind.Pattern); ok {
				msg += fmt.Sprintf(": does not match the pattern %s", p.Want)
				break
			}
		}
		return []*Error{t.keyError(toks, k.Property, msg)}
	case *kind.Enum:
		return at(t.enumMessage(toks, k, s))
	case *kind.Const:
		return at("must be " + display(k.Want))
	case *kind.Pattern:
		if k.Want == namePattern {
			return at(invalidName(k.Got))
		}
		return at(fmt.Sprintf("%q does not match the pattern %s", k.Got, k.Want))
	case *kind.FalseSchema:
		if typ := t.componentType(toks); typ != "" && len(toks) > 0 {
			ck, _, _, _ := componentOf(toks)
			what := fmt.Sprintf("%s type %q", ck, typ)
			// A type's kinds may differ in what they accept (KindSchema).
			if m, ok := t.at(toks[:2]).(map[string]any); ok && ck == FragmentBinding && s.byKind[typ] {
				if kind, ok := m["kind"].(string); ok {
					what += " of kind " + kind
				}
			}
			return at(fmt.Sprintf("%s does not accept %q", what, toks[len(toks)-1]))
		}
		return at("not allowed here")
	case *kind.Format:
		return at(fmt.Sprintf("%s is not a valid %s", display(k.Got), k.Want))
	case *kind.MinLength:
		return at(fmt.Sprintf("must be at least %d characters long", k.Want))
	case *kind.MaxLength:
		return at(fmt.Sprintf("must be at most %d characters long", k.Want))
	case *kind.MinItems:
		return at(fmt.Sprintf("must have at least %d %s", k.Want, plural(k.Want, "item")))
	case *kind.MaxItems:
		return at(fmt.Sprintf("must have at most %d %s", k.Want, plural(k.Want, "item")))
	case *kind.MinProperties:
		return at(fmt.Sprintf("must have at least %d %s", k.Want, plural(k.Want, "key")))
	case *kind.MaxProperties:
		return at(fmt.Sprintf("must have at most %d %s", k.Want, plural(k.Want, "key")))
	case *kind.Minimum:
		return at("must be at least " + k.Want.RatString())
	case *kind.Maximum:
		return at("must be at most " + k.Want.RatString())
	case *kind.ExclusiveMinimum:
		return at("must be greater than " + k.Want.RatString())
	case *kind.ExclusiveMaximum:
		return at("must be less than " + k.Want.RatString())
	case *kind.MultipleOf:
		return at("must be a multiple of " + k.Want.RatString())
	case *kind.UniqueItems:
		return at(fmt.Sprintf("items %d and %d are the same; they must be unique", k.Duplicates[0], k.Duplicates[1]))
	case *kind.DependentRequired:
		return at(fmt.Sprintf("key %q needs %s", k.Prop, quoteAll(k.Missing)))
	case *kind.Dependency:
		return at(fmt.Sprintf("key %q needs %s", k.Prop, quoteAll(k.Missing)))
	case *kind.OneOf:
		return at("matches more than one of the allowed forms")
	case *kind.Not:
		return at("is a value that is not allowed here")
	case *kind.Contains, *kind.MinContains, *kind.MaxContains:
		return at("does not have the items it needs")
	}
	// Anything else: the library's own words, without its location prefix.
	msg := (&jsonschema.ValidationError{ErrorKind: e.ErrorKind}).Error()
	msg = strings.TrimPrefix(msg, "at '': ")
	return at(msg)
}

// keyError reports a problem with key name of the mapping at toks, at the
// key's own line but under the mapping's path.
func (t *tree) keyError(toks []string, name, msg string) *Error {
	parent := t.errorAt(ptrOf(toks), msg)
	parent.ptr = "" // about a key, not the mapping's value
	if child, ok := t.locs[ptrOf(append(slices.Clone(toks), name))]; ok && child.key != nil {
		parent.Line, parent.Col = child.key.Line, child.key.Column
	}
	return parent
}

func (t *tree) enumMessage(toks []string, k *kind.Enum, s *Schema) string {
	got, _ := k.Got.(string)
	if ck, _, rest, ok := componentOf(toks); ok && len(rest) == 1 {
		switch rest[0] {
		case "type":
			known := s.types[ck]
			if len(known) == 0 {
				return fmt.Sprintf("unknown %s type %q (no %s types are registered)", ck, got, ck)
			}
			return fmt.Sprintf("unknown %s type %q (known: %s)", ck, got, strings.Join(known, ", "))
		case "kind":
			if typ := t.componentType(toks); typ != "" && ck == FragmentBinding && slices.Contains(bindingKinds, got) {
				return fmt.Sprintf("%s type %q does not support kind %q (supported: %s)", ck, typ, got, strings.Join(s.kinds[typ], ", "))
			}
		}
	}
	want := make([]string, len(k.Want))
	for i, w := range k.Want {
		want[i] = displayPlain(w)
	}
	if len(want) == 1 {
		return "must be " + want[0]
	}
	return "must be one of " + strings.Join(want, ", ")
}

func invalidName(name string) string {
	return fmt.Sprintf("invalid name %q: a name starts with a letter and goes on with letters, digits, '.', '_' or '-'", name)
}

// typeName words a JSON type the way YAML users know it.
func typeName(t string) string {
	switch t {
	case "object":
		return "mapping"
	case "array":
		return "list"
	}
	return t
}

func typeNames(ts []string) string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = typeName(t)
	}
	return strings.Join(out, " or ")
}

// display shows a value in a message: strings quoted, the rest as YAML
// would write them.
func display(v any) string {
	if s, ok := v.(string); ok {
		return strconv.Quote(s)
	}
	return displayPlain(v)
}

// displayPlain is display without quotes on strings, for lists of choices.
func displayPlain(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		if x == "" || strings.ContainsAny(x, ", \t\r\n\"") {
			return strconv.Quote(x)
		}
		return x
	case map[string]any:
		return "a mapping"
	case []any:
		return "a list"
	}
	return fmt.Sprint(v)
}

func quoteAll(ss []string) string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return strings.Join(out, ", ")
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
