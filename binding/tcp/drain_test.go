package tcp_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestServerDrain: once the engine drains, the port refuses new
// connections while an open one still echoes; Drain returns when that
// connection closes.
func TestServerDrain(t *testing.T) {
	port := freePort(t)
	e := startEngine(t, echoConfig(port), engineOptions{})
	c := dial(t, port)
	echo(t, c, "accepted")
	drained := make(chan error, 1)
	go func() { drained <- e.Drain(context.Background()) }()

	require.Eventually(t, func() bool {
		d, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			d.Close()
		}
		return err != nil
	}, 5*time.Second, 5*time.Millisecond, "the listener still accepts")
	select {
	case err := <-drained:
		t.Fatalf("Drain returned %v with a connection open", err)
	default:
	}

	echo(t, c, "still served")
	require.NoError(t, c.CloseWrite())
	_, err := c.Read(make([]byte, 1))
	assert.ErrorIs(t, err, io.EOF)
	c.Close()
	select {
	case err := <-drained:
		require.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("Drain did not return once the connection closed")
	}
}

// echo writes msg on c and checks the echo binding sends it back.
func echo(t *testing.T, c net.Conn, msg string) {
	t.Helper()
	_, err := c.Write([]byte(msg))
	require.NoError(t, err)
	got := make([]byte, len(msg))
	_, err = io.ReadFull(c, got)
	require.NoError(t, err)
	assert.Equal(t, msg, string(got))
}
