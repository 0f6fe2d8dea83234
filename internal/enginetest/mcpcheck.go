package enginetest

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/binding/mcp/jsonrpc"
)

// mcpMessage is one JSON-RPC message: its members by their exact names
// (encoding/json matches struct fields without regard to case).
type mcpMessage map[string]json.RawMessage

func (m mcpMessage) has(k string) bool { _, ok := m[k]; return ok }

// code is an error response's code, or 0.
func (m mcpMessage) code(t *testing.T) int64 {
	var e map[string]json.RawMessage
	if json.Unmarshal(m["error"], &e) != nil {
		return 0
	}
	var c int64
	require.NoError(t, json.Unmarshal(e["code"], &c), "an integer code: %s", m["error"])
	return c
}

// CheckMCPAnswer holds an MCP endpoint's answer to a POST of body (its
// status, Content-Type and body out) to what the mcp server kind's
// package doc promises, with encoding/json as the oracle:
//   - 200, 202 or 400; a 202 has no body;
//   - a JSON answer, and every event of a stream, is one JSON-RPC
//     message, the last a response with exactly one of result and error;
//   - a body that is not JSON (or not UTF-8) is 400 -32700; JSON that is
//     not an object 400 -32600; an object with an mcpMessage member twice
//     (keys compared as they decode) 400 -32600 with a null id;
//   - a response to a request carries its id as it was spelled.
func CheckMCPAnswer(t *testing.T, body []byte, status int, contentType, out string) {
	t.Helper()
	require.Contains(t, []int{200, 202, 400}, status, "status; body %q", out)
	if status == 202 {
		require.Empty(t, out, "a 202 has no body")
		return
	}
	var msgs []mcpMessage
	switch contentType {
	case "application/json":
		msgs = append(msgs, decodeMCPMessage(t, out))
	case "text/event-stream":
		require.Equal(t, 200, status)
		for _, data := range SSEData(out) {
			msgs = append(msgs, decodeMCPMessage(t, data))
		}
		require.NotEmpty(t, msgs, "a stream ends with the response: %q", out)
	default:
		t.Fatalf("Content-Type %q; body %q", contentType, out)
	}
	last := msgs[len(msgs)-1]
	require.False(t, last.has("method"), "the last message is the response: %q", out)
	code := last.code(t)
	switch {
	case !json.Valid(body) || !utf8.Valid(body):
		require.Equal(t, 400, status, out)
		require.Equal(t, int64(-32700), code, "not JSON: %q", out)
		return
	case !isJSONObject(body):
		require.Equal(t, 400, status, out)
		require.Equal(t, int64(-32600), code, "not an object: %q", out)
		return
	}
	if dup := EnvelopeTwice(body); dup != "" {
		require.Equal(t, 400, status, out)
		require.Equal(t, int64(-32600), code, "duplicate %q: %q", dup, out)
		require.Equal(t, "null", string(last["id"]), "the id is not read from a message with two readings: %q", out)
		return
	}
	var req mcpMessage
	require.NoError(t, json.Unmarshal(body, &req))
	id := req["id"]
	if req.has("method") && len(id) > 0 && (id[0] == '"' || id[0] == '-' || '0' <= id[0] && id[0] <= '9') &&
		string(last["id"]) != "null" {
		require.Equal(t, string(id), string(last["id"]), "the id as it was spelled: %q", out)
	}
}

// decodeMCPMessage reads one JSON-RPC message and checks its shape: a
// response has exactly one of result and error, an error an integer code
// and a message.
func decodeMCPMessage(t *testing.T, msg string) mcpMessage {
	t.Helper()
	require.True(t, json.Valid([]byte(msg)), "not JSON: %q", msg)
	var m mcpMessage
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

func isJSONObject(body []byte) bool {
	b := bytes.TrimLeft(body, " \t\r\n")
	return len(b) > 0 && b[0] == '{'
}

// EnvelopeTwice returns a JSON-RPC member (jsonrpc, id, method, params,
// result, error) that body, a JSON object, names twice at its top level,
// keys compared as they decode; "" when it names none twice, or is not a
// JSON object.
func EnvelopeTwice(body []byte) string {
	for _, key := range NamedTwice(body) {
		switch key {
		case "jsonrpc", "id", "method", "params", "result", "error":
			return key
		}
	}
	return ""
}

// NamedTwice returns the names that obj, a JSON object, gives more than
// one member at its top level, keys compared as they decode, in the order
// of their second use; nil when it gives none twice, or is not valid
// JSON or not an object.
func NamedTwice(obj []byte) []string {
	if !json.Valid(obj) {
		return nil
	}
	d := json.NewDecoder(bytes.NewReader(obj))
	if tok, err := d.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	seen := map[string]int{}
	var twice []string
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			return nil
		}
		key := tok.(string)
		if seen[key]++; seen[key] == 2 {
			twice = append(twice, key)
		}
		var skip json.RawMessage
		if d.Decode(&skip) != nil {
			return nil
		}
	}
	return twice
}

// SSEData splits an event stream into its events' data, skipping the
// priming event (empty data) and comments.
func SSEData(body string) []string {
	var out []string
	for _, ev := range strings.Split(body, "\n\n") {
		for _, line := range strings.Split(ev, "\n") {
			if d, ok := strings.CutPrefix(line, "data: "); ok && d != "" {
				out = append(out, d)
			}
		}
	}
	return out
}

// HeaderValue keeps the bytes of v a header value may hold, so that
// net/http sends every fuzzed header rather than refuse the request.
func HeaderValue(v string) string {
	return strings.TrimSpace(strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e {
			return -1
		}
		return r
	}, v))
}

// HasDuplicateNames reports whether the JSON text b names a member twice
// in any of its objects, or cannot be read to its end: a text encoding/json
// reads one way (the last of two members) and a scanner may read another,
// which a fuzz oracle leaves out.
func HasDuplicateNames(b []byte) bool {
	d := json.NewDecoder(bytes.NewReader(b))
	var walk func() bool
	walk = func() bool {
		tok, err := d.Token()
		if err != nil {
			return true
		}
		switch tok {
		case json.Delim('{'):
			seen := map[string]bool{}
			for d.More() {
				k, err := d.Token()
				if err != nil {
					return true
				}
				if seen[k.(string)] {
					return true
				}
				seen[k.(string)] = true
				if walk() {
					return true
				}
			}
			_, err = d.Token()
			return err != nil
		case json.Delim('['):
			for d.More() {
				if walk() {
					return true
				}
			}
			_, err = d.Token()
			return err != nil
		}
		return false
	}
	return walk()
}

// ScanPaths runs a jsonrpc.PathScanner on paths over body, fed in pieces
// of at most piece bytes, and returns body with prefix put where it found
// each string.
func ScanPaths(paths []jsonrpc.Path, body []byte, piece int, prefix string) []byte {
	var s jsonrpc.PathScanner
	s.Reset(paths)
	var out []byte
	for len(body) > 0 {
		n := min(max(piece, 1), len(body))
		last := 0
		for _, at := range s.Scan(body[:n], nil) {
			out = append(append(out, body[last:at]...), prefix...)
			last = at
		}
		out = append(out, body[last:n]...)
		body = body[n:]
	}
	return out
}
