package store_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/sluicehq/sluice/engine/store"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMemorySharedByName(t *testing.T) {
	clock := newFakeClock()
	name := storeName(t)
	a := newStore(t, "memory", name, map[string]any{}, clock)
	b := newStore(t, "memory", name, nil, clock)
	other := newStore(t, "memory", name+"-other", nil, clock)

	ha := syncHandler{t, a.Attach(inline)}
	hb := syncHandler{t, b.Attach(inline)}
	ho := syncHandler{t, other.Attach(inline)}

	require.NoError(t, ha.put("k", "from a", 0))
	v, ok := hb.get("k")
	require.True(t, ok, "a Store of the same name sees the value")
	assert.Equal(t, "from a", string(v))
	_, ok = ho.get("k")
	assert.False(t, ok, "a Store of another name does not")

	token, ok := hb.lock("l", 0)
	require.True(t, ok)
	_, ok = ha.lock("l", 0)
	assert.False(t, ok, "locks are shared too")
	assert.True(t, ha.unlock("l", token))

	var events recorder
	q := newQueue()
	defer b.Attach(q).Watch("k", events.fn)()
	require.NoError(t, ha.delete("k"))
	q.drain()
	assert.Equal(t, []watchEvent{{"", false}}, events.take(), "and so are watchers")
}

func TestMemoryReleasedOnLastClose(t *testing.T) {
	clock := newFakeClock()
	name := storeName(t)
	a, err := store.New("memory", name, nil, clock)
	require.NoError(t, err)
	b, err := store.New("memory", name, nil, clock)
	require.NoError(t, err)
	require.NoError(t, syncHandler{t, a.Attach(inline)}.put("k", "v", 0))

	require.NoError(t, a.Close())
	require.NoError(t, a.Close(), "a second Close does not drop another reference")
	_, ok := syncHandler{t, b.Attach(inline)}.get("k")
	assert.True(t, ok, "the data lives while a Store of the name is open")

	require.NoError(t, b.Close())
	c := newStore(t, "memory", name, nil, clock)
	_, ok = syncHandler{t, c.Attach(inline)}.get("k")
	assert.False(t, ok, "the data goes with the last Store of the name")
}

// TestMemorySweep: on the system clock, the background sweep, not an
// access, expires a value at the first sweep after its ttl and tells its
// watcher. It runs in a synctest bubble, whose fake time the store's clock
// and the sweep's ticker (one a second) share.
func TestMemorySweep(t *testing.T) {
	for _, typ := range []string{store.MemoryType, store.TestType} {
		t.Run(typ, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := newStore(t, typ, storeName(t), nil, nil)
				q := newQueue()
				h := s.Attach(q)
				var events recorder
				defer h.Watch("k", events.fn)()
				h.Put("k", []byte("v"), 1500*time.Millisecond, nil)

				time.Sleep(time.Second)
				synctest.Wait() // the first sweep has run
				q.drain()
				assert.Equal(t, []watchEvent{{"v", true}}, events.take(), "the first sweep comes before the ttl")
				time.Sleep(time.Second)
				synctest.Wait()
				q.drain()
				assert.Equal(t, []watchEvent{{"", false}}, events.take(), "the second sweep expired the value")
			})
		})
	}
}

func TestSweepLifecycle(t *testing.T) {
	tests := []struct {
		name  string
		typ   string
		clock store.Clock
		want  bool
	}{
		{name: "memory real clock", typ: "memory", want: true},
		{name: "memory fake clock", typ: "memory", clock: newFakeClock()},
		{name: "memory clock func", typ: "memory", clock: store.ClockFunc(time.Now)},
		{name: "test real clock", typ: "test", want: true},
		{name: "test fake clock", typ: "test", clock: newFakeClock()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := store.New(tt.typ, storeName(t), nil, tt.clock)
			require.NoError(t, err)
			assert.Equal(t, tt.want, store.Sweeping(a))
			if tt.typ == "memory" {
				b, err := store.New(tt.typ, storeName(t), nil, tt.clock)
				require.NoError(t, err)
				require.NoError(t, a.Close())
				assert.Equal(t, tt.want, store.Sweeping(b), "the sweep runs while a Store of the name is open")
				a = b
			}
			require.NoError(t, a.Close())
			assert.False(t, store.Sweeping(a), "the last Close stops the sweep")
		})
	}
}

// TestBuiltinAlwaysAvailable: the memory and test stores keep their data
// in the process, so a handler of theirs is never unavailable.
func TestBuiltinAlwaysAvailable(t *testing.T) {
	for _, typ := range []string{store.MemoryType, store.TestType} {
		s := newStore(t, typ, storeName(t), nil, newFakeClock())
		assert.False(t, store.Unavailable(s.Attach(inline)), typ)
	}
}
