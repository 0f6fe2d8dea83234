package guard_test

import (
	"math"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/engine/guard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeClock is a Clock moved by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.UnixMilli(1_700_000_000_000)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// queue is a Dispatcher standing in for a worker: functions wait on a
// channel until the test drains it.
type queue struct{ ch chan func() }

func newQueue() *queue { return &queue{ch: make(chan func(), 64)} }

func (q *queue) Dispatch(fn func()) { q.ch <- fn }

func (q *queue) drain() int {
	n := 0
	for {
		select {
		case fn := <-q.ch:
			fn()
			n++
		default:
			return n
		}
	}
}

var inline = guard.DispatcherFunc(func(fn func()) { fn() })

func TestConstants(t *testing.T) {
	assert.Equal(t, int64(0), guard.NotAuthorized)
	needs := guard.NeedsPreauthorize
	assert.Equal(t, uint64(0x8000_0000_0000_0000), uint64(needs))
	assert.Equal(t, int64(0x7fff_ffff_ffff_ffff), guard.MaskAuthorized)
	assert.Equal(t, int64(math.MaxInt64), guard.ExpiresNever)

	tests := []struct {
		name    string
		session int64
		want    bool
	}{
		{name: "not authorized", session: guard.NotAuthorized},
		{name: "needs preauthorize", session: guard.NeedsPreauthorize},
		{name: "session", session: 1, want: true},
		{name: "largest session", session: math.MaxInt64, want: true},
		{name: "session with high bit", session: math.MinInt64 | 7, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, guard.Authorized(tt.session))
		})
	}
}

func TestTypes(t *testing.T) {
	types := guard.Types()
	assert.IsNonDecreasing(t, types)
	assert.Contains(t, types, guard.TestType)
}

func TestLookup(t *testing.T) {
	info, err := guard.Lookup("test")
	require.NoError(t, err)
	assert.Equal(t, "test", info.Type)
	assert.NotEmpty(t, info.Schema)

	_, err = guard.Lookup("jwt")
	require.ErrorIs(t, err, guard.ErrUnknownType)
	assert.EqualError(t, err, `guard: unknown type "jwt"`)
}

func TestRegisterPanics(t *testing.T) {
	newNothing := func(string, map[string]any, guard.Clock) (guard.Guard, error) { return nil, nil }
	tests := []struct {
		name string
		info guard.Info
		want string
	}{
		{name: "empty type", info: guard.Info{New: newNothing}, want: "guard: Register with empty type"},
		{name: "nil new", info: guard.Info{Type: "nonew"}, want: `guard: Register "nonew" with nil New`},
		{name: "duplicate", info: guard.Info{Type: "test", New: newNothing}, want: `guard: Register called twice for type "test"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.PanicsWithValue(t, tt.want, func() { guard.Register(tt.info) })
		})
	}
}

func TestRegisterNew(t *testing.T) {
	var gotName string
	var gotClock guard.Clock
	guard.Register(guard.Info{
		Type: "registered-in-test",
		New: func(name string, options map[string]any, clock guard.Clock) (guard.Guard, error) {
			gotName, gotClock = name, clock
			return guard.New("test", name, options, clock)
		},
	})
	defer guard.Unregister("registered-in-test")
	assert.Contains(t, guard.Types(), "registered-in-test")

	g, err := guard.New("registered-in-test", "g0", nil, nil)
	require.NoError(t, err)
	defer g.Close()
	assert.Equal(t, "g0", gotName)
	assert.Equal(t, guard.SystemClock{}, gotClock, "a nil clock becomes the system clock")

	_, err = guard.New("nope", "g0", nil, nil)
	assert.ErrorIs(t, err, guard.ErrUnknownType)
}

func TestAttachNilDispatcherPanics(t *testing.T) {
	g, err := guard.New("test", "g0", nil, nil)
	require.NoError(t, err)
	defer g.Close()
	assert.PanicsWithValue(t, "guard: Attach with nil Dispatcher", func() { g.Attach(nil) })
}

func TestClockFunc(t *testing.T) {
	at := time.Unix(100, 0)
	assert.Equal(t, at, guard.ClockFunc(func() time.Time { return at }).Now())
	assert.WithinDuration(t, time.Now(), guard.SystemClock{}.Now(), time.Minute)
	h := newGuard(t, map[string]any{"credentials": "c", "lifetime": "PT1S"}, guard.ClockFunc(func() time.Time { return at })).Attach(inline)
	assert.Equal(t, at.UnixMilli()+1000, h.ExpiresAt(h.Reauthorize(0, 0, 0, "c")))
}
