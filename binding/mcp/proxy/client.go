package proxy

import (
	"context"
	"encoding/json"
	"log/slog"
	"strconv"

	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/binding/mcp/jsonrpc"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/frame"
)

// Server-to-client requests. A route's clientRequest FLUSH (McpFlushEx
// clientRequest) goes down on the downstream stream its own stream
// relates to, with its id rewritten so that the answer finds its way
// back without a table: with several routes the id becomes the JSON
// string "<route index>:<the route's id as JSON text>"; with one route
// it is left as it is, since every answer goes to that route anyway
// (and a call handed through with engine.Worker.Forward, possible only
// then, never passes the proxy). The answer comes back as a
// clientResponse stream of its own, whose id names the route and the
// route's id again.

// appendClientID appends the id the downstream sees for a clientRequest
// of route with id u (JSON text).
func (h *Handler) appendClientID(dst []byte, route int, u []byte) []byte {
	if len(h.s.routes) == 1 {
		return append(dst, u...)
	}
	dst = append(dst, '"')
	dst = strconv.AppendInt(dst, int64(route), 10)
	dst = append(dst, ':')
	dst = jsonrpc.AppendEscaped(dst, u)
	return append(dst, '"')
}

// decodeClientID is appendClientID's inverse: the route and its id (JSON
// text, a number or a string) that a clientResponse's id p names, the id
// decoded into dst. It reports false for an id the proxy did not make:
// not a string of that form, a route it does not have, or a route id
// that is neither a JSON number nor a JSON string.
func (h *Handler) decodeClientID(dst, p []byte) (int, []byte, bool) {
	if len(h.s.routes) == 1 {
		return 0, p, validID(p)
	}
	if len(p) < 2 || p[0] != '"' || jsonrpc.StringEnd(p, 0) != len(p) {
		return 0, nil, false
	}
	s, err := jsonrpc.Unquote(dst, p)
	if err != nil {
		return 0, nil, false
	}
	i := 0
	for i < len(s) && i < 4 && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 || i == len(s) || s[i] != ':' || i > 1 && s[0] == '0' {
		return 0, nil, false
	}
	route, err := strconv.Atoi(string(s[:i]))
	if err != nil || route >= len(h.s.routes) {
		return 0, nil, false
	}
	u := s[i+1:]
	return route, u, validID(u)
}

// validID reports whether u is a JSON-RPC id as JSON text: a number or a
// string.
func validID(u []byte) bool {
	if len(u) == 0 || !(u[0] == '"' || u[0] == '-' || u[0] >= '0' && u[0] <= '9') {
		return false
	}
	return json.Valid(u)
}

// clientPartRoom is what a FLUSH's frame and McpFlushEx take besides a
// clientRequest's id, method and params, with room to spare.
const clientPartRoom = 256

// relayClientRequest sends f, a route's FLUSH, on s's Out when it is a
// clientRequest, with its id rewritten for route, and reports whether it
// was one. Its params go on in parts as they came (McpClientRequestFlushEx
// total and start); a part the longer id no longer lets fit a frame goes
// as two or more consecutive parts, the same bytes in the same order.
func (h *Handler) relayClientRequest(s *engine.Stream, f *frame.Flush, route int, sid []byte, sidNull bool) (bool, error) {
	return h.sendClientRequests(s, f.Extension(), f.Reserved(), f.TraceID(), f.Authorization(), route, sid, sidNull)
}

// relayCancelled sends f on s's Out with its params' requestId rewritten
// for route when f is a whole notifications/cancelled, and reports
// whether it was one: a route cancels a request it sent the client under
// its own id, which the downstream knows by the proxy's.
func (h *Handler) relayCancelled(s *engine.Stream, f *frame.Flush, route int) (bool, error) {
	ext := f.Extension()
	ex := &h.flushEx
	if len(h.s.routes) == 1 || !ex.TryWrap(ext, 0, len(ext)) || ex.TypeID() != h.typeID ||
		ex.Kind() != mcp.McpFlushExKindNotification {
		return false, nil
	}
	v := ex.Notification()
	if string(v.Method()) != "notifications/cancelled" || !v.HasParams() || v.Total() >= 0 {
		return false, nil
	}
	params := v.Params()
	for i := 0; ; {
		field, next, ok := jsonrpc.NextField(params, i)
		if !ok {
			return false, nil
		}
		if !jsonrpc.KeyIs(field.Key, "requestId") {
			i = next
			continue
		}
		at := next - len(field.Value)
		out := append(h.scratch[:0], params[:at]...)
		out = h.appendClientID(out, route, field.Value)
		out = append(out, params[next:]...)
		h.scratch = out
		c := h.exB.Flush.Wrap(h.extBuf, 0, len(h.extBuf)).TypeID(h.typeID).Notification().MethodBytes(v.Method()).ParamsBytes(out)
		c.Total(-1).Start(0)
		n, err := h.exB.Flush.BuildLimit()
		if err != nil {
			return true, err
		}
		ext := h.extBuf[:n]
		return true, passOn(&s.Out, f.TraceID(), f.Authorization(), func() error {
			return s.FlushWith(f.Reserved(), func(b *frame.FlushBuilder) { b.Extension(ext) })
		})
	}
}

// sendClientRequests is relayClientRequest for a FLUSH's extension ext,
// reserved bytes, trace id and authorization. A request whose id and
// method leave its params no room in a frame is answered with an error
// (refuseClientRequest), in session sid.
func (h *Handler) sendClientRequests(s *engine.Stream, ext []byte, reserved int32, trace, auth int64, route int,
	sid []byte, sidNull bool) (bool, error) {
	ex := &h.flushEx
	if !ex.TryWrap(ext, 0, len(ext)) || ex.TypeID() != h.typeID || ex.Kind() != mcp.McpFlushExKindClientRequest {
		return false, nil
	}
	v := ex.ClientRequest()
	id := h.appendClientID(h.scratch[:0], route, v.ID())
	h.scratch = id
	method, params, hasParams := v.Method(), v.Params(), v.HasParams()
	total, start := int(v.Total()), int(v.Start())
	part := h.w.MaxFrame() - clientPartRoom - len(id) - len(method)
	if !hasParams || len(params) <= part {
		return true, h.sendClientRequest(s, trace, auth, reserved, id, method, params, hasParams, total, start)
	}
	if part < 1024 {
		h.refuseClientRequest(route, sid, sidNull, ext, trace, auth, "Internal error: the request's id and method are too long to relay")
		return true, nil
	}
	return true, splitPart(len(params), part, total, start, func(at, end, total, start int) error {
		err := h.sendClientRequest(s, trace, auth, reserved, id, method, params[at:end], true, total, start)
		reserved = 0
		return err
	})
}

// refuseClientRequest answers a route's clientRequest FLUSH extension ext
// that cannot reach the downstream client with the error {-32603, why}, on a
// clientResponse stream of the proxy's own to the route, so that the
// route's upstream hears at once rather than wait out its own timeout. A
// request sent in parts is answered for its first; the others follow it.
func (h *Handler) refuseClientRequest(route int, sid []byte, sidNull bool, ext []byte, trace, auth int64, why string) {
	ex := &h.flushEx
	if !ex.TryWrap(ext, 0, len(ext)) || ex.TypeID() != h.typeID || ex.Kind() != mcp.McpFlushExKindClientRequest {
		return
	}
	v := ex.ClientRequest()
	if v.Start() > 0 {
		return
	}
	if sidNull {
		sid = nil
	}
	rt := &h.s.routes[route]
	m := h.routeMetrics(route)
	m.refused.Add(1)
	level := slog.LevelDebug
	if !m.refusedLogged {
		// An upstream may keep asking a client that has gone: the first is
		// a warning, the count tells the rest.
		m.refusedLogged, level = true, slog.LevelWarn
	}
	h.log.Log(context.Background(), level, "client request answered with an error: it cannot reach the client",
		"route", rt.label(), "session", string(sid), "method", string(v.Method()), "reason", why)
	h.answers.Error(rt.exitID, sid, v.ID(), int(jsonrpc.CodeInternalError), why, trace, auth)
}

// The errors refuseClientRequest answers with, as the server kind words
// them for a client it cannot reach.
const (
	closedSession = "Client session closed"
	endedRequest  = "The request that asked it ended"
)

// splitPart cuts a part of n params bytes, from start of total (total -1:
// the whole params), into parts of at most size bytes, and calls send for
// each in order with its bytes [at, end) of the part and its own total
// and start: a whole becomes parts of total n.
func splitPart(n, size, total, start int, send func(at, end, total, start int) error) error {
	if total < 0 {
		total, start = n, 0
	}
	for at := 0; at < n; at += size {
		if err := send(at, min(at+size, n), total, start+at); err != nil {
			return err
		}
	}
	return nil
}

// sendClientRequest sends one clientRequest FLUSH on s's Out with the
// trace id and authorization of the FLUSH it relays.
func (h *Handler) sendClientRequest(s *engine.Stream, trace, auth int64, reserved int32, id, method, params []byte,
	hasParams bool, total, start int) error {
	c := h.exB.Flush.Wrap(h.extBuf, 0, len(h.extBuf)).TypeID(h.typeID).ClientRequest().IDBytes(id).MethodBytes(method)
	if hasParams {
		c.ParamsBytes(params)
	} else {
		c.ParamsNull()
	}
	c.Total(int32(total)).Start(int32(start))
	n, err := h.exB.Flush.BuildLimit()
	if err != nil {
		return err
	}
	ext := h.extBuf[:n]
	return passOn(&s.Out, trace, auth, func() error {
		return s.FlushWith(reserved, func(b *frame.FlushBuilder) { b.Extension(ext) })
	})
}

// readClientResponse reads a clientResponse BEGIN into r: its session
// id, the downstream's id (r.ident), the route and the route's id
// (r.upIdent) that id names, the error flag and the contentLength. It
// reports false for an id the proxy did not make.
func (r *request) readClientResponse(ex *mcp.McpBeginEx) bool {
	v := ex.ClientResponse()
	r.timeout, r.contentLength = 0, v.ContentLength()
	r.sidNull, r.identNull = !v.HasSessionID(), !v.HasID()
	r.sid = append(r.sid[:0], v.SessionID()...)
	r.ident = append(r.ident[:0], v.ID()...)
	r.respError = v.Error()
	if r.identNull {
		return false
	}
	route, u, ok := r.h.decodeClientID(r.upBuf[:0], r.ident)
	if !ok {
		return false
	}
	r.upBuf = append(r.upBuf[:0], u...)
	r.route, r.upIdent = route, r.upBuf
	return true
}

// clientResponseReplyEx builds the McpBeginEx of the downstream reply of
// clientResponse r from b, the route's reply BEGIN: the route's error flag
// and contentLength, with the downstream's id.
func (h *Handler) clientResponseReplyEx(r *request, b *frame.Begin) []byte {
	errFlag, contentLength := uint8(0), int32(-1)
	ext := b.Extension()
	if h.beginEx.TryWrap(ext, 0, len(ext)) && h.beginEx.TypeID() == h.typeID &&
		h.beginEx.Kind() == mcp.McpBeginExKindClientResponse {
		v := h.beginEx.ClientResponse()
		errFlag, contentLength = v.Error(), v.ContentLength()
	}
	return h.clientResponseBeginEx(r, r.ident, errFlag, contentLength)
}

// clientResponseBeginEx builds a clientResponse McpBeginEx for r into
// extBuf: its session id, with id (the route's toward the route, the
// downstream's on the reply), error flag and contentLength.
func (h *Handler) clientResponseBeginEx(r *request, id []byte, errFlag uint8, contentLength int32) []byte {
	b := h.exB.Begin.Wrap(h.extBuf, 0, len(h.extBuf)).TypeID(h.typeID)
	mcp.SetSessionID(b.ClientResponse(), r.sid, r.sidNull).
		IDBytes(id).Error(errFlag).ContentLength(contentLength)
	n, err := b.BuildLimit()
	if err != nil {
		return nil
	}
	return h.extBuf[:n]
}

// heldRequest is a route's clientRequest FLUSH on a session's lifecycle
// that came before the downstream's lifecycle reply opened (other routes
// had not replied yet): it goes down once the reply opens.
type heldRequest struct {
	route       int
	ext         []byte
	reserved    int32
	trace, auth int64
}

// Bounds on the clientRequest FLUSHes a lifecycle holds; past them a
// FLUSH is dropped and logged.
const (
	maxHeld      = 16
	maxHeldBytes = 1 << 20
)
