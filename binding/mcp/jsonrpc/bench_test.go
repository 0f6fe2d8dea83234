package jsonrpc_test

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/binding/mcp/jsonrpc"
)

// toolsList is a tools/list response body as a real server sends it:
// 20 tools with descriptions and JSON Schemas, compact, 7.7 KB.
func toolsList(tb testing.TB) []byte {
	b, err := os.ReadFile("testdata/tools_list_result.json")
	require.NoError(tb, err)
	return b
}

// toolsCall is a tools/call request as an MCP client sends it.
const toolsCall = `{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"get_weather",` +
	`"arguments":{"location":"San Francisco, CA","units":"metric","days":3},` +
	`"_meta":{"progressToken":"c0ffee-42"}}}`

// benchTrack feeds msg to tr in chunks of chunk bytes, as one message.
func benchTrack(b *testing.B, msg []byte, chunk int) {
	var tr jsonrpc.Tracker
	b.SetBytes(int64(len(msg)))
	b.ReportAllocs()
	for b.Loop() {
		tr.Reset()
		for k := 0; k < len(msg); k += chunk {
			if _, _, err := tr.Feed(msg[k:min(k+chunk, len(msg))]); err != nil {
				b.Fatal(err)
			}
		}
		if !tr.Done() {
			b.Fatal("not done")
		}
	}
}

func BenchmarkTrackerToolsList(b *testing.B) {
	msg := toolsList(b)
	b.Run("chunk=all", func(b *testing.B) { benchTrack(b, msg, len(msg)) })
	b.Run("chunk=1KiB", func(b *testing.B) { benchTrack(b, msg, 1024) })
}

func BenchmarkTrackerToolsCall(b *testing.B) {
	msg := []byte(toolsCall)
	b.Run("chunk=all", func(b *testing.B) { benchTrack(b, msg, len(msg)) })
}

// BenchmarkJSONValid is the baseline: encoding/json's validator, which
// reports neither where the value ends nor its members.
func BenchmarkJSONValid(b *testing.B) {
	msg := toolsList(b)
	b.SetBytes(int64(len(msg)))
	b.ReportAllocs()
	for b.Loop() {
		if !json.Valid(msg) {
			b.Fatal("invalid")
		}
	}
}

func TestBenchMessages(t *testing.T) {
	for _, msg := range [][]byte{toolsList(t), []byte(toolsCall)} {
		var tr jsonrpc.Tracker
		o := feed(t, &tr, msg, nil)
		require.True(t, o.Done, o.Err)
		checkOracle(t, msg, o, true)
		require.Equal(t, jsonrpc.KindObject, o.Kind)
	}
	require.Len(t, toolsList(t), 7684)
}

// BenchmarkValid validates the tools/list result held whole, as the
// server and the proxy check a body: StrictUTF8, depth at most 128.
func BenchmarkValid(b *testing.B) {
	msg := toolsList(b)
	o := jsonrpc.Options{MaxDepth: 128, StrictUTF8: true}
	b.SetBytes(int64(len(msg)))
	b.ReportAllocs()
	for b.Loop() {
		if !jsonrpc.Valid(msg, o) {
			b.Fatal("invalid")
		}
	}
}

// BenchmarkLookup finds a tools/call's params, then the name and _meta in
// them, by their decoded keys.
func BenchmarkLookup(b *testing.B) {
	msg := []byte(toolsCall)
	b.SetBytes(int64(len(msg)))
	b.ReportAllocs()
	for b.Loop() {
		p := jsonrpc.Lookup(msg, "params")
		if jsonrpc.Lookup(p, "name") == nil || jsonrpc.Lookup(p, "_meta") == nil {
			b.Fatal("missing")
		}
	}
}
