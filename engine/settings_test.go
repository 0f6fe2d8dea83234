package engine_test

import (
	"bytes"
	"errors"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/engine"
)

func init() {
	engine.RegisterSetting(engine.Setting{Name: "test.settings.count", Usage: "a count",
		Check: func(v string) error {
			if v == "" || v[0] < '0' || v[0] > '9' {
				return errors.New("want a number")
			}
			return nil
		}})
	engine.RegisterSetting(engine.Setting{Name: "test.settings.later", Unread: "not built yet"})
}

// TestSettings checks that the engine carries the settings it is given
// under their canonical names, warns of those no binding reads, and
// refuses unknown names and values their check rejects with errors that
// say which.
func TestSettings(t *testing.T) {
	e, err := engine.New(nil, engine.WithWorkers(1), engine.WithSetting("zilla.binding.test.settings.count", "7"))
	require.NoError(t, err)
	v, ok := e.Setting("test.settings.count")
	assert.True(t, ok)
	assert.Equal(t, "7", v)
	_, ok = e.Setting("test.settings.later")
	assert.False(t, ok, "a setting not given")

	var logs bytes.Buffer
	e, err = engine.New(nil, engine.WithWorkers(1), engine.WithSetting("zilla.test.settings.later", "x"),
		engine.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	require.NoError(t, err)
	v, _ = e.Setting("test.settings.later")
	assert.Equal(t, "x", v)
	assert.Contains(t, logs.String(), `level=WARN msg="engine setting not read" setting=test.settings.later reason="not built yet"`)

	for _, tt := range []struct {
		name, value, want string
	}{
		{"test.settings.cuont", "1", `engine: unknown setting "test.settings.cuont" (known: `},
		{"test.settings.count", "x", `engine: setting test.settings.count="x": want a number`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := engine.New(nil, engine.WithWorkers(1), engine.WithSetting(tt.name, tt.value))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	_, err = engine.New(nil, engine.WithWorkers(1), engine.WithSetting("nope", "1"))
	assert.ErrorIs(t, err, engine.ErrUnknownSetting)
	assert.Contains(t, err.Error(), "test.settings.count")
	assert.NotContains(t, err.Error(), "test.settings.later", "settings no binding reads are not offered as known")

	_, err = engine.New(nil, engine.WithWorkers(1),
		engine.WithSetting("test.settings.count", "1"), engine.WithSetting("zilla.binding.test.settings.count", "2"))
	assert.EqualError(t, err, "engine: setting test.settings.count is given twice")
}

// TestRegisterSettingPanics checks that declarations are fixed: an empty,
// prefixed or duplicate name is a programming error.
func TestRegisterSettingPanics(t *testing.T) {
	for _, name := range []string{"", "zilla.binding.test.x", "test.settings.count"} {
		assert.Panics(t, func() { engine.RegisterSetting(engine.Setting{Name: name}) }, name)
	}
}
