package redisstore_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/sluicehq/sluice/engine/store"
	"github.com/sluicehq/sluice/engine/store/internal/storetest"
	"github.com/sluicehq/sluice/engine/store/redisstore"
	"github.com/sluicehq/sluice/internal/redistest"
	"github.com/sluicehq/sluice/internal/schematest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// open creates a redis store named name with options (url added when
// absent), closes it when the test ends, and waits, bounded, for its
// subscription so that watchers see every later change.
func open(t *testing.T, name string, options map[string]any) store.Store {
	t.Helper()
	s, err := store.New(redisstore.Type, name, options, nil)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	select {
	case <-redisstore.Subscribed(s):
	case <-time.After(storetest.Timeout):
		t.Fatalf("store %s did not subscribe within %s", name, storetest.Timeout)
	}
	return s
}

// client is a plain client of srv, to look at what the store wrote.
func client(t *testing.T, srv *redistest.Server) *goredis.Client {
	c := goredis.NewClient(&goredis.Options{Addr: srv.Addr()})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// TestConformance runs the suite every store type passes, each test on
// its own prefix of one real redis-server.
func TestConformance(t *testing.T) {
	srv := redistest.Start(t)
	storetest.Run(t, func(t *testing.T) store.Store {
		return open(t, "conformance", map[string]any{"url": srv.URL(), "prefix": t.Name() + ":"})
	})
}

func TestRegistered(t *testing.T) {
	info, err := store.Lookup("redis")
	require.NoError(t, err)
	assert.Equal(t, redisstore.Type, info.Type)
}

func TestKeyLayout(t *testing.T) {
	srv := redistest.Start(t)
	c := client(t, srv)
	ctx := context.Background()
	s := open(t, "cache0", map[string]any{"url": srv.URL()})
	h := storetest.NewSync(t, s)

	require.NoError(t, h.Put("tools", "list", 0))
	_, ok := h.Lock("tools", time.Minute)
	require.True(t, ok)
	v, err := c.Get(ctx, "sluice:cache0:v:tools").Result()
	require.NoError(t, err)
	assert.Equal(t, "list", v, "values live under the default prefix sluice:<name>:")
	assert.Equal(t, time.Duration(-1), c.PTTL(ctx, "sluice:cache0:v:tools").Val(), "ttl 0 sets no expiry")
	lockTTL := c.PTTL(ctx, "sluice:cache0:l:tools").Val()
	assert.True(t, lockTTL > 0 && lockTTL <= time.Minute, "locks live apart, with their lease: %s", lockTTL)

	other := open(t, "cache1", map[string]any{"url": srv.URL()})
	_, ok = storetest.NewSync(t, other).Get("tools")
	assert.False(t, ok, "another store name does not see the value")

	require.NoError(t, h.Put("short", "v", 1500*time.Microsecond))
	pttl := c.PTTL(ctx, "sluice:cache0:v:short").Val()
	assert.True(t, pttl <= 2*time.Millisecond, "ttl in milliseconds, rounded up: %s", pttl)
}

// TestTwoProcesses has two Stores on one Redis, as two gateway processes
// with one configuration would: they share values and locks and see each
// other's changes.
func TestTwoProcesses(t *testing.T) {
	srv := redistest.Start(t)
	opts := map[string]any{"url": srv.URL()}
	a := storetest.NewSync(t, open(t, "shared", opts))
	b := storetest.NewSync(t, open(t, "shared", opts))

	var seen storetest.Recorder
	defer b.H.Watch("tools", seen.Fn)()

	require.NoError(t, a.Put("tools", "v1", 0))
	v, ok := b.Get("tools")
	require.True(t, ok)
	assert.Equal(t, "v1", string(v))

	_, stored := b.PutIfAbsent("tools", "v2", 0)
	assert.False(t, stored, "put-if-absent sees the other process's value")

	token, ok := a.Lock("lifecycle.lock", time.Minute)
	require.True(t, ok)
	_, ok = b.Lock("lifecycle.lock", time.Minute)
	assert.False(t, ok, "the other process's lock holds")
	assert.False(t, b.Unlock("lifecycle.lock", token+"x"))
	assert.True(t, b.Unlock("lifecycle.lock", token), "the token is what owns a lock, wherever it is presented")

	require.NoError(t, a.Delete("tools"))
	require.NoError(t, a.Put("tools", "v3", 0))
	require.True(t, b.Q.Await(storetest.Timeout, seen.Saw(storetest.WatchEvent{Value: "v3", OK: true})))
	assert.Equal(t, []storetest.WatchEvent{{Value: "v1", OK: true}, {}, {Value: "v3", OK: true}}, seen.Take(),
		"watchers see the other process's changes in order")
}

// TestLockLease lets a lock's lease run out on Redis's clock: another
// holder gets in, and the first can neither renew nor unlock.
func TestLockLease(t *testing.T) {
	srv := redistest.Start(t)
	opts := map[string]any{"url": srv.URL()}
	a := storetest.NewSync(t, open(t, "lease", opts))
	b := storetest.NewSync(t, open(t, "lease", opts))

	token, ok := a.Lock("l", 50*time.Millisecond)
	require.True(t, ok)
	deadline := time.Now().Add(5 * time.Second)
	var next string
	for !ok || next == "" {
		require.True(t, time.Now().Before(deadline), "the lease did not expire within 5s")
		next, ok = b.Lock("l", time.Minute)
	}
	assert.NotEqual(t, token, next)
	assert.False(t, a.Renew("l", token, time.Minute), "an expired holder cannot renew")
	assert.False(t, a.Unlock("l", token), "an expired holder cannot unlock")
	assert.True(t, b.Renew("l", next, time.Minute))
	assert.True(t, b.Unlock("l", next))
}

// TestExpiry puts values with short ttls on Redis's clock: they disappear,
// and with notifyExpiry watchers hear of it.
func TestExpiry(t *testing.T) {
	srv := redistest.Start(t)
	s := open(t, "expiry", map[string]any{"url": srv.URL(), "notifyExpiry": true})
	h := storetest.NewSync(t, s)
	var events storetest.Recorder
	defer h.H.Watch("k", events.Fn)()

	require.NoError(t, h.Put("long", "v", time.Minute))
	require.NoError(t, h.Put("k", "v", 50*time.Millisecond))
	require.True(t, h.Q.Await(5*time.Second, events.Saw(storetest.WatchEvent{})), "the expiry is announced")
	assert.Equal(t, []storetest.WatchEvent{{Value: "v", OK: true}, {}}, events.Take())
	_, ok := h.Get("k")
	assert.False(t, ok, "gone after its ttl")
	_, ok = h.Get("long")
	assert.True(t, ok)

	existing, stored := h.PutIfAbsent("k", "new", 0)
	assert.True(t, stored, "an expired value is absent")
	assert.Nil(t, existing)

	flags, err := client(t, srv).ConfigGet(context.Background(), "notify-keyspace-events").Result()
	require.NoError(t, err)
	assert.Contains(t, flags["notify-keyspace-events"], "E")
	assert.Contains(t, flags["notify-keyspace-events"], "x")
}

func TestMaxValueSize(t *testing.T) {
	srv := redistest.Start(t)
	h := storetest.NewSync(t, open(t, "size", map[string]any{"url": srv.URL(), "maxValueSize": 8}))

	assert.ErrorIs(t, h.Put("k", "123456789", 0), redisstore.ErrValueTooLarge)
	_, ok := h.Get("k")
	assert.False(t, ok, "a refused put stores nothing")
	existing, stored := h.PutIfAbsent("k", "123456789", 0)
	assert.False(t, stored)
	assert.Nil(t, existing)
	require.NoError(t, h.Put("k", "12345678", 0), "the limit itself is allowed")
	existing, stored = h.PutIfAbsent("k", "123456789", 0)
	assert.False(t, stored)
	assert.Equal(t, "12345678", string(existing), "a refused put-if-absent reports the present value")
}

// TestRedisLost stops Redis under a running store: operations fail
// promptly instead of hanging, and once Redis is back they work again and
// watchers get the current value.
func TestRedisLost(t *testing.T) {
	srv := redistest.Start(t)
	s := open(t, "lost", map[string]any{"url": srv.URL(), "timeout": "PT1S", "dialTimeout": "PT1S"})
	h := storetest.NewSync(t, s)
	var events storetest.Recorder
	defer h.H.Watch("k", events.Fn)()
	require.NoError(t, h.Put("k", "before", 0))
	require.True(t, h.Q.Await(storetest.Timeout, events.Saw(storetest.WatchEvent{Value: "before", OK: true})))

	srv.Stop()
	require.True(t, h.Q.Await(storetest.Timeout, events.Saw(storetest.WatchEvent{})),
		"watchers hear that the value is no longer known when Redis is lost")
	start := time.Now()
	_, ok := h.Get("k")
	assert.False(t, ok, "get misses while Redis is down")
	assert.Error(t, h.Put("k", "during", 0))
	_, ok = h.Lock("l", time.Minute)
	assert.False(t, ok, "no lock while Redis is down")
	_, stored := h.PutIfAbsent("p", "v", 0)
	assert.False(t, stored)
	assert.Error(t, h.Delete("k"))
	assert.Less(t, time.Since(start), 5*time.Second, "failures are prompt")

	srv.Restart()
	// The restarted Redis has no data: the watcher converges on absent.
	require.True(t, h.Q.Await(storetest.Timeout, events.Saw(storetest.WatchEvent{})), "watchers get the current value after Redis returns")
	putUntilAccepted(t, h, "k", "after")
	require.True(t, h.Q.Await(storetest.Timeout, events.Saw(storetest.WatchEvent{Value: "after", OK: true})))
	v, ok := h.Get("k")
	require.True(t, ok)
	assert.Equal(t, "after", string(v))
	_, ok = h.Lock("l", time.Minute)
	assert.True(t, ok)
}

// putUntilAccepted retries a put, bounded by storetest.Timeout, for the
// moment between Redis answering again and the store noticing.
func putUntilAccepted(t *testing.T, h storetest.Sync, key, value string) {
	t.Helper()
	deadline := time.Now().Add(storetest.Timeout)
	for {
		err := h.Put(key, value, 0)
		if err == nil {
			return
		}
		require.True(t, time.Now().Before(deadline), "put still failing: %v", err)
	}
}

// TestRedisDownAtStart creates a store while nothing listens on its port:
// New succeeds, operations fail fast, and when Redis comes up the store
// works without a restart.
func TestRedisDownAtStart(t *testing.T) {
	srv := redistest.Start(t)
	srv.Stop()
	s, err := store.New(redisstore.Type, "down", map[string]any{"url": srv.URL(), "timeout": "PT1S", "dialTimeout": "PT1S"}, nil)
	require.NoError(t, err, "serve-through: a Redis that is down is not a start-up error")
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	h := storetest.NewSync(t, s)
	var events storetest.Recorder
	defer h.H.Watch("k", events.Fn)()

	start := time.Now()
	_, ok := h.Get("k")
	assert.False(t, ok)
	assert.Error(t, h.Put("k", "v", 0))
	assert.Less(t, time.Since(start), 5*time.Second, "failures are prompt")
	require.Eventually(t, func() bool { return store.Unavailable(h.H) }, storetest.Timeout, 10*time.Millisecond,
		"the handler tells that Redis is lost")

	srv.Restart()
	select {
	case <-redisstore.Subscribed(s):
	case <-time.After(storetest.Timeout):
		t.Fatal("the store did not connect after Redis came up")
	}
	assert.False(t, store.Unavailable(h.H), "the handler tells that Redis is back")
	putUntilAccepted(t, h, "k", "v")
	require.True(t, h.Q.Await(storetest.Timeout, events.Saw(storetest.WatchEvent{Value: "v", OK: true})))
}

func TestOptions(t *testing.T) {
	dir := t.TempDir()
	notPEM := dir + "/not.pem"
	require.NoError(t, writeFile(notPEM, "hello"))
	tests := []struct {
		name    string
		options string
		wantErr string // empty: valid
	}{
		{name: "url only", options: `{"url": "redis://127.0.0.1:1/0"}`},
		{name: "everything", options: `{"url": "rediss://u:p@127.0.0.1:1/3", "prefix": "p:", "username": "a", "password": "b",
			"tls": {"insecureSkipVerify": true, "serverName": "redis"}, "dialTimeout": "PT2S", "timeout": "500ms",
			"poolSize": 4, "notifyExpiry": false, "maxValueSize": 1024}`},
		{name: "no url", options: `{}`, wantErr: "store: invalid option: url: required"},
		{name: "url number", options: `{"url": 6379}`, wantErr: "url: want string, got json.Number"},
		{name: "http url", options: `{"url": "http://127.0.0.1:6379"}`, wantErr: `url: want redis://host:port/db or rediss://..., got "http://127.0.0.1:6379"`},
		{name: "url password redacted", options: `{"url": "http://u:secret@h"}`, wantErr: `got "http://u:xxxxx@h"`},
		{name: "bad db", options: `{"url": "redis://127.0.0.1:6379/x"}`, wantErr: "url: redis: invalid database number"},
		{name: "unknown", options: `{"url": "redis://h:1", "host": "h"}`, wantErr: `store: unknown option "host"`},
		{name: "tls without rediss", options: `{"url": "redis://h:1", "tls": {}}`, wantErr: "tls: needs a rediss:// url"},
		{name: "tls unknown", options: `{"url": "rediss://h:1", "tls": {"cert": "x"}}`, wantErr: `store: unknown option "tls.cert"`},
		{name: "tls ca missing", options: `{"url": "rediss://h:1", "tls": {"ca": "/nonexistent/ca.pem"}}`, wantErr: "tls.ca: open /nonexistent/ca.pem"},
		{name: "tls ca not pem", options: `{"url": "rediss://h:1", "tls": {"ca": "` + notPEM + `"}}`, wantErr: "tls.ca: no PEM certificate in " + notPEM},
		{name: "tls skip string", options: `{"url": "rediss://h:1", "tls": {"insecureSkipVerify": "yes"}}`, wantErr: "tls.insecureSkipVerify: want boolean, got string"},
		{name: "bad timeout", options: `{"url": "redis://h:1", "timeout": "5"}`, wantErr: `timeout: want a positive duration such as PT15S, got "5"`},
		{name: "go timeout", options: `{"url": "redis://h:1", "timeout": "1m30s", "dialTimeout": "PT0.5S"}`},
		{name: "zero dial timeout", options: `{"url": "redis://h:1", "dialTimeout": "PT0S"}`, wantErr: `dialTimeout: want a positive duration`},
		{name: "pool zero", options: `{"url": "redis://h:1", "poolSize": 0}`, wantErr: "poolSize: want an integer from 1 to"},
		{name: "pool fraction", options: `{"url": "redis://h:1", "poolSize": 1.5}`, wantErr: "poolSize: want integer, got 1.5"},
		{name: "max value string", options: `{"url": "redis://h:1", "maxValueSize": "1M"}`, wantErr: "maxValueSize: want integer, got string"},
		{name: "notify string", options: `{"url": "redis://h:1", "notifyExpiry": "yes"}`, wantErr: "notifyExpiry: want boolean, got string"},
		{name: "prefix number", options: `{"url": "redis://h:1", "prefix": 1}`, wantErr: "prefix: want string, got json.Number"},
	}
	info, err := store.Lookup(redisstore.Type)
	require.NoError(t, err)
	schema := schematest.Compile(t, info.Schema)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inst, options := schematest.Instance(t, tt.options)
			s, newErr := store.New(redisstore.Type, "opts", options, nil)
			if s != nil {
				require.NoError(t, s.Close())
			}
			schemaErr := schema.Validate(inst)
			if tt.wantErr == "" {
				assert.NoError(t, newErr)
				assert.NoError(t, schemaErr)
				return
			}
			require.Error(t, newErr)
			assert.Contains(t, newErr.Error(), tt.wantErr)
			assert.Contains(t, newErr.Error(), `store/redis "opts": `)
			if !strings.Contains(tt.name, "tls ca") && tt.name != "bad db" && tt.name != "zero dial timeout" {
				assert.Error(t, schemaErr, "the schema refuses what New refuses")
			}
		})
	}
}

// silentServer accepts connections and never answers, as a Redis that
// hangs would.
func silentServer(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var conns []net.Conn
	var mu sync.Mutex
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = l.Close()
		<-done
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return "redis://" + l.Addr().String() + "/0"
}

// TestRedisHangs points a store at a server that never answers: with one
// lane stuck, a full queue refuses operations at once, and every queued
// one still completes, as failed, within its timeout.
func TestRedisHangs(t *testing.T) {
	s, err := store.New(redisstore.Type, "hang", map[string]any{
		"url": silentServer(t), "poolSize": 1, "timeout": "PT1S", "dialTimeout": "PT1S",
	}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	q := storetest.NewQueue()
	h := s.Attach(q)

	const n = 2000
	var busy, failed, succeeded int
	for range n {
		h.Put("k", []byte("v"), 0, func(err error) {
			switch {
			case errors.Is(err, redisstore.ErrBusy):
				busy++
			case err != nil:
				failed++
			default:
				succeeded++
			}
		})
	}
	q.Drain()
	assert.GreaterOrEqual(t, busy, n-1024-128, "a full queue refuses at once")
	require.True(t, q.Await(storetest.Timeout, func() bool { return busy+failed+succeeded == n }), "every operation completes: %d busy, %d failed", busy, failed)
	assert.Zero(t, succeeded)
	assert.Positive(t, failed, "queued operations fail by their timeout")
}
