package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/sluicehq/sluice/engine/store"
)

// Type is the type name configurations use: stores.<name>.type: redis.
const Type = "redis"

func init() {
	store.Register(store.Info{Type: Type, Schema: json.RawMessage(schema), New: New})
}

const (
	// laneCount is how many goroutines, each with its own queue, carry
	// operations to Redis; a handler always uses the same one, so its
	// operations take effect in the order it made them.
	laneCount = 4

	// laneQueue bounds each lane's queue; an operation that finds it full
	// fails at once instead of making the worker wait.
	laneQueue = 1024

	// maxBatch bounds how many queued operations one pipeline sends.
	maxBatch = 128

	// healthInterval is how long the subscription may stay silent before
	// it is pinged, and then before it is replaced as dead.
	healthInterval = 15 * time.Second

	// The subscription's reconnect backoff doubles between these bounds;
	// the upper one is how late, at most, the store notices that Redis
	// has come back.
	minBackoff = 50 * time.Millisecond
	maxBackoff = time.Second
)

// Store is one configured redis store: a go-redis client, the lanes that
// carry operations, and the subscription that feeds watchers.
type Store struct {
	name   string
	cfg    *config
	keys   keyspace
	client *goredis.Client
	log    *slog.Logger

	lanes []chan *op
	next  atomic.Uint32

	// mu orders enqueueing against Close: an operation is queued under
	// the read lock only while the store is open, so once Close holds the
	// write lock every queued operation is in a lane and gets completed.
	mu       sync.RWMutex
	closed   bool
	isClosed atomic.Bool
	once     sync.Once
	stop     chan struct{}
	wg       sync.WaitGroup

	// down is set while the subscription has lost Redis; operations then
	// fail at once with ErrUnavailable instead of each waiting to fail.
	down atomic.Bool

	// subscribed is closed when the subscription first comes up.
	subscribed chan struct{}
	subOnce    sync.Once

	psMu sync.Mutex
	ps   *goredis.PubSub

	watch hub
}

// New creates the redis store configured as name. It does not wait for
// Redis: when Redis is down, New still succeeds, logs a warning, and the
// store keeps reconnecting in the background while its operations fail
// fast. Values and locks expire on Redis's clock, so clock is not used.
func New(name string, options map[string]any, _ store.Clock) (store.Store, error) {
	cfg, err := parse(name, options)
	if err != nil {
		return nil, err
	}
	s := &Store{
		name:       name,
		cfg:        cfg,
		keys:       keyspace{prefix: cfg.prefix, db: cfg.redis.DB},
		client:     goredis.NewClient(cfg.redis),
		log:        slog.Default().With("store", name, "type", Type),
		stop:       make(chan struct{}),
		subscribed: make(chan struct{}),
	}
	s.watch.byKey = make(map[string]map[*watcher]struct{})
	lanes := min(laneCount, s.client.Options().PoolSize)
	for range lanes {
		ops := make(chan *op, laneQueue)
		s.lanes = append(s.lanes, ops)
		s.wg.Add(1)
		go s.serve(ops)
	}
	s.ps = s.client.PSubscribe(context.Background(), s.keys.changes(), s.keys.expired())
	s.wg.Add(1)
	go s.listen()
	return s, nil
}

// Attach returns a handler that completes through d.
func (s *Store) Attach(d store.Dispatcher) store.Handler {
	if d == nil {
		panic("store/redis: Attach with nil Dispatcher")
	}
	lane := s.lanes[int(s.next.Add(1)-1)%len(s.lanes)]
	return &handler{s: s, d: d, lane: lane}
}

// Close stops the store: operations made later complete as failed with
// store.ErrClosed, queued ones as failed, and watchers stop, including
// notifications already queued. Close is idempotent. It waits for the
// store's goroutines, so do not call it from a completion run inline on
// one of them.
func (s *Store) Close() error {
	var err error
	s.once.Do(func() {
		s.mu.Lock()
		s.closed = true
		s.isClosed.Store(true)
		s.mu.Unlock()
		s.watch.closeAll()
		close(s.stop)
		s.psMu.Lock()
		ps := s.ps
		s.ps = nil
		s.psMu.Unlock()
		if ps != nil {
			_ = ps.Close()
		}
		err = s.client.Close()
		s.wg.Wait()
	})
	return err
}

// op is one queued operation. run adds its commands to the pipeline (nil
// when it has nothing to send, as for a refused argument, so that it still
// completes in order); done reads the replies and dispatches the caller's
// callback, or completes as failed when err is not nil.
type op struct {
	run  func(ctx context.Context, p goredis.Pipeliner)
	done func(err error)
}

// serve runs one lane: it takes what is queued, up to maxBatch, sends it
// as one pipeline with one deadline, and completes each operation in
// order.
func (s *Store) serve(ops chan *op) {
	defer s.wg.Done()
	batch := make([]*op, 0, maxBatch)
	for {
		select {
		case o := <-ops:
			batch = append(batch, o)
		case <-s.stop:
			for {
				select {
				case o := <-ops:
					o.done(store.ErrClosed)
				default:
					return
				}
			}
		}
	fill:
		for len(batch) < maxBatch {
			select {
			case o := <-ops:
				batch = append(batch, o)
			default:
				break fill
			}
		}
		s.exec(batch)
		clear(batch)
		batch = batch[:0]
	}
}

func (s *Store) exec(batch []*op) {
	var failed error
	if s.down.Load() {
		failed = ErrUnavailable
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.timeout)
	defer cancel()
	pipe := s.client.Pipeline()
	sent := 0
	for _, o := range batch {
		if o.run != nil && failed == nil {
			o.run(ctx, pipe)
			sent++
		}
	}
	if sent > 0 {
		_, _ = pipe.Exec(ctx)
	}
	for _, o := range batch {
		if o.run != nil {
			o.done(failed)
		} else {
			o.done(nil)
		}
	}
}

// opErr turns the error of a command into the error an operation
// completes with.
func (s *Store) opErr(err error) error {
	if s.isClosed.Load() {
		return store.ErrClosed
	}
	return fmt.Errorf("store/redis: %w", err)
}

// listen owns the subscription: it feeds watchers, notices when Redis is
// lost and when it is back, and after every (re)subscription re-reads the
// watched keys so watchers converge on what changed while it was away.
func (s *Store) listen() {
	defer s.wg.Done()
	ctx := context.Background()
	connected, pinged := false, false
	backoff := minBackoff
	retry := time.NewTimer(time.Hour)
	retry.Stop()
	for {
		s.psMu.Lock()
		ps := s.ps
		s.psMu.Unlock()
		if ps == nil {
			return
		}
		msg, err := ps.ReceiveTimeout(ctx, healthInterval)
		if s.isClosed.Load() {
			return
		}
		if err != nil {
			if connected && isTimeout(err) {
				if !pinged {
					pinged = true
					_ = ps.Ping(ctx)
					continue
				}
				// No answer to the ping in a whole interval: the
				// connection is dead without having been closed.
				s.resubscribe(ctx)
			}
			connected, pinged = false, false
			if !s.down.Swap(true) {
				s.log.Warn("redis unreachable; store operations fail until it returns", "error", err)
				s.watch.forgetAll()
			}
			retry.Reset(backoff)
			select {
			case <-s.stop:
				return
			case <-retry.C:
			}
			backoff = min(2*backoff, maxBackoff)
			continue
		}
		pinged = false
		switch m := msg.(type) {
		case *goredis.Subscription:
			if m.Kind == "psubscribe" && m.Channel == s.keys.changes() {
				connected, backoff = true, minBackoff
				if s.down.Swap(false) {
					s.log.Info("redis reachable again")
				}
				if s.cfg.notifyExpiry {
					s.enableExpiry(ctx)
				}
				s.resync(ctx)
				s.subOnce.Do(func() { close(s.subscribed) })
			}
		case *goredis.Message:
			s.deliver(m)
		}
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// resubscribe replaces the subscription's connection.
func (s *Store) resubscribe(ctx context.Context) {
	s.psMu.Lock()
	defer s.psMu.Unlock()
	if s.ps == nil {
		return
	}
	_ = s.ps.Close()
	s.ps = s.client.PSubscribe(ctx, s.keys.changes(), s.keys.expired())
}

// deliver passes one notification to the watchers of its key.
func (s *Store) deliver(m *goredis.Message) {
	if m.Pattern == s.keys.expired() {
		if key, ok := s.keys.keyOfValue(m.Payload); ok {
			s.watch.notify(key, nil, false)
		}
		return
	}
	key, ok := s.keys.keyOfChannel(m.Channel)
	if !ok {
		return
	}
	value, present, valid := decodeChange(m.Payload)
	if !valid {
		return
	}
	s.watch.notify(key, value, present)
}

// resync reads every watched key and tells its watchers its current
// value. Changes published after the read arrive after it, so each
// watcher ends on the latest value.
func (s *Store) resync(ctx context.Context) {
	keys := s.watch.keys()
	if len(keys) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.timeout)
	defer cancel()
	pipe := s.client.Pipeline()
	cmds := make([]*goredis.StringCmd, len(keys))
	for i, key := range keys {
		cmds[i] = pipe.Get(ctx, s.keys.value(key))
	}
	_, _ = pipe.Exec(ctx)
	for i, key := range keys {
		value, err := cmds[i].Bytes()
		switch {
		case err == nil:
			s.watch.notify(key, value, true)
		case errors.Is(err, goredis.Nil):
			s.watch.notify(key, nil, false)
		}
	}
}

// enableExpiry turns on Redis's keyevent notifications of expired keys,
// keeping whatever other classes the server already publishes.
func (s *Store) enableExpiry(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.timeout)
	defer cancel()
	cur, err := s.client.ConfigGet(ctx, "notify-keyspace-events").Result()
	if err == nil {
		flags := cur["notify-keyspace-events"]
		if strings.Contains(flags, "E") && strings.ContainsAny(flags, "xA") {
			return
		}
		if !strings.Contains(flags, "E") {
			flags += "E"
		}
		if !strings.ContainsAny(flags, "xA") {
			flags += "x"
		}
		err = s.client.ConfigSet(ctx, "notify-keyspace-events", flags).Err()
	}
	if err != nil {
		s.log.Warn("cannot enable expiry notifications; watchers will not see expiries", "error", err)
	}
}

var _ store.Store = (*Store)(nil)
