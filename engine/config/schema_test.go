package config_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/engine/config"
)

func TestNewSchemaRejectsBadFragments(t *testing.T) {
	tests := []struct {
		name string
		frag config.Fragment
		want string
	}{
		{
			name: "unknown component kind",
			frag: config.Fragment{Kind: "catalog", Type: "x"},
			want: `config: fragment "x": kind "catalog" is not one of binding, exporter, guard, store, vault`,
		},
		{
			name: "binding without kinds",
			frag: config.Fragment{Kind: config.FragmentBinding, Type: "x"},
			want: `config: binding type "x": no kinds`,
		},
		{
			name: "binding kind outside the base enum",
			frag: config.Fragment{Kind: config.FragmentBinding, Type: "x", Kinds: []string{"sideways"}},
			want: `config: binding type "x": kind "sideways" is not one of client, server, proxy, remote_client, remote_server, cache_client, cache_server`,
		},
		{
			name: "bad type name",
			frag: config.Fragment{Kind: config.FragmentStore, Type: "1x"},
			want: `config: store type "1x": not a valid name`,
		},
		{
			name: "routes on a store",
			frag: config.Fragment{Kind: config.FragmentStore, Type: "x", When: json.RawMessage(`{}`)},
			want: `config: store type "x": only bindings have routes (when, with)`,
		},
		{
			name: "kinds on a store",
			frag: config.Fragment{Kind: config.FragmentStore, Type: "x", Kinds: []string{"server"}},
			want: `config: store type "x": only bindings and guards have kinds`,
		},
		{
			name: "options that are not JSON",
			frag: config.Fragment{Kind: config.FragmentStore, Type: "x", Options: json.RawMessage(`{`)},
			want: `config: store type "x": options schema: unexpected EOF`,
		},
		{
			name: "kind schema of a kind the type lacks",
			frag: config.Fragment{Kind: config.FragmentBinding, Type: "x", Kinds: []string{"server"},
				KindSchema: map[string]json.RawMessage{"client": json.RawMessage(`{}`)}},
			want: `config: binding type "x": schema of kind "client", which is not one of its kinds`,
		},
		{
			name: "unsupported option without a feature",
			frag: config.Fragment{Kind: config.FragmentStore, Type: "x", Unsupported: []config.Unsupported{{Path: "/a"}}},
			want: `config: store type "x": unsupported option "/a": want a JSON pointer and a feature`,
		},
		{
			name: "bad ref kind",
			frag: config.Fragment{Kind: config.FragmentStore, Type: "x", Refs: []config.Ref{{Path: "/a", Kind: "exporter"}}},
			want: `config: store type "x": ref "/a": kind "exporter" is not binding, guard, store or vault`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := config.NewSchema(tt.frag)
			require.Error(t, err)
			assert.Equal(t, tt.want, err.Error())
		})
	}

	t.Run("options that are not a schema", func(t *testing.T) {
		_, err := config.NewSchema(config.Fragment{Kind: config.FragmentStore, Type: "x", Options: json.RawMessage(`{"type": 5}`)})
		require.Error(t, err)
		assert.Contains(t, err.Error(), `config: store type "x": options schema: `)
	})
	t.Run("registered twice", func(t *testing.T) {
		f := config.Fragment{Kind: config.FragmentStore, Type: "x"}
		_, err := config.NewSchema(f, f)
		require.Error(t, err)
		assert.Equal(t, `config: store type "x": registered twice`, err.Error())
	})
}

// TestNewSchemaIsDeterministic checks that the order fragments come in
// changes nothing.
func TestNewSchemaIsDeterministic(t *testing.T) {
	frags := testFragments()
	reversed := slices.Clone(frags)
	slices.Reverse(reversed)
	a, err := config.NewSchema(frags...)
	require.NoError(t, err)
	b, err := config.NewSchema(reversed...)
	require.NoError(t, err)
	assert.Equal(t, []string{"echo", "http", "mcp", "tcp"}, a.Types(config.FragmentBinding))
	assert.Equal(t, a.Types(config.FragmentBinding), b.Types(config.FragmentBinding))

	src := []byte("name: test\nbindings:\n  net0: {type: nope, kind: server}\n")
	_, errA := config.Load("sluice.yaml", src, a)
	_, errB := config.Load("sluice.yaml", src, b)
	require.Error(t, errA)
	assert.Equal(t, errA.Error(), errB.Error())
}

func TestFragmentSchemasAreSelfContained(t *testing.T) {
	// A fragment's own $defs resolve against the fragment, not the base.
	s, err := config.NewSchema(config.Fragment{
		Kind:  config.FragmentBinding,
		Type:  "kv",
		Kinds: []string{"server"},
		Options: json.RawMessage(`{
			"$defs": {"port": {"type": "integer", "minimum": 1}},
			"type": "object",
			"properties": {"port": {"$ref": "#/$defs/port"}},
			"additionalProperties": false
		}`),
	})
	require.NoError(t, err)
	_, err = config.Load("sluice.yaml", []byte("name: t\nbindings:\n  kv0:\n    type: kv\n    kind: server\n    options:\n      port: 0\n"), s)
	require.Error(t, err)
	assert.Equal(t, `sluice.yaml:7: bindings.kv0.options.port: must be at least 1`, err.Error())
}

func TestAlternatives(t *testing.T) {
	// Of a failed oneOf, the closest alternative is reported, and a value
	// of none of the allowed types gets one merged message.
	s, err := config.NewSchema(config.Fragment{
		Kind:  config.FragmentBinding,
		Type:  "v",
		Kinds: []string{"server"},
		Options: json.RawMessage(`{
			"type": "object",
			"properties": {
				"validate": {
					"oneOf": [
						{"type": "string", "enum": ["strict", "lenient"]},
						{"type": "object", "properties": {"decode": {"enum": ["strict", "lenient"]}}, "additionalProperties": false}
					]
				}
			},
			"additionalProperties": false
		}`),
	})
	require.NoError(t, err)
	tests := []struct {
		name, value, want string
	}{
		{"wrong type", "5", `sluice.yaml:7: bindings.v0.options.validate: expected string or mapping, got integer`},
		{"string branch", "strictly", `sluice.yaml:7: bindings.v0.options.validate: must be one of strict, lenient`},
		{"object branch", "{decode: loose}", `sluice.yaml:7: bindings.v0.options.validate.decode: must be one of strict, lenient`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := "name: t\nbindings:\n  v0:\n    type: v\n    kind: server\n    options:\n      validate: " + tt.value + "\n"
			_, err := config.Load("sluice.yaml", []byte(src), s)
			require.Error(t, err)
			assert.Equal(t, tt.want, err.Error())
		})
	}
}

func TestBaseSchemaIsJSON(t *testing.T) {
	var v map[string]any
	require.NoError(t, json.Unmarshal(config.BaseSchema(), &v))
	assert.Equal(t, "https://json-schema.org/draft/2020-12/schema", v["$schema"])
}

func TestPropertyNames(t *testing.T) {
	s, err := config.NewSchema(config.Fragment{
		Kind:    config.FragmentBinding,
		Type:    "p",
		Kinds:   []string{"server"},
		Options: json.RawMessage(`{"type": "object", "propertyNames": {"pattern": "^[a-z]+$"}, "properties": {"other": {"type": "object", "properties": {"x": {"type": "string"}}}}}`),
	})
	require.NoError(t, err)
	src := "name: t\nbindings:\n  p0:\n    type: p\n    kind: server\n    options:\n      good: 1\n      Bad: 2\n      other: {x: 1}\n"
	// Run a few times: the validator's own location for this failure
	// depends on map order.
	for range 20 {
		_, err = config.Load("sluice.yaml", []byte(src), s)
		require.Error(t, err)
		assert.Equal(t, `sluice.yaml:8: bindings.p0.options: invalid key "Bad": does not match the pattern ^[a-z]+$
sluice.yaml:9: bindings.p0.options.other.x: expected string, got integer`, err.Error())
	}
}

// TestKindSchema checks what one kind adds to its type's shared schema:
// a key it refuses is named with the kind, a condition it requires is
// required of its routes only.
func TestKindSchema(t *testing.T) {
	s, err := config.NewSchema(config.Fragment{
		Kind:    config.FragmentBinding,
		Type:    "k",
		Kinds:   []string{"server", "proxy"},
		Options: json.RawMessage(`{"type": "object", "additionalProperties": false, "properties": {"a": {"type": "string"}, "b": {"type": "string"}}}`),
		When:    json.RawMessage(`{"type": "object", "additionalProperties": false, "properties": {"toolkit": {"type": "string"}, "tool": {"type": "string"}}}`),
		KindSchema: map[string]json.RawMessage{
			"server": json.RawMessage(`{"properties": {"options": {"properties": {"b": false}}}}`),
			"proxy":  json.RawMessage(`{"properties": {"routes": {"items": {"properties": {"when": {"items": {"required": ["toolkit"]}}}}}}}`),
		},
	})
	require.NoError(t, err)
	tests := []struct {
		name, kind, body, want string
	}{
		{"server takes a", "server", "    options: {a: x}\n", ""},
		{"server refuses b", "server", "    options: {b: x}\n", `sluice.yaml:6: bindings.k0.options.b: binding type "k" of kind server does not accept "b"`},
		{"proxy takes b", "proxy", "    options: {b: x}\n", ""},
		{"server when without toolkit", "server", "    routes:\n      - exit: k1\n        when: [{tool: t}]\n", ""},
		{"proxy when without toolkit", "proxy", "    routes:\n      - exit: k1\n        when: [{tool: t}]\n", `sluice.yaml:8: bindings.k0.routes[0].when[0]: missing required key "toolkit"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := "name: t\nbindings:\n  k0:\n    type: k\n    kind: " + tt.kind + "\n" + tt.body
			_, err := config.Load("sluice.yaml", []byte(src), s, config.WithExternal("k1"))
			if tt.want == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Equal(t, tt.want, err.Error())
		})
	}
}

// TestUnsupported checks that options a fragment marks as not
// implemented load through the schema and are then named, each at its
// line, as not supported yet.
func TestUnsupported(t *testing.T) {
	s, err := config.NewSchema(config.Fragment{
		Kind:    config.FragmentBinding,
		Type:    "u",
		Kinds:   []string{"server"},
		Options: json.RawMessage(`{"type": "object", "properties": {"ok": {"type": "string"}, "requests": {"type": "array"}, "items": {"type": "array"}}}`),
		Unsupported: []config.Unsupported{
			{Path: "/requests", Feature: "request validation"},
			{Path: "/items/*/model", Feature: "models"},
		},
	})
	require.NoError(t, err)
	src := "name: t\nbindings:\n  u0:\n    type: u\n    kind: server\n    options:\n      ok: fine\n      requests: []\n      items:\n        - {name: a}\n        - {model: m}\n"
	_, err = config.Load("sluice.yaml", []byte(src), s)
	require.Error(t, err)
	assert.Equal(t, `sluice.yaml:8: bindings.u0.options.requests: not supported yet: request validation
sluice.yaml:11: bindings.u0.options.items[1].model: not supported yet: models`, err.Error())

	_, err = config.Load("sluice.yaml", []byte("name: t\nbindings:\n  u0:\n    type: u\n    kind: server\n    options: {ok: fine}\n"), s)
	require.NoError(t, err)
}
