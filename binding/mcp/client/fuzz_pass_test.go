package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/internal/enginetest"
)

// passMaxRounds is the server kind's inputRequired.maxRounds in
// FuzzPassRound's gateway.
const passMaxRounds = 3

// passUpstream is the 2026-07-28 upstream of FuzzPassRound: it answers
// every tools/call with result, in which %N% stands for the call's
// ordinal since next, and keeps each call's params.
type passUpstream struct {
	mu     sync.Mutex
	result []byte
	pad    bool // results go through padResult
	calls  []json.RawMessage
}

// passPad is a string member larger than a buffer slot: a result or a
// retry that carries it streams through the server kind.
var passPad = `"pad":"` + strings.Repeat("p", 40<<10) + `"`

// padResult puts passPad first in the object res, so that it streams.
func padResult(res []byte) []byte {
	rest := bytes.TrimSpace(bytes.TrimSpace(res)[1:])
	if rest[0] == '}' {
		return []byte("{" + passPad + "}")
	}
	return []byte("{" + passPad + "," + string(rest))
}

func (u *passUpstream) serve(w http.ResponseWriter, _ *http.Request, msg, id string) {
	var m struct {
		Method string
		Params json.RawMessage
	}
	_ = json.Unmarshal([]byte(msg), &m)
	switch m.Method {
	case "server/discover":
		answerDiscover(w, id)
	case "tools/list":
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"resultType":"complete","tools":[{"name":"t","inputSchema":{"type":"object"}}]}}`, id)
	case "tools/call":
		u.mu.Lock()
		u.calls = append(u.calls, m.Params)
		res := bytes.ReplaceAll(u.result, []byte("%N%"), []byte(fmt.Sprint(len(u.calls))))
		if u.pad {
			res = padResult(res)
		}
		u.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, id, res)
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}

// next sets the result the calls get from now on, and returns the params
// of the calls since the last next.
func (u *passUpstream) next(result []byte) []json.RawMessage {
	return u.nextPadded(result, false)
}

// nextPadded is next whose results go through padResult when pad is set.
func (u *passUpstream) nextPadded(result []byte, pad bool) []json.RawMessage {
	u.mu.Lock()
	defer u.mu.Unlock()
	c := u.calls
	u.result, u.pad, u.calls = result, pad, nil
	return c
}

// callsSoFar returns the params of the calls since next.
func (u *passUpstream) callsSoFar() []json.RawMessage {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]json.RawMessage(nil), u.calls...)
}

// passRig is a gateway (tcp → http → mcp server → mcp client, both ends
// at 2026-07-28 only, inputRequired.maxRounds 3, an mcp proxy between the
// kinds or not) on a clock that stands still, and its upstream.
type passRig struct {
	tool  string // the tool's name as the gateway lists it
	up    passUpstream
	e     *engine.Engine
	url   string
	base  map[string]int64
	calls int
}

func newPassRig(f testing.TB) *passRig { return newPassRigVia(f, false) }

// newPassRigVia is newPassRig with, when proxy is set, an mcp proxy
// between the server and the client kinds, whose one route prefixes the
// upstream's tools with up__.
func newPassRigVia(f testing.TB, proxy bool) *passRig {
	r := &passRig{tool: "t"}
	server := serveUpstream(f, false, r.up.serve)
	exit := "client0"
	rest := fmt.Sprintf("    options:\n      versions: [2026-07-28]\n      inputRequired: {maxRounds: %d}\n", passMaxRounds)
	if proxy {
		exit, r.tool = "proxy0", "up__t"
		rest += "  proxy0:\n    type: mcp\n    kind: proxy\n    options:\n      prefix: always\n" +
			"    routes:\n      - exit: client0\n        when:\n          - toolkit: up\n"
	}
	rest += fmt.Sprintf("  client0:\n    type: mcp\n    kind: client\n    options:\n      server: %s\n      versions: [2026-07-28]\n", server)
	r.url, r.e = enginetest.StartMCP(f, "gateway.yaml", exit, rest, engine.WithClock(enginetest.NewClock().Now))
	r.up.next([]byte(`{"content":[]}`))
	r.call(f, 0, "")
	enginetest.Settle(f, r.e)
	r.base = mcpStreams(r.e)
	return r
}

// call makes a stateless tools/call of t with the client capabilities of
// caps (capsObject's bits) and extra params members (",\"requestState\":…"
// or ""), and returns its response, which must be one JSON-RPC response
// to the call.
func (r *passRig) call(t testing.TB, caps uint8, extra string) map[string]json.RawMessage {
	t.Helper()
	m, cut := r.callCut(t, caps, extra)
	require.False(t, cut, "the response is whole")
	return m
}

// callBody is the body of a stateless tools/call of the rig's tool, id
// id, with the client capabilities of caps and extra params members.
// _meta comes first: a body too big to hold must show it in its first
// slot.
func (r *passRig) callBody(id string, caps uint8, extra string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + r.tool + `",` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + capsObject(caps) + `},` +
		`"arguments":{}` + extra + `}}`
}

// post sends body, a tools/call of the rig's tool, and returns the
// response and its body as read, with the error that cut it short.
func (r *passRig) post(t testing.TB, body string) (*http.Response, []byte, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := enginetest.NewMCPRequest(ctx, r.url, "2026-07-28", "", body, "Mcp-Method", "tools/call", "Mcp-Name", r.tool)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	return resp, out, err
}

// callCut is call that reports a response cut short (not read to its end,
// or not JSON) rather than failing.
func (r *passRig) callCut(t testing.TB, caps uint8, extra string) (map[string]json.RawMessage, bool) {
	t.Helper()
	r.calls++
	id := fmt.Sprint(100 + r.calls)
	resp, out, err := r.post(t, r.callBody(id, caps, extra))
	if err != nil {
		return nil, true
	}
	msg := out
	if resp.Header.Get("Content-Type") == "text/event-stream" {
		data := enginetest.SSEData(string(out))
		require.NotEmpty(t, data, "%.300s", out)
		msg = []byte(data[len(data)-1])
	} else {
		require.Equal(t, "application/json", resp.Header.Get("Content-Type"), "%d %.300s", resp.StatusCode, out)
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(msg, &m) != nil {
		return nil, true
	}
	require.Empty(t, enginetest.EnvelopeTwice(msg), "%.300s", msg)
	require.Equal(t, `"2.0"`, string(m["jsonrpc"]), "%.300s", msg)
	require.Equal(t, id, string(m["id"]), "the call's own response: %.300s", msg)
	_, hasResult := m["result"]
	_, hasError := m["error"]
	require.True(t, hasResult != hasError, "exactly one of result and error: %.300s", msg)
	return m, false
}

// passReading reads an upstream's result as the server kind must pass it
// to a 2026-07-28 client, with encoding/json as the oracle. ok is false
// when the result has two readings (or is not UTF-8, which parsers read
// differently), or is not an object: the call then ends with -32603, or,
// when the result streams (larger than a buffer slot, its head out before
// its end is seen), is cut short. inputRequired reports an input_required
// result, and state is its requestState's JSON text when that is a
// string.
func passReading(result []byte) (members map[string]json.RawMessage, inputRequired bool, state json.RawMessage, ok bool) {
	if !utf8.Valid(result) || json.Unmarshal(result, &members) != nil || members == nil {
		return nil, false, nil, false
	}
	twice := enginetest.NamedTwice(result)
	var typ string
	_ = json.Unmarshal(members["resultType"], &typ)
	inputRequired = typ == "input_required"
	for _, name := range twice {
		if name == "resultType" || inputRequired && (name == "requestState" || name == "inputRequests") {
			return nil, false, nil, false
		}
	}
	if s := members["requestState"]; inputRequired && len(s) > 0 && s[0] == '"' {
		state = s
	}
	return members, inputRequired, state, true
}

// FuzzPassRound has a 2026-07-28 client call, through the gateway, a tool
// of a 2026-07-28 upstream that answers every call with a fuzzed result
// (%N% standing for the call's ordinal), and retry each input_required
// result with fuzzed inputResponses and the requestState it got. Between
// the two the rounds pass through and are counted:
//   - a result with one reading reaches the client with each of its
//     members, its requestState byte for byte, and the resultType it
//     has, or "complete";
//   - one with two readings (resultType named twice, or an input_required
//     result's inputRequests or requestState) ends the call with -32603;
//   - the retry reaches the upstream with the client's inputResponses
//     and requestState, the latter byte for byte;
//   - a chain of input_required results, each retried with the state the
//     last gave, is cut with -32603 past maxRounds;
//
// and the gateway holds what it held before. Retries and results may be
// padded past a buffer slot, so that they stream (a result then has its
// response cut short where it would have ended with an error), and an mcp
// proxy may stand between the server and the client kinds.
func FuzzPassRound(f *testing.F) {
	ask := `"inputRequests":{"a":{"method":"elicitation/create","params":{"message":"?","requestedSchema":{"type":"object"}}}}`
	for _, s := range []struct {
		result, responses string
		caps              uint8
	}{
		{`{"resultType":"input_required",` + ask + `,"requestState":"s%N%"}`, `{"a":{"action":"accept","content":{}}}`, 1},
		{`{"resultType":"input_required",` + ask + `,"requestState":"same"}`, `{"a":{"action":"decline"}}`, 1},
		{`{"resultType":"input_required",` + ask + `,"requestState":"st\u00e9:\"a\/b==\n%N%"}`, `{}`, 0},
		{`{"resultType":"input_required",` + ask + `,"requestState":"\ud800%N%"}`, `{"a":{"action":"cancel"}}`, 1},
		{`{"resultType":"input_required",` + ask + `}`, `{"a":{"action":"accept","content":{"x":"\udfff"}}}`, 1},
		{`{"resultType":"input_required","requestState":"shed%N%"}`, `{}`, 0},
		{`{"resultType":"input_required",` + ask + `,"requestState":7}`, `{}`, 1},
		{`{"resultType":"input_required",` + ask + `,"requestState":"a","requestState":"b"}`, `{}`, 1},
		{`{"resultType":"input_required",` + ask + `,"inputRequests":{},"requestState":"a"}`, `{}`, 1},
		{`{"resultType":"complete","resultType":"input_required",` + ask + `,"requestState":"a"}`, `{}`, 1},
		{`{"_meta":{"k":1},"content":[{"type":"text","text":"plain"}]}`, `{}`, 0},
		{`{"_meta":7,"content":[]}`, `{}`, 0},
		{`{"resultType":"complete","content":[]}`, `{}`, 0},
		{`[1]`, `{}`, 0},
		{`"x"`, `{}`, 0},
		{`{"resultType":"input_required",` + ask + `,"requestState":"s\ud800%N%"}`, `{"a":{"action":"accept","content":{}}}`, 1 | 1<<4},
		{`{"resultType":"input_required",` + ask + `,"requestState":"s%N%"}`, `{"a":{"action":"accept","content":{}}}`, 1 | 1<<5},
		{`{"resultType":"input_required",` + ask + `,"requestState":"same"}`, `{}`, 1 | 1<<4 | 1<<5},
		{`{"resultType":"input_required",` + ask + `,"requestState":"a","requestState":"b"}`, `{}`, 1 | 1<<5},
		{`{"resultType":"input_required",` + ask + `,"inputRequests":{},"requestState":"a"}`, `{}`, 1 | 1<<5},
		{`{"content":[],"resultType":"complete","resultType":"input_required"}`, `{}`, 1 << 5},
		{` {} `, `{}`, 1 << 5},
		{`{"resultType":"input_required",` + ask + `,"requestState":"s%N%"}`, `{"a":{"action":"accept","content":{}}}`, 1 | 1<<6},
		{`{"resultType":"input_required",` + ask + `,"requestState":"s\ud800%N%"}`, `{}`, 1 | 1<<4 | 1<<5 | 1<<6},
		{`{"resultType":"complete","resultType":"input_required",` + ask + `,"requestState":"a"}`, `{}`, 1 | 1<<6},
		{`{"_meta":{"k":1},"content":[]}`, `{}`, 1 << 6},
	} {
		f.Add([]byte(s.result), []byte(s.responses), s.caps)
	}
	rigs := [2]*passRig{newPassRig(f), newPassRigVia(f, true)}
	f.Fuzz(func(t *testing.T, result, responses []byte, caps uint8) {
		// caps' high bits pad the retries (1<<4) or the results (1<<5) past
		// a buffer slot, so that they stream, and put an mcp proxy in the
		// way (1<<6).
		padRetry, padResults := caps&(1<<4) != 0, caps&(1<<5) != 0
		r := rigs[caps>>6&1]
		caps &= 0xf
		if len(result) > 8<<10 || !json.Valid(result) {
			// The upstream's message as a whole must be JSON for the
			// result to be one; FuzzGatewayUpstream covers the rest.
			return
		}
		if len(responses) > 8<<10 || !json.Valid(responses) || !utf8.Valid(responses) {
			// The server refuses a request that is not JSON, or not
			// UTF-8, as a whole (FuzzStack covers it).
			responses = []byte(`{}`)
		}
		if trimmed := bytes.TrimSpace(result); len(trimmed) == 0 || trimmed[0] != '{' || !utf8.Valid(result) {
			padResults = false
		}
		r.up.nextPadded(result, padResults)
		extra := ""
		for round := 1; round <= passMaxRounds+2; round++ {
			sent := bytes.ReplaceAll(result, []byte("%N%"), []byte(fmt.Sprint(round)))
			if padResults {
				sent = padResult(sent)
			}
			response, cut := r.callCut(t, caps, extra)
			calls := r.up.callsSoFar()
			if round > 1 {
				checkRetry(t, extra, responses, calls, round)
			}
			members, inputRequired, state, ok := passReading(sent)
			past := ok && inputRequired && round > passMaxRounds
			if padResults {
				require.Equal(t, !ok || past, cut, "a streaming result is cut short when it has two readings or is past the cap, round %d: %s", round, sent[len(passPad)+1:])
				if cut {
					break
				}
			}
			require.False(t, cut, "the response is whole: %.200s", sent)
			if !ok {
				requireError(t, response, -32603, "two readings, or no object: %s", sent)
				break
			}
			if past {
				requireError(t, response, -32603, "round %d is past the cap", round)
				require.Contains(t, string(response["error"]), "input_required rounds exceeded")
				break
			}
			checkPassed(t, members, enginetest.NamedTwice(sent), response)
			if !inputRequired || state == nil {
				break
			}
			extra = `,"inputResponses":` + string(responses) + `,"requestState":` + string(state)
			if padRetry {
				extra = `,"inputResponses":` + string(responses) + `,` + passPad + `,"requestState":` + string(state)
			}
		}
		settledStreams(t, r.e, r.base, func() int32 { return 0 })
	})
}

// requireError checks that response is the JSON-RPC error code.
func requireError(t *testing.T, response map[string]json.RawMessage, code int, msgAndArgs ...any) {
	t.Helper()
	var e struct{ Code int }
	require.NoError(t, json.Unmarshal(response["error"], &e), msgAndArgs...)
	require.Equal(t, code, e.Code, msgAndArgs...)
}

// checkPassed checks that the client got the upstream's result, whose
// members are members (twice: those it names twice): each of them,
// requestState byte for byte, _meta's members within the result's _meta,
// and resultType "complete" where the upstream set none; no other member
// named twice.
func checkPassed(t *testing.T, members map[string]json.RawMessage, twice []string, response map[string]json.RawMessage) {
	t.Helper()
	res := response["result"]
	require.NotNil(t, res, "the result passes: %s", response["error"])
	for _, name := range enginetest.NamedTwice(res) {
		require.Contains(t, twice, name, "only what the upstream named twice is: %s", res)
	}
	var got map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(res, &got))
	for name, v := range members {
		switch name {
		case "_meta":
			var want map[string]json.RawMessage
			if json.Unmarshal(v, &want) == nil {
				var have map[string]json.RawMessage
				require.NoError(t, json.Unmarshal(got["_meta"], &have), "%s", res)
				for k, w := range want {
					require.JSONEq(t, string(w), string(have[k]), "_meta's %q: %s", k, res)
				}
			}
		case "requestState":
			require.Equal(t, string(v), string(got[name]), "the requestState byte for byte: %s", res)
		default:
			require.JSONEq(t, string(v), string(got[name]), "member %q: %s", name, res)
		}
	}
	if _, has := members["resultType"]; !has {
		require.Equal(t, `"complete"`, string(got["resultType"]), "%s", res)
	}
}

// checkRetry checks that the retry of round, made with the params members
// extra, reached the upstream as the client made it: its inputResponses
// (responses) and its requestState byte for byte. It may instead have been
// refused (-32602) without reaching it.
func checkRetry(t *testing.T, extra string, responses []byte, calls []json.RawMessage, round int) {
	t.Helper()
	require.Len(t, calls, round, "each call reaches the upstream once")
	var got map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(calls[round-1], &got), "%s", calls[round-1])
	require.JSONEq(t, string(responses), string(got["inputResponses"]), "the retry's inputResponses: %s", calls[round-1])
	state := extra[strings.Index(extra, `,"requestState":`)+len(`,"requestState":`):]
	require.Equal(t, state, string(got["requestState"]), "the retry's requestState byte for byte: %s", calls[round-1])
}
