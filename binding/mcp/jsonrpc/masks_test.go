package jsonrpc

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// maskRef is the string mask of one 64-byte block, byte by byte.
func maskRef(p []byte, strict bool) uint64 {
	var m uint64
	for k, c := range p[:64] {
		if strPlain[c] || strict && c >= 0x80 {
			m |= 1 << k
		}
	}
	return m
}

// TestStringMasks checks both implementations against maskRef on every
// byte value in every position, and on random blocks.
func TestStringMasks(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var blocks [][]byte
	for c := range 256 {
		for _, pos := range []int{0, 7, 8, 31, 32, 33, 63} {
			b := make([]byte, 64)
			for k := range b {
				b[k] = byte(rng.IntN(256))
			}
			b[pos] = byte(c)
			blocks = append(blocks, b)
		}
	}
	for range 200 {
		b := make([]byte, 64)
		for k := range b {
			b[k] = "a\"\\\x00\x1f \x7f\x80\xff~"[rng.IntN(10)]
		}
		blocks = append(blocks, b)
	}
	var all []byte
	for _, b := range blocks {
		all = append(all, b...)
	}
	for _, strict := range []bool{false, true} {
		hi := uint64(0)
		if strict {
			hi = highs
		}
		got := make([]byte, 8*len(blocks))
		gen := make([]byte, 8*len(blocks))
		stringMasks(got, all, hi)
		stringMasksGeneric(gen, all, hi)
		for k, b := range blocks {
			want := maskRef(b, strict)
			require.Equal(t, want, binary.LittleEndian.Uint64(got[k*8:]), "block %d strict=%v: %q", k, strict, b)
			require.Equal(t, want, binary.LittleEndian.Uint64(gen[k*8:]), "generic, block %d strict=%v: %q", k, strict, b)
		}
	}
}

// TestWindowFill checks that fill marks every position past the chunk's
// end and past the window, and that at reads the bitmap from any bit.
func TestWindowFill(t *testing.T) {
	var w window
	for _, n := range []int{0, 1, 63, 64, 65, 127, 128, 200, winWords*64 - 1, winWords * 64, winWords*64 + 5} {
		p := make([]byte, n)
		for k := range p {
			p[k] = 'a'
		}
		for _, i := range []int{0, n / 2, n} {
			w.fill(p, i, 0)
			require.Equal(t, 0, w.n%64)
			require.Equal(t, i, w.base)
			covered := min(n-i, winWords*64)
			require.GreaterOrEqual(t, w.n, covered)
			for k := 0; k < w.n; k++ {
				m := w.at(k)
				for j := 0; j < 57; j++ {
					if set, want := m>>j&1 == 1, i+k+j >= n || k+j >= w.n; set != want {
						t.Fatalf("n=%d i=%d k=%d j=%d: bit %v, want %v", n, i, k, j, set, want)
					}
				}
			}
		}
	}
}
