// Package server is the http binding's server kind (type http, kind
// server): it reads HTTP/1.1 from its network side and turns each request
// into an application stream.
//
// A network stream is a connection, usually from a tcp server. Each
// request on it opens one application stream to the exit its route
// chooses: the BEGIN's [http.HttpBeginEx] carries the request headers
// in Zilla's order: :scheme, :method and :path first, then the fields
// with lower-case names, hop-by-hop ones dropped (but for
// transfer-encoding: chunked, which the app is told of) and Host turned into
// :authority where it stands (an absolute-form target's authority comes
// right after :path instead), DATA the decoded body, END
// its end. When the network BEGIN's ProxyBeginEx names the client's
// address (a tcp server's does), :remote-address comes after the
// pseudo-headers of the request line with that IP, without its port (an IPv4-mapped address as IPv4), so that
// the app can bound what one client holds (the mcp server's
// limits.sessionsPerAddress). Zilla has no such header; it is Sluice's,
// and no request field can forge it, since a field name holds no ':'. The application's reply BEGIN carries :status and the response
// headers, its DATA the body and its END the trailers. Requests on a
// connection are answered in order.
//
// Routes match on request headers, pseudo-headers included, as the app
// is sent them (an absolute-form target's :path is its path and query,
// "/" first when it names no path); a value ending in * matches a prefix. The first route that matches names the
// exit, and a request that none matches gets 404 when the binding has no
// exit of its own. :scheme is https when the network BEGIN's ProxyBeginEx
// names a TLS version, as Zilla decides. Authorization hands the
// credentials it finds (in a header, a query parameter or a cookie) to a
// guard: none found is a 401, found and refused a 403, and a route's
// guarded roles are checked against the session the guard returns (403).
// A header or query parameter the server reads one value of (a route's
// header, a credentials source, Origin under an access-control policy)
// given twice is a 400, even with the same value: the app or an upstream
// might read the other one, or both joined (a check of Sluice's own).
//
// Responses are written as Zilla writes them, byte for byte: field names
// in title case (Content-Type), a Server field first when the engine
// setting http.server.header is set and the app sent none, then the
// app's headers in order, Transfer-Encoding: chunked for a body of
// unknown length on a connection that stays open (a closing one ends the
// body), then the CORS fields. The server's own answers (no route, 401,
// 403, a malformed request, a method outside RFC 9110 and PATCH: 501)
// are the status line, Server and Connection: close, with no body, and
// the connection closes after them. An application's RESET before its
// response is answered with the :status and headers of its
// [http.HttpResetEx], or 404, with Content-Length: 0. Connection: close
// is written when the request or the app asked for it, not when the
// client has only half-closed. A response head waits for the body's
// first bytes (an event stream's does not), so that a small response
// leaves in one write. A response the app aborts, or cannot frame (a
// body unlike its content-length), is answered 502 while nothing of it
// has left, and cut short by an abrupt close after that.
//
// Access-control follows Zilla's policies. same-origin refuses (403) a
// request whose Origin is not the origin it was sent to. cross-origin
// lets through the allowed origins (any when allow.origins is left out)
// and adds Access-Control-Allow-Origin to each response (the request's
// origin when allow.origins or allow.credentials is given, with Vary:
// Origin, else *), Allow-Credentials, and Access-Control-Expose-Headers
// (each exposed header by name when expose.headers or allow.credentials
// is given, else *). A preflight (OPTIONS with an Origin and
// Access-Control-Request-Method or -Headers) is answered 204 echoing what
// it asked, or * when the list is left out, with Access-Control-Max-Age,
// or 403. Without the access-control option the server applies no policy
// at all, where Zilla applies same-origin: Sluice leaves a gateway's
// origin checks to the application (the mcp server kind has its own).
//
// Where Sluice differs on purpose: a 401 carries WWW-Authenticate: Bearer
// (RFC 9110 §11.6.1 requires a challenge; Zilla sends none), and a
// request whose Transfer-Encoding does not end in chunked is a 400 as
// RFC 9112 §6.3 requires (Zilla answers 501). An HTTP/1.1 request in
// absolute-form may leave out Host, as Zilla and k3po's http transport
// allow.
//
// Connections are bounded in time, with options of Sluice's own (Zilla's
// server has none), defaults in the range of nginx's and Go's servers:
// header-timeout (30 s) for a request head from its first byte, or from
// the connection's start; body-timeout (60 s) between two reads of a
// request body, not counting the time the app holds the body back; and
// idle-timeout (120 s, longer than the 90 s Go's and Sluice's clients keep
// an idle connection, so that the client closes first) between requests.
// A head or body late gets 408, a connection idle (or silent from its
// start) is closed with no response. While the app works on a request no
// client timeout runs; tcp's write-timeout bounds a response the client
// does not read. After a connection's last response (a 408, a 413, a
// Connection: close) the client has 5 s to close its side while what it
// sends is dropped, then the connection is reset, as nginx's lingering
// close.
//
// A request body is bounded by limits.body, 1 MiB by default (nginx's
// client_max_body_size; Zilla has no limit), 0 for none. A body over it
// is answered 413 as soon as that is known, and the connection closes: a
// Content-Length over the limit at once, before the app hears of the
// request and instead of a 100 Continue, and a chunked body at the chunk
// that passes it (or, when the app's response has begun, the connection
// is aborted).
//
// An app may answer before it has read the whole body. Its request then
// ends (ABORT), and the rest of the body is read and dropped by its
// framing before the connection takes its next request, as Go's server
// does, since the response did not say Connection: close; a chunked body
// passing limits.body, or a client silent for body-timeout, closes the
// connection instead. An app that refuses the rest with RESET once its
// response has begun has it read and dropped the same way, as it comes,
// while the response goes on. A response that begins while the
// client is still owed 100 Continue says Connection: close: the client
// may send the body or, seeing a final status, skip it, and the bytes
// that follow cannot be read one way.
//
//	bindings:
//	  http0:
//	    type: http
//	    kind: server
//	    exit: app0                 # when no route matches
//	    routes:
//	      - exit: api0
//	        when:
//	          - headers: {":path": "/api/*"}
//	        guarded: {jwt0: [read]}
//	    options:
//	      limits: {target: 8192, headers: 100, header-bytes: 16384, body: 1048576}
//	      header-timeout: 30s      # or PT30S; the defaults
//	      body-timeout: 60s
//	      idle-timeout: 120s
//	      authorization:
//	        jwt0:
//	          credentials:
//	            headers: {authorization: "Bearer {credentials}"}
//	      access-control:
//	        policy: cross-origin
//	        allow: {origins: ["https://app.example"], methods: [POST]}
//
// The client's option max-idle is accepted and not used.
//
// When the engine drains (a Sluice step Zilla has not), the server closes
// each idle connection, answers the request under way on each other one
// with Connection: close and closes it after, and ends the event stream of
// a GET with the chunked body's end, resetting the app's side: such a
// stream is held open, not in flight, and its client reconnects elsewhere.
// A request whose client has closed its side is aborted, as Go's server
// cancels one whose connection reads EOF.
package server
