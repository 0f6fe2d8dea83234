//go:build !amd64

package jsonrpc

// SetLaneAsm does nothing where there is no assembly lane.
func SetLaneAsm(on bool) (restore func()) { return func() {} }
