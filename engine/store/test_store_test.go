package store_test

import (
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/engine/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTestStoreSeeded(t *testing.T) {
	tests := []struct {
		name    string
		options map[string]any
		want    map[string]string
	}{
		{name: "no options", options: nil, want: map[string]string{}},
		{name: "no entries", options: map[string]any{}, want: map[string]string{}},
		{
			name:    "decoded entries",
			options: map[string]any{"entries": map[string]any{"a": "1", "b": ""}},
			want:    map[string]string{"a": "1", "b": ""},
		},
		{
			name:    "go entries",
			options: map[string]any{"entries": map[string]string{"c": "3"}},
			want:    map[string]string{"c": "3"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := newFakeClock()
			s := newStore(t, "test", "store0", tt.options, clock)
			h := syncHandler{t, s.Attach(inline)}
			for key, want := range tt.want {
				v, ok := h.get(key)
				require.True(t, ok, key)
				assert.Equal(t, want, string(v), key)
			}
			_, ok := h.get("absent")
			assert.False(t, ok)
			assert.Zero(t, s.(store.Expirer).Expire(clock.Now().AddDate(100, 0, 0)), "seeded entries do not expire")
		})
	}
}

func TestTestStoreIsolated(t *testing.T) {
	clock := newFakeClock()
	seed := map[string]any{"entries": map[string]any{"k": "seed"}}
	a := newStore(t, "test", "store0", seed, clock)
	b := newStore(t, "test", "store0", seed, clock)

	ha := syncHandler{t, a.Attach(inline)}
	hb := syncHandler{t, b.Attach(inline)}
	require.NoError(t, ha.put("k", "changed", 0))
	v, ok := hb.get("k")
	require.True(t, ok)
	assert.Equal(t, "seed", string(v), "test stores are private even under one name")

	v, _ = syncHandler{t, a.Attach(inline)}.get("k")
	assert.Equal(t, "changed", string(v), "workers of one test store share it")
}

// TestTestStoreSharedByWorkers checks that the engine's one test Store per
// configured store is shared by every worker attached to it: two workers,
// each on its own goroutine, race for one lock and exactly one wins, and a
// value one writes the other reads.
func TestTestStoreSharedByWorkers(t *testing.T) {
	s := newStore(t, "test", "store0", map[string]any{"entries": map[string]any{"k": "seed"}}, newFakeClock())
	queues := [2]*queue{newQueue(), newQueue()}
	var tokens [2]string
	var finished [2]bool
	var start, wg sync.WaitGroup
	start.Add(1)
	for w, q := range queues {
		h := s.Attach(q)
		wg.Go(func() {
			start.Wait()
			done := false
			h.Lock("lifecycle.lock", time.Minute, func(token string, _ bool) { tokens[w], done = token, true })
			finished[w] = q.await(10*time.Second, func() bool { return done })
		})
	}
	start.Done()
	wg.Wait()
	require.Equal(t, [2]bool{true, true}, finished)
	assert.True(t, (tokens[0] == "") != (tokens[1] == ""), "exactly one worker holds the lock: %q", tokens)

	a := syncHandler{t, s.Attach(inline)}
	b := syncHandler{t, s.Attach(inline)}
	v, ok := b.get("k")
	require.True(t, ok)
	assert.Equal(t, "seed", string(v), "every worker sees the seeded entries")
	require.NoError(t, a.put("k", "changed", 0))
	v, _ = b.get("k")
	assert.Equal(t, "changed", string(v))
}
