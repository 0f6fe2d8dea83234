package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// aliasBudget bounds how many nodes alias expansion may add to a document,
// so a "billion laughs" file fails instead of exhausting memory.
const aliasBudget = 100_000

// maxDepth bounds nesting while walking the node tree.
const maxDepth = 1000

// loc records where one value of the document came from.
type loc struct {
	key  *yaml.Node // the mapping key; nil for the root and list items
	val  *yaml.Node // the value, aliases resolved
	path string     // dotted path, e.g. bindings.app0.routes[0].exit
	keys []string   // a mapping's keys in file order (merged keys included)
}

// line returns the line an error about this value points at: the key's, so
// that a nested mapping is reported where it is named.
func (l *loc) line() (int, int) {
	if l.key != nil {
		return l.key.Line, l.key.Column
	}
	return max(l.val.Line, 1), max(l.val.Column, 1)
}

// tree is a parsed document converted to generic JSON values, with the
// position of every value kept by JSON pointer.
type tree struct {
	file      string
	root      any
	locs      map[string]*loc
	errs      []*Error
	tainted   []string // pointers whose values could not be converted
	budget    int
	resolvers map[string]func(string) (string, bool)
	done      map[*yaml.Node]bool // scalars already substituted, and whether that worked
}

// parse reads exactly one YAML document.
func parse(file string, src []byte) (doc *yaml.Node, errs []*Error) {
	defer func() {
		// The YAML library turns its own failures into errors; anything
		// else escaping it must still not take the process down.
		if r := recover(); r != nil {
			doc, errs = nil, []*Error{{Pos: Pos{file, 1, 1}, Msg: fmt.Sprintf("yaml: internal error: %v", r)}}
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(src))
	var first yaml.Node
	if err := dec.Decode(&first); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, []*Error{{Pos: Pos{file, 1, 1}, Msg: "configuration is empty"}}
		}
		return nil, []*Error{yamlError(file, src, err)}
	}
	if len(first.Content) == 0 {
		return nil, []*Error{{Pos: Pos{file, 1, 1}, Msg: "configuration is empty"}}
	}
	var second yaml.Node
	switch err := dec.Decode(&second); {
	case err == nil:
		line := second.Line
		if len(second.Content) > 0 {
			line = second.Content[0].Line
		}
		return nil, []*Error{{Pos: Pos{file, max(line, 1), 1}, Msg: "more than one YAML document; a configuration is one document"}}
	case !errors.Is(err, io.EOF):
		return nil, []*Error{yamlError(file, src, err)}
	}
	return first.Content[0], nil
}

var (
	yamlLineRE   = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)
	yamlAnchorRE = regexp.MustCompile(`^yaml: unknown anchor '(.*)' referenced$`)
)

// parserProblems are the YAML library's parser (not scanner) errors. It
// reports their lines counting from 0 (its scanner errors count from 1).
var parserProblems = []string{
	"did not find expected <stream-start>",
	"did not find expected <document start>",
	"found undefined tag handle",
	"did not find expected node content",
	"did not find expected '-' indicator",
	"did not find expected key",
	"did not find expected ',' or ']'",
	"did not find expected ',' or '}'",
	"found duplicate %YAML directive",
	"found incompatible YAML document",
	"found duplicate %TAG directive",
}

// yamlError turns a YAML syntax error into an Error at its line. The few
// errors the library reports without a line are placed as well as the
// source allows, else at line 1.
func yamlError(file string, src []byte, err error) *Error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if m := yamlLineRE.FindStringSubmatch(err.Error()); m != nil {
		if n, err := strconv.Atoi(m[1]); err == nil && n > 0 {
			line = n
		}
		msg = m[2]
	}
	switch {
	case slices.Contains(parserProblems, msg):
		line++
	case line > 0:
	case strings.HasPrefix(msg, "unknown anchor"):
		if m := yamlAnchorRE.FindStringSubmatch(err.Error()); m != nil {
			if i := bytes.Index(src, []byte("*"+m[1])); i >= 0 {
				line = lineAt(src, i)
			}
		}
	case msg == "control characters are not allowed":
		if i := bytes.IndexFunc(src, func(r rune) bool {
			return r < 0x20 && r != '\t' && r != '\n' && r != '\r'
		}); i >= 0 {
			line = lineAt(src, i)
		}
	case strings.Contains(msg, "UTF-8"):
		for i := 0; i < len(src); {
			r, size := utf8.DecodeRune(src[i:])
			if r == utf8.RuneError && size <= 1 {
				line = lineAt(src, i)
				break
			}
			i += size
		}
	}
	return &Error{Pos: Pos{file, max(line, 1), 1}, Msg: "yaml: " + msg}
}

// lineAt returns the 1-based line of byte offset i.
func lineAt(src []byte, i int) int {
	return 1 + bytes.Count(src[:i], []byte("\n"))
}

// convert builds the generic value of root, substituting ${{ … }}
// expressions in scalars on the way.
func (t *tree) convert(root *yaml.Node) {
	t.locs = map[string]*loc{}
	t.done = map[*yaml.Node]bool{}
	t.budget = countNodes(root, 0) + aliasBudget
	t.root = t.value(root, nil, "", "", 0)
}

func countNodes(n *yaml.Node, depth int) int {
	if n == nil || depth > maxDepth {
		return 0
	}
	c := 1
	for _, k := range n.Content {
		c += countNodes(k, depth+1)
	}
	return c
}

func (t *tree) errorf(n *yaml.Node, path, format string, args ...any) {
	t.errs = append(t.errs, &Error{Pos: Pos{t.file, max(n.Line, 1), max(n.Column, 1)}, Path: path, Msg: fmt.Sprintf(format, args...)})
}

// value converts n, recorded at pointer ptr and dotted path.
func (t *tree) value(n, key *yaml.Node, ptr, path string, depth int) any {
	pos := n
	if key != nil {
		pos = key
	}
	n = resolveAlias(n)
	if n == nil {
		t.errorf(pos, path, "alias to an unknown anchor")
		t.tainted = append(t.tainted, ptr)
		return nil
	}
	l := &loc{key: key, val: n, path: path}
	t.locs[ptr] = l
	if t.budget--; t.budget < 0 {
		if t.budget == -1 {
			t.errorf(pos, path, "aliases expand to too many values (more than %d)", aliasBudget)
		}
		t.tainted = append(t.tainted, ptr)
		return nil
	}
	if depth > maxDepth {
		t.errorf(pos, path, "nested more than %d levels deep", maxDepth)
		t.tainted = append(t.tainted, ptr)
		return nil
	}
	switch n.Kind {
	case yaml.MappingNode:
		return t.mapping(n, l, ptr, depth)
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for i, item := range n.Content {
			tok := strconv.Itoa(i)
			out = append(out, t.value(item, nil, ptr+"/"+tok, path+"["+tok+"]", depth+1))
		}
		return out
	case yaml.ScalarNode:
		if !t.substitute(n, ptr, path) {
			return nil
		}
		return t.scalar(n, ptr, path)
	default:
		t.errorf(n, path, "unsupported YAML node")
		t.tainted = append(t.tainted, ptr)
		return nil
	}
}

func resolveAlias(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode; i++ {
		if i > maxDepth {
			return nil
		}
		n = n.Alias
	}
	return n
}

// mapping converts a mapping. Keys must be scalars and unique; YAML merge
// keys (<<: *anchor) add the keys of the merged mappings that the mapping
// does not set itself, at the place of the merge key.
func (t *tree) mapping(n *yaml.Node, l *loc, ptr string, depth int) map[string]any {
	out := map[string]any{}
	first := map[string]*yaml.Node{}
	type entry struct{ key, val *yaml.Node }
	var entries []entry
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if isMerge(k) {
			entries = append(entries, entry{k, v})
			continue
		}
		name, ok := keyText(k)
		if !ok {
			t.errorf(k, l.path, "keys must be strings, not a %s", nodeKind(resolveAlias(k)))
			continue
		}
		if prev, dup := first[name]; dup {
			t.errorf(k, l.path, "duplicate key %q (first defined at line %d)", name, prev.Line)
			continue
		}
		first[name] = k
		entries = append(entries, entry{k, v})
	}
	for _, e := range entries {
		if isMerge(e.key) {
			t.merge(e.key, e.val, l, ptr, out, first, depth)
			continue
		}
		name, _ := keyText(e.key)
		l.keys = append(l.keys, name)
		out[name] = t.value(e.val, e.key, ptr+"/"+escapePtr(name), joinPath(l.path, name), depth+1)
	}
	return out
}

func isMerge(k *yaml.Node) bool {
	return k.Kind == yaml.ScalarNode && k.Value == "<<" && k.ShortTag() == "!!merge"
}

// merge adds the keys of the mapping (or list of mappings) v that are not
// yet set; the earlier of several merged mappings wins.
func (t *tree) merge(k, v *yaml.Node, l *loc, ptr string, out map[string]any, set map[string]*yaml.Node, depth int) {
	v = resolveAlias(v)
	var sources []*yaml.Node
	switch {
	case v == nil:
	case v.Kind == yaml.MappingNode:
		sources = []*yaml.Node{v}
	case v.Kind == yaml.SequenceNode:
		for _, s := range v.Content {
			sources = append(sources, resolveAlias(s))
		}
	}
	if len(sources) == 0 {
		t.errorf(k, l.path, "merge key << needs a mapping or a list of mappings")
		return
	}
	for _, src := range sources {
		if src == nil || src.Kind != yaml.MappingNode {
			t.errorf(k, l.path, "merge key << needs a mapping or a list of mappings")
			continue
		}
		if depth > maxDepth {
			t.errorf(k, l.path, "nested more than %d levels deep", maxDepth)
			return
		}
		for i := 0; i+1 < len(src.Content); i += 2 {
			mk, mv := src.Content[i], src.Content[i+1]
			if isMerge(mk) {
				t.merge(mk, mv, l, ptr, out, set, depth+1)
				continue
			}
			name, ok := keyText(mk)
			if !ok {
				continue // reported where the merged mapping is defined
			}
			if _, done := set[name]; done {
				continue
			}
			set[name] = mk
			l.keys = append(l.keys, name)
			out[name] = t.value(mv, mk, ptr+"/"+escapePtr(name), joinPath(l.path, name), depth+1)
		}
	}
}

// keyText returns a mapping key as text; YAML keys that are not scalars
// have no JSON equivalent.
func keyText(k *yaml.Node) (string, bool) {
	k = resolveAlias(k)
	if k == nil || k.Kind != yaml.ScalarNode {
		return "", false
	}
	return k.Value, true
}

func nodeKind(n *yaml.Node) string {
	if n == nil {
		return "alias"
	}
	switch n.Kind {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	default:
		return "scalar"
	}
}

// scalar decodes a scalar the way YAML types it: plain 8080 is an integer,
// "8080" a string.
func (t *tree) scalar(n *yaml.Node, ptr, path string) any {
	var v any
	if err := decodeNode(n, &v); err != nil {
		t.errorf(n, path, "%s", strings.TrimPrefix(err.Error(), "yaml: "))
		t.tainted = append(t.tainted, ptr)
		return nil
	}
	switch x := v.(type) {
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			t.errorf(n, path, "%s is not a finite number", n.Value)
			t.tainted = append(t.tainted, ptr)
			return nil
		}
	case time.Time:
		return x.Format(time.RFC3339Nano)
	case nil, bool, int, int64, uint64, string:
	default:
		// JSON has no other scalar types; keep the text.
		return n.Value
	}
	return v
}

// decodeNode is yaml's Node.Decode, kept from panicking.
func decodeNode(n *yaml.Node, v any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("yaml: internal error: %v", r)
		}
	}()
	return n.Decode(v)
}

// exprRE matches Zilla's resolver expressions, ${{ resolver.name }}, with
// optional spaces.
var exprRE = regexp.MustCompile(`\$\{\{\s*([^\s}]*)\s*\}\}`)

// substitute replaces the ${{ resolver.name }} expressions of a scalar.
// It reports false, after recording the errors, when one cannot be
// resolved.
//
// A plain scalar that is exactly one expression is retyped from its new
// text as a plain YAML scalar: PORT=8080 makes `port: ${{ env.PORT }}` an
// integer, while `port: "${{ env.PORT }}"` stays a string. A scalar with
// text around its expressions stays a string.
func (t *tree) substitute(n *yaml.Node, ptr, path string) bool {
	if ok, seen := t.done[n]; seen {
		if !ok {
			t.tainted = append(t.tainted, ptr)
		}
		return ok
	}
	t.done[n] = true
	ms := exprRE.FindAllStringSubmatchIndex(n.Value, -1)
	if ms == nil {
		return true
	}
	var sb strings.Builder
	ok := true
	last := 0
	for _, m := range ms {
		sb.WriteString(n.Value[last:m[0]])
		last = m[1]
		expr := n.Value[m[2]:m[3]]
		resolver, name, _ := strings.Cut(expr, ".")
		lookup := t.resolvers[resolver]
		switch {
		case lookup == nil:
			t.errorf(n, path, "unknown resolver %q in %s", resolver, n.Value[m[0]:m[1]])
			ok = false
		case name == "":
			t.errorf(n, path, "%s names no variable", n.Value[m[0]:m[1]])
			ok = false
		default:
			v, found := lookup(name)
			if !found {
				if resolver == "env" {
					t.errorf(n, path, "environment variable %q is not set", name)
				} else {
					t.errorf(n, path, "%s: %q is not set", resolver, name)
				}
				ok = false
			}
			sb.WriteString(v)
		}
	}
	if !ok {
		t.done[n] = false
		t.tainted = append(t.tainted, ptr)
		return false
	}
	sb.WriteString(n.Value[last:])
	whole := len(ms) == 1 && ms[0][0] == 0 && ms[0][1] == len(n.Value)
	n.Value = sb.String()
	const quoted = yaml.DoubleQuotedStyle | yaml.SingleQuotedStyle | yaml.LiteralStyle | yaml.FoldedStyle
	switch {
	case n.Style&yaml.TaggedStyle != 0:
		// An explicit tag stays.
	case whole && n.Style&quoted == 0:
		n.Tag = ""
	default:
		n.Tag = "!!str"
	}
	return true
}

// escapePtr escapes one JSON pointer token (RFC 6901).
func escapePtr(tok string) string {
	if !strings.ContainsAny(tok, "~/") {
		return tok
	}
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(tok)
}

// ptrOf joins unescaped tokens into a JSON pointer.
func ptrOf(toks []string) string {
	var sb strings.Builder
	for _, tok := range toks {
		sb.WriteByte('/')
		sb.WriteString(escapePtr(tok))
	}
	return sb.String()
}

// joinPath appends a mapping key to a dotted path. Keys that would make
// the path ambiguous or span lines are quoted: bindings["net0.v1"].exit.
func joinPath(path, key string) string {
	if !plainKey(key) {
		return path + "[" + strconv.Quote(key) + "]"
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

func plainKey(key string) bool {
	if key == "" {
		return false
	}
	for _, r := range key {
		if !unicode.IsPrint(r) || unicode.IsSpace(r) || strings.ContainsRune(`.[]"'`, r) {
			return false
		}
	}
	return true
}

// locate returns the recorded location of ptr, or of its nearest recorded
// ancestor.
func (t *tree) locate(ptr string) *loc {
	for {
		if l, ok := t.locs[ptr]; ok {
			return l
		}
		i := strings.LastIndexByte(ptr, '/')
		if i < 0 {
			return t.locs[""]
		}
		ptr = ptr[:i]
	}
}

// isTainted reports whether ptr is, or lies under, a value that failed to
// convert; schema errors there would only repeat the first error.
func (t *tree) isTainted(ptr string) bool {
	for _, p := range t.tainted {
		if ptr == p || strings.HasPrefix(ptr, p+"/") {
			return true
		}
	}
	return false
}

// errorAt records an error about the value at ptr.
func (t *tree) errorAt(ptr, msg string) *Error {
	l := t.locate(ptr)
	if l == nil {
		return &Error{Pos: Pos{t.file, 1, 1}, Msg: msg}
	}
	line, col := l.line()
	return &Error{Pos: Pos{t.file, line, col}, Path: l.path, Msg: msg, ptr: ptr}
}
