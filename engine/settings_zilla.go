package engine

// Zilla's engine properties that its tests pin (EngineRule.configure):
// accepted so that a Zilla test's settings carry over whole, but read by
// nothing, each for the reason given.
func init() {
	for name, why := range map[string]string{
		"engine.buffer.slot.capacity": "bindings bound what they buffer by their own options (limits)",
		"engine.buffer.pool.capacity": "bindings bound what they buffer by their own options (limits)",
		"engine.drain.on.close":       "the engine ends its streams when it closes; sluice start drains on SIGTERM",
		"engine.detach.on.close":      "the engine ends its streams when it closes",
		"engine.synthetic.abort":      "the engine does not abort streams on behalf of a binding",
	} {
		RegisterSetting(Setting{Name: name, Unread: why})
	}
}
