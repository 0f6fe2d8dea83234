package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/internal/enginetest"
)

// TestStreamedResultSpliced: a 2026-07-28 result too big for its buffer
// slot, which streams through the server kind, gets what every
// 2026-07-28 result carries (resultType, _meta's serverInfo, and for a
// list ttlMs and cacheScope) only where the upstream's result lacks it,
// at its end: no member is named twice, whatever the upstream put where.
func TestStreamedResultSpliced(t *testing.T) {
	big := strings.Repeat("x", 200<<10)
	content := `"content":[{"type":"text","text":"` + big + `"}]`
	results := map[string]string{
		"set":       `{"resultType":"complete","_meta":{"a":1},` + content + `}`,
		"none":      `{` + content + `}`,
		"late":      `{` + content + `,"resultType":"input_required","inputRequests":{"r":{"method":"roots/list"}},"requestState":"s"}`,
		"spaced":    "{ " + content + " \n\t}\n",
		"metaLate":  `{` + content + `,"_meta":{"b":2}}`,
		"typeTwice": `{"resultType":"complete",` + content + `,"resultType":"input_required"}`,
		"asksTwice": `{"resultType":"input_required","inputRequests":{"r":{"method":"roots/list"}},` + content +
			`,"inputRequests":{},"requestState":"s"}`,
		"stateTwice": `{"resultType":"input_required","inputRequests":{"r":{"method":"roots/list"}},"requestState":"s",` + content +
			`,"requestState":"t"}`,
	}
	// Results about the size that fills the server kind's result slot
	// (32 KiB less its 1552 bytes of head and tail room), so that the
	// closing brace comes in the slot that starts the stream, or just
	// after it.
	const room = 32<<10 - 1536 - 16
	for n := room - 2; n <= room+2; n++ {
		pad := n - len(`{"content":[{"type":"text","text":""}]}`)
		results[fmt.Sprint("fill", n-room)] = `{"content":[{"type":"text","text":"` + strings.Repeat("y", pad) + `"}]}`
	}
	server := serveUpstream(t, false, func(w http.ResponseWriter, r *http.Request, msg, id string) {
		w.Header().Set("Content-Type", "application/json")
		switch between(msg, `"method":"`, `"`) {
		case "server/discover":
			answerDiscover(w, id)
		case "tools/call":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, id, results[between(msg, `"name":"`, `"`)])
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	})
	endpoint := startGateway(t, server, "      versions: [2026-07-28]\n")
	serverInfo := map[string]any{"io.modelcontextprotocol/serverInfo": map[string]any{"name": "sluice", "version": "devel"}}
	wants := map[string]map[string]any{
		"set":      {"resultType": "complete", "_meta": map[string]any{"a": float64(1)}},
		"none":     {"resultType": "complete", "_meta": serverInfo},
		"late":     {"resultType": "input_required", "_meta": serverInfo},
		"spaced":   {"resultType": "complete", "_meta": serverInfo},
		"metaLate": {"resultType": "complete", "_meta": map[string]any{"b": float64(2)}},
	}
	for d := -2; d <= 2; d++ {
		wants[fmt.Sprint("fill", d)] = map[string]any{"resultType": "complete", "_meta": serverInfo}
	}
	call := func(t *testing.T, tool string) (*http.Response, []byte, error) {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":%q,"arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"roots":{}}}}}`, tool)
		req, err := enginetest.NewMCPRequest(context.Background(), endpoint, "2026-07-28", "", body, "Mcp-Method", "tools/call", "Mcp-Name", tool)
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		out, err := io.ReadAll(resp.Body)
		return resp, out, err
	}
	for tool, want := range wants {
		t.Run(tool, func(t *testing.T) {
			resp, out, err := call(t, tool)
			require.NoError(t, err)
			require.Equal(t, 200, resp.StatusCode)
			var msg map[string]json.RawMessage
			require.NoError(t, json.Unmarshal(out, &msg), "%.300s", out)
			assert.Empty(t, enginetest.NamedTwice(msg["result"]), "no member named twice")
			var result map[string]any
			require.NoError(t, json.Unmarshal(msg["result"], &result))
			assert.Equal(t, want["resultType"], result["resultType"])
			assert.Equal(t, want["_meta"], result["_meta"])
			assert.Len(t, result["content"], 1)
		})
	}
	// One that names resultType twice, or, input_required, inputRequests
	// or requestState twice, has two readings: its response, whose head
	// is out, is cut short rather than finished.
	for _, tool := range []string{"typeTwice", "asksTwice", "stateTwice"} {
		t.Run(tool, func(t *testing.T) {
			_, out, err := call(t, tool)
			require.Error(t, err, "the response is cut short")
			assert.False(t, json.Valid(out))
		})
	}
}

// TestStreamedRoundsCounted: the input_required rounds of a 2026-07-28
// call are counted when its retry's body or its result is too big for a
// buffer slot and streams. The retry's requestState, after 64 KiB of
// inputResponses, continues its call's count, and comes to the upstream
// byte for byte; an input_required result that streams records the round
// its requestState issues, and past inputRequired.maxRounds (3 here) has
// its response cut short, its head being out.
func TestStreamedRoundsCounted(t *testing.T) {
	r := newPassRig(t)
	big := strings.Repeat("z", 64<<10)
	responses := `{"a":{"action":"accept","content":{"big":"` + big + `"}}}`
	ask := `"inputRequests":{"a":{"method":"elicitation/create","params":{"message":"?","requestedSchema":{"type":"object"}}}}`
	for _, tt := range []struct {
		name, result string
		streams      bool // the result is too big to hold
	}{
		{"retry streams", `{"resultType":"input_required",` + ask + `,"requestState":"st\ud800%N%"}`, false},
		{"result streams too", `{"resultType":"input_required","inputRequests":{"a":{"method":"elicitation/create","params":{"message":"` + big + `","requestedSchema":{"type":"object"}}}},"requestState":"big%N%"}`, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r.up.next([]byte(tt.result))
			extra := ""
			for round := 1; round <= passMaxRounds; round++ {
				response := r.call(t, 1, extra)
				require.Contains(t, string(response["result"]), `"resultType":"input_required"`, "round %d passes", round)
				if round > 1 {
					calls := r.up.callsSoFar()
					require.Len(t, calls, round)
					var got struct{ RequestState json.RawMessage }
					require.NoError(t, json.Unmarshal(calls[round-1], &got))
					assert.Equal(t, extra[strings.Index(extra, `,"requestState":`)+16:], string(got.RequestState), "byte for byte")
				}
				var res struct{ RequestState json.RawMessage }
				require.NoError(t, json.Unmarshal(response["result"], &res))
				extra = `,"inputResponses":` + responses + `,"requestState":` + string(res.RequestState)
			}
			// Round 4 is past the cap.
			_, out, err := r.post(t, r.callBody("9", 1, extra))
			if tt.streams {
				require.Error(t, err, "the response is cut short: %.200s", out)
				assert.NotContains(t, string(out), `"requestState":"big4"`)
			} else {
				require.NoError(t, err)
				assert.Contains(t, string(out), `"error":{"code":-32603,"message":"input_required rounds exceeded`)
			}
			settledStreams(t, r.e, r.base, func() int32 { return 0 })
		})
	}
}

// TestStreamedRetryStateTwice: a retry whose body streams and names
// requestState twice (the second after 64 KiB of inputResponses) has two
// readings, as one held whole does: it is refused with -32602 rather than
// counted by one state while the upstream reads the other.
func TestStreamedRetryStateTwice(t *testing.T) {
	r := newPassRig(t)
	r.up.next([]byte(`{"content":[]}`))
	big := strings.Repeat("z", 64<<10)
	resp, out, err := r.post(t, r.callBody("9", 1, `,"requestState":"a","inputResponses":{"a":{"action":"accept","content":{"big":"`+big+`"}}},"requestState":"b"`))
	require.NoError(t, err)
	assert.Equal(t, 400, resp.StatusCode, "%s", out)
	assert.Contains(t, string(out), `"code":-32602,"message":"Invalid params: duplicate member \"requestState\""`)
	settledStreams(t, r.e, r.base, func() int32 { return 0 })
}
