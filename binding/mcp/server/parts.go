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
// message). dropped is the id of a client request dropped so, which the
// caller answers: its application waits for an answer otherwise.
func (h *server) wholeNotification(p **noteParts, ext []byte) (whole, dropped []byte) {
	if !h.flushEx.TryWrap(ext, 0, len(ext)) || h.flushEx.TypeID() != h.mcpTypeID {
		return ext, nil
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
		return ext, nil
	}
	if v.total < 0 {
		if *p != nil {
			(*p).drop()
		}
		return ext, nil
	}
	if *p == nil {
		*p = &noteParts{total: -1}
	}
	q := *p
	switch {
	case v.start == 0:
		if q.total >= 0 {
			// The one before is cut short by this one's start.
			h.w.Logger().Warn("mcp server: notification dropped: a part is missing",
				"binding", h.cfg.Name, "method", string(q.method), "have", len(q.params), "next", v.start)
			if id := requestID(q.kind, q.id); id != nil {
				dropped = append(h.partsDropped[:0], id...)
				h.partsDropped = dropped
			}
		}
		q.drop()
		if v.total > mcp.MaxNotification {
			h.w.Logger().Warn("mcp server: notification dropped: larger than the server puts together",
				"binding", h.cfg.Name, "method", string(v.method), "bytes", v.total, "max", mcp.MaxNotification)
			if dropped == nil {
				dropped = requestID(kind, v.id)
			}
			return nil, dropped
		}
		q.kind, q.total = kind, v.total
		q.method = append(q.method[:0], v.method...)
		q.id = append(q.id[:0], v.id...)
	case q.total < 0:
		return nil, nil // the rest of a dropped notification
	case v.start != len(q.params) || v.total != q.total || kind != q.kind ||
		string(v.method) != string(q.method) || string(v.id) != string(q.id):
		h.w.Logger().Warn("mcp server: notification dropped: a part is missing",
			"binding", h.cfg.Name, "method", string(q.method), "have", len(q.params), "next", v.start)
		q.drop()
		return nil, requestID(q.kind, q.id)
	}
	q.params = append(q.params, v.params...)
	switch {
	case len(q.params) < q.total:
		return nil, dropped
	case len(q.params) > q.total:
		h.w.Logger().Warn("mcp server: notification dropped: its parts overrun its total",
			"binding", h.cfg.Name, "method", string(q.method), "bytes", len(q.params), "total", q.total)
		q.drop()
		return nil, requestID(q.kind, q.id)
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
		return nil, requestID(q.kind, q.id)
	}
	return q.whole[:limit], dropped
}

// answerDropped answers the application's client request id, in session
// s (nil: none), whose parts were dropped: it would wait for the client's
// answer otherwise.
func (h *server) answerDropped(s *session, id []byte, trace, auth int64) {
	var sid []byte
	if s != nil {
		sid = s.appID
	}
	h.answerUpstream(sid, id, codeInternalError, "Internal error: the request to the client could not be put together", trace, auth)
}

// requestID returns id when kind is a client request's, else nil.
func requestID(kind uint8, id []byte) []byte {
	if kind != mcp.McpFlushExKindClientRequest || len(id) == 0 {
		return nil
	}
	return id
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
