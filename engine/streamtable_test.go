package engine

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// The table against a Go map as the oracle, through random puts, removes
// and gets over a small id space (so removes hit live entries and probe
// chains wrap around the table's end), across growth.
func TestStreamTableMatchesMap(t *testing.T) {
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 7))
		tab := newStreamTable()
		oracle := map[int64]int64{}
		space := int64(8 + r.IntN(400))
		for op := range 20000 {
			id := 1 + r.Int64N(space)
			switch r.IntN(3) {
			case 0:
				tab.put(id, entry{owner: int64(op)})
				oracle[id] = int64(op)
			case 1:
				e, ok := tab.remove(id)
				want, has := oracle[id]
				require.Equal(t, has, ok, "seed %d op %d: remove %d", seed, op, id)
				if ok {
					require.Equal(t, want, e.owner, "the removed entry")
				}
				delete(oracle, id)
			}
			e, ok := tab.get(id)
			want, has := oracle[id]
			require.Equal(t, has, ok, "seed %d op %d id %d", seed, op, id)
			if ok {
				require.Equal(t, want, e.owner)
			}
			require.Equal(t, len(oracle), tab.len())
		}
		for id := int64(1); id <= space; id++ {
			e, ok := tab.get(id)
			want, has := oracle[id]
			require.Equal(t, has, ok, "seed %d id %d", seed, id)
			if ok {
				require.Equal(t, want, e.owner)
			}
		}
	}
}

func TestStreamTableIDsAndZero(t *testing.T) {
	tab := newStreamTable()
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
	tab := newStreamTable()
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
	tab := newStreamTable()
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
