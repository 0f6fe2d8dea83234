package jsonrpc

import (
	"encoding/binary"
	"math/bits"
)

// The string masks: a bitmap, one bit per byte of the chunk being
// scanned, of the bytes that end a run of plain string content ('"', '\',
// control bytes, and under StrictUTF8 every byte from 0x80). Scan's string
// loops find a string's end, or the next byte they must look at, with one
// load and a count of trailing zeros, however long the string is, instead
// of testing the string eight bytes at a time with a branch per word.
//
// The masks cover a window of the chunk from a byte the scan has reached,
// computed when the scan first needs a mask past the window's end: 64
// bytes per word, winWords words. Bits for positions past the chunk's end
// are set, so the loops stop at the end of the chunk without a bounds test
// of their own.
const winWords = 128

// window is a Tracker's string masks for the chunk it is scanning.
type window struct {
	base int // the chunk offset of bit 0 of word 0
	n    int // the bytes covered (a multiple of 64); 0 means none
	w    [winWords]uint64
}

// fill computes the masks for p from offset i on. hi is highs under
// StrictUTF8 and 0 otherwise.
//
//go:noinline
func (w *window) fill(p []byte, i int, hi uint64) {
	w.base = i
	rest := p[i:]
	blocks := min(len(rest)/64, winWords)
	if blocks > 0 {
		stringMasks(w.w[:blocks], rest[:blocks*64], hi)
	}
	n := blocks
	if n < winWords {
		// The chunk ends in this window: mask its last partial block
		// (maybe none of it) with the bytes past the end marked.
		var pad [64]byte
		for k := range pad {
			pad[k] = '"'
		}
		copy(pad[:], rest[blocks*64:])
		stringMasks(w.w[n:n+1], pad[:], hi)
		n++
	}
	w.n = n * 64
}

// stringMasksGeneric is stringMasks in portable Go: for each eight bytes
// of p, the high bit of each byte that ends plain content, gathered into
// eight bits of dst.
func stringMasksGeneric(dst []uint64, p []byte, hi uint64) {
	for k := range dst {
		var m uint64
		for j := 0; j < 8; j++ {
			x := binary.LittleEndian.Uint64(p[k*64+j*8:])
			m |= gather(plainEnds(x, hi)) << (j * 8)
		}
		dst[k] = m
	}
}

// plainEnds returns the high bit of each byte of x that ends plain
// string content. Unlike special's, every bit is exact: the byte tests
// add within seven bits, so no carry crosses a byte.
func plainEnds(x, hi uint64) uint64 {
	const low7 = 0x7F7F7F7F7F7F7F7F
	lo := x & low7
	zeroQ := ^((lo ^ ones*'"') + low7) // high bit set where the low 7 bits are '"'
	zeroB := ^((lo ^ ones*'\\') + low7)
	ctrl := ^(lo + ones*(0x80-0x20)) // high bit set where the low 7 bits are < 0x20
	ascii := ^x & highs
	return (zeroQ|zeroB|ctrl)&ascii | x&hi
}

// gather packs the high bits of x's bytes into its low eight bits.
func gather(x uint64) uint64 {
	return (x & highs >> 7) * 0x0102040810204080 >> 56
}

// next returns the offset of the first byte from i on that ends plain
// string content, given that the word holding i has none at or after i:
// the rest of a string longer than its first word, through as many words
// and windows as it takes. The result is at most len(p).
//
//go:noinline
func (w *window) next(p []byte, i int, hi uint64) int {
	k := (i - w.base) | 63 + 1
	for {
		if k >= w.n {
			w.fill(p, w.base+k, hi)
			k = 0
		}
		if m := w.w[k>>6]; m != 0 {
			return w.base + k + bits.TrailingZeros64(m)
		}
		k += 64
	}
}

// find returns the offset of the first byte from i on that ends plain
// string content, as far as the window reaches: if the window does not
// hold i, i itself, and if the window ends first, its end. Either way
// the bytes before the result are plain. It makes no call, so that lane,
// which inlines it, saves no registers around one: what lies outside the
// window is scan's to fetch.
func (w *window) find(i int) int {
	k := i - w.base
	if uint(k) >= uint(w.n) {
		return i
	}
	m := w.w[k>>6&(winWords-1)] >> (k & 63)
	for m == 0 {
		if k = (k | 63) + 1; k >= w.n {
			return w.base + k
		}
		m = w.w[k>>6&(winWords-1)]
	}
	return w.base + k + bits.TrailingZeros64(m)
}
