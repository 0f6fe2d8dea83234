package jsonrpc_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/sluicehq/sluice/binding/mcp/jsonrpc"
)

func TestReplaceLoneSurrogates(t *testing.T) {
	for _, tt := range []struct {
		in, want string
		n        int
	}{
		{`"\ud800"`, `"\ufffd"`, 1},
		{`"\uDBFF"`, `"\ufffd"`, 1},
		{`"\udc00x"`, `"\ufffdx"`, 1},
		{`"\ud83d\ude00"`, `"\ud83d\ude00"`, 0},
		{`"\ud83d\u0041"`, `"\ufffd\u0041"`, 1},
		{`"\ud800\ud800\udc00"`, `"\ufffd\ud800\udc00"`, 1},
		{`"\udc00\ud800"`, `"\ufffd\ufffd"`, 2},
		{`"\\ud800"`, `"\\ud800"`, 0},   // an escaped backslash, then text
		{`"\\\ud800"`, `"\\\ufffd"`, 1}, // an escaped backslash, then the escape
		{`{"\ud800":["\ud800"]}`, `{"\ufffd":["\ufffd"]}`, 2},
		{`"\u00e9\u0000"`, `"\u00e9\u0000"`, 0},
		{`{"name":"x\ud800","n":1}`, `{"name":"x\ufffd","n":1}`, 1},
	} {
		b := []byte(tt.in)
		n := jsonrpc.ReplaceLoneSurrogates(b)
		assert.Equal(t, tt.want, string(b), tt.in)
		assert.Equal(t, tt.n, n, tt.in)
	}
	// In two parts, cut anywhere, as a whole.
	for _, in := range []string{`"\ud83d\ude00\ud800\\ud800\udc00x\ud800\u0041\ud800"`, `["\\\ud800\\","\ud83d\\ude00"]`} {
		whole := []byte(in)
		n := jsonrpc.ReplaceLoneSurrogates(whole)
		for cut := 0; cut <= len(in); cut++ {
			b := []byte(in)
			done, n1 := jsonrpc.ReplaceLoneSurrogatesPart(b[:cut], false)
			assert.LessOrEqual(t, cut-done, 11)
			_, n2 := jsonrpc.ReplaceLoneSurrogatesPart(b[done:], true)
			assert.Equal(t, string(whole), string(b), "%s cut at %d", in, cut)
			assert.Equal(t, n, n1+n2, "%s cut at %d", in, cut)
		}
	}
	b := []byte(`{"a":"\ud800 and \ud83d\ude00"}`)
	assert.Zero(t, testing.AllocsPerRun(100, func() { jsonrpc.ReplaceLoneSurrogates(b) }))
}
