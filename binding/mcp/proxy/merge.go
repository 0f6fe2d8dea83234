package proxy

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"strconv"

	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/binding/mcp/jsonrpc"
)

// listKind describes one list request kind: the result member that holds
// the items, the item member that names one, and how it is prefixed.
type listKind struct {
	kind    uint8  // McpBeginEx kind
	key     string // "tools"
	nameKey string // "name"
	uri     bool   // prefixed <toolkit>+ rather than <toolkit>__
}

var listKinds = [...]listKind{
	{mcp.McpBeginExKindToolsList, "tools", "name", false},
	{mcp.McpBeginExKindPromptsList, "prompts", "name", false},
	{mcp.McpBeginExKindResourcesList, "resources", "uri", true},
	{mcp.McpBeginExKindResourcesTemplatesList, "resourceTemplates", "uriTemplate", true},
}

func listKindOf(kind uint8) *listKind {
	for i := range listKinds {
		if listKinds[i].kind == kind {
			return &listKinds[i]
		}
	}
	return nil
}

// globs returns the route's allow-set for the list's items.
func (k *listKind) globs(r *route) []string {
	switch k.kind {
	case mcp.McpBeginExKindToolsList:
		return r.tools
	case mcp.McpBeginExKindPromptsList:
		return r.prompts
	}
	return r.resources
}

func (k *listKind) prefix(r *route) []byte {
	if k.uri {
		return r.uri
	}
	return r.name
}

// part is one route's bare list result, in the merge.
type part struct {
	route int
	body  []byte
	// fields holds the spans of the members the merge reads, indexed by
	// the constants below, found in one walk of body by field's first
	// call rather than a walk of the whole list per member.
	fields  [partFields]span
	scanned bool
	twice   bool // the result names one of the members read twice
}

// The members of a list result the merge reads, as indices into
// part.fields.
const (
	partList       = iota // the list itself: "tools", "prompts", …
	partNextCursor        // "nextCursor"
	partTTL               // "ttlMs" (2026-07-28)
	partCacheScope        // "cacheScope" (2026-07-28)
	partFields
)

// field returns the span of member f of the part's result, walking the
// result once, on the first call, for all of them. listKey names the list
// member (partList).
func (p *part) field(listKey string, f int) span {
	if !p.scanned {
		p.twice = members(p.body, []string{partList: listKey, partNextCursor: "nextCursor", partTTL: "ttlMs", partCacheScope: "cacheScope"}, p.fields[:])
		p.scanned = true
	}
	return p.fields[f]
}

// cursorEntry is one route still to page, and its own cursor: the
// contents of the string the route gave as nextCursor, as written.
type cursorEntry struct {
	route  int
	cursor []byte
}

// errInvalidCursor reports a cursor the proxy did not issue, or issued
// for another list or configuration.
var errInvalidCursor = errors.New("invalid cursor")

const cursorVersion = 1

// cursorEncoding spells the proxy's cursors (fan-out and cache pages):
// base64url without padding, decoded strictly, so that a text whose last
// character has unused bits set is refused rather than read as the
// cursor it differs from. Each cursor has one spelling.
var cursorEncoding = base64.RawURLEncoding.Strict()

// appendCursor appends the base64url text of a proxy cursor: a version, the
// list kind, the routes' fingerprint, then each route's index and cursor.
func appendCursor(dst, scratch []byte, kind uint8, fingerprint uint32, entries []cursorEntry) ([]byte, []byte) {
	raw := append(scratch[:0], cursorVersion, kind)
	raw = binary.LittleEndian.AppendUint32(raw, fingerprint)
	for _, e := range entries {
		raw = binary.AppendUvarint(raw, uint64(e.route))
		raw = binary.AppendUvarint(raw, uint64(len(e.cursor)))
		raw = append(raw, e.cursor...)
	}
	return cursorEncoding.AppendEncode(dst, raw), raw
}

// decodeCursor reads a proxy cursor into entries (whose cursors point
// into scratch, returned grown): the routes to query, in ascending order.
func decodeCursor(text, scratch []byte, kind uint8, fingerprint uint32, routes int, entries []cursorEntry) ([]cursorEntry, []byte, error) {
	raw, err := cursorEncoding.AppendDecode(scratch[:0], text)
	if err != nil || len(raw) < 6 || raw[0] != cursorVersion || raw[1] != kind ||
		binary.LittleEndian.Uint32(raw[2:]) != fingerprint {
		return entries, raw, errInvalidCursor
	}
	rest := raw[6:]
	last := -1
	for len(rest) > 0 {
		idx, n := binary.Uvarint(rest)
		if n <= 0 || idx >= uint64(routes) || int(idx) <= last {
			return entries, raw, errInvalidCursor
		}
		rest = rest[n:]
		l, n := binary.Uvarint(rest)
		if n <= 0 || l > uint64(len(rest)-n) {
			return entries, raw, errInvalidCursor
		}
		rest = rest[n:]
		entries = append(entries, cursorEntry{route: int(idx), cursor: rest[:l:l]})
		rest = rest[l:]
		last = int(idx)
	}
	if len(entries) == 0 {
		return entries, raw, errInvalidCursor
	}
	return entries, raw, nil
}

// jsonOptions are the rules a route's result must keep: RFC 8259 JSON,
// its strings UTF-8, nested no deeper than the mcp server takes.
var jsonOptions = jsonrpc.Options{MaxDepth: 128, StrictUTF8: true}

// validate reports whether body is one JSON object.
func validate(body []byte) bool {
	i := jsonrpc.SkipSpace(body, 0)
	return i < len(body) && body[i] == '{' && jsonrpc.Valid(body, jsonOptions)
}

// appendMerged appends the merged list of parts (in route order): the
// items of each that its route allows, with the route's prefix injected
// into their names when prefixed, and each part's nextCursor noted in
// next. Items are copied byte for byte but for the prefix; an item that
// names a member twice is left out, as one without a name is, and so is
// one whose name (as merged) an earlier item has, counted in shadowed:
// the first is the one a call reaches. A part that is not a list result,
// or names a member the merge reads twice, is skipped and reported in
// bad.
//
// A tools list goes through view when it is not nil: each tool given in
// full, deferred or left out by the eager policy, and the search tools
// added to the last page.
func appendMerged(dst []byte, k *listKind, routes []route, prefixed bool, parts []part, next []cursorEntry, view *toolsView) ([]byte, []cursorEntry, []int, int) {
	var bad []int
	shadowed, seen := 0, nameSet{}
	itemKeys := [2]string{k.nameKey, "_meta"}
	var fields [2]span
	dst = append(dst, '{', '"')
	dst = append(dst, k.key...)
	dst = append(dst, '"', ':', '[')
	first := true
	for pi := range parts {
		p := &parts[pi]
		r := &routes[p.route]
		list := p.field(k.key, partList)
		as, ae, ok := list.start, list.end, list.ok
		if !ok || p.twice || p.body[as] != '[' {
			bad = append(bad, p.route)
			continue
		}
		arr := p.body[as:ae]
		globs, prefix := k.globs(r), k.prefix(r)
		for item, i, ok := jsonrpc.NextElement(arr, 0); ok; item, i, ok = jsonrpc.NextElement(arr, i) {
			if membersOnce(item, itemKeys[:], fields[:]) {
				continue // which of the two a client reads is its own
			}
			ns, ne, ok := fields[0].start, fields[0].end, fields[0].ok
			if !ok || item[ns] != '"' {
				continue // an item without a name cannot be called
			}
			meta := fields[1]
			name, err := jsonrpc.Unquote(nil, item[ns:ne])
			if err != nil || !mcp.GlobsAllow(globs, unsafeString(name)) {
				continue
			}
			key := string(name)
			switch {
			case prefixed && k.uri:
				key = string(r.appendURI(nil, name))
			case prefixed:
				key = string(prefix) + key
			}
			if !seen.add(key) {
				shadowed++
				continue
			}
			d := itemFull
			if view != nil {
				d = view.disposition(key)
			}
			if d == itemOut {
				continue
			}
			if !first {
				dst = append(dst, ',')
			}
			first = false
			start := len(dst)
			switch {
			case !prefixed:
				dst = append(dst, item...)
			case k.kind == mcp.McpBeginExKindToolsList:
				dst = appendPrefixedTool(dst, item, ns, meta, r)
			case k.uri:
				// The uri as the merge read it, the prefix where that
				// reading puts it, escapes and all.
				dst = append(dst, item[:ns]...)
				dst = jsonrpc.AppendString(dst, key)
				dst = append(dst, item[ne:]...)
			default:
				dst = append(dst, item[:ns+1]...)
				dst = append(dst, prefix...)
				dst = append(dst, item[ns+1:]...)
			}
			if d == itemDeferred {
				dst = appendDeferred(dst, start)
			}
		}
		if c := p.field(k.key, partNextCursor); c.ok && p.body[c.start] == '"' && c.end-c.start > 2 {
			cs, ce := c.start, c.end
			next = append(next, cursorEntry{route: p.route, cursor: p.body[cs+1 : ce-1]})
		}
	}
	if view != nil && len(next) == 0 {
		dst = view.appendMeta(dst, first)
	}
	dst = append(dst, ']')
	return dst, next, bad, shadowed
}

// appendPrefixedTool appends a tool of the route's list, its name (at
// ns) prefixed and so is the uri of the MCP Apps view its _meta (meta)
// names (metaViewURIs), which a host reads back through the gateway: the
// uri is read, escapes and all, and written again with the prefix.
func appendPrefixedTool(dst, item []byte, ns int, meta span, r *route) []byte {
	var buf [4]int
	at := buf[:0]
	if meta.ok && item[meta.start] == '{' {
		var s jsonrpc.PathScanner
		s.Reset(metaViewURIs)
		at = s.Scan(item[meta.start:meta.end], at)
		for i := range at {
			at[i] += meta.start - 1 // at the opening quote
		}
	}
	last, named := 0, false
	for i := 0; i <= len(at); i++ {
		if !named && (i == len(at) || at[i] > ns) {
			dst = append(dst, item[last:ns+1]...)
			dst = append(dst, r.name...)
			last, named = ns+1, true
		}
		if i == len(at) {
			break
		}
		a := at[i]
		end := jsonrpc.StringEnd(item, a)
		uri, err := jsonrpc.Unquote(nil, item[a:max(end, a)])
		if end < 0 || err != nil {
			continue // not JSON: the list was, so never
		}
		dst = append(dst, item[last:a]...)
		dst = jsonrpc.AppendString(dst, r.appendURI(nil, uri))
		last = end
	}
	return append(dst, item[last:]...)
}

// nameSet holds the names of a list's items so far, so that a list names
// each item once.
type nameSet map[string]struct{}

// add adds name and reports whether it was new.
func (s nameSet) add(name string) bool {
	if _, dup := s[name]; dup {
		return false
	}
	s[name] = struct{}{}
	return true
}

// appendCacheHints appends the merged caching hints of 2026-07-28 list
// results (SEP-2549), each preceded by a comma: "ttlMs", the smallest any
// route gave, and "cacheScope", "private" when any route said so, else
// "public". A hint no route gave is left out: the server kind adds its
// default. The smallest ttlMs is the one a client can trust for the whole
// list, and one private part makes the whole list private.
func appendCacheHints(dst []byte, k *listKind, parts []part) []byte {
	var ttl []byte
	var minTTL float64
	scope := 0 // 0 none, 1 public, 2 private
	for i := range parts {
		p := &parts[i]
		if t := p.field(k.key, partTTL); t.ok {
			ts, te := t.start, t.end
			if v, err := strconv.ParseFloat(string(p.body[ts:te]), 64); err == nil && v >= 0 && (ttl == nil || v < minTTL) {
				ttl, minTTL = p.body[ts:te], v
			}
		}
		if sc := p.field(k.key, partCacheScope); sc.ok {
			switch string(p.body[sc.start:sc.end]) {
			case `"private"`:
				scope = 2
			case `"public"`:
				scope = max(scope, 1)
			}
		}
	}
	if ttl != nil {
		dst = append(dst, `,"ttlMs":`...)
		dst = append(dst, ttl...)
	}
	switch scope {
	case 1:
		dst = append(dst, `,"cacheScope":"public"`...)
	case 2:
		dst = append(dst, `,"cacheScope":"private"`...)
	}
	return dst
}

// span is where a member's value is in an object's text; ok is false when
// the object has no such member.
type span struct {
	start, end int
	ok         bool
}

// member finds the member of the object obj named key and returns its
// value's span. ok is false when obj has no such member, and when it
// names key twice: readers disagree on which of the two counts (the
// first, or the last as encoding/json), so neither is read.
func member(obj []byte, key string) (start, end int, ok bool) {
	var sp [1]span
	members(obj, []string{key}, sp[:])
	return sp[0].start, sp[0].end, sp[0].ok
}

// members finds each of keys among the members of the object obj in one
// walk, setting spans[i] to the value of the member named keys[i], and
// reports whether obj names any of them twice; a key named twice has its
// span unset, as member leaves it. len(spans) must be len(keys), at most
// 64.
func members(obj []byte, keys []string, spans []span) (twice bool) {
	return walkMembers(obj, keys, spans, false)
}

// membersOnce is members that reports whether obj names any member
// twice, one of keys or not.
func membersOnce(obj []byte, keys []string, spans []span) (twice bool) {
	return walkMembers(obj, keys, spans, true)
}

// walkMembers is members, and membersOnce when all is set. It decodes
// each key once (jsonrpc.KeyName) for the keys and the names seen.
func walkMembers(obj []byte, keys []string, spans []span, all bool) (twice bool) {
	clear(spans)
	var doubled uint64
	var names jsonrpc.Names
	for f, i, ok := jsonrpc.NextField(obj, 0); ok; f, i, ok = jsonrpc.NextField(obj, i) {
		name, ok := jsonrpc.KeyName(f.Key)
		if !ok {
			twice = twice || all
			continue
		}
		if all && !twice {
			twice = names.Add(name)
		}
		for k, key := range keys {
			if string(name) != key {
				continue
			}
			if spans[k].ok || doubled&(1<<k) != 0 {
				doubled |= 1 << k
				spans[k] = span{}
				continue
			}
			spans[k] = span{i - len(f.Value), i, true}
		}
	}
	return twice || doubled != 0
}
