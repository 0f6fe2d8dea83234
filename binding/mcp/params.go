package mcp

import (
	"bytes"
	"encoding/base64"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/sluicehq/sluice/binding/mcp/jsonrpc"
)

// Custom parameter headers (SEP-2243, 2026-07-28). A tool's inputSchema
// property may carry "x-mcp-header": "<Name>"; a 2026-07-28 client then
// mirrors that argument of a tools/call into the HTTP header
// Mcp-Param-<Name>, and the server checks the headers against the body.
// The server kind validates them against what it last listed, the client
// kind writes them from what its upstream listed: a ParamTable, shared by
// a binding's workers, holds both.

// ParamHeaderPrefix starts every custom parameter header's name.
const ParamHeaderPrefix = "Mcp-Param-"

const (
	// MaxParamTools bounds the tools a ParamTable remembers.
	MaxParamTools = 4096
	// MaxParamHeaders bounds the declarations of one tool: a tool that
	// declares more is not remembered.
	MaxParamHeaders = 16
	// maxParamDepth bounds how deep in nested properties a declaration
	// is looked for.
	maxParamDepth = 8
)

// ParamHeader is one x-mcp-header declaration: the header's name (after
// Mcp-Param-) as declared, the whole header name in lower case as the
// gateway writes it, and the path of property names to its argument,
// outermost first.
type ParamHeader struct {
	Name   string
	Header string
	Path   []string
}

// ScanParamHeaders reads the x-mcp-header declarations of a tool's
// inputSchema, at any depth of nested properties, in schema order. ok is
// false when the tool declares one that clients must refuse (SEP-2243, as
// go-sdk checks them): on a property whose type is not string, integer or
// boolean, a name that is empty or not an HTTP token, a name declared
// twice (case-insensitively), or more than MaxParamHeaders of them.
func ScanParamHeaders(schema []byte) (decls []ParamHeader, ok bool) {
	props := jsonrpc.Lookup(schema, "properties")
	if props == nil {
		return nil, true
	}
	var path [maxParamDepth]string
	return scanProps(props, path[:0], nil)
}

func scanProps(props []byte, path []string, decls []ParamHeader) ([]ParamHeader, bool) {
	if len(path) == maxParamDepth {
		return decls, true
	}
	for f, i, ok := jsonrpc.NextField(props, 0); ok; f, i, ok = jsonrpc.NextField(props, i) {
		if len(f.Value) == 0 || f.Value[0] != '{' {
			continue
		}
		key, err := jsonrpc.Unquote(nil, f.Key)
		if err != nil {
			return nil, false
		}
		p := append(path, string(key))
		if h := jsonrpc.Lookup(f.Value, "x-mcp-header"); h != nil {
			name, err := jsonrpc.Unquote(nil, h)
			if err != nil || !validHeaderName(name) {
				return nil, false
			}
			switch string(jsonrpc.Lookup(f.Value, "type")) {
			case `"string"`, `"integer"`, `"boolean"`:
			default:
				return nil, false
			}
			for _, d := range decls {
				if bytes.EqualFold([]byte(d.Name), name) {
					return nil, false
				}
			}
			if len(decls) == MaxParamHeaders {
				return nil, false
			}
			decls = append(decls, ParamHeader{
				Name:   string(name),
				Header: "mcp-param-" + strings.ToLower(string(name)),
				Path:   append([]string(nil), p...),
			})
		}
		if sub := jsonrpc.Lookup(f.Value, "properties"); sub != nil {
			var ok bool
			if decls, ok = scanProps(sub, p, decls); !ok {
				return nil, false
			}
		}
	}
	return decls, true
}

// validHeaderName reports whether name is an HTTP field name (1*tchar,
// RFC 9110 §5.6.2).
func validHeaderName(name []byte) bool {
	if len(name) == 0 {
		return false
	}
	for _, c := range name {
		switch {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case bytes.IndexByte([]byte("!#$%&'*+-.^_`|~"), c) >= 0:
		default:
			return false
		}
	}
	return true
}

// ArgumentAt returns the raw JSON value at path in the arguments object
// args, or nil when there is none.
func ArgumentAt(args []byte, path []string) []byte {
	v := args
	for _, k := range path {
		if v = jsonrpc.Lookup(v, k); v == nil {
			return nil
		}
	}
	return v
}

const (
	b64Prefix = "=?base64?"
	b64Suffix = "?="
	// maxSafeInteger is the largest integer a double holds exactly,
	// 2^53-1: integers beyond it are not mirrored.
	maxSafeInteger = 1<<53 - 1
)

// AppendParamValue appends the Mcp-Param header value of the argument
// raw (its JSON text) to dst: a string as is when it is visible ASCII
// without leading or trailing space or tab and does not itself look
// encoded, else =?base64?<base64 of its UTF-8>?=; an integer (within
// ±2^53-1) in decimal; a boolean as true or false. ok is false for what
// is not mirrored: null, objects, arrays, and numbers that are not such
// integers.
func AppendParamValue(dst, raw []byte) (out []byte, ok bool) {
	raw = jsonrpc.TrimSpace(raw)
	if len(raw) == 0 {
		return dst, false
	}
	switch raw[0] {
	case '"':
		// Unquote aliases raw, or decodes into a buffer of its own: never
		// into dst.
		v, err := jsonrpc.Unquote(nil, raw)
		if err != nil {
			return dst, false
		}
		if !needsBase64(v) {
			return append(dst, v...), true
		}
		dst = append(dst, b64Prefix...)
		dst = base64.StdEncoding.AppendEncode(dst, v)
		return append(dst, b64Suffix...), true
	case 't', 'f':
		if string(raw) == "true" || string(raw) == "false" {
			return append(dst, raw...), true
		}
		return dst, false
	}
	n, ok := safeInteger(raw)
	if !ok {
		return dst, false
	}
	return strconv.AppendInt(dst, n, 10), true
}

// safeInteger parses a JSON number (or a header's number) that holds an
// integer within ±2^53-1, as 1, 1.0 or 1e0 do.
func safeInteger(b []byte) (int64, bool) {
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f != math.Trunc(f) || f > maxSafeInteger || f < -maxSafeInteger {
		return 0, false
	}
	return int64(f), true
}

// needsBase64 reports whether a string value must be sent encoded.
func needsBase64(v []byte) bool {
	if len(v) == 0 {
		return false
	}
	if c := v[0]; c == ' ' || c == '\t' {
		return true
	}
	if c := v[len(v)-1]; c == ' ' || c == '\t' {
		return true
	}
	for _, c := range v {
		if c < 0x20 || c > 0x7e {
			return true
		}
	}
	return bytes.HasPrefix(v, []byte(b64Prefix)) && bytes.HasSuffix(v, []byte(b64Suffix))
}

// DecodeParamValue appends the value a Mcp-Param header carries to dst:
// the text inside =?base64?…?= decoded (standard alphabet, padded), else
// the value as is. ok is false for a wrapper whose content is not valid
// base64.
func DecodeParamValue(dst, v []byte) (out []byte, ok bool) {
	if len(v) >= len(b64Prefix)+len(b64Suffix) && bytes.HasPrefix(v, []byte(b64Prefix)) && bytes.HasSuffix(v, []byte(b64Suffix)) {
		enc := v[len(b64Prefix) : len(v)-len(b64Suffix)]
		if bytes.ContainsAny(enc, "\r\n") {
			return dst, false // the decoder would skip them
		}
		out, err := base64.StdEncoding.AppendDecode(dst, enc)
		if err != nil {
			return dst, false
		}
		return out, true
	}
	return append(dst, v...), true
}

// ParamMatches compares a decoded header value with the argument raw (its
// JSON text). primitive is false when the argument is not a string, a
// boolean or a safe integer; an integer matches any header number of the
// same value (7, 7.0).
func ParamMatches(decoded, raw []byte) (match, primitive bool) {
	raw = jsonrpc.TrimSpace(raw)
	if len(raw) == 0 {
		return false, false
	}
	switch raw[0] {
	case '"':
		var buf [256]byte
		s, err := jsonrpc.Unquote(buf[:0], raw)
		if err != nil {
			return false, false
		}
		return bytes.Equal(s, decoded), true
	case 't', 'f':
		if string(raw) != "true" && string(raw) != "false" {
			return false, false
		}
		return bytes.Equal(raw, decoded), true
	}
	n, ok := safeInteger(raw)
	if !ok {
		return false, false
	}
	h, ok := safeInteger(decoded)
	return ok && h == n, true
}

// ParamTable remembers the x-mcp-header declarations of tools by name,
// learned from tools/list results, for a binding's workers. Lookups, one
// per call, read an immutable map through an atomic pointer, taking no
// lock; Learn, once per list result, copies the map and swaps it in.
type ParamTable struct {
	mu    sync.Mutex // serializes writers
	tools atomic.Pointer[map[string][]ParamHeader]
}

// NewParamTable returns an empty table.
func NewParamTable() *ParamTable {
	t := &ParamTable{}
	m := map[string][]ParamHeader{}
	t.tools.Store(&m)
	return t
}

var xMcpHeader = []byte("x-mcp-header")

// Learn reads a tools/list result: each listed tool's declarations
// replace what the table held for it; a tool that declares none, or one
// clients must refuse, is forgotten. When the table is full a new tool
// takes the place of another one.
func (t *ParamTable) Learn(result []byte) {
	if len(*t.tools.Load()) == 0 && !bytes.Contains(result, xMcpHeader) {
		return
	}
	type change struct {
		name  string
		decls []ParamHeader // nil: forget the tool
	}
	var changes []change
	tools := jsonrpc.Lookup(result, "tools")
	for el, i, ok := jsonrpc.NextElement(tools, 0); ok; el, i, ok = jsonrpc.NextElement(tools, i) {
		nv := jsonrpc.Lookup(el, "name")
		if len(nv) < 2 || nv[0] != '"' {
			continue
		}
		name, err := jsonrpc.Unquote(nil, nv)
		if err != nil {
			continue
		}
		decls, valid := ScanParamHeaders(jsonrpc.Lookup(el, "inputSchema"))
		if !valid || len(decls) == 0 {
			decls = nil
		}
		changes = append(changes, change{string(name), decls})
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	old := *t.tools.Load()
	changed := false
	for _, c := range changes {
		if _, ok := old[c.name]; ok || c.decls != nil {
			changed = true
			break
		}
	}
	if !changed {
		return
	}
	m := make(map[string][]ParamHeader, len(old)+len(changes))
	for k, v := range old {
		m[k] = v
	}
	for _, c := range changes {
		if c.decls == nil {
			delete(m, c.name)
			continue
		}
		if _, ok := m[c.name]; !ok && len(m) >= MaxParamTools {
			for k := range m {
				delete(m, k)
				break
			}
		}
		m[c.name] = c.decls
	}
	t.tools.Store(&m)
}

// Lookup returns the declarations of the tool named name, nil when it
// declares none or was never listed. The slice is never modified.
func (t *ParamTable) Lookup(name []byte) []ParamHeader {
	return (*t.tools.Load())[string(name)]
}
