package server_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	nethttp "net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/binding"
	"github.com/sluicehq/sluice/binding/http"
	"github.com/sluicehq/sluice/binding/internal/streams"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/frame"
	"github.com/sluicehq/sluice/internal/enginetest"
)

// earlyBinding is the external app that answers before it has read the
// request body (earlyApp).
const earlyBinding = "early"

// earlyBody is the body of each of earlyApp's responses.
const earlyBody = "early"

// earlyApp is an app that answers a request before reading all of its
// body: 200 with the body "early", framed by content-length when the
// :path holds "L" and chunked otherwise. When the :path holds "W" it
// first offers the request 64 KiB of credit, so that the body flows (and
// 100 Continue goes out), and answers at the body's first DATA or its
// end; otherwise it offers no credit and answers at once, and when the
// :path holds "R" it then refuses the rest of the body with RESET.
type earlyApp struct{}

func (earlyApp) Attach(w *engine.Worker, _ *engine.BindingConfig) (engine.Handler, error) {
	h := &earlyHandler{w: w}
	typeID := w.Labels().Supply("http")
	h.chunked = buildResponseEx(typeID, false)
	h.length = buildResponseEx(typeID, true)
	return h, nil
}

// buildResponseEx builds the HttpBeginEx of earlyApp's response.
func buildResponseEx(typeID int32, length bool) []byte {
	buf := make([]byte, 256)
	var b http.HttpBeginExBuilder
	hs := b.Wrap(buf, 0, len(buf)).TypeID(typeID).Headers()
	hs.Item().Name(":status").Value("200")
	if length {
		hs.Item().Name("content-length").Value("5")
	}
	n, err := b.BuildLimit()
	if err != nil {
		panic(err)
	}
	return buf[:n]
}

type earlyHandler struct {
	w               *engine.Worker
	begin           frame.Begin
	ex              http.HttpBeginEx
	chunked, length []byte
}

func (h *earlyHandler) NewStream(_ frame.FrameType, buf []byte) engine.MessageConsumer {
	s := &earlyStream{h: h}
	if !streams.Accept(&s.Stream, h.w, &h.begin, buf) {
		return nil
	}
	return s.onMessage
}

type earlyStream struct {
	engine.Stream
	h                              *earlyHandler
	ext                            []byte
	waiting, refuse, answered, out bool
}

func (s *earlyStream) onMessage(t frame.FrameType, buf []byte) {
	switch t {
	case frame.FrameBegin:
		b, err := s.OnBegin(buf)
		if err != nil {
			return
		}
		s.ext = s.h.chunked
		if ext := b.Extension(); s.h.ex.TryWrap(ext, 0, len(ext)) {
			var hd http.HttpHeader
			for c := s.h.ex.Headers().Cursor(); http.NextHeader(&c, &hd); {
				if string(hd.Name()) == ":path" {
					for _, ch := range hd.Value() {
						switch ch {
						case 'L':
							s.ext = s.h.length
						case 'W':
							s.waiting = true
						case 'R':
							s.refuse = true
						}
					}
				}
			}
		}
		if s.waiting {
			s.In.Max = 64 << 10
			_ = s.Window()
			return
		}
		s.answer()
		if s.refuse {
			_ = s.Reset(nil)
		}
	case frame.FrameData:
		if _, err := s.OnData(buf); err == nil {
			s.In.Ack = s.In.Seq
			_ = s.Window()
			s.answer()
		}
	case frame.FrameEnd:
		if _, err := s.OnEnd(buf); err == nil {
			s.answer()
		}
	case frame.FrameAbort:
		_, _ = s.OnAbort(buf)
	case frame.FrameWindow:
		if _, err := s.OnWindow(buf); err == nil {
			s.send()
		}
	case frame.FrameReset:
		_, _ = s.OnReset(buf)
	}
}

// answer begins the response, once.
func (s *earlyStream) answer() {
	if s.answered {
		return
	}
	s.answered = true
	_ = s.Begin(s.ext)
}

// send writes the body and ends the response once the server's window
// takes it.
func (s *earlyStream) send() {
	if s.out || !s.answered || !s.Out.CanSend(len(earlyBody)) {
		return
	}
	s.out = true
	_ = s.Data(frame.FlagsDataMessage, []byte(earlyBody), nil)
	_ = s.End(nil)
}

// startEarlyEngine starts an engine whose http server, net0, routes /e*
// to earlyApp and /b* to echo (the rest 404), with limits.body 4096.
func startEarlyEngine(t testing.TB) *engine.Engine {
	t.Helper()
	cfg, err := enginetest.Load("server.yaml", "name: test\nbindings:\n  net0:\n    type: http\n    kind: server\n"+
		"    options:\n      limits:\n        body: 4096\n"+
		"    routes:\n      - exit: early\n        when:\n          - headers:\n              :path: /e*\n"+
		"      - exit: echo0\n        when:\n          - headers:\n              :path: /b*\n"+
		"  echo0:\n    type: echo\n    kind: server\n", driverBinding, earlyBinding)
	require.NoError(t, err)
	e, err := engine.New(cfg, engine.WithWorkers(2), engine.WithRingCapacity(1<<20), engine.WithPin(false),
		engine.WithLogger(enginetest.Quiet), engine.WithBindings(binding.Factory), engine.WithLabels(engine.NewLabels()),
		engine.WithExternal(driverBinding, enginetest.Refuse{}), engine.WithExternal(earlyBinding, earlyApp{}))
	require.NoError(t, err)
	require.NoError(t, e.Start())
	t.Cleanup(func() { enginetest.Stop(t, e) })
	return e
}

// TestServerAnswerBeforeBody: an app may answer before it has read the
// request body. When the response leaves the connection open, the rest of
// the body is read and dropped, and the next request is served; when the
// client was owed 100 Continue, it may never send the body, so the
// response closes the connection instead (as Go's server does).
func TestServerAnswerBeforeBody(t *testing.T) {
	e := startEarlyEngine(t)
	const (
		next     = "GET /b HTTP/1.1\r\nHost: x\r\n\r\n"
		nextResp = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
		early    = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nearly\r\n0\r\n\r\n"
		earlyL   = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nearly"
		closing  = "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nearly"
		closingL = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nearly"
	)
	tests := []struct{ name, input, want string }{
		{"content-length", "POST /e HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello" + next, early + nextResp},
		{"content-length, framed by length", "POST /eL HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello" + next, earlyL + nextResp},
		{"chunked", "POST /e HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n3;x=y\r\nabc\r\n0\r\nT: 1\r\n\r\n" + next,
			early + nextResp},
		{"after the first data", "POST /eW HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello" + next, early + nextResp},
		{"continue sent", "POST /eW HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\nhello" + next,
			"HTTP/1.1 100 Continue\r\n\r\n" + early + nextResp},
		// The client, owed 100 Continue, may send the body or, seeing a
		// final status, its next request: the server cannot tell which.
		{"continue owed, no body", "POST /e HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n" + next, closing},
		{"continue owed, body", "POST /eL HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\nhello" + next, closingL},
		{"continue owed, chunked", "POST /e HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nTransfer-Encoding: chunked\r\n\r\n" + next, closing},
		{"chunked body past the limit", "POST /e HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1001\r\n" +
			string(make([]byte, 4097)) + "\r\n0\r\n\r\n" + next, early},
		{"rest refused", "POST /eR HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello" + next, early + nextResp},
		{"rest refused, chunked", "POST /eR HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n" + next, early + nextResp},
		{"rest refused, malformed chunk", "POST /eR HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n" + next, early},
		{"malformed chunk", "POST /e HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n" + next, early},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := runWholeInput(t, e, tt.input)
			assert.Equal(t, tt.want, string(c.out))
			assert.Equal(t, "end", c.closed)
		})
	}
}

// pipelined is one request of FuzzServerPipeline's plan.
type pipelined struct {
	route         byte // 'b' echo, 'e' earlyApp, 'z' no route
	wait, length  bool // earlyApp's W and L
	refuse        bool // earlyApp's R, without W
	expect, close bool // Expect: 100-continue, Connection: close
	v10           bool // HTTP/1.0, with Connection: keep-alive unless close
	framing       byte // 0 no body, 1 content-length, 2 chunked
	body          string
}

// planPipeline reads a plan of up to eight requests from plan, three
// bytes each: flags, body length, and the seed of the chunk sizes, whose
// top bit makes the request HTTP/1.0 (its body framed by length).
func planPipeline(plan []byte) (reqs []pipelined, input []byte) {
	for len(plan) >= 3 && len(reqs) < 8 {
		flags, size, seed := plan[0], int(plan[1]), plan[2]
		plan = plan[3:]
		r := pipelined{route: "beez"[flags&3], wait: flags&3 == 2, length: flags&4 != 0,
			expect: flags&8 != 0, close: flags&16 != 0, framing: min(flags>>5&3, 2), refuse: flags&3 == 1 && flags&128 != 0,
			v10: seed&128 != 0}
		if r.v10 && r.framing == 2 {
			r.framing = 1
		}
		path := "/" + string(r.route)
		if r.wait {
			path = "/eW"
		}
		if r.length && r.route == 'e' {
			path += "L"
		}
		if r.refuse {
			// Refused, the body is left unread: one byte at least, so
			// that its end does not reach earlyApp first.
			path += "R"
			size = max(size, 1)
		}
		method := "GET"
		if r.framing != 0 {
			method = "POST"
			for i := range size {
				r.body += string(rune('a' + (i+int(seed))%26))
			}
		}
		head := method + " " + path + " HTTP/1.1\r\nHost: x\r\n"
		if r.v10 {
			head = method + " " + path + " HTTP/1.0\r\nHost: x\r\n"
		}
		if r.expect {
			head += "Expect: 100-continue\r\n"
		}
		switch {
		case r.close:
			head += "Connection: close\r\n"
		case r.v10:
			head += "Connection: keep-alive\r\n"
		}
		input = append(input, head...)
		switch r.framing {
		case 1:
			input = fmt.Appendf(input, "Content-Length: %d\r\n\r\n%s", len(r.body), r.body)
		case 2:
			input = append(input, "Transfer-Encoding: chunked\r\n\r\n"...)
			rng := rand.New(rand.NewPCG(uint64(seed), 1))
			for rest := r.body; len(rest) > 0; {
				n := 1 + rng.IntN(len(rest))
				input = fmt.Appendf(input, "%x\r\n%s\r\n", n, rest[:n])
				rest = rest[n:]
			}
			input = append(input, "0\r\n\r\n"...)
		default:
			input = append(input, "\r\n"...)
		}
		reqs = append(reqs, r)
	}
	return reqs, input
}

// FuzzServerPipeline sends a connection's worth of well-formed requests,
// pipelined and split into DATA frames at fuzzed points, to routes that
// echo the body, answer before reading it (earlyApp, with or without
// reading some first, or refusing the rest), or are missing. Read with
// net/http, the server's output must answer each request in order, up to
// the first that closes the connection (Connection: close, a 404, a
// response begun while the client is still owed 100 Continue, or one to
// HTTP/1.0 without a length), with nothing after: an echo with the
// request's body, earlyApp's with its own, whatever was left unread of
// the body before. The connection ends cleanly and every slot and stream
// is given back.
func FuzzServerPipeline(f *testing.F) {
	f.Add([]byte{0x21, 5, 0, 0x00, 0, 0}, uint64(0))
	f.Add([]byte{0x41, 200, 7, 0x40, 30, 3, 0x22, 9, 1, 0x00, 0, 0}, uint64(1))
	f.Add([]byte{0x29, 5, 0, 0x00, 0, 0}, uint64(2))
	f.Add([]byte{0x4a, 77, 5, 0x25, 3, 0, 0x08, 0, 0}, uint64(3))
	f.Add([]byte{0x23, 5, 0, 0x00, 0, 0}, uint64(4))
	f.Add([]byte{0xa1, 5, 0, 0x00, 0, 0}, uint64(5))
	f.Add([]byte{0x25, 5, 0x80, 0x20, 3, 0x80, 0x00, 0, 0x80}, uint64(6))
	e := startEarlyEngine(f)
	f.Fuzz(func(t *testing.T, plan []byte, split uint64) {
		reqs, input := planPipeline(plan)
		if len(reqs) == 0 {
			return
		}
		c := runInput(t, e, int(split%2), input, rand.New(rand.NewPCG(split, 0x5eed)))
		require.NoError(t, c.err, "input %s", quoteInput(input))
		require.Equal(t, "end", c.closed, "input %s: output %q", quoteInput(input), c.out)
		out := bufio.NewReader(bytes.NewReader(c.out))
		for i, r := range reqs {
			method := "GET"
			if r.framing != 0 {
				method = "POST"
			}
			resp, err := readFinalResponse(out, method)
			require.NoError(t, err, "request %d of input %s: output %q", i, quoteInput(input), c.out)
			body, err := io.ReadAll(resp.Body)
			require.NoError(t, err, "request %d of input %s: output %q", i, quoteInput(input), c.out)
			switch r.route {
			case 'z':
				require.Equal(t, 404, resp.StatusCode, "request %d of input %s: output %q", i, quoteInput(input), c.out)
			case 'b':
				require.Equal(t, 200, resp.StatusCode, "request %d of input %s: output %q", i, quoteInput(input), c.out)
				require.Equal(t, r.body, string(body), "request %d of input %s: output %q", i, quoteInput(input), c.out)
			default:
				require.Equal(t, 200, resp.StatusCode, "request %d of input %s: output %q", i, quoteInput(input), c.out)
				require.Equal(t, earlyBody, string(body), "request %d of input %s: output %q", i, quoteInput(input), c.out)
			}
			// A client owed 100 Continue when the response begins may send its
			// body or not: the connection closes. Echo begins its response
			// before it offers credit for the body, earlyApp without W
			// without offering any.
			// (HTTP/1.0 has no 100 Continue.)
			owed := r.expect && !r.v10 && (r.framing == 2 || r.framing == 1 && r.body != "") && (r.route == 'b' || r.route == 'e' && !r.wait)
			// To HTTP/1.0, a response without content-length is framed by
			// the connection's close. Echo's has the request's.
			untilClose := r.v10 && !(r.route == 'b' && r.framing == 1) && !(r.route == 'e' && r.length)
			if r.close || r.route == 'z' || owed || untilClose || i == len(reqs)-1 {
				require.True(t, resp.Close || i == len(reqs)-1, "request %d of input %s: output %q", i, quoteInput(input), c.out)
				break
			}
			require.False(t, resp.Close, "request %d of input %s: output %q", i, quoteInput(input), c.out)
		}
		rest, _ := io.ReadAll(out)
		require.Empty(t, rest, "input %s: output %q", quoteInput(input), c.out)
		require.Eventually(t, func() bool { return enginetest.Released(e) }, 2*time.Second, time.Millisecond,
			"buffer slots or streams still held after input %s", quoteInput(input))
	})
}

// readFinalResponse reads the next final response to a request of method,
// skipping interim ones.
func readFinalResponse(out *bufio.Reader, method string) (*nethttp.Response, error) {
	for {
		resp, err := nethttp.ReadResponse(out, &nethttp.Request{Method: method})
		if err != nil || resp.StatusCode >= 200 {
			return resp, err
		}
	}
}
