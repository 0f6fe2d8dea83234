package tcp

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sluicehq/sluice/engine/frame"
	"github.com/sluicehq/sluice/engine/frame/proxy"
)

// resolveTimeout bounds the lookup of a host name.
const resolveTimeout = 10 * time.Second

// newClientConn prepares the connection of an application stream whose
// BEGIN is b; the connect starts when that BEGIN reaches the consumer.
func newClientConn(h *Handler, b *frame.Begin) *conn {
	c := newConn(h, false)
	c.Accept(h.w, b.OriginID(), b.RoutedID(), b.StreamID())
	return c
}

// onClientBegin picks the destination, the one the BEGIN's ProxyBeginEx
// names or else the binding's host and port, and connects to it. A host
// name is looked up off the worker's thread, and the connect resumes on
// it through Worker.Dispatch.
func (c *conn) onClientBegin(b *frame.Begin) {
	h := c.h
	c.connecting = true
	host, addr, port, ok := h.destination(b.Extension())
	if !ok {
		c.refuse(errors.New("malformed or unsupported proxy address"))
		return
	}
	if port == 0 && len(h.s.ports) > 0 {
		port = h.s.ports[0]
	}
	if !addr.IsValid() && host == "" {
		host, addr = h.s.host, h.s.addr
	}
	switch {
	case port == 0:
		c.refuse(errors.New("no port to connect to"))
	case addr.IsValid():
		c.connect(netip.AddrPortFrom(addr, port))
	case host == "":
		c.refuse(errors.New("no host to connect to"))
	default:
		if a, err := parseHost(host); err == nil {
			c.connect(netip.AddrPortFrom(a, port))
			return
		}
		if !validHostname(host) {
			c.refuse(errors.New("invalid host name"))
			return
		}
		w := h.w
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), resolveTimeout)
			defer cancel()
			addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
			w.Dispatch(func() { c.onResolved(addrs, port, err) })
		}()
	}
}

// destination reads the destination from a BEGIN extension: a host (INET)
// or an address (INET4, INET6), and a port, each zero when not given. An
// extension that is not a ProxyBeginEx names none; ok is false for a
// ProxyBeginEx that is malformed or names a UNIX address.
func (h *Handler) destination(ext []byte) (host string, addr netip.Addr, port uint16, ok bool) {
	var prefix frame.Extension
	if len(ext) == 0 || !prefix.TryWrap(ext, 0, len(ext)) || prefix.TypeID() != h.proxyTypeID {
		return "", netip.Addr{}, 0, true
	}
	if !h.proxyR.TryWrap(ext, 0, len(ext)) {
		return "", netip.Addr{}, 0, false
	}
	a := h.proxyR.Address()
	switch a.Kind() {
	case proxy.ProxyAddressKindInet:
		inet := a.Inet()
		if inet.Protocol() != proxy.ProxyAddressProtocolStream {
			return "", netip.Addr{}, 0, false
		}
		return inet.DestinationString(), netip.Addr{}, inet.DestinationPort(), true
	case proxy.ProxyAddressKindInet4:
		inet := a.Inet4()
		if inet.Protocol() != proxy.ProxyAddressProtocolStream {
			return "", netip.Addr{}, 0, false
		}
		return "", netip.AddrFrom4([4]byte(inet.Destination())), inet.DestinationPort(), true
	case proxy.ProxyAddressKindInet6:
		inet := a.Inet6()
		if inet.Protocol() != proxy.ProxyAddressProtocolStream {
			return "", netip.Addr{}, 0, false
		}
		return "", netip.AddrFrom16([16]byte(inet.Destination())).Unmap(), inet.DestinationPort(), true
	case proxy.ProxyAddressKindNone:
		return "", netip.Addr{}, 0, true
	}
	return "", netip.Addr{}, 0, false
}

// onResolved resumes a connect after the lookup of its host name, unless
// the stream went away meanwhile.
func (c *conn) onResolved(addrs []netip.Addr, port uint16, err error) {
	if !c.connecting {
		return
	}
	if err != nil || len(addrs) == 0 {
		c.refuse(err)
		return
	}
	c.connect(netip.AddrPortFrom(addrs[0].Unmap(), port))
}

// connect starts a non-blocking connect; its completion is the socket
// becoming writable.
func (c *conn) connect(dst netip.AddrPort) {
	h := c.h
	if len(h.s.routes) > 0 {
		if _, ok := h.s.resolve(dst.Addr(), dst.Port()); !ok {
			c.refuse(errors.New("destination not permitted by the routes"))
			return
		}
	}
	c.dst = dst
	family, sa := sockaddr(dst)
	fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, unix.IPPROTO_TCP)
	if err != nil {
		c.refuse(err)
		return
	}
	c.fd = fd
	h.setOptions(fd)
	err = unix.Connect(fd, sa)
	if err != nil && !errors.Is(err, unix.EINPROGRESS) {
		c.refuse(err)
		return
	}
	if rerr := c.register(); rerr != nil {
		c.refuse(rerr)
		return
	}
	if err == nil {
		c.onConnected()
		return
	}
	// A connect the peer never answers is bounded as a write is: the
	// socket takes nothing until it completes (onWriteTimer).
	c.expectWrite()
}

// onConnectEvent completes a connect in progress, and reports whether the
// connection is established: the same edge may also say that the peer
// has already sent bytes, or closed, which the caller goes on to handle.
func (c *conn) onConnectEvent(events uint32) bool {
	if err := socketError(c.fd); err != nil {
		c.refuse(err)
		return false
	}
	if events&(unix.EPOLLOUT|unix.EPOLLERR|unix.EPOLLHUP) == 0 {
		return false
	}
	c.onConnected()
	return c.fd >= 0
}

// onConnected begins the reply with the connection's addresses and opens
// the application's window. An END that came while connecting shuts the
// sending side down at once.
func (c *conn) onConnected() {
	c.connecting = false
	c.src = c.dst
	if sa, err := unix.Getsockname(c.fd); err == nil {
		c.src = addrPort(sa)
	}
	if sa, err := unix.Getpeername(c.fd); err == nil {
		c.dst = addrPort(sa)
	}
	c.doBegin()
}

// refuse answers a stream whose connection could not be made with RESET
// and nothing else: its reply never began.
func (c *conn) refuse(err error) {
	h := c.h
	h.w.Logger().Debug("tcp: connect refused", "binding", h.cfg.Name, "destination", c.dst.String(), "err", err)
	c.fail()
}
