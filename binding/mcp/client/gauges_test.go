package client_test

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/telemetry"
	"github.com/sluicehq/sluice/internal/enginetest"
)

// activeStreams sums the stream.active gauges of every binding over the
// workers, by binding and direction.
func activeStreams(e *engine.Engine) map[string]int64 {
	got := map[string]int64{}
	for _, s := range e.Telemetry().Gather() {
		if s.Name != telemetry.StreamActiveSent && s.Name != telemetry.StreamActiveReceived {
			continue
		}
		b, _ := s.Labels.Get("binding")
		got[b+" "+s.Name] += s.Value
	}
	return got
}

// TestActiveStreamsSettle runs calls through the whole gateway (tcp → http
// → mcp server → proxy → mcp client → http client → tcp) to go-sdk's
// everything-server, whose answers are event streams that the mcp client
// stops reading (RESET) once the answer has come, and checks that no
// binding's stream.active gauges grow with the calls: a direction closed
// by RESET counts as closed. The mcp kinds' gauges come back exactly to what they were after
// the session's first call; the http and tcp clients' may differ by the
// upstream connections their pool opened or closed meanwhile.
func TestActiveStreamsSettle(t *testing.T) {
	up := startUpstream(t, true, freePort(t))
	endpoint, e := startGatewayEngine(t, "http://"+up.addr+"/mcp", "      versions: [2025-11-25]\n", "prefix: never")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s := connect(t, ctx, endpoint, "2025-11-25", nil)
	defer s.Close()

	callText(t, ctx, s, "test_simple_text", nil)
	settled := func() map[string]int64 {
		// Closing frames may still be on their way between workers: read
		// the gauges after each round of passes of every worker, until
		// three rounds in a row agree.
		enginetest.Settle(t, e)
		prev, same := activeStreams(e), 0
		for range 1000 {
			enginetest.Settle(t, e)
			cur := activeStreams(e)
			if same++; !maps.Equal(prev, cur) {
				same = 0
			}
			if same == 2 {
				return cur
			}
			prev = cur
		}
		return prev
	}
	base := settled()
	const calls = 40
	for i := range calls {
		name := "test_simple_text"
		if i%10 == 9 {
			name = "test_tool_with_progress"
		}
		callText(t, ctx, s, name, nil)
	}
	after := settled()
	for k, v := range after {
		switch {
		case strings.HasPrefix(k, "mcp0 "), strings.HasPrefix(k, "proxy0 "), strings.HasPrefix(k, "client0 "):
			assert.Equal(t, base[k], v, "%s after %d calls", k, calls)
		default:
			assert.LessOrEqual(t, v, base[k]+2, "%s after %d calls (pooled connections aside)", k, calls)
		}
		assert.GreaterOrEqual(t, v, int64(0), k)
	}
	require.Positive(t, base["client0 "+telemetry.StreamActiveSent]+base["client0 "+telemetry.StreamActiveReceived],
		"the session's own streams are counted: %v", fmt.Sprint(base))
}
