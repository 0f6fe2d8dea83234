// Package redisstore is the redis store type: the Store SPI over a Redis
// server, so that several gateway processes share values, locks and
// change notifications.
//
//	stores:
//	  cache0:
//	    type: redis
//	    options:
//	      url: rediss://gateway:secret@redis.internal:6380/2
//	      prefix: "cache0:"          # default sluice:<store name>:
//	      tls:
//	        ca: /etc/sluice/redis-ca.pem
//	      timeout: PT2S              # each operation; default PT5S
//	      dialTimeout: PT5S
//	      poolSize: 16
//	      notifyExpiry: true         # let watchers see expiries (below)
//	      maxValueSize: 1048576      # default 16 MiB
//
// # Concepts
//
//   - Everything lives under the prefix: values under prefix+"v:"+key,
//     locks under prefix+"l:"+key, and each key's change notifications on
//     the channel prefix+"c:"+key. Two stores in one Redis must use
//     prefixes neither of which begins the other; the default, which
//     names the store, gives that.
//   - Non-blocking: a handler's operations go through a bounded queue to
//     one of a few lane goroutines, which send what is queued as one
//     pipeline with one deadline (the timeout option) and complete each
//     operation through the worker's Dispatcher. A handler keeps its lane,
//     so its operations take effect and complete in the order it made
//     them. A full queue fails the operation at once (Get misses, Put
//     fails with [ErrBusy], Lock is not granted).
//   - Writes and their notifications are atomic: every put, delete and
//     take runs as a Lua script that writes and PUBLISHes together, so
//     notifications go out in the order of the writes, across processes.
//     PutIfAbsent returns the winner's value from the same script.
//   - Locks are SET NX PX with a random token; Unlock and Renew compare the
//     token and then delete or re-expire in one script. Leases run on
//     Redis's clock: the store ignores the injected Clock, and Redis
//     drops expired values and locks itself, so the store is no
//     [store.Expirer].
//   - Watch: each Store keeps one pattern subscription to its change
//     channels and fans notifications out to its local watchers by key,
//     in order, through each watcher's Dispatcher. Expiries reach
//     watchers only through Redis's keyevent notifications; the store
//     listens for them always, and with notifyExpiry: true it also turns
//     them on (CONFIG SET notify-keyspace-events, adding E and x to what
//     is set), which a managed Redis may refuse (logged).
//
// # Faults
//
// The store serves through with a logged warning rather than failing:
// when Redis is down at start, New still succeeds, and the store keeps
// reconnecting in the background. While Redis is lost, operations fail
// fast ([ErrUnavailable], Get misses, Lock is not granted), and each
// handler's Unavailable ([store.Unavailable]) says so, so a binding can
// fall back to its routes; nothing waits longer than the timeout option. When Redis returns (within about a second of it answering),
// everything works again without a restart. When the subscription loses
// Redis, every watcher is sent absent at once, since the store can no
// longer vouch for the value (a cache then serves through to its routes
// instead of a copy that may be stale). Whenever the subscription
// (re)starts, every watcher is sent its key's current value (or absent),
// since changes made while it was away were not announced; that
// notification may repeat a value the watcher has already seen. A
// restarted Redis that lost its data reads as empty.
//
// Differences from the built-in stores: ttls below a millisecond round up
// to one; an expiry is seen by watchers only with keyevent notifications,
// and Redis reports it when it notices (on access, or in its periodic
// sampling), not at the exact instant. A value longer than maxValueSize is
// refused: Put fails with [ErrValueTooLarge], PutIfAbsent does not store.
// GetAndDelete uses GETDEL, so Redis 6.2 or later is required.
//
// # Usage
//
// Import the package for its side effect, as cmd/sluice does:
//
//	import _ "github.com/sluicehq/sluice/engine/store/redisstore"
package redisstore
