package client_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/engine/telemetry"
	"github.com/sluicehq/sluice/internal/enginetest"
)

// floodEvent is a log notification of about 1 KiB, as an SSE event.
var floodEvent = "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"" +
	strings.Repeat("x", 1000) + "\"}}\n\n"

// floodUpstream is a 2025 upstream whose tools/call asks its client for
// roots/list and then writes log notifications: for "flood", 64 MiB, each
// 64 KiB with a write deadline of a second, reporting on flooded how much
// it wrote before a write could not go out; for "wave", 16 MiB, then it
// waits for the answer to its request, passes it on on answered, and ends
// the call with a result.
func floodUpstream(t *testing.T) (server string, flooded chan int, answered chan string) {
	flooded, answered = make(chan int, 1), make(chan string, 1)
	answers := make(chan string, 1)
	server = serveUpstream(t, false, func(w http.ResponseWriter, r *http.Request, msg, id string) {
		if !strings.Contains(msg, `"method":"tools/call"`) {
			if strings.Contains(msg, `"id":"ask"`) {
				answers <- msg
			}
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		_, _ = fmt.Fprint(w, "data: {\"jsonrpc\":\"2.0\",\"id\":\"ask\",\"method\":\"roots/list\"}\n\n")
		rc := http.NewResponseController(w)
		_ = rc.Flush()
		chunk := strings.Repeat(floodEvent, 64)
		flood := strings.Contains(msg, `"name":"flood"`)
		total := 16 << 20
		if flood {
			total = 64 << 20
		}
		written := 0
		for written < total {
			if flood {
				_ = rc.SetWriteDeadline(time.Now().Add(time.Second))
			}
			if _, err := fmt.Fprint(w, chunk); err != nil {
				break
			}
			if err := rc.Flush(); err != nil {
				break
			}
			written += len(chunk)
		}
		if flood {
			flooded <- written
			return
		}
		select {
		case a := <-answers:
			answered <- a
		case <-r.Context().Done():
			return
		}
		_, _ = fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"done\"}]}}\n\n", id)
	})
	return server, flooded, answered
}

// TestReversePendingBackpressure: an upstream call held open between
// input_required rounds queues what the upstream sends for the next
// round only up to a bound, past which the gateway reads no more of it
// and the upstream's writes wait; once the retry drains the queue the
// upstream goes on, and the call ends with its result.
func TestReversePendingBackpressure(t *testing.T) {
	server, flooded, answered := floodUpstream(t)
	endpoint, e := startGatewayEngine(t, server, "      versions: [2025-11-25]\n", "")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	roots := `{"roots":{}}`

	// What the upstream sends before the round ends goes down to the
	// client; from then on, what the gateway reads is queued.
	m, err := post2026Caps(ctx, endpoint, 1, "flood", "", roots)
	require.NoError(t, err)
	res, _ := m["result"].(map[string]any)
	require.Equal(t, "input_required", res["resultType"], "%v", m)
	before := enginetest.Metric(e, "client0", telemetry.StreamDataReceived)
	written := enginetest.Receive(t, flooded, "the flood's end")
	assert.Less(t, written, 64<<20, "the upstream's writes waited")
	read := enginetest.Metric(e, "client0", telemetry.StreamDataReceived) - before
	assert.Less(t, read, int64(1<<20), "the gateway read at most the bound and a window past the round (the upstream wrote %d)", written)

	m, err = post2026Caps(ctx, endpoint, 2, "wave", "", roots)
	require.NoError(t, err)
	res, _ = m["result"].(map[string]any)
	require.Equal(t, "input_required", res["resultType"], "%v", m)
	state, _ := res["requestState"].(string)
	m, err = post2026Caps(ctx, endpoint, 3, "wave", `,"inputResponses":{"ask":{"roots":[]}},"requestState":"`+state+`"`, roots)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"content": []any{map[string]any{"type": "text", "text": "done"}}},
		without(m["result"], "_meta", "resultType"), "%v", m)
	assert.Contains(t, enginetest.Receive(t, answered, "the answer upstream"), `"roots":[]`)
}
