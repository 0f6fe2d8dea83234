package jsonrpc

import "golang.org/x/sys/cpu"

var hasAVX2 = cpu.X86.HasAVX2

// stringMasksAVX2 writes blocks mask words, little-endian, to dst from
// 64*blocks bytes of p. hi is all ones under StrictUTF8, 0 otherwise.
//
//go:noescape
func stringMasksAVX2(dst *byte, p *byte, blocks int, hi uint64)

// stringMasks computes the masks of the 64-byte blocks of p into dst,
// eight bytes per block; len(p) is 8 * len(dst).
func stringMasks(dst []byte, p []byte, hi uint64) {
	if hasAVX2 {
		stringMasksAVX2(&dst[0], &p[0], len(dst)/8, -(hi >> 63)) // highs or 0 → all ones or 0
		return
	}
	stringMasksGeneric(dst, p, hi)
}
