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
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/internal/enginetest"
)

// reverseUpstream is the 2025 upstream of FuzzReverseRound. Its tools/call
// answers with an event stream that carries asks (%ID% stands for the
// call's id), then holds the stream open: once a response to one of its
// requests comes it ends the call with a result, and it lets go when the
// gateway drops the call.
type reverseUpstream struct {
	mu       sync.Mutex
	asks     []byte
	answered chan struct{} // the current call's: a response came
	written  chan struct{} // the current call's: asks is written
	answers  []string      // the responses the gateway sent, in order
	hold     bool          // the call waits for the gateway to drop it, answered or not
	stream   []byte        // what the last call's event stream carried
	open     atomic.Int32  // tools/calls not over
}

func (u *reverseUpstream) serve(w http.ResponseWriter, r *http.Request, msg, id string) {
	switch {
	case strings.Contains(msg, `"method":"tools/call"`):
		u.open.Add(1)
		defer u.open.Add(-1)
		u.mu.Lock()
		asks := bytes.ReplaceAll(u.asks, []byte("%ID%"), []byte(id))
		answered, written := u.answered, u.written
		u.stream = append(u.stream[:0], asks...)
		if u.hold {
			answered = nil
		}
		u.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		_, _ = w.Write(asks)
		w.(http.Flusher).Flush()
		select {
		case written <- struct{}{}:
		default: // a second call of the input (a retry made anew): the first's signal is enough
		}
		select {
		case <-answered:
			final := fmt.Sprintf("data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"done\"}]}}\n\n", id)
			u.mu.Lock()
			u.stream = append(append(u.stream[:0], asks...), final...)
			u.mu.Unlock()
			fmt.Fprint(w, final)
		case <-r.Context().Done():
		}
	case strings.Contains(msg, `"method":"tools/list"`):
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"t","inputSchema":{"type":"object"}}]}}`, id)
	case strings.Contains(msg, `"method":`):
		w.WriteHeader(http.StatusAccepted)
	default:
		// A response to one of the upstream's requests.
		u.mu.Lock()
		u.answers = append(u.answers, msg)
		answered := u.answered
		u.mu.Unlock()
		select {
		case answered <- struct{}{}:
		default:
		}
		w.WriteHeader(http.StatusAccepted)
	}
}

// next readies the upstream for a call whose stream carries asks, and
// returns the channel signalled once it is written.
func (u *reverseUpstream) next(asks []byte) chan struct{} {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.asks = asks
	u.answered = make(chan struct{}, 1)
	u.written = make(chan struct{}, 1)
	u.answers = nil
	return u.written
}

// sent returns what the last call's event stream carried.
func (u *reverseUpstream) sent() []byte {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]byte(nil), u.stream...)
}

// taken returns the responses the gateway sent since next.
func (u *reverseUpstream) taken() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.answers...)
}

// reverseRig is a gateway (tcp → http → mcp server → mcp client, the
// upstream at 2025-11-25 only, with or without an mcp proxy before the
// client kind) on a manual clock, and its upstream.
type reverseRig struct {
	up     reverseUpstream
	tool   string // the tool's name at the gateway
	clock  *enginetest.Clock
	e      *engine.Engine
	url    string
	client *http.Client
	calls  int
	base   map[string]int64 // mcpStreams once the rig is up
}

// roundTimeout is the rig's options.inputRequired.roundTimeout; the call
// timeout is twice as long.
const roundTimeout = 10 * time.Second

// newReverseRig starts a reverseRig; proxy puts an mcp proxy (prefix:
// always) between the server and the client kinds.
func newReverseRig(f testing.TB, proxy bool) *reverseRig {
	r := &reverseRig{clock: enginetest.NewClock(), client: &http.Client{Timeout: 10 * time.Second}, tool: "t"}
	f.Cleanup(r.client.CloseIdleConnections)
	server := serveUpstream(f, false, r.up.serve)
	proxyOptions := ""
	if proxy {
		proxyOptions, r.tool = "prefix: always", "up__t"
	}
	r.url, r.e = startGatewayEngine(f, server, fmt.Sprintf("      versions: [2025-11-25]\n      timeout: PT%dS\n      inputRequired:\n        roundTimeout: PT%dS\n",
		int(2*roundTimeout/time.Second), int(roundTimeout/time.Second)), proxyOptions, engine.WithClock(r.clock.Now))
	// Calls answered at once, on new connections, until each worker has
	// its own upstream session, before what the gateway holds is taken
	// as the base.
	for range 8 {
		r.up.next([]byte("data: {\"jsonrpc\":\"2.0\",\"id\":%ID%,\"result\":{\"content\":[]}}\n\n"))
		status, _, out := r.post(f, r.callBody(0xf, ""))
		require.Equal(f, 200, status, "%s", out)
		r.client.CloseIdleConnections()
	}
	enginetest.Settle(f, r.e)
	r.base = mcpStreams(r.e)
	return r
}

// callBody is a stateless 2026-07-28 tools/call of t with the next id,
// whose client declares the capabilities caps says (bit 0 form
// elicitation, 1 url elicitation, 2 sampling, 3 roots), extra members
// added to its params.
func (r *reverseRig) callBody(caps uint8, extra string) string {
	r.calls++
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{}%s,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":%s}}}`,
		r.calls, r.tool, extra, capsObject(caps))
}

// capsObject is the clientCapabilities object of the bits caps.
func capsObject(caps uint8) string {
	var members []string
	switch caps & 3 {
	case 1:
		members = append(members, `"elicitation":{}`)
	case 2:
		members = append(members, `"elicitation":{"url":{}}`)
	case 3:
		members = append(members, `"elicitation":{"form":{},"url":{}}`)
	}
	if caps&4 != 0 {
		members = append(members, `"sampling":{}`)
	}
	if caps&8 != 0 {
		members = append(members, `"roots":{}`)
	}
	return "{" + strings.Join(members, ",") + "}"
}

// post sends body as a stateless 2026-07-28 tools/call, and returns the
// status, Content-Type and body of the answer.
func (r *reverseRig) post(tb testing.TB, body string) (int, string, string) {
	tb.Helper()
	req, err := enginetest.NewMCPRequest(context.Background(), r.url, "2026-07-28", "", body, "Mcp-Method", "tools/call", "Mcp-Name", r.tool)
	require.NoError(tb, err)
	resp, err := r.client.Do(req)
	require.NoError(tb, err, "the gateway answers %q", body)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	require.NoError(tb, err)
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(out)
}

// answer is the gateway's answer to a POST.
type answer struct {
	status      int
	contentType string
	body        string
}

// exchange posts body and moves the clock on until it is answered: a
// round ends a moment after the upstream's first request to its client,
// and a call the upstream leaves waiting ends at the call timeout.
// written is signalled once the upstream has written its stream, when
// the call reaches it.
func (r *reverseRig) exchange(t *testing.T, body string, written <-chan struct{}) answer {
	t.Helper()
	done := make(chan answer, 1)
	go func() {
		status, ct, out := r.post(t, body)
		done <- answer{status, ct, out}
	}()
	if written != nil {
		select {
		case a := <-done:
			return a
		case <-written:
		case <-time.After(5 * time.Second):
			t.Fatalf("neither answered nor sent upstream: %s", body)
		}
	}
	for range 8 {
		r.clock.Tick(t, r.e, 10*time.Millisecond)
		select {
		case a := <-done:
			return a
		case <-time.After(15 * time.Millisecond):
		}
	}
	r.clock.Tick(t, r.e, 2*roundTimeout+time.Second)
	return enginetest.Receive(t, done, "the answer at the call timeout")
}

// reply checks that a is one JSON-RPC response to the request id, and
// returns it.
func reply(t *testing.T, a answer, id int) map[string]json.RawMessage {
	t.Helper()
	require.Equal(t, 200, a.status, "%s", a.body)
	data := a.body
	if a.contentType == "text/event-stream" {
		events := enginetest.SSEData(a.body)
		require.NotEmpty(t, events, "%s", a.body)
		data = events[len(events)-1]
	} else {
		require.Equal(t, "application/json", a.contentType)
	}
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(data), &m), "%s", data)
	require.Equal(t, `"2.0"`, string(m["jsonrpc"]), "%s", data)
	require.Equal(t, fmt.Sprint(id), string(m["id"]), "%s", data)
	_, hasResult := m["result"]
	_, hasError := m["error"]
	require.True(t, hasResult != hasError, "exactly one of result and error: %s", data)
	require.Empty(t, enginetest.EnvelopeTwice([]byte(data)), "%s", data)
	return m
}

// objectKeys returns the member names of the JSON object obj in order,
// as they decode, with each member's value.
func objectKeys(t *testing.T, obj []byte) ([]string, []json.RawMessage) {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(obj))
	tok, err := d.Token()
	require.NoError(t, err, "%s", obj)
	require.Equal(t, json.Delim('{'), tok, "an object: %s", obj)
	var keys []string
	var values []json.RawMessage
	for d.More() {
		tok, err := d.Token()
		require.NoError(t, err)
		var v json.RawMessage
		require.NoError(t, d.Decode(&v))
		keys = append(keys, tok.(string))
		values = append(values, v)
	}
	return keys, values
}

// inputRound is what an input_required result asks of the client.
type inputRound struct {
	requests map[string]json.RawMessage // by key
	state    string
}

// inputRequired checks a result that ends a round: resultType,
// inputRequests and requestState each once; every request in it named
// by one key, a request to the client of a method the client declared
// (as encoding/json reads its params), its params an object.
func inputRequired(t *testing.T, result json.RawMessage, caps uint8) (inputRound, bool) {
	t.Helper()
	if result == nil {
		return inputRound{}, false
	}
	keys, values := objectKeys(t, result)
	var typ string
	var round inputRound
	seen := map[string]bool{}
	for i, k := range keys {
		require.False(t, seen[k], "%q once in %s", k, result)
		seen[k] = true
		switch k {
		case "resultType":
			require.NoError(t, json.Unmarshal(values[i], &typ))
		case "requestState":
			require.NoError(t, json.Unmarshal(values[i], &round.state))
		case "inputRequests":
			ks, vs := objectKeys(t, values[i])
			round.requests = map[string]json.RawMessage{}
			for j, key := range ks {
				_, twice := round.requests[key]
				require.False(t, twice, "request key %q once in %s", key, result)
				round.requests[key] = vs[j]
				checkClientRequest(t, caps, vs[j])
			}
		}
	}
	if typ != "input_required" {
		return inputRound{}, false
	}
	require.NotNil(t, round.requests, "%s", result)
	require.NotEmpty(t, round.state, "%s", result)
	return round, true
}

// checkClientRequest holds req, a request to the client as the gateway
// sent it (an event, or an inputRequests entry), to the client
// capabilities caps (capsObject's bits), reading it as encoding/json
// does: a request of a known method the client declared, its params an
// object when present that names the mode once.
func checkClientRequest(t *testing.T, caps uint8, req []byte) {
	t.Helper()
	var m struct {
		Method string
		Params json.RawMessage
	}
	require.NoError(t, json.Unmarshal(req, &m), "%s", req)
	require.Empty(t, enginetest.EnvelopeTwice(req), "%s", req)
	var mode struct{ Mode string }
	if m.Params != nil {
		require.True(t, bytes.HasPrefix(m.Params, []byte("{")), "params an object: %s", req)
		require.NotContains(t, enginetest.NamedTwice(m.Params), "mode", "%s", req)
		_ = json.Unmarshal(m.Params, &mode)
	}
	switch m.Method {
	case "elicitation/create":
		if mode.Mode == "url" {
			require.NotZero(t, caps&2, "url elicitation declared: %s", req)
		} else {
			require.NotZero(t, caps&1, "form elicitation declared: %s", req)
		}
	case "sampling/createMessage":
		require.NotZero(t, caps&4, "sampling declared: %s", req)
	case "roots/list":
		require.NotZero(t, caps&8, "roots declared: %s", req)
	default:
		t.Fatalf("a request to the client: %s", req)
	}
}

// inputKey is the inputRequests key of a request with the JSON-RPC id id:
// a string id is its own key, a number's text is quoted.
func inputKey(id json.RawMessage) string {
	var s string
	if json.Unmarshal(id, &s) == nil {
		return s
	}
	return string(id)
}

// FuzzReverseRound has a 2026-07-28 client call, through the gateway, a
// tool of a 2025 upstream whose call's event stream carries fuzzed
// messages (asks; %ID% stands for the call's id upstream), requests to
// its client among them. The client declares the capabilities caps
// picks, and when the round ends with input_required it retries with
// fuzzed inputResponses and the state it was given; a fuzz bit puts an
// mcp proxy between the server and the client kinds. Every answer is one
// JSON-RPC response to its request; an input_required result names each
// request once, and only requests the client declared it takes; the
// upstream's requests are answered at most once each, each well formed,
// with the client's response for its key as the client wrote it; and
// once the round timeout has passed the gateway holds what it held
// before.
func FuzzReverseRound(f *testing.F) {
	ask := func(id, method, params string) string {
		return fmt.Sprintf("data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":%q,\"params\":%s}\n\n", id, method, params)
	}
	form := `{"message":"Name?","requestedSchema":{"type":"object"}}`
	for _, s := range []struct {
		asks, responses string
		caps            uint8
	}{
		{ask("7", "elicitation/create", form), `{"7":{"action":"accept","content":{"name":"Ada"}}}`, 1},
		{ask(`"e1"`, "elicitation/create", `{"mode":"url","url":"https://x.example/","message":"Sign in","elicitationId":"e1"}`), `{"e1":{"action":"accept"}}`, 2},
		{ask("1", "sampling/createMessage", `{"messages":[],"maxTokens":5}`) + ask("2", "roots/list", `{}`), `{"1":{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"},"2":{"roots":[]}}`, 0xf},
		{ask("7", "elicitation/create", form) + ask(`"7"`, "elicitation/create", form), `{"7":{"action":"decline"}}`, 1},
		{ask("7", "elicitation/create", form) + ask("7", "elicitation/create", form), `{"7":{"action":"cancel"}}`, 1},
		{ask("7", "elicitation/create", form), `{"7":{"action":"accept"},"7":{"action":"decline"}}`, 1},
		{ask("7", "elicitation/create", form), `{"8":{}}`, 1},
		{ask("7", "elicitation/create", form), `{"7":"accept"}`, 1},
		{ask("7", "elicitation/create", `{"mode":"url","url":"https://x.example/","message":"m"}`), `{}`, 1},
		{ask("7", "elicitation/create", `{"mode":"\u0075rl","url":"https://x.example/","message":"m"}`), `{"7":{"action":"accept"}}`, 1},
		{ask("7", "elicitation/create", `{"mode":"form","mode":"url","url":"https://x.example/","message":"m"}`), `{"7":{"action":"accept"}}`, 1},
		{ask("7", "elicitation/create", form), `{"7":{"action":"accept"}}`, 2},
		{ask("7", "elicitation/create", `{"MODE":"url","url":"https://x.example/","message":"m"}`), `{"7":{"action":"accept"}}`, 1},
		{ask("7", "elicitation/create", `5`), `{"7":{"action":"accept"}}`, 1},
		{ask("7", "roots/list", `{}`), `{"7":{"roots":[]}}`, 1},
		{ask("7", "elicitation/create", form) + "data: {\"jsonrpc\":\"2.0\",\"id\":%ID%,\"result\":{\"content\":[]}}\n\n", `{}`, 1},
		{"data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n", `{}`, 1},
		{ask("9", "ping", `{}`), `{}`, 0xf}, // no session: no client to answer it, and no wait for one

		{ask("7", "elicitation/create", form) + "data: {", `{"7":{"action":"accept"}}`, 1},
	} {
		f.Add([]byte(s.asks), []byte(s.responses), s.caps)
		f.Add([]byte(s.asks), []byte(s.responses), s.caps|16)
	}
	rigs := [2]*reverseRig{newReverseRig(f, false), newReverseRig(f, true)}
	f.Fuzz(func(t *testing.T, asks, responses []byte, caps uint8) {
		// caps' bit 4 puts an mcp proxy between the server and the
		// client kinds.
		r := rigs[caps>>4&1]
		asks, responses = asks[:min(len(asks), 4<<10)], responses[:min(len(responses), 4<<10)]
		written := r.up.next(asks)
		body := r.callBody(caps, "")
		first := reply(t, r.exchange(t, body, written), r.calls)
		round, ok := inputRequired(t, first["result"], caps)
		if ok {
			// On a new connection, which may be another worker's.
			r.client.CloseIdleConnections()
			retry := r.callBody(caps, `,"inputResponses":`+string(responses)+`,"requestState":`+mustQuote(round.state))
			a := r.exchange(t, retry, nil)
			enginetest.CheckMCPAnswer(t, []byte(retry), a.status, a.contentType, a.body)
			if a.status == 200 {
				reply(t, a, r.calls)
			}
		}
		// The round timeout drops what is still pending.
		r.clock.Tick(t, r.e, roundTimeout+time.Second)
		r.client.CloseIdleConnections()
		settledStreams(t, r.e, r.base, r.up.open.Load)

		// What the upstream's requests were answered with.
		var plain map[string]json.RawMessage
		if utf8.Valid(responses) && json.Valid(responses) && !enginetest.HasDuplicateNames(responses) {
			_ = json.Unmarshal(responses, &plain)
		}
		taken := r.up.taken()
		sent := requestsByID(r.up.sent())
		answered := map[string]int{}
		results := map[string]bool{} // by key
		for _, msg := range taken {
			var m map[string]json.RawMessage
			require.NoError(t, json.Unmarshal([]byte(msg), &m), "%s", msg)
			require.Empty(t, enginetest.EnvelopeTwice([]byte(msg)), "%s", msg)
			require.Equal(t, `"2.0"`, string(m["jsonrpc"]), "%s", msg)
			id, ok := m["id"]
			require.True(t, ok && string(id) != "null", "an id: %s", msg)
			result, hasResult := m["result"]
			_, hasError := m["error"]
			require.True(t, hasResult != hasError, "%s", msg)
			answered[string(id)]++
			require.LessOrEqual(t, answered[string(id)], sent[string(id)],
				"%s answered once for each request with that id: %q", id, taken)
			if !hasResult {
				continue
			}
			key := inputKey(id)
			_, asked := round.requests[key]
			require.True(t, asked, "a result only for a request the client was asked: %s, asked %v", msg, round.requests)
			if plain != nil {
				require.JSONEq(t, string(plain[key]), string(result), "the client's response for %q: %s", key, msg)
			}
			results[key] = true
		}
		for key := range round.requests {
			if v := plain[key]; len(v) > 0 && v[0] == '{' {
				require.True(t, results[key], "the client's response for %q goes upstream: %q", key, taken)
			}
		}
	})
}

// requestsByID counts the requests in the event stream body by their
// ids' text: each event's data lines (a "data:" field, one space after
// the colon dropped), decoded as encoding/json does, that has a method
// and an id. It reads lines as the SSE spec splits them, at CRLF, LF or
// CR.
func requestsByID(body []byte) map[string]int {
	n := map[string]int{}
	var data []string
	dispatch := func() {
		if data == nil {
			return
		}
		var m map[string]json.RawMessage
		if json.Unmarshal([]byte(strings.Join(data, "\n")), &m) == nil {
			if _, ok := m["method"]; ok && m["id"] != nil {
				n[string(m["id"])]++
			}
		}
		data = nil
	}
	text := strings.ReplaceAll(strings.ReplaceAll(string(body), "\r\n", "\n"), "\r", "\n")
	for _, line := range strings.Split(text, "\n") {
		if line == "" {
			dispatch()
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		if field == "data" {
			data = append(data, strings.TrimPrefix(value, " "))
		}
	}
	return n
}

// mustQuote is s as a JSON string.
func mustQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
