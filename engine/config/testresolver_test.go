package config_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/engine/config"
)

// TestTestResolver checks Zilla's test resolver values; the randomBase64
// ones are what java.util.Random(N).nextBytes gives for N bytes.
func TestTestResolver(t *testing.T) {
	tests := []struct {
		key, want string
		ok        bool
	}{
		{"PASSWORD", "ACTUALPASSWORD", true},
		{"PORT", "1234", true},
		{"randomBase64.10", "0nr9uvgWFXI6XQ==", true},
		{"randomBase64.7", "mRcPuxg0dw==", true},
		{"randomBase64.0", "", true},
		{"randomBase64.x", "", false},
		{"NOPE", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			got, ok := config.TestResolver(tt.key)
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.want, got)
		})
	}
	s, err := config.NewSchema(config.Fragment{Kind: config.FragmentStore, Type: "x", Options: json.RawMessage(`{"type": "object"}`)})
	require.NoError(t, err)
	cfg, err := config.Load("t.yaml", []byte("name: t\nstores:\n  s0:\n    type: x\n    options: {v: \"${{test.randomBase64.7}}\"}\n"),
		s, config.WithResolver("test", config.TestResolver))
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"v": "mRcPuxg0dw=="}, cfg.Stores[0].Options.Value())
}
