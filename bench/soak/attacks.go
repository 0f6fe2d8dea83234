package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// closedBy runs one connection per goroutine, each opened by open and then
// fed by feed (called every interval until it returns false); it reports
// how long after its start each was closed by the gateway, or -1 for one
// still open when ctx ended.
func closedBy(ctx context.Context, g *gateway, n int, interval time.Duration, open func(net.Conn) error, feed func(net.Conn, int) bool) ([]time.Duration, error) {
	held := make([]time.Duration, n)
	errs := make(chan error, n)
	// At most 64 connections are being opened at a time, so that on a
	// loaded machine none waits so long between its dial and its first
	// bytes that the header timeout, rather than the attack, closes it.
	opening := make(chan struct{}, 64)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			held[i] = -1
			opening <- struct{}{}
			c, err := net.DialTimeout("tcp", g.addr, 2*time.Second)
			if err != nil {
				<-opening
				errs <- err
				return
			}
			defer c.Close()
			t0 := time.Now()
			if open != nil {
				if err := open(c); err != nil {
					<-opening
					errs <- fmt.Errorf("%w (%s after the dial)", err, time.Since(t0).Round(time.Millisecond))
					return
				}
			}
			<-opening
			buf := make([]byte, 512)
			for step := 0; ; step++ {
				if feed != nil && !feed(c, step) {
					feed = nil
				}
				wait := time.Now().Add(interval)
				if d, ok := ctx.Deadline(); ok && d.Before(wait) {
					wait = d
				}
				_ = c.SetReadDeadline(wait)
				if _, err := c.Read(buf); err == nil || !errors.Is(err, os.ErrDeadlineExceeded) {
					// An answer (408) or the close: the gateway let go.
					held[i] = time.Since(t0)
					return
				}
				if ctx.Err() != nil {
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return held, <-errs
}

// judgeClosed says whether every connection was closed within limit.
func judgeClosed(held []time.Duration, err error, limit time.Duration) (bool, string) {
	if err != nil {
		return false, err.Error()
	}
	open, worst := 0, time.Duration(0)
	for _, h := range held {
		if h < 0 {
			open++
		}
		worst = max(worst, h)
	}
	ok := open == 0 && worst <= limit
	return ok, fmt.Sprintf("%d/%d closed, slowest after %s (limit %s)", len(held)-open, len(held), worst.Round(100*time.Millisecond), limit)
}

// slowloris: 50 connections send a request head one byte every 2 s; the
// header timeout must close each.
func slowloris(ctx context.Context, g *gateway) (bool, string) {
	head := "POST /mcp HTTP/1.1\r\nHost: " + g.addr + "\r\nContent-Type: application/json\r\nX-Pad: " + strings.Repeat("a", 64) + "\r\n"
	held, err := closedBy(ctx, g, 50, 2*time.Second, nil, func(c net.Conn, step int) bool {
		if step >= len(head) {
			return false
		}
		_, err := c.Write([]byte{head[step]})
		return err == nil
	})
	return judgeClosed(held, err, headerTimeout+slack)
}

// slowBody: 20 connections send a whole head announcing 1000 bytes, then
// one byte every 3 s; the body timeout must close each.
func slowBody(ctx context.Context, g *gateway) (bool, string) {
	head := "POST /mcp HTTP/1.1\r\nHost: " + g.addr + "\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n"
	held, err := closedBy(ctx, g, 20, 3*time.Second, func(c net.Conn) error {
		_, err := c.Write([]byte(head + "{"))
		return err
	}, func(c net.Conn, _ int) bool {
		_, err := c.Write([]byte(" "))
		return err == nil
	})
	return judgeClosed(held, err, bodyTimeout+slack)
}

// silent: 50 connections that send nothing; the header timeout, counted
// from the connection's start, must close each.
func silent(ctx context.Context, g *gateway) (bool, string) {
	held, err := closedBy(ctx, g, 50, time.Second, nil, nil)
	return judgeClosed(held, err, headerTimeout+slack)
}

// idleKeepAlive: n connections each get one answer and then stay idle;
// while they are held a probe must pass, and the idle timeout must close
// each.
func idleKeepAlive(ctx context.Context, g *gateway, n int) (bool, string) {
	// Two fds a connection would do (this side and the gateway's, which
	// inherited the limit); keep room for everything else.
	n = min(n, (fdLimit()-200)/2)
	if n <= 0 {
		return false, "the open-file limit leaves no room for connections"
	}
	// Each connection's one request is a ping in a session the attack
	// opens: an answer that keeps the connection.
	sc := newClient(g.url)
	if _, err := sc.initialize(ctx); err != nil {
		return false, err.Error()
	}
	defer sc.end(context.Background())
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	req := "POST /mcp HTTP/1.1\r\nHost: " + g.addr + "\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n" +
		"Mcp-Session-Id: " + sc.session + "\r\nMcp-Protocol-Version: " + protocolVersion + "\r\nContent-Length: " + strconv.Itoa(len(ping)) + "\r\n\r\n" + ping
	var answered atomic.Int64
	var badStatus atomic.Value
	var opened sync.WaitGroup
	opened.Add(n)
	probed := make(chan string, 1)
	go func() {
		opened.Wait()
		if ok, why := probe(g); ok {
			probed <- "probe while held: ok"
		} else {
			probed <- "probe while held failed: " + why
		}
	}()
	held, err := closedBy(ctx, g, n, time.Second, func(c net.Conn) error {
		defer opened.Done()
		if _, err := c.Write([]byte(req)); err != nil {
			return err
		}
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			return fmt.Errorf("the keep-alive request: %w", err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Close {
			badStatus.Store(fmt.Sprintf("the ping: HTTP %d, close %v", resp.StatusCode, resp.Close))
		}
		answered.Add(1)
		return nil
	}, nil)
	p := <-probed
	ok, detail := judgeClosed(held, err, idleTimeout+slack)
	detail = fmt.Sprintf("%d answered; %s; %s", answered.Load(), p, detail)
	if v := badStatus.Load(); v != nil {
		return false, detail + "; " + v.(string)
	}
	return ok && strings.HasSuffix(p, ": ok"), detail
}

// duplicates: tools/call params naming two tools, through each route, and
// an envelope with two methods, must be refused, each every time.
func duplicates(ctx context.Context, g *gateway) (bool, string) {
	c := newClient(g.url)
	if _, err := c.initialize(ctx); err != nil {
		return false, err.Error()
	}
	defer c.end(context.Background())
	cases := []struct {
		body   string
		status int
		code   int
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"local__echo","name":"local__add","arguments":{"message":"x","text":"x","a":1,"b":2}}}`, 200, -32602},
		{`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"up__echo","name":"up__add","arguments":{"message":"x","text":"x","a":1,"b":2}}}`, 200, -32602},
		{`{"jsonrpc":"2.0","id":3,"method":"tools/call","method":"tools/list","params":{"name":"local__echo","arguments":{"text":"x"}}}`, 400, -32600},
	}
	rounds, refused := 0, 0
	for rounds < 100 && ctx.Err() == nil {
		rounds++
		for _, tc := range cases {
			r, err := c.post(ctx, tc.body)
			if err != nil {
				if ctx.Err() != nil {
					break
				}
				return false, err.Error()
			}
			if r.status != tc.status || r.err == nil || r.err.Code != tc.code {
				return false, fmt.Sprintf("%.60s…: %s, want HTTP %d %d", tc.body[30:], describe(r), tc.status, tc.code)
			}
			refused++
		}
	}
	return true, fmt.Sprintf("%d refused in %d rounds (params name ×2: -32602 per route; method ×2: 400 -32600)", refused, rounds)
}

// overLimit: a Content-Length over the limit, the same with Expect:
// 100-continue, and a chunked body that passes it must each get 413 at
// once, without the gateway reading the body to its end.
func overLimit(ctx context.Context, g *gateway) (bool, string) {
	const big = 100 << 20
	head := "POST /mcp HTTP/1.1\r\nHost: " + g.addr + "\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
	var worst [3]time.Duration
	var sentChunked int64
	rounds := 0
	for rounds < 10 && ctx.Err() == nil {
		rounds++
		// Content-Length: the head alone says it is too big.
		d, status, _, err := limitRound(g, head+fmt.Sprintf("Content-Length: %d\r\n\r\n", big), nil)
		if err != nil || status != 413 {
			return false, fmt.Sprintf("Content-Length %d: status %d, %v", big, status, err)
		}
		worst[0] = max(worst[0], d)
		d, status, _, err = limitRound(g, head+fmt.Sprintf("Content-Length: %d\r\nExpect: 100-continue\r\n\r\n", big), nil)
		if err != nil || status != 413 {
			return false, fmt.Sprintf("Expect: 100-continue: first status %d, want 413; %v", status, err)
		}
		worst[1] = max(worst[1], d)
		// Chunked: 16 KiB chunks, up to 8 times the limit.
		chunk := fmt.Sprintf("%x\r\n%s\r\n", 16<<10, strings.Repeat(" ", 16<<10))
		d, status, sent, err := limitRound(g, head+"Transfer-Encoding: chunked\r\n\r\n", func(c net.Conn, n *atomic.Int64) {
			for n.Load() < 8*bodyLimit {
				if _, err := c.Write([]byte(chunk)); err != nil {
					return
				}
				n.Add(16 << 10)
			}
		})
		if err != nil || status != 413 {
			return false, fmt.Sprintf("chunked: status %d, want 413; %v", status, err)
		}
		worst[2] = max(worst[2], d)
		sentChunked = max(sentChunked, sent)
	}
	ok := worst[0] < time.Second && worst[1] < time.Second && worst[2] < 2*time.Second
	return ok, fmt.Sprintf("%d rounds, 413 after at most: length %s, 100-continue %s, chunked %s (%d KiB of the body sent by then)",
		rounds, worst[0].Round(100*time.Microsecond), worst[1].Round(100*time.Microsecond), worst[2].Round(100*time.Microsecond), sentChunked>>10)
}

// limitRound sends head, then body's bytes in the background when body is
// set, and reads the first response's status; it returns the time from
// the head to that status and how many bytes body had written by then.
func limitRound(g *gateway, head string, body func(net.Conn, *atomic.Int64)) (time.Duration, int, int64, error) {
	c, err := net.DialTimeout("tcp", g.addr, 2*time.Second)
	if err != nil {
		return 0, 0, 0, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	t0 := time.Now()
	if _, err := c.Write([]byte(head)); err != nil {
		return 0, 0, 0, err
	}
	var written atomic.Int64
	done := make(chan struct{})
	if body != nil {
		go func() { defer close(done); body(c, &written) }()
	} else {
		close(done)
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	d, n := time.Since(t0), written.Load()
	c.Close() // ends the writer, if it still writes
	<-done
	if err != nil {
		return d, 0, n, fmt.Errorf("no status line: %w", err)
	}
	f := strings.Fields(line)
	if len(f) < 2 {
		return d, 0, n, fmt.Errorf("bad status line %q", line)
	}
	status, _ := strconv.Atoi(f[1])
	return d, status, n, nil
}

// flood: initializes from four client addresses until the session
// limit answers 503 (at most twice the limit), then from one address
// until its limit does, then calls in one session beyond its in-flight
// limit; each flood's sessions are deleted afterwards so the next step
// and the probe can open one.
func flood(ctx context.Context, g *gateway) (bool, string) {
	var srcs []net.IP
	for i := range 4 {
		srcs = append(srcs, net.IPv4(127, 0, 0, byte(1+i)))
	}
	f := initFlood(ctx, g, srcs, 2*maxSessions)
	// The binding's limit does not count initializes in flight (the mcp
	// server's doc), so eight at a time may pass it by up to eight; an
	// address's counts them.
	ok := f.total() <= maxSessions+8 && f.max() <= maxPerAddress && f.refused > 0 && f.other == 0
	detail := fmt.Sprintf("sessions from 4 addresses: %d opened (limit %d + 8 in flight), at most %d from one (limit %d), %d refused 503",
		f.total(), maxSessions, f.max(), maxPerAddress, f.refused)
	if f.other > 0 {
		detail += fmt.Sprintf(", %d failed (%v)", f.other, f.why)
	}
	one := initFlood(ctx, g, []net.IP{net.IPv4(127, 0, 0, 5)}, 2*maxPerAddress)
	ok = ok && one.total() == maxPerAddress && one.byAddr == one.refused && one.other == 0
	detail += fmt.Sprintf("; from one address: %d opened (limit %d), %d refused 503 for the address", one.total(), maxPerAddress, one.byAddr)
	if one.other > 0 {
		detail += fmt.Sprintf(", %d failed (%v)", one.other, one.why)
	}

	// In flight: 64 calls of 1 s at once in one session.
	cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := newClient(g.url)
	if _, err := c.initialize(cctx); err != nil {
		return false, detail + "; in-flight session: " + err.Error()
	}
	defer c.end(context.Background())
	var wg sync.WaitGroup
	var done, limited, failed atomic.Int64
	for i := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := c.call(cctx, i+1, "local__long_running_operation", `{"duration":1,"steps":1}`)
			switch {
			case err != nil:
				failed.Add(1)
			case r.err != nil && r.err.Code == -32000 && strings.Contains(r.err.Message, "in flight"):
				limited.Add(1)
			case r.err == nil && r.status == 200:
				done.Add(1)
			default:
				failed.Add(1)
			}
		}()
	}
	wg.Wait()
	ok = ok && done.Load() >= 1 && done.Load() <= maxInflight && limited.Load() == 64-done.Load()
	return ok, detail + fmt.Sprintf("; 64 calls in one session: %d done, %d refused -32000, %d failed", done.Load(), limited.Load(), failed.Load())
}

// contentType: POSTs of text/plain and of a form must get 415.
func contentType(ctx context.Context, g *gateway) (bool, string) {
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + protocolVersion + `","capabilities":{},"clientInfo":{"name":"soak","version":"1"}}}`
	n := 0
	for n < 200 && ctx.Err() == nil {
		for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded"} {
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, g.url, strings.NewReader(body))
			if err != nil {
				return false, err.Error()
			}
			req.Header.Set("Content-Type", ct)
			req.Header.Set("Accept", "application/json, text/event-stream")
			resp, err := hc.Do(req)
			if err != nil {
				if ctx.Err() != nil {
					break
				}
				return false, err.Error()
			}
			resp.Body.Close()
			if resp.StatusCode != 415 {
				return false, fmt.Sprintf("%s: HTTP %d, want 415", ct, resp.StatusCode)
			}
			n++
		}
	}
	return true, fmt.Sprintf("%d POSTs (text/plain, form) all 415", n)
}

// reGet: a session's GET event stream is closed by the client and opened
// again at once; the second GET must get 200 within a second.
func reGet(ctx context.Context, g *gateway) (bool, string) {
	c := newClient(g.url)
	if _, err := c.initialize(ctx); err != nil {
		return false, err.Error()
	}
	defer c.end(context.Background())
	get := "GET /mcp HTTP/1.1\r\nHost: " + g.addr + "\r\nAccept: text/event-stream\r\nMcp-Session-Id: " + c.session +
		"\r\nMcp-Protocol-Version: " + protocolVersion + "\r\n\r\n"
	n := 0
	var worst time.Duration
	for n < 50 && ctx.Err() == nil {
		t0 := time.Now()
		conn, err := net.DialTimeout("tcp", g.addr, time.Second)
		if err != nil {
			return false, err.Error()
		}
		_ = conn.SetDeadline(time.Now().Add(time.Second))
		_, err = conn.Write([]byte(get))
		var line string
		if err == nil {
			line, err = bufio.NewReader(conn).ReadString('\n')
		}
		conn.Close()
		if err != nil {
			return false, fmt.Sprintf("GET %d: %v", n+1, err)
		}
		if !strings.HasPrefix(line, "HTTP/1.1 200") {
			return false, fmt.Sprintf("GET %d right after the previous one closed: %q, want 200", n+1, strings.TrimSpace(line))
		}
		worst = max(worst, time.Since(t0))
		n++
	}
	return true, fmt.Sprintf("%d GETs, each right after the last closed: all 200, slowest %s", n, worst.Round(time.Millisecond))
}

// sigterm: as many calls of 2 s as a session may have are in flight (each has sent a progress
// event) when the gateway gets SIGTERM; every call must complete and the
// gateway exit 0 within its drain timeout.
func sigterm(ctx context.Context, g *gateway) (bool, string) {
	const calls = maxInflight
	cctx, cancel := context.WithTimeout(context.Background(), drainTimeout+5*time.Second)
	defer cancel()
	c := newClient(g.url)
	if _, err := c.initialize(ctx); err != nil {
		return false, err.Error()
	}
	var started, wg sync.WaitGroup
	started.Add(calls)
	var completed, failed atomic.Int64
	var why atomic.Value
	for i := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			once := sync.OnceFunc(started.Done)
			defer once()
			err := progressCall(cctx, c, i+1, once)
			if err != nil {
				failed.Add(1)
				why.Store(err.Error())
				return
			}
			completed.Add(1)
		}()
	}
	started.Wait()
	rss, fds := usage(g.pid())
	lastRSS, lastFDs = fmt.Sprintf("%.1f", rss), strconv.Itoa(fds)
	t0 := time.Now()
	if err := g.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return false, err.Error()
	}
	wg.Wait()
	var exit string
	select {
	case <-g.exited:
		exit = "exit 0"
		if g.err != nil {
			exit = g.err.Error()
		}
	case <-time.After(drainTimeout + slack - time.Since(t0)):
		exit = "still running after the drain timeout"
	}
	detail := fmt.Sprintf("%d/%d calls completed after SIGTERM, %s after %s", completed.Load(), calls, exit, time.Since(t0).Round(time.Millisecond))
	if v := why.Load(); v != nil {
		detail += "; " + v.(string)
	}
	return completed.Load() == calls && exit == "exit 0", detail
}

// progressCall is a 2 s long_running_operation with a progress token:
// inFlight is called at its first progress event; it returns nil when
// the result arrives.
func progressCall(ctx context.Context, c *client, id int, inFlight func()) error {
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"local__long_running_operation","arguments":{"duration":2,"steps":4},"_meta":{"progressToken":%d}}}`, id, id)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", c.session)
	req.Header.Set("Mcp-Protocol-Version", protocolVersion)
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return fmt.Errorf("call %d: HTTP %d %s", id, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	msg, err := answerEvent(resp.Body, inFlight)
	if err != nil {
		return fmt.Errorf("call %d: %w", id, err)
	}
	if !strings.Contains(string(msg), `"result"`) {
		return fmt.Errorf("call %d: %.100s", id, msg)
	}
	return nil
}

// floodResult is what one initFlood saw.
type floodResult struct {
	opened  []int // sessions opened, by source
	refused int64 // 503 -32000 answers
	byAddr  int64 // of those, the ones for the address's limit
	other   int64 // any other failure
	why     string
}

func (f floodResult) total() int {
	n := 0
	for _, o := range f.opened {
		n += o
	}
	return n
}

func (f floodResult) max() int {
	n := 0
	for _, o := range f.opened {
		n = max(n, o)
	}
	return n
}

// initFlood sends n initializes, eight at a time, from the sources in
// turn, then ends every session it opened.
func initFlood(ctx context.Context, g *gateway, srcs []net.IP, n int) floodResult {
	var mu sync.Mutex
	var opened []*client
	f := floodResult{opened: make([]int, len(srcs))}
	var wg sync.WaitGroup
	next := make(chan int)
	go func() {
		defer close(next)
		for i := range n {
			select {
			case next <- i % len(srcs):
			case <-ctx.Done():
				return
			}
		}
	}()
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for src := range next {
				c := newClientFrom(g.url, srcs[src])
				r, err := c.initialize(ctx)
				mu.Lock()
				switch {
				case err == nil:
					opened = append(opened, c)
					f.opened[src]++
				case r.status == 503 && r.err != nil && r.err.Code == -32000:
					f.refused++
					if strings.Contains(r.err.Message, "from this address") {
						f.byAddr++
					}
				default:
					if ctx.Err() == nil {
						f.other++
						f.why = fmt.Sprint(err)
					}
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	for _, c := range opened {
		c.end(context.Background())
	}
	return f
}
