package jsonrpc_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/binding/mcp/jsonrpc"
)

func TestAppendString(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain", "hello", `"hello"`},
		{"empty", "", `""`},
		{"quotes and backslash", `a"b\c`, `"a\"b\\c"`},
		{"controls", "\n\r\t\x00\x1f\x7f", `"\n\r\t\u0000\u001f` + "\x7f" + `"`},
		{"utf8", "é✓😀", `"é✓😀"`},
		{"invalid utf8", "a\xffb\xc3", `"a\ufffdb\ufffd"`},
		{"surrogate half", "\xed\xa0\x80", `"\ufffd\ufffd\ufffd"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := jsonrpc.AppendString([]byte("x"), []byte(tt.in))
			assert.Equal(t, "x"+tt.want, string(got))
			assert.Equal(t, got, jsonrpc.AppendString([]byte("x"), tt.in), "as from a string")
			require.True(t, json.Valid(got[1:]))
			want, err := json.Marshal(tt.in)
			require.NoError(t, err)
			var back, wantBack string
			require.NoError(t, json.Unmarshal(got[1:], &back))
			require.NoError(t, json.Unmarshal(want, &wantBack))
			assert.Equal(t, wantBack, back, "encoding/json reads what it would write")
			assert.Equal(t, tt.want[1:len(tt.want)-1], string(jsonrpc.AppendEscaped(nil, tt.in)))
		})
	}
}

func TestAppendStringAllocs(t *testing.T) {
	dst := make([]byte, 0, 256)
	b, s := []byte("é\xff\"x\n"), "é\xff\"x\n"
	allocs := testing.AllocsPerRun(100, func() {
		dst = jsonrpc.AppendString(dst[:0], b)
		dst = jsonrpc.AppendString(dst, s)
	})
	assert.Zero(t, allocs)
}

func TestAppendError(t *testing.T) {
	tests := []struct {
		name string
		code int64
		msg  string
		want string
	}{
		{"plain", -32603, "Upstream timeout", `{"code":-32603,"message":"Upstream timeout"}`},
		{"positive", 7, "", `{"code":7,"message":""}`},
		{"escaped", -32600, "a\"b\x01", `{"code":-32600,"message":"a\"b\u0001"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := jsonrpc.AppendError([]byte("x"), tt.code, tt.msg)
			assert.Equal(t, "x"+tt.want, string(got))
			assert.Equal(t, got, jsonrpc.AppendError([]byte("x"), tt.code, []byte(tt.msg)), "as from bytes")
			var e struct {
				Code    int64  `json:"code"`
				Message string `json:"message"`
			}
			require.NoError(t, json.Unmarshal(got[1:], &e))
			assert.Equal(t, tt.code, e.Code)
			assert.Equal(t, tt.msg, e.Message)
		})
	}
}
