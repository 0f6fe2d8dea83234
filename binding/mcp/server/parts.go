package server

import "github.com/sluicehq/sluice/binding/mcp"

// keptParts is the capacity a stream's parts buffer may keep between
// notifications; a larger one is released once its notification is out.
const keptParts = 64 << 10

// noteParts puts back together a notification whose params came in parts
// (McpNotificationFlushEx with total ≥ 0): consecutive FLUSHes on one
// stream, with the same method and total, each carrying the params bytes
// from start on. A stream holds one only after its first part.
type noteParts struct {
	method []byte
	params []byte
	total  int
	whole  []byte // the rebuilt McpFlushEx
	b      mcp.McpFlushExBuilder
}

// wholeNotification takes a FLUSH's extension on a stream whose parts
// buffer is *p. It returns the extension to act on: ext itself when it is
// not a part, the rebuilt whole notification after its last part, or nil
// while parts are missing or when they were dropped (out of order, or
// past mcp.MaxNotification: the reason is logged once per notification).
func (h *server) wholeNotification(p **noteParts, ext []byte) []byte {
	if !h.flushEx.TryWrap(ext, 0, len(ext)) || h.flushEx.TypeID() != h.mcpTypeID ||
		h.flushEx.Kind() != mcp.McpFlushExKindNotification {
		return ext
	}
	n := h.flushEx.Notification()
	total, start := int(n.Total()), int(n.Start())
	if total < 0 {
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
	case start == 0:
		q.drop()
		if total > mcp.MaxNotification {
			h.w.Logger().Warn("mcp server: notification dropped: larger than the server puts together",
				"binding", h.cfg.Name, "method", string(n.Method()), "bytes", total, "max", mcp.MaxNotification)
			return nil
		}
		q.method, q.total = append(q.method[:0], n.Method()...), total
	case q.total < 0:
		return nil // the rest of a dropped notification
	case start != len(q.params) || total != q.total || string(n.Method()) != string(q.method):
		h.w.Logger().Warn("mcp server: notification dropped: a part is missing",
			"binding", h.cfg.Name, "method", string(q.method), "have", len(q.params), "next", start)
		q.drop()
		return nil
	}
	q.params = append(q.params, n.Params()...)
	switch {
	case len(q.params) < q.total:
		return nil
	case len(q.params) > q.total:
		h.w.Logger().Warn("mcp server: notification dropped: its parts overrun its total",
			"binding", h.cfg.Name, "method", string(q.method), "bytes", len(q.params), "total", q.total)
		q.drop()
		return nil
	}
	need := len(q.method) + len(q.params) + 64
	if cap(q.whole) < need {
		q.whole = make([]byte, need)
	}
	q.whole = q.whole[:cap(q.whole)]
	q.b.Wrap(q.whole, 0, len(q.whole)).TypeID(h.mcpTypeID).Notification().
		MethodBytes(q.method).ParamsBytes(q.params)
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
