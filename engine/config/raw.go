package config

import (
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Raw is a part of the configuration that its binding (or guard, store,
// …) decodes itself: options, one route condition, a route's with. It
// keeps the YAML node, with positions and with ${{ … }} already
// substituted, and the generic value the schema validated.
type Raw struct {
	node  *yaml.Node
	value any
	path  string
	pos   Pos
}

// Node returns the YAML node. It is shared with the loaded Config: do not
// modify it.
func (r *Raw) Node() *yaml.Node {
	if r == nil {
		return nil
	}
	return r.node
}

// Value returns the generic value: map[string]any, []any, string, bool,
// int, int64, uint64, float64 or nil. It is shared: do not modify it.
func (r *Raw) Value() any {
	if r == nil {
		return nil
	}
	return r.value
}

// Pos returns where the value is named in the file.
func (r *Raw) Pos() Pos {
	if r == nil {
		return Pos{}
	}
	return r.pos
}

// Path returns the dotted path of the value, e.g. bindings.app0.options.
func (r *Raw) Path() string {
	if r == nil {
		return ""
	}
	return r.path
}

// Where names the value at keys below this one (each a mapping key; ""
// or none names the value itself) for an error message:
// "file:line: path.key1.key2", with the line of the deepest key found, or
// just the path when there is no file.
func (r *Raw) Where(keys ...string) string {
	path, pos, n := r.Path(), r.Pos(), r.Node()
	for _, key := range keys {
		if key == "" {
			continue
		}
		path += "." + key
		if n == nil {
			continue
		}
		if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
			n = n.Content[0]
		}
		var next *yaml.Node
		for i := 0; n.Kind == yaml.MappingNode && i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				pos.Line = n.Content[i].Line
				next = n.Content[i+1]
			}
		}
		n = next
	}
	if pos.File == "" {
		return path
	}
	return pos.String() + ": " + path
}

// JSON returns the value encoded as JSON, for decoders that want it.
func (r *Raw) JSON() ([]byte, error) {
	return json.Marshal(r.Value())
}

// Decode decodes the value into v, a non-nil pointer, with the YAML
// library's rules (yaml:"name" field tags; lower-cased field names by
// default). Unlike plain YAML decoding it rejects keys that v has no field
// for. Problems come back as an [*ErrorList] in the file:line: path:
// message form of Load. Decoding a nil Raw leaves v alone.
func (r *Raw) Decode(v any) error {
	if r == nil {
		return nil
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("config: Decode needs a non-nil pointer, not %T", v)
	}
	c := &fieldChecker{file: r.pos.File, lines: map[int]string{}}
	c.walk(r.node, rv.Type().Elem(), r.path, 0)
	if len(c.errs) > 0 {
		return newErrorList(c.errs)
	}
	err := decodeNode(r.node, v)
	if err == nil {
		return nil
	}
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return newErrorList([]*Error{{Pos: r.pos, Path: r.path, Msg: strings.TrimPrefix(err.Error(), "yaml: ")}})
	}
	var errs []*Error
	for _, msg := range te.Errors {
		errs = append(errs, c.typeError(msg, r))
	}
	return newErrorList(errs)
}

var (
	unmarshalerType     = reflect.TypeFor[yaml.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	timeType            = reflect.TypeFor[time.Time]()
)

// fieldChecker walks a node alongside the Go type it decodes into and
// reports mapping keys that have no field, mirroring the YAML library's
// field rules. It also notes the path of each line, to place the
// library's own type errors.
type fieldChecker struct {
	file  string
	errs  []*Error
	lines map[int]string
}

func (c *fieldChecker) walk(n *yaml.Node, t reflect.Type, path string, depth int) {
	if n == nil || depth > maxDepth {
		return
	}
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	n = resolveAlias(n)
	if n == nil {
		return
	}
	// Children overwrite their parent: a block mapping starts on the line
	// of its first key, and an error there is about that key.
	if n.Line > 0 {
		c.lines[n.Line] = path
	}
	for t.Kind() == reflect.Pointer {
		if decodesItself(t) {
			return
		}
		t = t.Elem()
	}
	if decodesItself(t) || t == timeType {
		return
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		if n.Kind != yaml.SequenceNode {
			return
		}
		for i, item := range n.Content {
			c.walk(item, t.Elem(), path+"["+strconv.Itoa(i)+"]", depth+1)
		}
	case reflect.Map:
		c.pairs(n, depth, func(k, v *yaml.Node, name string) {
			c.walk(v, t.Elem(), joinPath(path, name), depth+1)
		})
	case reflect.Struct:
		fields, inline := structFields(t, 0)
		c.pairs(n, depth, func(k, v *yaml.Node, name string) {
			switch ft, ok := fields[name]; {
			case ok:
				c.walk(v, ft, joinPath(path, name), depth+1)
			case inline != nil:
				c.walk(v, inline.Elem(), joinPath(path, name), depth+1)
			default:
				c.errs = append(c.errs, &Error{Pos: Pos{c.file, k.Line, k.Column}, Path: path, Msg: fmt.Sprintf("unknown key %q", name)})
			}
		})
	}
}

// pairs calls fn for each key of a mapping, merge keys (<<) expanded.
func (c *fieldChecker) pairs(n *yaml.Node, depth int, fn func(k, v *yaml.Node, name string)) {
	if n == nil || n.Kind != yaml.MappingNode || depth > maxDepth {
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if isMerge(k) {
			v = resolveAlias(v)
			if v != nil && v.Kind == yaml.SequenceNode {
				for _, s := range v.Content {
					c.pairs(resolveAlias(s), depth+1, fn)
				}
			} else {
				c.pairs(v, depth+1, fn)
			}
			continue
		}
		if name, ok := keyText(k); ok {
			fn(k, v, name)
		}
	}
}

func decodesItself(t reflect.Type) bool {
	return t.Implements(unmarshalerType) || t.Implements(textUnmarshalerType) ||
		reflect.PointerTo(t).Implements(unmarshalerType) || reflect.PointerTo(t).Implements(textUnmarshalerType)
}

// structFields returns the keys of a struct type as the YAML library sees
// them, and the map type of an inline map field, if any.
func structFields(t reflect.Type, depth int) (map[string]reflect.Type, reflect.Type) {
	fields := map[string]reflect.Type{}
	var inlineMap reflect.Type
	if depth > 32 {
		return fields, nil
	}
	for i := range t.NumField() {
		f := t.Field(i)
		if f.PkgPath != "" && !f.Anonymous {
			continue
		}
		tag := f.Tag.Get("yaml")
		if tag == "" && !strings.Contains(string(f.Tag), ":") {
			tag = string(f.Tag)
		}
		if tag == "-" {
			continue
		}
		name, flags, _ := strings.Cut(tag, ",")
		if strings.Contains(","+flags+",", ",inline,") {
			ft := f.Type
			switch {
			case ft.Kind() == reflect.Map:
				inlineMap = ft
			case ft.Kind() == reflect.Struct, ft.Kind() == reflect.Pointer && ft.Elem().Kind() == reflect.Struct:
				if ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				sub, subMap := structFields(ft, depth+1)
				for k, v := range sub {
					fields[k] = v
				}
				if subMap != nil {
					inlineMap = subMap
				}
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		fields[name] = f.Type
	}
	return fields, inlineMap
}

var typeErrorRE = regexp.MustCompile("^line (\\d+): cannot unmarshal !!(\\w+)(?: `(.*)`)? into (.+)$")

// typeError words one of the YAML library's type errors.
func (c *fieldChecker) typeError(msg string, r *Raw) *Error {
	e := &Error{Pos: r.pos, Path: r.path, Msg: msg}
	if m := typeErrorRE.FindStringSubmatch(msg); m != nil {
		if n, err := strconv.Atoi(m[1]); err == nil && n > 0 {
			e.Line, e.Col = n, 1
			if p, ok := c.lines[n]; ok {
				e.Path = p
			}
		}
		got := yamlTypeName(m[2])
		if m[3] != "" {
			got += " " + strconv.Quote(m[3])
		}
		e.Msg = fmt.Sprintf("expected %s, got %s", m[4], got)
	} else if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if num, text, ok := strings.Cut(rest, ": "); ok {
			if n, err := strconv.Atoi(num); err == nil && n > 0 {
				e.Line, e.Col, e.Msg = n, 1, text
				if p, ok := c.lines[n]; ok {
					e.Path = p
				}
			}
		}
	}
	return e
}

func yamlTypeName(tag string) string {
	switch tag {
	case "str":
		return "string"
	case "int":
		return "integer"
	case "float":
		return "number"
	case "bool":
		return "boolean"
	case "map":
		return "mapping"
	case "seq":
		return "list"
	}
	return tag
}
