package server

import (
	"bytes"
	"context"
	"log/slog"
	"strconv"
	"time"

	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/binding/mcp/jsonrpc"
	"github.com/sluicehq/sluice/engine/telemetry"
	"github.com/sluicehq/sluice/internal/freelist"
)

// Requests the upstream server sends its client (elicitation/create,
// sampling/createMessage, roots/list, ping), doc.go's "Server-to-client
// requests". They arrive as FLUSH McpFlushEx.clientRequest on the reply
// of the request stream they relate to, or on the session's lifecycle
// reply. The server gives each its own id S ("s2c-<n>", per session),
// remembers the id P the application used, and sends the client the
// request on that request's response (turned into an event stream) or on
// the session's GET stream. The client's answer, a POSTed JSON-RPC
// response naming S, goes back to the application as a stream of its
// own: BEGIN McpBeginEx.clientResponse{sessionId, id P, error, length},
// DATA the result (or error) object, END.
//
// Nothing of this is made before a session's first such request: a
// session without any keeps a nil table, and a request stream pays one
// bit test when it ends.

// clientKind is what a client request needs of the client's capabilities.
type clientKind uint8

const (
	clientPing clientKind = iota
	clientElicitation
	clientSampling
	clientRoots
	// clientElicitationURL is a URL-mode elicitation the application
	// asked for with a CHALLENGE (elicit.go): its answer goes back as
	// FLUSH elicitResponse, and its metrics are the elicitation family's
	// with mode="url".
	clientElicitationURL
)

// families names the metric families of the kinds that have one.
var families = [...]string{clientElicitation: "elicitation", clientSampling: "sampling", clientRoots: "roots", clientElicitationURL: "elicitation"}

// lookupClientKind finds the kind of a method the upstream may send its
// client; any other method is refused.
func lookupClientKind(method []byte) (clientKind, bool) {
	switch string(method) {
	case "ping":
		return clientPing, true
	case "elicitation/create":
		return clientElicitation, true
	case "sampling/createMessage":
		return clientSampling, true
	case "roots/list":
		return clientRoots, true
	}
	return 0, false
}

// maxClientRequests bounds a session's outstanding client requests; past
// it the upstream's request is answered -32603 at once.
const maxClientRequests = 64

// JSON-RPC codes of the answers the server makes for the client.
const (
	codeRequestTimeout   = -32001 // the client did not answer in time
	codeRequestCancelled = -32800 // the client cancelled it
)

// noStreamMessage is the error of a client request with no stream open
// to the client to carry it.
const noStreamMessage = "Internal error: no stream open to the client"

// earlyWait is how long a session that has not opened its GET stream yet
// holds the lifecycle's requests to the client for it. An upstream may
// ask as soon as its own session starts (roots/list on initialized),
// which through a gateway is before the client has its initialize
// answer, let alone its GET stream open.
const earlyWait = 10 * time.Second

// clientRequests is a session's outstanding client requests.
type clientRequests struct {
	next    uint64 // the last n handed out
	pending []*clientRequest
	free    []*clientRequest
	// cancelled holds the n of the last requests the server cancelled
	// (notifications/cancelled sent), whose answer may still be on its
	// way: the client's handler may have answered before it read the
	// cancellation. Such an answer is ignored, as MCP asks of the side that
	// cancelled, rather than refused.
	cancelled [maxCancelled]uint64
	ci        int
}

// maxCancelled bounds the cancelled requests a session remembers.
const maxCancelled = 16

// cancel forgets r as remove does, remembering it as cancelled.
func (t *clientRequests) cancel(r *clientRequest) {
	t.cancelled[t.ci] = r.n
	t.ci = (t.ci + 1) % maxCancelled
	t.remove(r)
}

// wasCancelled reports whether id names a request the server cancelled
// lately, and forgets it: one late answer is taken.
func (t *clientRequests) wasCancelled(id []byte) bool {
	n, ok := parseClientID(id)
	if t == nil || !ok || n == 0 {
		return false
	}
	for i, c := range t.cancelled {
		if c == n {
			t.cancelled[i] = 0
			return true
		}
	}
	return false
}

// clientRequest is one request the upstream sent the client, waiting for
// the client's answer.
type clientRequest struct {
	h       *server
	s       *session
	n       uint64 // S is "s2c-<n>"
	kind    clientKind
	up      []byte  // P, the id on the application's side, as JSON text
	origin  postRef // the request whose response carries it; p nil: the GET stream
	early   []byte  // the message, while held for the session's first GET stream
	start   time.Time
	timerID int64
	timerFn func()
	// sh is the legacy shim whose round sent it, nil for a request of the
	// application's; leg is its place in the round (shim.go).
	sh  *shim
	leg int
}

// appendID appends S, the request's id toward the client, as JSON text.
func (r *clientRequest) appendID(dst []byte) []byte {
	dst = append(dst, `"s2c-`...)
	dst = strconv.AppendUint(dst, r.n, 10)
	return append(dst, '"')
}

// parseClientID reads the n of an id appendID wrote.
func parseClientID(id []byte) (uint64, bool) {
	const prefix = `"s2c-`
	if len(id) < len(prefix)+2 || string(id[:len(prefix)]) != prefix || id[len(id)-1] != '"' {
		return 0, false
	}
	return parseDigits(id[len(prefix):len(id)-1], 19)
}

// find returns the outstanding request whose id toward the client is id.
func (t *clientRequests) find(id []byte) *clientRequest {
	if t == nil {
		return nil
	}
	n, ok := parseClientID(id)
	if !ok {
		return nil
	}
	for _, r := range t.pending {
		if r.n == n {
			return r
		}
	}
	return nil
}

// add makes a new outstanding request.
func (t *clientRequests) add(h *server, s *session) *clientRequest {
	r := freelist.Pop(&t.free)
	if r == nil {
		r = &clientRequest{h: h, s: s}
		r.timerFn = r.expired
	}
	t.next++
	r.n = t.next
	t.pending = append(t.pending, r)
	return r
}

// remove forgets an outstanding request and stops its timer.
func (t *clientRequests) remove(r *clientRequest) {
	r.h.w.Disarm(&r.timerID)
	for i, e := range t.pending {
		if e == r {
			last := len(t.pending) - 1
			t.pending[i] = t.pending[last]
			t.pending[last] = nil
			t.pending = t.pending[:last]
			break
		}
	}
	if r.early != nil {
		r.s.unhold(r)
	}
	r.up, r.origin, r.sh = r.up[:0], postRef{}, nil
	t.free = append(t.free, r)
}

// unhold forgets r, a request held for the session's first GET stream.
func (s *session) unhold(r *clientRequest) {
	for i, e := range s.early {
		if e == r {
			s.early = append(s.early[:i], s.early[i+1:]...)
			break
		}
	}
	r.early = nil
	if len(s.early) == 0 {
		r.h.w.Disarm(&s.earlyTimer)
	}
}

// hold keeps r, a request of the lifecycle, and its message msg until the
// session's first GET stream opens (sendEarly), for earlyWait at most.
func (h *server) hold(s *session, r *clientRequest, msg []byte) {
	r.early = bytes.Clone(msg)
	s.early = append(s.early, r)
	if s.earlyTimer == 0 {
		if s.earlyFn == nil {
			s.earlyFn = func() { h.earlyExpired(s) }
		}
		s.earlyTimer = h.w.TimerAt(h.w.Now().Add(earlyWait), s.earlyFn)
	}
}

// sendEarly sends the requests held for the session's GET stream, which
// has just opened, in the order they came.
func (h *server) sendEarly(s *session) {
	held := s.early
	s.early = nil
	h.w.Disarm(&s.earlyTimer)
	for _, r := range held {
		msg := r.early
		r.early = nil
		h.toStream(s, nil, msg, true)
	}
}

// earlyExpired answers the requests still held when the session has not
// opened a GET stream within earlyWait, as one that came with none open.
func (h *server) earlyExpired(s *session) {
	s.earlyTimer = 0
	for len(s.early) > 0 {
		r := s.early[0]
		h.logClient(slog.LevelWarn, "error", s, r.appendID(h.aux[:0]), families[r.kind], "reason", "no stream open to the client")
		h.answerUpstream(s.appID, r.up, codeInternalError, noStreamMessage, 0, 0)
		s.clients.remove(r)
	}
}

// clientMetrics are the counters of one family (elicitation, sampling,
// roots) on one worker.
type clientMetrics struct {
	requests  *telemetry.Counter
	timeouts  *telemetry.Counter
	completed [3]*telemetry.Counter // elicitation: accept, decline, cancel; the others: ok, error
	duration  *telemetry.Histogram  // milliseconds
}

var (
	elicitActions = [...]string{"accept", "decline", "cancel"}
	okActions     = [...]string{"ok", "error"}
)

func init() {
	for _, f := range families[1:clientElicitationURL] {
		telemetry.Describe(f+".requests", telemetry.KindCounter, telemetry.UnitNone,
			"The number of "+f+" requests the upstream sent a client.")
		telemetry.Describe(f+".completed", telemetry.KindCounter, telemetry.UnitNone,
			"The number of "+f+" requests the client answered, by action.")
		telemetry.Describe(f+".timeout", telemetry.KindCounter, telemetry.UnitNone,
			"The number of "+f+" requests the client did not answer in time.")
		telemetry.Describe(f+".duration", telemetry.KindHistogram, telemetry.UnitMilliseconds,
			"The time a client took to answer a "+f+" request.")
	}
}

// clientMetrics returns the worker's metrics of kind's family, looked up
// on first use; nil for ping, which has none.
func (h *server) clientMetrics(kind clientKind) *clientMetrics {
	if kind == clientPing {
		return nil
	}
	if h.cmetrics == nil {
		h.cmetrics = new([len(families)]clientMetrics)
		wm := h.w.Metrics()
		ns, name := h.cfg.Namespace, h.cfg.Name
		for k := clientElicitation; int(k) < len(families); k++ {
			f := families[k]
			m := &h.cmetrics[k]
			labels := []string{"namespace", ns, "binding", name}
			if k == clientElicitationURL {
				labels = append(labels, "mode", "url")
			}
			base := telemetry.MustLabels(labels...)
			m.requests = wm.Counter(f+".requests", base)
			m.timeouts = wm.Counter(f+".timeout", base)
			m.duration = wm.Histogram(f+".duration", base)
			actions := okActions[:]
			if k == clientElicitation || k == clientElicitationURL {
				actions = elicitActions[:]
			}
			for i, a := range actions {
				m.completed[i] = wm.Counter(f+".completed", telemetry.MustLabels(append(labels, "action", a)...))
			}
		}
	}
	return &h.cmetrics[kind]
}

// logClient logs a step of a client request's life: created, delivered,
// completed, timeout, cancelled or error.
func (h *server) logClient(level slog.Level, step string, s *session, id []byte, method string, attrs ...any) {
	log := h.w.Logger()
	if !log.Enabled(context.Background(), level) {
		return
	}
	args := append([]any{"binding", h.cfg.Name, "step", step, "session", s.id, "id", string(id), "method", method}, attrs...)
	log.Log(context.Background(), level, "mcp client request", args...)
}

// onClientRequest handles a FLUSH clientRequest that came on the reply of
// p's request stream, or on the session's lifecycle when p is nil.
func (h *server) onClientRequest(s *session, p *post, c mcp.McpClientRequestFlushEx) {
	if !c.HasID() || len(c.ID()) == 0 || !c.HasMethod() {
		h.w.Logger().Warn("mcp server: client request dropped: no id or method", "binding", h.cfg.Name)
		return
	}
	up, method := c.ID(), c.Method()
	var trace, auth int64
	if p != nil {
		trace, auth = p.Out.Trace, p.Out.Auth
	}
	if s == nil {
		// A stateless request has no session to reach its client by.
		h.answerUpstream(nil, up, codeMethodNotFound, "Method not found", trace, auth)
		return
	}
	var params []byte
	if c.HasParams() && len(c.Params()) > 0 {
		params = c.Params()
	}
	kind, ok := lookupClientKind(method)
	takes, valid := s.takes(method, params)
	switch {
	case ok && !valid:
		h.logClient(slog.LevelWarn, "error", s, up, string(method), "reason", "params not an object, or no one reading of the elicitation's mode")
		h.answerUpstream(s.appID, up, codeInvalidParams, "Invalid params", trace, auth)
		return
	case !ok || !takes:
		h.logClient(slog.LevelWarn, "error", s, up, string(method), "reason", "the client did not declare the capability")
		h.answerUpstream(s.appID, up, codeMethodNotFound, "Method not found", trace, auth)
		return
	}
	t := s.clients
	if t == nil {
		t = &clientRequests{}
		s.clients = t
	}
	switch {
	case len(t.pending) >= maxClientRequests:
		h.logClient(slog.LevelWarn, "error", s, up, string(method), "reason", "too many requests outstanding")
		h.answerUpstream(s.appID, up, codeInternalError, "Internal error: too many requests outstanding", trace, auth)
		return
	case p != nil && (p.replyOver() && p.flags&detached == 0 || p.res.mode != modeNone && p.res.mode != modeSSE),
		p == nil && s.get.g == nil && (s.gotGet || !h.s.get):
		h.logClient(slog.LevelWarn, "error", s, up, string(method), "reason", "no stream open to the client")
		h.answerUpstream(s.appID, up, codeInternalError, noStreamMessage, trace, auth)
		return
	}
	r := t.add(h, s)
	r.kind, r.up, r.start = kind, append(r.up[:0], up...), h.w.Now()
	if p != nil {
		r.origin = p.ref()
		p.state |= hasClients
	}
	h.logClient(slog.LevelDebug, "created", s, up, string(method), "client_id", string(r.appendID(h.aux[:0])))
	msg := append(h.clientMsg[:0], `{"jsonrpc":"2.0","id":`...)
	msg = r.appendID(msg)
	msg = append(msg, `,"method":`...)
	msg = jsonrpc.AppendString(msg, method)
	if params != nil {
		msg = append(msg, `,"params":`...)
		at := len(msg)
		msg = append(msg, params...)
		blankNewlines(msg[at:])
	}
	msg = append(msg, '}')
	h.clientMsg = msg
	switch {
	case p != nil:
		p.startSSE()
		h.toClient(r, msg, true)
	case s.get.g == nil:
		h.hold(s, r, msg)
	default:
		h.toClient(r, msg, true)
	}
	timeout := h.s.samplingTimeout
	if kind == clientElicitation {
		timeout = h.s.elicitTimeout
	}
	r.timerID = h.w.TimerAt(r.start.Add(timeout), r.timerFn)
	if m := h.clientMetrics(kind); m != nil {
		m.requests.Inc()
	}
	h.logClient(slog.LevelDebug, "delivered", s, r.appendID(h.aux[:0]), string(method), "upstream_id", string(up))
}

// takes reports whether the session's client declared what a request of
// method with params (nil: none) needs (fail closed), as
// mcp.ClientRequestNeed reads it; valid is false when the params give no
// single reading of that.
func (s *session) takes(method, params []byte) (takes, valid bool) {
	need, ok := mcp.ClientRequestNeed(method, params)
	if !ok {
		return false, false
	}
	return need == 0 || mcp.McpCapabilities(s.clientCaps)&need != 0, true
}

// toClient sends msg, a JSON-RPC message, to the client on the stream of
// r: its request's response while that is still the one it names, else
// the session's GET stream; request tells r itself from a notification
// about it.
func (h *server) toClient(r *clientRequest, msg []byte, request bool) {
	if r.origin.p != nil && !r.origin.live() {
		return
	}
	h.toStream(r.s, r.origin.p, msg, request)
}

// cancelToClient tells the client a request it was sent is over:
// notifications/cancelled with its id and reason.
func (h *server) cancelToClient(r *clientRequest, reason string) {
	h.cancelToClientJSON(r, jsonrpc.AppendString(h.aux[:0], reason))
}

// cancelToClientJSON is cancelToClient with the reason as JSON text, nil
// for none.
func (h *server) cancelToClientJSON(r *clientRequest, reason []byte) {
	msg := append(h.clientMsg[:0], `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":`...)
	msg = r.appendID(msg)
	if reason != nil {
		msg = append(msg, `,"reason":`...)
		msg = append(msg, reason...)
	}
	msg = append(msg, "}}"...)
	h.clientMsg = msg
	h.toClient(r, msg, false)
}

// upstreamCancelled handles the upstream's notifications/cancelled (n)
// in session s: one naming a request the client was sent reaches the
// client under the server's id for it, and the request is forgotten. It
// reports whether n named one; any other is relayed as it came.
func (h *server) upstreamCancelled(s *session, n mcp.McpNotificationFlushEx) bool {
	if s == nil || s.clients == nil || string(n.Method()) != "notifications/cancelled" || !n.HasParams() {
		return false
	}
	params := n.Params()
	id, ok := field(params, "requestId")
	if !ok {
		return false
	}
	var r *clientRequest
	for _, e := range s.clients.pending {
		if string(e.up) == string(id) {
			r = e
			break
		}
	}
	if r == nil {
		return false
	}
	reason, ok := field(params, "reason")
	if !ok || !isString(reason) {
		reason = nil
	}
	h.cancelToClientJSON(r, reason)
	h.logClient(slog.LevelDebug, "cancelled", s, r.appendID(h.aux[:0]), families[r.kind], "reason", "the upstream cancelled it")
	s.clients.cancel(r)
	return true
}

// expired handles a request the client did not answer in time: the
// client is told it is cancelled, the upstream gets -32001.
func (r *clientRequest) expired() {
	r.timerID = 0
	h, s := r.h, r.s
	if r.early == nil {
		h.cancelToClient(r, "timeout") // a held request never reached the client
	}
	if r.sh != nil {
		if m := h.clientMetrics(r.kind); m != nil {
			m.timeouts.Inc()
		}
		method := r.sh.legs[r.leg].method
		h.logClient(slog.LevelInfo, "timeout", s, r.appendID(h.aux[:0]), method)
		h.shimLegOver(r, codeRequestTimeout, "Request timed out: the client did not answer "+method+
			" within inputRequired.roundTimeout")
		return
	}
	if r.kind == clientElicitationURL {
		h.elicitResponse(r, mcp.McpElicitActionCancel)
	} else {
		h.answerUpstream(s.appID, r.up, codeRequestTimeout, "Request timed out", 0, 0)
	}
	if m := h.clientMetrics(r.kind); m != nil {
		m.timeouts.Inc()
	}
	h.logClient(slog.LevelInfo, "timeout", s, r.appendID(h.aux[:0]), families[r.kind], "upstream_id", string(r.up))
	s.clients.cancel(r)
}

// clientResponse handles a JSON-RPC response the client POSTed (m has an
// id and a result or an error): the answer to a request of this session
// goes to the application; a late answer to one the server cancelled is
// taken (202) and dropped; any other is refused, 400 -32600, since a
// response no request of the session awaits is forged or stale.
func (p *post) clientResponse(m *message) {
	h := p.h
	s := p.sess
	r := s.clients.find(m.id)
	if r == nil && s.clients.wasCancelled(m.id) {
		h.logClient(slog.LevelDebug, "ignored", s, m.id, "", "reason", "an answer to a request the server cancelled")
		p.respondEmpty(202)
		return
	}
	if r == nil {
		h.logClient(slog.LevelWarn, "error", s, m.id, "", "reason", "a response to no outstanding request")
		p.res.id = nil
		p.transportError(400, codeInvalidRequest, "Invalid Request: no request with this id is outstanding")
		return
	}
	data, isErr := m.result, m.result == nil
	if isErr {
		data = m.err
	}
	if (r.kind == clientElicitation || r.kind == clientElicitationURL) && !isErr {
		// The server counts and logs the action the upstream is to act
		// on: one given twice could be read otherwise there. The request
		// stays outstanding for a proper answer.
		if dup := dupMember(data, "action", "content"); dup != "" {
			h.logClient(slog.LevelWarn, "error", s, m.id, "", "reason", "an answer with a member given twice")
			p.duplicate(codeInvalidRequest, dup)
			return
		}
	}
	if m := h.clientMetrics(r.kind); m != nil {
		i := 0
		switch {
		case r.kind == clientElicitation || r.kind == clientElicitationURL:
			if a, ok := field(data, "action"); ok && !isErr {
				switch string(a) {
				case `"decline"`:
					i = 1
				case `"cancel"`:
					i = 2
				}
			} else {
				i = 2
			}
		case isErr:
			i = 1
		}
		m.completed[i].Inc()
		m.duration.Record(h.w.Now().Sub(r.start).Milliseconds())
	}
	h.logClient(slog.LevelDebug, "completed", s, m.id, families[r.kind], "upstream_id", string(r.up), "error", isErr)
	if r.sh != nil {
		// A request of the legacy shim: the answer stays here.
		ref, leg := r.origin, r.leg
		s.clients.remove(r)
		if ref.live() {
			ref.p.shimAnswer(leg, isErr, data)
		}
		p.respondEmpty(202)
		if ref.p != p {
			ref.release()
		}
		return
	}
	if r.kind == clientElicitationURL {
		action := mcp.McpElicitActionCancel
		if !isErr {
			action = elicitAction(data)
		}
		h.elicitResponse(r, action)
	} else {
		h.answers.Open(h.exitID, s.appID, r.up, isErr, data, p.Out.Trace, p.Out.Auth)
	}
	s.clients.remove(r)
	p.respondEmpty(202)
}

// cancelClientRequest handles the client's notifications/cancelled for a
// request it was sent: the upstream gets -32800. It reports whether id
// named one.
func (p *post) cancelClientRequest(id []byte) bool {
	h := p.h
	s := p.sess
	r := s.clients.find(id)
	if r == nil {
		return false
	}
	h.logClient(slog.LevelInfo, "cancelled", s, id, families[r.kind], "upstream_id", string(r.up))
	if r.sh != nil {
		h.shimLegOver(r, codeRequestCancelled, "Request cancelled: the client cancelled "+r.sh.legs[r.leg].method)
		return true
	}
	if r.kind == clientElicitationURL {
		h.elicitResponse(r, mcp.McpElicitActionCancel)
	} else {
		h.answerUpstream(s.appID, r.up, codeRequestCancelled, "Request cancelled", p.Out.Trace, p.Out.Auth)
	}
	s.clients.remove(r)
	return true
}

// endClientRequests handles the end of a request whose response carried
// client requests still outstanding: the client is told each is
// cancelled, while its response can still carry that, and each is
// forgotten; the application already ended its side.
func (p *post) endClientRequests() {
	p.state &^= hasClients
	s := p.sess
	if s == nil || s.clients == nil {
		return
	}
	h := p.h
	t := s.clients
	for i := 0; i < len(t.pending); {
		r := t.pending[i]
		if r.origin.p != p || r.origin.gen != p.gen {
			i++
			continue
		}
		h.cancelToClient(r, "The request that asked it ended")
		h.logClient(slog.LevelDebug, "cancelled", s, r.appendID(h.aux[:0]), families[r.kind], "reason", "its request ended")
		t.cancel(r) // swaps the last one into i
	}
}

// endClientRequests answers each request the client still owes an
// answer, as the session ends: the upstream gets -32603.
func (h *server) endClientRequests(s *session) {
	t := s.clients
	if t == nil {
		return
	}
	for len(t.pending) > 0 {
		r := t.pending[len(t.pending)-1]
		h.logClient(slog.LevelInfo, "error", s, r.appendID(h.aux[:0]), families[r.kind], "reason", "the session ended")
		if r.sh != nil {
			h.shimLegOver(r, codeInternalError, "Client session closed")
			continue
		}
		if r.kind != clientElicitationURL {
			h.answerUpstream(s.appID, r.up, codeInternalError, "Client session closed", 0, 0)
		}
		t.remove(r)
	}
}

// answerUpstream answers a request of the application with an error the
// server made for the client.
func (h *server) answerUpstream(sid, id []byte, code int, msg string, trace, auth int64) {
	h.answers.Error(h.exitID, sid, id, code, msg, trace, auth)
}
