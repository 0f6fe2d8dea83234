package server

import (
	"bytes"
	"fmt"
	"time"

	"github.com/sluicehq/sluice/binding/http"
	"github.com/sluicehq/sluice/binding/http/h1"
	"github.com/sluicehq/sluice/engine"
)

// Default timeouts and body limit of a connection, in the range of
// nginx's and Go's servers. A client gets headerTimeout to send a request
// head from its first byte (or from the connection's start), bodyTimeout
// between two reads of a body it sends, and idleTimeout between requests
// on a kept-alive connection: longer than the 90 s that Go's and Sluice's
// clients keep an idle connection, so that a client closes it first
// rather than reuse a connection the server is closing. defaultMaxBody is
// nginx's client_max_body_size.
const (
	defaultHeaderTimeout = 30 * time.Second
	defaultBodyTimeout   = 60 * time.Second
	defaultIdleTimeout   = 120 * time.Second
	defaultMaxBody       = 1 << 20
)

// lingerTimeout bounds how long a connection being closed after an error
// response (a 413, say) reads and drops what the client still sends, so
// that the client can read the response before the connection is reset
// (RFC 9112 §9.6), as nginx's lingering close does.
const lingerTimeout = 5 * time.Second

// credentialSource is where a guard's credentials are read from: a header,
// a query parameter or a cookie, with the text around {credentials}.
type credentialSource struct {
	kind   byte // 'h' header, 'q' query, 'c' cookie
	name   []byte
	prefix []byte
	suffix []byte
}

// authorizer ties the authorization option to the guard it names.
type authorizer struct {
	guardName string
	guard     interface {
		Reauthorize(traceID, bindingID, contextID int64, credentials string) int64
		Deauthorize(session int64)
		Verify(session int64, roles []string) bool
	}
	sources []credentialSource
	realm   string
}

// add adds the credential sources of one kind.
func (az *authorizer) add(kind byte, ps []http.CredentialPattern) {
	for _, p := range ps {
		az.sources = append(az.sources, credentialSource{kind: kind, name: []byte(p.Name), prefix: []byte(p.Prefix), suffix: []byte(p.Suffix)})
	}
}

// settings is what Attach compiles from a server's configuration. The
// client's option max-idle is accepted and not used.
type settings struct {
	limits  h1.Limits
	maxBody int64 // -1: no limit
	// header, body and idle are the connection timeouts (see the
	// package doc).
	header, body, idle time.Duration
	authz              *authorizer
	cors               *cors
	routes             []http.Route
	exitID             int64
	// once are the lower-case names of the headers the server reads one
	// value of (a route's, a guard's credentials, Origin for CORS), and
	// onceQuery and onceCookie the query parameters and cookies (a
	// guard's credentials): a request that gives one twice is refused.
	once, onceQuery, onceCookie [][]byte
	// server is the http.server.header setting, empty when unset.
	server []byte
}

func compile(w *engine.Worker, cfg *engine.BindingConfig, opts *http.Options) (*settings, error) {
	s := &settings{limits: opts.Limits.Head(), maxBody: defaultMaxBody, exitID: cfg.ExitID,
		header: defaultHeaderTimeout, body: defaultBodyTimeout, idle: defaultIdleTimeout}
	s.limits.AbsoluteWithoutHost = true
	if e := w.Engine(); e != nil {
		if v, ok := e.Setting(http.SettingServerHeader); ok && v != "" {
			s.server = []byte(v)
		}
	}
	if b := opts.Limits.Body; b != nil {
		s.maxBody = *b
		if *b == 0 {
			s.maxBody = -1
		}
	}
	for _, err := range []error{
		http.Timeout(cfg, "header-timeout", opts.HeaderTimeout, &s.header),
		http.Timeout(cfg, "body-timeout", opts.BodyTimeout, &s.body),
		http.Timeout(cfg, "idle-timeout", opts.IdleTimeout, &s.idle),
	} {
		if err != nil {
			return nil, err
		}
	}
	for name, a := range opts.Authorization {
		g, ok := w.Guard(name)
		if !ok {
			return nil, fmt.Errorf("http server %s: authorization names guard %q, which is not configured", cfg.Name, name)
		}
		az := &authorizer{guardName: name, guard: g, realm: a.Realm}
		headers, query, cookies := a.Patterns()
		az.add('h', headers)
		az.add('q', query)
		az.add('c', cookies)
		if len(az.sources) == 0 {
			return nil, fmt.Errorf("http server %s: authorization %s: no credentials source (headers, query or cookies)", cfg.Name, name)
		}
		s.authz = az
	}
	if ac := opts.AccessControl; ac != nil {
		s.cors = compileCORS(ac)
	}
	routes, err := http.CompileRoutes(w, cfg, "server")
	if err != nil {
		return nil, err
	}
	s.routes = routes
	s.readOnce()
	return s, nil
}

// readOnce lists the headers and query parameters a request may give only
// once: those the server reads a single value of, which another reader
// of the request (the app, an upstream) could take another of.
func (s *settings) readOnce() {
	add := func(list *[][]byte, name []byte) {
		for _, n := range *list {
			if bytes.Equal(n, name) {
				return
			}
		}
		*list = append(*list, name)
	}
	for i := range s.routes {
		s.routes[i].Headers(func(name []byte) {
			if len(name) > 0 && name[0] != ':' {
				add(&s.once, name)
			}
		})
	}
	if az := s.authz; az != nil {
		for _, src := range az.sources {
			switch src.kind {
			case 'h':
				add(&s.once, bytes.ToLower(src.name))
			case 'c':
				add(&s.once, []byte("cookie"))
				add(&s.onceCookie, src.name)
			case 'q':
				add(&s.onceQuery, src.name)
			}
		}
	}
	if s.cors != nil {
		add(&s.once, []byte("origin"))
	}
}
