package ring_test

import (
	"errors"
	"runtime"
	"strconv"
	"sync"
	"testing"

	"github.com/sluicehq/sluice/engine/ring"
)

// benchCapacity is the data capacity of the benchmark rings: 1 MiB, room for
// 256 records of the largest payload (4 KiB), and close to a worker's ring.
const benchCapacity = 1 << 20

var benchSizes = []int{64, 1024, 4096}

// consumer is a handler as a worker would hold it: a method value made once.
type consumer struct {
	frames int
	bytes  int
	handle ring.Handler
}

func newConsumer() *consumer {
	c := &consumer{}
	c.handle = c.onRecord
	return c
}

func (c *consumer) onRecord(_ int32, payload []byte) {
	c.frames++
	c.bytes += len(payload)
}

func reportFrames(b *testing.B, frames int) {
	b.ReportMetric(float64(frames)/b.Elapsed().Seconds(), "frames/s")
}

// BenchmarkWriteRead writes from the benchmark goroutine and drains in the
// same loop, every batch records, as a worker writing to its own ring does.
// write copies the payload in (Write); claim builds the record in place
// (Claim, fill, Commit).
func BenchmarkWriteRead(b *testing.B) {
	for _, size := range benchSizes {
		b.Run("write/"+strconv.Itoa(size), func(b *testing.B) {
			r, c, payload := setupWriteRead(b, size)
			n := 0
			for b.Loop() {
				if err := r.Write(1, payload); err != nil {
					b.Fatal(err)
				}
				if n++; n == readBatch {
					r.Read(c.handle, readBatch)
					n = 0
				}
			}
			finishWriteRead(b, r, c)
		})
		b.Run("claim/"+strconv.Itoa(size), func(b *testing.B) {
			r, c, payload := setupWriteRead(b, size)
			n := 0
			for b.Loop() {
				cl, err := r.Claim(1, size)
				if err != nil {
					b.Fatal(err)
				}
				copy(cl.Buf, payload)
				r.Commit(cl)
				if n++; n == readBatch {
					r.Read(c.handle, readBatch)
					n = 0
				}
			}
			finishWriteRead(b, r, c)
		})
	}
}

// readBatch is how many records BenchmarkWriteRead writes between reads.
const readBatch = 64

func setupWriteRead(b *testing.B, size int) (*ring.Ring, *consumer, []byte) {
	r, err := ring.NewHeap(benchCapacity)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = r.Close() })
	b.SetBytes(int64(size))
	b.ReportAllocs()
	return r, newConsumer(), make([]byte, size)
}

func finishWriteRead(b *testing.B, r *ring.Ring, c *consumer) {
	r.Read(c.handle, readBatch)
	if c.frames != b.N {
		b.Fatalf("read %d frames, wrote %d", c.frames, b.N)
	}
	reportFrames(b, b.N)
}

// BenchmarkProducers runs producer goroutines against a consumer goroutine.
// A producer that finds the ring full, and a consumer that finds it empty,
// yields the processor (this machine may have fewer cores than goroutines).
func BenchmarkProducers(b *testing.B) {
	for _, producers := range []int{1, 2} {
		for _, size := range benchSizes {
			b.Run(strconv.Itoa(producers)+"p/"+strconv.Itoa(size), func(b *testing.B) {
				r, err := ring.NewHeap(benchCapacity)
				if err != nil {
					b.Fatal(err)
				}
				defer r.Close()
				c := newConsumer()
				b.SetBytes(int64(size))
				b.ReportAllocs()
				b.ResetTimer()

				var wg sync.WaitGroup
				for p := range producers {
					count := b.N / producers
					if p == 0 {
						count += b.N % producers
					}
					wg.Go(func() {
						payload := make([]byte, size)
						for i := 0; i < count; {
							if err := r.Write(int32(p+1), payload); err != nil {
								if !errors.Is(err, ring.ErrFull) {
									panic(err)
								}
								runtime.Gosched()
								continue
							}
							i++
						}
					})
				}
				for c.frames < b.N {
					if r.Read(c.handle, 256) == 0 {
						runtime.Gosched()
					}
				}
				wg.Wait()
				b.StopTimer()
				reportFrames(b, b.N)
			})
		}
	}
}
