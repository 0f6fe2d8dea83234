package spec

import (
	"sort"
	"strings"
	"sync"

	"github.com/sluicehq/sluice/idl/dynamic"
)

// The function libraries of ${…} expressions, by namespace:
//
//   - zilla:id("name") returns the label id of name, as Zilla's k3po
//     ZillaFunctions do, from Env.Labels.
//   - Every scope of the IDL schema whose types carry the scope's name,
//     capitalised, as a prefix (mcp → McpBeginEx, http → HttpBeginEx) has
//     the functions <scope>:<rest>() and <scope>:match<Rest>(): mcp:beginEx()
//     starts a *dynamic.Builder of McpBeginEx, mcp:matchBeginEx() a
//     *dynamic.Matcher, mcp:flushEx() one of McpFlushEx, and so on. The
//     mapping is derived from the schema's type names; there is no code per
//     type or field.
//   - A few functions of Zilla's per-binding classes that are no builder,
//     such as http:encodeQuery (scopeFuncs, http_functions.go), and the
//     extra builder methods of chainHelpers (chain_functions.go).

// funcImpl is one library function; args are evaluated already.
type funcImpl func(e *Env, x *Call, args []any) (any, error)

// zillaFuncs is the zilla namespace.
var zillaFuncs = map[string]funcImpl{
	"id": zillaID,
}

func zillaID(e *Env, x *Call, args []any) (any, error) {
	if len(args) != 1 {
		return nil, evalErrorf(x.Pos, nil, "zilla:id takes one argument, the label name, got %d", len(args))
	}
	name, ok := args[0].(string)
	if !ok {
		return nil, evalErrorf(x.Args[0].Position(), nil, "wrong argument to zilla:id: want a string, got %s", describeValue(args[0]))
	}
	return int64(e.label(name)), nil
}

// label resolves a label id through Labels, or the Env's own table.
func (e *Env) label(name string) int32 {
	if e.Labels != nil {
		return e.Labels(name)
	}
	id, ok := e.labels[name]
	if !ok {
		if e.labels == nil {
			e.labels = map[string]int32{}
		}
		id = int32(len(e.labels) + 1)
		e.labels[name] = id
	}
	return id
}

// idlFunc is a function of an IDL scope: it starts a builder or a matcher
// of the type named typeName (qualified).
type idlFunc struct {
	typeName string
	matcher  bool
}

// idlLibraries maps namespace → function name → IDL function.
type idlLibraries struct {
	schema *dynamic.Schema
	funcs  map[string]map[string]idlFunc
}

var (
	idlLibsMu    sync.Mutex
	idlLibsCache = map[*dynamic.Schema]*idlLibraries{}
)

// libraries returns the IDL libraries of the Env's schema.
func (e *Env) libraries() (*idlLibraries, error) {
	s := e.Schema
	if s == nil {
		var err error
		if s, err = dynamic.Builtin(); err != nil {
			return nil, err
		}
	}
	if e.libs != nil && e.libs.schema == s {
		return e.libs, nil
	}
	e.libs = librariesOf(s)
	return e.libs, nil
}

// librariesOf derives the functions of every scope from the schema's type
// names, once per schema: the type scope::…::ScopeRest gives scope:rest()
// and scope:matchRest(). A builder name wins over a matcher name that
// happens to spell the same.
func librariesOf(s *dynamic.Schema) *idlLibraries {
	idlLibsMu.Lock()
	defer idlLibsMu.Unlock()
	if l, ok := idlLibsCache[s]; ok {
		return l
	}
	l := &idlLibraries{schema: s, funcs: map[string]map[string]idlFunc{}}
	type entry struct {
		ns, fn string
		f      idlFunc
	}
	var builders, matchers []entry
	for _, q := range s.Types() {
		segs := strings.Split(q, "::")
		ns, simple := segs[0], segs[len(segs)-1]
		prefix := upperFirst(ns)
		rest, ok := strings.CutPrefix(simple, prefix)
		if len(segs) < 2 || !ok || rest == "" || !isUpper(rest[0]) {
			continue
		}
		builders = append(builders, entry{ns, lowerFirst(rest), idlFunc{typeName: q}})
		matchers = append(matchers, entry{ns, "match" + rest, idlFunc{typeName: q, matcher: true}})
	}
	for _, en := range append(builders, matchers...) {
		m := l.funcs[en.ns]
		if m == nil {
			m = map[string]idlFunc{}
			l.funcs[en.ns] = m
		}
		if _, taken := m[en.fn]; !taken {
			m[en.fn] = en.f
		}
	}
	idlLibsCache[s] = l
	return l
}

// Functions lists the functions of namespace ns that the Env provides,
// sorted, as "ns:name".
func (e *Env) Functions(ns string) ([]string, error) {
	var names []string
	if ns == "zilla" {
		for n := range zillaFuncs {
			names = append(names, ns+":"+n)
		}
	}
	if ns == "core" {
		for n := range coreFuncs {
			names = append(names, ns+":"+n)
		}
	}
	libs, err := e.libraries()
	if err != nil {
		return nil, err
	}
	for n := range libs.funcs[ns] {
		names = append(names, ns+":"+n)
	}
	for n := range scopeFuncs[ns] {
		names = append(names, ns+":"+n)
	}
	sort.Strings(names)
	return names, nil
}

// call evaluates the function call x with its evaluated arguments.
func (e *Env) call(x *Call, args []any) (any, error) {
	qname := x.Name
	if x.Namespace != "" {
		qname = x.Namespace + ":" + x.Name
	}
	if x.Namespace == "zilla" {
		if f, ok := zillaFuncs[x.Name]; ok {
			return f(e, x, args)
		}
	}
	if x.Namespace == "core" {
		if f, ok := coreFuncs[x.Name]; ok {
			return f(e, x, args)
		}
		return nil, evalErrorf(x.Pos, nil, "unknown function %s", qname)
	}
	libs, err := e.libraries()
	if err != nil {
		return nil, evalErrorf(x.Pos, err, "%s: loading the IDL schema: %v", qname, err)
	}
	if f, ok := scopeFuncs[x.Namespace][x.Name]; ok {
		return f(e, x, args)
	}
	f, ok := libs.funcs[x.Namespace][x.Name]
	if !ok && libs.funcs[x.Namespace] != nil {
		if f, ok := coreFuncs[x.Name]; ok {
			return f(e, x, args)
		}
	}
	if !ok {
		if x.Namespace != "zilla" && libs.funcs[x.Namespace] == nil {
			return nil, evalErrorf(x.Pos, nil, "unknown function %s (no function library %q)", qname, x.Namespace)
		}
		return nil, evalErrorf(x.Pos, nil, "unknown function %s", qname)
	}
	if len(args) != 0 {
		return nil, evalErrorf(x.Pos, nil, "%s takes no arguments, got %d", qname, len(args))
	}
	var v any
	if f.matcher {
		v, err = libs.schema.NewMatcher(f.typeName)
	} else {
		v, err = libs.schema.NewBuilder(f.typeName)
	}
	if err != nil {
		return nil, evalErrorf(x.Pos, err, "%s: %v", qname, err)
	}
	return v, nil
}

func upperFirst(s string) string {
	if s == "" || !isLower(s[0]) {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}

func lowerFirst(s string) string {
	if s == "" || !isUpper(s[0]) {
		return s
	}
	return string(s[0]-'A'+'a') + s[1:]
}

func isUpper(c byte) bool { return 'A' <= c && c <= 'Z' }
func isLower(c byte) bool { return 'a' <= c && c <= 'z' }
