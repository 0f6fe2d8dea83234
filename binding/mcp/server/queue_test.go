package server_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/internal/enginetest"
)

// logged is how many log notifications of about 3 KiB the tools below
// send: about 9.6 MiB of events, more than a response queues.
const logged = 3200

// logFlushes returns logged FLUSH extensions of a log notification.
func logFlushes(t *testing.T, h *harness) [][]byte {
	t.Helper()
	buf := make([]byte, 4096)
	var b mcp.McpFlushExBuilder
	b.Wrap(buf, 0, len(buf)).TypeID(h.app.mcpType).Notification().
		Method("notifications/message").Params(`{"level":"info","data":"` + strings.Repeat("x", 3000) + `"}`)
	n, err := b.BuildLimit()
	require.NoError(t, err)
	exts := make([][]byte, logged)
	for i := range exts {
		exts[i] = buf[:n]
	}
	return exts
}

// bigText is the text of an answer larger than a log event, which could
// not slip into the room the last event kept.
var bigText = strings.Repeat("y", 8000)

// bigAnswer is the tools/call 42's answer with bigText, as an event's data.
const bigAnswer = `{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"`

// unstall lets r's response flow again, on the worker.
func unstall(t *testing.T, h *harness, r *httpRequest) {
	t.Helper()
	require.NoError(t, h.e.Execute(0, func(*engine.Worker) {
		r.stall = false
		r.grant()
	}))
}

// queued is the gauge of the bytes the worker's responses hold beyond
// their slots.
func queued(h *harness) int64 { return enginetest.Metric(h.e, "net0", "mcp.server.queued") }

// countLogs counts the log notifications in an event stream.
func countLogs(stream []byte) int {
	return strings.Count(string(stream), `"method":"notifications/message"`)
}

// TestSlowClientKeepsAnswer: a tool that logs more than a response may
// queue for a client that reads nothing meanwhile has its later
// notifications dropped, but never its answer: once the client reads,
// the event stream ends with the result.
func TestSlowClientKeepsAnswer(t *testing.T) {
	h := sessionHarness(t)
	h.app.clientReqs = logFlushes(t, h)
	h.app.results = [][]byte{[]byte(`{"content":[{"type":"text","text":"` + bigText + `"}]}`)}
	before := h.app.answered
	h.req.stall, h.req.all = true, []byte{}
	h.req.left = 1
	h.w.Dispatch(h.req.startFn)
	until(t, h, "the tool's answer", func() bool { return h.app.answered > before })
	until(t, h, "the queue past its slot, near its bound", func() bool { return queued(h) > 7<<20 })

	unstall(t, h, h.req)
	enginetest.ReceiveBy(t, h.timer, h.req.done, "the response's end")
	require.Equal(t, "200", string(h.req.status))
	assert.Zero(t, queued(h), "the queue gave its buffer back")
	events := strings.Split(strings.TrimSuffix(string(h.req.all), "\n\n"), "\n\n")
	assert.Contains(t, events[len(events)-1], "data: "+bigAnswer+bigText+`"}]}}`, "the stream's last event (of %d)", len(events))
	notes := countLogs(h.req.all)
	assert.Less(t, notes, logged, "notifications past the queue's bound are dropped")
	assert.Greater(t, notes, logged/2, "notifications within the bound are kept")
	assert.EqualValues(t, logged-notes, enginetest.Metric(h.e, "net0", "mcp.server.events.dropped"), "each drop is counted")
}

// TestResumedStreamKeepsAnswer: a GET stream that resumed a call's event
// stream, read by nobody while the tool logs more than it may queue, has
// the logs dropped, never the call's answer.
func TestResumedStreamKeepsAnswer(t *testing.T) {
	h := newHarness(t)
	initSession(t, h, `{"elicitation":{}}`)
	h.app.clientReqs = [][]byte{clientRequestExt(t, h.app.mcpType, "7", "elicitation/create", `{"message":"Name?"}`)}
	h.app.hold = true
	h.app.after = logFlushes(t, h)
	h.app.results = [][]byte{[]byte(`{"content":[{"type":"text","text":"` + bigText + `"}]}`)}
	startCall(t, h, benchBody, `"s2c-1"`)
	h.w.Dispatch(h.req.leave)
	enginetest.Settle(t, h.e)

	get := resume(t, h, "42:1", true)
	enginetest.Settle(t, h.e)
	before := h.app.answered
	answer(t, h, `{"jsonrpc":"2.0","id":"s2c-1","result":{"action":"accept","content":{"name":"n"}}}`)
	until(t, h, "the tool's answer", func() bool { return h.app.answered > before })

	unstall(t, h, get)
	until(t, h, "the answer on the GET stream", func() bool {
		return strings.Contains(string(get.all), bigAnswer+bigText)
	})
	notes := countLogs(get.all)
	assert.Less(t, notes, logged, "notifications past the queue's bound are dropped")
	assert.Greater(t, notes, logged/2, "notifications within the bound are kept")
}

// TestSlowClientsWorkerBound: many clients that read slowly cannot make
// a worker queue maxQueue for each: past the worker's bound for events
// (64 MiB), each response keeps its slots and its answer, and its later
// notifications are dropped.
func TestSlowClientsWorkerBound(t *testing.T) {
	const clients = 9 // 9 × 8 MiB is past the worker's 64 MiB
	h := sessionHarness(t)
	h.app.clientReqs = logFlushes(t, h)
	before := h.app.answered
	var reqs []*httpRequest
	for i := range clients {
		h.app.results = append(h.app.results, []byte(`{"content":[{"type":"text","text":"`+bigText+`"}]}`))
		r := h.second()
		r.set(t, benchHeaders, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`, 100+i))
		r.stall, r.all = true, []byte{}
		r.left = 1
		h.w.Dispatch(r.startFn)
		reqs = append(reqs, r)
		// One at a time: the application's FLUSHes of one answer fill a
		// good part of the worker's ring.
		until(t, h, "the tool's answer", func() bool { return h.app.answered == before+i+1 })
	}
	until(t, h, "the worker's bound reached", func() bool { return queued(h) > 56<<20 })
	assert.LessOrEqual(t, queued(h), int64(64<<20+clients*(128<<10)), "the worker's bound, and the answers")

	total := 0
	for i, r := range reqs {
		unstall(t, h, r)
		enginetest.ReceiveBy(t, h.timer, r.done, fmt.Sprintf("response %d's end", i))
		want := fmt.Sprintf(`data: {"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"%s"}]}}`, 100+i, bigText)
		assert.True(t, strings.HasSuffix(string(r.all), want+"\n\n"), "response %d ends with its answer", i)
		total += len(r.all)
	}
	assert.Less(t, total, 64<<20+clients*(128<<10), "what the worker held for the clients")
	assert.Zero(t, queued(h), "the queues gave their buffers back")
}

// TestSlowClientKeepsRequest: a request to the client that comes after
// more logs than a response may queue, to a client that reads nothing
// meanwhile, is not dropped with the logs: the client finds it once it
// reads, and its answer gets the tool's.
func TestSlowClientKeepsRequest(t *testing.T) {
	h := newHarness(t)
	initSession(t, h, `{"elicitation":{}}`)
	// A request larger than a log event: it cannot slip into the room the
	// last event kept.
	params := `{"message":"` + bigText[:5000] + `"}`
	h.app.clientReqs = append(logFlushes(t, h), clientRequestExt(t, h.app.mcpType, "7", "elicitation/create", params))
	h.app.hold = true
	h.req.set(t, benchHeaders, benchBody)
	h.req.stall, h.req.all = true, []byte{}
	h.req.left = 1
	h.w.Dispatch(h.req.startFn)
	until(t, h, "the tool's request to the client", func() bool { return h.app.held != nil })

	unstall(t, h, h.req)
	until(t, h, "the request on the event stream", func() bool {
		return strings.Contains(string(h.req.all), `data: {"jsonrpc":"2.0","id":"s2c-1","method":"elicitation/create","params":`+params+`}`)
	})
	answer(t, h, `{"jsonrpc":"2.0","id":"s2c-1","result":{"action":"accept","content":{"name":"n"}}}`)
	enginetest.ReceiveBy(t, h.timer, h.req.done, "the response's end")
	assert.True(t, strings.HasSuffix(string(h.req.all), `data: {"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"Echo: hi"}]}}`+"\n\n"))
	assert.Less(t, countLogs(h.req.all), logged, "notifications past the queue's bound are dropped")
}

// FuzzResponseQueue plays a tool that logs in bursts to a client that
// reads a window now and then, as plan says, and then answers: whatever
// the order, the stream ends with the answer, each log event either
// reached the client or was counted as dropped, and the queue gives its
// buffer back. The plan's first byte sizes the answer (up to 8 KiB, as
// large as a log event); then each pair of bytes is an op: a burst of logs
// (count and size), one window read, or reading switched on or off.
func FuzzResponseQueue(f *testing.F) {
	f.Add([]byte{0, 0xfc, 0xff, 2, 0, 0xfc, 0xff})
	f.Add([]byte{200, 0xfc, 0xff, 0xfc, 0xff, 0xfc, 0xff, 0xfc, 0xff, 0xfc, 0xff, 3, 0, 0x80, 0x10})
	f.Add([]byte{7, 4, 1, 2, 0, 3, 0, 4, 9, 3, 0, 2, 0})
	f.Fuzz(func(t *testing.T, plan []byte) {
		if len(plan) == 0 {
			return
		}
		h := newHarness(t)
		text := strings.Repeat("y", int(plan[0])*32)
		h.app.results = [][]byte{[]byte(`{"content":[{"type":"text","text":"` + text + `"}]}`)}
		h.req.all = []byte{}
		heldCall(t, h, `{"elicitation":{}}`, "7", "elicitation/create", `{"message":"?"}`)
		require.NoError(t, h.e.Execute(0, func(*engine.Worker) { h.req.stall = true }))

		sent, budget := 0, 24<<20
		for i := 1; i+1 < len(plan); i += 2 {
			op, arg := plan[i], plan[i+1]
			switch op & 3 {
			case 0, 1:
				size := int(op>>2) * 128
				burst := make([][]byte, 0, int(arg)+1)
				ext := logFlush(t, h, size)
				for range int(arg) + 1 {
					if budget -= size + 100; budget < 0 {
						break
					}
					burst = append(burst, ext)
				}
				sent += len(burst)
				require.NoError(t, h.e.Execute(0, func(*engine.Worker) { h.app.held.flush(burst) }))
			case 2:
				require.NoError(t, h.e.Execute(0, func(*engine.Worker) {
					h.req.stall = false
					h.req.grant()
					h.req.stall = true
				}))
			case 3:
				reading := arg&1 != 0
				require.NoError(t, h.e.Execute(0, func(*engine.Worker) {
					h.req.stall = !reading
					if reading {
						h.req.grant()
					}
				}))
			}
			enginetest.Settle(t, h.e)
			require.LessOrEqual(t, queued(h), int64(8<<20), "one response's queue")
		}
		answer(t, h, `{"jsonrpc":"2.0","id":"s2c-1","result":{"action":"accept","content":{}}}`)
		unstall(t, h, h.req)
		enginetest.ReceiveBy(t, h.timer, h.req.done, "the response's end")
		require.Equal(t, "200", string(h.req.status), "the response ended, not aborted")
		assert.True(t, strings.HasSuffix(string(h.req.all), `data: {"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"`+text+`"}]}}`+"\n\n"),
			"the stream ends with the answer")
		assert.EqualValues(t, sent, int64(countLogs(h.req.all))+enginetest.Metric(h.e, "net0", "mcp.server.events.dropped"),
			"each log reached the client or was counted dropped")
		assert.Zero(t, queued(h), "the queue gave its buffer back")
	})
}

// logFlush returns the FLUSH extension of a log notification whose data
// is size bytes.
func logFlush(t *testing.T, h *harness, size int) []byte {
	t.Helper()
	buf := make([]byte, size+256)
	var b mcp.McpFlushExBuilder
	b.Wrap(buf, 0, len(buf)).TypeID(h.app.mcpType).Notification().
		Method("notifications/message").Params(`{"level":"info","data":"` + strings.Repeat("x", size) + `"}`)
	n, err := b.BuildLimit()
	require.NoError(t, err)
	return buf[:n]
}

// TestReplayWorkerBound: the events a worker's sessions keep for replay
// stay within the worker's bound however many sessions fill their rings
// (64 events of up to 16 KiB each), and are given back as the sessions
// end.
func TestReplayWorkerBound(t *testing.T) {
	const sessions = 72 // 72 rings of about 1 MiB are past the worker's 64 MiB
	h := newHarness(t)
	h.app.clientReqs = make([][]byte, 64)
	for i := range h.app.clientReqs {
		h.app.clientReqs[i] = logFlush(t, h, 15000)
	}
	replay := func() int64 { return enginetest.Metric(h.e, "net0", "mcp.server.replay") }
	headers := func(method, sid string) [][2]string {
		return [][2]string{{":scheme", "http"}, {":method", method}, {":path", "/mcp"}, {":authority", "localhost:8080"},
			{"content-type", "application/json"}, {"accept", "application/json, text/event-stream"},
			{"mcp-session-id", sid}, {"mcp-protocol-version", "2025-11-25"}}
	}
	for i := 1; i <= sessions; i++ {
		h.req.set(t, postHeaders, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}`)
		h.request(t)
		require.Equal(t, fmt.Sprintf("session-%d", i), string(h.req.session))
		h.req.set(t, headers("POST", string(h.req.session)), benchBody)
		h.request(t)
		require.Equal(t, "200", string(h.req.status))
	}
	held := replay()
	assert.LessOrEqual(t, held, int64(64<<20), "the worker's bound")
	assert.Greater(t, held, int64(60<<20), "the bound was reached")

	for i := 1; i <= sessions; i++ {
		h.req.set(t, headers("DELETE", fmt.Sprintf("session-%d", i)), "")
		h.request(t)
	}
	assert.Zero(t, replay(), "the ended sessions gave their events back")
}

// TestGetStreamKeepsRequest: on a GET stream read by nobody while the
// session's notifications flood it, a request to the client that comes
// after them is not dropped with them: the client finds it once it reads.
func TestGetStreamKeepsRequest(t *testing.T) {
	h := newHarness(t)
	initSession(t, h, `{"roots":{}}`)
	get := resume(t, h, "", true)
	until(t, h, "the GET stream's response", func() bool { return string(get.status) == "200" })
	params := `{"x":"` + bigText[:5000] + `"}`
	flood := append(logFlushes(t, h), clientRequestExt(t, h.app.mcpType, "7", "roots/list", params))
	for i := 0; i < len(flood); i += 64 {
		burst := flood[i:min(i+64, len(flood))]
		require.NoError(t, h.e.Execute(0, func(*engine.Worker) { h.app.lifecycle.flush(burst) }))
		enginetest.Settle(t, h.e)
	}
	until(t, h, "the queue near its bound", func() bool { return queued(h) > 7<<20 })

	unstall(t, h, get)
	until(t, h, "the request on the GET stream", func() bool {
		return strings.Contains(string(get.all), `"id":"s2c-1","method":"roots/list","params":`+params)
	})
	assert.Less(t, countLogs(get.all), logged, "notifications past the queue's bound are dropped")
}
