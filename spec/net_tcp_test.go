package spec

import (
	"context"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/internal/enginetest"
)

func freePort(t *testing.T) int { return enginetest.FreePort(t) }

// TestLiveScriptPair plays a client and a server script over real loopback
// sockets: connect dials, accept listens, close is a half-close.
func TestLiveScriptPair(t *testing.T) {
	addr := fmt.Sprintf("tcp://127.0.0.1:%d", freePort(t))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := PlaySources(ctx, Live(Override("address", addr)),
		source(t, "client.rpt", `property address "tcp://127.0.0.1:1"
connect ${address}
connected
write "GET / HTTP/1.1\r\n\r\n"
write close
read /HTTP\/1\.1 (?<status>\d+) OK\r\n/
read "\r\n" "hi"
read closed
`),
		source(t, "server.rpt", `property address "tcp://127.0.0.1:1"
accept ${address}
accepted
connected
read "GET / HTTP/1.1\r\n"
read "\r\n"
read closed
write "HTTP/1.1 200 OK\r\n\r\nhi"
write close
`))
	require.NoError(t, err)
}

// TestLiveAgainstServer plays a client script against a Go echo server.
func TestLiveAgainstServer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		_, _ = io.Copy(c, c)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err = PlaySources(ctx, Live(Override("address", "tcp://"+l.Addr().String())),
		source(t, "client.rpt", `property address "tcp://127.0.0.1:1"
connect ${address}
connected
write "ping"
read "pong"
`))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `client.rpt:5: expected DATA "pong", observed DATA "ping"`)
}

func TestLiveConnectRefused(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := PlaySources(ctx, Live(), source(t, "client.rpt", fmt.Sprintf(`connect "tcp://127.0.0.1:%d"
connected
`, freePort(t))))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "client.rpt:2: connect tcp://127.0.0.1:")
	assert.Contains(t, err.Error(), "connection refused")
}
