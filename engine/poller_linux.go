package engine

import (
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/sluicehq/sluice/internal/rawio"
)

// poller is a worker's epoll instance plus the eventfd producers use to wake
// the worker when it is parked. Sockets registered here are served on the
// worker's own thread (the tcp binding registers its fds).
type poller struct {
	epfd   int
	efd    int
	events [64]unix.EpollEvent
	// handlers is indexed by fd: the kernel hands out the lowest free
	// descriptor, so the slice stays about as long as the process's open
	// files, and an event finds its handler without a map lookup.
	handlers []func(events uint32)
	polls    int // non-blocking polls made, for tests
	// scheduled makes the blocking wait a system call the scheduler
	// knows of (see [schedulerWait]).
	scheduled bool
}

// schedulerWait is set when a parked worker must give up its P while it
// waits. A worker normally blocks in epoll_wait holding its P
// (rawio.EpollWait): the runtime stops it, for a garbage collection's stop
// of the world say, with a preemption signal, which interrupts the wait.
// With asynchronous preemption off (GODEBUG=asyncpreemptoff=1) no signal
// comes, and the whole process would wait for the next socket event of
// every parked worker; the wait then goes through the scheduler instead.
var schedulerWait = asyncPreemptOff()

var wakeValue = [8]byte{1}

func newPoller() (*poller, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("engine: epoll_create1: %w", err)
	}
	efd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		unix.Close(epfd)
		return nil, fmt.Errorf("engine: eventfd: %w", err)
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(efd)}
	if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, efd, &ev); err != nil {
		unix.Close(efd)
		unix.Close(epfd)
		return nil, fmt.Errorf("engine: epoll_ctl eventfd: %w", err)
	}
	return &poller{epfd: epfd, efd: efd, scheduled: schedulerWait}, nil
}

// register adds fd with the epoll events mask; fn runs on the worker thread.
func (p *poller) register(fd int, events uint32, fn func(events uint32)) error {
	ev := unix.EpollEvent{Events: events, Fd: int32(fd)}
	if err := unix.EpollCtl(p.epfd, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		return fmt.Errorf("engine: epoll_ctl add %d: %w", fd, err)
	}
	if fd >= len(p.handlers) {
		p.handlers = append(p.handlers, make([]func(uint32), fd+1-len(p.handlers))...)
	}
	p.handlers[fd] = fn
	return nil
}

// modify changes the events mask of a registered fd.
func (p *poller) modify(fd int, events uint32) error {
	ev := unix.EpollEvent{Events: events, Fd: int32(fd)}
	if err := unix.EpollCtl(p.epfd, unix.EPOLL_CTL_MOD, fd, &ev); err != nil {
		return fmt.Errorf("engine: epoll_ctl mod %d: %w", fd, err)
	}
	return nil
}

// unregister removes fd.
func (p *poller) unregister(fd int) error {
	if fd >= 0 && fd < len(p.handlers) {
		p.handlers[fd] = nil
	}
	if err := unix.EpollCtl(p.epfd, unix.EPOLL_CTL_DEL, fd, nil); err != nil {
		return fmt.Errorf("engine: epoll_ctl del %d: %w", fd, err)
	}
	return nil
}

// poll waits up to timeoutMs (0 = do not block, -1 = until woken) and runs
// the handlers of the ready fds. It returns how many were ready.
func (p *poller) poll(timeoutMs int) int {
	if timeoutMs == 0 {
		p.polls++
	}
	n := p.wait(timeoutMs)
	p.dispatch(n)
	return n
}

// wait waits up to timeoutMs for ready fds and returns how many are ready;
// dispatch(n) then runs their handlers. A parked worker marks itself
// running between the two, so the frames its handlers send to its own
// ring do not wake it through the eventfd (a write and a read for nothing).
func (p *poller) wait(timeoutMs int) int {
	var n int
	var err error
	if timeoutMs == 0 {
		n, err = rawio.EpollPoll(p.epfd, p.events[:])
	} else if p.scheduled {
		n, err = rawio.EpollWaitScheduled(p.epfd, p.events[:], timeoutMs)
	} else {
		n, err = rawio.EpollWait(p.epfd, p.events[:], timeoutMs)
	}
	if err != nil {
		return 0 // EINTR: the loop comes round again
	}
	return n
}

// dispatch runs the handlers of the first n events of the last wait.
func (p *poller) dispatch(n int) {
	for i := 0; i < n; i++ {
		ev := &p.events[i]
		if int(ev.Fd) == p.efd {
			var buf [8]byte
			_, _ = rawio.Read(p.efd, buf[:]) // non-blocking eventfd
			continue
		}
		if fd := int(ev.Fd); fd < len(p.handlers) {
			if fn := p.handlers[fd]; fn != nil {
				fn(ev.Events)
			}
		}
	}
}

// wake makes a blocked poll return. Safe from any goroutine.
func (p *poller) wake() {
	_, _ = unix.Write(p.efd, wakeValue[:])
}

func (p *poller) close() error {
	err1 := unix.Close(p.efd)
	err2 := unix.Close(p.epfd)
	if err1 != nil {
		return err1
	}
	return err2
}

// asyncPreemptOff reports whether the runtime cannot preempt a goroutine
// by signal: GODEBUG's asyncpreemptoff set to a non-zero number, in the
// binary's default GODEBUG (go.mod godebug lines) or in the environment,
// the last setting winning as it does for the runtime.
func asyncPreemptOff() bool {
	off := false
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "DefaultGODEBUG" {
				off = godebugFlag(s.Value, "asyncpreemptoff", off)
			}
		}
	}
	return godebugFlag(os.Getenv("GODEBUG"), "asyncpreemptoff", off)
}

// godebugFlag returns the last setting of key in a GODEBUG list
// ("k=v,k2=v2"), read as the runtime reads its flags: a number, non-zero
// for true. It returns def when key is not set or not a number.
func godebugFlag(list, key string, def bool) bool {
	for _, kv := range strings.Split(list, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok || k != key {
			continue
		}
		if n, err := strconv.Atoi(v); err == nil {
			def = n != 0
		}
	}
	return def
}
