package server_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/binding"
	_ "github.com/sluicehq/sluice/binding/echo"
	"github.com/sluicehq/sluice/binding/http"
	"github.com/sluicehq/sluice/binding/http/h1"
	_ "github.com/sluicehq/sluice/binding/http/server"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/frame"
	"github.com/sluicehq/sluice/engine/ring"
	"github.com/sluicehq/sluice/internal/enginetest"
	"github.com/sluicehq/sluice/spec"
)

// driverBinding is the external binding the tests write into net0 from; it
// refuses every stream routed to it, so it doubles as an application that
// resets each request.
const driverBinding = "driver"

// startServerEngine starts an engine on the configuration src, with the driver
// attached and then opts, and stops it when the test ends.
func startServerEngine(t testing.TB, src string, opts ...engine.Option) (*engine.Engine, error) {
	t.Helper()
	cfg, err := enginetest.Load("server.yaml", src, driverBinding)
	if err != nil {
		return nil, err
	}
	all := []engine.Option{
		engine.WithWorkers(2), engine.WithRingCapacity(1 << 20), engine.WithPin(false),
		engine.WithLogger(enginetest.Quiet), engine.WithBindings(binding.Factory), engine.WithLabels(engine.NewLabels()),
		engine.WithExternal(driverBinding, enginetest.Refuse{}),
	}
	e, err := engine.New(cfg, append(all, opts...)...)
	if err != nil {
		return nil, err
	}
	if err := e.Start(); err != nil {
		return nil, err
	}
	t.Cleanup(func() { enginetest.Stop(t, e) })
	return e, nil
}

func TestServerConfigErrors(t *testing.T) {
	tests := []struct {
		name    string
		options string // the net0 binding's lines after kind
		want    string // a substring of the error
	}{
		{
			name:    "route exit names no binding",
			options: "    routes:\n      - exit: nowhere\n",
			want:    `no binding named "nowhere"`,
		},
		{
			name:    "neither exit nor routes",
			options: "",
			want:    "a server needs an exit or routes",
		},
		{
			name:    "unknown option",
			options: "    exit: driver\n    options:\n      timeout: 5\n",
			want:    "timeout",
		},
		{
			name:    "target limit below its minimum",
			options: "    exit: driver\n    options:\n      limits:\n        target: 8\n",
			want:    "target",
		},
		{
			name:    "header-bytes limit not a number",
			options: "    exit: driver\n    options:\n      limits:\n        header-bytes: lots\n",
			want:    "header-bytes",
		},
		{
			name:    "unsupported version",
			options: "    exit: driver\n    options:\n      versions: [h2]\n",
			want:    "versions",
		},
		{
			name: "authorization names no guard",
			options: "    exit: driver\n    options:\n      authorization:\n        jwt0:\n" +
				"          credentials:\n            headers:\n              authorization: Bearer {credentials}\n",
			want: "jwt0",
		},
		{
			name: "credentials without a placeholder",
			options: "    exit: driver\n    options:\n      authorization:\n        jwt0:\n" +
				"          credentials:\n            headers:\n              authorization: Bearer\n",
			want: "authorization",
		},
		{
			name:    "route header pattern malformed",
			options: "    routes:\n      - exit: driver\n        when:\n          - headers:\n              :path: /a[\n",
			want:    "route header :path",
		},
		{
			name:    "max-idle negative",
			options: "    exit: driver\n    options:\n      max-idle: -1\n",
			want:    "max-idle",
		},
		{
			name:    "max-idle not a number",
			options: "    exit: driver\n    options:\n      max-idle: many\n",
			want:    "max-idle",
		},
		{
			name:    "route condition with an unknown field",
			options: "    routes:\n      - exit: driver\n        when:\n          - method: GET\n",
			want:    "method",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := startServerEngine(t, "name: test\nbindings:\n  net0:\n    type: http\n    kind: server\n"+tt.options)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	t.Run("valid", func(t *testing.T) {
		_, err := startServerEngine(t, "name: test\nbindings:\n  net0:\n    type: http\n    kind: server\n    exit: driver\n"+
			"    options:\n      limits:\n        target: 64\n        headers: 8\n        header-bytes: 512\n        body: 64\n")
		require.NoError(t, err)
	})
}

// TestServerGarbledRequests writes a few hundred mutated requests into the
// server through the engine, each on its own connection, split at random
// into DATA frames and followed by END. Requests for /a* go to the driver,
// which refuses them, /b* to an echo binding, which answers with the
// request, and the rest get 404. Whatever the bytes, the server must not
// panic, must answer with well-formed response heads or close without
// one, must end its side of every connection, and must give back every
// buffer slot and stream it held.
func TestServerGarbledRequests(t *testing.T) {
	configs := []struct{ name, limits string }{
		{name: "default limits"},
		{name: "tight limits", limits: "    options:\n      limits:\n        target: 32\n        headers: 4\n        header-bytes: 256\n        body: 8\n"},
	}
	for _, cfg := range configs {
		t.Run(cfg.name, func(t *testing.T) {
			seed := uint64(time.Now().UnixNano())
			t.Logf("seed %d", seed)
			rng := rand.New(rand.NewPCG(seed, 0x5eed))
			e, err := startServerEngine(t, "name: test\nbindings:\n  net0:\n    type: http\n    kind: server\n"+cfg.limits+
				"    routes:\n      - exit: driver\n        when:\n          - headers:\n              :path: /a*\n"+
				"      - exit: echo0\n        when:\n          - headers:\n              :path: /b*\n"+
				"  echo0:\n    type: echo\n    kind: server\n")
			require.NoError(t, err)
			// A few connections at a time: the engine's rings refuse
			// frames once full, and every binding here (the server, echo)
			// drops a frame it cannot send, so more bytes in flight than
			// the rings hold would hang connections whatever the server
			// did.
			const conns, concurrent = 300, 8
			results := make(chan *garbledConn, conns)
			open := map[*garbledConn]bool{}
			deadline := time.After(20 * time.Second)
			for i := range conns + concurrent {
				if i >= concurrent {
					select {
					case c := <-results:
						delete(open, c)
						c.check(t)
					case <-deadline:
						for c := range open {
							t.Errorf("connection still open after input %s", quoteInput(c.input))
						}
						t.FailNow()
					}
				}
				if i < conns {
					c := newGarbledConn(e, i%e.Workers(), garble(rng), rng, results)
					open[c] = true
					c.w.Dispatch(c.start)
				}
			}
			// Every slot and stream the connections held is released
			// once the last frames are through the rings.
			require.Eventually(t, func() bool { return enginetest.Released(e) }, 2*time.Second, 10*time.Millisecond,
				"buffer slots or streams still held after every connection ended")
		})
	}
}

// TestServerInputEnds ends the input, after what it holds, at points where
// the server must still answer (or give up) by itself: requests are
// routed to the echo binding, which answers each as it is forwarded.
func TestServerInputEnds(t *testing.T) {
	tests := []struct {
		name, input string
		want        []string // in the output, in order
	}{
		{
			name:  "after a request",
			input: "GET /b HTTP/1.1\r\nHost: localhost\r\n\r\n",
			want:  []string{"HTTP/1.1 200 OK\r\n", "Transfer-Encoding: chunked\r\n\r\n", "0\r\n\r\n"},
		},
		{
			name: "in a pipelined body",
			input: "GET /b HTTP/1.1\r\nHost: localhost\r\n\r\n" +
				"POST /b HTTP/1.1\r\nHost: localhost\r\nContent-Length: 9\r\n\r\nabc",
			want: []string{"HTTP/1.1 200 OK\r\n", "0\r\n\r\n", "HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n"},
		},
		{
			name: "in a pipelined head",
			input: "GET /b HTTP/1.1\r\nHost: localhost\r\n\r\n" +
				"GET /b HTTP/1.1\r\nHost: loc",
			want: []string{"HTTP/1.1 200 OK\r\n", "0\r\n\r\n", "HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n"},
		},
		{
			name:  "after a whole body the app has not read",
			input: "POST /b HTTP/1.1\r\nHost: localhost\r\nContent-Length: 3\r\n\r\nabc",
			want:  []string{"HTTP/1.1 200 OK\r\n", "abc"},
		},
	}
	e, err := startServerEngine(t, "name: test\nbindings:\n  net0:\n    type: http\n    kind: server\n    exit: echo0\n"+
		"  echo0:\n    type: echo\n    kind: server\n")
	require.NoError(t, err)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := runWholeInput(t, e, tt.input)
			assert.Equal(t, "end", c.closed)
			out := string(c.out)
			for _, w := range tt.want {
				i := strings.Index(out, w)
				require.GreaterOrEqual(t, i, 0, "want %q in what is left of the output %q", w, out)
				out = out[i+len(w):]
			}
		})
	}
}

// garbleSeeds are requests, valid and not, that garble mutates.
var garbleSeeds = []string{
	"GET /a HTTP/1.1\r\nHost: localhost\r\n\r\n",
	"GET /b?x=1 HTTP/1.1\r\nHost: localhost\r\nAccept: */*\r\nConnection: keep-alive\r\n\r\n",
	"POST /a HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\n\r\nhello",
	"POST /b HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
	"POST /a HTTP/1.1\r\nHost: localhost\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\nabc",
	"HEAD /b HTTP/1.1\r\nHost: localhost\r\n\r\nGET /b HTTP/1.1\r\nHost: localhost\r\n\r\n",
	"GET /b HTTP/1.0\r\n\r\n",
	"OPTIONS * HTTP/1.1\r\nHost: localhost\r\n\r\n",
	"CONNECT localhost:443 HTTP/1.1\r\nHost: localhost:443\r\n\r\n",
	"GET http://localhost/a HTTP/1.1\r\nHost: localhost\r\n\r\n",
	"GET /b HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
	"GET /b HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: gzip\r\n\r\n",
	"GET /b HTTP/1.1\r\nHost: localhost\r\n Folded: value\r\n\r\n",
	"GET /b HTTP/1.1\r\nHost: localhost\r\n\r\nPOST /b HTTP/1.1\r\nHost: localhost\r\nContent-Length: 9\r\n\r\nabc",
}

// garblePieces are fragments garble splices in.
var garblePieces = []string{
	"\r\n", "\n", "\r", " ", "\t", ":", "\x00", "\x7f", "\xff", "HTTP/1.1", "HTTP/2.0", "HTTP/1.", "/",
	"Content-Length: ", "Content-Length: 99999999999999999999\r\n", "Content-Length: -1\r\n",
	"Transfer-Encoding: chunked\r\n", "Transfer-Encoding: chunked, gzip\r\n", "Host: \r\n", "Host: a\r\nHost: b\r\n",
	"Connection: close\r\n", "Connection: x-hop\r\nX-Hop: 1\r\n", "Expect: 100-continue\r\n",
	"ffffffffffffffffff\r\n", "0\r\n\r\n", "5;ext=\"v\"\r\nhello\r\n",
}

// garble returns a mutation of a seed request.
func garble(rng *rand.Rand) []byte {
	b := []byte(garbleSeeds[rng.IntN(len(garbleSeeds))])
	for range 1 + rng.IntN(4) {
		at := rng.IntN(len(b) + 1)
		switch rng.IntN(7) {
		case 0: // flip a byte
			if at < len(b) {
				b[at] = byte(rng.IntN(256))
			}
		case 1: // insert a fragment
			b = append(b[:at], append([]byte(garblePieces[rng.IntN(len(garblePieces))]), b[at:]...)...)
		case 2: // delete a range
			end := min(len(b), at+1+rng.IntN(8))
			b = append(b[:at], b[end:]...)
		case 3: // repeat a range, sometimes many times
			end := min(len(b), at+1+rng.IntN(16))
			b = append(b[:at], append(bytes.Repeat(b[at:end], 1+rng.IntN(64)), b[at:]...)...)
		case 4: // cut short
			b = b[:at]
		case 5: // a long run of one byte
			b = append(b[:at], append(bytes.Repeat([]byte{"a/ \r\n:0"[rng.IntN(7)]}, rng.IntN(20000)), b[at:]...)...)
		case 6: // another request after this one
			b = append(b, garbleSeeds[rng.IntN(len(garbleSeeds))]...)
		}
	}
	return b
}

// garbledConn is one connection into net0. Its fields are the worker's
// while the connection runs; the results channel hands it to the test.
type garbledConn struct {
	w                  *engine.Worker
	input              []byte
	toSend             []byte
	splits             []int
	originID, routedID int64
	initialID, replyID int64
	seq, ack           int64 // our initial stream: sent, and acknowledged by the server
	max                int32
	inSeq              int64 // the server's reply: received
	ended, refused     bool  // END sent; RESET received
	out                []byte
	closed             string // "end" or "abort", once the reply is over
	err                error
	results            chan<- *garbledConn
	buf                []byte
}

// runWholeInput sends input, in one piece, on one connection into net0 and
// returns the connection once the server has closed its reply, failing
// the test if that takes over five seconds or a frame could not be sent
// or read.
func runWholeInput(t *testing.T, e *engine.Engine, input string) *garbledConn {
	t.Helper()
	c := runInput(t, e, 0, []byte(input), nil)
	require.NoError(t, c.err)
	return c
}

// runInput sends input on one connection into net0 on worker, split into
// DATA frames as rng draws them (in one piece when rng is nil), and
// returns the connection once the server has closed its reply, failing
// the test if that takes over five seconds.
func runInput(t *testing.T, e *engine.Engine, worker int, input []byte, rng *rand.Rand) *garbledConn {
	t.Helper()
	results := make(chan *garbledConn, 1)
	c := newGarbledConn(e, worker, input, rng, results)
	c.w.Dispatch(c.start)
	select {
	case c = <-results:
	case <-time.After(5 * time.Second):
		t.Fatalf("timed out: the server left the connection open after input %s", quoteInput(input))
	}
	return c
}

func newGarbledConn(e *engine.Engine, worker int, input []byte, rng *rand.Rand, results chan<- *garbledConn) *garbledConn {
	c := &garbledConn{w: e.Worker(worker), input: input, toSend: input, results: results, buf: make([]byte, 64<<10)}
	c.originID, _ = e.ResolveID(driverBinding)
	c.routedID, _ = e.ResolveID("net0")
	for n := len(input); n > 0; {
		k := n
		if rng != nil {
			k = 1 + rng.IntN(min(n, 1+rng.IntN(512)))
		}
		c.splits = append(c.splits, k)
		n -= k
	}
	return c
}

func (c *garbledConn) start() {
	c.initialID, c.replyID = enginetest.StreamIDs(c.w, c.routedID)
	initial := enginetest.Head{OriginID: c.originID, RoutedID: c.routedID, StreamID: c.initialID}
	if err := enginetest.OpenStream(c.w, c.buf, initial, nil, c.onMessage); err != nil {
		c.finish(err)
	}
}

func (c *garbledConn) onMessage(t frame.FrameType, buf []byte) {
	if c.results == nil {
		return
	}
	var h frame.Frame
	if !h.TryWrap(buf, 0, len(buf)) {
		c.finish(fmt.Errorf("malformed %s frame", t))
		return
	}
	switch {
	case t == frame.FrameWindow && h.StreamID() == c.initialID:
		c.ack, c.max = h.Acknowledge(), h.Maximum()
		c.pump()
	case t == frame.FrameReset && h.StreamID() == c.initialID:
		c.refused = true
	case t == frame.FrameBegin && h.StreamID() == c.replyID:
		c.inSeq = h.Sequence()
		c.grant()
	case t == frame.FrameData && h.StreamID() == c.replyID:
		var d frame.Data
		if !d.TryWrap(buf, 0, len(buf)) {
			c.finish(errors.New("malformed DATA"))
			return
		}
		c.out = append(c.out, d.Payload()...)
		c.inSeq = d.Sequence() + int64(d.Reserved())
		c.grant()
	case t == frame.FrameEnd && h.StreamID() == c.replyID:
		c.closed = "end"
		c.finish(nil)
	case t == frame.FrameAbort && h.StreamID() == c.replyID:
		c.closed = "abort"
		c.finish(nil)
	}
}

// pump sends what the server's window allows of the input, in the planned
// garblePieces, then END.
func (c *garbledConn) pump() {
	if c.ended {
		return
	}
	for len(c.toSend) > 0 && !c.refused {
		n := min(c.splits[0], len(c.toSend), int(c.ack+int64(c.max)-c.seq))
		if n <= 0 {
			return
		}
		initial := enginetest.Head{OriginID: c.originID, RoutedID: c.routedID, StreamID: c.initialID, Seq: c.seq, Ack: c.ack, Max: c.max}
		full, err := enginetest.SendData(c.w, c.buf, initial, c.toSend[:n])
		if full {
			// The rings refuse rather than block: try again later.
			c.w.Dispatch(c.pump)
			return
		}
		if err != nil {
			c.finish(err)
			return
		}
		c.seq += int64(n)
		c.toSend = c.toSend[n:]
		if c.splits[0] -= n; c.splits[0] == 0 {
			c.splits = c.splits[1:]
		}
	}
	if len(c.toSend) == 0 {
		c.close(frame.FrameEnd)
	}
}

// close ends (or aborts) our side once, unless the server reset it.
func (c *garbledConn) close(t frame.FrameType) {
	if c.ended || c.refused {
		return
	}
	c.ended = true
	initial := enginetest.Head{OriginID: c.originID, RoutedID: c.routedID, StreamID: c.initialID, Seq: c.seq, Ack: c.ack, Max: c.max}
	err := enginetest.SendFrame(c.w, c.buf, t, initial)
	if errors.Is(err, ring.ErrFull) {
		c.ended = false
		c.w.Dispatch(func() { c.close(t) })
		return
	}
	if err != nil && c.err == nil {
		c.err = err
	}
}

// grant acknowledges the reply bytes read and keeps 64 KiB open.
func (c *garbledConn) grant() {
	reply := enginetest.Head{OriginID: c.originID, RoutedID: c.routedID, StreamID: c.replyID, Seq: c.inSeq, Ack: c.inSeq, Max: 64 << 10}
	err := enginetest.SendFrame(c.w, c.buf, frame.FrameWindow, reply)
	if errors.Is(err, ring.ErrFull) {
		c.w.Dispatch(c.grant)
		return
	}
	if err != nil {
		c.finish(err)
	}
}

// finish hands the connection to the test once its reply is over,
// aborting our side if the input was not all sent.
func (c *garbledConn) finish(err error) {
	if c.results == nil {
		return
	}
	if c.err == nil {
		c.err = err
	}
	c.close(frame.FrameAbort)
	results := c.results
	c.results = nil
	results <- c
}

// check judges the connection's outcome.
func (c *garbledConn) check(t *testing.T) {
	t.Helper()
	input := quoteInput(c.input)
	require.NoError(t, c.err, "input %s", input)
	if len(c.out) == 0 {
		return // closed without a response
	}
	// The first final response: interim 100 Continue heads may come
	// first.
	var resp h1.ResponseHead
	for out := c.out; ; {
		n, err := h1.ParseResponseHead(out, &resp, h1.Limits{})
		if c.closed == "abort" && errors.Is(err, h1.ErrIncomplete) {
			return
		}
		require.NoError(t, err, "input %s: response %q", input, c.out)
		assert.Equal(t, 1, resp.Minor, "input %s: response %q", input, c.out)
		if resp.Status != 100 {
			break
		}
		out = out[n:]
	}
	assert.GreaterOrEqual(t, resp.Status, 200, "input %s: response %q", input, c.out)
}

// quoteInput quotes a connection's input for a failure message.
func quoteInput(b []byte) string {
	q := strconv.Quote(string(b))
	if len(q) > 300 {
		q = q[:300] + "…"
	}
	return q
}

// TestScenarios plays scripts/http: each pair peer to peer, then each
// network client script into the http server binding, net0, with the
// application server script, if any, as its exit (see
// spec.RunServerScenarios for the configurations).
func TestScenarios(t *testing.T) {
	spec.RunServerScenarios(t, filepath.Join("..", "..", "..", "scripts", "http"))
}

// TestServerHeaderSetting: with the http.server.header engine setting,
// the server adds a Server field right after the status line of every
// response, the app's and its own, unless the app sent one. Its own
// answers are Zilla's: bodiless, closing, with Zilla's reason phrases.
func TestServerHeaderSetting(t *testing.T) {
	e, err := startServerEngine(t, "name: test\nbindings:\n  net0:\n    type: http\n    kind: server\n"+
		"    routes:\n      - exit: echo0\n        when:\n          - headers:\n              :path: /b\n"+
		"  echo0:\n    type: echo\n    kind: server\n",
		engine.WithSetting(http.SettingServerHeader, "Zilla"))
	require.NoError(t, err)
	tests := []struct{ name, input, want string }{
		{"app response", "GET /b HTTP/1.1\r\nHost: localhost\r\n\r\n",
			"HTTP/1.1 200 OK\r\nServer: Zilla\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"},
		{"app response with its own", "GET /b HTTP/1.1\r\nHost: localhost\r\nserver: mine\r\n\r\n",
			"HTTP/1.1 200 OK\r\nServer: mine\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"},
		{"no route", "GET /a HTTP/1.1\r\nHost: localhost\r\n\r\n",
			"HTTP/1.1 404 Not Found\r\nServer: Zilla\r\nConnection: close\r\n\r\n"},
		{"bad request", "GET /a\r\n\r\n",
			"HTTP/1.1 400 Bad Request\r\nServer: Zilla\r\nConnection: close\r\n\r\n"},
		{"obsolete line folding", "GET /b HTTP/1.1\r\nHost: localhost\r\nX: a\r\n b\r\n\r\n",
			"HTTP/1.1 400 Bad Request - obsolete line folding not supported\r\nServer: Zilla\r\nConnection: close\r\n\r\n"},
		{"unimplemented method", "BREW /b HTTP/1.1\r\nHost: localhost\r\n\r\n",
			"HTTP/1.1 501 Not Implemented\r\nServer: Zilla\r\nConnection: close\r\n\r\n"},
		{"absolute-form without Host", "GET http://localhost/b HTTP/1.1\r\n\r\n",
			"HTTP/1.1 200 OK\r\nServer: Zilla\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := runWholeInput(t, e, tt.input)
			assert.Equal(t, tt.want, string(c.out))
		})
	}
}

// TestServerAbsoluteFormRoutes: an absolute-form target routes on the
// :path the app is sent, its path and query rooted at "/", whatever the
// Host field says.
func TestServerAbsoluteFormRoutes(t *testing.T) {
	e, err := startServerEngine(t, "name: test\nbindings:\n  net0:\n    type: http\n    kind: server\n"+
		"    routes:\n      - exit: echo0\n        when:\n          - headers:\n              :path: /mcp\n"+
		"      - exit: echo0\n        when:\n          - headers:\n              :path: /?*\n"+
		"  echo0:\n    type: echo\n    kind: server\n")
	require.NoError(t, err)
	const ok, notFound = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", "HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n"
	tests := []struct{ name, input, want string }{
		{"path", "GET http://localhost:7190/mcp HTTP/1.1\r\nHost: localhost:7190\r\n\r\n", ok},
		{"upper-case scheme", "GET HTTP://localhost:7190/mcp HTTP/1.1\r\nHost: localhost:7190\r\n\r\n", ok},
		{"another host field", "GET http://localhost:7190/mcp HTTP/1.1\r\nHost: other\r\n\r\n", ok},
		{"query without a path", "GET http://localhost?x=1 HTTP/1.1\r\nHost: localhost\r\n\r\n", ok},
		{"another path", "GET http://localhost:7190/mcp/x HTTP/1.1\r\nHost: localhost:7190\r\n\r\n", notFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := runWholeInput(t, e, tt.input)
			assert.Equal(t, tt.want, string(c.out))
		})
	}
}
