package redisstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strconv"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/sluicehq/sluice/engine/store"
)

// handler is one worker's view of a Store; its operations go through one
// lane, so they take effect and complete in the order they were made.
type handler struct {
	s    *Store
	d    store.Dispatcher
	lane chan *op
}

// Unavailable reports whether the store has lost Redis: its operations
// then fail at once with [ErrUnavailable] until Redis answers again.
func (h *handler) Unavailable() bool { return h.s.down.Load() }

// submit queues o, or completes it at once as failed when the store is
// closed or the lane is full.
func (h *handler) submit(o *op) {
	h.s.mu.RLock()
	if h.s.closed {
		h.s.mu.RUnlock()
		o.done(store.ErrClosed)
		return
	}
	select {
	case h.lane <- o:
		h.s.mu.RUnlock()
	default:
		h.s.mu.RUnlock()
		o.done(ErrBusy)
	}
}

// millis is ttl in whole milliseconds, rounded up so that a positive ttl
// never becomes "no expiry"; 0 stays 0.
func millis(ttl time.Duration) string {
	return strconv.FormatInt(int64((ttl+time.Millisecond-1)/time.Millisecond), 10)
}

func (h *handler) Get(key string, done func(value []byte, ok bool)) {
	var cmd *goredis.StringCmd
	h.submit(&op{
		run: func(ctx context.Context, p goredis.Pipeliner) { cmd = p.Get(ctx, h.s.keys.value(key)) },
		done: func(err error) {
			if done == nil {
				return
			}
			var value []byte
			ok := false
			if err == nil {
				if v, e := cmd.Bytes(); e == nil {
					value, ok = v, true
				}
			}
			h.d.Dispatch(func() { done(value, ok) })
		},
	})
}

func (h *handler) Put(key string, value []byte, ttl time.Duration, done func(err error)) {
	complete := func(err error) {
		if done != nil {
			h.d.Dispatch(func() { done(err) })
		}
	}
	var refused error
	switch {
	case ttl < 0:
		refused = store.ErrNegativeTTL
	case len(value) > h.s.cfg.maxValueSize:
		refused = ErrValueTooLarge
	}
	if refused != nil {
		h.submit(&op{done: func(err error) {
			if err == nil {
				err = refused
			}
			complete(err)
		}})
		return
	}
	v := string(value)
	var cmd *goredis.Cmd
	h.submit(&op{
		run: func(ctx context.Context, p goredis.Pipeliner) {
			cmd = putScript.Eval(ctx, p, []string{h.s.keys.value(key)}, v, millis(ttl), h.s.keys.channel(key))
		},
		done: func(err error) {
			if err == nil && cmd.Err() != nil {
				err = h.s.opErr(cmd.Err())
			}
			complete(err)
		},
	})
}

func (h *handler) PutIfAbsent(key string, value []byte, ttl time.Duration, done func(existing []byte, stored bool)) {
	if ttl < 0 || len(value) > h.s.cfg.maxValueSize {
		// Refused: nothing is stored, and the caller learns the present
		// value as for any put that does not store.
		if done == nil {
			h.Get(key, nil)
			return
		}
		h.Get(key, func(v []byte, _ bool) { done(v, false) })
		return
	}
	v := string(value)
	var cmd *goredis.Cmd
	h.submit(&op{
		run: func(ctx context.Context, p goredis.Pipeliner) {
			cmd = putIfAbsentScript.Eval(ctx, p, []string{h.s.keys.value(key)}, v, millis(ttl), h.s.keys.channel(key))
		},
		done: func(err error) {
			if done == nil {
				return
			}
			var existing []byte
			stored := false
			if err == nil {
				existing, stored = putIfAbsentReply(cmd)
			}
			h.d.Dispatch(func() { done(existing, stored) })
		},
	})
}

// putIfAbsentReply reads putIfAbsentScript's {1} or {0, value}; a failed
// command reads as not stored, with no value.
func putIfAbsentReply(cmd *goredis.Cmd) (existing []byte, stored bool) {
	reply, err := cmd.Slice()
	if err != nil || len(reply) == 0 {
		return nil, false
	}
	if n, _ := reply[0].(int64); n == 1 {
		return nil, true
	}
	if len(reply) == 2 {
		if s, ok := reply[1].(string); ok {
			return []byte(s), false
		}
	}
	return nil, false
}

func (h *handler) Delete(key string, done func(err error)) {
	var cmd *goredis.Cmd
	h.submit(&op{
		run: func(ctx context.Context, p goredis.Pipeliner) {
			cmd = deleteScript.Eval(ctx, p, []string{h.s.keys.value(key)}, h.s.keys.channel(key))
		},
		done: func(err error) {
			if done == nil {
				return
			}
			if err == nil && cmd.Err() != nil {
				err = h.s.opErr(cmd.Err())
			}
			h.d.Dispatch(func() { done(err) })
		},
	})
}

func (h *handler) GetAndDelete(key string, done func(value []byte, ok bool)) {
	var cmd *goredis.Cmd
	h.submit(&op{
		run: func(ctx context.Context, p goredis.Pipeliner) {
			cmd = getAndDeleteScript.Eval(ctx, p, []string{h.s.keys.value(key)}, h.s.keys.channel(key))
		},
		done: func(err error) {
			if done == nil {
				return
			}
			var value []byte
			ok := false
			if err == nil {
				if s, e := cmd.Text(); e == nil {
					value, ok = []byte(s), true
				}
			}
			h.d.Dispatch(func() { done(value, ok) })
		},
	})
}

func (h *handler) Lock(key string, ttl time.Duration, done func(token string, ok bool)) {
	complete := func(token string, ok bool) {
		if done != nil {
			h.d.Dispatch(func() { done(token, ok) })
		}
	}
	if ttl < 0 {
		h.submit(&op{done: func(error) { complete("", false) }})
		return
	}
	token := newToken()
	var cmd *goredis.Cmd
	h.submit(&op{
		run: func(ctx context.Context, p goredis.Pipeliner) {
			args := []any{"SET", h.s.keys.lock(key), token, "NX"}
			if ttl > 0 {
				args = append(args, "PX", millis(ttl))
			}
			cmd = p.Do(ctx, args...)
		},
		done: func(err error) {
			if err == nil && cmd.Err() == nil {
				complete(token, true)
				return
			}
			complete("", false)
		},
	})
}

func (h *handler) Unlock(key, token string, done func(ok bool)) {
	var cmd *goredis.Cmd
	h.submit(&op{
		run: func(ctx context.Context, p goredis.Pipeliner) {
			cmd = unlockScript.Eval(ctx, p, []string{h.s.keys.lock(key)}, token)
		},
		done: func(err error) { h.completeBool(done, err, cmd) },
	})
}

func (h *handler) Renew(key, token string, ttl time.Duration, done func(ok bool)) {
	if ttl < 0 {
		h.submit(&op{done: func(error) { h.completeBool(done, errRefused, nil) }})
		return
	}
	var cmd *goredis.Cmd
	h.submit(&op{
		run: func(ctx context.Context, p goredis.Pipeliner) {
			cmd = renewScript.Eval(ctx, p, []string{h.s.keys.lock(key)}, token, millis(ttl))
		},
		done: func(err error) { h.completeBool(done, err, cmd) },
	})
}

// errRefused marks an operation refused for its arguments before it
// reached Redis.
var errRefused = errors.New("refused")

// completeBool completes done with whether cmd, a script returning 1 on
// success, succeeded.
func (h *handler) completeBool(done func(bool), err error, cmd *goredis.Cmd) {
	if done == nil {
		return
	}
	ok := false
	if err == nil {
		n, e := cmd.Int64()
		ok = e == nil && n == 1
	}
	h.d.Dispatch(func() { done(ok) })
}

func (h *handler) Watch(key string, fn func(value []byte, ok bool)) (cancel func()) {
	if fn == nil {
		return func() {}
	}
	w := &watcher{key: key}
	w.Init(h.d, fn)
	if !h.s.watch.add(w) {
		return func() {}
	}
	return func() { h.s.watch.remove(w) }
}

// newToken returns 128 random bits in hex, a lock's proof of ownership.
// crypto/rand.Read does not fail on supported platforms (it aborts the
// process instead), so there is no error to report.
func newToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

var _ store.Handler = (*handler)(nil)
