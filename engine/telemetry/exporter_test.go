package telemetry_test

import (
	"context"
	"encoding/json"
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/engine/telemetry"
)

type nopExporter struct{}

func (nopExporter) Start() error                   { return nil }
func (nopExporter) Stop(ctx context.Context) error { return nil }
func (nopExporter) Addr() net.Addr                 { return nil }

var _ telemetry.Exporter = nopExporter{}

func newNop(string, map[string]any, *telemetry.Registry) (telemetry.Exporter, error) {
	return nopExporter{}, nil
}

func TestRegister(t *testing.T) {
	if _, err := telemetry.LookupExporter("test-register"); err != nil { // -count > 1
		telemetry.Register(telemetry.ExporterInfo{Type: "test-register", New: newNop})
	}
	info, err := telemetry.LookupExporter("test-register")
	require.NoError(t, err)
	assert.Equal(t, "test-register", info.Type)
	exp, err := info.New("t0", nil, telemetry.NewRegistry(1))
	require.NoError(t, err)
	assert.Equal(t, nopExporter{}, exp)

	tests := []struct {
		name string
		info telemetry.ExporterInfo
		want string
	}{
		{name: "empty type", info: telemetry.ExporterInfo{New: newNop}, want: "telemetry: Register with empty type"},
		{name: "duplicate", info: telemetry.ExporterInfo{Type: "prometheus", New: newNop}, want: `telemetry: Register called twice for type "prometheus"`},
		{name: "nil New", info: telemetry.ExporterInfo{Type: "test-nil"}, want: `telemetry: Register "test-nil": nil New`},
		{name: "bad schema", info: telemetry.ExporterInfo{Type: "test-schema", Schema: json.RawMessage(`{`), New: newNop}, want: `telemetry: Register "test-schema": schema is not valid JSON`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.PanicsWithValue(t, tt.want, func() { telemetry.Register(tt.info) })
		})
	}
}

func TestLookupExporter(t *testing.T) {
	_, err := telemetry.LookupExporter("otlp")
	require.ErrorIs(t, err, telemetry.ErrUnknownType)
	assert.EqualError(t, err, `telemetry: unknown exporter type "otlp"`)

	types := telemetry.ExporterTypes()
	assert.Contains(t, types, "prometheus")
	assert.IsIncreasing(t, types)
}

func TestPrometheusSchema(t *testing.T) {
	info, err := telemetry.LookupExporter(telemetry.PrometheusType)
	require.NoError(t, err)
	var schema struct {
		Type                 string                     `json:"type"`
		Properties           map[string]json.RawMessage `json:"properties"`
		Required             []string                   `json:"required"`
		AdditionalProperties bool                       `json:"additionalProperties"`
	}
	require.NoError(t, json.Unmarshal(info.Schema, &schema))
	assert.Equal(t, "object", schema.Type)
	assert.ElementsMatch(t, []string{"host", "port", "path"}, keys(schema.Properties))
	assert.Equal(t, []string{"port"}, schema.Required)
	assert.False(t, schema.AdditionalProperties)
}

func keys[V any](m map[string]V) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}
