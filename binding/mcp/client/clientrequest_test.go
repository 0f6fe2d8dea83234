package client_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/spec"
)

// frameSize is the engine's default frame bound (SlotCapacity), which the
// client's FLUSH parts fill, less the room it keeps for the rest of the
// frame.
const (
	frameSize = 32 << 10
	partRoom  = 256
)

// TestClientRequestParts plays tools.call.elicit.form with an
// elicitation/create whose params do not fit one frame: they reach the
// downstream in parts, consecutive FLUSH clientRequest with the same id
// and method, each with total and the start of the params bytes it
// carries, which put together are the params the upstream sent.
func TestClientRequestParts(t *testing.T) {
	src := filepath.Join(clientDir, "tools.call.elicit.form")
	down := read(t, filepath.Join(src, "downstream.rpt"))
	up := read(t, filepath.Join(src, "upstream.rpt"))

	big := `{"message":"` + strings.Repeat("n", 70000) + `","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}`
	method, id := "elicitation/create", "0"
	part := frameSize - partRoom - len(method) - len(id)

	var flushes strings.Builder
	n := 0
	for start := 0; start < len(big); start += part {
		end := min(start+part, len(big))
		fmt.Fprintf(&flushes, `read advised zilla:flush ${mcp:matchFlushEx()
                              .typeId(zilla:id("mcp"))
                              .clientRequest()
                                  .id("0")
                                  .method("elicitation/create")
                                  .params('%s')
                                  .total(%d)
                                  .start(%d)
                                  .build()
                              .build()}
`, big[start:end], len(big), start)
		n++
	}
	require.Equal(t, 3, n, "the params take three frames")
	at := strings.Index(down, "read advised zilla:flush")
	end := strings.Index(down, "read notify ELICITED")
	require.True(t, at > 0 && end > at)
	down = down[:at] + flushes.String() + down[end:]

	up = withElicitParams(t, up, big)

	play(t, down, up)
}

// TestClientRequestTooLarge plays tools.call.elicit.form with an
// elicitation/create whose params are past mcp.MaxNotification: it cannot
// travel to the client, so the upstream is answered at once with the
// JSON-RPC error -32603, and the call goes on to its result; the
// downstream sees no FLUSH.
func TestClientRequestTooLarge(t *testing.T) {
	src := filepath.Join(clientDir, "tools.call.elicit.form")
	down := read(t, filepath.Join(src, "downstream.rpt"))
	up := read(t, filepath.Join(src, "upstream.rpt"))

	at := strings.Index(down, "read advised zilla:flush")
	end := strings.Index(down, "read '{\"content\"")
	require.True(t, at > 0 && end > at)
	down = down[:at] + down[end:]
	at = strings.Index(down, "# the client's answer")
	require.True(t, at > 0)
	down = down[:at]

	big := `{"message":"` + strings.Repeat("n", mcp.MaxNotification) + `"}`
	up = withElicitParams(t, up, big)
	answer := `read '{"jsonrpc":"2.0","id":0,"result":{"action":"accept","content":{"name":"Ada"}}}'`
	require.Contains(t, up, answer)
	up = strings.Replace(up, answer, `read '{"jsonrpc":"2.0","id":0,"error":{"code":-32603,"message":"Request too large to relay to the client"}}'`, 1)
	play(t, down, up)
}

// withElicitParams puts params in place of the elicitation/create params
// of tools.call.elicit.form's upstream.rpt. The event goes in writes of
// 16 KiB: a script writes each as one DATA, and a frame is at most
// frameSize.
func withElicitParams(t *testing.T, up, params string) string {
	t.Helper()
	small := `{"message":"Your name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}`
	line := `write "event: message\nid: 1\ndata: {\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"elicitation/create\",\"params\":` +
		strings.ReplaceAll(small, `"`, `\"`) + `}\n\n"` + "\n"
	require.Contains(t, up, line)
	event := "event: message\nid: 1\ndata: " + `{"jsonrpc":"2.0","id":0,"method":"elicitation/create","params":` + params + "}\n\n"
	var writes strings.Builder
	for i := 0; i < len(event); i += 16 << 10 {
		chunk := event[i:min(i+16<<10, len(event))]
		chunk = strings.NewReplacer(`"`, `\"`, "\n", `\n`).Replace(chunk)
		fmt.Fprintf(&writes, "write \"%s\"\n", chunk)
	}
	return strings.Replace(up, line, writes.String(), 1)
}

// play runs the scripts down and up against config/client.yaml.
func play(t *testing.T, down, up string) {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "downstream.rpt"), []byte(down), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "upstream.rpt"), []byte(up), 0o644))
	spec.Run(t, spec.Config(filepath.Join(scripts, "config", "client.yaml"), spec.Workers(1)),
		filepath.Join(dir, "downstream"), filepath.Join(dir, "upstream"))
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

// TestClientRequestSessionless plays lifecycle.roots.list with a lifecycle
// without a session id (the server kind's for a stateless downstream's
// subscriptions), which shares the worker's upstream session: no one
// client is the one the upstream asks, so its roots/list on the GET
// stream is answered at once with the JSON-RPC error -32603 and never
// reaches the downstream.
func TestClientRequestSessionless(t *testing.T) {
	src := filepath.Join(clientDir, "lifecycle.roots.list")
	down := read(t, filepath.Join(src, "downstream.rpt"))
	up := read(t, filepath.Join(src, "upstream.rpt"))

	at := strings.Index(down, "read advised zilla:flush")
	require.True(t, at > 0)
	down = down[:at]
	for _, r := range [][2]string{
		{`.sessionId("session-1")
                               .capabilities(64)`, `.sessionId(null)
                               .capabilities(64)
                               .subscriptions(8)`},
		{`.sessionId("session-1")
                              .capabilities(1)`, `.sessionId(null)
                              .capabilities(1)`},
	} {
		require.Contains(t, down, r[0])
		down = strings.Replace(down, r[0], r[1], 1)
	}
	for _, r := range [][2]string{
		// The worker's own session declares every client capability: a
		// request on a call's stream is checked against that call's own
		// (reverse.go).
		{`"capabilities":{"roots":{"listChanged":true}}`, `"capabilities":{"roots":{"listChanged":true},"sampling":{},"elicitation":{"form":{},"url":{}},"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}}`},
		{`read '{"jsonrpc":"2.0","id":"r1","result":{"roots":[{"uri":"file:///work","name":"work"}]}}'`,
			`read '{"jsonrpc":"2.0","id":"r1","error":{"code":-32603,"message":"No stream open to the client"}}'`},
	} {
		require.Contains(t, up, r[0])
		up = strings.Replace(up, r[0], r[1], 1)
	}
	play(t, down, up)
}
