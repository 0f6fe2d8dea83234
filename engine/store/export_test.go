package store

import "time"

// SetSweepInterval changes how often stores created afterwards on the real
// clock sweep, and returns a function that restores the old interval.
// Tests that use it must not run in parallel.
func SetSweepInterval(d time.Duration) (restore func()) {
	old := sweepInterval
	sweepInterval = d
	return func() { sweepInterval = old }
}

// Unregister removes a type registered by a test, so the test can run
// again under -count.
func Unregister(typ string) { registry.Unregister(typ) }

// Sweeping reports whether the table behind s runs a background sweep.
// Call it from the goroutine that creates and closes s.
func Sweeping(s Store) bool {
	return s.(*tableStore).t.sweep != nil
}
