package client

import (
	"fmt"
	"time"

	"github.com/sluicehq/sluice/binding/http"
	"github.com/sluicehq/sluice/binding/http/h1"
	"github.com/sluicehq/sluice/engine"
)

// defaultIdleTimeout is how long a client keeps an idle connection, as Go's
// http.Transport does.
const defaultIdleTimeout = 90 * time.Second

// defaultMaxIdle is how many idle connections a client keeps per authority
// on each worker. HTTP/1.1 carries one request at a time on a connection,
// so a burst of N concurrent requests opens N; the pool keeps enough of
// them for the concurrency a gateway sees and closes the rest as their
// exchanges finish, rather than holding every one for idle-timeout.
const defaultMaxIdle = 256

// settings is what Attach compiles from a client's configuration. The
// server's options (limits.body, access-control) are accepted and not
// used.
type settings struct {
	limits h1.Limits
	exitID int64
	routes []http.Route
	// idle is how long the client keeps an idle pooled connection.
	idle time.Duration
	// maxIdle bounds the client's idle connections per authority.
	maxIdle int
	// headerTimeout bounds the wait for a response head after the
	// request's end; 0 waits as long as the app does.
	headerTimeout time.Duration
	// inject, when set, adds the credentials of each request's session to
	// the request, as Zilla's client does with options.authorization.
	inject *injector
}

// injector is the compiled authorization option of a client: the guard
// whose session credentials go out, and where they go (a header, a query
// parameter or a cookie), written around {credentials}.
type injector struct {
	guard interface {
		Credentials(session int64) string
	}
	// An empty name is no such place.
	header, query, cookie http.CredentialPattern
}

// firstPattern is the one place of a kind a client writes credentials
// into: the first that options.authorization names.
func firstPattern(ps []http.CredentialPattern) http.CredentialPattern {
	if len(ps) == 0 {
		return http.CredentialPattern{}
	}
	return ps[0]
}

func compileInjector(w *engine.Worker, cfg *engine.BindingConfig, opts *http.Options) (*injector, error) {
	for name, a := range opts.Authorization {
		g, ok := w.Guard(name)
		if !ok {
			return nil, fmt.Errorf("http client %s: authorization names guard %q, which is not configured", cfg.Name, name)
		}
		headers, query, cookies := a.Patterns()
		return &injector{guard: g, header: firstPattern(headers), query: firstPattern(query), cookie: firstPattern(cookies)}, nil
	}
	return nil, nil
}

func compile(w *engine.Worker, cfg *engine.BindingConfig, opts *http.Options) (*settings, error) {
	s := &settings{limits: opts.Limits.Head(), exitID: cfg.ExitID, idle: defaultIdleTimeout, maxIdle: defaultMaxIdle}
	if opts.MaxIdle != nil {
		if *opts.MaxIdle < 0 {
			return nil, fmt.Errorf("http client %s: max-idle %d: want 0 or more", cfg.Name, *opts.MaxIdle)
		}
		s.maxIdle = *opts.MaxIdle
	}
	err := http.Timeout(cfg, "idle-timeout", opts.IdleTimeout, &s.idle)
	if err != nil {
		return nil, err
	}
	if err = http.Timeout(cfg, "header-timeout", opts.HeaderTimeout, &s.headerTimeout); err != nil {
		return nil, err
	}
	if s.inject, err = compileInjector(w, cfg, opts); err != nil {
		return nil, err
	}
	if s.routes, err = http.CompileRoutes(w, cfg, "client"); err != nil {
		return nil, err
	}
	return s, nil
}
