package jsonrpc_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/binding/mcp/jsonrpc"
)

// bigNested builds a JSON-RPC response whose result is nested below the
// top level (where the tracker's fast lane runs) and long enough to span
// several mask windows: strings of every length up to past a window
// (8 KiB), escapes and multi-byte characters at random places, numbers
// of every form, literals, whitespace, empty containers. With damage, one
// byte is then replaced, which the oracle must see rejected at the same
// offset.
func bigNested(rng *rand.Rand, size int) []byte {
	var b strings.Builder
	b.WriteString(`{"jsonrpc":"2.0","id":7,"result":{"items":[`)
	str := func() {
		n := rng.IntN(40)
		if rng.IntN(50) == 0 {
			n = 60 + rng.IntN(9000)
		}
		b.WriteByte('"')
		for range n {
			switch r := rng.IntN(200); {
			case r == 0:
				b.WriteString(`\"`)
			case r == 1:
				b.WriteString(`\\`)
			case r == 2:
				b.WriteString(`\u00e9`)
			case r == 3:
				b.WriteString("é")
			case r == 4:
				b.WriteString("🌍")
			default:
				b.WriteByte(byte('a' + r%26))
			}
		}
		b.WriteByte('"')
	}
	ws := func() {
		if rng.IntN(8) == 0 {
			b.WriteString([]string{" ", "\n  ", "\t", "\r\n"}[rng.IntN(4)])
		}
	}
	var value func(depth int)
	value = func(depth int) {
		ws()
		switch r := rng.IntN(12); {
		case r < 5 || depth > 12:
			if depth > 12 && r >= 5 {
				b.WriteString([]string{"0", "-1", "12.5e3", "1E-2", "-0.0", "true", "false", "null", "123456789"}[r%9])
				break
			}
			str()
		case r < 7:
			b.WriteString([]string{"0", "-1", "12.5e3", "1E-2", "-0.0", "7", "123456789", "3.25"}[rng.IntN(8)])
		case r < 8:
			b.WriteString([]string{"true", "false", "null"}[rng.IntN(3)])
		case r < 10:
			b.WriteByte('{')
			for k := range rng.IntN(6) {
				if k > 0 {
					b.WriteByte(',')
				}
				ws()
				str()
				ws()
				b.WriteByte(':')
				value(depth + 1)
			}
			ws()
			b.WriteByte('}')
		default:
			b.WriteByte('[')
			for k := range rng.IntN(6) {
				if k > 0 {
					b.WriteByte(',')
				}
				value(depth + 1)
			}
			ws()
			b.WriteByte(']')
		}
		ws()
	}
	for k := 0; b.Len() < size; k++ {
		if k > 0 {
			b.WriteByte(',')
		}
		value(3)
	}
	b.WriteString(`]},"x":1}`)
	return []byte(b.String())
}

// TestLaneAgainstOracle runs large nested messages, whole and split at
// random, intact and with one byte damaged, through trackers with each
// option set, and holds them to encoding/json, with the assembly lane and
// with the portable one.
func TestLaneAgainstOracle(t *testing.T) {
	trackers := []*jsonrpc.Tracker{
		jsonrpc.NewTracker(jsonrpc.Options{}),
		jsonrpc.NewTracker(jsonrpc.Options{StrictUTF8: true}),
		jsonrpc.NewTracker(jsonrpc.Options{MaxDepth: 9}),
	}
	junk := []byte("\"\\{}[]:, \x00\x1f\x80\xfftfn-0.e9")
	for round := range 150 {
		rng := rand.New(rand.NewPCG(6, uint64(round)))
		msg := bigNested(rng, 1000+rng.IntN(40000))
		if round%2 == 1 {
			msg[rng.IntN(len(msg))] = junk[rng.IntN(len(junk))]
		}
		var cuts []int
		for k := rng.IntN(3000); k < len(msg); k += 1 + rng.IntN(3000) {
			if k > 0 {
				cuts = append(cuts, k)
			}
		}
		for ti, tr := range trackers {
			whole := feed(t, tr, msg, nil)
			if ti < 2 {
				checkOracle(t, msg, whole, ti == 1)
			}
			require.Equal(t, whole, feed(t, tr, msg, cuts), "round %d tracker %d", round, ti)
			// The portable lane (where the assembly one runs) agrees.
			restore := jsonrpc.SetLaneAsm(false)
			require.Equal(t, whole, feed(t, tr, msg, nil), "round %d tracker %d, Go lane", round, ti)
			require.Equal(t, whole, feed(t, tr, msg, cuts), "round %d tracker %d, Go lane, split", round, ti)
			restore()
		}
	}
}
