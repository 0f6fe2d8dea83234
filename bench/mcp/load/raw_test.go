package main

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTemplateStamp(t *testing.T) {
	g := &generator{c: config{method: "tools/call", tool: "echo", arg: "text"}, target: target{host: "h:1", path: "/mcp"}}
	tm := g.newTemplate(session{id: "S1", version: "2025-11-25"})
	require.Len(t, tm.idAt, 2, "the id and the echo text")
	for _, id := range []int64{requestID(0, 1), requestID(63, 123456789), requestID(maxWorkers-1, idStride-1)} {
		req := string(tm.stamp(id))
		head, body, ok := strings.Cut(req, "\r\n\r\n")
		require.True(t, ok)
		assert.Contains(t, head, "POST /mcp HTTP/1.1\r\nHost: h:1\r\n")
		assert.Contains(t, head, "\r\nMcp-Session-Id: S1\r\nMcp-Protocol-Version: 2025-11-25\r\n")
		assert.Contains(t, head, "\r\nContent-Length: "+strconv.Itoa(len(body)))
		assert.Equal(t, string(g.request(nil, id)), body)
		assert.Len(t, strconv.FormatInt(id, 10), idDigits)
	}
	list := &generator{c: config{method: "tools/list"}, target: target{host: "h", path: "/"}}
	assert.Len(t, list.newTemplate(session{}).idAt, 1)
}

func TestParseResponse(t *testing.T) {
	tests := []struct {
		name string
		in   string
		eof  bool
		want response // size is checked against len(in) when complete
		err  string
	}{
		{name: "content-length", in: "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}",
			want: response{status: 200, ctype: []byte("application/json"), body: []byte("{}"), keep: true}},
		{name: "chunked with trailer", in: "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n" +
			"3;x=y\r\nabc\r\n2\r\nde\r\n0\r\nT: v\r\n\r\n",
			want: response{status: 200, ctype: []byte("text/event-stream"), body: []byte("abcde"), keep: true}},
		{name: "connection close", in: "HTTP/1.1 202 Accepted\r\nConnection: close\r\nContent-Length: 0\r\n\r\n",
			want: response{status: 202, body: []byte{}}},
		{name: "http/1.0 to eof", in: "HTTP/1.0 200 OK\r\n\r\nxyz", eof: true,
			want: response{status: 200, body: []byte("xyz")}},
		{name: "interim 100", in: "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n",
			want: response{status: 204, keep: true}},
		{name: "head incomplete", in: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n", err: errIncomplete.Error()},
		{name: "body incomplete", in: "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nab", err: errIncomplete.Error()},
		{name: "chunk incomplete", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab", err: errIncomplete.Error()},
		{name: "no last chunk", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n", err: errIncomplete.Error()},
		{name: "bad status", in: "HTTP/1.1 2x0 OK\r\n\r\n", err: "bad status line"},
		{name: "bad length", in: "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", err: "bad content-length"},
		{name: "bad chunk", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", err: "bad chunk size"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var dechunk []byte
			r, err := parseResponse([]byte(tt.in), tt.eof, &dechunk)
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want.status, r.status)
			assert.Equal(t, string(tt.want.ctype), string(r.ctype))
			assert.Equal(t, string(tt.want.body), string(r.body))
			assert.Equal(t, tt.want.keep, r.keep)
			assert.Equal(t, len(tt.in), r.size)
		})
	}
}

func TestSSEResponse(t *testing.T) {
	id := requestID(1, 7)
	ids := strconv.FormatInt(id, 10)
	body := "id: 0\ndata:\n\n" + // priming event
		"event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n" + // another id
		"event: message\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":" + ids + ",\r\ndata: \"result\":{}}\r\n\r\n"
	data, _, err := sseResponse([]byte(body), id, nil)
	require.NoError(t, err)
	assert.Equal(t, "{\"jsonrpc\":\"2.0\",\"id\":"+ids+",\n\"result\":{}}", string(data))
	_, _, err = sseResponse([]byte("data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n"), id, nil)
	assert.Error(t, err)
	// A longer id with the same prefix is another request's.
	_, _, err = sseResponse([]byte("data: {\"id\":"+ids+"1,\"result\":{}}\n\n"), id, nil)
	assert.Error(t, err)
}

func TestCheck(t *testing.T) {
	g := &generator{c: config{method: "tools/call"}}
	var ws workerState
	id := requestID(2, 9)
	ok := []byte(`{"jsonrpc":"2.0","id":` + strconv.FormatInt(id, 10) + `,"result":{"content":[{"type":"text","text":"m` + strconv.FormatInt(id, 10) + `"}]}}`)
	require.NoError(t, g.check(ok, id, &ws.p))
	assert.ErrorContains(t, g.check(bytes.Replace(ok, []byte(`"text":"m1`), []byte(`"text":"m2`), 1), id, &ws.p), "echo returned")
	assert.ErrorContains(t, g.check(ok, id+1, &ws.p), "response id")
	assert.ErrorContains(t, g.check([]byte(`{"jsonrpc":"2.0","id":`+strconv.FormatInt(id, 10)+`,"error":{"code":-32601}}`), id, &ws.p), "JSON-RPC error")
}
