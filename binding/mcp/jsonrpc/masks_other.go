//go:build !amd64

package jsonrpc

// stringMasks computes the masks of the 64-byte blocks of p into dst,
// one word per block; len(p) is 64 * len(dst).
func stringMasks(dst []uint64, p []byte, hi uint64) {
	stringMasksGeneric(dst, p, hi)
}
