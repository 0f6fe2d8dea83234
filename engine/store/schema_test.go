package store_test

import (
	"bytes"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/sluicehq/sluice/engine/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSchemas checks that each built-in type's options schema compiles and
// agrees with its New about which options are valid.
func TestSchemas(t *testing.T) {
	tests := []struct {
		name    string
		typ     string
		options string
		valid   bool
	}{
		{name: "memory empty", typ: "memory", options: `{}`, valid: true},
		{name: "memory unknown", typ: "memory", options: `{"size": 1}`},
		{name: "test empty", typ: "test", options: `{}`, valid: true},
		{name: "test entries", typ: "test", options: `{"entries": {"a": "1"}}`, valid: true},
		{name: "test entry number", typ: "test", options: `{"entries": {"a": 1}}`},
		{name: "test entries array", typ: "test", options: `{"entries": ["a"]}`},
		{name: "test unknown", typ: "test", options: `{"entry": {}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			info, err := store.Lookup(tt.typ)
			require.NoError(t, err)
			doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(info.Schema))
			require.NoError(t, err)
			c := jsonschema.NewCompiler()
			require.NoError(t, c.AddResource("options.json", doc))
			schema, err := c.Compile("options.json")
			require.NoError(t, err)

			inst, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(tt.options)))
			require.NoError(t, err)
			options, _ := inst.(map[string]any)

			s, newErr := info.New("schema-"+tt.name, options, newFakeClock())
			if s != nil {
				require.NoError(t, s.Close())
			}
			if tt.valid {
				assert.NoError(t, schema.Validate(inst))
				assert.NoError(t, newErr)
			} else {
				assert.Error(t, schema.Validate(inst))
				assert.Error(t, newErr)
			}
		})
	}
}
