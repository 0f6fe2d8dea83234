package tcp_test

import (
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/sluicehq/sluice/binding/tcp"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/frame"
	"github.com/sluicehq/sluice/internal/enginetest"
)

// TestServerWriteTimeout: a client that stops reading while the
// application has bytes for it is reset once its socket has taken none
// of them for write-timeout, rather than hold the bytes (and, through
// flow control, the application) for ever.
func TestServerWriteTimeout(t *testing.T) {
	clock := enginetest.NewClock()
	a := newApp("app0", 8192)
	port := freePort(t)
	startEngine(t, tcpBinding("server", serverOptions(port)+"\nwrite-timeout: 30s", "exit: app0"), engineOptions{
		external: map[string]engine.Binding{"app0": a},
		options:  []engine.Option{engine.WithClock(clock.Now)},
	})
	c := dial(t, port)
	p := a.accept(t)
	p.expect(t, frame.FrameBegin)
	p.expect(t, frame.FrameWindow)

	// Write until the socket and the binding's buffer are full.
	chunk := pattern(16<<10, 1)
	require.Eventually(t, func() bool {
		for {
			var avail int64
			p.on(t, func(*engine.Worker) { avail = p.out.Available() })
			if avail == 0 {
				break
			}
			if !p.write(t, chunk[:min(avail, int64(len(chunk)))]) {
				return false
			}
		}
		enginetest.Settle(t, p.a.e)
		var avail int64
		p.on(t, func(*engine.Worker) { avail = p.out.Available() })
		return avail == 0
	}, 10*time.Second, time.Millisecond, "the client's socket never filled")

	clock.Tick(t, p.a.e, 29*time.Second)
	enginetest.Settle(t, p.a.e)
	enginetest.Settle(t, p.a.e)
	for len(p.events) > 0 {
		ev := <-p.events
		require.Equal(t, frame.FrameWindow.String(), ev.t.String(), "before write-timeout")
	}
	clock.Tick(t, p.a.e, 2*time.Second)
	p.until(t, frame.FrameAbort)
	require.NoError(t, c.SetReadDeadline(time.Now().Add(5*time.Second)))
	_, err := io.ReadAll(c)
	require.ErrorIs(t, err, unix.ECONNRESET, "the connection is reset")
}

// TestServerWorkerCapacity: with engine.worker.capacity connections open
// on a worker, the next one is closed at once, and one warning says so
// however many follow; once a connection closes, another is served.
func TestServerWorkerCapacity(t *testing.T) {
	rec := &logRecorder{}
	port := freePort(t)
	startEngine(t, echoConfig(port), engineOptions{workers: 1, logger: slog.New(rec),
		options: []engine.Option{engine.WithSetting(tcp.SettingWorkerCapacity, "2")}})

	var open []net.Conn
	for range 2 {
		c := dial(t, port)
		_, err := c.Write([]byte("hi"))
		require.NoError(t, err)
		got := make([]byte, 2)
		require.NoError(t, c.SetReadDeadline(time.Now().Add(5*time.Second)))
		_, err = io.ReadFull(c, got)
		require.NoError(t, err)
		open = append(open, c)
	}
	for range 3 {
		c := dial(t, port)
		require.NoError(t, c.SetReadDeadline(time.Now().Add(5*time.Second)))
		b, err := io.ReadAll(c)
		require.NoError(t, err, "the connection over capacity is closed, not left waiting")
		assert.Empty(t, b)
	}
	assert.Len(t, rec.matching("at capacity"), 1)

	require.NoError(t, open[0].Close())
	require.Eventually(t, func() bool { return echoOnce(port, []byte("again")) == nil }, 5*time.Second, 10*time.Millisecond,
		"no connection served after one closed")
}

// TestServerAcceptOutOfFiles: while the process is out of file
// descriptors, the listener pauses and retries every acceptPause, and
// warns once per interval, saying how many pauses it held back, rather
// than once per pause; once descriptors are free the waiting client is
// served.
func TestServerAcceptOutOfFiles(t *testing.T) {
	clock := enginetest.NewClock()
	rec := &logRecorder{}
	port := freePort(t)
	e := startEngine(t, echoConfig(port), engineOptions{workers: 1, logger: slog.New(rec),
		options: []engine.Option{engine.WithClock(clock.Now)}})

	// The client's socket is made while there are descriptors left.
	cfd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	require.NoError(t, err)
	client := os.NewFile(uintptr(cfd), "client")
	defer client.Close()

	var lim unix.Rlimit
	require.NoError(t, unix.Getrlimit(unix.RLIMIT_NOFILE, &lim))
	low := lim
	low.Cur = uint64(cfd + 1)
	require.NoError(t, unix.Setrlimit(unix.RLIMIT_NOFILE, &low))
	var fill []int
	restore := func() {
		for _, fd := range fill {
			_ = unix.Close(fd)
		}
		fill = nil
		_ = unix.Setrlimit(unix.RLIMIT_NOFILE, &lim)
	}
	defer restore()
	// Every free descriptor below the limit is taken.
	for {
		fd, err := unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			require.ErrorIs(t, err, unix.EMFILE)
			break
		}
		fill = append(fill, fd)
	}
	require.NoError(t, unix.Connect(cfd, &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}))
	require.Eventually(t, func() bool { return len(rec.matching("accept paused")) == 1 }, 5*time.Second, time.Millisecond)

	// Thirty pauses within the interval: no more warnings.
	for range 30 {
		clock.Tick(t, e, 100*time.Millisecond)
		enginetest.Settle(t, e)
	}
	assert.Len(t, rec.matching("accept paused"), 1)
	// The interval over, the next pause warns, with the count held back.
	clock.Tick(t, e, 10*time.Second)
	require.Eventually(t, func() bool { return len(rec.matching("accept paused")) == 2 }, 5*time.Second, time.Millisecond)
	warnings := rec.matching("accept paused")
	assert.Contains(t, warnings[1], "paused since last warning=")
	assert.NotContains(t, warnings[1], "paused since last warning=0")

	restore()
	clock.Tick(t, e, 100*time.Millisecond)
	_, err = unix.Write(cfd, []byte("back"))
	require.NoError(t, err)
	require.NoError(t, unix.Shutdown(cfd, unix.SHUT_WR))
	c, err := net.FileConn(client)
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.SetReadDeadline(time.Now().Add(5*time.Second)))
	got, err := io.ReadAll(c)
	require.NoError(t, err)
	assert.Equal(t, "back", strings.TrimSpace(string(got)))
}
