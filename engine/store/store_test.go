package store_test

import (
	"testing"
	"time"

	"github.com/sluicehq/sluice/engine/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTypes(t *testing.T) {
	types := store.Types()
	assert.IsNonDecreasing(t, types)
	assert.Subset(t, types, []string{store.MemoryType, store.TestType})
}

func TestLookup(t *testing.T) {
	tests := []struct {
		name    string
		typ     string
		wantErr string
	}{
		{name: "memory", typ: "memory"},
		{name: "test", typ: "test"},
		{name: "unknown", typ: "nosuch", wantErr: `store: unknown type "nosuch"`},
		{name: "empty", typ: "", wantErr: `store: unknown type ""`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			info, err := store.Lookup(tt.typ)
			if tt.wantErr != "" {
				require.ErrorIs(t, err, store.ErrUnknownType)
				assert.EqualError(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.typ, info.Type)
			assert.NotNil(t, info.New)
			assert.NotEmpty(t, info.Schema)
		})
	}
}

func TestRegisterPanics(t *testing.T) {
	newNothing := func(string, map[string]any, store.Clock) (store.Store, error) { return nil, nil }
	tests := []struct {
		name string
		info store.Info
		want string
	}{
		{name: "empty type", info: store.Info{New: newNothing}, want: "store: Register with empty type"},
		{name: "nil new", info: store.Info{Type: "nonew"}, want: `store: Register "nonew" with nil New`},
		{name: "duplicate", info: store.Info{Type: "memory", New: newNothing}, want: `store: Register called twice for type "memory"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.PanicsWithValue(t, tt.want, func() { store.Register(tt.info) })
		})
	}
}

func TestRegisterLookup(t *testing.T) {
	var gotName string
	var gotOptions map[string]any
	var gotClock store.Clock
	store.Register(store.Info{
		Type: "registered-in-test",
		New: func(name string, options map[string]any, clock store.Clock) (store.Store, error) {
			gotName, gotOptions, gotClock = name, options, clock
			return store.New("test", name, nil, clock)
		},
	})
	defer store.Unregister("registered-in-test")
	assert.Contains(t, store.Types(), "registered-in-test")

	s, err := store.New("registered-in-test", "s0", map[string]any{"k": "v"}, nil)
	require.NoError(t, err)
	defer s.Close()
	assert.Equal(t, "s0", gotName)
	assert.Equal(t, map[string]any{"k": "v"}, gotOptions)
	assert.Equal(t, store.SystemClock{}, gotClock, "a nil clock becomes the system clock")
}

func TestNewErrors(t *testing.T) {
	tests := []struct {
		name    string
		typ     string
		options map[string]any
		wantIs  error
		wantErr string
	}{
		{
			name:    "unknown type",
			typ:     "nope",
			wantIs:  store.ErrUnknownType,
			wantErr: `store: unknown type "nope"`,
		},
		{
			name:    "memory unknown option",
			typ:     "memory",
			options: map[string]any{"size": 10, "eviction": "lru"},
			wantIs:  store.ErrUnknownOption,
			wantErr: `store/memory "s0": store: unknown option "eviction"`,
		},
		{
			name:    "test unknown option",
			typ:     "test",
			options: map[string]any{"entry": map[string]any{}},
			wantIs:  store.ErrUnknownOption,
			wantErr: `store/test "s0": store: unknown option "entry"`,
		},
		{
			name:    "test entries not an object",
			typ:     "test",
			options: map[string]any{"entries": []any{"a"}},
			wantIs:  store.ErrInvalidOption,
			wantErr: `store/test "s0": store: invalid option: entries: want object, got []interface {}`,
		},
		{
			name:    "test entry not a string",
			typ:     "test",
			options: map[string]any{"entries": map[string]any{"a": "x", "b": 1}},
			wantIs:  store.ErrInvalidOption,
			wantErr: `store/test "s0": store: invalid option: entries.b: want string, got int`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := store.New(tt.typ, "s0", tt.options, newFakeClock())
			require.ErrorIs(t, err, tt.wantIs)
			assert.EqualError(t, err, tt.wantErr)
			assert.Nil(t, s)
		})
	}
}

func TestAttachNilDispatcherPanics(t *testing.T) {
	s := newStore(t, "memory", storeName(t), nil, newFakeClock())
	assert.PanicsWithValue(t, "store: Attach with nil Dispatcher", func() { s.Attach(nil) })
}

func TestClockFunc(t *testing.T) {
	at := time.Unix(100, 0)
	assert.Equal(t, at, store.ClockFunc(func() time.Time { return at }).Now())
	assert.WithinDuration(t, time.Now(), store.SystemClock{}.Now(), time.Minute)
	ran := false
	store.DispatcherFunc(func(fn func()) { fn() }).Dispatch(func() { ran = true })
	assert.True(t, ran)
}
