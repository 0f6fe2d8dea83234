package server

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"

	"github.com/sluicehq/sluice/binding/mcp/jsonrpc"
	"github.com/sluicehq/sluice/engine/guard"
	"github.com/sluicehq/sluice/engine/telemetry"
)

// metricUnauthorized counts the requests the binding's guard refused, by
// the Bearer error they were answered with.
const metricUnauthorized = "mcp.server.unauthorized"

func init() {
	telemetry.Describe(metricUnauthorized, telemetry.KindCounter, telemetry.UnitNone,
		"The number of requests refused for their Authorization header: a bearer token the guard refused (invalid_token) or a header outside the credentials pattern (invalid_request).")
}

// bearerError is the error a Bearer challenge names (RFC 6750 §3.1).
type bearerError uint8

const (
	bearerNone bearerError = iota
	bearerInvalidRequest
	bearerInvalidToken
	bearerInsufficientScope
)

func (e bearerError) String() string {
	switch e {
	case bearerInvalidRequest:
		return "invalid_request"
	case bearerInvalidToken:
		return "invalid_token"
	case bearerInsufficientScope:
		return "insufficient_scope"
	}
	return ""
}

// authorize checks the request's bearer token with the binding's guard,
// on the worker that serves the request. A request without an
// Authorization header stays anonymous, as in Zilla: a guarded route
// further on decides. A header outside the credentials pattern is
// answered 400 invalid_request, and a token the guard refuses 401
// invalid_token, before anything of the request is read.
func (r *request) authorize(ext []byte) {
	h := r.h
	v, ok := h.authorizationHeader(ext)
	if !ok {
		return
	}
	// The text before {credentials} holds the scheme, which is
	// case-insensitive (RFC 9110 §11.1).
	pre, suf := h.s.credPrefix, h.s.credSuffix
	ok = len(v) >= len(pre)+len(suf) && bytes.EqualFold(v[:len(pre)], pre) && bytes.HasSuffix(v, suf)
	if !ok || len(v) == len(pre)+len(suf) {
		r.hdr.early, r.hdr.bearer = 400, bearerInvalidRequest
		h.countUnauthorized(bearerInvalidRequest)
		return
	}
	cred := v[len(pre) : len(v)-len(suf)]
	session := h.guard.Reauthorize(r.Out.Trace, h.cfg.ID, r.InID(), string(cred))
	if !guard.Authorized(session) {
		r.hdr.early, r.hdr.bearer = 401, bearerInvalidToken
		h.countUnauthorized(bearerInvalidToken)
		return
	}
	r.guardSess = session
	r.Out.Auth = session
}

// countUnauthorized counts a refused request in mcp.server.unauthorized.
func (h *server) countUnauthorized(e bearerError) {
	c := &h.unauthorized[e]
	if *c == nil {
		*c = h.w.Metrics().Counter(metricUnauthorized,
			telemetry.MustLabels("namespace", h.cfg.Namespace, "binding", h.cfg.Name, "error", e.String()))
	}
	(*c).Add(1)
}

// identity is the guard identity of the request's token, "" for none.
func (r *request) identity() string {
	if r.guardSess == 0 {
		return ""
	}
	return r.h.guard.Identity(r.guardSess)
}

// owns reports whether the request may use session s: any request may
// use an anonymous session; one whose initialize carried a token only a
// request whose token has the same identity, so that a session id that
// leaks serves no one else (MCP's security best practices bind sessions
// to their user). Another caller finds no such session.
func (r *request) owns(s *session) bool {
	return s.owner == "" || s.owner == r.identity()
}

// tokenExpired reports whether the bearer token a standing event stream
// was opened with has expired: the stream then ends at its next
// keep-alive, and the client opens it again with a fresh token (resuming
// after Last-Event-ID), rather than hear a session's events for as long
// as it holds the connection.
func (r *request) tokenExpired() bool {
	if r.guardSess == 0 {
		return false
	}
	exp := r.h.guard.ExpiresAt(r.guardSess)
	return exp != guard.ExpiresNever && r.h.w.Now().UnixMilli() >= exp
}

// authorizationHeader returns the Authorization header's value; the
// header scan has refused a request that gives it twice.
func (h *server) authorizationHeader(ext []byte) ([]byte, bool) {
	it, ok := httpHeaders(ext, h.httpTypeID)
	if !ok {
		return nil, false
	}
	for name, v, ok := it.next(); ok; name, v, ok = it.next() {
		if string(name) == "authorization" {
			return v, true
		}
	}
	return nil, false
}

// challenge answers the request with status and a Bearer challenge in
// WWW-Authenticate, the realm, scope and resource_metadata parameters
// given when not nil, and a JSON-RPC error that names the same error.
func (r *request) challenge(status int, code bearerError, realm, scopes, resourceMetadata []byte) {
	h := r.h
	auth := append(h.aux[:0], "Bearer"...)
	sep := " "
	param := func(name string, v []byte) {
		auth = append(auth, sep...)
		auth = append(auth, name...)
		auth = append(auth, '=')
		auth = jsonrpc.AppendString(auth, v)
		sep = ", "
	}
	if realm != nil {
		param("realm", realm)
	}
	param("error", []byte(code.String()))
	if scopes != nil {
		param("scope", scopes)
	}
	if resourceMetadata == nil {
		resourceMetadata = h.s.prmURL
	}
	if resourceMetadata != nil {
		param("resource_metadata", resourceMetadata)
	}
	msg := append(h.msg[:0], "Unauthorized: "...)
	switch status {
	case 403:
		msg = append(h.msg[:0], "Forbidden: "...)
	case 400:
		msg = append(h.msg[:0], "Bad Request: "...)
	}
	msg = append(msg, code.String()...)
	body := appendErrorBody(h.scratch[:0], r.res.id, codeTransport, msg, nil)
	r.res.mode = modeLocal
	r.beginReply(status, "application/json", len(body), auth)
	r.write(body)
	r.endReply()
}

// wellKnownPRM is where RFC 9728 §3 puts a protected resource's metadata:
// this, then the resource's path.
const wellKnownPRM = "/.well-known/oauth-protected-resource"

// protectedResource makes the metadata document of options.protectedResource
// and the URL it is served at (RFC 9728 §3.1: the well-known path between
// the resource's host and its path), which the server's Bearer challenges
// name as resource_metadata (MCP's authorization discovery).
func protectedResource(resource string, servers, scopes []string) (doc, at []byte, err error) {
	u, err := absoluteURL(resource)
	if err != nil {
		return nil, nil, fmt.Errorf("resource %q: %w", resource, err)
	}
	if u.RawQuery != "" {
		return nil, nil, fmt.Errorf("resource %q: want no query (RFC 9728 §2)", resource)
	}
	doc = jsonrpc.AppendString(append(doc, `{"resource":`...), []byte(resource))
	doc = append(doc, `,"authorization_servers":[`...)
	for i, as := range servers {
		if _, err := absoluteURL(as); err != nil {
			return nil, nil, fmt.Errorf("authorizationServers[%d] %q: %w", i, as, err)
		}
		if i > 0 {
			doc = append(doc, ',')
		}
		doc = jsonrpc.AppendString(doc, []byte(as))
	}
	doc = append(doc, ']')
	if len(scopes) > 0 {
		doc = append(doc, `,"scopes_supported":[`...)
		for i, sc := range scopes {
			if i > 0 {
				doc = append(doc, ',')
			}
			doc = jsonrpc.AppendString(doc, []byte(sc))
		}
		doc = append(doc, ']')
	}
	doc = append(doc, `,"bearer_methods_supported":["header"]}`...)
	path := u.EscapedPath()
	if path == "/" {
		path = ""
	}
	at = []byte(u.Scheme + "://" + u.Host + wellKnownPRM + path)
	return doc, at, nil
}

// absoluteURL parses an http or https URL with a host and no fragment.
func absoluteURL(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return nil, err
	case u.Scheme != "https" && u.Scheme != "http" || u.Host == "":
		return nil, errors.New("want an absolute http or https URL")
	case u.Fragment != "" || u.User != nil:
		return nil, errors.New("want no fragment or user info")
	}
	return u, nil
}

// isWellKnownPRM reports whether a GET's path asks for the protected
// resource metadata: the well-known path, whatever follows it.
func (h *server) isWellKnownPRM(path []byte) bool {
	return h.s.prm != nil && bytes.HasPrefix(path, []byte(wellKnownPRM))
}

// servePRM answers the protected resource metadata, which needs no token.
func (g *getStream) servePRM() {
	h := g.h
	if g.hdr.early != 0 {
		g.respondEarly()
		return
	}
	g.res.mode = modeLocal
	g.beginReply(200, "application/json", len(h.s.prm), nil)
	g.write(append(h.scratch[:0], h.s.prm...))
	g.endReply()
}
