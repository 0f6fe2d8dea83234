// Package server is the http binding's server kind (type http, kind
// server): it reads HTTP/1.1 from its network side and turns each request
// into an application stream.
//
// A network stream is a connection, usually from a tcp server. Each
// request on it opens one application stream to the exit its route
// chooses: the BEGIN's [http.HttpBeginEx] carries the request headers
// in Zilla's order: :scheme, :method and :path first, then the fields
// with lower-case names, hop-by-hop ones dropped and Host turned into
// :authority where it stands (an absolute-form target's authority comes
// right after :path instead), DATA the decoded body, END
// its end. The application's reply BEGIN carries :status and the response
// headers, its DATA the body and its END the trailers. Requests on a
// connection are answered in order.
//
// Routes match on request headers, pseudo-headers included; a value
// ending in * matches a prefix. The first route that matches names the
// exit, and a request that none matches gets 404 when the binding has no
// exit of its own. Authorization hands the credentials it finds (in a
// header, a query parameter or a cookie) to a guard, and a route's guarded
// roles are checked against the session the guard returns (401, 403).
// Access-control answers CORS preflights and adds the CORS response
// headers. Malformed or oversized requests get the status package h1
// names, and an application's RESET a 503 (or the :status of its
// [http.HttpResetEx]).
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
//	      authorization:
//	        jwt0:
//	          credentials:
//	            headers: {authorization: "Bearer {credentials}"}
//	      access-control:
//	        policy: cross-origin
//	        allow: {origins: ["https://app.example"], methods: [POST]}
//
// The client's options (idle-timeout, max-idle) are accepted and not used.
package server
