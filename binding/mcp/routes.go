package mcp

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/guard"
)

// GlobList reads a route condition's tool, prompt or resource: a glob or
// a list of globs, each checked with path.Match. It returns a non-nil
// list, empty for [], which admits nothing, as in Zilla.
func GlobList(v any) ([]string, error) {
	var items []any
	switch v := v.(type) {
	case string:
		items = []any{v}
	case []any:
		items = v
	default:
		return nil, errors.New("want a glob or a list of globs")
	}
	globs := make([]string, 0, len(items))
	for _, it := range items {
		g, ok := it.(string)
		if !ok || g == "" {
			return nil, fmt.Errorf("%v is not a glob", it)
		}
		if _, err := path.Match(g, ""); err != nil {
			return nil, fmt.Errorf("bad glob %q: %v", g, err)
		}
		globs = append(globs, g)
	}
	return globs, nil
}

// GlobsAllow reports whether globs admit name: nil admits every name.
func GlobsAllow(globs []string, name string) bool {
	if globs == nil {
		return true
	}
	for _, g := range globs {
		if ok, _ := path.Match(g, name); ok {
			return true
		}
	}
	return false
}

// Guarded is a route's guarded clause: the guards it names, in name order
// so that every worker checks them alike, each with the roles a caller's
// session must hold there.
type Guarded []GuardRoles

// GuardRoles is one guard of a guarded clause and the roles it asks for.
type GuardRoles struct {
	Name  string
	Roles []string
}

// CompileGuarded reads a route's guarded clause; nil for none.
func CompileGuarded(m map[string][]string) Guarded {
	var g Guarded
	for name, roles := range m {
		g = append(g, GuardRoles{Name: name, Roles: roles})
	}
	slices.SortFunc(g, func(a, b GuardRoles) int { return strings.Compare(a.Name, b.Name) })
	return g
}

// Scopes appends the roles the clause asks for to dst, each once.
func (g Guarded) Scopes(dst []string) []string {
	for _, gr := range g {
		for _, role := range gr.Roles {
			if !slices.Contains(dst, role) {
				dst = append(dst, role)
			}
		}
	}
	return dst
}

// Attach looks up worker w's handlers of the clause's guards.
func (g Guarded) Attach(w *engine.Worker) (GuardChecks, error) {
	var cs GuardChecks
	for _, gr := range g {
		h, ok := w.Guard(gr.Name)
		if !ok {
			return nil, fmt.Errorf("guarded names guard %q, which is not configured", gr.Name)
		}
		cs = append(cs, guardCheck{h: h, roles: gr.Roles})
	}
	return cs, nil
}

// AttachRoutes looks up worker w's handlers of the guards of a binding's
// n routes, route i's clause being guarded(i); checks[i] are route i's.
func AttachRoutes(w *engine.Worker, binding string, n int, guarded func(i int) Guarded) ([]GuardChecks, error) {
	checks := make([]GuardChecks, n)
	for i := range n {
		cs, err := guarded(i).Attach(w)
		if err != nil {
			return nil, fmt.Errorf("mcp %s: routes[%d].%w", binding, i, err)
		}
		checks[i] = cs
	}
	return checks, nil
}

// GuardChecks is a guarded clause with one worker's handlers of its
// guards.
type GuardChecks []guardCheck

type guardCheck struct {
	h     guard.Handler
	roles []string
}

// Allow reports whether a stream whose authorization is auth passes the
// clause, as Zilla's route authorization decides: every guard verifies
// the caller's session with its roles. No clause lets every caller
// through; an anonymous caller (auth 0) passes none.
func (c GuardChecks) Allow(auth int64) bool {
	for _, gc := range c {
		if auth == 0 || !gc.h.Verify(auth, gc.roles) {
			return false
		}
	}
	return true
}
