package client

import (
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/binding/mcp/jsonrpc"
	"github.com/sluicehq/sluice/engine/guard"
)

// The states of a request of a guarded client (options.authorization)
// before it may go upstream.
const (
	authNone      uint8 = iota // no guard, or its credentials are in hand
	authAcquiring              // the guard is finding the URL to visit
	authPending                // elicitCreate went down; awaiting the callback
)

// preauthorizeMessage is the elicitation's message, Zilla's words.
const preauthorizeMessage = "Additional authorization is required to use this tool"

// authorize decides, as the request begins, whether the binding's guard
// lets it go upstream: with the credentials of the stream's own session,
// or of one the guard opens for it. It reports false when the request is
// held (the guard needs a preauthorization first) or refused.
func (x *exchange) authorize() bool {
	h := x.h
	g := h.guard
	auth := x.ds.In.Auth
	if guard.Authorized(auth) {
		if c := g.Credentials(auth); c != "" {
			x.setCredentials(c)
			return true
		}
	}
	session := g.Reauthorize(x.ds.In.Trace, h.cfg.ID, auth, "")
	switch {
	case guard.Authorized(session):
		x.guardSession = session
		x.setCredentials(g.Credentials(session))
		return true
	case session == guard.NeedsPreauthorize && h.s.needsCredentials:
		x.auth = authAcquiring
		gen := x.gen
		var callback string
		if x.u != nil {
			callback = x.u.authCallback
		}
		g.Preauthorize(x.ds.In.Trace, h.cfg.ID, x.ds.InID(), auth, callback, func(url string, err error) {
			x.onPreauthorize(gen, url, err)
		})
		return false
	case !h.s.needsCredentials:
		x.credential = append(x.credential[:0], h.s.staticAuth...)
		return true
	default:
		x.reject()
		return false
	}
}

// setCredentials keeps the authorization header value the request's POST
// carries: options.authorization's credentials with the guard's
// credentials c in place of {credentials} ("Bearer c" when none is
// given), or the static value as it is.
func (x *exchange) setCredentials(c string) {
	s := x.h.s
	switch {
	case s.staticAuth != nil:
		x.credential = append(x.credential[:0], s.staticAuth...)
	case c == "":
		x.credential = x.credential[:0]
	case s.credentials == "":
		x.credential = append(append(x.credential[:0], "Bearer "...), c...)
	default:
		x.credential = x.credential[:0]
		tpl := s.credentials
		for {
			i := strings.Index(tpl, "{credentials}")
			if i < 0 {
				break
			}
			x.credential = append(append(x.credential, tpl[:i]...), c...)
			tpl = tpl[i+len("{credentials}"):]
		}
		x.credential = append(x.credential, tpl...)
	}
}

// reject refuses a request the guard does not let through: the request
// is reset and its reply aborted, as Zilla's client does.
func (x *exchange) reject() {
	x.auth = authNone
	x.state |= xOver
	x.cancelTimer()
	x.ds.doClose()
}

// onPreauthorize runs when the guard found the URL the user must visit:
// CHALLENGE elicitCreate goes down on the request, and only then its
// params' window, so the client learns of the elicitation first. A request
// without a timeout cannot wait for a person and is rejected after the
// challenge, as in Zilla.
func (x *exchange) onPreauthorize(gen uint32, url string, err error) {
	if x.gen != gen || x.auth != authAcquiring || x.state&xOver != 0 {
		return // the request is over, or the exchange serves another
	}
	defer x.release()
	if err != nil || url == "" {
		x.reject()
		return
	}
	h := x.h
	x.elicitID = append(x.elicitID[:0], nextID(&h.s.elicitIDs, &h.sh.elicitations, "elicit-")...)
	x.corrID = append(x.corrID[:0], nextID(&h.s.correlationIDs, &h.sh.correlations, "")...)
	x.ds.doElicitCreate(x.elicitID, []byte(url), []byte(preauthorizeMessage), x.corrID)
	if x.elicitWait <= 0 {
		x.reject()
		return
	}
	x.auth = authPending
	if x.idx >= 0 {
		x.deadline = h.w.Now().Add(time.Duration(x.elicitWait) * time.Millisecond)
	}
	x.ds.doWindow(paramsWindow)
}

// onFlush takes the client's answer to the guard's elicitation: the
// callback URL its user's browser came back to (elicitCallback), which
// the guard re-authorizes with, or a refusal (elicitResponse decline or
// cancel); or, with no guard's elicitation pending, the answer to one the
// upstream asked for (elicitResponse). Any other FLUSH is ignored.
func (x *exchange) onFlush(ext []byte) {
	h := x.h
	f := &h.flushEx
	if !f.TryWrap(ext, 0, len(ext)) || f.TypeID() != h.mcpTypeID {
		return
	}
	if x.auth != authPending {
		if f.Kind() == mcp.McpFlushExKindElicitResponse {
			r := f.ElicitResponse()
			x.answerURLElicitation(r.Action())
		}
		return
	}
	switch f.Kind() {
	case mcp.McpFlushExKindElicitCallback:
		cb := f.ElicitCallback()
		url := cb.URLString()
		session := h.guard.Reauthorize(x.ds.In.Trace, h.cfg.ID, x.ds.InID(), url)
		if !guard.Authorized(session) {
			x.elicitOver()
			return
		}
		x.guardSession = session
		x.setCredentials(h.guard.Credentials(session))
		x.auth = authNone
		x.ds.doFlush(flushElicitComplete, x.elicitID, nil, 0, 0)
		if x.idx >= 0 {
			x.deadline = h.w.Now().Add(h.s.timeout)
		}
		if x.state&xParamsDone != 0 && x.state&xOver == 0 {
			x.start()
		}
	case mcp.McpFlushExKindElicitResponse:
		if r := f.ElicitResponse(); r.Action() != mcp.McpElicitActionAccept {
			x.elicitOver()
		}
	}
}

// elicitOver ends a request whose elicitation did not authorize it
// (declined, cancelled, timed out, or a callback the guard refused):
// FLUSH elicitComplete tells the client, and the reply is aborted.
func (x *exchange) elicitOver() {
	x.auth = authNone
	x.state |= xOver
	x.cancelTimer()
	x.ds.doFlush(flushElicitComplete, x.elicitID, nil, 0, 0)
	x.ds.doAbort()
}

// abandoned handles an END of the request while its elicitation is
// pending: the client can no longer answer it, a protocol error; the
// request is reset and its reply aborted.
func (x *exchange) abandoned() {
	x.reject()
}

// nextID supplies an elicitation or correlation id: the configured ones in
// turn, sequential ones (prefix and a count), or 8 random hex digits.
func nextID(ids *mcp.IDs, n *atomic.Int64, prefix string) string {
	i := n.Add(1)
	switch {
	case len(ids.Fixed) > 0:
		return ids.Fixed[(i-1)%int64(len(ids.Fixed))]
	case ids.Sequential:
		return prefix + strconv.FormatInt(i, 10)
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// relayURLElicitation turns elicitation/create with mode url on the
// request's event stream (the upstream asking its client to have the user
// visit a URL) into CHALLENGE elicitCreate against the request, as
// Zilla's client does: its elicitationId, url and message, and as
// correlationId the upstream's JSON-RPC id (its JSON text), absent when
// the message has none. It reports false, leaving the message to be
// relayed as any request to the client is, when it is not a URL
// elicitation or the downstream already ended its request, which a
// CHALLENGE can no longer reach.
func (x *exchange) relayURLElicitation(id, params []byte) bool {
	if x.state&(xAnswered|xOver) != 0 || x.ds.In.Closed() || !x.ds.Out.Opening() {
		return false
	}
	eid, url, message, ok := urlElicitation(params)
	if !ok {
		return false
	}
	x.elicitID = append(x.elicitID[:0], eid...)
	x.corrID = append(x.corrID[:0], id...)
	var corr []byte
	if id != nil {
		corr = x.corrID
	}
	if !x.ds.doElicitCreate(x.elicitID, url, message, corr) {
		return false
	}
	x.elicitRelayed = true
	if x.idx >= 0 {
		// A person is visiting the URL: wait as for any request to the
		// client.
		x.deadline = x.h.w.Now().Add(max(x.h.s.timeout, clientRequestWait))
	}
	return true
}

// urlElicitation reads the params of an elicitation/create with mode url:
// its elicitationId, url and message (nil when absent or not a string);
// ok is false for another mode or a missing id or url.
func urlElicitation(params []byte) (eid, url, message []byte, ok bool) {
	if mode, err := jsonrpc.Unquote(nil, jsonrpc.Lookup(params, "mode")); err != nil || string(mode) != "url" {
		return nil, nil, nil, false
	}
	eid, err1 := jsonrpc.Unquote(nil, jsonrpc.Lookup(params, "elicitationId"))
	url, err2 := jsonrpc.Unquote(nil, jsonrpc.Lookup(params, "url"))
	if err1 != nil || err2 != nil {
		return nil, nil, nil, false
	}
	if m := jsonrpc.Lookup(params, "message"); m != nil {
		if message, err1 = jsonrpc.Unquote(nil, m); err1 != nil {
			message = nil
		}
	}
	return eid, url, message, true
}

// relayLifecycleElicitation relays a URL elicitation the upstream sent
// as a notification on its GET stream (no id: nothing is answered, as
// Zilla's client relays it): CHALLENGE elicitCreate on the lifecycle,
// without a correlationId. notifications/elicitation/complete there
// becomes FLUSH elicitComplete on the lifecycle. One with an id is a
// request, relayed as FLUSH clientRequest as any other. A lifecycle
// without a session id shares the upstream session: it relays neither.
func (l *lifecycle) relayLifecycleElicitation(method, id, params []byte) bool {
	if l.null || id != nil {
		return false
	}
	switch string(method) {
	case "elicitation/create":
		eid, url, message, ok := urlElicitation(params)
		return ok && l.ds.doElicitCreate(eid, url, message, nil)
	case "notifications/elicitation/complete":
		eid, err := jsonrpc.Unquote(nil, jsonrpc.Lookup(params, "elicitationId"))
		return err == nil && l.ds.doFlush(flushElicitComplete, eid, nil, 0, 0)
	}
	return false
}

// relayElicitationComplete turns notifications/elicitation/complete for
// the elicitation relayed as a CHALLENGE into FLUSH elicitComplete; any
// other is relayed as a notification.
func (x *exchange) relayElicitationComplete(params []byte) bool {
	if !x.elicitRelayed {
		return false
	}
	eid, err := jsonrpc.Unquote(nil, jsonrpc.Lookup(params, "elicitationId"))
	if err != nil || string(eid) != string(x.elicitID) {
		return false
	}
	x.elicitRelayed = false
	x.ds.doFlush(flushElicitComplete, x.elicitID, nil, 0, 0)
	return true
}

// answerURLElicitation posts the client's answer (FLUSH elicitResponse)
// to an elicitation relayed as a CHALLENGE: {"action": "accept" |
// "decline" | "cancel"} as the result of the upstream's request.
func (x *exchange) answerURLElicitation(action mcp.McpElicitAction) {
	if !x.elicitRelayed || len(x.corrID) == 0 || x.state&xSent == 0 {
		return
	}
	var name string
	switch action {
	case mcp.McpElicitActionAccept:
		name = "accept"
	case mcp.McpElicitActionDecline:
		name = "decline"
	default:
		name = "cancel"
	}
	b := append(x.scratch[:0], `{"jsonrpc":"2.0","id":`...)
	b = append(b, x.corrID...)
	b = append(b, `,"result":{"action":"`...)
	b = append(b, name...)
	b = append(b, `"}}`...)
	x.scratch = b
	postMessage(x.h, &x.snap, b)
}
