package client_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/internal/enginetest"
)

// TestGatewaySlowClient: a tool whose upstream logs 32 MiB, far more than
// the gateway queues for a client, to a client that reads nothing until
// the upstream has written it all. The client then reads an event stream
// of whole events that ends with the tool's answer: the gateway dropped
// notifications, not the answer, and held a bounded part of the rest.
func TestGatewaySlowClient(t *testing.T) {
	wrote := make(chan int, 1)
	answer := `{"content":[{"type":"text","text":"` + strings.Repeat("y", 70000) + `"}]}`
	server := serveUpstream(t, false, func(w http.ResponseWriter, r *http.Request, msg, id string) {
		if !strings.Contains(msg, `"method":"tools/call"`) {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		rc := http.NewResponseController(w)
		chunk := strings.Repeat(floodEvent, 64)
		written := 0
		for written < 32<<20 {
			if _, err := fmt.Fprint(w, chunk); err != nil {
				return
			}
			written += len(chunk)
		}
		_ = rc.Flush()
		wrote <- written
		_, _ = fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":%s}\n\n", id, answer)
	})
	endpoint, _ := startGatewayEngine(t, server, "      versions: [2025-11-25]\n", "")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"log","arguments":{},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	req, err := enginetest.NewMCPRequest(ctx, endpoint, "2026-07-28", "", body, "Mcp-Method", "tools/call", "Mcp-Name", "log")
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	written := enginetest.Receive(t, wrote, "the upstream's last log line")

	var msgs []map[string]any
	read := 0
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		read += len(sc.Bytes()) + 1
		d, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(d), &m), "every event is a whole message")
		msgs = append(msgs, m)
	}
	require.NoError(t, sc.Err())
	require.NotEmpty(t, msgs)
	last := msgs[len(msgs)-1]
	assert.EqualValues(t, 7, last["id"], "the stream ends with the answer")
	res, _ := last["result"].(map[string]any)
	content, _ := res["content"].([]any)
	require.Len(t, content, 1, "%.200v", last)
	assert.Equal(t, strings.Repeat("y", 70000), content[0].(map[string]any)["text"])
	assert.Less(t, read, written, "the gateway dropped log lines it could not hold")
}
