package proxy

import "strings"

// allowed reports whether a stream whose authorization is auth may reach
// route: a route without guarded lets every caller through; a guarded
// one, a caller whose session every guard it names verifies with its
// roles (mcp.GuardChecks).
func (h *Handler) allowed(route int, auth int64) bool { return h.guards[route].Allow(auth) }

// cachedReach reports whether a caller whose authorization is auth
// reaches the routes the hydrate session reaches, each with its
// authorization (hydrateAuth). A cached list holds what the hydrate
// session reaches, so it serves only a caller who reaches exactly that;
// another caller's list is fanned out to the routes it reaches.
func (h *Handler) cachedReach(auth int64) bool {
	for i := range h.guards {
		if len(h.guards[i]) > 0 && h.allowed(i, auth) != h.allowed(i, h.cache.hydrateAuth(i)) {
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
		roles = routes[i].guarded.Scopes(roles)
	}
	return strings.Join(roles, " ")
}
