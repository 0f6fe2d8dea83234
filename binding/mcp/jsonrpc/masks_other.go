//go:build !amd64

package jsonrpc

// stringMasks computes the masks of the 64-byte blocks of p into dst,
// eight bytes per block; len(p) is 8 * len(dst).
func stringMasks(dst []byte, p []byte, hi uint64) {
	stringMasksGeneric(dst, p, hi)
}
