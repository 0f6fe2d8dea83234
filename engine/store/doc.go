// Package store is the Store SPI, its registry, and the built-in memory and
// test stores.
//
// A store holds the small mutable state that bindings share beyond one
// stream: session tokens, idempotency records, OAuth nonces, coordination
// locks. The configuration names stores under stores.<name> with a type
// and options, as Zilla's does.
//
// # Concepts
//
//   - A [Store] is the process-wide instance of one configured store. The
//     engine creates it once, through the type's [Info.New], and closes it
//     when the configuration goes away.
//   - A [Handler] is one worker's view of a Store, obtained with
//     [Store.Attach] and the worker's [Dispatcher]. Every operation returns
//     at once and completes by dispatching its callback onto that worker,
//     so a binding never blocks its worker and its callbacks run on its
//     own thread, as Zilla's StoreHandler contract requires.
//   - Values carry an optional ttl, measured on an injected [Clock].
//     Expired values disappear lazily when touched, and through
//     [Expirer.Expire] or, on the [SystemClock], a background sweep.
//   - Locks are a separate namespace: [Handler.Lock] hands out a random
//     token with a lease that [Handler.Renew] extends and [Handler.Unlock]
//     ends; only the token's holder can do either.
//   - [Handler.Watch] reports every later change of a key, in order.
//   - A handler whose store can lose its server implements [Availability],
//     read with [Unavailable], so that a caller about to wait for an entry
//     can go on without the store while it is gone. Zilla's StoreHandler
//     has no such method; Sluice adds it for the redis store.
//
// Store types register themselves from init with [Register], in the same
// shape as binding types; [Lookup] and [Types] read the registry.
//
// # Built-in types
//
// memory keeps one table per store name per process, shared by every
// worker and by every Store created under that name, and drops it when the
// last of those closes. It takes no options.
//
// test behaves like memory but is private to its Store and starts from
// options.entries, so a spec can begin from known state:
//
//	stores:
//	  store0:
//	    type: test
//	    options:
//	      entries:
//	        session: "abc"
//
// redis, in package [github.com/sluicehq/sluice/engine/store/redisstore],
// keeps values, locks and watch notifications in a Redis server, so that
// several gateway processes share them; cmd/sluice links it in. Every
// store type passes the suite in engine/store/internal/storetest.
//
// # Usage
//
//	s, err := store.New("memory", "cache0", nil, nil)
//	if err != nil {
//		return err
//	}
//	defer s.Close()
//	h := s.Attach(worker) // worker implements Dispatcher
//	h.PutIfAbsent("nonce:42", []byte("seen"), time.Minute, func(existing []byte, stored bool) {
//		// runs on worker's thread
//	})
package store
