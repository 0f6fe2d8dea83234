package server

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/sluicehq/sluice/binding/http"
	"github.com/sluicehq/sluice/binding/http/h1"
	"github.com/sluicehq/sluice/idl/flyweight"
)

// cors is the compiled access-control option, with Zilla's semantics. A
// list left out of the options allows anything and is answered with "*";
// a list given (or allow.credentials) makes the answer explicit: the
// request's origin, method or headers echoed back.
type cors struct {
	crossOrigin bool     // policy cross-origin; else same-origin
	origins     []string // allowed origins, nil for any; with their implicit-port twins
	methods     []string // allowed methods, nil for any
	headers     []string // allowed request headers (lower case), nil for any
	credentials bool
	maxAge      string   // seconds, empty when not configured
	expose      []string // exposed response headers (lower case), nil for all
}

// defaultExposed are the response headers a browser exposes by itself
// (the CORS-safelisted ones, and Server and Date as Zilla counts them):
// they are never listed in Access-Control-Expose-Headers.
var defaultExposed = []string{"cache-control", "content-language", "content-length", "content-type",
	"expires", "last-modified", "pragma", "server", "date"}

func compileCORS(ac *http.AccessControlOptions) *cors {
	c := &cors{crossOrigin: ac.Policy == "cross-origin", credentials: ac.Allow.Credentials}
	if ac.Allow.Origins != nil {
		c.origins = []string{}
		for _, o := range ac.Allow.Origins {
			o = strings.TrimSuffix(o, "/")
			c.origins = append(c.origins, o)
			if twin, ok := implicitPortTwin(o); ok {
				c.origins = append(c.origins, twin)
			}
		}
	}
	if ac.Allow.Methods != nil {
		c.methods = append([]string{}, ac.Allow.Methods...)
	}
	if ac.Allow.Headers != nil {
		c.headers = []string{}
		for _, h := range ac.Allow.Headers {
			c.headers = append(c.headers, strings.ToLower(h))
		}
	}
	if ac.MaxAge > 0 {
		c.maxAge = strconv.Itoa(ac.MaxAge)
	}
	if ac.Expose.Headers != nil {
		c.expose = []string{}
		for _, h := range ac.Expose.Headers {
			c.expose = append(c.expose, strings.ToLower(h))
		}
	}
	return c
}

// implicitPortTwin returns the same origin written the other way round
// for its scheme's default port: "https://h" and "https://h:443" name
// one origin.
func implicitPortTwin(origin string) (string, bool) {
	scheme, authority, ok := strings.Cut(origin, "://")
	if !ok || strings.ContainsAny(authority, "/?#") {
		return "", false
	}
	port := defaultPort(scheme)
	if port == "" {
		return "", false
	}
	if host, p, has := cutPort(authority); has {
		if p == port {
			return scheme + "://" + host, true
		}
		return "", false
	}
	return origin + ":" + port, true
}

// cutPort splits "host:port" (a bracketed IPv6 host included); has is
// false when the authority names no port.
func cutPort[S string | []byte](authority S) (host, port S, has bool) {
	for i := len(authority) - 1; i >= 0; i-- {
		switch authority[i] {
		case ':':
			return authority[:i], authority[i+1:], true
		case ']':
			return authority, authority[:0], false
		}
	}
	return authority, authority[:0], false
}

// defaultPort is the port an origin of scheme means when it names none.
func defaultPort[S string | []byte](scheme S) string {
	switch string(scheme) {
	case "http":
		return "80"
	case "https":
		return "443"
	}
	return ""
}

func contains(list []string, v []byte) bool {
	for _, s := range list {
		if s == string(v) {
			return true
		}
	}
	return false
}

func (cs *cors) allowOrigin(origin []byte) bool {
	return !cs.crossOrigin || cs.origins == nil || contains(cs.origins, origin)
}

func (cs *cors) allowMethod(method []byte) bool {
	return !cs.crossOrigin || cs.methods == nil || contains(cs.methods, method)
}

// allowHeaders reports whether a preflight's requested headers (a comma
// list) pass: any list when none is configured, else when at least one
// of them is allowed, as Zilla checks.
func (cs *cors) allowHeaders(list []byte) bool {
	if !cs.crossOrigin || cs.headers == nil {
		return true
	}
	for len(list) > 0 {
		f := list
		if i := bytes.IndexByte(list, ','); i >= 0 {
			f, list = list[:i], list[i+1:]
		} else {
			list = nil
		}
		f = bytes.TrimSpace(f)
		for _, h := range cs.headers {
			if len(f) > 0 && h1.EqualFold(f, h) {
				return true
			}
		}
	}
	return false
}

func (cs *cors) originExplicit() bool { return cs.crossOrigin && (cs.credentials || cs.origins != nil) }
func (cs *cors) methodsExplicit() bool {
	return cs.crossOrigin && (cs.credentials || cs.methods != nil)
}
func (cs *cors) headersExplicit() bool {
	return cs.crossOrigin && (cs.credentials || cs.headers != nil)
}
func (cs *cors) exposeExplicit() bool { return cs.crossOrigin && (cs.credentials || cs.expose != nil) }

// exposes reports whether a response header is one to name in
// Access-Control-Expose-Headers.
func (cs *cors) exposes(name []byte) bool {
	if len(name) == 0 || name[0] == ':' {
		return false
	}
	for _, d := range defaultExposed {
		if h1.EqualFold(name, d) {
			return false
		}
	}
	if cs.expose == nil {
		return true
	}
	for _, e := range cs.expose {
		if h1.EqualFold(name, e) {
			return true
		}
	}
	return false
}

// sameOrigin reports whether the request's Origin names the origin it was
// sent to: the same scheme and authority, a default port written or not.
func (c *serverConn) sameOrigin(origin []byte) bool {
	scheme, _ := c.headerValue([]byte(":scheme"))
	authority, ok := c.headerValue([]byte(":authority"))
	os, oa, found := bytes.Cut(origin, []byte("://"))
	if !ok || !found || !bytes.Equal(os, scheme) {
		return false
	}
	if bytes.Equal(oa, authority) {
		return true
	}
	oh, op, ohas := cutPort(oa)
	ah, ap, ahas := cutPort(authority)
	if ohas && ahas {
		return false
	}
	def := defaultPort(scheme)
	if def == "" || !bytes.Equal(oh, ah) {
		return false
	}
	// One of the two names a port (both or neither would have matched
	// above): it must be the scheme's default.
	if ohas {
		return string(op) == def
	}
	return ahas && string(ap) == def
}

// preflighted reports whether the request is a CORS preflight: OPTIONS
// with an Origin and an Access-Control-Request-Method or -Headers.
func (c *serverConn) preflighted(x *exchange) bool {
	if string(c.req.Method) != "OPTIONS" || x.origin == nil {
		return false
	}
	if _, ok := c.headerValue([]byte("access-control-request-method")); ok {
		return true
	}
	_, ok := c.headerValue([]byte("access-control-request-headers"))
	return ok
}

// preflight answers a CORS preflight request: 403 when its origin, method
// or headers are not allowed, else 204 with the Access-Control-Allow
// fields, as Zilla writes them.
func (x *exchange) preflight(cs *cors) {
	c := x.c
	h := c.h
	method, hasMethod := c.headerValue([]byte("access-control-request-method"))
	headers, hasHeaders := c.headerValue([]byte("access-control-request-headers"))
	if !cs.allowOrigin(x.origin) || hasMethod && !cs.allowMethod(method) || hasHeaders && !cs.allowHeaders(headers) {
		x.respondLocal(403, nil)
		return
	}
	head := h.appendServer(h1.AppendStatusLine(h.head[:0], 1, 204))
	if cs.originExplicit() {
		head = h1.AppendHeader(head, []byte("Access-Control-Allow-Origin"), x.origin)
	} else {
		head = h1.AppendHeader(head, []byte("Access-Control-Allow-Origin"), []byte("*"))
	}
	if hasMethod {
		if cs.methodsExplicit() {
			head = h1.AppendHeader(head, []byte("Access-Control-Allow-Methods"), method)
		} else {
			head = h1.AppendHeader(head, []byte("Access-Control-Allow-Methods"), []byte("*"))
		}
	}
	if hasHeaders {
		if cs.headersExplicit() {
			head = h1.AppendHeader(head, []byte("Access-Control-Allow-Headers"), headers)
		} else {
			head = h1.AppendHeader(head, []byte("Access-Control-Allow-Headers"), []byte("*"))
		}
	}
	if (hasMethod || hasHeaders) && cs.maxAge != "" {
		head = h1.AppendHeader(head, []byte("Access-Control-Max-Age"), []byte(cs.maxAge))
	}
	if x.flags.Has(xChunked) || x.remaining > 0 || !x.flags.Has(xKeepAlive) {
		head = h1.AppendHeader(head, []byte("Connection"), []byte("close"))
		x.flags.Unset(xKeepAlive)
	}
	head = append(head, "\r\n"...)
	h.head = head
	c.writeNet(head)
	x.complete()
}

// appendCORS adds the CORS fields to a response under a cross-origin
// policy, given the response's headers, unless the app wrote its own
// Access-Control-Allow-Origin: the allowed origin (the request's when
// explicit, else "*"), Allow-Credentials, the exposed headers (each named
// when explicit, else "*" when there is any to expose) and Vary: Origin
// when the answer depends on the origin.
func (x *exchange) appendCORS(head []byte, headers flyweight.Array[http.HttpHeader, *http.HttpHeader], has bool) []byte {
	cs := x.c.h.s.cors
	if cs == nil || !x.flags.Has(xCrossOrigin) {
		return head
	}
	hd := new(http.HttpHeader)
	if has {
		for hc := headers.Cursor(); http.NextHeader(&hc, hd); {
			if h1.EqualFold(hd.Name(), "access-control-allow-origin") {
				return head
			}
		}
	}
	explicit := cs.originExplicit() && x.origin != nil
	if explicit {
		head = h1.AppendHeader(head, []byte("Access-Control-Allow-Origin"), x.origin)
	} else {
		head = h1.AppendHeader(head, []byte("Access-Control-Allow-Origin"), []byte("*"))
	}
	if cs.credentials {
		head = h1.AppendHeader(head, []byte("Access-Control-Allow-Credentials"), []byte("true"))
	}
	if has {
		any := false
		for hc := headers.Cursor(); http.NextHeader(&hc, hd); {
			if !cs.exposes(hd.Name()) {
				continue
			}
			if !cs.exposeExplicit() {
				any = true
				break
			}
			head = append(head, "Access-Control-Expose-Headers: "...)
			head = append(h1.AppendTitle(head, hd.Name()), '\r', '\n')
		}
		if any {
			head = h1.AppendHeader(head, []byte("Access-Control-Expose-Headers"), []byte("*"))
		}
	}
	if explicit {
		head = h1.AppendHeader(head, []byte("Vary"), []byte("Origin"))
	}
	return head
}
