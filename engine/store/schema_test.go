package store_test

import (
	"io"
	"testing"

	"github.com/sluicehq/sluice/engine/store"
	"github.com/sluicehq/sluice/internal/schematest"
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
		info, err := store.Lookup(tt.typ)
		require.NoError(t, err)
		schematest.Agrees(t, info.Schema, []schematest.Case{{Name: tt.name, Options: tt.options, Valid: tt.valid}},
			func(options map[string]any) (io.Closer, error) {
				return info.New("schema-"+tt.name, options, newFakeClock())
			})
	}
}
