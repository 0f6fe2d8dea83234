// Package tcp is the tcp binding: kind server accepts TCP connections and
// opens one application stream per connection; kind client opens one TCP
// connection per application stream. The bytes of the connection are the
// DATA of the stream, in both directions.
//
// # Streams
//
// A server's stream goes to the exit of the first route whose when matches
// the connection (cidr: the remote address, port: the local port), else
// to the binding's exit; a connection no route takes is reset. A client's
// stream is the application's; its routes, when there are any, list the
// destinations it may connect to.
//
// The BEGIN of every stream carries a ProxyBeginEx (engine/frame/proxy,
// typeId "proxy") with the connection's addresses, protocol STREAM,
// source the side that opened the connection:
//
//   - a server's BEGIN names the remote client as source and its own
//     listening address as destination;
//   - a client reads its destination from the application's BEGIN: an INET
//     host name or address, or INET4/INET6 octets, with a port; a missing
//     host or port (or no ProxyBeginEx) takes the options' host and port;
//   - a client's reply BEGIN names its local address as source and the
//     server it reached as destination.
//
// Addresses are written as INET text ("127.0.0.1", "::1"): scripts and logs
// read them as they are, and an address is formatted once per connection,
// with no allocation. Zilla writes INET4/INET6 octets; the client accepts
// both.
//
// # Data and flow control
//
// Bytes read from a socket go straight into the ring of the application's
// worker: the binding claims a DATA frame there with [engine.Worker.Claim],
// reads the socket into its payload, writes the header for the count read
// and commits the frame ([engine.FrameClaim.Commit]); nothing is copied.
// A read never asks for more than the window the application granted less
// its padding. When the window is exhausted the binding stops reading:
// the bytes stay in the kernel, whose receive window then holds the peer
// back, and reading resumes when a WINDOW arrives.
//
// Bytes from the application are written to the socket as they arrive.
// What the socket does not take waits in a buffer pool slot (or, when the
// pool is exhausted, a buffer of the connection's own) until the socket is
// writable again. The window granted to the application is the slot's
// size, and credit returns only as bytes reach the socket, so a slow peer
// slows the application down instead of filling memory.
//
// Sockets are registered edge-triggered (EPOLLET). The binding remembers
// whether a socket may still have bytes to read or room to write, so
// stopping on an exhausted window and resuming on WINDOW costs no
// epoll_ctl, where a level-triggered registration would need one each way
// to avoid spinning. A read shorter than asked for means the socket is
// drained, and the next arrival is a new edge, so a message costs one
// read.
//
// # Closing
//
//   - The peer's FIN (read returns 0) ends the stream's direction from the
//     socket with END; the other direction goes on (half-close).
//   - The application's END shuts the socket's sending side down
//     (shutdown SHUT_WR) once the buffered bytes are written.
//   - A broken socket (ECONNRESET, EPIPE, …) aborts the direction from the
//     socket (ABORT) and resets the one to it (RESET).
//   - The application's ABORT or RESET closes the socket abortively, with
//     SO_LINGER 0 so that the peer sees RST, and closes the other
//     direction the same way.
//   - Once both directions are closed the socket is closed and forgotten.
//   - A frame the engine refuses, its ring and the worker's backlog both
//     full, tears the connection down as a broken socket does; a read
//     whose ring claim is refused waits for the ring to drain instead.
//
// A client whose connection cannot be made (refused, unreachable, a host
// name that does not resolve, a destination the routes do not permit)
// answers the stream with RESET and nothing else; as in Zilla, the
// application gives up its reply with a RESET of its own.
//
// # Limits
//
// A socket that takes none of the bytes waiting for it within
// write-timeout (default 60 s, as nginx's send_timeout) is reset, so a
// peer that stops reading cannot hold a buffer and, through flow control,
// the application. A client's connect that has not completed within
// write-timeout (a peer that drops its SYNs) is refused the same way, with
// RESET, rather than waiting out the kernel's retries. Zilla's tcp binding
// has no such timeout: the option is Sluice's own.
//
// The server connections of one worker, all tcp servers together, are
// bounded by the engine setting engine.worker.capacity, as Zilla's tcp
// server bounds them by zilla.engine.worker.capacity: a connection
// accepted beyond it is closed at once (its client reads the end of the
// stream). Where Zilla's default follows the memory, Sluice's is the
// worker's share of half the open-file limit, at most 16384, so that a
// flood of clients meets the capacity before the process runs out of
// descriptors; Sluice counts a client's connections against none.
//
// When accept fails for want of descriptors or memory (EMFILE, ENFILE,
// ENOBUFS, ENOMEM), the listener rests for 100 ms and retries; the
// warning is logged at most once per 10 s per worker, with the count of
// the pauses in between. The same bound applies to the warning for
// connections closed at capacity.
//
// # Host names
//
// A server listens on an IP address or localhost (the IPv4 loopback
// address). A client connects to IP literals and localhost at once; any
// other host name is looked up on a goroutine of its own (bounded by ten
// seconds), and the connect resumes on the worker through
// [engine.Worker.Dispatch], so the worker never blocks. The first address
// returned is used.
//
// # Listening and steering
//
// Each worker opens its own non-blocking listening socket on every port,
// all in one SO_REUSEPORT group, and serves the connections it accepts
// for their whole life. The kernel hashes each new connection to one of
// the group's sockets.
//
// With steering: ebpf, the binding loads a BPF_PROG_TYPE_SK_REUSEPORT
// program, built with cilium/ebpf's asm package (no C compiler), that
// selects the socket of worker cpu % workers from a REUSEPORT_SOCKARRAY,
// cpu being the CPU the connection arrives on; attached with
// SO_ATTACH_REUSEPORT_EBPF, it keeps a connection on the worker pinned to
// the CPU that received it. Loading needs CAP_BPF or CAP_SYS_ADMIN (and,
// before Linux 5.11, room under RLIMIT_MEMLOCK). Where the kernel refuses,
// the binding logs one warning per group and carries on with plain
// SO_REUSEPORT. Steering is off by default (none).
//
// # Configuration
//
//	bindings:
//	  net0:
//	    type: tcp
//	    kind: server
//	    options:
//	      host: 0.0.0.0         # an IP address or localhost (default 0.0.0.0)
//	      port: [8080, "9000-9003"] # a port, a "from-to" range, or a list of them
//	      backlog: 1024         # listen backlog (default 4096, capped by somaxconn)
//	      nodelay: true         # TCP_NODELAY (default true)
//	      keepalive: false      # SO_KEEPALIVE (default false)
//	      steering: ebpf        # none (default) or ebpf
//	      write-timeout: 60s    # or PT60S; the default
//	    routes:
//	      - exit: internal0
//	        when:
//	          - cidr: 10.0.0.0/8
//	    exit: http0
//	  upstream0:
//	    type: tcp
//	    kind: client
//	    options:
//	      host: api.example.com # the default destination, overridden by a ProxyBeginEx
//	      port: 443
package tcp
