package proxy

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/binding/mcp/jsonrpc"
	"github.com/sluicehq/sluice/engine"
)

// cacheToolsOptions is options.cache.tools in Zilla's shape: the search
// tools the proxy serves over its cached tools list, and which tools a
// tools/list gives in full (eager) rather than deferred.
type cacheToolsOptions struct {
	Search *searchOptions `yaml:"search"`
	Eager  *eagerOptions  `yaml:"eager"`
}

type searchOptions struct {
	Toolkit string             `yaml:"toolkit"`
	Limit   *int               `yaml:"limit"`
	Fields  []string           `yaml:"fields"`
	Weights map[string]float64 `yaml:"weights"`
	Type    string             `yaml:"type"`
	Index   []struct {
		Type string `yaml:"type"`
	} `yaml:"index"`
}

type eagerOptions struct {
	Policy string   `yaml:"policy"`
	Match  []string `yaml:"match"`
}

// The eager policies: none leaves tools/list as it is; all defers every
// tool; explicit defers every tool but those match names.
const (
	eagerNone uint8 = iota
	eagerAll
	eagerExplicit
)

// Search bounds.
const (
	defaultSearchLimit = 5
	// maxSearchLimit bounds the tools one search answers with.
	maxSearchLimit = 100
	// maxQuery bounds a search's query; the rest is not read.
	maxQuery = 4096
)

// The search tools, by the name they have without a toolkit.
const (
	metaNone uint8 = iota
	metaSearch
	metaDescribe
	metaExecute
)

var metaBaseNames = [...]string{metaSearch: "search_tools", metaDescribe: "describe_tool", metaExecute: "execute_tool"}

// toolsView is the compiled options.cache.tools: how a tools/list the
// proxy answers is rewritten (tools deferred or left out, the search
// tools added) and how the search tools search.
type toolsView struct {
	search  bool
	limit   int
	weights [fieldCount]float64 // 0: the field is not indexed
	policy  uint8
	match   []string
	names   [len(metaBaseNames)]string // the search tools' names, metaNone's empty
	meta    []byte                     // their descriptors, comma-separated
}

// compileTools reads options.cache.tools; nil when it sets neither
// search nor an eager policy other than none.
func compileTools(cfg *engine.BindingConfig, o *cacheToolsOptions, routes []route) (*toolsView, error) {
	raw := cfg.Options()
	fail := func(where, format string, args ...any) (*toolsView, error) {
		return nil, fmt.Errorf("%w: %s: mcp %s: %s", ErrConfig, where, cfg.Name, fmt.Sprintf(format, args...))
	}
	v := &toolsView{limit: defaultSearchLimit}
	if e := o.Eager; e != nil {
		where := raw.Where("cache", "tools", "eager")
		switch e.Policy {
		case "", "none":
		case "all":
			v.policy = eagerAll
		case "explicit":
			v.policy = eagerExplicit
		default:
			return fail(where, "options.cache.tools.eager.policy %q: want none, all or explicit", e.Policy)
		}
		switch {
		case v.policy == eagerExplicit && len(e.Match) == 0:
			return fail(where, "options.cache.tools.eager.policy explicit needs match: the names (globs) of the tools given in full")
		case v.policy != eagerExplicit && e.Match != nil:
			return fail(where, "options.cache.tools.eager.match is only for policy explicit")
		}
		if e.Match != nil {
			items := make([]any, len(e.Match))
			for i, g := range e.Match {
				items[i] = g
			}
			m, err := mcp.GlobList(items)
			if err != nil {
				return fail(where, "options.cache.tools.eager.match: %v", err)
			}
			v.match = m
		}
	}
	s := o.Search
	if s == nil {
		if v.policy == eagerNone {
			return nil, nil
		}
		return v, nil
	}
	where := raw.Where("cache", "tools", "search")
	v.search = true
	if s.Limit != nil {
		if *s.Limit < 1 || *s.Limit > maxSearchLimit {
			return fail(where, "options.cache.tools.search.limit %d: want 1 to %d", *s.Limit, maxSearchLimit)
		}
		v.limit = *s.Limit
	}
	if s.Type != "" && s.Index != nil {
		return fail(where, "options.cache.tools.search takes type or index, not both")
	}
	for _, t := range append([]string{s.Type}, indexTypes(s)...) {
		if t != "" && t != "keyword" {
			return fail(where, "options.cache.tools.search: index type %q: want keyword", t)
		}
	}
	fields := s.Fields
	if fields == nil {
		fields = []string{"name", "description"}
	}
	for _, f := range fields {
		i := slices.Index(searchFieldNames[:], f)
		if i < 0 {
			return fail(where, "options.cache.tools.search.fields: %q: want name, description or output-schema", f)
		}
		v.weights[i] = 1
	}
	for f, w := range s.Weights {
		i := slices.Index(searchFieldNames[:], f)
		switch {
		case i < 0:
			return fail(where, "options.cache.tools.search.weights.%s: not a field (have name, description, output-schema)", f)
		case w <= 0:
			return fail(where, "options.cache.tools.search.weights.%s %v: want a weight above 0", f, w)
		case v.weights[i] > 0:
			v.weights[i] = w
		}
	}
	prefix := ""
	if s.Toolkit != "" {
		for i := range routes {
			if routes[i].toolkit == s.Toolkit {
				return fail(where, "options.cache.tools.search.toolkit %q is routes[%d]'s toolkit too: the search tools' names would have two readings", s.Toolkit, i)
			}
		}
		prefix = s.Toolkit + delimName
	}
	for m := metaSearch; m <= metaExecute; m++ {
		v.names[m] = prefix + metaBaseNames[m]
	}
	v.meta = appendMetaTools(nil, &v.names)
	return v, nil
}

func indexTypes(s *searchOptions) []string {
	ts := make([]string, len(s.Index))
	for i := range s.Index {
		ts[i] = s.Index[i].Type
	}
	return ts
}

// appendMetaTools appends the descriptors of the three search tools.
func appendMetaTools(dst []byte, names *[len(metaBaseNames)]string) []byte {
	const readOnly = `,"annotations":{"readOnlyHint":true,"destructiveHint":false,"idempotentHint":true,"openWorldHint":false}`
	tool := func(dst []byte, name, title, desc, schema, annotations string) []byte {
		dst = append(dst, `{"name":`...)
		dst = jsonrpc.AppendString(dst, name)
		dst = append(dst, `,"title":`...)
		dst = jsonrpc.AppendString(dst, title)
		dst = append(dst, `,"description":`...)
		dst = jsonrpc.AppendString(dst, desc)
		dst = append(dst, `,"inputSchema":`...)
		dst = append(dst, schema...)
		dst = append(dst, annotations...)
		return append(dst, '}')
	}
	dst = tool(dst, names[metaSearch], "Search Tools",
		"Find tools in this server's catalog that match a query by name and description; answers the best matches, names and descriptions only.",
		`{"type":"object","properties":{"query":{"type":"string","description":"Words to search the catalog for"},"max_results":{"type":"integer","description":"At most this many tools in the answer"}},"required":["query"]}`,
		readOnly)
	dst = append(dst, ',')
	dst = tool(dst, names[metaDescribe], "Describe Tool",
		"Give the whole definition of one tool, its input and output schema included, by the name "+names[metaSearch]+" answered with.",
		`{"type":"object","properties":{"name":{"type":"string","description":"The tool's exact name"}},"required":["name"]}`,
		readOnly)
	dst = append(dst, ',')
	return tool(dst, names[metaExecute], "Execute Tool",
		"Call one tool by name with its arguments, as tools/call would; read its input schema with "+names[metaDescribe]+" first.",
		`{"type":"object","properties":{"name":{"type":"string","description":"The tool's exact name"},"arguments":{"type":"object","description":"The arguments of the call"}},"required":["name"]}`,
		"")
}

// metaOf returns which search tool a tools/call names, metaNone for any
// other call.
func (r *request) metaOf(name []byte) uint8 {
	if r.kind != mcp.McpBeginExKindToolsCall || r.h.s.cache == nil {
		return metaNone
	}
	return r.h.s.cache.tools.metaOf(name)
}

// metaOf returns which search tool name is, metaNone for any other.
func (v *toolsView) metaOf(name []byte) uint8 {
	if v == nil || !v.search {
		return metaNone
	}
	for m := metaSearch; m <= metaExecute; m++ {
		if string(name) == v.names[m] {
			return m
		}
	}
	return metaNone
}

// Dispositions of a tool in a tools/list.
const (
	itemFull uint8 = iota
	itemDeferred
	itemOut
)

// disposition says how tools/list gives the tool named name: in full,
// marked "defer_loading":true, or (deferred while the search tools are
// served) not at all. A tool with a search tool's name is left out: the
// proxy's own has it.
func (v *toolsView) disposition(name string) uint8 {
	if v.metaOf([]byte(name)) != metaNone {
		return itemOut
	}
	deferred := v.policy == eagerAll || v.policy == eagerExplicit && !mcp.GlobsAllow(v.match, name)
	switch {
	case !deferred:
		return itemFull
	case v.search:
		return itemOut
	default:
		return itemDeferred
	}
}

// appendDeferred marks the item dst[start:] (a tool object whose name
// member is already checked) "defer_loading":true: after its name, or
// in place of the value of a defer_loading member it has.
func appendDeferred(dst []byte, start int) []byte {
	item := dst[start:]
	if ds, de, ok := member(item, "defer_loading"); ok {
		return slices.Replace(dst, start+ds, start+de, []byte("true")...)
	}
	_, ne, _ := member(item, "name")
	return slices.Insert(dst, start+ne, []byte(`,"defer_loading":true`)...)
}

// rewrite makes the tools/list the cache serves from a cached tools
// entry: its tools as the eager policy gives them, and the search tools
// after them.
func (v *toolsView) rewrite(entry []byte) []byte {
	as, ae, _ := member(entry, "tools")
	out := make([]byte, 0, len(entry)+len(v.meta)+64)
	out = append(out, `{"tools":[`...)
	first := true
	for item, name := range namedItems(entry[as:ae]) {
		d := v.disposition(string(name))
		if d == itemOut {
			continue
		}
		if !first {
			out = append(out, ',')
		}
		first = false
		start := len(out)
		out = append(out, item...)
		if d == itemDeferred {
			out = appendDeferred(out, start)
		}
	}
	out = v.appendMeta(out, first)
	return append(out, ']', '}')
}

// appendMeta appends the search tools' descriptors to a list's items,
// first telling whether it has none yet.
func (v *toolsView) appendMeta(dst []byte, first bool) []byte {
	if !v.search {
		return dst
	}
	if !first {
		dst = append(dst, ',')
	}
	return append(dst, v.meta...)
}

// The answers of the search tools.
var (
	toolNotFound  = []byte(`{"content":[{"type":"text","text":"Tool not found"}],"isError":true}`)
	invalidParams = []byte("Invalid params")
)

// metaCall answers a call of one of the search tools, once its params
// are complete: search_tools and describe_tool from the cached tools
// list, execute_tool by calling the tool it names as tools/call would.
func (r *request) metaCall(m uint8) {
	h := r.h
	args, ok := metaArguments(r.params)
	if !ok {
		r.respondError(jsonrpc.CodeInvalidParams, invalidParams, nil, nil)
		return
	}
	switch m {
	case metaSearch:
		r.searchTools(args)
	case metaDescribe:
		name, ok := stringArg(args, "name")
		if !ok {
			r.respondError(jsonrpc.CodeInvalidParams, invalidParams, nil, nil)
			return
		}
		c := h.cache.catalog()
		t, found := c.byName[string(name)]
		if !found || !r.reaches(c.tools[t].name) {
			r.respondResult(toolNotFound)
			return
		}
		r.answer = appendToolsResult(r.answer[:0], c.tools[t].item)
		r.shared = nil
		r.respond()
	case metaExecute:
		r.executeTool(args)
	}
}

// metaArguments returns the arguments object of a search tool's call;
// false when it has none or it is not an object.
func metaArguments(params []byte) ([]byte, bool) {
	as, ae, ok := member(params, "arguments")
	if !ok || params[as] != '{' {
		return nil, false
	}
	return params[as:ae], true
}

// stringArg returns the string member key of args, unquoted; false when
// it is missing, not a string or empty.
func stringArg(args []byte, key string) ([]byte, bool) {
	vs, ve, ok := member(args, key)
	if !ok || args[vs] != '"' {
		return nil, false
	}
	s, err := jsonrpc.Unquote(nil, args[vs:ve])
	return s, err == nil && len(s) > 0
}

// reaches reports whether the request's caller may call the tool named
// name: a route it may reach serves it.
func (r *request) reaches(name string) bool {
	_, _, ok := r.h.resolve(false, mcp.McpBeginExKindToolsCall, []byte(name), r.authorization, &r.upBuf)
	return ok
}

// searchTools answers search_tools: the cached tools that best match the
// query and that the caller may call, at most max_results (within the
// configured limit), each with its name and description.
func (r *request) searchTools(args []byte) {
	h := r.h
	v := h.s.cache.tools
	query, ok := stringArg(args, "query")
	if !ok {
		r.respondError(jsonrpc.CodeInvalidParams, invalidParams, nil, nil)
		return
	}
	limit := v.limit
	if ms, me, ok := member(args, "max_results"); ok {
		n, err := strconv.Atoi(string(args[ms:me]))
		if err != nil || n < 1 {
			r.respondError(jsonrpc.CodeInvalidParams, []byte("Invalid params: max_results is a positive integer"), nil, nil)
			return
		}
		limit = min(n, limit)
	}
	if len(query) > maxQuery {
		query = query[:maxQuery]
	}
	c := h.cache.catalog()
	switch {
	case c.index != nil:
	case len(c.tools) <= syncIndexTools:
		c.index = newKeywordIndex(c, &v.weights)
	default:
		r.awaitIndex(c, query, limit)
		return
	}
	r.answerSearch(c, query, limit)
}

// answerSearch answers search_tools from c's index.
func (r *request) answerSearch(c *catalog, query []byte, limit int) {
	h := r.h
	h.matches = c.index.query(h.matches, query, limit, func(t int32) bool { return r.reaches(c.tools[t].name) })
	list := append(h.scratch[:0], `{"tools":[`...)
	for i, m := range h.matches {
		t := &c.tools[m.tool]
		if i > 0 {
			list = append(list, ',')
		}
		list = append(list, `{"name":`...)
		list = jsonrpc.AppendString(list, t.name)
		if t.description != nil {
			list = append(list, `,"description":`...)
			list = append(list, t.description...)
		}
		list = append(list, '}')
	}
	list = append(list, ']', '}')
	h.scratch = list
	r.answer = appendStructured(r.answer[:0], list)
	r.shared = nil
	r.respond()
}

// syncIndexTools is the most tools a worker indexes on its own thread
// (about 2 ms); a larger list is indexed on a goroutine of its own, so
// that the worker's other streams do not wait for it. Tests lower it.
var syncIndexTools = 1000

// maxIndexWaiters bounds the searches a worker holds while an index is
// built; more get -32603 "Server busy".
const maxIndexWaiters = 1024

// indexWaiter is a search held until its catalog's index is built.
type indexWaiter struct {
	r     *request
	gen   uint32
	query []byte
	limit int
}

// awaitIndex holds the search until c's index is built, starting the
// build if it is not under way.
func (r *request) awaitIndex(c *catalog, query []byte, limit int) {
	h := r.h
	if len(c.waiting) >= maxIndexWaiters {
		r.respondError(jsonrpc.CodeInternalError, []byte("Server busy"), nil, nil)
		return
	}
	c.waiting = append(c.waiting, indexWaiter{r: r, gen: r.gen, query: slices.Clone(query), limit: limit})
	if c.building {
		return
	}
	c.building = true
	weights, w := h.s.cache.tools.weights, h.w
	go func() {
		x := newKeywordIndex(c, &weights)
		w.Dispatch(func() { c.indexed(x) })
	}()
}

// indexed takes the index built for c and answers the searches that
// waited for it, but those whose request has ended.
func (c *catalog) indexed(x *keywordIndex) {
	c.index, c.building = x, false
	waiting := c.waiting
	c.waiting = nil
	for _, wt := range waiting {
		r := wt.r
		if r.gen != wt.gen || r.state&released != 0 || r.Out.Closed() {
			continue
		}
		r.answerSearch(c, wt.query, wt.limit)
		r.maybeRelease()
	}
}

// appendToolsResult appends describe_tool's result: {"tools":[item]} as
// the text and the structured content.
func appendToolsResult(dst, item []byte) []byte {
	s := make([]byte, 0, len(item)+12)
	s = append(s, `{"tools":[`...)
	s = append(s, item...)
	s = append(s, ']', '}')
	return appendStructured(dst, s)
}

// appendStructured appends a tool result whose structured content is s,
// and whose one text content is s as JSON text.
func appendStructured(dst, s []byte) []byte {
	dst = append(dst, `{"content":[{"type":"text","text":`...)
	dst = jsonrpc.AppendString(dst, s)
	dst = append(dst, `}],"structuredContent":`...)
	dst = append(dst, s...)
	return append(dst, `,"isError":false}`...)
}

// executeTool calls the tool execute_tool names with its arguments, as
// the downstream's own tools/call of it would go: to the route that
// serves it, if the caller may reach one. The call's _meta (its progress
// token) goes with it, so that the tool's progress reaches the caller.
func (r *request) executeTool(args []byte) {
	h := r.h
	name, ok := stringArg(args, "name")
	if !ok {
		r.respondError(jsonrpc.CodeInvalidParams, invalidParams, nil, nil)
		return
	}
	inner := []byte("{}")
	if as, ae, ok := member(args, "arguments"); ok {
		if args[as] != '{' {
			r.respondError(jsonrpc.CodeInvalidParams, []byte("Invalid params: arguments is an object"), nil, nil)
			return
		}
		inner = args[as:ae]
	}
	if h.s.cache.tools.metaOf(name) != metaNone {
		r.respondResult(toolNotFound)
		return
	}
	route, up, ok := h.resolve(false, mcp.McpBeginExKindToolsCall, name, r.authorization, &r.upBuf)
	if !ok {
		r.respondResult(toolNotFound)
		return
	}
	p := append(r.rewritten[:0], `{"name":`...)
	p = jsonrpc.AppendString(p, name)
	p = append(p, `,"arguments":`...)
	p = append(p, inner...)
	if ms, me, ok := member(r.params, "_meta"); ok {
		p = append(p, `,"_meta":`...)
		p = append(p, r.params[ms:me]...)
	}
	p = append(p, '}')
	r.rewritten = p
	r.params = p
	if r.checked() && !r.argumentsValid(name) {
		return
	}
	r.ident = append(r.ident[:0], name...)
	r.identNull = false
	if !r.stripParams(0, "name", route) {
		r.respondUnknown(name)
		return
	}
	r.route, r.upIdent = route, up
	r.relay()
}
