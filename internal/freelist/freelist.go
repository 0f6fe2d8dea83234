// Package freelist is the one helper behind the per-worker free lists of
// stream objects (exchanges, requests, legs, calls, timers): each binding
// keeps the objects its finished streams leave and takes them back for
// new ones, so that a stream costs no allocation in steady state.
package freelist

// Pop takes the last object off *list and returns it, or nil when the
// list is empty. The slot it leaves is cleared, so that the list's array
// keeps no pointer to an object in use.
func Pop[T any](list *[]*T) *T {
	n := len(*list)
	if n == 0 {
		return nil
	}
	v := (*list)[n-1]
	(*list)[n-1] = nil
	*list = (*list)[:n-1]
	return v
}
