package frame_test

import (
	"testing"

	"github.com/sluicehq/sluice/engine/frame"
)

var sink int64

// BenchmarkWrapData wraps a DATA frame with a 1 KiB payload and reads every
// header field, as a worker does for each frame it dispatches.
func BenchmarkWrapData(b *testing.B) {
	buf := make([]byte, 2048)
	var db frame.DataBuilder
	n, err := setHeader(db.Wrap(buf, 0, len(buf))).BudgetID(1).Reserved(1024).Payload(make([]byte, 1024)).BuildLimit()
	if err != nil {
		b.Fatal(err)
	}
	var d frame.Data
	b.ReportAllocs()
	b.SetBytes(int64(n))
	for b.Loop() {
		if err := d.Wrap(buf, 0, n); err != nil {
			b.Fatal(err)
		}
		sink += d.OriginID() + d.RoutedID() + d.StreamID() + d.Sequence() + d.Acknowledge() +
			int64(d.Maximum()) + d.Timestamp() + d.TraceID() + d.Authorization() +
			int64(d.Flags()) + d.BudgetID() + int64(d.Reserved()) + int64(d.Length()) +
			int64(len(d.Payload())) + int64(len(d.Extension()))
	}
}

// BenchmarkBuildData builds a DATA frame with a 1 KiB payload into a reused
// buffer with a reused builder.
func BenchmarkBuildData(b *testing.B) {
	buf := make([]byte, 2048)
	payload := make([]byte, 1024)
	var db frame.DataBuilder
	b.ReportAllocs()
	b.SetBytes(int64(frame.FrameSize + 17 + len(payload)))
	for b.Loop() {
		n, err := db.Wrap(buf, 0, len(buf)).OriginID(1).RoutedID(2).StreamID(3).Sequence(4).Acknowledge(5).
			Maximum(65536).Timestamp(6).TraceID(7).Authorization(0).
			Flags(3).BudgetID(1).Reserved(1024).Payload(payload).BuildLimit()
		if err != nil {
			b.Fatal(err)
		}
		sink += int64(n)
	}
}

// BenchmarkBuildDataView is BenchmarkBuildData with Build, which also
// returns the reader view of the frame.
func BenchmarkBuildDataView(b *testing.B) {
	buf := make([]byte, 2048)
	payload := make([]byte, 1024)
	var db frame.DataBuilder
	b.ReportAllocs()
	for b.Loop() {
		d, err := db.Wrap(buf, 0, len(buf)).OriginID(1).RoutedID(2).StreamID(3).Sequence(4).Acknowledge(5).
			Maximum(65536).Timestamp(6).TraceID(7).Authorization(0).
			Flags(3).BudgetID(1).Reserved(1024).Payload(payload).Build()
		if err != nil {
			b.Fatal(err)
		}
		sink += int64(d.Limit())
	}
}

// BenchmarkBuildWindow builds a WINDOW as the bindings do: timestamp and
// authorization skipped (their defaults written by the next setter), and
// minimum and capabilities left to BuildLimit.
func BenchmarkBuildWindow(b *testing.B) {
	buf := make([]byte, 256)
	var wb frame.WindowBuilder
	b.ReportAllocs()
	for b.Loop() {
		n, err := wb.Wrap(buf, 0, len(buf)).OriginID(1).RoutedID(2).StreamID(3).Sequence(4).Acknowledge(5).
			Maximum(65536).TraceID(7).BudgetID(0).Padding(0).BuildLimit()
		if err != nil {
			b.Fatal(err)
		}
		sink += int64(n)
	}
}
