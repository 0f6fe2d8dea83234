package jsonrpc

import (
	"encoding/binary"
	"math/bits"
)

// The string masks: a bitmap, one bit per byte of the chunk being
// scanned, of the bytes that end a run of plain string content ('"', '\',
// control bytes, and under StrictUTF8 every byte from 0x80). The string
// loops find a string's end, or the next byte they must look at, with one
// load and a count of trailing zeros instead of testing the string a few
// bytes at a time.
//
// The masks cover a window of the chunk from a byte the scan has reached,
// computed when the scan first needs a mask past the window's end: 64
// bytes per mask word, winWords words. Bits for positions past the
// chunk's end are set, and so are the eight bytes after the window's last
// word, so that the loops stop at the end of the chunk, or of the window,
// without a bounds test of their own.
//
// The bitmap is kept as bytes, little-endian: the loops load the 64 bits
// from any byte of it, so that a string's first 57 bytes or more are
// always in one load wherever the string starts. Loading from the 64-bit
// word that holds the string's start instead would leave a string that
// crosses a word boundary (one in three, in a tools/list body) to a
// second load behind a branch that no predictor learns.
const winWords = 128

// window is a Tracker's string masks for the chunk it is scanning.
type window struct {
	base int // the chunk offset of the bitmap's first bit
	n    int // the bytes covered (a multiple of 64); 0 means none
	b    [winWords*8 + 8]byte
}

// at returns the bitmap from window offset k on: bit j is the byte at
// base+k+j, for j below 57 at least. k must be below n. Bits past the
// window are set: a caller that finds its first set bit at the window's
// end (base+n) has found no byte, only that the bytes before are plain.
func (w *window) at(k int) uint64 {
	return binary.LittleEndian.Uint64(w.b[k>>3&(winWords*8-1):]) >> (k & 7)
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
		stringMasks(w.b[:blocks*8], rest[:blocks*64], hi)
	}
	n := blocks
	if n < winWords {
		// The chunk ends in this window: mask its last partial block
		// (maybe none of it) with the bytes past the end marked.
		pad := quotePad
		copy(pad[:], rest[blocks*64:])
		stringMasks(w.b[n*8:n*8+8], pad[:], hi)
		n++
	}
	binary.LittleEndian.PutUint64(w.b[n*8:], ^uint64(0))
	w.n = n * 64
}

// quotePad is a block of quotes, each of which ends plain content: the
// bytes past a chunk's end in its last block.
var quotePad = [64]byte{
	'"', '"', '"', '"', '"', '"', '"', '"', '"', '"', '"', '"', '"', '"', '"', '"',
	'"', '"', '"', '"', '"', '"', '"', '"', '"', '"', '"', '"', '"', '"', '"', '"',
	'"', '"', '"', '"', '"', '"', '"', '"', '"', '"', '"', '"', '"', '"', '"', '"',
	'"', '"', '"', '"', '"', '"', '"', '"', '"', '"', '"', '"', '"', '"', '"', '"',
}

// stringMasksGeneric is stringMasks in portable Go: for each eight bytes
// of p, the high bit of each byte that ends plain content, gathered into
// eight bits of dst.
func stringMasksGeneric(dst []byte, p []byte, hi uint64) {
	for k := 0; k < len(dst)/8; k++ {
		var m uint64
		for j := 0; j < 8; j++ {
			x := binary.LittleEndian.Uint64(p[k*64+j*8:])
			m |= gather(plainEnds(x, hi)) << (j * 8)
		}
		binary.LittleEndian.PutUint64(dst[k*8:], m)
	}
}

// plainEnds returns the high bit of each byte of x that ends plain
// string content. Every bit is exact: the byte tests add within seven
// bits, so no carry crosses a byte.
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
// string content, at most len(p): find, window after window.
//
//go:noinline
func (w *window) next(p []byte, i int, hi uint64) int {
	for {
		if uint(i-w.base) >= uint(w.n) {
			w.fill(p, i, hi)
		}
		if i = w.find(i); i-w.base < w.n {
			return i
		}
		// i is the window's end, not a byte that ends plain content.
	}
}

// find returns the offset of the first byte from i on that ends plain
// string content, as far as the window reaches: if the window does not
// hold i, i itself, and if the window ends first, its end (base+n);
// either way the bytes before the result are plain. It makes no call, so that lane saves
// no registers around one: what lies outside the window is scan's to
// fetch.
func (w *window) find(i int) int {
	for {
		k := i - w.base
		if uint(k) >= uint(w.n) {
			return i
		}
		if m := w.at(k); m != 0 {
			return i + bits.TrailingZeros64(m)
		}
		i += 64 - k&7
	}
}
