package jsonrpc

import (
	"math/rand/v2"
	"testing"
)

// TestLaneAMD64MatchesLane runs the assembly lane and the Go lane from
// the same states over random JSON-ish bytes (whole tokens and damaged
// ones, whitespace, long strings) and requires the same exit, position,
// depth, array flag and nesting stack from both.
func TestLaneAMD64MatchesLane(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	tokens := []string{
		`"a"`, `"key"`, `"` + string(make([]byte, 0)) + `"`, `"with \"escape\""`, "\"ctl\x01\"", `"é"`,
		`:`, `,`, `{`, `}`, `[`, `]`, `true`, `false`, `null`, `tru`, `nul`, `fals`, `fal`,
		`0`, `-1`, `123`, `01`, `-`, `-0`, `1.5`, `2e3`, `7E`, ` `, "\n", "\t", "\r", `x`, `"`,
	}
	long := make([]byte, 300)
	for k := range long {
		long[k] = 'a' + byte(k%26)
	}
	var a, b Tracker
	a.SetOptions(Options{MaxDepth: 70})
	b.SetOptions(Options{MaxDepth: 70})
	for round := range 50000 {
		var p []byte
		for range 1 + rng.IntN(40) {
			if rng.IntN(30) == 0 {
				p = append(append(append(p, '"'), long[:rng.IntN(len(long))]...), '"')
				continue
			}
			p = append(p, tokens[rng.IntN(len(tokens))]...)
		}
		i := rng.IntN(len(p) + 1)
		depth := 2 + rng.IntN(10) // within the first stack word, or across
		if rng.IntN(3) == 0 {     // its end, and up to the limit
			depth = 60 + rng.IntN(11)
		}
		arr := rng.IntN(2) == 0
		s0, s1 := rng.Uint64(), rng.Uint64()
		a.stack[0], a.stack[1], b.stack[0], b.stack[1] = s0, s1, s0, s1
		a.win.n, b.win.n = 0, 0
		if rng.IntN(8) != 0 { // mostly with masks from some point before i
			from := rng.IntN(i + 1)
			a.win.fill(p, from, a.hi)
			b.win.fill(p, from, b.hi)
		}
		gi, gd, ga, gx := a.lane(p, i, depth, arr)
		ai, ad, aa, ax := laneAMD64(p, i, depth, arr, &b.stack[0], b.maxDepth, b.win.base, b.win.n, &b.win.b[0])
		if gi != ai || gd != ad || ga != aa || gx != ax || [2]uint64(a.stack[:2]) != [2]uint64(b.stack[:2]) {
			t.Fatalf("round %d: p=%q i=%d depth=%d arr=%v: Go lane (%d, %d, %v, %d) stack %x, assembly (%d, %d, %v, %d) stack %x",
				round, p, i, depth, arr, gi, gd, ga, gx, a.stack[:2], ai, ad, aa, ax, b.stack[:2])
		}
	}
}
