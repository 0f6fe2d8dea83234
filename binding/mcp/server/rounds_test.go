package server_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// statelessCall sends a 2026-07-28 tools/call of echo whose params carry
// extra members (",\"requestState\":…" or ""), and returns the response.
func statelessCall(t *testing.T, h *harness, extra string) string {
	t.Helper()
	h.req.set(t, [][2]string{
		{":scheme", "http"}, {":method", "POST"}, {":path", "/mcp"}, {":authority", "localhost:8080"},
		{"content-type", "application/json"}, {"accept", "application/json, text/event-stream"},
		{"mcp-protocol-version", "2026-07-28"}, {"mcp-method", "tools/call"}, {"mcp-name", "echo"},
	}, `{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}`+extra+`,`+
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}}}`)
	h.request(t)
	return string(h.req.response)
}

// inputRequiredResult is an application's input_required result with
// requestState state.
func inputRequiredResult(state string) []byte {
	return []byte(`{"resultType":"input_required","inputRequests":{"e":{"method":"elicitation/create","params":{"message":"?"}}},"requestState":` + state + `}`)
}

// TestStatelessRoundCap: between a 2026-07-28 client and application the
// input_required rounds pass through untouched, the requestState byte for
// byte, and are counted per logical call: a retry bringing back a state
// continues its call's count, and past inputRequired.maxRounds the result
// becomes an error. A state the server did not see starts a count afresh.
func TestStatelessRoundCap(t *testing.T) {
	h := newHarnessWith(t, "\nversions: [2026-07-28, 2025-11-25]\ninputRequired: {maxRounds: 2}", nil)
	s1, s2, s3 := `"s1\u00e9"`, `"s2"`, `"s3"`
	h.app.results = [][]byte{inputRequiredResult(s1), inputRequiredResult(s2), inputRequiredResult(s3), inputRequiredResult(`"x2"`)}

	got := statelessCall(t, h, "")
	assert.Contains(t, got, `"requestState":`+s1, "round 1 passes through, its state byte for byte")
	assert.Contains(t, got, `"resultType":"input_required"`)
	got = statelessCall(t, h, `,"inputResponses":{"e":{"action":"accept"}},"requestState":`+s1)
	assert.Contains(t, got, `"requestState":`+s2, "round 2 passes through")
	got = statelessCall(t, h, `,"inputResponses":{"e":{"action":"accept"}},"requestState":`+s2)
	require.Contains(t, got, `"error":{"code":-32603,"message":"input_required rounds exceeded`, "round 3 is past the cap")
	assert.NotContains(t, got, s3)

	// A state this server never issued counts as a first round.
	got = statelessCall(t, h, `,"requestState":"forged"`)
	assert.True(t, strings.Contains(got, `"requestState":"x2"`), got)
}

// TestStatelessResultTwoReadings: a result that names resultType, or an
// input_required result that names inputRequests or requestState, twice
// could be read one way by the server (which counts rounds from it) and
// another by the client: the call ends with -32603 instead, and the
// result goes no further.
func TestStatelessResultTwoReadings(t *testing.T) {
	const ask = `"inputRequests":{"e":{"method":"elicitation/create","params":{"message":"?"}}}`
	for name, res := range map[string]string{
		"resultType":    `{"resultType":"complete","resultType":"input_required",` + ask + `,"requestState":"a"}`,
		"requestState":  `{"resultType":"input_required",` + ask + `,"requestState":"a","requestState":"b"}`,
		"inputRequests": `{"resultType":"input_required",` + ask + `,"inputRequests":{},"requestState":"a"}`,
		"nullFirst":     `{"resultType":"input_required",` + ask + `,"requestState":null,"requestState":"b"}`,
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarnessWith(t, "\nversions: [2026-07-28, 2025-11-25]", nil)
			h.app.results = [][]byte{[]byte(res)}
			got := statelessCall(t, h, "")
			assert.Contains(t, got, `"error":{"code":-32603,"message":"Internal error: the application's `, got)
			assert.Contains(t, got, "twice")
			assert.NotContains(t, got, `"requestState"`)
		})
	}
}

// TestSessionResultTypeTwice: toward a 2025-era session, a result that
// names resultType twice is refused too: the server decides from it
// whether to strip the 2026-07-28 members or to fulfil the input it asks.
func TestSessionResultTypeTwice(t *testing.T) {
	h := newHarness(t)
	initSession(t, h, `{"elicitation":{}}`)
	h.app.results = [][]byte{[]byte(`{"content":[],"resultType":"input_required","resultType":"complete"}`)}
	h.req.set(t, benchHeaders, benchBody)
	h.request(t)
	assert.Equal(t, `{"jsonrpc":"2.0","id":42,"error":{"code":-32603,"message":"Internal error: the application's result names resultType twice"}}`, string(h.req.response))
}

// TestStatelessLoneSurrogateState: a requestState with a lone surrogate
// escape goes back to the application byte for byte, where the rest of
// the params have theirs rewritten as U+FFFD, and its retry continues its
// call's count.
func TestStatelessLoneSurrogateState(t *testing.T) {
	h := newHarnessWith(t, "\nversions: [2026-07-28]\ninputRequired: {maxRounds: 1}", nil)
	state := `"\ud800s"`
	h.app.calls = []string{}
	h.app.results = [][]byte{inputRequiredResult(state), inputRequiredResult(state)}
	got := statelessCall(t, h, "")
	assert.Contains(t, got, `"requestState":`+state)
	got = statelessCall(t, h, `,"inputResponses":{"e":{"action":"accept","content":{"n":"\udc00"}}},"requestState":`+state)
	require.Contains(t, got, "input_required rounds exceeded", "the retry continues the count")
	retry := calls(t, h)[1]
	assert.Contains(t, retry, `"requestState":`+state, retry)
	assert.Contains(t, retry, `"n":"\ufffd"`, retry)
}
