package http_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	_ "github.com/sluicehq/sluice/binding/http/client"
	_ "github.com/sluicehq/sluice/binding/http/server"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/internal/enginetest"
)

// TestVersions starts http bindings with Zilla's versions: HTTP/2 alone is
// refused at start, naming it; listed beside http/1.1 it starts and
// serves HTTP/1.1.
func TestVersions(t *testing.T) {
	tests := []struct {
		name, kind, versions, want string
	}{
		{"server h2 only", "server", "[h2]", `v.yaml:7: bindings.net0.options.versions: http binding net0: versions h2 (HTTP/2) is not supported yet`},
		{"client h2 only", "client", "[h2]", `http binding net0: versions h2 (HTTP/2) is not supported yet`},
		{"server both", "server", "[http/1.1, h2]", ""},
		{"client both", "client", "[h2, http/1.1]", ""},
		{"server http/1.1", "server", "[http/1.1]", ""},
		{"h2c is not Zilla's", "server", "[h2c]", `v.yaml:7: bindings.net0.options.versions[0]: must be one of http/1.1, h2`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := "name: test\nbindings:\n  net0:\n    type: http\n    kind: " + tt.kind + "\n    options:\n      versions: " + tt.versions + "\n    exit: app0\n"
			err := enginetest.Check(t, "v.yaml", src, map[string]engine.Binding{"app0": enginetest.Refuse{}}, engine.WithWorkers(1))
			if tt.want == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}
