package client

import (
	"fmt"
	"strings"
	"time"

	"github.com/sluicehq/sluice/binding/http"
	"github.com/sluicehq/sluice/binding/http/h1"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/guard"
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
	header, query, cookie credentialTemplate
}

// credentialTemplate is one place credentials go: a name, and the text
// around {credentials} in its value. An empty name is no such place.
type credentialTemplate struct {
	name, prefix, suffix string
}

// appendValue appends the template's value for cred.
func (t *credentialTemplate) appendValue(dst []byte, cred string) []byte {
	return append(append(append(dst, t.prefix...), cred...), t.suffix...)
}

func compileInjector(w *engine.Worker, cfg *engine.BindingConfig, opts *http.Options) (*injector, error) {
	for name, a := range opts.Authorization {
		g, ok := w.Guard(name)
		if !ok {
			return nil, fmt.Errorf("http client %s: authorization names guard %q, which is not configured", cfg.Name, name)
		}
		in := &injector{guard: g}
		pick := func(m map[string]string) credentialTemplate {
			for k, pattern := range m {
				pre, suf, _ := strings.Cut(pattern, "{credentials}")
				return credentialTemplate{name: k, prefix: pre, suffix: suf}
			}
			return credentialTemplate{}
		}
		in.header = pick(a.Credentials.Headers)
		in.header.name = strings.ToLower(in.header.name)
		in.query = pick(a.Credentials.Query)
		in.cookie = pick(a.Credentials.Cookies)
		return in, nil
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
	if opts.IdleTimeout != "" {
		d, err := guard.PositiveDuration(opts.IdleTimeout)
		if err != nil {
			return nil, fmt.Errorf("http client %s: idle-timeout %q: want a positive duration such as 90s or PT90S", cfg.Name, opts.IdleTimeout)
		}
		s.idle = d
	}
	var err error
	if s.inject, err = compileInjector(w, cfg, opts); err != nil {
		return nil, err
	}
	if s.routes, err = http.CompileRoutes(w, cfg, "client"); err != nil {
		return nil, err
	}
	return s, nil
}
