package proxy

import (
	"bytes"

	"github.com/sluicehq/sluice/binding/mcp"
)

// URL elicitation through the proxy. A route's CHALLENGE elicitCreate goes
// down with the route's toolkit prefix on the URL's state, and the FLUSH
// elicitCallback that answers it comes up with the prefix taken off again:
// the state is the one thing the callback carries back from the browser,
// so it is what names the route. Without prefixes both go as they came.

// downChallenge returns the CHALLENGE extension to send down for ext, a
// route's CHALLENGE: an elicitCreate whose URL has a state gets
// "<toolkit>__" in front of it when the proxy prefixes names; anything
// else is returned as it came.
func (h *Handler) downChallenge(ext []byte, route int) []byte {
	if !h.s.prefixed {
		return ext
	}
	c := &h.challengeEx
	if !c.TryWrap(ext, 0, len(ext)) || c.TypeID() != h.typeID || c.Kind() != mcp.McpChallengeExKindElicitCreate {
		return ext
	}
	ec := c.ElicitCreate()
	u := ec.URL()
	start, _, ok := mcp.QueryParamSpan(u, "state")
	if !ok {
		return ext
	}
	name := h.s.routes[route].name
	url := append(h.scratch[:0], u[:start]...)
	url = append(url, name...)
	url = append(url, u[start:]...)
	h.scratch = url
	buf := h.elicitBuf(len(ext) + len(name))
	b := h.exB.Challenge.Wrap(buf, 0, len(buf)).TypeID(h.typeID)
	eb := b.ElicitCreate()
	mcp.SetString(eb.IDBytes, eb.IDNull, ec.ID(), !ec.HasID())
	eb.URLBytes(url)
	mcp.SetString(eb.MessageBytes, eb.MessageNull, ec.Message(), !ec.HasMessage())
	mcp.SetString(eb.CorrelationIDBytes, eb.CorrelationIDNull, ec.CorrelationID(), !ec.HasCorrelationID())
	n, err := b.BuildLimit()
	if err != nil {
		return ext
	}
	return buf[:n]
}

// upCallback reads ext, a downstream's FLUSH. For an elicitCallback whose
// URL's state starts with a route's "<toolkit>__" (only when the proxy
// prefixes names), it returns that route and the extension with the
// prefix taken off the state; otherwise route -1 and ext as it came.
func (h *Handler) upCallback(ext []byte) (int, []byte) {
	if !h.s.prefixed {
		return -1, ext
	}
	f := &h.flushEx
	if !f.TryWrap(ext, 0, len(ext)) || f.TypeID() != h.typeID || f.Kind() != mcp.McpFlushExKindElicitCallback {
		return -1, ext
	}
	cb := f.ElicitCallback()
	u := cb.URL()
	start, end, ok := mcp.QueryParamSpan(u, "state")
	if !ok {
		return -1, ext
	}
	route := -1
	for i := range h.s.routes {
		if bytes.HasPrefix(u[start:end], h.s.routes[i].name) {
			route = i
			break
		}
	}
	if route < 0 {
		return -1, ext
	}
	url := append(h.scratch[:0], u[:start]...)
	url = append(url, u[start+len(h.s.routes[route].name):]...)
	h.scratch = url
	buf := h.elicitBuf(len(ext))
	b := h.exB.Flush.Wrap(buf, 0, len(buf)).TypeID(h.typeID)
	eb := b.ElicitCallback().URLBytes(url)
	mcp.SetString(eb.CorrelationIDBytes, eb.CorrelationIDNull, cb.CorrelationID(), !cb.HasCorrelationID())
	n, err := b.BuildLimit()
	if err != nil {
		return -1, ext
	}
	return route, buf[:n]
}

// elicitBuf returns the handler's buffer for a rewritten elicitation
// extension, at least n bytes long.
func (h *Handler) elicitBuf(n int) []byte {
	if cap(h.elicitExt) < n {
		h.elicitExt = make([]byte, n)
	}
	return h.elicitExt[:n]
}
