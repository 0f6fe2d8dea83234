// Package schematest checks a component type's options schema against
// the type's own parsing of its options, as the store and guard types'
// tests do.
package schematest

import (
	"bytes"
	"encoding/json"
	"io"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Case is an options object, as JSON, and whether it is valid.
type Case struct {
	Name    string
	Options string
	Valid   bool
}

// Compile compiles an options schema.
func Compile(t *testing.T, schema json.RawMessage) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	require.NoError(t, err)
	c := jsonschema.NewCompiler()
	require.NoError(t, c.AddResource("options.json", doc))
	s, err := c.Compile("options.json")
	require.NoError(t, err)
	return s
}

// Instance reads options JSON as the schema validates it, and as the
// options map a type's New takes.
func Instance(t *testing.T, options string) (any, map[string]any) {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(options)))
	require.NoError(t, err)
	m, _ := inst.(map[string]any)
	return inst, m
}

// Agrees checks that schema and newFn agree on each case: both accept a
// valid one, both refuse an invalid one. What newFn makes is closed.
func Agrees(t *testing.T, schema json.RawMessage, cases []Case, newFn func(options map[string]any) (io.Closer, error)) {
	t.Helper()
	s := Compile(t, schema)
	for _, tt := range cases {
		t.Run(tt.Name, func(t *testing.T) {
			inst, options := Instance(t, tt.Options)
			c, newErr := newFn(options)
			if c != nil {
				require.NoError(t, c.Close())
			}
			if tt.Valid {
				assert.NoError(t, s.Validate(inst))
				assert.NoError(t, newErr)
			} else {
				assert.Error(t, s.Validate(inst))
				assert.Error(t, newErr)
			}
		})
	}
}
