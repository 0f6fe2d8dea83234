package enginetest

import (
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/engine"
)

// StartFaked loads src as bench.yaml and starts an engine on it for a
// binding's benchmark or allocation test: workers workers with large
// rings, labels, and two external bindings: driver, which refuses
// streams (the test plays it, with a [Caller] or a request driver of its
// own), and name, the fake behind the binding under test; opts come last.
func StartFaked(tb testing.TB, src string, workers int, labels *engine.Labels, name string, fake engine.Binding, opts ...engine.Option) *engine.Engine {
	tb.Helper()
	cfg, err := Load("bench.yaml", src, name, "driver")
	require.NoError(tb, err)
	return Run(tb, New(tb, cfg, append([]engine.Option{engine.WithWorkers(workers), engine.WithRingCapacity(1 << 22),
		engine.WithLabels(labels), engine.WithExternal("driver", Refuse{}), engine.WithExternal(name, fake)}, opts...)...))
}

// OnWorkers runs play, for each worker count n of workers, as a parallel
// subtest of t named name/workers=n: a scenario played on one worker and
// on several.
func OnWorkers(t *testing.T, name string, workers []int, play func(t *testing.T, workers int)) {
	t.Helper()
	for _, n := range workers {
		t.Run(name+"/workers="+strconv.Itoa(n), func(t *testing.T) {
			t.Parallel()
			play(t, n)
		})
	}
}

// Exists reports whether a file is at path: a scenario's optional script.
func Exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
