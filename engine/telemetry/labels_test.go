package telemetry_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/engine/telemetry"
)

func TestNewLabels(t *testing.T) {
	tests := []struct {
		name    string
		kv      []string
		want    string
		wantErr string
	}{
		{name: "empty", kv: nil, want: "{}"},
		{name: "sorted", kv: []string{"namespace", "test", "binding", "app0"}, want: `{binding="app0",namespace="test"}`},
		{name: "three", kv: []string{"c", "3", "a", "1", "b", "2"}, want: `{a="1",b="2",c="3"}`},
		{name: "quoted value", kv: []string{"k", `a"b`}, want: `{k="a\"b"}`},
		{name: "max", kv: []string{"a", "", "b", "", "c", "", "d", "", "e", "", "f", ""}, want: `{a="",b="",c="",d="",e="",f=""}`},
		{name: "odd", kv: []string{"a"}, wantErr: "odd number of arguments"},
		{name: "too many", kv: []string{"a", "", "b", "", "c", "", "d", "", "e", "", "f", "", "g", ""}, wantErr: "7 labels, at most 6"},
		{name: "duplicate", kv: []string{"a", "1", "b", "2", "a", "3"}, wantErr: `duplicate key "a"`},
		{name: "empty key", kv: []string{"", "x"}, wantErr: `key ""`},
		{name: "bad key", kv: []string{"name.space", "x"}, wantErr: `key "name.space"`},
		{name: "digit first", kv: []string{"0a", "x"}, wantErr: `key "0a"`},
		{name: "reserved prefix", kv: []string{"__name__", "x"}, wantErr: `key "__name__" is reserved`},
		{name: "le", kv: []string{"le", "x"}, wantErr: `key "le" is reserved`},
		{name: "bad utf8", kv: []string{"k", "\xff"}, wantErr: `value of "k" is not valid UTF-8`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := telemetry.NewLabels(tt.kv...)
			if tt.wantErr != "" {
				require.ErrorIs(t, err, telemetry.ErrInvalidLabels)
				assert.ErrorContains(t, err, tt.wantErr)
				assert.Equal(t, telemetry.Labels{}, l)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, l.String())
			assert.Equal(t, len(tt.kv)/2, l.Len())
		})
	}
}

func TestLabelsAccessors(t *testing.T) {
	l := telemetry.MustLabels("namespace", "test", "binding", "app0")
	assert.Equal(t, telemetry.Label{Key: "binding", Value: "app0"}, l.At(0))
	assert.Equal(t, telemetry.Label{Key: "namespace", Value: "test"}, l.At(1))
	assert.Panics(t, func() { l.At(2) })

	v, ok := l.Get("namespace")
	assert.True(t, ok)
	assert.Equal(t, "test", v)
	_, ok = l.Get("kind")
	assert.False(t, ok)

	var keys, values []string
	for k, v := range l.All() {
		keys = append(keys, k)
		values = append(values, v)
	}
	assert.Equal(t, []string{"binding", "namespace"}, keys)
	assert.Equal(t, []string{"app0", "test"}, values)

	b, err := telemetry.BindingLabels("test", "app0")
	require.NoError(t, err)
	assert.Equal(t, l, b)

	assert.Panics(t, func() { telemetry.MustLabels("odd") })
}

func TestLabelsComparable(t *testing.T) {
	a := telemetry.MustLabels("namespace", "test", "binding", "app0")
	b := telemetry.MustLabels("binding", "app0", "namespace", "test")
	c := telemetry.MustLabels("binding", "app1", "namespace", "test")
	assert.True(t, a == b, "order of construction does not matter")
	assert.False(t, a == c)

	m := map[telemetry.Labels]int{a: 1, c: 2}
	assert.Equal(t, 1, m[b])
	assert.Len(t, m, 2)

	allocs := testing.AllocsPerRun(100, func() {
		l, _ := telemetry.NewLabels("namespace", "test", "binding", "app0")
		_ = m[l]
	})
	assert.Zero(t, allocs, "building and looking up labels allocates nothing")
}
