package client

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/binding/mcp/jsonrpc"
	"github.com/sluicehq/sluice/engine/config"
)

// route is one of a client's routes, as Zilla's client routes are: the
// tools, prompts and resources its conditions name (none: every request),
// and the guards whose roles a caller needs for them. All of a client's
// routes share its exit: they decide whether a request may go upstream,
// not where.
type route struct {
	conds   []cond
	guarded mcp.Guarded
	scope   []byte // the roles guarded asks for, space-separated
}

// cond is one condition of a route's when. As in Zilla's condition
// matcher, a capability is served when the condition gives its allow-set
// (tool, prompt, resource), and every capability when it gives none; a
// nil allow-set of a served capability admits every name.
type cond struct {
	serves                    capBits
	tools, prompts, resources []string
}

// capBits are the capabilities a condition serves.
type capBits uint8

const (
	capTools capBits = 1 << iota
	capPrompts
	capResources
	capAll = capTools | capPrompts | capResources
)

// compileRoutes reads the client's routes, which must share one exit:
// their conditions and guarded clauses. It returns nil for routes that
// decide nothing (no when, no guarded), so that requests skip them.
func compileRoutes(binding string, routes []*config.Route) ([]route, error) {
	var rs []route
	decides := false
	for i, r := range routes {
		rt := route{guarded: mcp.CompileGuarded(r.Guarded)}
		rt.scope = []byte(strings.Join(rt.guarded.Scopes(nil), " "))
		for j, c := range r.When {
			cd, err := compileCond(c.Value())
			if err != nil {
				return nil, fmt.Errorf("%s: mcp %s: routes[%d].when[%d].%v", c.Pos(), binding, i, j, err)
			}
			rt.conds = append(rt.conds, cd)
		}
		decides = decides || len(rt.conds) > 0 || len(rt.guarded) > 0
		rs = append(rs, rt)
	}
	if !decides {
		return nil, nil
	}
	return rs, nil
}

// compileCond reads one condition {tool, prompt, resource}.
func compileCond(v any) (cond, error) {
	m, _ := v.(map[string]any)
	cd := cond{}
	for _, k := range []struct {
		key   string
		bit   capBits
		globs *[]string
	}{{"tool", capTools, &cd.tools}, {"prompt", capPrompts, &cd.prompts}, {"resource", capResources, &cd.resources}} {
		v, ok := m[k.key]
		if !ok {
			continue
		}
		globs, err := mcp.GlobList(v)
		if err != nil {
			return cond{}, fmt.Errorf("%s: %w", k.key, err)
		}
		*k.globs, cd.serves = globs, cd.serves|k.bit
	}
	if cd.serves == 0 {
		cd.serves = capAll
	}
	return cd, nil
}

// capabilityOf is the capability a request kind belongs to, 0 for none
// (a lifecycle, a generic request).
func capabilityOf(kind uint8) capBits {
	switch kind {
	case mcp.McpBeginExKindToolsList, mcp.McpBeginExKindToolsCall:
		return capTools
	case mcp.McpBeginExKindPromptsList, mcp.McpBeginExKindPromptsGet:
		return capPrompts
	case mcp.McpBeginExKindResourcesList, mcp.McpBeginExKindResourcesTemplatesList, mcp.McpBeginExKindResourcesRead,
		mcp.McpBeginExKindResourcesSubscribe, mcp.McpBeginExKindResourcesUnsubscribe:
		return capResources
	}
	return 0
}

// names reports whether a request kind names what it is for (a tool, a
// prompt, a resource), which a route's globs then admit or not.
func names(kind uint8) bool {
	return mcp.McpBeginExHasName(kind) || mcp.McpBeginExHasURI(kind)
}

// matches reports whether the route takes a request of kind naming ident
// (nil when the request names none in its BEGIN): as Zilla's client
// resolves, a request of no capability goes by the guards alone, a list
// to a route that serves its capability, and a named request to one
// whose globs admit its name.
func (rt *route) matches(kind uint8, ident []byte, identNull bool) bool {
	c := capabilityOf(kind)
	if len(rt.conds) == 0 || c == 0 {
		return true
	}
	for i := range rt.conds {
		cd := &rt.conds[i]
		if cd.serves&c == 0 {
			continue
		}
		if !names(kind) {
			return true
		}
		globs := cd.tools
		switch c {
		case capPrompts:
			globs = cd.prompts
		case capResources:
			globs = cd.resources
		}
		if globs == nil || !identNull && mcp.GlobsAllow(globs, string(ident)) {
			return true
		}
	}
	return false
}

// refusal decides whether a request of kind naming ident, whose
// authorization is auth, may go upstream: nil when the first route that
// takes it lets its caller through. Otherwise the RESET that refuses it:
// a Bearer challenge when a route takes it but asks for roles the caller
// lacks (invalid_token for an anonymous caller, insufficient_scope
// otherwise, with the route's roles as scope, so that an MCP client can
// step up), or an error naming what no route takes.
func (h *handler) refusal(kind uint8, ident []byte, identNull bool, auth int64) *resetInfo {
	refusedBy := -1
	for i := range h.s.routes {
		rt := &h.s.routes[i]
		if !rt.matches(kind, ident, identNull) {
			continue
		}
		if h.checks[i].Allow(auth) {
			return nil
		}
		if refusedBy < 0 {
			refusedBy = i
		}
	}
	if refusedBy >= 0 {
		ri := &resetInfo{bearer: true, bErr: mcp.McpBearerErrorInsufficientScope}
		if auth == 0 {
			ri.bErr = mcp.McpBearerErrorInvalidToken
		}
		if s := h.s.routes[refusedBy].scope; len(s) > 0 {
			ri.scope = s
		}
		return ri
	}
	switch {
	case kind == mcp.McpBeginExKindToolsCall:
		return &resetInfo{code: -32602, message: "Unknown tool: " + string(ident)}
	case kind == mcp.McpBeginExKindPromptsGet:
		return &resetInfo{code: -32602, message: "Unknown prompt: " + string(ident)}
	case capabilityOf(kind) == capResources && names(kind):
		return &resetInfo{code: mcp.CodeResourceNotFound, message: "Resource not found"}
	}
	return &resetInfo{code: -32601, message: "Method not found: no route of the client serves it"}
}

// schemes reports whether a route names roles, so that tools/list
// results carry securitySchemes.
func (s *settings) schemes() bool {
	for i := range s.routes {
		for _, gr := range s.routes[i].guarded {
			if len(gr.Roles) > 0 {
				return true
			}
		}
	}
	return false
}

// appendWithSchemes appends a tools/list result with each tool that a
// guarded route serves annotated, as Zilla's McpSchemeInjector does, with
// "securitySchemes":[{"type":"oauth2","scopes":[roles]}], one scheme per
// guard of the first route that takes a call of the tool: what a client
// needs to ask its authorization server for before it calls. A scheme
// the upstream gave is replaced, so that the item names the key once.
func (s *settings) appendWithSchemes(dst, result []byte) []byte {
	dst = append(dst, '{')
	n := 0
	for f, i, ok := jsonrpc.NextField(result, 0); ok; f, i, ok = jsonrpc.NextField(result, i) {
		if n++; n > 1 {
			dst = append(dst, ',')
		}
		dst = append(append(dst, f.Key...), ':')
		if !jsonrpc.KeyIs(f.Key, "tools") || f.Value[0] != '[' {
			dst = append(dst, f.Value...)
			continue
		}
		dst = append(dst, '[')
		m := 0
		for item, j, ok := jsonrpc.NextElement(f.Value, 0); ok; item, j, ok = jsonrpc.NextElement(f.Value, j) {
			if m++; m > 1 {
				dst = append(dst, ',')
			}
			dst = s.appendTool(dst, item)
		}
		dst = append(dst, ']')
	}
	return append(dst, '}')
}

// appendTool appends one tool of a list, with its route's schemes.
func (s *settings) appendTool(dst, item []byte) []byte {
	v, twice := jsonrpc.LookupUnique(item, "name")
	if twice || len(v) < 2 || v[0] != '"' {
		return append(dst, item...)
	}
	name := v[1 : len(v)-1]
	var err error
	if bytes.IndexByte(name, '\\') >= 0 {
		name, err = jsonrpc.Unquote(nil, v) // only an escaped name is copied
	}
	var g mcp.Guarded
	for i := range s.routes {
		if err == nil && s.routes[i].matches(mcp.McpBeginExKindToolsCall, name, false) {
			g = s.routes[i].guarded
			break
		}
	}
	schemes := 0
	for _, gr := range g {
		if len(gr.Roles) > 0 {
			schemes++
		}
	}
	if schemes == 0 {
		return append(dst, item...)
	}
	dst = append(dst, '{')
	n := 0
	for f, i, ok := jsonrpc.NextField(item, 0); ok; f, i, ok = jsonrpc.NextField(item, i) {
		if jsonrpc.KeyIs(f.Key, "securitySchemes") {
			continue
		}
		if n++; n > 1 {
			dst = append(dst, ',')
		}
		dst = append(append(append(dst, f.Key...), ':'), f.Value...)
	}
	if n > 0 {
		dst = append(dst, ',')
	}
	dst = append(dst, `"securitySchemes":[`...)
	m := 0
	for _, gr := range g {
		if len(gr.Roles) == 0 {
			continue
		}
		if m++; m > 1 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"type":"oauth2","scopes":[`...)
		for k, role := range gr.Roles {
			if k > 0 {
				dst = append(dst, ',')
			}
			dst = jsonrpc.AppendString(dst, role)
		}
		dst = append(dst, "]}"...)
	}
	return append(dst, "]}"...)
}
