package config_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/engine/config"
)

// testFragments stand in for the fragments the binding, guard, store and
// exporter packages register; their schemas are cut down to what the tests
// need.
func testFragments() []config.Fragment {
	return []config.Fragment{
		{
			Kind:  config.FragmentBinding,
			Type:  "tcp",
			Kinds: []string{"server", "client"},
			Options: json.RawMessage(`{
				"type": "object",
				"properties": {
					"host": {"type": "string"},
					"port": {"type": "integer", "minimum": 1, "maximum": 65535}
				},
				"additionalProperties": false
			}`),
			When: json.RawMessage(`{
				"type": "object",
				"properties": {
					"cidr": {"type": "string"},
					"port": {"type": "integer"}
				},
				"additionalProperties": false
			}`),
		},
		{
			Kind:  config.FragmentBinding,
			Type:  "http",
			Kinds: []string{"server", "client"},
			Options: json.RawMessage(`{
				"type": "object",
				"properties": {
					"versions": {"type": "array", "items": {"enum": ["http/1.1", "h2"]}}
				},
				"additionalProperties": false
			}`),
			When: json.RawMessage(`{
				"type": "object",
				"properties": {
					"headers": {"type": "object", "additionalProperties": {"type": "string"}}
				},
				"additionalProperties": false
			}`),
			With: json.RawMessage(`{
				"type": "object",
				"properties": {
					"headers": {"type": "object", "additionalProperties": {"type": "string"}}
				},
				"additionalProperties": false
			}`),
		},
		{
			Kind:  config.FragmentBinding,
			Type:  "mcp",
			Kinds: []string{"server", "proxy", "client"},
			Options: json.RawMessage(`{
				"type": "object",
				"properties": {
					"cache": {
						"type": "object",
						"properties": {
							"store": {"type": "string"},
							"ttl": {"type": "integer"},
							"authorization": {"type": "object"}
						},
						"additionalProperties": false
					}
				},
				"additionalProperties": false
			}`),
			When: json.RawMessage(`{
				"type": "object",
				"properties": {"toolkit": {"type": "string"}},
				"additionalProperties": false
			}`),
			With: json.RawMessage(`{
				"type": "object",
				"properties": {
					"headers": {"type": "object", "additionalProperties": {"type": "string"}}
				},
				"additionalProperties": false
			}`),
			Refs: []config.Ref{
				{Path: "/cache/store", Kind: config.FragmentStore},
				{Path: "/cache/authorization", Kind: config.FragmentGuard, Keys: true},
			},
		},
		{
			Kind:  config.FragmentBinding,
			Type:  "echo",
			Kinds: []string{"server"},
		},
		{
			Kind: config.FragmentGuard,
			Type: "test",
			Options: json.RawMessage(`{
				"type": "object",
				"properties": {
					"credentials": {"type": "string"},
					"roles": {"type": "array", "items": {"type": "string"}}
				},
				"additionalProperties": false
			}`),
		},
		{
			Kind: config.FragmentStore,
			Type: "memory",
		},
		{
			Kind: config.FragmentExporter,
			Type: "prometheus",
			Options: json.RawMessage(`{
				"type": "object",
				"properties": {
					"endpoints": {
						"type": "array",
						"items": {
							"type": "object",
							"properties": {
								"scheme": {"enum": ["http"]},
								"path": {"type": "string"},
								"port": {"type": "integer"}
							},
							"required": ["port"],
							"additionalProperties": false
						}
					}
				},
				"additionalProperties": false
			}`),
		},
	}
}

func testSchema(t testing.TB) *config.Schema {
	t.Helper()
	s, err := config.NewSchema(testFragments()...)
	require.NoError(t, err)
	return s
}

// env is a fixed environment, so tests do not depend on the process's.
func env(vars map[string]string) config.Option {
	return config.WithLookupEnv(func(name string) (string, bool) {
		v, ok := vars[name]
		return v, ok
	})
}
