package tcp

import (
	"errors"
	"fmt"
	"net/netip"
	"time"

	"golang.org/x/sys/unix"
)

// acceptBatch bounds the connections accepted per readiness event, so
// that a flood of connections cannot starve the worker's other work.
const acceptBatch = 64

// acceptPause is how long a listener rests when the process is out of
// file descriptors: its backlog waits instead of the worker spinning on
// a level-triggered socket it cannot accept from.
const acceptPause = 100 * time.Millisecond

// listener is one worker's listening socket on one port. Every worker
// listens on the same address with SO_REUSEPORT, and the kernel spreads
// the connections over their sockets (or the steering program picks the
// receiving CPU's worker); a connection is served for its whole life by
// the worker that accepted it.
type listener struct {
	h        *Handler
	fd       int
	addr     netip.AddrPort
	group    *steerGroup
	onAccept func(events uint32)
	resume   func()
}

// listen opens the worker's listening sockets, one per port.
func (h *Handler) listen() error {
	for _, port := range h.s.ports {
		l := &listener{h: h, addr: netip.AddrPortFrom(h.s.addr, port)}
		if err := h.b.claimPort(groupKey{e: h.w.Engine(), id: h.id, port: port}, l.addr); err != nil {
			return fmt.Errorf("tcp: listen %s: %w", l.addr, err)
		}
		fd, err := listenSocket(l.addr, h.s.backlog)
		if err != nil {
			return fmt.Errorf("tcp: listen %s: %w", l.addr, err)
		}
		l.fd = fd
		l.onAccept = l.accept
		l.resume = l.unpause
		h.listeners = append(h.listeners, l)
		if err := h.w.RegisterFD(fd, unix.EPOLLIN, l.onAccept); err != nil {
			return err
		}
		if h.s.steering == steerEBPF {
			l.group = h.b.steer(h.w, groupKey{e: h.w.Engine(), id: h.id, port: port}, fd)
		}
		h.logListening(l)
	}
	return nil
}

// claimPort checks, once per binding of an engine and port, that nothing
// else listens on addr: SO_REUSEPORT would otherwise let the workers join
// the group of another process of the same user (a second sluice on the
// same port) and share its connections. The first worker to get here binds
// a probe socket without SO_REUSEPORT; the others wait for its verdict.
func (b *Binding) claimPort(key groupKey, addr netip.AddrPort) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.claimed == nil {
		b.claimed = map[groupKey]error{}
	}
	if err, done := b.claimed[key]; done {
		return err
	}
	family, sa := sockaddr(addr)
	fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, unix.IPPROTO_TCP)
	if err == nil {
		if err = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1); err == nil {
			err = unix.Bind(fd, sa)
		}
		_ = unix.Close(fd)
	}
	b.claimed[key] = err
	return err
}

// releasePort forgets a claim once the binding's listeners close, so the
// engine is not kept alive by it.
func (b *Binding) releasePort(key groupKey) {
	b.mu.Lock()
	delete(b.claimed, key)
	b.mu.Unlock()
}

// listenSocket returns a non-blocking socket listening on addr, in the
// SO_REUSEPORT group of every socket bound there by this user.
func listenSocket(addr netip.AddrPort, backlog int) (int, error) {
	family, sa := sockaddr(addr)
	fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, unix.IPPROTO_TCP)
	if err != nil {
		return -1, err
	}
	if err = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1); err == nil {
		err = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEPORT, 1)
	}
	if err == nil {
		err = unix.Bind(fd, sa)
	}
	if err == nil {
		err = unix.Listen(fd, backlog)
	}
	if err != nil {
		_ = unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// accept takes the connections waiting on the socket, a batch at a time.
// The listening socket is level-triggered: what is left is reported again.
func (l *listener) accept(uint32) {
	h := l.h
	for range acceptBatch {
		fd, sa, err := unix.Accept4(l.fd, unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
		switch {
		case err == nil:
			h.accepted(l, fd, sa)
		case errors.Is(err, unix.EAGAIN):
			return
		case errors.Is(err, unix.EINTR), errors.Is(err, unix.ECONNABORTED):
		case errors.Is(err, unix.EMFILE), errors.Is(err, unix.ENFILE), errors.Is(err, unix.ENOBUFS), errors.Is(err, unix.ENOMEM):
			// The pause repeats every acceptPause while the condition
			// lasts: the warning is rate-limited.
			if held, ok := h.usage.fdFull.allow(h.w.Now()); ok {
				h.w.Logger().Warn("tcp: accept paused", "binding", h.cfg.Name, "address", l.addr.String(), "err", err,
					"pause", acceptPause, "paused since last warning", held)
			}
			if h.w.ModifyFD(l.fd, 0) == nil {
				h.w.TimerAt(h.w.Now().Add(acceptPause), l.resume)
			}
			return
		default:
			h.w.Logger().Error("tcp: accept", "binding", h.cfg.Name, "address", l.addr.String(), "err", err)
			return
		}
	}
}

func (l *listener) unpause() {
	if l.fd >= 0 {
		_ = l.h.w.ModifyFD(l.fd, unix.EPOLLIN)
	}
}

func (l *listener) close() {
	if l.fd < 0 {
		return
	}
	_ = l.h.w.UnregisterFD(l.fd)
	_ = unix.Close(l.fd)
	l.fd = -1
	l.h.b.releasePort(groupKey{e: l.h.w.Engine(), id: l.h.id, port: l.addr.Port()})
	if l.group != nil {
		l.h.b.unsteer(l.group)
		l.group = nil
	}
}

// accepted opens the stream of an accepted connection to the exit its
// routes choose; a connection no route takes is closed.
func (h *Handler) accepted(l *listener, fd int, sa unix.Sockaddr) {
	remote := addrPort(sa)
	exitID, ok := h.s.resolve(remote.Addr(), l.addr.Port())
	if !ok || exitID == 0 {
		_ = unix.SetsockoptLinger(fd, unix.SOL_SOCKET, unix.SO_LINGER, &unix.Linger{Onoff: 1, Linger: 0})
		_ = unix.Close(fd)
		return
	}
	local := l.addr
	if lsa, err := unix.Getsockname(fd); err == nil {
		local = addrPort(lsa)
	}
	if u := h.usage; u.conns >= u.capacity {
		// Over the worker's capacity: closed at once, as Zilla does.
		_ = unix.Close(fd)
		if held, ok := u.refused.allow(h.w.Now()); ok {
			h.w.Logger().Warn("tcp: connection closed: the worker is at capacity", "binding", h.cfg.Name,
				"address", l.addr.String(), "capacity", u.capacity, "setting", SettingWorkerCapacity, "closed since last warning", held)
		}
		return
	}
	h.usage.conns++
	h.setOptions(fd)
	c := newConn(h, true)
	c.fd = fd
	c.Connect(h.w, h.id, exitID, h.w.SupplyInitialID(exitID), c.onAppFn)
	if err := c.register(); err != nil {
		h.w.Logger().Error("tcp: register accepted socket", "binding", h.cfg.Name, "err", err)
		c.closeSocket(true)
		return
	}
	c.src, c.dst = remote, local
	c.doBegin()
}

// setOptions applies nodelay and keepalive to a connected socket.
func (h *Handler) setOptions(fd int) {
	if h.s.nodelay {
		_ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	}
	if h.s.keepalive {
		_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_KEEPALIVE, 1)
	}
}

// sockaddr returns the socket family and address of addr.
func sockaddr(addr netip.AddrPort) (int, unix.Sockaddr) {
	a := addr.Addr()
	if a.Is4() || a.Is4In6() {
		return unix.AF_INET, &unix.SockaddrInet4{Port: int(addr.Port()), Addr: a.Unmap().As4()}
	}
	return unix.AF_INET6, &unix.SockaddrInet6{Port: int(addr.Port()), Addr: a.As16()}
}

// addrPort returns the address of an IPv4 or IPv6 socket address, IPv4
// addresses mapped into IPv6 unmapped.
func addrPort(sa unix.Sockaddr) netip.AddrPort {
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		return netip.AddrPortFrom(netip.AddrFrom4(a.Addr), uint16(a.Port))
	case *unix.SockaddrInet6:
		return netip.AddrPortFrom(netip.AddrFrom16(a.Addr).Unmap(), uint16(a.Port))
	}
	return netip.AddrPort{}
}
