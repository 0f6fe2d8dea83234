package jsonrpc

// SetLaneAsm turns the assembly lane on or off and returns a function
// that restores it.
func SetLaneAsm(on bool) (restore func()) {
	old := laneAsm
	laneAsm = on
	return func() { laneAsm = old }
}
