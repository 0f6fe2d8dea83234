package server_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	_ "github.com/sluicehq/sluice/binding/echo"
	"github.com/sluicehq/sluice/internal/enginetest"
)

// maxFuzzBody keeps a fuzzed body inside one buffer slot, where the
// server holds it whole and reads all of it before it answers.
const maxFuzzBody = 8 << 10

// FuzzStack posts arbitrary bodies through tcp → http → mcp server →
// echo, in a 2025-11-25 session or stateless at 2026-07-28 with fuzzed
// Mcp-Method and Mcp-Name headers, and holds the server to what its
// package doc promises, with encoding/json as the oracle:
//   - every POST is answered, 200, 202 or 400, and leaves no stream or
//     buffer slot held;
//   - a body that is not JSON (or not UTF-8) is 400 -32700; JSON that is
//     not an object is 400 -32600; an object with an envelope member
//     twice (keys compared as they decode) is 400 -32600;
//   - every JSON answer, and every event of a stream, is one JSON-RPC
//     response or notification, and a response to a request carries its
//     id as it was spelled.
func FuzzStack(f *testing.F) {
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{"x":[1,2]}}}`,
		`{"jsonrpc":"2.0","id":"x","method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":-1.5e3,"method":"ping"}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
		`{"jsonrpc":"2.0","id":5,"result":{}}`,
		`{"jsonrpc":"2.0","id":1,"\u0069d":2,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":"\ud800","method":"resources/read","params":{"uri":"a:b"}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		`{"a":`,
		"{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"x\xff\"}",
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
	} {
		f.Add(false, "", "", []byte(body))
		f.Add(true, "tools/call", "echo", []byte(body))
	}

	base, e := enginetest.StartMCP(f, "stack.yaml", "app0", "\n  app0:\n    type: echo\n    kind: server\n")
	s := &stack{base: base, e: e, client: &http.Client{Timeout: 5 * time.Second}}
	f.Cleanup(s.client.CloseIdleConnections)
	sid := fuzzSession(f, s)

	f.Fuzz(func(t *testing.T, stateless bool, method, name string, body []byte) {
		body = body[:min(len(body), maxFuzzBody)]
		var hdr []string
		version := "2025-11-25"
		if stateless {
			version = "2026-07-28"
			if m := headerValue(method); m != "" {
				hdr = append(hdr, "Mcp-Method", m)
			}
			if n := headerValue(name); n != "" {
				hdr = append(hdr, "Mcp-Name", n)
			}
		} else {
			hdr = append(hdr, "Mcp-Session-Id", sid)
		}
		resp, out := s.post(t, "", version, string(body), hdr...)
		checkAnswer(t, body, resp, out)
		s.client.CloseIdleConnections()
		require.Eventually(t, s.released, 2*time.Second, time.Millisecond, "a worker still holds a buffer slot or a stream")
	})
}

// fuzzSession opens the 2025-11-25 session the fuzzed bodies go to.
func fuzzSession(tb testing.TB, s *stack) string {
	tb.Helper()
	post := func(sid, body string) *http.Response {
		req, err := http.NewRequest(http.MethodPost, s.base, strings.NewReader(body))
		require.NoError(tb, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		}
		resp, err := s.client.Do(req)
		require.NoError(tb, err)
		_, err = io.Copy(io.Discard, resp.Body)
		require.NoError(tb, err)
		resp.Body.Close()
		return resp
	}
	resp := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"fuzz","version":"1"}}}`)
	require.Equal(tb, 200, resp.StatusCode)
	sid := resp.Header.Get("Mcp-Session-Id")
	require.Equal(tb, 202, post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`).StatusCode)
	return sid
}

// headerValue keeps the bytes of v a header value may hold, so that
// net/http sends every fuzzed header rather than refuse the request.
func headerValue(v string) string {
	return strings.TrimSpace(strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e {
			return -1
		}
		return r
	}, v))
}

// envelope is one JSON-RPC message: its members by their exact names
// (encoding/json matches struct fields without regard to case).
type envelope map[string]json.RawMessage

func (m envelope) has(k string) bool { _, ok := m[k]; return ok }

// code is an error response's code, or 0.
func (m envelope) code(t *testing.T) int64 {
	var e map[string]json.RawMessage
	if json.Unmarshal(m["error"], &e) != nil {
		return 0
	}
	var c int64
	require.NoError(t, json.Unmarshal(e["code"], &c), "an integer code: %s", m["error"])
	return c
}

// checkAnswer holds the answer resp, out to a POST of body.
func checkAnswer(t *testing.T, body []byte, resp *http.Response, out string) {
	t.Helper()
	require.Contains(t, []int{200, 202, 400}, resp.StatusCode, "status; body %q", out)
	if resp.StatusCode == 202 {
		require.Empty(t, out, "a 202 has no body")
		return
	}
	var msgs []envelope
	switch ct := resp.Header.Get("Content-Type"); ct {
	case "application/json":
		msgs = append(msgs, decodeEnvelope(t, out))
	case "text/event-stream":
		require.Equal(t, 200, resp.StatusCode)
		for _, data := range sseEvents(out) {
			msgs = append(msgs, decodeEnvelope(t, data))
		}
		require.NotEmpty(t, msgs, "a stream ends with the response: %q", out)
	default:
		t.Fatalf("Content-Type %q; body %q", ct, out)
	}
	last := msgs[len(msgs)-1]
	require.False(t, last.has("method"), "the last message is the response: %q", out)
	code := last.code(t)
	switch {
	case !json.Valid(body) || !utf8.Valid(body):
		require.Equal(t, 400, resp.StatusCode, out)
		require.Equal(t, int64(-32700), code, "not JSON: %q", out)
		return
	case !isObject(body):
		require.Equal(t, 400, resp.StatusCode, out)
		require.Equal(t, int64(-32600), code, "not an object: %q", out)
		return
	}
	if dup := duplicateEnvelopeMember(t, body); dup != "" {
		require.Equal(t, 400, resp.StatusCode, out)
		require.Equal(t, int64(-32600), code, "duplicate %q: %q", dup, out)
		require.Equal(t, "null", string(last["id"]), "the id is not read from a message with two readings: %q", out)
		return
	}
	var req envelope
	require.NoError(t, json.Unmarshal(body, &req))
	id := req["id"]
	if req.has("method") && len(id) > 0 && (id[0] == '"' || id[0] == '-' || '0' <= id[0] && id[0] <= '9') &&
		string(last["id"]) != "null" {
		require.Equal(t, string(id), string(last["id"]), "the id as it was spelled: %q", out)
	}
}

// decodeEnvelope reads one JSON-RPC message and checks its shape: a
// response has exactly one of result and error, an error an integer code
// and a message.
func decodeEnvelope(t *testing.T, msg string) envelope {
	t.Helper()
	require.True(t, json.Valid([]byte(msg)), "not JSON: %q", msg)
	var m envelope
	require.NoError(t, json.Unmarshal([]byte(msg), &m), msg)
	require.Equal(t, `"2.0"`, string(m["jsonrpc"]), msg)
	if m.has("method") {
		return m
	}
	require.True(t, m.has("id"), "a response has an id: %q", msg)
	require.True(t, m.has("result") != m.has("error"), "exactly one of result and error: %q", msg)
	if m.has("error") {
		var e struct {
			Code    json.Number `json:"code"`
			Message string      `json:"message"`
		}
		require.NoError(t, json.Unmarshal(m["error"], &e), msg)
		m.code(t)
	}
	return m
}

func isObject(body []byte) bool {
	b := bytes.TrimLeft(body, " \t\r\n")
	return len(b) > 0 && b[0] == '{'
}

// duplicateEnvelopeMember returns a JSON-RPC member body names twice at
// its top level, keys compared as they decode, or "".
func duplicateEnvelopeMember(t *testing.T, body []byte) string {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(body))
	_, err := d.Token() // {
	require.NoError(t, err)
	seen := map[string]bool{}
	for d.More() {
		tok, err := d.Token()
		require.NoError(t, err)
		key := tok.(string)
		switch key {
		case "jsonrpc", "id", "method", "params", "result", "error":
			if seen[key] {
				return key
			}
			seen[key] = true
		}
		var skip json.RawMessage
		if err := d.Decode(&skip); err != nil && !errors.Is(err, io.EOF) {
			require.NoError(t, err)
		}
	}
	return ""
}
