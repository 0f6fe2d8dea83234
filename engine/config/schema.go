package config

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

//go:embed base.schema.json
var baseSchemaJSON []byte

// The component kinds a [Fragment] can extend.
const (
	FragmentBinding  = "binding"
	FragmentGuard    = "guard"
	FragmentStore    = "store"
	FragmentVault    = "vault"
	FragmentExporter = "exporter"
)

// fragmentKinds maps each component kind to its base schema definition.
var fragmentKinds = []string{FragmentBinding, FragmentExporter, FragmentGuard, FragmentStore, FragmentVault}

// bindingKinds is the base schema's kind enum, in its order.
var bindingKinds = []string{KindClient, KindServer, KindProxy, KindRemoteClient, KindRemoteServer, KindCacheClient, KindCacheServer}

// namePattern is Zilla's pattern for namespace, binding and component names.
const namePattern = `^[a-zA-Z]+[a-zA-Z0-9\._\-]*$`

var nameRE = regexp.MustCompile(namePattern)

// schemaBase is the URL every schema resource is registered under; nothing
// is ever fetched from it.
const schemaBase = "https://sluice.invalid/schema/"

// Fragment is what one binding, guard, store, vault or exporter type adds
// to the schema, as a Zilla *.schema.patch.json does: its type name, and
// the JSON Schemas of its options and, for bindings, of one route `when`
// item and of a route's `with`. A nil schema means the type takes none of
// that part, so the key is rejected. Each schema is its own resource, so it
// may use its own $defs and "#/..." references.
type Fragment struct {
	// Kind is binding, guard, store, vault or exporter.
	Kind string
	// Type is the name configs use in "type:".
	Type string
	// Kinds lists the kinds a binding type supports (required for
	// bindings); for a guard it optionally restricts "kind:".
	Kinds []string
	// Options is the JSON Schema of options.
	Options json.RawMessage
	// When is the JSON Schema of one item of a route's when (bindings only).
	When json.RawMessage
	// With is the JSON Schema of a route's with (bindings only).
	With json.RawMessage
	// KindSchema adds, for a kind, a JSON Schema that the whole binding
	// entry (kind, options, routes…) must also match, for what one kind
	// requires or refuses of the type's shared options and conditions,
	// as Zilla's per-kind if/then does (bindings only).
	KindSchema map[string]json.RawMessage
	// Refs name the places in options that refer to other components by
	// name; Load reports a name that the file does not declare.
	Refs []Ref
	// Unsupported marks options that the schema accepts, because Zilla
	// has them, but that the type does not implement: Load reports each
	// one present as not supported yet, naming the feature, rather than
	// as an unknown key.
	Unsupported []Unsupported
}

// Unsupported is an option a type accepts in its schema but does not
// implement, such as http's requests: Unsupported{Path: "/requests",
// Feature: "request and response validation"}.
type Unsupported struct {
	// Path is a JSON pointer into options; a "*" token matches every key
	// of a mapping and every item of a list.
	Path string
	// Feature says what the option does, for the error.
	Feature string
}

// Ref marks a place in a component's options that names another component,
// such as the store of mcp's cache: Ref{Path: "/cache/store", Kind: "store"}.
type Ref struct {
	// Path is a JSON pointer into options; a "*" token matches every key of
	// a mapping and every item of a list.
	Path string
	// Kind is what the name refers to: binding, guard, store or vault.
	Kind string
	// Keys checks the keys of the mapping at Path instead of its value, as
	// in authorization: {guardName: {...}}.
	Keys bool
}

// Schema is the compiled base schema plus the registered fragments. It is
// safe for concurrent use.
type Schema struct {
	sch *jsonschema.Schema
	// types holds the sorted registered types of each component kind.
	types map[string][]string
	// kinds holds the kinds of each binding type.
	kinds map[string][]string
	// refs holds the references of each component kind and type.
	refs map[string]map[string][]Ref
	// byKind holds the binding types with a KindSchema.
	byKind map[string]bool
	// unsupported holds the unsupported options of each kind and type.
	unsupported map[string]map[string][]Unsupported
}

// Types returns the registered types of a component kind, sorted.
func (s *Schema) Types(kind string) []string { return slices.Clone(s.types[kind]) }

// BaseSchema returns the embedded base JSON Schema (draft 2020-12), before
// any fragment is added.
func BaseSchema() []byte { return bytes.Clone(baseSchemaJSON) }

var defaultSchema = sync.OnceValues(func() (*Schema, error) { return NewSchema() })

// NewSchema compiles the base schema extended by fragments. The order of
// fragments does not matter. Each type's `type:` must then be one of the
// registered types of its component kind, and for each registered type the
// schema checks the kind against the fragment's Kinds, options against its
// Options, and each route's when items and with against When and With.
func NewSchema(fragments ...Fragment) (*Schema, error) {
	frags := slices.Clone(fragments)
	slices.SortFunc(frags, func(a, b Fragment) int {
		if c := strings.Compare(a.Kind, b.Kind); c != 0 {
			return c
		}
		return strings.Compare(a.Type, b.Type)
	})
	s := &Schema{
		types: map[string][]string{},
		kinds: map[string][]string{},
		refs:  map[string]map[string][]Ref{},

		unsupported: map[string]map[string][]Unsupported{},
		byKind:      map[string]bool{},
	}
	for i, f := range frags {
		if err := checkFragment(f); err != nil {
			return nil, err
		}
		if i > 0 && frags[i-1].Kind == f.Kind && frags[i-1].Type == f.Type {
			return nil, fmt.Errorf("config: %s type %q: registered twice", f.Kind, f.Type)
		}
		s.types[f.Kind] = append(s.types[f.Kind], f.Type)
		if f.Kind == FragmentBinding {
			s.kinds[f.Type] = slices.Clone(f.Kinds)
		}
		if len(f.Refs) > 0 {
			if s.refs[f.Kind] == nil {
				s.refs[f.Kind] = map[string][]Ref{}
			}
			s.refs[f.Kind][f.Type] = slices.Clone(f.Refs)
		}
		if len(f.KindSchema) > 0 {
			s.byKind[f.Type] = true
		}
		if len(f.Unsupported) > 0 {
			if s.unsupported[f.Kind] == nil {
				s.unsupported[f.Kind] = map[string][]Unsupported{}
			}
			s.unsupported[f.Kind][f.Type] = slices.Clone(f.Unsupported)
		}
	}

	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()

	base, err := jsonschema.UnmarshalJSON(bytes.NewReader(baseSchemaJSON))
	if err != nil {
		return nil, fmt.Errorf("config: base schema: %w", err)
	}
	defs := base.(map[string]any)["$defs"].(map[string]any)
	allOf := map[string][]any{}
	for _, f := range frags {
		then, err := fragmentThen(c, f)
		if err != nil {
			return nil, err
		}
		allOf[f.Kind] = append(allOf[f.Kind], map[string]any{
			"if": map[string]any{
				"properties": map[string]any{"type": map[string]any{"const": f.Type}},
				"required":   []any{"type"},
			},
			"then": then,
		})
	}
	for _, kind := range fragmentKinds {
		def := defs[kind].(map[string]any)
		enum := []any{}
		for _, typ := range s.types[kind] {
			enum = append(enum, typ)
		}
		def["properties"].(map[string]any)["type"].(map[string]any)["enum"] = enum
		// Draft 2020-12 wants a non-empty allOf.
		if len(allOf[kind]) == 0 {
			delete(def, "allOf")
		} else {
			def["allOf"] = allOf[kind]
		}
	}
	url := schemaBase + "base.json"
	if err := c.AddResource(url, base); err != nil {
		return nil, fmt.Errorf("config: base schema: %w", err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("config: compile schema: %w", err)
	}
	s.sch = sch
	return s, nil
}

func checkFragment(f Fragment) error {
	if !slices.Contains(fragmentKinds, f.Kind) {
		return fmt.Errorf("config: fragment %q: kind %q is not one of %s", f.Type, f.Kind, strings.Join(fragmentKinds, ", "))
	}
	if !nameRE.MatchString(f.Type) {
		return fmt.Errorf("config: %s type %q: not a valid name", f.Kind, f.Type)
	}
	switch f.Kind {
	case FragmentBinding:
		if len(f.Kinds) == 0 {
			return fmt.Errorf("config: binding type %q: no kinds", f.Type)
		}
		for i, k := range f.Kinds {
			if !slices.Contains(bindingKinds, k) {
				return fmt.Errorf("config: binding type %q: kind %q is not one of %s", f.Type, k, strings.Join(bindingKinds, ", "))
			}
			if slices.Contains(f.Kinds[:i], k) {
				return fmt.Errorf("config: binding type %q: kind %q listed twice", f.Type, k)
			}
		}
	case FragmentGuard:
	default:
		if len(f.Kinds) > 0 {
			return fmt.Errorf("config: %s type %q: only bindings and guards have kinds", f.Kind, f.Type)
		}
	}
	if f.Kind != FragmentBinding && (f.When != nil || f.With != nil || f.KindSchema != nil) {
		return fmt.Errorf("config: %s type %q: only bindings have routes (when, with)", f.Kind, f.Type)
	}
	for k := range f.KindSchema {
		if !slices.Contains(f.Kinds, k) {
			return fmt.Errorf("config: binding type %q: schema of kind %q, which is not one of its kinds", f.Type, k)
		}
	}
	for _, u := range f.Unsupported {
		if !strings.HasPrefix(u.Path, "/") || u.Feature == "" {
			return fmt.Errorf("config: %s type %q: unsupported option %q: want a JSON pointer and a feature", f.Kind, f.Type, u.Path)
		}
	}
	for _, r := range f.Refs {
		if r.Path != "" && !strings.HasPrefix(r.Path, "/") {
			return fmt.Errorf("config: %s type %q: ref %q: not a JSON pointer", f.Kind, f.Type, r.Path)
		}
		switch r.Kind {
		case FragmentBinding, FragmentGuard, FragmentStore, FragmentVault:
		default:
			return fmt.Errorf("config: %s type %q: ref %q: kind %q is not binding, guard, store or vault", f.Kind, f.Type, r.Path, r.Kind)
		}
	}
	return nil
}

// fragmentThen builds the `then` schema of one fragment. Each part is added
// as its own resource and compiled alone first, so a broken fragment is
// reported under its own name.
func fragmentThen(c *jsonschema.Compiler, f Fragment) (map[string]any, error) {
	part := func(name string, raw json.RawMessage) (any, error) {
		if raw == nil {
			return false, nil
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			return nil, fmt.Errorf("config: %s type %q: %s schema: %w", f.Kind, f.Type, name, err)
		}
		url := schemaBase + f.Kind + "/" + f.Type + "/" + name + ".json"
		if err := c.AddResource(url, doc); err != nil {
			return nil, fmt.Errorf("config: %s type %q: %s schema: %w", f.Kind, f.Type, name, err)
		}
		if _, err := c.Compile(url); err != nil {
			return nil, fmt.Errorf("config: %s type %q: %s schema: %w", f.Kind, f.Type, name, err)
		}
		return map[string]any{"$ref": url}, nil
	}
	options, err := part("options", f.Options)
	if err != nil {
		return nil, err
	}
	props := map[string]any{"options": options}
	then := map[string]any{"properties": props}
	switch f.Kind {
	case FragmentBinding:
		when, err := part("when", f.When)
		if err != nil {
			return nil, err
		}
		with, err := part("with", f.With)
		if err != nil {
			return nil, err
		}
		if when != false {
			when = map[string]any{"items": when}
		}
		props["routes"] = map[string]any{
			"items": map[string]any{
				"properties": map[string]any{"when": when, "with": with},
			},
		}
		// Check the type's kinds only once the kind is one of the base
		// schema's, so a misspelt kind is reported once, not twice.
		then["if"] = map[string]any{
			"properties": map[string]any{"kind": map[string]any{"enum": anys(bindingKinds)}},
			"required":   []any{"kind"},
		}
		then["then"] = map[string]any{
			"properties": map[string]any{"kind": map[string]any{"enum": anys(f.Kinds)}},
		}
		var kinds []any
		for _, k := range slices.Sorted(maps.Keys(f.KindSchema)) {
			sch, err := part("kind."+k, f.KindSchema[k])
			if err != nil {
				return nil, err
			}
			kinds = append(kinds, map[string]any{
				"if":   map[string]any{"properties": map[string]any{"kind": map[string]any{"const": k}}, "required": []any{"kind"}},
				"then": sch,
			})
		}
		if kinds != nil {
			then["allOf"] = kinds
		}
	case FragmentGuard:
		if len(f.Kinds) > 0 {
			props["kind"] = map[string]any{"enum": anys(f.Kinds)}
		}
	}
	return then, nil
}

func anys(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
