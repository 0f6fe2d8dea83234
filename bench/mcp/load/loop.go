//go:build linux

package main

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/http"
	"syscall"
	"time"
	"unsafe"
)

// eventLoop drives every worker's connection from one goroutine (-client
// raw): nonblocking sockets of its own, outside Go's netpoller, and one
// epoll set. A request costs one write(2), usually one read(2), and a
// share of one epoll_pwait(2); nothing is parked or woken in the Go
// scheduler. The syscalls are raw (syscall.RawSyscall6): the loop holds
// its P while it waits in epoll_pwait, so the runtime does not hand the P
// off and wake sysmon around every wait; Go's asynchronous preemption
// (SIGURG, after 10 ms) interrupts the wait with EINTR when the runtime
// needs the P (a GC, the main goroutine). That is sound only because
// nothing else in the process has work while a phase runs.
type eventLoop struct {
	g      *generator
	epfd   int
	sa     syscall.Sockaddr
	family int
	conns  []*evConn
	events []syscall.EpollEvent
}

// evConn is one worker's connection.
type evConn struct {
	idx     int
	ws      *workerState
	fd      int // -1: not connected
	busy    bool
	id      int64
	t0      time.Time
	in      []byte // what has arrived of the response in flight
	dechunk []byte
	retryAt time.Time // after a failed dial or write: not before then
}

func newEventLoop(g *generator) (*eventLoop, error) {
	a, err := net.ResolveTCPAddr("tcp", g.target.addr)
	if err != nil {
		return nil, err
	}
	l := &eventLoop{g: g, events: make([]syscall.EpollEvent, 256)}
	if ip4 := a.IP.To4(); ip4 != nil {
		sa := &syscall.SockaddrInet4{Port: a.Port}
		copy(sa.Addr[:], ip4)
		l.sa, l.family = sa, syscall.AF_INET
	} else {
		sa := &syscall.SockaddrInet6{Port: a.Port}
		copy(sa.Addr[:], a.IP.To16())
		l.sa, l.family = sa, syscall.AF_INET6
	}
	if l.epfd, err = syscall.EpollCreate1(syscall.EPOLL_CLOEXEC); err != nil {
		return nil, fmt.Errorf("epoll_create1: %w", err)
	}
	for w, ws := range g.workers {
		l.conns = append(l.conns, &evConn{idx: w, ws: ws, fd: -1, in: make([]byte, 0, 16<<10)})
	}
	return l, nil
}

func (l *eventLoop) close() {
	for _, c := range l.conns {
		c.drop()
	}
	_ = syscall.Close(l.epfd)
}

func (c *evConn) drop() {
	if c.fd >= 0 {
		_ = syscall.Close(c.fd) // also leaves the epoll set
		c.fd = -1
	}
}

// dial connects c, blocking (SO_SNDTIMEO bounds connect(2) to 5 s), then
// makes the socket nonblocking and adds it to the epoll set.
func (l *eventLoop) dial(c *evConn) error {
	fd, err := syscall.Socket(l.family, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("socket: %w", err)
	}
	tv := syscall.NsecToTimeval(int64(5 * time.Second))
	_ = syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_SNDTIMEO, &tv)
	_ = syscall.SetsockoptInt(fd, syscall.IPPROTO_TCP, syscall.TCP_NODELAY, 1)
	if err := syscall.Connect(fd, l.sa); err != nil {
		_ = syscall.Close(fd)
		return fmt.Errorf("connect %s: %w", l.g.target.addr, err)
	}
	if err := syscall.SetNonblock(fd, true); err != nil {
		_ = syscall.Close(fd)
		return err
	}
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN | syscall.EPOLLRDHUP, Fd: int32(c.idx)}
	if err := syscall.EpollCtl(l.epfd, syscall.EPOLL_CTL_ADD, fd, &ev); err != nil {
		_ = syscall.Close(fd)
		return fmt.Errorf("epoll_ctl: %w", err)
	}
	c.fd = fd
	return nil
}

func rawRead(fd int, b []byte) (int, syscall.Errno) {
	n, _, e := syscall.RawSyscall(syscall.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	return int(n), e
}

func rawWrite(fd int, b []byte) (int, syscall.Errno) {
	n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	return int(n), e
}

func (l *eventLoop) wait(ms int) (int, syscall.Errno) {
	n, _, e := syscall.RawSyscall6(syscall.SYS_EPOLL_PWAIT, uintptr(l.epfd),
		uintptr(unsafe.Pointer(&l.events[0])), uintptr(len(l.events)), uintptr(ms), 0, 0)
	return int(n), e
}

// start sends c's next request; false when it could not (the error is
// counted and c waits until retryAt).
func (l *eventLoop) start(c *evConn, now time.Time) bool {
	if c.fd < 0 {
		if err := l.dial(c); err != nil {
			l.g.fail(err)
			c.retryAt = now.Add(100 * time.Millisecond)
			return false
		}
	}
	ws := c.ws
	ws.n++
	c.id = requestID(c.idx, ws.n)
	si := int((int64(c.idx) + ws.n*int64(l.g.c.concurrency)) % int64(len(l.g.sessions)))
	t := ws.templates[si]
	if t == nil {
		t = l.g.newTemplate(l.g.sessions[si])
		ws.templates[si] = t
	}
	req := t.stamp(c.id)
	c.t0 = time.Now()
	// One request is at most a few hundred bytes on an idle connection:
	// the socket buffer takes it whole. A short write is an error.
	n, e := rawWrite(c.fd, req)
	if e != 0 || n != len(req) {
		if e == 0 {
			e = syscall.EAGAIN
		}
		l.g.fail(fmt.Errorf("write: %w", e))
		c.drop()
		c.retryAt = now.Add(100 * time.Millisecond)
		return false
	}
	c.busy, c.in = true, c.in[:0]
	return true
}

// readable reads what arrived on c; done reports that c's request ended
// (answered, failed or its connection lost).
func (l *eventLoop) readable(c *evConn, lat *[]time.Duration, record bool) (done bool) {
	if cap(c.in)-len(c.in) < 4<<10 {
		in := make([]byte, len(c.in), 2*cap(c.in)+4<<10)
		copy(in, c.in)
		c.in = in
	}
	n, e := rawRead(c.fd, c.in[len(c.in):cap(c.in)])
	if e == syscall.EAGAIN || e == syscall.EINTR {
		return false
	}
	if !c.busy {
		// An idle connection is readable only when the server closes it
		// (or sends what nobody asked for): drop it; start redials.
		c.drop()
		return false
	}
	if e != 0 {
		l.g.fail(fmt.Errorf("read: %w", e))
		c.drop()
		c.busy = false
		return true
	}
	c.in = c.in[:len(c.in)+n]
	r, err := parseResponse(c.in, n == 0, &c.dechunk)
	if errors.Is(err, errIncomplete) {
		if n > 0 {
			return false
		}
		err = errors.New("connection closed before the whole response")
	}
	d := time.Since(c.t0)
	c.busy = false
	if err != nil {
		l.g.fail(err)
		c.drop()
		return true
	}
	if !r.keep || r.size != len(c.in) {
		// Closing, or bytes beyond the response: nothing more to read here.
		defer c.drop()
	}
	if err := l.g.checkRaw(c.ws, r, c.id); err != nil {
		l.g.fail(err)
		return true
	}
	if record {
		*lat = append(*lat, d)
	}
	return true
}

// pacer spaces requests -rate apart over all connections: a connection
// whose response came back waits in ready until the next request is due.
// Due requests go out together when the loop wakes (epoll_pwait's
// timeout is in milliseconds), so the rate holds on average and at most a
// millisecond's worth leaves at once. A pacer that falls behind (no
// connection was ready) does not catch up by more than 100 ms.
type pacer struct {
	interval time.Duration // 0: no pacing
	next     time.Time
	ready    []*evConn
}

// due reports whether a request may go out at now, and books it.
func (p *pacer) due(now time.Time) bool {
	if now.Before(p.next) {
		return false
	}
	if now.Sub(p.next) > 100*time.Millisecond {
		p.next = now
	}
	p.next = p.next.Add(p.interval)
	return true
}

// timeout returns how long the loop may wait for events, at most ms.
func (p *pacer) timeout(now time.Time, ms int) int {
	if p.interval == 0 || len(p.ready) == 0 {
		return ms
	}
	wait := int((p.next.Sub(now) + time.Millisecond - 1) / time.Millisecond)
	return max(0, min(wait, ms))
}

// phase runs until deadline (or until -requests are claimed when deadline
// is zero), then waits for the requests in flight, and returns their
// latencies when record is set.
func (l *eventLoop) phase(deadline time.Time, record bool) []time.Duration {
	g := l.g
	var lat []time.Duration
	if record {
		lat = make([]time.Duration, 0, 1<<16)
	}
	more := func(now time.Time) bool {
		if deadline.IsZero() {
			return g.issued.Add(1) <= g.c.requests
		}
		return now.Before(deadline)
	}
	now := time.Now()
	busy, retrying, stopped := 0, 0, false
	pace := pacer{next: now}
	if g.c.rate > 0 {
		pace.interval = time.Duration(float64(time.Second) / g.c.rate)
	}
	// send sends c's next request, unless the phase is over.
	send := func(c *evConn, now time.Time) {
		switch {
		case !more(now):
			stopped = true
		case l.start(c, now):
			busy++
		default:
			retrying++
		}
	}
	// next sends c's next request, or with -rate queues c until one is due.
	next := func(c *evConn, now time.Time) {
		switch {
		case stopped:
		case pace.interval > 0:
			pace.ready = append(pace.ready, c)
		default:
			send(c, now)
		}
	}
	for _, c := range l.conns {
		next(c, now)
	}
	lastScan := now
	for busy > 0 || (retrying > 0 && !stopped) || (len(pace.ready) > 0 && !stopped) {
		for len(pace.ready) > 0 && !stopped && pace.due(now) {
			c := pace.ready[len(pace.ready)-1]
			pace.ready = pace.ready[:len(pace.ready)-1]
			send(c, now)
		}
		ms := 100
		if retrying > 0 {
			ms = 10
		}
		n, e := l.wait(pace.timeout(now, ms))
		if e != 0 && e != syscall.EINTR {
			fatalf("epoll_pwait: %v", e)
		}
		for i := 0; i < n; i++ {
			c := l.conns[l.events[i].Fd]
			if c.fd < 0 || !l.readable(c, &lat, record) {
				continue
			}
			busy--
			next(c, time.Now())
		}
		now = time.Now()
		if retrying > 0 || now.Sub(lastScan) >= 100*time.Millisecond {
			lastScan = now
			retrying = 0
			for _, c := range l.conns {
				if c.busy && now.Sub(c.t0) > g.c.timeout {
					g.fail(fmt.Errorf("no response in %v", g.c.timeout))
					c.drop()
					c.busy = false
					busy--
					c.retryAt = now // a new connection, now
				}
				if c.busy || c.retryAt.IsZero() {
					continue
				}
				if stopped || now.Before(c.retryAt) {
					retrying++
					continue
				}
				c.retryAt = time.Time{}
				next(c, now)
			}
		}
	}
	// Conns left waiting to retry start over in the next phase.
	for _, c := range l.conns {
		c.retryAt = time.Time{}
	}
	return lat
}

// checkRaw checks one response of the raw client.
func (g *generator) checkRaw(ws *workerState, r response, id int64) error {
	if r.status != http.StatusOK {
		return fmt.Errorf("HTTP %d: %.200s", r.status, bytes.TrimSpace(r.body))
	}
	body := r.body
	switch {
	case bytes.HasPrefix(r.ctype, []byte("application/json")):
	case bytes.HasPrefix(r.ctype, []byte("text/event-stream")):
		var err error
		body, ws.scratch, err = sseResponse(body, id, ws.scratch[:0])
		if err != nil {
			return err
		}
	default:
		return fmt.Errorf("content-type %q", r.ctype)
	}
	return g.check(body, id, &ws.p)
}
