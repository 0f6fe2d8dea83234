package guard_test

import (
	"io"
	"testing"

	"github.com/sluicehq/sluice/engine/guard"
	"github.com/sluicehq/sluice/internal/schematest"
)

// TestSchema checks that the test guard's options schema compiles and
// agrees with New about which options are valid. (The schema does not
// reject "P" and "PT", which ParseDuration does; they are left out.)
func TestSchema(t *testing.T) {
	tests := []schematest.Case{
		{Name: "empty", Options: `{}`, Valid: true},
		{
			Name: "all",
			Options: `{"credentials": "TOKEN", "lifetime": "PT5S", "challenge": "PT1.5S", "identity": "alice",
				"roles": ["read"], "attributes": {"tenant": "acme"}, "preauthorize": "https://auth",
				"acquire": "deferred", "max-sessions": 2}`,
			Valid: true,
		},
		{Name: "long lifetime", Options: `{"lifetime": "P1DT2H3M4S"}`, Valid: true},
		{Name: "go lifetime", Options: `{"lifetime": "5s"}`},
		{Name: "unknown", Options: `{"maxSessions": 1}`},
		{Name: "negative max-sessions", Options: `{"max-sessions": -1}`},
		{Name: "fractional max-sessions", Options: `{"max-sessions": 1.5}`},
		{Name: "bad acquire", Options: `{"acquire": "later"}`},
		{Name: "role number", Options: `{"roles": [1]}`},
		{Name: "attribute number", Options: `{"attributes": {"a": 1}}`},
	}
	info, err := guard.Lookup("test")
	if err != nil {
		t.Fatal(err)
	}
	schematest.Agrees(t, info.Schema, tests, func(options map[string]any) (io.Closer, error) {
		return info.New("test0", options, nil)
	})
}
