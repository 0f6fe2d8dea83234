package mcpclient_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rawSession is an MCP client over plain HTTP: what it reads is what the
// gateway wrote, byte for byte.
type rawSession struct {
	t        *testing.T
	endpoint string
	sid      string
	client   *http.Client
}

func rawConnect(t *testing.T, endpoint string) *rawSession {
	t.Helper()
	s := &rawSession{t: t, endpoint: endpoint, client: &http.Client{Timeout: 20 * time.Second}}
	resp := s.post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
	s.sid = resp.Header.Get("Mcp-Session-Id")
	require.NotEmpty(t, s.sid)
	resp = s.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	resp.Body.Close()
	require.Equal(t, 202, resp.StatusCode)
	t.Cleanup(func() {
		req, _ := http.NewRequest(http.MethodDelete, endpoint, nil)
		req.Header.Set("Mcp-Session-Id", s.sid)
		if resp, err := s.client.Do(req); err == nil {
			resp.Body.Close()
		}
	})
	return s
}

func (s *rawSession) post(body string) *http.Response {
	s.t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.endpoint, strings.NewReader(body))
	require.NoError(s.t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if s.sid != "" {
		req.Header.Set("Mcp-Session-Id", s.sid)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	resp, err := s.client.Do(req)
	require.NoError(s.t, err)
	return resp
}

// call POSTs a request and returns the JSON-RPC messages of its response,
// in order: the events of an event stream, or the one JSON body.
func (s *rawSession) call(body string) []json.RawMessage {
	s.t.Helper()
	resp := s.post(body)
	defer resp.Body.Close()
	require.Equal(s.t, 200, resp.StatusCode)
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, err := io.ReadAll(resp.Body)
		require.NoError(s.t, err)
		return []json.RawMessage{b}
	}
	var msgs []json.RawMessage
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 8<<20)
	var data bytes.Buffer
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "data:"):
			data.WriteString(strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
		case line == "":
			if data.Len() > 0 {
				msgs = append(msgs, json.RawMessage(bytes.Clone(data.Bytes())))
			}
			data.Reset()
		}
	}
	require.NoError(s.t, sc.Err())
	return msgs
}

// TestLargeNotifications: a notification larger than a frame (32 KiB) on
// a tools/call's event stream reaches the client whole and in its place,
// straight through the mcp client and through a proxy: the client sends
// its params in parts and the server puts them back together. One past
// mcp.MaxNotification (1 MiB) is dropped, and the call is still answered,
// as are the notifications around it.
func TestLargeNotifications(t *testing.T) {
	for _, via := range []string{"client", "proxy"} {
		for _, size := range []int{40_000, 300_000, 1_000_000, 1_100_000} {
			t.Run(fmt.Sprintf("%s/%d", via, size), func(t *testing.T) {
				big := strings.Repeat("abcdefghij", size/10)
				params := fmt.Sprintf(`{"level":"info","data":"%s"}`, big)
				server := tinyUpstream(t, false, func(w http.ResponseWriter, _, id string, _ int) {
					w.Header().Set("Content-Type", "text/event-stream")
					fmt.Fprint(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"before\"}}\n\n")
					fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":%s}\n\n", params)
					fmt.Fprint(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"after\"}}\n\n")
					fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"ok\"}]}}\n\n", id)
				})
				var endpoint string
				name := "t"
				if via == "proxy" {
					endpoint = startGatewayVia(t, server, "      versions: [2025-11-25]\n", "prefix: always")
					name = "up__t"
				} else {
					endpoint = startGateway(t, server, "      versions: [2025-11-25]\n")
				}
				s := rawConnect(t, endpoint)
				for round := range 2 {
					msgs := s.call(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{}}}`, 10+round, name))
					var got []string
					for _, m := range msgs {
						var v struct {
							Method string          `json:"method"`
							Params json.RawMessage `json:"params"`
							Result json.RawMessage `json:"result"`
						}
						require.NoError(t, json.Unmarshal(m, &v), "every event is one whole JSON-RPC message")
						switch {
						case v.Method == "" && v.Result != nil:
							got = append(got, "result "+string(v.Result))
						case string(v.Params) == params:
							got = append(got, "big")
						case len(v.Params) > 0:
							got = append(got, v.Method+" "+string(v.Params))
						}
					}
					want := []string{`notifications/message {"level":"info","data":"before"}`}
					if size+len(params)-len(big) <= 1<<20 {
						want = append(want, "big")
					}
					want = append(want, `notifications/message {"level":"info","data":"after"}`,
						`result {"content":[{"type":"text","text":"ok"}]}`)
					assert.Equal(t, want, got, "round %d", round)
				}
			})
		}
	}
}
