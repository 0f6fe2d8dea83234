package proxy_test

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/internal/enginetest"
)

// sseEvent is one event of an event stream: its id and data.
type sseEvent struct{ id, data string }

// nextEvent reads r up to the end of the next event with data, skipping
// comments (keep-alives) and the priming event, whose data is empty.
func nextEvent(t *testing.T, r *bufio.Reader) sseEvent {
	t.Helper()
	var ev sseEvent
	for {
		line, err := r.ReadString('\n')
		require.NoError(t, err)
		line = strings.TrimRight(line, "\n")
		switch {
		case line == "":
			if ev.data != "" {
				return ev
			}
			ev = sseEvent{}
		case strings.HasPrefix(line, "id: "):
			ev.id = line[len("id: "):]
		case strings.HasPrefix(line, "data: "):
			ev.data += line[len("data: "):]
		}
	}
}

// drain empties c.
func drain(c chan struct{}) {
	for {
		select {
		case <-c:
		default:
			return
		}
	}
}

// TestGetStreamResumedAfterDrop: a client whose GET event stream drops
// comes back right away with Last-Event-ID and gets the notification it
// missed meanwhile, then the next one live. The notifications are the
// upstream go-sdk server's tools/list_changed, through the mcp client,
// the proxy and the mcp server; the GET stream's event ids are ":<n>".
func TestGetStreamResumedAfterDrop(t *testing.T) {
	up := startUpstream(t, listen(t))
	endpoint, e := gatewayEngine(t, up.addr, "", "")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	reply, err := enginetest.PostMCP(ctx, endpoint, "", "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	require.NoError(t, err)
	require.Equal(t, 200, reply.Status)
	sid := reply.Session
	require.NotEmpty(t, sid)
	initialized, err := enginetest.PostMCP(ctx, endpoint, "2025-11-25", sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	require.NoError(t, err)
	require.Equal(t, 202, initialized.Status)

	// get opens the GET stream on a connection of its own, so that
	// closing its body drops the connection.
	get := func(last string) (*http.Response, *bufio.Reader) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint, nil)
		require.NoError(t, err)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		if last != "" {
			req.Header.Set("Last-Event-ID", last)
		}
		c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
		resp, err := c.Do(req)
		require.NoError(t, err)
		return resp, bufio.NewReader(resp.Body)
	}
	addTool := func(name string) {
		sdk.AddTool(up.server, &sdk.Tool{Name: name, InputSchema: map[string]any{"type": "object"}},
			func(context.Context, *sdk.CallToolRequest, map[string]any) (*sdk.CallToolResult, any, error) {
				return &sdk.CallToolResult{}, nil, nil
			})
	}
	const changed = `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`

	first, r := get("")
	require.Equal(t, 200, first.StatusCode)
	addTool("one")
	ev := nextEvent(t, r)
	assert.JSONEq(t, changed, ev.data)
	require.Equal(t, ":1", ev.id, "the first event after the priming one")
	require.NoError(t, first.Body.Close()) // the connection drops

	// The next notification comes while no GET stream is open: once the
	// upstream has written it, the gateway's workers get a few passes to
	// carry it to the mcp server, so that the resumed stream replays it
	// (should it come later, it comes live, and the client sees the same).
	drain(up.changed)
	addTool("two")
	select {
	case <-up.changed:
	case <-ctx.Done():
		t.Fatal("the upstream sent no list_changed")
	}
	for range 3 {
		enginetest.Settle(t, e)
	}
	// The server frees the session's GET stream as soon as it sees the
	// connection close; until then a GET gets 409.
	var again *http.Response
	require.Eventually(t, func() bool {
		again, r = get(ev.id)
		if again.StatusCode == 200 {
			return true
		}
		again.Body.Close()
		return false
	}, 5*time.Second, 10*time.Millisecond, "a GET with Last-Event-ID right after the drop")
	defer again.Body.Close()
	missed := nextEvent(t, r)
	assert.JSONEq(t, changed, missed.data)
	assert.Equal(t, ":2", missed.id, "the event sent while the stream was down, replayed")
	addTool("three")
	live := nextEvent(t, r)
	assert.JSONEq(t, changed, live.data)
	assert.Equal(t, ":3", live.id, "the resumed stream goes on live")
}
