package config

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// builder turns the validated document into a Config and checks what a
// schema cannot: that names refer to things the file declares.
type builder struct {
	t        *tree
	s        *Schema
	o        *options
	cfg      *Config
	errs     []*Error
	reported map[string]bool // pointers the schema already complained about
}

func (b *builder) errorAt(ptr, format string, args ...any) {
	if b.reported[ptr] || b.t.isTainted(ptr) {
		return
	}
	b.errs = append(b.errs, b.t.errorAt(ptr, fmt.Sprintf(format, args...)))
}

// build fills b.cfg. It tolerates any shape, since it runs even when the
// schema has already found errors.
func (b *builder) build() {
	root, _ := b.t.root.(map[string]any)
	b.cfg = &Config{File: b.t.file}
	b.cfg.Name, _ = root["name"].(string)
	b.cfg.Vaults = b.components("/vaults", root["vaults"])
	b.cfg.Stores = b.components("/stores", root["stores"])
	b.cfg.Guards = b.components("/guards", root["guards"])
	b.cfg.Catalogs = b.components("/catalogs", root["catalogs"])
	if tel, ok := root["telemetry"].(map[string]any); ok {
		b.cfg.Telemetry = b.telemetry(tel)
		b.cfg.Telemetry.Exporters = b.components("/telemetry/exporters", tel["exporters"])
	}
	if bindings, ok := root["bindings"].(map[string]any); ok {
		for _, name := range b.keys("/bindings") {
			ptr := "/bindings/" + escapePtr(name)
			m, ok := bindings[name].(map[string]any)
			if !ok {
				continue
			}
			b.cfg.Bindings = append(b.cfg.Bindings, b.binding(name, ptr, m))
		}
	}
	for _, ptr := range []string{"/bindings", "/guards", "/stores", "/vaults", "/catalogs", "/telemetry/exporters"} {
		for _, name := range b.keys(ptr) {
			if !nameRE.MatchString(name) {
				b.keyError(ptr, name, "%s", invalidName(name))
			}
		}
	}
	b.check()
}

// keys returns the keys of the mapping at ptr in file order.
func (b *builder) keys(ptr string) []string {
	if l, ok := b.t.locs[ptr]; ok {
		return l.keys
	}
	return nil
}

func (b *builder) pos(ptr string) Pos {
	l := b.t.locate(ptr)
	if l == nil {
		return Pos{b.t.file, 1, 1}
	}
	line, col := l.line()
	return Pos{b.t.file, line, col}
}

func (b *builder) raw(ptr string, v any) *Raw {
	l, ok := b.t.locs[ptr]
	if !ok {
		return nil
	}
	line, col := l.line()
	return &Raw{node: l.val, value: v, path: l.path, pos: Pos{b.t.file, line, col}}
}

func (b *builder) components(ptr string, v any) []*Component {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	var out []*Component
	for _, name := range b.keys(ptr) {
		cptr := ptr + "/" + escapePtr(name)
		cm, ok := m[name].(map[string]any)
		if !ok {
			continue
		}
		c := &Component{Name: name, Pos: b.pos(cptr)}
		c.Type, _ = cm["type"].(string)
		c.Kind, _ = cm["kind"].(string)
		c.Store, _ = cm["store"].(string)
		c.Vault, _ = cm["vault"].(string)
		if o, ok := cm["options"]; ok {
			c.Options = b.raw(cptr+"/options", o)
		}
		out = append(out, c)
	}
	return out
}

func (b *builder) telemetry(m map[string]any) Telemetry {
	var tel Telemetry
	if attrs, ok := m["attributes"].(map[string]any); ok {
		tel.Attributes = map[string]string{}
		for k, v := range attrs {
			if s, ok := v.(string); ok {
				tel.Attributes[k] = s
			}
		}
	}
	if metrics, ok := m["metrics"].([]any); ok {
		for _, v := range metrics {
			if s, ok := v.(string); ok {
				tel.Metrics = append(tel.Metrics, s)
			}
		}
	}
	return tel
}

func (b *builder) binding(name, ptr string, m map[string]any) *Binding {
	bd := &Binding{Name: name, Pos: b.pos(ptr)}
	bd.Type, _ = m["type"].(string)
	bd.Kind, _ = m["kind"].(string)
	bd.Entry, _ = m["entry"].(string)
	bd.Exit, _ = m["exit"].(string)
	bd.Vault, _ = m["vault"].(string)
	if o, ok := m["options"]; ok {
		bd.Options = b.raw(ptr+"/options", o)
	}
	if tel, ok := m["telemetry"].(map[string]any); ok {
		bd.Telemetry = b.telemetry(tel)
	}
	routes, _ := m["routes"].([]any)
	for i, r := range routes {
		rptr := ptr + "/routes/" + strconv.Itoa(i)
		rm, ok := r.(map[string]any)
		if !ok {
			continue
		}
		route := &Route{Pos: b.pos(rptr)}
		route.Exit, _ = rm["exit"].(string)
		when, _ := rm["when"].([]any)
		for j, w := range when {
			route.When = append(route.When, b.raw(rptr+"/when/"+strconv.Itoa(j), w))
		}
		if w, ok := rm["with"]; ok {
			route.With = b.raw(rptr+"/with", w)
		}
		if g, ok := rm["guarded"].(map[string]any); ok {
			route.Guarded = map[string][]string{}
			for guard, roles := range g {
				list, _ := roles.([]any)
				rs := []string{}
				for _, role := range list {
					if s, ok := role.(string); ok {
						rs = append(rs, s)
					}
				}
				route.Guarded[guard] = rs
			}
		}
		bd.Routes = append(bd.Routes, route)
	}
	return bd
}

// check reports references to names the file does not declare, and the
// entry rules of Zilla's remote kinds.
func (b *builder) check() {
	for _, bd := range b.cfg.Bindings {
		ptr := "/bindings/" + escapePtr(bd.Name)
		remote := bd.Kind == KindRemoteClient || bd.Kind == KindRemoteServer
		switch {
		case bd.Entry != "" && !remote && bd.Kind != "":
			b.errorAt(ptr+"/entry", "only remote_client and remote_server bindings take an entry")
		case bd.Entry == "" && remote:
			b.errorAt(ptr, "missing required key %q for kind %s", "entry", bd.Kind)
		}
		if bd.Exit != "" {
			if bd.Kind == KindRemoteClient {
				b.errorAt(ptr+"/exit", "a remote_client binding takes no exit")
			} else {
				b.bindingRef(ptr+"/exit", bd.Exit)
			}
		}
		if bd.Vault != "" && b.cfg.Vault(bd.Vault) == nil {
			b.errorAt(ptr+"/vault", "no vault named %q", bd.Vault)
		}
		for i, r := range bd.Routes {
			rptr := ptr + "/routes/" + strconv.Itoa(i)
			if r.Exit != "" {
				b.bindingRef(rptr+"/exit", r.Exit)
			}
			for _, guard := range b.keys(rptr + "/guarded") {
				if b.cfg.Guard(guard) == nil {
					b.keyError(rptr+"/guarded", guard, "no guard named %q", guard)
				}
			}
		}
		b.refs(FragmentBinding, bd.Type, ptr, bd.Options)
		b.unsupported(FragmentBinding, bd.Type, ptr, bd.Options)
	}
	for _, g := range b.cfg.Guards {
		ptr := "/guards/" + escapePtr(g.Name)
		if g.Store != "" && b.cfg.Store(g.Store) == nil {
			b.errorAt(ptr+"/store", "no store named %q", g.Store)
		}
		b.refs(FragmentGuard, g.Type, ptr, g.Options)
	}
	for _, s := range b.cfg.Stores {
		b.refs(FragmentStore, s.Type, "/stores/"+escapePtr(s.Name), s.Options)
	}
	for _, v := range b.cfg.Vaults {
		b.refs(FragmentVault, v.Type, "/vaults/"+escapePtr(v.Name), v.Options)
	}
	for _, e := range b.cfg.Telemetry.Exporters {
		ptr := "/telemetry/exporters/" + escapePtr(e.Name)
		if e.Vault != "" && b.cfg.Vault(e.Vault) == nil {
			b.errorAt(ptr+"/vault", "no vault named %q", e.Vault)
		}
		b.refs(FragmentExporter, e.Type, ptr, e.Options)
	}
}

// keyError reports a problem with one key of the mapping at ptr, at the
// key's line.
func (b *builder) keyError(ptr, key, format string, args ...any) {
	child := ptr + "/" + escapePtr(key)
	if b.reported[ptr] || b.reported[child] || b.t.isTainted(child) {
		return
	}
	e := b.t.errorAt(ptr, fmt.Sprintf(format, args...))
	if l, ok := b.t.locs[child]; ok && l.key != nil {
		e.Line, e.Col = l.key.Line, l.key.Column
	}
	b.errs = append(b.errs, e)
}

// bindingRef checks an exit: a binding of the file, a system binding
// (sys:<name>), or a name the caller declared external.
func (b *builder) bindingRef(ptr, name string) {
	if !b.declared(FragmentBinding, name) {
		b.errorAt(ptr, "no binding named %q", name)
	}
}

// unsupported reports the options present that the type's fragment marks
// as not implemented.
func (b *builder) unsupported(kind, typ, ptr string, options *Raw) {
	if options == nil {
		return
	}
	for _, u := range b.s.unsupported[kind][typ] {
		b.walk(ptr+"/options", options.value, pointerTokens(u.Path), func(at string, _ any) {
			b.errorAt(at, "not supported yet: %s", u.Feature)
		})
	}
}

// walk calls found for every value at toks below v ("*" matching every
// key or item), in file order.
func (b *builder) walk(ptr string, v any, toks []string, found func(ptr string, v any)) {
	if len(toks) == 0 {
		found(ptr, v)
		return
	}
	tok, rest := toks[0], toks[1:]
	switch x := v.(type) {
	case map[string]any:
		if tok == "*" {
			for _, k := range b.keys(ptr) {
				b.walk(ptr+"/"+escapePtr(k), x[k], rest, found)
			}
		} else if child, ok := x[tok]; ok {
			b.walk(ptr+"/"+escapePtr(tok), child, rest, found)
		}
	case []any:
		for i, item := range x {
			if tok == "*" || tok == strconv.Itoa(i) {
				b.walk(ptr+"/"+strconv.Itoa(i), item, rest, found)
			}
		}
	}
}

// pointerTokens splits a JSON pointer into its unescaped tokens.
func pointerTokens(path string) []string {
	toks := strings.Split(path, "/")[1:]
	for i, tok := range toks {
		toks[i] = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
	}
	return toks
}

// refs checks the names a fragment declared in a component's options.
func (b *builder) refs(kind, typ, ptr string, options *Raw) {
	if options == nil {
		return
	}
	for _, ref := range b.s.refs[kind][typ] {
		b.walk(ptr+"/options", options.value, pointerTokens(ref.Path), func(at string, v any) {
			b.checkRef(at, v, ref)
		})
	}
}

// checkRef checks the name at ptr, or with ref.Keys the keys of the
// mapping there.
func (b *builder) checkRef(ptr string, v any, ref Ref) {
	if ref.Keys {
		m, _ := v.(map[string]any)
		for _, k := range b.keys(ptr) {
			if _, ok := m[k]; ok && !b.declared(ref.Kind, k) {
				b.keyError(ptr, k, "no %s named %q", ref.Kind, k)
			}
		}
		return
	}
	if name, ok := v.(string); ok && !b.declared(ref.Kind, name) {
		b.errorAt(ptr, "no %s named %q", ref.Kind, name)
	}
}

func (b *builder) declared(kind, name string) bool {
	switch kind {
	case FragmentBinding:
		if b.cfg.Binding(name) != nil || slices.Contains(b.o.external, name) {
			return true
		}
		sys, ok := strings.CutPrefix(name, SysPrefix)
		return ok && nameRE.MatchString(sys)
	case FragmentGuard:
		return b.cfg.Guard(name) != nil
	case FragmentStore:
		return b.cfg.Store(name) != nil
	case FragmentVault:
		return b.cfg.Vault(name) != nil
	}
	return false
}
