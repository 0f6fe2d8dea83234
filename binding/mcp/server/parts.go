package server

import "github.com/sluicehq/sluice/binding/mcp"

// keptParts is the capacity a stream's parts buffer may keep between
// notifications; a larger one is released once its notification is out.
const keptParts = 64 << 10

// noteParts puts back together a notification or a client request whose
// params came in parts (McpNotificationFlushEx or McpClientRequestFlushEx
// with total ≥ 0): consecutive FLUSHes on one stream, of the same kind,
// with the same method (and id) and total, each carrying the params bytes
// from start on. A stream holds one only after its first part.
type noteParts struct {
	kind   uint8
	id     []byte // a client request's
	method []byte
	params []byte
	total  int
	whole  []byte // the rebuilt McpFlushEx
	b      mcp.McpFlushExBuilder
}

// partView is what a part carries, of either kind.
type partView struct {
	id, method, params []byte
	total, start       int
}

// wholeNotification takes a FLUSH's extension on a stream whose parts
// buffer is *p. It returns the extension to act on: ext itself when it is
// not a part, the rebuilt whole notification or client request after its
// last part, or nil while parts are missing or when they were dropped (out
// of order, or past mcp.MaxNotification: the reason is logged once per
// message).
func (h *server) wholeNotification(p **noteParts, ext []byte) []byte {
	if !h.flushEx.TryWrap(ext, 0, len(ext)) || h.flushEx.TypeID() != h.mcpTypeID {
		return ext
	}
	kind := h.flushEx.Kind()
	var v partView
	switch kind {
	case mcp.McpFlushExKindNotification:
		n := h.flushEx.Notification()
		v = partView{method: n.Method(), params: n.Params(), total: int(n.Total()), start: int(n.Start())}
	case mcp.McpFlushExKindClientRequest:
		c := h.flushEx.ClientRequest()
		v = partView{id: c.ID(), method: c.Method(), params: c.Params(), total: int(c.Total()), start: int(c.Start())}
	default:
		return ext
	}
	if v.total < 0 {
		if *p != nil {
			(*p).drop()
		}
		return ext
	}
	if *p == nil {
		*p = &noteParts{total: -1}
	}
	q := *p
	switch {
	case v.start == 0:
		q.drop()
		if v.total > mcp.MaxNotification {
			h.w.Logger().Warn("mcp server: notification dropped: larger than the server puts together",
				"binding", h.cfg.Name, "method", string(v.method), "bytes", v.total, "max", mcp.MaxNotification)
			return nil
		}
		q.kind, q.total = kind, v.total
		q.method = append(q.method[:0], v.method...)
		q.id = append(q.id[:0], v.id...)
	case q.total < 0:
		return nil // the rest of a dropped notification
	case v.start != len(q.params) || v.total != q.total || kind != q.kind ||
		string(v.method) != string(q.method) || string(v.id) != string(q.id):
		h.w.Logger().Warn("mcp server: notification dropped: a part is missing",
			"binding", h.cfg.Name, "method", string(q.method), "have", len(q.params), "next", v.start)
		q.drop()
		return nil
	}
	q.params = append(q.params, v.params...)
	switch {
	case len(q.params) < q.total:
		return nil
	case len(q.params) > q.total:
		h.w.Logger().Warn("mcp server: notification dropped: its parts overrun its total",
			"binding", h.cfg.Name, "method", string(q.method), "bytes", len(q.params), "total", q.total)
		q.drop()
		return nil
	}
	need := len(q.id) + len(q.method) + len(q.params) + 64
	if cap(q.whole) < need {
		q.whole = make([]byte, need)
	}
	q.whole = q.whole[:cap(q.whole)]
	eb := q.b.Wrap(q.whole, 0, len(q.whole)).TypeID(h.mcpTypeID)
	if q.kind == mcp.McpFlushExKindClientRequest {
		eb.ClientRequest().IDBytes(q.id).MethodBytes(q.method).ParamsBytes(q.params)
	} else {
		eb.Notification().MethodBytes(q.method).ParamsBytes(q.params)
	}
	limit, err := q.b.BuildLimit()
	q.total, q.params = -1, q.params[:0]
	if err != nil {
		return nil
	}
	return q.whole[:limit]
}

// drop forgets a notification being put together.
func (q *noteParts) drop() {
	q.total, q.params = -1, q.params[:0]
}

// trim releases buffers a large notification left behind; called once
// the rebuilt extension has been used.
func (q *noteParts) trim() {
	if q == nil {
		return
	}
	if cap(q.params) > keptParts {
		q.params = nil
	}
	if cap(q.whole) > keptParts {
		q.whole = nil
	}
}
