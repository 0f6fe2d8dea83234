package guard_test

import (
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/engine/guard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// newGuard creates a test guard and closes it when the test ends.
func newGuard(t *testing.T, options map[string]any, clock guard.Clock) guard.Guard {
	t.Helper()
	g, err := guard.New("test", "test0", options, clock)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, g.Close()) })
	return g
}

func TestTestGuardOptionErrors(t *testing.T) {
	tests := []struct {
		name    string
		options map[string]any
		wantIs  error
		wantErr string
	}{
		{
			name:    "unknown option",
			options: map[string]any{"credentials": "x", "maxSessions": 1, "deferAcquire": true},
			wantIs:  guard.ErrUnknownOption,
			wantErr: `guard/test "test0": guard: unknown option "deferAcquire"`,
		},
		{
			name:    "credentials not a string",
			options: map[string]any{"credentials": 7},
			wantIs:  guard.ErrInvalidOption,
			wantErr: `guard/test "test0": guard: invalid option: credentials: want string, got int`,
		},
		{
			name:    "bad lifetime",
			options: map[string]any{"lifetime": "5s"},
			wantIs:  guard.ErrInvalidDuration,
			wantErr: `guard/test "test0": guard: invalid option: lifetime: guard: invalid duration "5s"`,
		},
		{
			name:    "bad challenge",
			options: map[string]any{"challenge": "PT"},
			wantIs:  guard.ErrInvalidOption,
			wantErr: `guard/test "test0": guard: invalid option: challenge: guard: invalid duration "PT"`,
		},
		{
			name:    "identity not a string",
			options: map[string]any{"identity": []any{"a"}},
			wantIs:  guard.ErrInvalidOption,
			wantErr: `guard/test "test0": guard: invalid option: identity: want string, got []interface {}`,
		},
		{
			name:    "roles not an array",
			options: map[string]any{"roles": "read"},
			wantIs:  guard.ErrInvalidOption,
			wantErr: `guard/test "test0": guard: invalid option: roles: want array, got string`,
		},
		{
			name:    "role not a string",
			options: map[string]any{"roles": []any{"read", 2}},
			wantIs:  guard.ErrInvalidOption,
			wantErr: `guard/test "test0": guard: invalid option: roles[1]: want string, got int`,
		},
		{
			name:    "attributes not an object",
			options: map[string]any{"attributes": []any{}},
			wantIs:  guard.ErrInvalidOption,
			wantErr: `guard/test "test0": guard: invalid option: attributes: want object, got []interface {}`,
		},
		{
			name:    "attribute not a string",
			options: map[string]any{"attributes": map[string]any{"a": "x", "b": true}},
			wantIs:  guard.ErrInvalidOption,
			wantErr: `guard/test "test0": guard: invalid option: attributes.b: want string, got bool`,
		},
		{
			name:    "preauthorize not a string",
			options: map[string]any{"preauthorize": false},
			wantIs:  guard.ErrInvalidOption,
			wantErr: `guard/test "test0": guard: invalid option: preauthorize: want string, got bool`,
		},
		{
			name:    "bad acquire",
			options: map[string]any{"acquire": "later"},
			wantIs:  guard.ErrInvalidOption,
			wantErr: `guard/test "test0": guard: invalid option: acquire: want immediate or deferred, got "later"`,
		},
		{
			name:    "max-sessions not a number",
			options: map[string]any{"max-sessions": "1"},
			wantIs:  guard.ErrInvalidOption,
			wantErr: `guard/test "test0": guard: invalid option: max-sessions: want integer, got string`,
		},
		{
			name:    "max-sessions fractional",
			options: map[string]any{"max-sessions": 1.5},
			wantIs:  guard.ErrInvalidOption,
			wantErr: `guard/test "test0": guard: invalid option: max-sessions: want integer, got float64`,
		},
		{
			name:    "max-sessions negative",
			options: map[string]any{"max-sessions": -1},
			wantIs:  guard.ErrInvalidOption,
			wantErr: `guard/test "test0": guard: invalid option: max-sessions: must not be negative, got -1`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := guard.New("test", "test0", tt.options, nil)
			require.ErrorIs(t, err, tt.wantIs)
			assert.EqualError(t, err, tt.wantErr)
			assert.Nil(t, g)
		})
	}
}

func TestTestGuardMaxSessionsNumberForms(t *testing.T) {
	tests := []struct {
		name string
		n    any
	}{
		{name: "int", n: 2},
		{name: "int64", n: int64(2)},
		{name: "uint64", n: uint64(2)},
		{name: "float64", n: 2.0},
		{name: "json.Number", n: json.Number("2")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newGuard(t, map[string]any{"credentials": "c", "max-sessions": tt.n}, nil).Attach(inline)
			assert.Equal(t, int64(1), h.Reauthorize(0, 0, 0, "c"))
			assert.Equal(t, int64(2), h.Reauthorize(0, 0, 0, "c"))
			assert.Equal(t, guard.NotAuthorized, h.Reauthorize(0, 0, 0, "c"))
		})
	}
}

func TestTestGuardReauthorize(t *testing.T) {
	tests := []struct {
		name        string
		options     map[string]any
		credentials string
		want        int64
	}{
		{name: "no options, no credentials", want: guard.NotAuthorized},
		{name: "no options, credentials", credentials: "x", want: guard.NotAuthorized},
		{name: "match", options: map[string]any{"credentials": "TOKEN"}, credentials: "TOKEN", want: 1},
		{name: "mismatch", options: map[string]any{"credentials": "TOKEN"}, credentials: "token", want: guard.NotAuthorized},
		{name: "missing", options: map[string]any{"credentials": "TOKEN"}, want: guard.NotAuthorized},
		{
			name:    "needs preauthorize",
			options: map[string]any{"credentials": "TOKEN", "preauthorize": "https://auth/authorize"},
			want:    guard.NeedsPreauthorize,
		},
		{
			name:        "preauthorized code",
			options:     map[string]any{"preauthorize": "https://auth/authorize"},
			credentials: "https://app/callback?code=abc&state=1",
			want:        1,
		},
		{
			name:        "preauthorize without code",
			options:     map[string]any{"preauthorize": "https://auth/authorize"},
			credentials: "https://app/callback?error=denied",
			want:        guard.NotAuthorized,
		},
		{
			name:        "credentials beat preauthorize",
			options:     map[string]any{"credentials": "TOKEN", "preauthorize": "https://auth/authorize"},
			credentials: "TOKEN",
			want:        1,
		},
		{name: "deferred without credentials", options: map[string]any{"acquire": "deferred"}, want: 1},
		{
			name:        "deferred with credentials",
			options:     map[string]any{"acquire": "deferred", "credentials": "TOKEN"},
			credentials: "TOKEN",
			want:        guard.NotAuthorized,
		},
		{
			name:        "immediate",
			options:     map[string]any{"acquire": "immediate", "credentials": "TOKEN"},
			credentials: "TOKEN",
			want:        1,
		},
		{name: "max-sessions zero", options: map[string]any{"acquire": "deferred", "max-sessions": 0}, want: guard.NotAuthorized},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newGuard(t, tt.options, newFakeClock()).Attach(inline)
			assert.Equal(t, tt.want, h.Reauthorize(1, 2, 3, tt.credentials))
		})
	}
}

func TestTestGuardSessions(t *testing.T) {
	clock := newFakeClock()
	g := newGuard(t, map[string]any{"credentials": "TOKEN", "max-sessions": 2}, clock)
	a, b := g.Attach(inline), g.Attach(newQueue())

	s1 := a.Reauthorize(0, 0, 0, "TOKEN")
	s2 := b.Reauthorize(0, 0, 0, "TOKEN")
	assert.Equal(t, []int64{1, 2}, []int64{s1, s2}, "numbered from 1 across the guard's workers")
	assert.Equal(t, guard.NotAuthorized, a.Reauthorize(0, 0, 0, "TOKEN"), "max-sessions reached")

	assert.Equal(t, guard.ExpiresNever, b.ExpiresAt(s1), "every worker sees every session")
	b.Deauthorize(s1)
	assert.Zero(t, a.ExpiresAt(s1), "deauthorized")
	assert.Equal(t, int64(3), a.Reauthorize(0, 0, 0, "TOKEN"), "a released session makes room; ids are not reused")
	a.Deauthorize(s1)
	a.Deauthorize(99)
}

func TestTestGuardConcurrentSessions(t *testing.T) {
	g := newGuard(t, map[string]any{"credentials": "TOKEN", "max-sessions": 100}, nil)
	const workers, each = 4, 50
	got := make([][]int64, workers)
	var wg sync.WaitGroup
	for w := range workers {
		h := g.Attach(newQueue())
		wg.Go(func() {
			for range each {
				got[w] = append(got[w], h.Reauthorize(0, 0, 0, "TOKEN"))
			}
		})
	}
	wg.Wait()
	seen := map[int64]bool{}
	refused := 0
	for _, sessions := range got {
		for _, s := range sessions {
			if s == guard.NotAuthorized {
				refused++
				continue
			}
			assert.False(t, seen[s], "session %d handed out twice", s)
			seen[s] = true
		}
	}
	assert.Len(t, seen, 100)
	assert.Equal(t, workers*each-100, refused)
}

func TestTestGuardLifetime(t *testing.T) {
	clock := newFakeClock()
	now := clock.Now().UnixMilli()
	h := newGuard(t, map[string]any{
		"credentials": "TOKEN",
		"lifetime":    "PT5S",
		"challenge":   "PT2S",
	}, clock).Attach(inline)

	s := h.Reauthorize(0, 0, 0, "TOKEN")
	require.True(t, guard.Authorized(s))
	assert.Equal(t, now+5000, h.ExpiresAt(s))
	assert.Equal(t, now+3000, h.ExpiringAt(s))

	clock.Advance(time.Second)
	s2 := h.Reauthorize(0, 0, 0, "TOKEN")
	assert.Equal(t, now+6000, h.ExpiresAt(s2), "lifetime counts from each authorization")

	tests := []struct {
		name string
		at   int64
		want bool
	}{
		{name: "before window", at: now + 2999},
		{name: "window opens", at: now + 3000, want: true},
		{name: "inside window", at: now + 4999, want: true},
		{name: "expired", at: now + 5000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, h.Challenge(s, tt.at))
			assert.Equal(t, tt.want, h.Challenge(s, tt.at), "the test guard does not remember a challenge")
		})
	}
	assert.False(t, h.Challenge(99, now+4000), "unknown session")
	assert.Zero(t, h.ExpiringAt(99))
}

func TestTestGuardNoLifetime(t *testing.T) {
	tests := []struct {
		name           string
		options        map[string]any
		wantExpiringAt int64
	}{
		{name: "no challenge", options: map[string]any{"credentials": "c"}, wantExpiringAt: guard.ExpiresNever},
		{name: "challenge", options: map[string]any{"credentials": "c", "challenge": "PT1S"}, wantExpiringAt: guard.ExpiresNever - 1000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := newFakeClock()
			h := newGuard(t, tt.options, clock).Attach(inline)
			s := h.Reauthorize(0, 0, 0, "c")
			assert.Equal(t, guard.ExpiresNever, h.ExpiresAt(s))
			assert.Equal(t, tt.wantExpiringAt, h.ExpiringAt(s))
			assert.False(t, h.Challenge(s, clock.Now().UnixMilli()))
		})
	}
}

func TestTestGuardZeroChallengeNeverHolds(t *testing.T) {
	clock := newFakeClock()
	h := newGuard(t, map[string]any{"credentials": "c", "lifetime": "PT5S"}, clock).Attach(inline)
	s := h.Reauthorize(0, 0, 0, "c")
	expiresAt := h.ExpiresAt(s)
	assert.Equal(t, expiresAt, h.ExpiringAt(s))
	for _, at := range []int64{expiresAt - 5000, expiresAt - 1, expiresAt, expiresAt + 1} {
		assert.False(t, h.Challenge(s, at), "at %d", at)
	}
}

func TestTestGuardIdentityAttributes(t *testing.T) {
	tests := []struct {
		name         string
		options      map[string]any
		wantIdentity string
		wantTenant   string
	}{
		{name: "defaults", options: map[string]any{"credentials": "c"}, wantIdentity: "test"},
		{
			name: "configured",
			options: map[string]any{
				"credentials": "c",
				"identity":    "alice",
				"attributes":  map[string]any{"tenant": "acme"},
			},
			wantIdentity: "alice",
			wantTenant:   "acme",
		},
		{
			name:         "go attributes",
			options:      map[string]any{"credentials": "c", "attributes": map[string]string{"tenant": "acme"}},
			wantIdentity: "test",
			wantTenant:   "acme",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newGuard(t, tt.options, nil).Attach(inline)
			s := h.Reauthorize(0, 0, 0, "c")
			assert.Equal(t, tt.wantIdentity, h.Identity(s))
			assert.Equal(t, tt.wantTenant, h.Attribute(s, "tenant"))
			assert.Empty(t, h.Attribute(s, "missing"))
		})
	}
}

func TestTestGuardCredentials(t *testing.T) {
	tests := []struct {
		name    string
		options map[string]any
		known   string
		unknown string
	}{
		{name: "immediate", options: map[string]any{"credentials": "TOKEN"}, known: "TOKEN", unknown: "TOKEN"},
		{name: "deferred", options: map[string]any{"credentials": "TOKEN", "acquire": "deferred"}, known: "TOKEN", unknown: ""},
		{name: "none", options: map[string]any{"acquire": "deferred"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newGuard(t, tt.options, nil).Attach(inline)
			s := h.Reauthorize(0, 0, 0, "")
			if !guard.Authorized(s) {
				s = h.Reauthorize(0, 0, 0, "TOKEN")
			}
			require.True(t, guard.Authorized(s))
			assert.Equal(t, tt.known, h.Credentials(s))
			assert.Equal(t, tt.unknown, h.Credentials(99), "a deferred guard knows only its sessions")
		})
	}
}

func TestTestGuardVerify(t *testing.T) {
	tests := []struct {
		name    string
		options map[string]any
		session int64 // 0: none; -1: a fresh session
		roles   []string
		want    bool
	}{
		{name: "session, no roles configured", options: map[string]any{"credentials": "c"}, session: -1, roles: []string{"any"}, want: true},
		{name: "session, empty roles configured", options: map[string]any{"credentials": "c", "roles": []any{}}, session: -1, roles: []string{"any"}, want: true},
		{name: "session, subset", options: map[string]any{"credentials": "c", "roles": []any{"read", "write"}}, session: -1, roles: []string{"write"}, want: true},
		{name: "session, all", options: map[string]any{"credentials": "c", "roles": []string{"read", "write"}}, session: -1, roles: []string{"read", "write"}, want: true},
		{name: "session, none requested", options: map[string]any{"credentials": "c", "roles": []any{"read"}}, session: -1, want: true},
		{name: "session, missing role", options: map[string]any{"credentials": "c", "roles": []any{"read"}}, session: -1, roles: []string{"read", "admin"}},
		{name: "unknown session", options: map[string]any{"credentials": "c"}, session: 42},
		{name: "no session, credentials required", options: map[string]any{"credentials": "c"}, session: 0},
		{name: "no session, no credentials", options: nil, session: 0, want: true},
		{name: "no session, no credentials, roles", options: map[string]any{"roles": []any{"read"}}, session: 0, roles: []string{"admin"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newGuard(t, tt.options, nil).Attach(inline)
			session := tt.session
			if session == -1 {
				session = h.Reauthorize(0, 0, 0, "c")
				require.True(t, guard.Authorized(session))
			}
			assert.Equal(t, tt.want, h.Verify(session, tt.roles))
		})
	}
}

func TestTestGuardPreauthorize(t *testing.T) {
	tests := []struct {
		name     string
		options  map[string]any
		callback string
		want     string
	}{
		{name: "configured", options: map[string]any{"preauthorize": "https://auth.example.com/authorize?client_id=x"}, want: "https://auth.example.com/authorize?client_id=x"},
		{name: "not needed", options: map[string]any{"credentials": "c"}, want: ""},
		{name: "callback replaces the placeholder redirect_uri",
			options:  map[string]any{"preauthorize": "https://s.example/authorize?state=7f&redirect_uri=https%3A%2F%2Freplace.me%2Fcallback&x=1"},
			callback: "http://localhost:8080/mcp/auth/callback",
			want:     "https://s.example/authorize?state=7f&redirect_uri=http%3A%2F%2Flocalhost%3A8080%2Fmcp%2Fauth%2Fcallback&x=1"},
		{name: "callback replaces a last redirect_uri",
			options:  map[string]any{"preauthorize": "https://s.example/authorize?redirect_uri=https%3A%2F%2Freplace.me%2Fcb"},
			callback: "http://gw/cb?a=b",
			want:     "https://s.example/authorize?redirect_uri=http%3A%2F%2Fgw%2Fcb%3Fa%3Db"},
		{name: "no placeholder: the URL stays",
			options:  map[string]any{"preauthorize": "https://s.example/authorize?redirect_uri=https%3A%2F%2Fapp.example%2Fcb"},
			callback: "http://gw/cb",
			want:     "https://s.example/authorize?redirect_uri=https%3A%2F%2Fapp.example%2Fcb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := newQueue()
			h := newGuard(t, tt.options, nil).Attach(q)
			called := false
			h.Preauthorize(1, 2, 3, 0, tt.callback, func(url string, err error) {
				called = true
				assert.NoError(t, err)
				assert.Equal(t, tt.want, url)
			})
			assert.False(t, called, "completes through the dispatcher, not on the caller's stack")
			assert.Equal(t, 1, q.drain())
			assert.True(t, called)
			h.Preauthorize(1, 2, 3, 0, "", nil)
			assert.Zero(t, q.drain(), "a nil callback dispatches nothing")
		})
	}
}

func TestTestGuardClose(t *testing.T) {
	g, err := guard.New("test", "test0", map[string]any{"credentials": "c", "preauthorize": "https://auth"}, nil)
	require.NoError(t, err)
	h := g.Attach(inline)
	s := h.Reauthorize(0, 0, 0, "c")
	require.True(t, guard.Authorized(s))

	require.NoError(t, g.Close())
	require.NoError(t, g.Close(), "Close is idempotent")
	assert.Equal(t, guard.NotAuthorized, h.Reauthorize(0, 0, 0, "c"))
	assert.Zero(t, h.ExpiresAt(s), "sessions are gone")
	assert.False(t, h.Verify(s, nil))
	var gotErr error
	h.Preauthorize(0, 0, 0, 0, "", func(_ string, err error) { gotErr = err })
	assert.ErrorIs(t, gotErr, guard.ErrClosed)
}
