package guard

// Unregister removes a type registered by a test, so the test can run
// again under -count.
func Unregister(typ string) { registry.Unregister(typ) }
