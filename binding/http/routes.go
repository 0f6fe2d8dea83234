package http

import (
	"bytes"
	"fmt"
	"path"
	"strings"

	"github.com/sluicehq/sluice/engine"
)

// Route is a compiled route of an http binding, server or client kind: its
// exit, the header conditions that select it and the roles its guard
// requires.
type Route struct {
	ExitID int64
	Roles  map[string][]string
	when   [][]headerMatch // any of these, each all of its matches
}

type headerMatch struct {
	name   []byte
	value  []byte
	prefix bool
}

type whenOptions struct {
	Headers map[string]string `yaml:"headers"`
}

// CompileRoutes compiles the routes of cfg, a binding of the given kind
// ("server" or "client"), for the errors it names. A binding with neither
// an exit nor a route has nowhere to send its streams: an error.
func CompileRoutes(w *engine.Worker, cfg *engine.BindingConfig, kind string) ([]Route, error) {
	if cfg.ExitID == 0 && len(cfg.Routes()) == 0 {
		return nil, fmt.Errorf("http %s %s: a %s needs an exit or routes", kind, cfg.Name, kind)
	}
	var out []Route
	for _, r := range cfg.Routes() {
		id, ok := w.ResolveID(r.Exit)
		if !ok {
			return nil, fmt.Errorf("http %s %s: route exit %q names no binding", kind, cfg.Name, r.Exit)
		}
		rt := Route{ExitID: id, Roles: r.Guarded}
		for _, raw := range r.When {
			var when whenOptions
			if err := raw.Decode(&when); err != nil {
				return nil, err
			}
			var ms []headerMatch
			for name, v := range when.Headers {
				m := headerMatch{name: []byte(strings.ToLower(name)), value: []byte(v)}
				if strings.HasSuffix(v, "*") {
					m.value, m.prefix = []byte(strings.TrimSuffix(v, "*")), true
				} else if _, err := path.Match(v, ""); err != nil {
					return nil, fmt.Errorf("http %s %s: route header %s: %v", kind, cfg.Name, name, err)
				}
				ms = append(ms, m)
			}
			rt.when = append(rt.when, ms)
		}
		out = append(out, rt)
	}
	return out, nil
}

// Match reports whether the request's header lookup satisfies one of the
// route's conditions (a route without conditions matches everything).
// get returns a header's value by its lower-case name.
func (r *Route) Match(get func(name []byte) ([]byte, bool)) bool {
	if len(r.when) == 0 {
		return true
	}
	for _, all := range r.when {
		ok := true
		for i := range all {
			m := &all[i]
			v, found := get(m.name)
			if !found || (m.prefix && !bytes.HasPrefix(v, m.value)) || (!m.prefix && !bytes.Equal(v, m.value)) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// Headers calls f with the lower-case name of each header the route's
// conditions read.
func (r *Route) Headers(f func(name []byte)) {
	for _, all := range r.when {
		for i := range all {
			f(all[i].name)
		}
	}
}
