package spec

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/binding/http/h1"
)

const httpConnect = `connect "http://localhost:8080/path"
  option http:transport "zilla://streams/net0"
  option zilla:window 8192
connected
`

const rawAccept = `accept "zilla://streams/net0"
  option zilla:window 8192
accepted
connected
`

const httpAccept = `accept "http://localhost:8080/"
  option http:transport "zilla://streams/net0"
  option zilla:window 8192
accepted
connected
`

const rawConnect = `connect "zilla://streams/net0"
  option zilla:window 8192
connected
`

// TestHTTPChunkedRequestBytes checks the bytes of a chunked request: one
// chunk per write, the Host header where write http:host put it, and the
// last chunk with the trailers at close; a small window splits the
// writes into several DATA frames, which the reader joins.
func TestHTTPChunkedRequestBytes(t *testing.T) {
	client := `connect "http://localhost:8080/path?q=1"
  option http:transport "zilla://streams/net0"
  option zilla:window 8192
connected
write http:method "PUT"
write http:header "Transfer-Encoding" "chunked"
write http:host
write http:header "X-Many" "a" "b"
write "hello"
write "world!"
write http:trailer "Digest" "abc"
write close
read http:status "201" "Created"
read http:header "x-many" "b"
read http:header "x-many" "a"
read closed
`
	server := `accept "zilla://streams/net0"
  option zilla:window 16
accepted
connected
read "PUT /path?q=1 HTTP/1.1\r\n"
     "Transfer-Encoding: chunked\r\n"
     "Host: localhost:8080\r\n"
     "X-Many: a\r\n"
     "X-Many: b\r\n"
     "\r\n"
     "5\r\nhello\r\n"
     "6\r\nworld!\r\n"
     "0\r\nDigest: abc\r\n\r\n"
write "HTTP/1.1 201 Created\r\nX-Many: a\r\nX-Many: b\r\nContent-Length: 0\r\n\r\n"
`
	require.NoError(t, runPairSrc(t, 5*time.Second, client, server))
}

// TestHTTPResponseUntilClose reads a response without Content-Length to
// the transport's END, and a request whose head a read http:status sends.
func TestHTTPResponseUntilClose(t *testing.T) {
	client := httpConnect + `write http:method "GET"
write http:host
read http:status "200" /O./
read "part one, "
read "part two"
read closed
`
	server := rawAccept + `read "GET /path HTTP/1.1\r\nHost: localhost:8080\r\n\r\n"
write "HTTP/1.1 200 OK\r\n\r\npart one, "
write "part two"
write close
`
	require.NoError(t, runPairSrc(t, 5*time.Second, client, server))
}

// TestHTTPUpgrade passes bytes through after a 101 response both ways.
func TestHTTPUpgrade(t *testing.T) {
	client := rawConnect + `write "GET / HTTP/1.1\r\nHost: localhost:8080\r\nUpgrade: echo\r\nConnection: upgrade\r\n\r\n"
read "HTTP/1.1 101 Switching Protocols\r\nUpgrade: echo\r\n\r\n"
write "ping"
read "pong"
write close
read closed
`
	server := httpAccept + `read http:header "Upgrade" /(?<proto>.*)/
write http:status "101" "Switching Protocols"
write http:header "Upgrade" ${proto}
write flush
read "ping"
write "pong"
read closed
write close
`
	require.NoError(t, runPairSrc(t, 5*time.Second, client, server))
}

// TestHTTPFailures checks that each mistake fails at its line with a
// message saying what was expected and what was observed.
func TestHTTPFailures(t *testing.T) {
	tests := []struct {
		name           string
		client, server string
		want           []string
	}{
		{
			name:   "content without a length",
			client: httpConnect + "write http:method \"POST\"\nwrite \"body\"\n",
			server: rawAccept + "read [0..1]\n",
			want:   []string{"client.rpt:6: sending DATA: request content needs an Upgrade, Content-Length or Transfer-Encoding: chunked header, or write http:content-length"},
		},
		{
			name:   "header missing",
			client: httpConnect + "write http:host\nwrite close\nread closed\n",
			server: httpAccept + "read http:header \"Accept\" \"*/*\"\n",
			want:   []string{`server.rpt:6: expected read http:header "Accept" "*/*", observed no header "Accept" ("Host: localhost:8080")`},
		},
		{
			name:   "header present though missing expected",
			client: httpConnect + "write http:host\nwrite close\nread closed\n",
			server: httpAccept + "read http:header \"host\" missing\n",
			want:   []string{`server.rpt:6: expected no header "host", observed ["localhost:8080"]`},
		},
		{
			name:   "status differs",
			client: httpConnect + "write close\nread http:status \"404\" /.*/\n",
			server: rawAccept + "read [0..41]\nwrite \"HTTP/1.1 200 OK\\r\\nContent-Length: 0\\r\\n\\r\\n\"\n",
			want:   []string{`client.rpt:6: expected read http:status "404" /.*/, observed status 200 "OK"`},
		},
		{
			name:   "method with two values",
			client: httpConnect + "write http:method \"GET\" \"POST\"\n",
			server: rawAccept,
			want:   []string{"client.rpt:5: write http:method wants a method, got 2 values"},
		},
		{
			name:   "not an http config",
			client: httpConnect + "write http:parameter \"a\" \"b\"\n",
			server: rawAccept,
			want:   []string{`unsupported command "write http:parameter" at client.rpt:5`},
		},
		{
			name:   "bad request head",
			client: rawConnect + "write \"GET / HTTP/1.1\\r\\nBad Header: x\\r\\n\\r\\n\"\n",
			server: httpAccept,
			want:   []string{`server.rpt:4: accepting http://localhost:8080/: request head "GET / HTTP/1.1\r\nBad Header: x\r\n\r\n": h1: 400 invalid header name`},
		},
		{
			name:   "transport not an address",
			client: "connect \"http://localhost:8080/\"\n  option http:transport 42\nconnected\n",
			server: rawAccept,
			want:   []string{"client.rpt:2: option http:transport wants an address"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := runPairSrc(t, 2*time.Second, tt.client, tt.server)
			require.Error(t, err)
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

// TestParseRequestHeadLenient checks the requests Netty reads and h1
// refuses: each is read with its own bytes and the head's true length.
func TestParseRequestHeadLenient(t *testing.T) {
	tests := []struct {
		head    string
		version string
		headers []httpField
	}{
		{"GET / HTTP/1.2\r\nHost: a\r\n\r\n", "HTTP/1.2", []httpField{{"Host", "a"}}},
		{"GET http://a:1/x HTTP/1.1\r\nX-One: 1\r\nX-Two: 2\r\n\r\n", "HTTP/1.1", []httpField{{"X-One", "1"}, {"X-Two", "2"}}},
		{"GET http://a/ HTTP/1.1\r\nTransfer-Encoding: Unknown\r\n\r\n", "HTTP/1.1", []httpField{{"Transfer-Encoding", "Unknown"}}},
	}
	for _, tt := range tests {
		var h h1.RequestHead
		buf := []byte(tt.head + "next")
		n, in, err := parseRequestHead(buf, &h)
		require.NoError(t, err, tt.head)
		assert.Equal(t, len(tt.head), n, tt.head)
		assert.Equal(t, tt.version, in.version, tt.head)
		assert.Equal(t, tt.headers, in.headers, tt.head)
	}
	var h h1.RequestHead
	_, _, err := parseRequestHead([]byte("GET / HTTP/1.1\r\n\r\n"), &h)
	assert.ErrorContains(t, err, "missing Host header", "origin-form needs a Host")
}

// TestTransportKey checks the transport an http:// address runs on.
func TestTransportKey(t *testing.T) {
	o := defaultOptions()
	assert.Equal(t, "tcp://localhost:80", transportKey("http://localhost/x", &o))
	assert.Equal(t, "tcp://localhost:8080", transportKey("http://localhost:8080/", &o))
	assert.Equal(t, "zilla://streams/app0", transportKey("zilla://streams/app0", &o))
	o.httpTransport = "zilla://streams/net0"
	assert.Equal(t, "zilla://streams/net0", transportKey("http://localhost:8080/", &o))
}

// TestHTTPOverTCP plays an http:// pair over real sockets, the transport
// defaulting to tcp://host:port of the address: a request with content
// whose length is computed, answered by a response with Connection:
// close, which the client reads to the end of the connection.
func TestHTTPOverTCP(t *testing.T) {
	port := freePort(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	addr := fmt.Sprintf("http://127.0.0.1:%d/echo", port)
	err := PlaySources(ctx, Live(Override("address", addr)),
		source(t, "client.rpt", `property address "http://127.0.0.1:1/"
connect ${address}
connected
write http:method "POST"
write http:host
write http:content-length
write "ping"
write close
read http:status "200" "OK"
read http:header "Connection" "close"
read "pong"
read closed
`),
		source(t, "server.rpt", fmt.Sprintf(`property address "http://127.0.0.1:1/"
accept ${address}
accepted
connected
read http:method "POST"
read http:header "Host" "127.0.0.1:%d"
read http:header "Content-Length" "4"
read "ping"
read closed
write http:header "Connection" "close"
write "pong"
write close
`, port)))
	require.NoError(t, err)
}

// TestHTTPRoutesByPath routes the requests of one connection to the
// accept whose path they fall under, and answers 404 to a path no accept
// takes.
func TestHTTPRoutesByPath(t *testing.T) {
	client := rawConnect + `write "GET /b/x HTTP/1.1\r\nHost: localhost:8080\r\n\r\n"
read "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nb"
write "GET /c HTTP/1.1\r\nHost: localhost:8080\r\n\r\n"
read "HTTP/1.1 404 Not Found\r\n\r\n"
`
	server := `accept "http://localhost:8080/a"
  option http:transport "zilla://streams/net0"
accept "http://localhost:8080/b"
  option http:transport "zilla://streams/net0"
accepted
connected
read http:method "GET"
write http:header "Content-Length" "1"
write "b"
`
	require.NoError(t, runPairSrc(t, 5*time.Second, client, server))
}
