package server

import (
	"fmt"
	"strings"

	"github.com/sluicehq/sluice/binding/http"
	"github.com/sluicehq/sluice/binding/http/h1"
	"github.com/sluicehq/sluice/engine"
)

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

// settings is what Attach compiles from a server's configuration. The
// client's options (idle-timeout, max-idle) are accepted and not used.
type settings struct {
	limits  h1.Limits
	maxBody int64
	authz   *authorizer
	cors    *cors
	routes  []http.Route
	exitID  int64
	// server is the http.server.header setting, empty when unset.
	server []byte
}

func compile(w *engine.Worker, cfg *engine.BindingConfig, opts *http.Options) (*settings, error) {
	s := &settings{limits: opts.Limits.Head(), maxBody: -1, exitID: cfg.ExitID}
	s.limits.AbsoluteWithoutHost = true
	if e := w.Engine(); e != nil {
		if v, ok := e.Setting(http.SettingServerHeader); ok && v != "" {
			s.server = []byte(v)
		}
	}
	if opts.Limits.Body > 0 {
		s.maxBody = opts.Limits.Body
	}
	for name, a := range opts.Authorization {
		g, ok := w.Guard(name)
		if !ok {
			return nil, fmt.Errorf("http server %s: authorization names guard %q, which is not configured", cfg.Name, name)
		}
		az := &authorizer{guardName: name, guard: g, realm: a.Realm}
		add := func(kind byte, m map[string]string) {
			for k, pattern := range m {
				pre, suf, _ := strings.Cut(pattern, "{credentials}")
				n := k
				if kind == 'h' {
					n = strings.ToLower(k)
				}
				az.sources = append(az.sources, credentialSource{kind: kind, name: []byte(n), prefix: []byte(pre), suffix: []byte(suf)})
			}
		}
		add('h', a.Credentials.Headers)
		add('q', a.Credentials.Query)
		add('c', a.Credentials.Cookies)
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
	return s, nil
}
