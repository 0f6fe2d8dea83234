package server_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/internal/enginetest"
)

// TestSlowClientKeepsAnswer: a tool that logs more than a response may
// queue for a client that reads nothing meanwhile has its later
// notifications dropped, but never its answer: once the client reads,
// the event stream ends with the result.
func TestSlowClientKeepsAnswer(t *testing.T) {
	h := sessionHarness(t)
	buf := make([]byte, 4096)
	var b mcp.McpFlushExBuilder
	b.Wrap(buf, 0, len(buf)).TypeID(h.app.mcpType).Notification().
		Method("notifications/message").Params(`{"level":"info","data":"` + strings.Repeat("x", 3000) + `"}`)
	n, err := b.BuildLimit()
	require.NoError(t, err)
	const logged = 3200 // about 9.6 MiB of events, more than a response queues
	for range logged {
		h.app.clientReqs = append(h.app.clientReqs, buf[:n])
	}
	// An answer larger than an event: it cannot slip into the room the
	// last event kept.
	text := strings.Repeat("y", 8000)
	h.app.results = [][]byte{[]byte(`{"content":[{"type":"text","text":"` + text + `"}]}`)}
	before := h.app.answered
	h.req.stall, h.req.all = true, []byte{}
	h.req.left = 1
	h.w.Dispatch(h.req.startFn)
	until(t, h, "the tool's answer", func() bool { return h.app.answered > before })

	require.NoError(t, h.e.Execute(0, func(*engine.Worker) {
		h.req.stall = false
		h.req.grant()
	}))
	enginetest.ReceiveBy(t, h.timer, h.req.done, "the response's end")
	require.Equal(t, "200", string(h.req.status))
	events := strings.Split(strings.TrimSuffix(string(h.req.all), "\n\n"), "\n\n")
	last := events[len(events)-1]
	assert.Contains(t, last, `data: {"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"`+text+`"}]}}`,
		"the stream's last event (of %d)", len(events))
	notes := len(events) - 2 // the priming event and the answer
	assert.Less(t, notes, logged, "notifications past the queue's bound are dropped")
	assert.Greater(t, notes, logged/2, "notifications within the bound are kept")
}
