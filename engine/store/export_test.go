package store

// Unregister removes a type registered by a test, so the test can run
// again under -count.
func Unregister(typ string) { registry.Unregister(typ) }

// Sweeping reports whether the table behind s runs a background sweep.
// Call it from the goroutine that creates and closes s.
func Sweeping(s Store) bool {
	return s.(*tableStore).t.sweep != nil
}
