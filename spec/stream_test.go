package spec

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recorder wraps a network and logs the frames each side sends, in order.
type recorder struct {
	network
	mu   sync.Mutex
	sent []string // "client BEGIN", "server WINDOW", …
}

type recordedConn struct {
	conn
	r    *recorder
	side string
}

func (c *recordedConn) send(ctx context.Context, f frame) error {
	c.r.mu.Lock()
	c.r.sent = append(c.r.sent, c.side+" "+f.kind.String())
	c.r.mu.Unlock()
	return c.conn.send(ctx, f)
}

type recordedListener struct {
	listener
	r *recorder
}

func (l *recordedListener) accept(ctx context.Context) (conn, error) {
	c, err := l.listener.accept(ctx)
	if err != nil {
		return nil, err
	}
	return &recordedConn{conn: c, r: l.r, side: "server"}, nil
}

func (r *recorder) dial(ctx context.Context, uri string, o *streamOptions) (conn, error) {
	c, err := r.network.dial(ctx, uri, o)
	if err != nil {
		return nil, err
	}
	return &recordedConn{conn: c, r: r, side: "client"}, nil
}

func (r *recorder) listen(uri string, o *streamOptions) (listener, error) {
	l, err := r.network.listen(uri, o)
	if err != nil {
		return nil, err
	}
	return &recordedListener{listener: l, r: r}, nil
}

func (r *recorder) sentBy(side string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, s := range r.sent {
		if len(s) > len(side) && s[:len(side)] == side {
			out = append(out, s[len(side)+1:])
		}
	}
	return out
}

func playSrc(t *testing.T, net network, timeout time.Duration, srcs ...string) error {
	t.Helper()
	var sources []*Source
	for i, src := range srcs {
		name := []string{"client.rpt", "server.rpt", "third.rpt"}[i]
		s, err := Parse(name, []byte(src))
		require.NoError(t, err)
		sources = append(sources, &Source{Script: s, Src: []byte(src)})
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return playScripts(ctx, net, nil, nil, sources)
}

func TestChallengeBeforeWindow(t *testing.T) {
	r := &recorder{network: newMemNetwork()}
	err := playSrc(t, r, 2*time.Second, `connect "zilla://streams/app0"
connected
write advised zilla:challenge [0x01]
write "x"
`, `accept "zilla://streams/app0"
accepted
read advise zilla:challenge [0x01]
connected
read "x"
`)
	require.NoError(t, err)
	assert.Equal(t, []string{"CHALLENGE", "WINDOW", "BEGIN", "WINDOW"}, r.sentBy("server"))
}

func TestWindowBeforeBeginWithoutAdvisory(t *testing.T) {
	r := &recorder{network: newMemNetwork()}
	err := playSrc(t, r, 2*time.Second, `connect "zilla://streams/app0"
connected
`, `accept "zilla://streams/app0"
accepted
connected
`)
	require.NoError(t, err)
	assert.Equal(t, []string{"WINDOW", "BEGIN"}, r.sentBy("server"))
	assert.Equal(t, []string{"BEGIN", "WINDOW"}, r.sentBy("client"))
}

func TestUpdateNoneBlocksUntilAck(t *testing.T) {
	r := &recorder{network: newMemNetwork()}
	err := playSrc(t, r, 2*time.Second, `connect "zilla://streams/app0"
connected
write "hello"
`, `accept "zilla://streams/app0"
       option zilla:update "none"
accepted
connected
write "go"
read option zilla:ack 3
read "hel"
read option zilla:ack 2
read "lo"
`)
	require.NoError(t, err)
	// The client's DATA follows the server's acks: 3 bytes, then 2.
	r.mu.Lock()
	defer r.mu.Unlock()
	assert.Equal(t, []string{"client BEGIN", "server BEGIN", "client WINDOW", "server DATA",
		"server WINDOW", "client DATA", "server WINDOW", "client DATA"}, r.sent)
}

// TestZeroWindowTimesOut runs in a synctest bubble: the scripts play in
// memory, so the bubble's clock jumps to the deadline once both wait.
func TestZeroWindowTimesOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		err := playSrc(t, newMemNetwork(), 300*time.Millisecond, `connect "zilla://streams/app0"
connected
write "hello"
`, `accept "zilla://streams/app0"
       option zilla:window 0
accepted
connected
read "hello"
`)
		require.Error(t, err)
		assert.Equal(t, 300*time.Millisecond, time.Since(start))
		assert.Contains(t, err.Error(), "client.rpt:3: timed out waiting for WINDOW to send 5 bytes")
	})
}

func TestReadFlagsMismatch(t *testing.T) {
	err := playSrc(t, newMemNetwork(), 2*time.Second, `connect "zilla://streams/app0"
connected
write option zilla:flags "init"
write "abc"
`, `accept "zilla://streams/app0"
accepted
connected
read option zilla:flags "fin"
read "abc"
`)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `server.rpt:5: expected DATA with flags 0x01, observed DATA flags 0x02 "abc"`)
}

func TestCapturesAndRegex(t *testing.T) {
	err := playSrc(t, newMemNetwork(), 2*time.Second, `connect "zilla://streams/app0"
connected
write [0x00 0x03] "abc" [0xff] "key=value;"
read "abc" "value"
`, `accept "zilla://streams/app0"
accepted
connected
read (short:n) ([0..${n}]:body) (byte:b)
read /key=(?<v>[a-z]+);/
write ${body} ${v}
`)
	require.NoError(t, err)
}

func TestRegexNoMatch(t *testing.T) {
	err := playSrc(t, newMemNetwork(), 2*time.Second, `connect "zilla://streams/app0"
connected
write "key=VALUE;"
write close
`, `accept "zilla://streams/app0"
accepted
connected
read /key=(?<v>[a-z]+);/
`)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `server.rpt:4: expected DATA matching /key=(?<v>[a-z]+);/, observed DATA "key=VALUE;" then END`)
}

func TestRejectedAndConnectAborted(t *testing.T) {
	err := playSrc(t, newMemNetwork(), 2*time.Second, `connect "zilla://streams/app0"
connected
`, `accept "zilla://streams/app0"
rejected
`)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "client.rpt:2: expected BEGIN, observed RESET")
}

func TestSimplexServerCannotWrite(t *testing.T) {
	err := playSrc(t, newMemNetwork(), 2*time.Second, `connect "zilla://streams/app0"
       option zilla:transmission "simplex"
connected
write "one way"
`, `accept "zilla://streams/app0"
       option zilla:transmission "simplex"
accepted
connected
read "one way"
write "back"
`)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "server.rpt:6: cannot write on a simplex accept")
}

func TestSecondAcceptedTakesSecondConnection(t *testing.T) {
	err := playSrc(t, newMemNetwork(), 2*time.Second, `connect "zilla://streams/app0"
connected
write "A"
write notify ONE

connect await ONE "zilla://streams/app0"
connected
write "B"
`, `accept "zilla://streams/app0"
accepted
connected
read "B"
accepted
connected
read "A"
`)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `server.rpt:4: expected DATA "B", observed DATA "A"`)
}

func TestUnsupportedOption(t *testing.T) {
	err := playSrc(t, newMemNetwork(), time.Second, `connect "zilla://streams/app0"
        option zilla:sharedWindow 1
connected
`, `accept "zilla://streams/app0"
accepted
connected
`)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `unsupported option "zilla:sharedWindow" at client.rpt:2`)
}

// TestWriteFlushSendsNoFrame: in duplex the BEGIN is out at connected, so
// write flush has nothing to do; with a data extension pending it sends a
// DATA with a null payload.
func TestWriteFlushSendsNoFrame(t *testing.T) {
	r := &recorder{network: newMemNetwork()}
	err := playSrc(t, r, 2*time.Second, `connect "zilla://streams/app0"
connected
write "x"
write flush
write zilla:data.ext [0x01]
write flush
write close
`, `accept "zilla://streams/app0"
accepted
connected
read "x"
read zilla:data.ext [0x01]
read zilla:data.null
read closed
`)
	require.NoError(t, err)
	assert.Equal(t, []string{"BEGIN", "WINDOW", "DATA", "DATA", "END"}, r.sentBy("client"))
}

// TestCloseAndConnectAbortFrames checks what close and connect abort send.
func TestCloseAndConnectAbortFrames(t *testing.T) {
	r := &recorder{network: newMemNetwork()}
	err := playSrc(t, r, 2*time.Second, `connect "zilla://streams/app0"
connected
close
`, `accept "zilla://streams/app0"
accepted
connected
read closed
write aborted
`)
	require.NoError(t, err)
	assert.Equal(t, []string{"BEGIN", "WINDOW", "END", "RESET"}, r.sentBy("client"))

	r = &recorder{network: newMemNetwork()}
	err = playSrc(t, r, 2*time.Second, `connect "zilla://streams/app0"
        option zilla:transmission "half-duplex"
connect abort
`, `accept "zilla://streams/app0"
        option zilla:transmission "half-duplex"
accepted
read aborted
`)
	require.NoError(t, err)
	assert.Equal(t, []string{"BEGIN", "ABORT"}, r.sentBy("client"))
}

// TestWaitStopsAtItsFrame: a wait absorbs frames in order and stops at the
// one that satisfies it, so a WINDOW ahead of a RESET releases a write
// before the RESET is seen; drain then takes in the rest.
func TestWaitStopsAtItsFrame(t *testing.T) {
	q := newQueue()
	q.push(frame{kind: frameWindow, credit: 10})
	q.push(frame{kind: frameReset})
	s := &stream{q: q, sr: &scriptRun{script: &Script{File: "t.rpt"}, play: &play{}}}
	n := &Connected{Pos: Pos{File: "t.rpt", Line: 1, Col: 1}}
	require.NoError(t, s.wait(context.Background(), n, "credit", nil, func() bool { return s.credit >= 5 }))
	assert.Equal(t, int64(10), s.credit)
	assert.Nil(t, s.reset)
	assert.False(t, s.stopped)
	require.NoError(t, s.drain(context.Background(), n))
	assert.NotNil(t, s.reset)
	assert.True(t, s.aborted)
}
