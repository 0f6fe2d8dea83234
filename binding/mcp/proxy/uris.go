package proxy

import (
	"bytes"
	"math"
	"slices"

	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/binding/mcp/jsonrpc"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/frame"
)

// resultURIs returns, for a request kind, the paths of the resource uris
// a client may read back in its result: the "uri" of a content block (a
// resource_link) and of an embedded resource, in a tool's
// result.content[] and a prompt's result.messages[].content (one block,
// or an array of them), of the MCP Apps view a tool's result._meta names
// (as metaViewURIs), and of each of a read's result.contents[]. The proxy
// puts the route's prefix there, so that a resources/read of the uri
// comes back to the route that made it, as a listed resource's does.
// Anything else (structuredContent, other _meta, text that looks like a
// uri) is left as it is.
func resultURIs(kind uint8) []jsonrpc.Path {
	switch kind {
	case mcp.McpBeginExKindToolsCall:
		return toolURIs
	case mcp.McpBeginExKindPromptsGet:
		return promptURIs
	case mcp.McpBeginExKindResourcesRead:
		return readURIs
	}
	return nil
}

var (
	toolURIs = []jsonrpc.Path{
		{"content", jsonrpc.Elem, "uri"},
		{"content", jsonrpc.Elem, "resource", "uri"},
		{"_meta", "ui", "resourceUri"},
		{"_meta", "ui/resourceUri"},
		{"_meta", "openai/outputTemplate"},
	}
	// metaViewURIs are where a tool's _meta names its MCP Apps view in
	// tools/list, as a tools/call result's does (toolURIs):
	// ui.resourceUri, the flat key ext-apps still writes beside it, and
	// the OpenAI Apps SDK's openai/outputTemplate, a ui:// uri as well.
	metaViewURIs = []jsonrpc.Path{{"ui", "resourceUri"}, {"ui/resourceUri"}, {"openai/outputTemplate"}}
	promptURIs   = []jsonrpc.Path{
		{"messages", jsonrpc.Elem, "content", "uri"},
		{"messages", jsonrpc.Elem, "content", "resource", "uri"},
		{"messages", jsonrpc.Elem, "content", jsonrpc.Elem, "uri"},
		{"messages", jsonrpc.Elem, "content", jsonrpc.Elem, "resource", "uri"},
	}
	readURIs = []jsonrpc.Path{{"contents", jsonrpc.Elem, "uri"}}
)

// uiScheme begins the uri of an MCP Apps view (SEP-1865). A host renders
// a view only when its uri begins so, so a route's prefix goes after it,
// into the authority (ui://<toolkit>+<rest>), where any other uri gets it
// in front (<toolkit>+<uri>); agentgateway federates ui:// the same way.
const uiScheme = "ui://"

// uiEscaped is uiScheme as a JSON encoder that escapes slashes writes it.
const uiEscaped = `ui:\/\/`

// uriCut returns where a route's prefix goes in uri: past uiScheme when
// it begins so, else at its start.
func uriCut(uri []byte) int {
	if bytes.HasPrefix(uri, []byte(uiScheme)) {
		return len(uiScheme)
	}
	return 0
}

// appendURI appends the gateway's uri for the route's uri.
func (rt *route) appendURI(dst, uri []byte) []byte {
	at := uriCut(uri)
	dst = append(dst, uri[:at]...)
	dst = append(dst, rt.uri...)
	return append(dst, uri[at:]...)
}

// carries reports whether name carries the route's prefix, where and how
// long: <toolkit>__ at the start of a tool's or prompt's name; for a uri,
// <toolkit>+ past uiScheme (ui://<toolkit>+<rest>) or at the start
// (<toolkit>+ui://<rest> reaches the route as well).
func (rt *route) carries(uri bool, name []byte) (at, n int, ok bool) {
	if !uri {
		return 0, len(rt.name), bytes.HasPrefix(name, rt.name)
	}
	at = uriCut(name)
	return at, len(rt.uri), bytes.HasPrefix(name[at:], rt.uri)
}

// rawURICut is uriCut on the text of a JSON string, raw from its first
// byte: uiScheme may be written with escaped slashes. decided is false
// when raw ends before it can tell, raw being a strict beginning of one
// of the two spellings; any other escape in the scheme reads as another
// scheme, which still routes back (<toolkit>+ui://…).
func rawURICut(raw []byte) (at int, decided bool) {
	for _, s := range [...]string{uiScheme, uiEscaped} {
		if bytes.HasPrefix(raw, []byte(s)) {
			return len(s), true
		}
		if len(raw) < len(s) && bytes.HasPrefix([]byte(s), raw) {
			return 0, false
		}
	}
	return 0, true
}

// rewriteData relays a DATA of a rewritten reply: as it came when it
// holds no uri and nothing waits before it, else its bytes, prefixes put
// in, join held and go as the downstream's credit allows. A uri whose
// text the DATA cuts before its scheme is known (uriOpen) waits unsent,
// from r.uriAt in held, for the next DATA to tell where its prefix goes.
func (l *leg) rewriteData(d *frame.Data) {
	r := l.r
	p := d.Payload()
	r.at = r.uris.Scan(p, r.at[:0])
	if len(r.at) == 0 && len(r.held) == 0 && r.state&uriOpen == 0 && int64(d.Reserved()) <= r.Out.Available() {
		if relayData(&r.Stream, d) != nil {
			r.fail()
			return
		}
		r.dataOut = true
		return
	}
	prefix := r.h.s.routes[l.route].uri
	last := 0
	if r.state&uriOpen != 0 {
		var text [len(uiEscaped)]byte
		n := copy(text[:], r.held[r.uriAt:])
		tail := n
		n += copy(text[n:], p)
		cut, decided := rawURICut(text[:n])
		switch {
		case !decided:
			// All of p is still the scheme's beginning.
			r.held = append(r.held, p...)
			r.sendHeld()
			return
		case cut == 0:
			r.held = slices.Insert(r.held, r.uriAt, prefix...)
		default:
			last = cut - tail
			r.held = append(append(r.held, p[:last]...), prefix...)
		}
		r.state &^= uriOpen
	}
	for _, at := range r.at {
		cut, decided := rawURICut(p[at:])
		if !decided {
			r.held = append(r.held, p[last:at]...)
			r.uriAt = len(r.held)
			r.state |= uriOpen
			last = at
			break
		}
		r.held = append(append(r.held, p[last:at+cut]...), prefix...)
		last = at + cut
	}
	r.held = append(r.held, p[last:]...)
	if len(r.held) > maxList {
		// The route sends past the credit it was offered, or its prefixes
		// outgrow any window: the reply cannot go on whole.
		l.resetReply()
		l.abortInitial()
		r.abortReply()
		return
	}
	r.sendHeld()
}

// closeURI puts the prefix in front of the uri that waits open when the
// reply ends inside it: a reply that ends there is not JSON, and the
// client reads it as it likes, but it reads no uri of the route's that
// lacks the prefix.
func (l *leg) closeURI() {
	r := l.r
	if r.state&uriOpen == 0 {
		return
	}
	r.held = slices.Insert(r.held, r.uriAt, r.h.s.routes[l.route].uri...)
	r.state &^= uriOpen
	r.sendHeld()
}

// sendHeld sends what the downstream's credit allows of the reply bytes
// held, each DATA a whole message as the kinds send theirs, and then the
// route's END if it waits behind them.
func (r *request) sendHeld() {
	sent, ready := 0, len(r.held)
	if r.state&uriOpen != 0 {
		ready = r.uriAt
	}
	for sent < ready && !r.Out.Closed() {
		n := int(min(int64(ready-sent), r.Out.Available()-int64(r.Out.Pad), int64(r.h.maxPayload)))
		if n <= 0 {
			break
		}
		if r.Data(frame.FlagsDataMessage, r.held[sent:sent+n], nil) != nil {
			r.fail()
			return
		}
		sent += n
		r.dataOut = true
	}
	r.held = r.held[:copy(r.held, r.held[sent:])]
	r.uriAt -= sent
	if len(r.held) > 0 || r.state&endHeld == 0 || r.Out.Closed() {
		return
	}
	r.state &^= endHeld
	if passOn(&r.Out, r.endTrace, r.endAuth, func() error { return r.End(r.endExt) }) != nil {
		r.fail()
	}
}

// offerRewritten offers the route the downstream's credit less what the
// proxy holds for it, never taking back credit it offered before, with
// the downstream's padding and budget. It keeps nothing back for the
// prefixes to come: a downstream that offers room for a whole message
// (the mcp server kind holding a reply to learn its length) offers more
// only once that room is used, so the route must be able to fill it.
func (l *leg) offerRewritten(src *engine.Stream, w *frame.Window) error {
	room := src.Out.Available() - int64(len(l.r.held))
	room = min(max(room, 0), math.MaxInt32)
	l.In.Max = l.In.Keep(l.In.Seq, int32(room))
	l.In.Ack = l.In.Seq
	l.In.Pad, l.In.Budget = src.Out.Pad, src.Out.Budget
	l.In.Min, l.In.Cap = src.Out.Min, src.Out.Cap
	return passOn(&l.In, w.TraceID(), w.Authorization(), l.Window)
}
