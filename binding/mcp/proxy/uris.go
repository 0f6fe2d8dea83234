package proxy

import (
	"math"

	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/binding/mcp/jsonrpc"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/frame"
)

// resultURIs returns, for a request kind, the paths of the resource uris
// a client may read back in its result: the "uri" of a content block (a
// resource_link) and of an embedded resource, in a tool's
// result.content[] and a prompt's result.messages[].content (one block,
// or an array of them), and of each of a read's result.contents[]. The
// proxy puts the route's prefix there, so that a resources/read of the
// uri comes back to the route that made it, as a listed resource's does.
// Anything else (structuredContent, _meta, text that looks like a uri) is
// left as it is.
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
	}
	promptURIs = []jsonrpc.Path{
		{"messages", jsonrpc.Elem, "content", "uri"},
		{"messages", jsonrpc.Elem, "content", "resource", "uri"},
		{"messages", jsonrpc.Elem, "content", jsonrpc.Elem, "uri"},
		{"messages", jsonrpc.Elem, "content", jsonrpc.Elem, "resource", "uri"},
	}
	readURIs = []jsonrpc.Path{{"contents", jsonrpc.Elem, "uri"}}
)

// rewriteData relays a DATA of a rewritten reply: as it came when it
// holds no uri and nothing waits before it, else its bytes, prefixes put
// in, join held and go as the downstream's credit allows.
func (l *leg) rewriteData(d *frame.Data) {
	r := l.r
	p := d.Payload()
	r.at = r.uris.Scan(p, r.at[:0])
	if len(r.at) == 0 && len(r.held) == 0 && int64(d.Reserved()) <= r.Out.Available() {
		if relayData(&r.Stream, d) != nil {
			r.fail()
			return
		}
		r.dataOut = true
		return
	}
	prefix := r.h.s.routes[l.route].uri
	last := 0
	for _, at := range r.at {
		r.held = append(append(r.held, p[last:at]...), prefix...)
		last = at
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

// sendHeld sends what the downstream's credit allows of the reply bytes
// held, each DATA a whole message as the kinds send theirs, and then the
// route's END if it waits behind them.
func (r *request) sendHeld() {
	sent := 0
	for sent < len(r.held) && !r.Out.Closed() {
		n := int(min(int64(len(r.held)-sent), r.Out.Available()-int64(r.Out.Pad), int64(r.h.maxPayload)))
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
