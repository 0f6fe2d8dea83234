package tcp_test

import (
	"io"
	"strconv"
	"testing"
)

// BenchmarkEchoRoundTrip writes a message through a tcp server to the
// echo binding and reads it back, one message in flight: socket read into
// a claimed DATA, echo, socket write, and the WINDOW frames either way.
// allocs/op counts every goroutine, the workers' included.
func BenchmarkEchoRoundTrip(b *testing.B) {
	for _, size := range []int{64, 1 << 10, 16 << 10, 64 << 10} {
		b.Run("size="+strconv.Itoa(size), func(b *testing.B) {
			port := freePort(b)
			startEngine(b, echoConfig(port), engineOptions{workers: 1})
			c := dial(b, port)
			msg := pattern(size, 1)
			got := make([]byte, size)
			round := func() {
				if _, err := c.Write(msg); err != nil {
					b.Fatal(err)
				}
				if _, err := io.ReadFull(c, got); err != nil {
					b.Fatal(err)
				}
			}
			for range 100 {
				round()
			}
			b.SetBytes(int64(size))
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				round()
			}
		})
	}
}

// BenchmarkEchoStream keeps the pipe full: one goroutine writes 64 KiB
// chunks while the benchmark reads the echo back, so throughput is bound by
// the binding and the engine rather than by round trips.
func BenchmarkEchoStream(b *testing.B) {
	const chunk = 64 << 10
	port := freePort(b)
	startEngine(b, echoConfig(port), engineOptions{workers: 1})
	c := dial(b, port)
	msg := pattern(chunk, 2)
	got := make([]byte, chunk)
	b.SetBytes(chunk)
	b.ReportAllocs()
	n := b.N
	errc := make(chan error, 1)
	b.ResetTimer()
	go func() {
		for range n {
			if _, err := c.Write(msg); err != nil {
				errc <- err
				return
			}
		}
		errc <- nil
	}()
	for range n {
		if _, err := io.ReadFull(c, got); err != nil {
			b.Fatal(err)
		}
	}
	if err := <-errc; err != nil {
		b.Fatal(err)
	}
}
