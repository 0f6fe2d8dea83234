package engine

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// The table against a Go map as the oracle, through random puts, removes
// and gets, across the hash table's growth. The ids come from a small
// space (so removes hit live entries and probe chains wrap around the
// table's end), in four shapes: the worker's own ids, which go to the
// direct slots; ids that share direct slots (k·directSlots apart), so that
// later ones spill to the hash table while earlier ones live and take the
// slot back once it is free; ids of other workers mixed in; and a table
// with no direct slots at all.
func TestStreamTableMatchesMap(t *testing.T) {
	other := int64(1) << clientShift
	shapes := []struct {
		name  string
		local int
		id    func(r *rand.Rand, space int64) int64
	}{
		{"own", 0, func(r *rand.Rand, space int64) int64 { return 1 + r.Int64N(space) }},
		{"shared slots", 0, func(r *rand.Rand, space int64) int64 {
			return 1 + r.Int64N(8) + r.Int64N(space/8+1)*directSlots
		}},
		{"other workers", 0, func(r *rand.Rand, space int64) int64 {
			id := 1 + r.Int64N(space)
			if r.IntN(2) == 0 {
				id |= other
			}
			return id
		}},
		{"hash only", -1, func(r *rand.Rand, space int64) int64 { return 1 + r.Int64N(space) }},
	}
	for _, shape := range shapes {
		for seed := range uint64(12) {
			r := rand.New(rand.NewPCG(seed, 7))
			tab := newStreamTable(shape.local)
			oracle := map[int64]int64{}
			var seen []int64
			space := int64(8 + r.IntN(400))
			for op := range 20000 {
				id := shape.id(r, space)
				seen = append(seen, id)
				switch r.IntN(3) {
				case 0:
					tab.put(id, entry{owner: int64(op)})
					oracle[id] = int64(op)
				case 1:
					e, ok := tab.remove(id)
					want, has := oracle[id]
					require.Equal(t, has, ok, "%s seed %d op %d: remove %#x", shape.name, seed, op, id)
					if ok {
						require.Equal(t, want, e.owner, "the removed entry")
					}
					delete(oracle, id)
				}
				e, ok := tab.get(id)
				want, has := oracle[id]
				require.Equal(t, has, ok, "%s seed %d op %d id %#x", shape.name, seed, op, id)
				if ok {
					require.Equal(t, want, e.owner)
				}
				require.Equal(t, len(oracle), tab.len())
			}
			for _, id := range seen {
				e, ok := tab.get(id)
				want, has := oracle[id]
				require.Equal(t, has, ok, "%s seed %d id %#x", shape.name, seed, id)
				if ok {
					require.Equal(t, want, e.owner)
				}
			}
			var owned []int64
			for _, owner := range []int64{0, 1, 2} {
				owned = append(owned, tab.ids(nil, owner)...)
			}
			for id, owner := range oracle {
				if owner <= 2 {
					require.Contains(t, owned, id)
				}
			}
		}
	}
}

// A worker's own ids are one load away: consecutive streams take
// consecutive direct slots, and only an id whose slot a live stream of an
// earlier lap holds goes to the hash table, and leaves it when taken.
func TestStreamTableDirectSlots(t *testing.T) {
	tab := newStreamTable(0)
	for id := int64(2); id < 2+64; id++ {
		tab.put(id, entry{owner: id})
	}
	require.Equal(t, 0, tab.hash.n, "own ids stay out of the hash table")
	require.Equal(t, int64(5), tab.direct[5].id)
	tab.put(5+directSlots, entry{owner: 7}) // slot 5 is taken
	require.Equal(t, 1, tab.hash.n)
	require.Equal(t, 1, tab.spilled)
	e, ok := tab.get(5 + directSlots)
	require.True(t, ok)
	require.Equal(t, int64(7), e.owner)
	e, begun, ok := tab.take(5 + directSlots)
	require.True(t, ok)
	require.True(t, begun, "an initial id's entry has begun")
	require.Equal(t, int64(7), e.owner)
	require.Equal(t, 0, tab.spilled)
	require.Equal(t, 64, tab.len())
	// A spilled id re-put after its slot freed stays where it is.
	tab.put(9+directSlots, entry{owner: 1})
	tab.remove(9)
	tab.put(9+directSlots, entry{owner: 2})
	require.Equal(t, int64(0), tab.direct[9].id, "no second copy in the direct slot")
	e, _ = tab.get(9 + directSlots)
	require.Equal(t, int64(2), e.owner)
	_, _, ok = tab.take(9 + directSlots)
	require.True(t, ok)
	_, ok = tab.get(9 + directSlots)
	require.False(t, ok)
}

func TestStreamTableIDsAndZero(t *testing.T) {
	tab := newStreamTable(0)
	tab.put(0, entry{owner: 1}) // the system stream is never stored
	_, ok := tab.get(0)
	require.False(t, ok)
	owned := 0
	for id := int64(3); id < 3+2*500; id += 2 {
		tab.put(id, entry{owner: id % 3})
		if id%3 == 1 {
			owned++
		}
	}
	require.Equal(t, 500, tab.len())
	ids := tab.ids(nil, 1)
	require.Len(t, ids, owned)
	for _, id := range ids {
		require.Equal(t, int64(1), id%3)
	}
}

// BenchmarkStreamTable is a worker's steady state: about a thousand open
// streams, and for each new one a put, a few gets and a remove.
func BenchmarkStreamTable(b *testing.B) {
	tab := newStreamTable(0)
	var live [1024]int64
	next := int64(3)
	for i := range live {
		live[i] = next
		tab.put(next, entry{owner: 1})
		next += 2
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		k := i & 1023
		tab.remove(live[k])
		live[k] = next
		tab.put(next, entry{owner: 1})
		next += 2
		for j := range 8 {
			if _, ok := tab.get(live[(k+j*97)&1023]); !ok {
				b.Fatal("lost")
			}
		}
		i++
	}
}

func BenchmarkStreamMap(b *testing.B) {
	tab := map[int64]entry{}
	var live [1024]int64
	next := int64(3)
	for i := range live {
		live[i] = next
		tab[next] = entry{owner: 1}
		next += 2
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		k := i & 1023
		delete(tab, live[k])
		live[k] = next
		tab[next] = entry{owner: 1}
		next += 2
		for j := range 8 {
			if _, ok := tab[live[(k+j*97)&1023]]; !ok {
				b.Fatal("lost")
			}
		}
		i++
	}
}

// A reply's replied mark survives the table's growth and a re-put clears
// it; removeUnreplied takes only entries without it.
func TestStreamTableReplied(t *testing.T) {
	tab := newStreamTable(0)
	for id := int64(2); id <= 400; id += 2 {
		tab.put(id, entry{owner: id})
		if id%4 == 0 {
			tab.ref(id).replied = true
		}
	}
	require.Equal(t, 200, tab.len())
	for id := int64(2); id <= 400; id += 2 {
		tab.removeUnreplied(id)
	}
	require.Equal(t, 100, tab.len(), "only the replied half stays")
	for id := int64(2); id <= 400; id += 2 {
		_, ok := tab.get(id)
		require.Equal(t, id%4 == 0, ok, "id %d", id)
	}
	tab.put(4, entry{owner: 4})
	require.False(t, tab.ref(4).replied, "a re-put entry starts unreplied")
	tab.removeUnreplied(4)
	_, ok := tab.get(4)
	require.False(t, ok)
	require.Nil(t, tab.ref(0))
}
