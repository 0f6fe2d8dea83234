package atomicx_test

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/sluicehq/sluice/internal/atomicx"
)

// TestStoreReleasePublishes passes messages through one word: the writer
// fills a payload, then publishes its sequence number with StoreRelease;
// the reader, seeing a number with an atomic load, must find the payload
// the writer wrote before it. Without release ordering (a store hoisted
// above the payload's) the reader would see a stale payload.
func TestStoreReleasePublishes(t *testing.T) {
	const rounds = 200_000
	var seq, ack atomic.Int64
	var payload [8]int64
	var wg sync.WaitGroup
	wg.Add(1)
	var bad atomic.Int64
	go func() {
		defer wg.Done()
		for want := int64(1); want <= rounds; want++ {
			for seq.Load() != want {
			}
			for i := range payload {
				if payload[i] != want*int64(i+1) {
					bad.Add(1)
				}
			}
			atomicx.StoreRelease(&ack, want)
		}
	}()
	for n := int64(1); n <= rounds; n++ {
		for ack.Load() != n-1 {
		}
		for i := range payload {
			payload[i] = n * int64(i+1)
		}
		atomicx.StoreRelease(&seq, n)
	}
	wg.Wait()
	if bad.Load() != 0 {
		t.Fatalf("%d payload words read stale after their publication", bad.Load())
	}
}

// TestAddOwned: one writer's adds all land, and a concurrent reader only
// ever sees the count go up.
func TestAddOwned(t *testing.T) {
	const adds = 100_000
	var c atomic.Int64
	done := make(chan struct{})
	var backwards atomic.Bool
	go func() {
		defer close(done)
		last := int64(0)
		for last < 3*adds {
			v := c.Load()
			if v < last {
				backwards.Store(true)
				return
			}
			last = v
		}
	}()
	for range adds {
		atomicx.AddOwned(&c, 3)
	}
	<-done
	if got := c.Load(); got != 3*adds {
		t.Fatalf("count %d, want %d", got, 3*adds)
	}
	if backwards.Load() {
		t.Fatal("a reader saw the count go down")
	}
}
