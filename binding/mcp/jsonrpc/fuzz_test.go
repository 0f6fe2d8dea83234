package jsonrpc_test

// Fuzz targets, with encoding/json as the oracle. Their seeds are the
// test tables (added here) and the files under testdata/fuzz/<FuzzName>/:
// MCP messages of every kind, and inputs the fuzzer found interesting.
// Run one with
//
//	go test -run='^$' -fuzz=FuzzTracker -fuzztime=60s ./binding/mcp/jsonrpc/

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/binding/mcp/jsonrpc"
)

// cuts splits n bytes into chunks of random sizes, bounded by one of a
// few scales picked by seed.
func cuts(n int, seed uint64) []int {
	rng := rand.New(rand.NewPCG(seed, uint64(n)))
	scale := [...]int{1, 3, 16, 1024}[seed%4]
	var c []int
	for k := 1 + rng.IntN(scale); k < n; k += 1 + rng.IntN(scale) {
		c = append(c, k)
	}
	return c
}

// FuzzTracker checks, for any input and any split of it into chunks, that
// the Tracker's verdict, end offset, error offset and member ranges are
// encoding/json's (see oracle), that the split changes nothing, and that
// the options behave as documented.
func FuzzTracker(f *testing.F) {
	for _, tt := range rangeTests {
		f.Add([]byte(tt.in), uint64(len(tt.in)))
	}
	for i, m := range splitMessages {
		f.Add([]byte(m), uint64(i))
	}
	tr := jsonrpc.NewTracker(jsonrpc.Options{})
	strict := jsonrpc.NewTracker(jsonrpc.Options{StrictUTF8: true})
	dups := jsonrpc.NewTracker(jsonrpc.Options{RejectDuplicates: true})
	f.Fuzz(func(t *testing.T, data []byte, seed uint64) {
		c := cuts(len(data), seed)
		whole := feed(t, tr, data, nil)
		checkOracle(t, data, whole, false)
		require.Equal(t, whole, feed(t, tr, data, c), "split at %v", c)
		restore := jsonrpc.SetLaneAsm(false)
		require.Equal(t, whole, feed(t, tr, data, c), "portable lane, split at %v", c)
		restore()

		s := feed(t, strict, data, c)
		checkOracle(t, data, s, true)
		require.Equal(t, s, feed(t, strict, data, nil))

		d := feed(t, dups, data, c)
		if whole.Dups == 0 {
			require.Equal(t, whole, d)
		} else if whole.Done {
			require.False(t, d.Done)
			require.Contains(t, d.Err, "duplicate member")
		}
	})
}

// FuzzValues checks Unquote and ParseID against encoding/json.
func FuzzValues(f *testing.F) {
	for _, s := range []string{
		`"tools/call"`, `"tools\/call"`, `"\u0061\ud83c\udf0d\ud800\u0041"`, `"\ud800\ud800"`,
		"\"a\xffb\"", `"\'"`, `"a"b"`, `12`, `-0.5e3`, `01`, `null`, `true`, `{}`, `"2\u002e0"`, `"2.0"`,
	} {
		f.Add([]byte(s))
	}
	buf := make([]byte, 0, 64)
	f.Fuzz(func(t *testing.T, data []byte) {
		valid := json.Valid(data)
		if len(data) > 0 && data[0] == '"' && data[len(data)-1] == '"' && len(data) > 1 {
			got, err := jsonrpc.Unquote(buf, data)
			require.Equal(t, valid, err == nil, "%v", err)
			if valid {
				var want string
				require.NoError(t, json.Unmarshal(data, &want))
				require.Equal(t, want, string(got))
				require.Equal(t, want == "2.0", jsonrpc.Version(data))
			}
		}
		trimmed := strings.TrimSpace(string(data))
		kind, canon, err := jsonrpc.ParseID(buf, []byte(trimmed))
		if !valid || trimmed != string(data) {
			if err == nil && kind != jsonrpc.IDNone {
				require.True(t, json.Valid([]byte(trimmed)), "ParseID accepted %q", trimmed)
			}
			return
		}
		var v any
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		require.NoError(t, dec.Decode(&v))
		switch v := v.(type) {
		case string:
			require.NoError(t, err)
			require.Equal(t, jsonrpc.IDString, kind)
			require.Equal(t, v, string(canon))
		case json.Number:
			require.NoError(t, err)
			require.Equal(t, jsonrpc.IDNumber, kind)
			require.Equal(t, data, canon)
		case nil:
			require.NoError(t, err)
			require.Equal(t, jsonrpc.IDNull, kind)
		default:
			require.ErrorIs(t, err, jsonrpc.ErrInvalidID)
		}
	})
}
