package jsonrpc_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/binding/mcp/jsonrpc"
)

func TestEventReader(t *testing.T) {
	tests := []struct {
		name string
		body string
		want []string
		last string
	}{
		{
			name: "priming then message",
			body: "id: a1\ndata: \n\nevent: message\nid: a2\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n",
			want: []string{`{"jsonrpc":"2.0","id":1,"result":{}}`},
			last: "a2",
		},
		{
			name: "CRLF and CR line ends, comments, multi-line data",
			body: ": keepalive\r\n\r\ndata: {\"a\":\r\ndata: 1}\r\rdata:{\"b\":2}\n\n",
			want: []string{"{\"a\":\n1}", `{"b":2}`},
		},
		{
			name: "retry and unknown fields",
			body: "retry: 3000\nfoo: bar\ndata: {}\n\n",
			want: []string{`{}`},
		},
		{
			name: "an event of another type is skipped, its id kept",
			body: "event: ping\nid: b1\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\nevent: message\ndata: {\"x\":1}\n\ndata: {\"y\":2}\n\n",
			want: []string{`{"x":1}`, `{"y":2}`},
			last: "b1",
		},
		{
			name: "the type does not outlive its event",
			body: "event: other\n\ndata: {\"z\":3}\n\n",
			want: []string{`{"z":3}`},
		},
		{
			name: "an event without its blank line is not dispatched",
			body: "data: {}\n",
			want: nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for cut := 0; cut <= len(tt.body); cut++ {
				var r jsonrpc.EventReader
				var got []string
				b := []byte(tt.body)
				for _, chunk := range [][]byte{b[:cut], b[cut:]} {
					for len(chunk) > 0 {
						n, data, err := r.Next(chunk)
						require.NoError(t, err)
						chunk = chunk[n:]
						if len(data) > 0 {
							got = append(got, string(data))
						}
					}
				}
				assert.Equal(t, tt.want, got, "cut at %d", cut)
				if tt.last != "" {
					assert.Equal(t, tt.last, string(r.LastID()), "cut at %d", cut)
				}
			}
		})
	}
}

func TestEventReaderFields(t *testing.T) {
	var r jsonrpc.EventReader
	n, data, err := r.Next([]byte("id: p1\ndata:\n\nretry: 1500\n"))
	require.NoError(t, err)
	assert.Equal(t, 14, n, "up to the priming event's end")
	assert.NotNil(t, data, "an event without data is returned, empty")
	assert.Empty(t, data)
	_, _, err = r.Next([]byte("retry: 1500\nid: a\x00b\n"))
	require.NoError(t, err)
	assert.Equal(t, int64(1500), r.Retry())
	assert.Equal(t, "p1", string(r.LastID()), "an id with NUL is ignored")
	r.Reset()
	assert.Empty(t, r.LastID())
	assert.Zero(t, r.Retry())
}

func TestEventReaderLimit(t *testing.T) {
	r := jsonrpc.EventReader{Limit: 16}
	_, _, err := r.Next([]byte("data: " + strings.Repeat("x", 20)))
	require.ErrorIs(t, err, jsonrpc.ErrEventTooLarge, "a line over the limit")
	r = jsonrpc.EventReader{Limit: 16}
	_, _, err = r.Next([]byte("data: 0123456789\ndata: 0123456789\n"))
	require.ErrorIs(t, err, jsonrpc.ErrEventTooLarge, "data over the limit")
	r = jsonrpc.EventReader{}
	_, data, err := r.Next([]byte("data: " + strings.Repeat("x", 1<<16) + "\n\n"))
	require.NoError(t, err, "no limit")
	assert.Len(t, data, 1<<16)
}
