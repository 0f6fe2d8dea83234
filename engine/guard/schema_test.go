package guard_test

import (
	"bytes"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/sluicehq/sluice/engine/guard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSchema checks that the test guard's options schema compiles and
// agrees with New about which options are valid. (The schema does not
// reject "P" and "PT", which ParseDuration does; they are left out.)
func TestSchema(t *testing.T) {
	tests := []struct {
		name    string
		options string
		valid   bool
	}{
		{name: "empty", options: `{}`, valid: true},
		{
			name: "all",
			options: `{"credentials": "TOKEN", "lifetime": "PT5S", "challenge": "PT1.5S", "identity": "alice",
				"roles": ["read"], "attributes": {"tenant": "acme"}, "preauthorize": "https://auth",
				"acquire": "deferred", "max-sessions": 2}`,
			valid: true,
		},
		{name: "long lifetime", options: `{"lifetime": "P1DT2H3M4S"}`, valid: true},
		{name: "go lifetime", options: `{"lifetime": "5s"}`},
		{name: "unknown", options: `{"maxSessions": 1}`},
		{name: "negative max-sessions", options: `{"max-sessions": -1}`},
		{name: "fractional max-sessions", options: `{"max-sessions": 1.5}`},
		{name: "bad acquire", options: `{"acquire": "later"}`},
		{name: "role number", options: `{"roles": [1]}`},
		{name: "attribute number", options: `{"attributes": {"a": 1}}`},
	}
	info, err := guard.Lookup("test")
	require.NoError(t, err)
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(info.Schema))
	require.NoError(t, err)
	c := jsonschema.NewCompiler()
	require.NoError(t, c.AddResource("options.json", doc))
	schema, err := c.Compile("options.json")
	require.NoError(t, err)

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inst, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(tt.options)))
			require.NoError(t, err)
			options, _ := inst.(map[string]any)
			g, newErr := info.New("test0", options, nil)
			if g != nil {
				require.NoError(t, g.Close())
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
