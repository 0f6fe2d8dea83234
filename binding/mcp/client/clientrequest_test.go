package client_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

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

	small := `{"message":"Your name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}`
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

	// The event goes in writes of 16 KiB: a script writes each as one
	// DATA, and a frame is at most frameSize.
	line := `write "event: message\nid: 1\ndata: {\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"elicitation/create\",\"params\":` +
		strings.ReplaceAll(small, `"`, `\"`) + `}\n\n"` + "\n"
	require.Contains(t, up, line)
	event := `event: message` + "\n" + `id: 1` + "\n" + `data: {"jsonrpc":"2.0","id":0,"method":"elicitation/create","params":` + big + "}\n\n"
	var writes strings.Builder
	for i := 0; i < len(event); i += 16 << 10 {
		chunk := event[i:min(i+16<<10, len(event))]
		chunk = strings.NewReplacer(`"`, `\"`, "\n", `\n`).Replace(chunk)
		fmt.Fprintf(&writes, "write \"%s\"\n", chunk)
	}
	up = strings.Replace(up, line, writes.String(), 1)

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
