package frame_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/sluicehq/sluice/engine/frame"
)

// Each FuzzWrap target wraps arbitrary bytes as one frame type. Wrap must
// never panic; when it succeeds, the view must stay inside the input, and
// rebuilding the frame from its getters must give back exactly the bytes
// that were wrapped — so Wrap accepts only what the builder would write.

type view interface {
	Offset() int
	Limit() int
}

func checkView(t *testing.T, in []byte, v view, rebuild func(buf []byte) (int, error)) {
	t.Helper()
	if v.Offset() != 0 || v.Limit() > len(in) || v.Limit() < v.Offset() {
		t.Fatalf("view [%d,%d) outside input of %d bytes", v.Offset(), v.Limit(), len(in))
	}
	buf := make([]byte, len(in)+16)
	n, err := rebuild(buf)
	if err != nil {
		t.Fatalf("rebuild: %v", err)
	}
	if !bytes.Equal(buf[:n], in[:v.Limit()]) {
		t.Fatalf("rebuild differs:\n got %x\nwant %x", buf[:n], in[:v.Limit()])
	}
}

func copyHeader[B headerSetter[B]](b B, h headerGetter) B {
	return b.OriginID(h.OriginID()).RoutedID(h.RoutedID()).StreamID(h.StreamID()).
		Sequence(h.Sequence()).Acknowledge(h.Acknowledge()).Maximum(h.Maximum()).
		Timestamp(h.Timestamp()).TraceID(h.TraceID()).Authorization(h.Authorization())
}

var writeCorpus = flag.Bool("write-corpus", false, "write the seed corpus under testdata/fuzz")

// seeds adds a valid frame, a truncated one and an empty input. With
// -write-corpus it also stores them as the committed seed corpus, which
// go test replays on every run.
func seeds(f *testing.F, build func(buf []byte) (int, error)) {
	buf := make([]byte, 256)
	n, err := build(buf)
	if err != nil {
		f.Fatal(err)
	}
	inputs := [][]byte{buf[:n], buf[:n/2], {}}
	for i, in := range inputs {
		f.Add(in)
		if *writeCorpus {
			dir := filepath.Join("testdata", "fuzz", f.Name())
			if err := os.MkdirAll(dir, 0o755); err != nil {
				f.Fatal(err)
			}
			entry := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", in)
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("seed-%d", i)), []byte(entry), 0o644); err != nil {
				f.Fatal(err)
			}
		}
	}
}

// TestSeedCorpus checks that every frame fuzz target has its committed
// seed corpus.
func TestSeedCorpus(t *testing.T) {
	for _, name := range []string{"Begin", "Data", "End", "Abort", "Flush", "Reset", "Window", "Signal", "Challenge", "Redirect"} {
		entries, err := os.ReadDir(filepath.Join("testdata", "fuzz", "FuzzWrap"+name))
		if err != nil || len(entries) < 3 {
			t.Errorf("FuzzWrap%s: seed corpus missing (go test ./engine/frame -run Fuzz -write-corpus): %v", name, err)
		}
	}
}

func FuzzWrapBegin(f *testing.F) {
	seeds(f, func(buf []byte) (int, error) {
		var b frame.BeginBuilder
		return setHeader(b.Wrap(buf, 0, len(buf))).Affinity(1).Extension([]byte("ext")).BuildLimit()
	})
	f.Fuzz(func(t *testing.T, in []byte) {
		var v frame.Begin
		if v.Wrap(in, 0, len(in)) != nil {
			return
		}
		checkView(t, in, &v, func(buf []byte) (int, error) {
			var b frame.BeginBuilder
			return copyHeader(b.Wrap(buf, 0, len(buf)), &v).Affinity(v.Affinity()).
				RedirectedID(v.RedirectedID()).Extension(v.Extension()).BuildLimit()
		})
	})
}

func FuzzWrapData(f *testing.F) {
	seeds(f, func(buf []byte) (int, error) {
		var b frame.DataBuilder
		return setHeader(b.Wrap(buf, 0, len(buf))).BudgetID(1).Reserved(2).
			Payload([]byte("payload")).Extension([]byte("ext")).BuildLimit()
	})
	f.Fuzz(func(t *testing.T, in []byte) {
		var v frame.Data
		if v.Wrap(in, 0, len(in)) != nil {
			return
		}
		checkView(t, in, &v, func(buf []byte) (int, error) {
			var b frame.DataBuilder
			copyHeader(b.Wrap(buf, 0, len(buf)), &v).Flags(v.Flags()).BudgetID(v.BudgetID()).Reserved(v.Reserved())
			if v.HasPayload() {
				b.Payload(v.Payload())
			} else {
				b.PayloadNull()
			}
			return b.Extension(v.Extension()).BuildLimit()
		})
	})
}

func FuzzWrapEnd(f *testing.F) {
	seeds(f, func(buf []byte) (int, error) {
		var b frame.EndBuilder
		return setHeader(b.Wrap(buf, 0, len(buf))).Extension([]byte("ext")).BuildLimit()
	})
	f.Fuzz(func(t *testing.T, in []byte) {
		var v frame.End
		if v.Wrap(in, 0, len(in)) != nil {
			return
		}
		checkView(t, in, &v, func(buf []byte) (int, error) {
			var b frame.EndBuilder
			return copyHeader(b.Wrap(buf, 0, len(buf)), &v).BudgetID(v.BudgetID()).Reserved(v.Reserved()).
				Extension(v.Extension()).BuildLimit()
		})
	})
}

func FuzzWrapAbort(f *testing.F) {
	seeds(f, func(buf []byte) (int, error) {
		var b frame.AbortBuilder
		return setHeader(b.Wrap(buf, 0, len(buf))).Extension([]byte("ext")).BuildLimit()
	})
	f.Fuzz(func(t *testing.T, in []byte) {
		var v frame.Abort
		if v.Wrap(in, 0, len(in)) != nil {
			return
		}
		checkView(t, in, &v, func(buf []byte) (int, error) {
			var b frame.AbortBuilder
			return copyHeader(b.Wrap(buf, 0, len(buf)), &v).Extension(v.Extension()).BuildLimit()
		})
	})
}

func FuzzWrapFlush(f *testing.F) {
	seeds(f, func(buf []byte) (int, error) {
		var b frame.FlushBuilder
		return setHeader(b.Wrap(buf, 0, len(buf))).BudgetID(3).Extension([]byte("ext")).BuildLimit()
	})
	f.Fuzz(func(t *testing.T, in []byte) {
		var v frame.Flush
		if v.Wrap(in, 0, len(in)) != nil {
			return
		}
		checkView(t, in, &v, func(buf []byte) (int, error) {
			var b frame.FlushBuilder
			return copyHeader(b.Wrap(buf, 0, len(buf)), &v).BudgetID(v.BudgetID()).Reserved(v.Reserved()).
				Extension(v.Extension()).BuildLimit()
		})
	})
}

func FuzzWrapReset(f *testing.F) {
	seeds(f, func(buf []byte) (int, error) {
		var b frame.ResetBuilder
		return setHeader(b.Wrap(buf, 0, len(buf))).Extension([]byte("ext")).BuildLimit()
	})
	f.Fuzz(func(t *testing.T, in []byte) {
		var v frame.Reset
		if v.Wrap(in, 0, len(in)) != nil {
			return
		}
		checkView(t, in, &v, func(buf []byte) (int, error) {
			var b frame.ResetBuilder
			return copyHeader(b.Wrap(buf, 0, len(buf)), &v).Extension(v.Extension()).BuildLimit()
		})
	})
}

func FuzzWrapWindow(f *testing.F) {
	seeds(f, func(buf []byte) (int, error) {
		var b frame.WindowBuilder
		return setHeader(b.Wrap(buf, 0, len(buf))).BudgetID(1).Padding(2).Minimum(3).Capabilities(1).BuildLimit()
	})
	f.Fuzz(func(t *testing.T, in []byte) {
		var v frame.Window
		if v.Wrap(in, 0, len(in)) != nil {
			return
		}
		checkView(t, in, &v, func(buf []byte) (int, error) {
			var b frame.WindowBuilder
			return copyHeader(b.Wrap(buf, 0, len(buf)), &v).BudgetID(v.BudgetID()).Padding(v.Padding()).
				Minimum(v.Minimum()).Capabilities(v.Capabilities()).BuildLimit()
		})
	})
}

func FuzzWrapSignal(f *testing.F) {
	seeds(f, func(buf []byte) (int, error) {
		var b frame.SignalBuilder
		return setHeader(b.Wrap(buf, 0, len(buf))).CancelID(1).SignalID(2).ContextID(3).Payload([]byte("sig")).BuildLimit()
	})
	f.Fuzz(func(t *testing.T, in []byte) {
		var v frame.Signal
		if v.Wrap(in, 0, len(in)) != nil {
			return
		}
		checkView(t, in, &v, func(buf []byte) (int, error) {
			var b frame.SignalBuilder
			copyHeader(b.Wrap(buf, 0, len(buf)), &v).CancelID(v.CancelID()).SignalID(v.SignalID()).ContextID(v.ContextID())
			if v.HasPayload() {
				b.Payload(v.Payload())
			} else {
				b.PayloadNull()
			}
			return b.BuildLimit()
		})
	})
}

func FuzzWrapChallenge(f *testing.F) {
	seeds(f, func(buf []byte) (int, error) {
		var b frame.ChallengeBuilder
		return setHeader(b.Wrap(buf, 0, len(buf))).Extension([]byte("ext")).BuildLimit()
	})
	f.Fuzz(func(t *testing.T, in []byte) {
		var v frame.Challenge
		if v.Wrap(in, 0, len(in)) != nil {
			return
		}
		checkView(t, in, &v, func(buf []byte) (int, error) {
			var b frame.ChallengeBuilder
			return copyHeader(b.Wrap(buf, 0, len(buf)), &v).Extension(v.Extension()).BuildLimit()
		})
	})
}

func FuzzWrapRedirect(f *testing.F) {
	seeds(f, func(buf []byte) (int, error) {
		var b frame.RedirectBuilder
		return setHeader(b.Wrap(buf, 0, len(buf))).Affinity(9).Extension([]byte("ext")).BuildLimit()
	})
	f.Fuzz(func(t *testing.T, in []byte) {
		var v frame.Redirect
		if v.Wrap(in, 0, len(in)) != nil {
			return
		}
		checkView(t, in, &v, func(buf []byte) (int, error) {
			var b frame.RedirectBuilder
			return copyHeader(b.Wrap(buf, 0, len(buf)), &v).Affinity(v.Affinity()).Extension(v.Extension()).BuildLimit()
		})
	})
}
