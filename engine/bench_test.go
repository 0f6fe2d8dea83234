package engine_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/sluicehq/sluice/binding"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/config"
	"github.com/sluicehq/sluice/engine/frame"
)

// roundTrip drives streams against echo from one worker: BEGIN, WINDOW for
// the reply, then on the echo's WINDOW a 64-byte DATA and END; the reply
// END starts the next stream. All of it runs on the workers' threads.
type roundTrip struct {
	w        *engine.Worker
	routedID int64
	target   int
	left     int
	done     chan struct{}
	id       int64
	payload  []byte

	beginB  frame.BeginBuilder
	windowB frame.WindowBuilder
	dataB   frame.DataBuilder
	endB    frame.EndBuilder
	window  frame.Window
	onMsg   engine.MessageConsumer
}

func (r *roundTrip) next() {
	if r.left == 0 {
		close(r.done)
		return
	}
	r.left--
	w := r.w
	r.id = w.SupplyInitialIDOn(r.target)
	buf := w.WriteBuffer()
	n, _ := r.beginB.Wrap(buf, 0, len(buf)).OriginID(1).RoutedID(r.routedID).StreamID(r.id).
		Sequence(0).Acknowledge(0).Maximum(0).Affinity(0).BuildLimit()
	if err := w.NewStream(buf[:n], r.onMsg); err != nil {
		panic(err)
	}
	n, _ = r.windowB.Wrap(buf, 0, len(buf)).OriginID(1).RoutedID(r.routedID).StreamID(engine.ReplyID(r.id)).
		Sequence(0).Acknowledge(0).Maximum(65536).BudgetID(0).Padding(0).BuildLimit()
	if err := w.Send(frame.FrameWindow, buf[:n]); err != nil {
		panic(err)
	}
}

func (r *roundTrip) onMessage(t frame.FrameType, b []byte) {
	w := r.w
	buf := w.WriteBuffer()
	switch t {
	case frame.FrameWindow:
		if !r.window.TryWrap(b, 0, len(b)) || r.window.Maximum() < int32(len(r.payload)) {
			return
		}
		n, _ := r.dataB.Wrap(buf, 0, len(buf)).OriginID(1).RoutedID(r.routedID).StreamID(r.id).
			Sequence(0).Acknowledge(0).Maximum(r.window.Maximum()).BudgetID(0).Reserved(int32(len(r.payload))).
			Payload(r.payload).BuildLimit()
		if err := w.Send(frame.FrameData, buf[:n]); err != nil {
			panic(err)
		}
		n, _ = r.endB.Wrap(buf, 0, len(buf)).OriginID(1).RoutedID(r.routedID).StreamID(r.id).
			Sequence(int64(len(r.payload))).Acknowledge(0).Maximum(r.window.Maximum()).BuildLimit()
		if err := w.Send(frame.FrameEnd, buf[:n]); err != nil {
			panic(err)
		}
	case frame.FrameEnd:
		r.next()
	}
}

// BenchmarkRoundTrip measures one stream's BEGIN, WINDOW, DATA and END
// out and BEGIN, WINDOW, DATA and END back, across two workers.
func BenchmarkRoundTrip(b *testing.B) {
	for _, bc := range []struct {
		name    string
		workers int
		target  int
	}{{"cross-worker", 2, 1}, {"same-worker", 1, 0}} {
		for _, pin := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/pin=%v", bc.name, pin), func(b *testing.B) {
				cfg := &config.Config{Name: "bench", Bindings: []*config.Binding{{Name: "app0", Type: "echo", Kind: "server"}}}
				e, err := engine.New(cfg, engine.WithWorkers(bc.workers), engine.WithPin(pin),
					engine.WithLogger(quiet), engine.WithBindings(binding.Factory))
				if err != nil {
					b.Fatal(err)
				}
				if err := e.Start(); err != nil {
					b.Fatal(err)
				}
				defer func() { _ = e.Stop(context.Background()) }()
				routedID, _ := e.ResolveID("app0")
				r := &roundTrip{w: e.Worker(0), routedID: routedID, target: bc.target, payload: make([]byte, 64)}
				r.onMsg = r.onMessage
				b.ReportAllocs()
				b.ResetTimer()
				r.left, r.done = b.N, make(chan struct{})
				if err := e.Execute(0, func(*engine.Worker) { r.next() }); err != nil {
					b.Fatal(err)
				}
				<-r.done
				b.StopTimer()
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "streams/s")
			})
		}
	}
}
