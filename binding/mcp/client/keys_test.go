package client_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/internal/enginetest"
)

// storeSeq names each test's memory store apart: memory stores of one
// name share their table across the process, keys included.
var storeSeq atomic.Int64

// keysUpstream is a 2025 upstream whose tool "steps" answers with its
// own input_required result (a state the gateway wraps), "url" with
// -32042 (a replay state) and "ask" with an elicitation/create on the
// call's stream (a pending state); each tools/call goes into calls.
func keysUpstream(t *testing.T, calls chan<- string) string {
	return serveUpstream(t, false, func(w http.ResponseWriter, r *http.Request, msg, id string) {
		if !strings.Contains(msg, `"method":"tools/call"`) {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		calls <- msg
		switch {
		case strings.Contains(msg, `"name":"ask"`):
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(200)
			fmt.Fprint(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"elicitation/create\",\"params\":{\"message\":\"Your name?\",\"requestedSchema\":{\"type\":\"object\"}}}\n\n")
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		case strings.Contains(msg, `"name":"url"`) && strings.Contains(msg, `"again":true`):
			answerOK(w, id)
		case strings.Contains(msg, `"name":"url"`):
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32042,"message":"URL elicitation required","data":{"elicitations":[{"mode":"url","elicitationId":"auth-1","url":"https://auth.example/x","message":"Sign in"}]}}}`, id)
		case strings.Contains(msg, `"requestState":"round=2"`):
			answerOK(w, id)
		default:
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[],"inputRequests":{"s":{"method":"elicitation/create","params":{"message":"Colour?","requestedSchema":{"type":"object"}}}},"requestState":"round=2"}}`, id)
		}
	})
}

// inputRequiredState returns the requestState of an input_required result.
func inputRequiredState(t *testing.T, m map[string]any) string {
	t.Helper()
	res, _ := m["result"].(map[string]any)
	require.NotNil(t, res, "%v", m)
	require.Equal(t, "input_required", res["resultType"], "%v", m)
	state, _ := res["requestState"].(string)
	require.NotEmpty(t, state)
	return state
}

// stepsRetried has issuer answer a steps call (id) input_required and
// verifier take its retry (id+1) with the answer s and the state, which
// the upstream, having had the call, answers ok. It returns the state and
// what the upstream got as the retry; what names the case in failures.
func stepsRetried(t *testing.T, ctx context.Context, calls chan string, issuer, verifier string, id int, what string) (state, retry string) {
	t.Helper()
	m, err := post2026(ctx, issuer, id, "steps", "")
	require.NoError(t, err, what)
	state = inputRequiredState(t, m)
	enginetest.Receive(t, calls, "the call")
	m, err = post2026(ctx, verifier, id+1, "steps", `,"inputResponses":{"s":{"action":"accept","content":{}}},"requestState":"`+state+`"`)
	require.NoError(t, err, what)
	assert.Equal(t, map[string]any{"content": []any{map[string]any{"type": "text", "text": "ok"}}}, without(m["result"], "_meta", "resultType"), "%s: %v", what, m)
	return state, enginetest.Receive(t, calls, "the retry")
}

// stepsRefused has issuer answer a steps call (id) input_required and
// verifier refuse its state (id+1) as an Invalid requestState, sending
// nothing upstream.
func stepsRefused(t *testing.T, ctx context.Context, calls chan string, issuer, verifier string, id int) {
	t.Helper()
	m, err := post2026(ctx, issuer, id, "steps", "")
	require.NoError(t, err)
	state := inputRequiredState(t, m)
	enginetest.Receive(t, calls, "the call")
	m, err = post2026(ctx, verifier, id+1, "steps", `,"requestState":"`+state+`"`)
	require.NoError(t, err)
	e, _ := m["error"].(map[string]any)
	assert.Equal(t, "Invalid requestState", e["message"], "%v", m)
	assert.Empty(t, calls)
}

// TestKeySharedThroughStore: two instances of the gateway (two engines)
// with options.inputRequired.store on one memory store issue and verify
// each other's requestStates: a wrapped upstream state and a -32042
// replay issued by one continue on the other. A forged state is still
// refused, and a pending state (an upstream call held open by the
// instance that issued it) gets an error naming the other instance rather
// than a generic refusal. Without the store, each instance has its own
// key and refuses the other's states.
func TestKeySharedThroughStore(t *testing.T) {
	calls := make(chan string, 16)
	server := keysUpstream(t, calls)
	name := fmt.Sprintf("irkeys%d", storeSeq.Add(1))
	opts := "      versions: [2025-11-25]\n      inputRequired:\n        store: " + name + "\nstores:\n  " + name + ":\n    type: memory\n"
	a := startGateway(t, server, opts)
	b := startGateway(t, server, opts)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	// A wrapped upstream state, issued by a, continues on b.
	wrapped, retry := stepsRetried(t, ctx, calls, a, b, 1, "a to b")
	assert.Contains(t, retry, `"requestState":"round=2"`)

	// A replay state, issued by b, continues on a.
	urlCaps := `{"elicitation":{"url":{}}}`
	m, err := post2026Caps(ctx, b, 3, "url", "", urlCaps)
	require.NoError(t, err)
	replay := inputRequiredState(t, m)
	enginetest.Receive(t, calls, "the call")
	m, err = post2026Caps(ctx, a, 4, "url", `,"again":true,"inputResponses":{"auth-1":{"action":"accept"}},"requestState":"`+replay+`"`, urlCaps)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"content": []any{map[string]any{"type": "text", "text": "ok"}}}, without(m["result"], "_meta", "resultType"), "%v", m)
	assert.NotContains(t, enginetest.Receive(t, calls, "the call again"), "requestState")

	// A forged state reaches no upstream on either.
	forged := []byte(wrapped)
	forged[len(forged)/2] ^= 1
	for _, endpoint := range []string{a, b} {
		m, err = post2026(ctx, endpoint, 5, "steps", `,"requestState":"`+string(forged)+`"`)
		require.NoError(t, err)
		assert.Equal(t, map[string]any{"code": float64(-32602), "message": "Invalid requestState",
			"data": map[string]any{"reason": "integrity check failed (forged, altered or issued to another principal)"}}, m["error"])
	}

	// A pending call lives in a; its state on b says so, and b sends
	// nothing upstream.
	m, err = post2026(ctx, a, 6, "ask", "")
	require.NoError(t, err)
	pending := inputRequiredState(t, m)
	enginetest.Receive(t, calls, "the call")
	m, err = post2026(ctx, b, 7, "ask", `,"inputResponses":{"7":{"action":"accept","content":{}}},"requestState":"`+pending+`"`)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"code": float64(-32602), "message": "Invalid requestState",
		"data": map[string]any{"reason": "issued by another instance of the gateway, which holds the upstream call it continues: send the retry to that instance"}}, m["error"])
	assert.Empty(t, calls)

	// Without the store the instances do not share a key.
	c := startGateway(t, server, "      versions: [2025-11-25]\n")
	d := startGateway(t, server, "      versions: [2025-11-25]\n")
	stepsRefused(t, ctx, calls, c, d, 8)
}

// TestKeyFromStoreValue: the key is the value the store holds, not the
// one a worker offered: two instances on test stores of their own seeded
// with one key verify each other's states. A store whose value cannot be
// a key leaves the instance on its own process key, which still issues
// and verifies its own states rather than holding requests.
func TestKeyFromStoreValue(t *testing.T) {
	calls := make(chan string, 16)
	server := keysUpstream(t, calls)
	seeded := func(value string) string {
		return "      versions: [2025-11-25]\n      inputRequired:\n        store: keys0\nstores:\n  keys0:\n    type: test\n    options:\n      entries:\n        client0.inputRequired.key: " + value + "\n"
	}
	key := strings.Repeat("k", 32)
	a := startGateway(t, server, seeded(key))
	b := startGateway(t, server, seeded(key))
	short := startGateway(t, server, seeded("short"))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	for _, tc := range []struct{ name, issuer, verifier string }{
		{"seeded", a, b},
		{"short key", short, short},
	} {
		stepsRetried(t, ctx, calls, tc.issuer, tc.verifier, 1, tc.name)
	}

	// The short-keyed instance's states are its own.
	stepsRefused(t, ctx, calls, short, a, 3)
}

// TestKeyStoreServerKind: options.inputRequired.store is the client
// kind's; the server kind refuses it where it is written.
func TestKeyStoreServerKind(t *testing.T) {
	src := "name: test\nstores:\n  keys0:\n    type: memory\nbindings:\n  mcp0:\n    type: mcp\n    kind: server\n    exit: client0\n    options:\n" +
		"      inputRequired:\n        store: keys0\n  client0:\n    type: mcp\n    kind: client\n    options:\n      server: http://127.0.0.1:1/mcp\n"
	err := enginetest.Check(t, "s.yaml", src, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `s.yaml:12: bindings.mcp0.options.inputRequired.store: binding type "mcp" of kind server does not accept "store"`)
}
