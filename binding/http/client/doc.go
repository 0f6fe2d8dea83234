// Package client is the http binding's client kind (type http, kind
// client): it sends each application stream as an HTTP/1.1 request on a
// pooled connection opened through its exit.
//
// Each application stream is one request: the BEGIN's [http.HttpBeginEx]
// names :method, :scheme, :authority and :path with the request headers,
// DATA is the body and END ends it. The response comes back on the reply:
// a BEGIN with :status and the headers, the body as DATA as it arrives
// (content-length, chunked, or up to the close), and END. The client
// speaks plain HTTP only: a request whose :scheme is not http is refused
// with RESET rather than sent in cleartext.
//
// The head is written as Zilla's client writes it: the request line, Host
// (from :authority), then the request's headers in their order with names
// in title case (Content-Type), then Transfer-Encoding: chunked when the
// request has a body of unknown length.
//
// Connections are per worker and per authority. A request takes the
// connection idle longest, or opens one through the exit (a tcp client,
// sys:tcp_client when the binding names none) with a ProxyBeginEx naming
// the host and port. A connection the server keeps alive goes back to the
// pool, which closes it after idle-timeout unused (sooner when the
// server's Keep-Alive field asks), and at once when the pool already holds
// max-idle idle connections to its authority.
//
//	bindings:
//	  client0:
//	    type: http
//	    kind: client
//	    options:
//	      idle-timeout: 90s        # or PT90S; the default
//	      max-idle: 256            # per authority and worker; the default
//	      header-timeout: 60s      # none by default
//	      limits: {headers: 100, header-bytes: 16384}
//
// header-timeout bounds the wait for a response head from the request's
// end, as Go's Transport's ResponseHeaderTimeout does: past it the app is
// answered 504 and the connection is closed. A response whose head has
// come is not timed, however long its body (an event stream) takes.
// Without it the client waits as long as its app does, as Zilla's does;
// the mcp client kind has its own timeout.
//
// With options.authorization, a request whose stream carries an
// authorized session goes out with the guard's credentials for that
// session, as Zilla's client sends them: in the configured header
// (replacing the app's in place, or last), cookie (joined to the app's
// Cookie) or query parameter (after the path's own), each written around
// {credentials}; such a client pools connections per session, and each
// connection's BEGIN carries its session.
//
// The server's options (limits.body, access-control) are accepted and
// not used.
package client
