package client_test

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

	"github.com/sluicehq/sluice/engine"
)

// rawSession is an MCP client over plain HTTP: what it reads is what the
// gateway wrote, byte for byte. Its methods return errors, so that
// goroutines other than the test's can use it.
type rawSession struct {
	endpoint string
	sid      string
	client   *http.Client
}

// rawConnect opens a session for the test, deleted when the test ends.
func rawConnect(t *testing.T, endpoint string) *rawSession {
	t.Helper()
	s, err := dialRaw(endpoint)
	require.NoError(t, err)
	t.Cleanup(s.close)
	return s
}

// dialRaw opens a session: initialize, then notifications/initialized.
func dialRaw(endpoint string) (*rawSession, error) {
	s := &rawSession{endpoint: endpoint, client: &http.Client{Timeout: 60 * time.Second}}
	resp, err := s.post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if err != nil {
		return nil, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	s.sid = resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != 200 || s.sid == "" {
		return nil, fmt.Errorf("initialize: status %d, session %q", resp.StatusCode, s.sid)
	}
	resp, err = s.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	if resp.StatusCode != 202 {
		return nil, fmt.Errorf("notifications/initialized: status %d", resp.StatusCode)
	}
	return s, nil
}

func (s *rawSession) close() {
	req, _ := http.NewRequest(http.MethodDelete, s.endpoint, nil)
	req.Header.Set("Mcp-Session-Id", s.sid)
	if resp, err := s.client.Do(req); err == nil {
		resp.Body.Close()
	}
	s.client.CloseIdleConnections()
}

func (s *rawSession) post(body string) (*http.Response, error) {
	req, err := http.NewRequest(http.MethodPost, s.endpoint, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if s.sid != "" {
		req.Header.Set("Mcp-Session-Id", s.sid)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	return s.client.Do(req)
}

// do POSTs a request and returns the JSON-RPC messages of its response,
// in order: the events of an event stream, or the one JSON body.
func (s *rawSession) do(body string) ([]json.RawMessage, error) {
	resp, err := s.post(body)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return nil, fmt.Errorf("status %d", resp.StatusCode)
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return nil, err
		}
		return []json.RawMessage{b}, nil
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
	return msgs, sc.Err()
}

// call is do for the test's goroutine.
func (s *rawSession) call(t *testing.T, body string) []json.RawMessage {
	t.Helper()
	msgs, err := s.do(body)
	require.NoError(t, err)
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
					msgs := s.call(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{}}}`, 10+round, name))
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

// TestConcurrentLargeAnswers: many sessions at once each get a 1 MB answer
// through mcp server → proxy → client, twice, and every answer arrives
// whole, with the default rings and with 1 MiB rings: frames a full ring
// refuses wait in their senders' backlogs, so no call fails, hangs, or
// comes back as valid JSON with a refused DATA missing from its middle.
//
// A call that hangs fails by the client's timeout. That bound scales with
// the machine: one session's call is timed alone first, and the timeout
// is what all the sessions' calls take one after the other at that pace,
// four times over (at least 20 s), so that a slow or loaded machine
// delays the answers without failing them, while a call that never comes
// still fails.
func TestConcurrentLargeAnswers(t *testing.T) {
	big := strings.Repeat("0123456789", 100_000)
	server := tinyUpstream(t, false, func(w http.ResponseWriter, _, id string, _ int) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"%s"}]}}`, id, big)
	})
	calibrate := startGatewayVia(t, server, "      versions: [2025-11-25]\n", "prefix: never")
	start := time.Now()
	o := largeAnswers(calibrate, 1, big, time.Minute)
	require.Empty(t, o.bad, "one session alone")
	perCall := time.Since(start) / 2
	for _, tc := range []struct {
		name     string
		sessions int
		opts     []engine.Option
	}{
		{"default rings", 200, nil},
		{"1 MiB rings", 100, []engine.Option{engine.WithRingCapacity(1 << 20)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if raceEnabled {
				tc.sessions /= 5 // the race detector's tenfold cost: the same checks, less load
			}
			timeout := max(20*time.Second, 4*time.Duration(2*tc.sessions)*perCall).Round(time.Second)
			endpoint := startGatewayVia(t, server, fmt.Sprintf("      versions: [2025-11-25]\n      timeout: %s\n", timeout), "prefix: never", tc.opts...)
			total := largeAnswers(endpoint, tc.sessions, big, timeout)
			require.Empty(t, total.bad, "calls not answered whole (timeout %s)", timeout)
			assert.Equal(t, 2*tc.sessions, total.whole)
		})
	}
}

// largeOutcome counts the whole answers of largeAnswers and describes the
// others.
type largeOutcome struct {
	whole int
	bad   []string
}

// largeAnswers runs sessions sessions at once, each calling tool t twice,
// and checks that each answer's text is want; callTimeout is the
// gateway's.
func largeAnswers(endpoint string, sessions int, want string, callTimeout time.Duration) largeOutcome {
	results := make(chan largeOutcome, sessions)
	for range sessions {
		go func() {
			var o largeOutcome
			defer func() { results <- o }()
			s, err := dialRaw(endpoint)
			if err != nil {
				o.bad = append(o.bad, "connect: "+err.Error())
				return
			}
			defer s.close()
			// The gateway's timeout answers a call that hangs; this one
			// only bounds a gateway that would not answer even then.
			s.client.Timeout = 2 * callTimeout
			for round := range 2 {
				msgs, err := s.do(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"t","arguments":{}}}`, 10+round))
				var v struct {
					Result struct {
						Content []struct{ Text string } `json:"content"`
					} `json:"result"`
					Error *struct{ Message string } `json:"error"`
				}
				switch {
				case err != nil:
					o.bad = append(o.bad, err.Error())
				case len(msgs) != 1 || json.Unmarshal(msgs[0], &v) != nil:
					o.bad = append(o.bad, fmt.Sprintf("%d messages: %.100s", len(msgs), msgs))
				case len(v.Result.Content) == 1 && v.Result.Content[0].Text == want:
					o.whole++
				default:
					o.bad = append(o.bad, fmt.Sprintf("answer of %d bytes, error %+v", len(msgs[0]), v.Error))
				}
			}
		}()
	}
	var total largeOutcome
	for range sessions {
		o := <-results
		total.whole += o.whole
		total.bad = append(total.bad, o.bad...)
	}
	return total
}
