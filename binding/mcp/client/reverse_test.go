package client_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/internal/enginetest"
)

// post2026 POSTs a stateless 2026-07-28 tools/call of tool to endpoint
// with extra members in its params, and returns the JSON-RPC response.
func post2026(ctx context.Context, endpoint string, id int, tool, extra string) (map[string]any, error) {
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{}%s,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}}}`, id, tool, extra)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", tool)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		// The last data line is the response.
		var last []byte
		sc := bufio.NewScanner(bytes.NewReader(raw))
		for sc.Scan() {
			if d, ok := bytes.CutPrefix(sc.Bytes(), []byte("data: ")); ok {
				last = append(last[:0], d...)
			}
		}
		raw = last
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("%w: %s", err, raw)
	}
	return m, nil
}

// TestReverseRoundExpires: a 2026-07-28 client's call to a 2025 upstream
// that asks its client something ends its round with input_required; when
// no retry comes within options.inputRequired.roundTimeout, the gateway
// answers the upstream's request -32001, cancels the call, and a late
// retry with the state gets -32602 "Invalid requestState" (expired), with
// nothing more sent upstream. The engine runs on a manual clock.
func TestReverseRoundExpires(t *testing.T) {
	clock := enginetest.NewClock()
	asked := make(chan struct{}, 1)
	gone := make(chan struct{}, 1)
	answers := make(chan string, 4)
	calls := make(chan string, 4)
	server := serveUpstream(t, false, func(w http.ResponseWriter, r *http.Request, msg, id string) {
		switch {
		case strings.Contains(msg, `"method":"tools/call"`):
			calls <- msg
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(200)
			fmt.Fprint(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"elicitation/create\",\"params\":{\"message\":\"Your name?\",\"requestedSchema\":{\"type\":\"object\"}}}\n\n")
			w.(http.Flusher).Flush()
			asked <- struct{}{}
			<-r.Context().Done() // never answers: the gateway cancels it
			gone <- struct{}{}
		default:
			if !strings.Contains(msg, `"notifications/initialized"`) {
				answers <- msg
			}
			w.WriteHeader(http.StatusAccepted)
		}
	})
	endpoint, e := startGatewayEngine(t, server, "      versions: [2025-11-25]\n      inputRequired:\n        roundTimeout: PT10S\n", "", engine.WithClock(clock.Now))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	type result struct {
		m   map[string]any
		err error
	}
	first := make(chan result, 1)
	go func() {
		m, err := post2026(ctx, endpoint, 1, "ask", "")
		first <- result{m, err}
	}()
	enginetest.Receive(t, asked, "the upstream's elicitation/create sent")
	// The round ends once the requests that come together are in, a
	// moment on the engine's clock after the first.
	var r result
	for got := false; !got; {
		clock.Tick(t, e, 10*time.Millisecond)
		select {
		case r = <-first:
			got = true
		case <-time.After(20 * time.Millisecond):
		}
	}
	require.NoError(t, r.err)
	res, _ := r.m["result"].(map[string]any)
	require.NotNil(t, res, "%v", r.m)
	assert.Equal(t, "input_required", res["resultType"])
	reqs, _ := res["inputRequests"].(map[string]any)
	assert.Equal(t, map[string]any{"7": map[string]any{"method": "elicitation/create",
		"params": map[string]any{"message": "Your name?", "requestedSchema": map[string]any{"type": "object"}}}}, reqs)
	state, _ := res["requestState"].(string)
	require.NotEmpty(t, state)

	// A moment before the round timeout nothing happens; at it, the
	// upstream's request is answered and the call cancelled.
	clock.Tick(t, e, 10*time.Second-time.Second)
	enginetest.Settle(t, e)
	select {
	case msg := <-answers:
		t.Fatalf("answered before the round timeout: %s", msg)
	default:
	}
	clock.Tick(t, e, time.Second)
	got := []string{enginetest.Receive(t, answers, "the upstream's request answered"),
		enginetest.Receive(t, answers, "the call cancelled")}
	enginetest.Receive(t, gone, "the call's stream closed")
	assert.Contains(t, strings.Join(got, "\n"), `{"jsonrpc":"2.0","id":7,"error":{"code":-32001,"message":"Request cancelled: the client did not retry in time"}}`)
	assert.Contains(t, strings.Join(got, "\n"), `"method":"notifications/cancelled","params":{"requestId":2,`)

	// The late retry is refused, and goes nowhere upstream.
	m, err := post2026(ctx, endpoint, 2, "ask", `,"inputResponses":{"7":{"action":"accept","content":{}}},"requestState":"`+state+`"`)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"code": float64(-32602), "message": "Invalid requestState", "data": map[string]any{"reason": "expired"}}, m["error"])
	enginetest.Settle(t, e)
	assert.Len(t, calls, 1, "one tools/call upstream")
	assert.Empty(t, answers)
}
