// Package storetest is the behavioural suite every store type passes, and
// the helpers it is written with.
//
// [Run] checks the [store.Handler] contract that does not depend on the
// clock: values, put-if-absent, locks and their tokens, watch order and
// cancel, completions through the Dispatcher, copies in and out,
// contention between workers, and Close. Its waits are bounded by
// [Timeout], so a store that completes later than the call (over a
// network) passes as well as one that completes at once. Expiry needs a
// clock the test can move, or a real one, so each store type tests it on
// its own.
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Store { return newStore(t) })
//	}
package storetest
