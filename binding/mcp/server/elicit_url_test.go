package server_test

import (
	"testing"

	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/internal/enginetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func challengeExt(t testing.TB, typeID int32, id, url, corr string) []byte {
	t.Helper()
	buf := make([]byte, 1024)
	var b mcp.McpChallengeExBuilder
	ec := b.Wrap(buf, 0, len(buf)).TypeID(typeID).ElicitCreate().ID(id).URL(url)
	if corr != "" {
		ec.CorrelationID(corr)
	}
	n, err := b.BuildLimit()
	require.NoError(t, err)
	return buf[:n]
}

// TestURLElicitationHoldsEnd: a CHALLENGE elicitCreate on a tools/call
// reaches the client as elicitation/create with mode "url"; the request's
// END waits for the client's answer, so the application answers only
// after it; the metrics count it with mode="url".
func TestURLElicitationHoldsEnd(t *testing.T) {
	h := newHarness(t)
	initSession(t, h, `{"elicitation":{"url":{}}}`)
	h.app.challenge = challengeExt(t, h.app.mcpType, "e-1", "https://auth.example/a?state=s", "3")
	startCall(t, h, benchBody, `"s2c-1"`)
	assert.Equal(t, "id: 42:0\ndata: \n\n"+
		"event: message\nid: 42:1\ndata: "+`{"jsonrpc":"2.0","id":"s2c-1","method":"elicitation/create","params":{"mode":"url","elicitationId":"e-1","url":"https://auth.example/a?state=s"}}`+"\n\n",
		string(h.req.response), "no result before the answer: the END waits")

	answer := h.send(t, benchHeaders, `{"jsonrpc":"2.0","id":"s2c-1","result":{"action":"accept"}}`, "the answer's response")
	assert.Equal(t, "202", string(answer.status))
	enginetest.ReceiveBy(t, h.timer, h.req.done, "the tools/call's response")
	assert.Contains(t, string(h.req.response), `"id":42,"result"`)

	assert.Equal(t, int64(1), enginetest.Metric(h.e, "net0", "elicitation.requests"))
	url := false
	for _, s := range h.e.Telemetry().Gather() {
		if m, _ := s.Labels.Get("mode"); m == "url" && s.Name == "elicitation.completed" && s.Value == 1 {
			a, _ := s.Labels.Get("action")
			assert.Equal(t, "accept", a)
			url = true
		}
	}
	assert.True(t, url, `elicitation.completed{mode="url",action="accept"} counts the answer`)
}

// TestURLElicitationRequired: a client that did not declare URL
// elicitation gets -32042 with MCP's data shape, {"elicitations":[…]},
// each URL-mode with its elicitationId, and the call ends.
func TestURLElicitationRequired(t *testing.T) {
	h := newHarness(t)
	initSession(t, h, `{"elicitation":{}}`)
	h.app.challenge = challengeExt(t, h.app.mcpType, "e-1", "https://auth.example/a?state=s", "")
	h.req.set(t, benchHeaders, benchBody)
	h.request(t)
	assert.Equal(t, "200", string(h.req.status))
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":42,"error":{"code":-32042,"message":"URL elicitation required",`+
		`"data":{"elicitations":[{"mode":"url","elicitationId":"e-1","url":"https://auth.example/a?state=s"}]}}}`,
		string(h.req.response))
}
