package proxy

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/guard"
)

// routeGuard is one guard a route's guarded clause names, with the roles
// a caller's session must hold there.
type routeGuard struct {
	name  string
	roles []string
}

// guardCheck is a routeGuard with the worker's handler of its guard.
type guardCheck struct {
	g     guard.Handler
	roles []string
}

// compileGuarded reads a route's guarded clause, its guards in name
// order so that every worker checks them alike.
func compileGuarded(guarded map[string][]string) []routeGuard {
	var gs []routeGuard
	for name, roles := range guarded {
		gs = append(gs, routeGuard{name: name, roles: roles})
	}
	slices.SortFunc(gs, func(a, b routeGuard) int {
		if a.name < b.name {
			return -1
		}
		if a.name > b.name {
			return 1
		}
		return 0
	})
	return gs
}

// attachGuards looks up the worker's handlers of the guards the routes
// name; checks[i] are route i's, none for a route without guarded.
func attachGuards(w *engine.Worker, binding string, routes []route) ([][]guardCheck, error) {
	var checks [][]guardCheck
	for i := range routes {
		var cs []guardCheck
		for _, rg := range routes[i].guarded {
			g, ok := w.Guard(rg.name)
			if !ok {
				return nil, fmt.Errorf("mcp %s: routes[%d].guarded names guard %q, which is not configured", binding, i, rg.name)
			}
			cs = append(cs, guardCheck{g: g, roles: rg.roles})
		}
		checks = append(checks, cs)
	}
	return checks, nil
}

// allowed reports whether a stream whose authorization is auth may reach
// route: a route without guarded lets every caller through; a guarded
// one, a caller whose session every guard it names verifies with its
// roles, as Zilla's route authorization does. An anonymous caller
// (auth 0) reaches no guarded route.
func (h *Handler) allowed(route int, auth int64) bool {
	for _, c := range h.guards[route] {
		if auth == 0 || !c.g.Verify(auth, c.roles) {
			return false
		}
	}
	return true
}

// guardedScopes lists the roles the routes' guarded clauses name, each
// once, in the order first named, space-separated (RFC 6750 §3's scope).
func guardedScopes(routes []route) string {
	var roles []string
	for i := range routes {
		for _, rg := range routes[i].guarded {
			for _, role := range rg.roles {
				if !slices.Contains(roles, role) {
					roles = append(roles, role)
				}
			}
		}
	}
	return strings.Join(roles, " ")
}

// sameReach reports whether two authorizations reach the same routes. A
// cached list holds what the hydrate session's authorization reaches, so
// it serves only a caller who reaches exactly that; another caller's list
// is fanned out to the routes it reaches.
func (h *Handler) sameReach(a, b int64) bool {
	for i := range h.guards {
		if len(h.guards[i]) > 0 && h.allowed(i, a) != h.allowed(i, b) {
			return false
		}
	}
	return true
}
