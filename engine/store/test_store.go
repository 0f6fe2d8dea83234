package store

import (
	"encoding/json"
	"fmt"
	"slices"
)

// TestType is the type name of the built-in store for specs.
const TestType = "test"

// testSchema is Zilla's test store options schema: initial entries, as
// string values.
const testSchema = `{
  "type": "object",
  "properties": {
    "entries": {
      "title": "Initial entries",
      "type": "object",
      "additionalProperties": { "type": "string" }
    }
  },
  "additionalProperties": false
}`

func init() {
	Register(Info{Type: TestType, Schema: json.RawMessage(testSchema), New: newTest})
}

// newTest creates a test Store: a memory store of its own, not shared by
// name, seeded from options.entries without expiry. Specs get a known
// starting state and cannot see each other's data.
func newTest(_ string, options map[string]any, clock Clock) (Store, error) {
	if err := checkKeys(options, "entries"); err != nil {
		return nil, err
	}
	entries, err := parseEntries(options["entries"])
	if err != nil {
		return nil, err
	}
	if clock == nil {
		clock = SystemClock{}
	}
	t := newTable()
	for key, value := range entries {
		t.entries[key] = entry{value: []byte(value)}
	}
	if _, onRealClock := clock.(SystemClock); onRealClock {
		t.startSweep(sweepInterval)
	}
	return &tableStore{t: t, clock: clock, release: t.stopSweep}, nil
}

// parseEntries reads options.entries, a map of string values. Decoders
// give map[string]any; map[string]string is accepted for callers building
// options in Go.
func parseEntries(v any) (map[string]string, error) {
	switch m := v.(type) {
	case nil:
		return nil, nil
	case map[string]string:
		return m, nil
	case map[string]any:
		entries := make(map[string]string, len(m))
		keys := make([]string, 0, len(m))
		for key := range m {
			keys = append(keys, key)
		}
		slices.Sort(keys)
		for _, key := range keys {
			s, ok := m[key].(string)
			if !ok {
				return nil, fmt.Errorf("%w: entries.%s: want string, got %T", ErrInvalidOption, key, m[key])
			}
			entries[key] = s
		}
		return entries, nil
	default:
		return nil, fmt.Errorf("%w: entries: want object, got %T", ErrInvalidOption, v)
	}
}
