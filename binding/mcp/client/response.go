package client

import (
	"strconv"

	"github.com/sluicehq/sluice/binding/internal/streams"
	"github.com/sluicehq/sluice/binding/mcp/jsonrpc"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/frame"
)

// response is a clientResponse stream: the downstream client's answer to
// a request the upstream sent it (relayRequest), POSTed upstream on the
// session as {"jsonrpc":"2.0","id":<id>,"result":<DATA>} (or "error" when
// the BEGIN says so). Its reply begins at once and ends once the upstream
// took the answer (2xx); any failure resets the stream with McpResetEx
// error while the downstream still sends, and aborts the reply.
type response struct {
	h  *handler
	ds downstream
	sessionWait
	id     []byte // the request's id on this hop, a JSON number or string
	sid    string
	isErr  bool
	body   []byte // the result or error object so far
	t      jsonrpc.Tracker
	c      *call
	timer  int64
	state  uint8
	fn     engine.MessageConsumer
	timeFn func()
}

const (
	rDone    uint8 = 1 << iota // the DATA are all in
	rWaiting                   // for an upstream (re-)initialize
	rOver                      // answered, failed or given up
)

func (h *handler) newResponse() *response {
	r := &response{h: h}
	r.fn, r.resumeFn, r.timeFn = r.onFrame, r.resume, r.onTimeout
	return r
}

// onFrame receives the downstream's answer and the throttle frames of the
// reply.
func (r *response) onFrame(t frame.FrameType, buf []byte) {
	switch t {
	case frame.FrameBegin:
		if b, err := r.ds.OnBegin(buf); err == nil {
			r.onBegin(b.Extension())
		}
	case frame.FrameData:
		if d, err := r.ds.OnData(buf); streams.Received(err, r.violated) {
			r.onData(d.Payload())
		}
	case frame.FrameFlush:
		_, _ = r.ds.OnFlush(buf) // an answer carries no FLUSH the client reads
	case frame.FrameEnd:
		_, _ = r.ds.OnEnd(buf) // In closes either way
		if r.state&(rDone|rOver) == 0 {
			r.complete()
		}
	case frame.FrameAbort:
		_, _ = r.ds.OnAbort(buf) // In closes either way
		r.cancel()
		r.ds.doAbort()
	case frame.FrameWindow:
		_, _ = r.ds.OnWindow(buf) // the reply carries no DATA
	case frame.FrameReset:
		_, _ = r.ds.OnReset(buf) // Out closes either way
		r.cancel()
		r.ds.doReset(nil)
	}
}

func (r *response) onBegin(ext []byte) {
	h := r.h
	ex := &h.mcpEx
	if !ex.TryWrap(ext, 0, len(ext)) {
		r.refuse(-32600, "Invalid request: not an MCP application stream")
		return
	}
	v := ex.ClientResponse()
	id := v.ID()
	if !v.HasSessionID() || !v.HasID() || !scalarID(id) {
		r.refuse(-32600, "Invalid request: a client response needs a session id and the request's id")
		return
	}
	e := v.Error()
	r.id, r.sid, r.isErr = append(r.id[:0], id...), string(v.SessionID()), e != 0
	h.sh.mu.Lock()
	r.u = h.sh.sessions[r.sid]
	h.sh.mu.Unlock()
	if r.u == nil {
		r.refuse(-32603, "Upstream session not found")
		return
	}
	if r.ds.BeginWith(0, func(b *frame.BeginBuilder) {
		eb := h.exB.Begin.WrapSlot(b.ExtensionBuffer()).TypeID(h.mcpTypeID)
		eb.ClientResponse().SessionID(r.sid).IDBytes(r.id).Error(e)
		b.ExtensionDone(eb.BuildLimit())
	}) != nil {
		r.refuse(-32603, "Internal error")
		return
	}
	r.ds.doWindow(paramsWindow)
}

// scalarID reports whether id is one JSON number or string, the only ids
// the POSTed answer may carry: anything else would change its meaning.
func scalarID(id []byte) bool {
	var t jsonrpc.Tracker
	n, done, err := t.Feed(id)
	if err == nil && !done {
		err = t.Finish()
		done = t.Done()
		n = len(id)
	}
	return err == nil && done && n == len(id) && (t.Kind() == jsonrpc.KindString || t.Kind() == jsonrpc.KindNumber)
}

func (r *response) onData(p []byte) {
	if r.state&(rDone|rOver) == 0 {
		takeValue(r, &r.ds, &r.body, &r.t, p, "Parse error: invalid answer")
	}
}

// complete goes upstream once the answer's object closed (or the
// downstream ended).
func (r *response) complete() {
	r.state |= rDone
	if !r.t.Done() || r.t.Kind() != jsonrpc.KindObject {
		r.fail(-32602, "Invalid params: the answer is not a JSON object")
		return
	}
	r.proceed(false)
}

// proceed POSTs the answer once the upstream session is ready; waited
// says it waited for an initialize, whose failure fails it.
func (r *response) proceed(waited bool) {
	if r.await(r.h, r, waited) {
		r.state |= rWaiting
	}
}

// resume runs when an initialize the answer waits for is over.
func (r *response) resume() {
	if r.state&rWaiting == 0 || r.state&rOver != 0 {
		return
	}
	r.state &^= rWaiting
	r.proceed(true)
}

func (r *response) send() {
	h := r.h
	if r.snap.stateless {
		// 2026-07-28 has no requests from server to client to answer.
		r.fail(-32603, "Upstream is stateless: no request to answer")
		return
	}
	c := h.newCall(r)
	b := append(c.body[:0], `{"jsonrpc":"2.0","id":`...)
	b = append(b, r.id...)
	if r.isErr {
		b = append(b, `,"error":`...)
	} else {
		b = append(b, `,"result":`...)
	}
	b = append(b, r.body...)
	c.body = append(b, '}')
	r.c = c
	if !c.open(&reqHead{method: "POST", sessionID: r.snap.sessionID, version: r.snap.version}, r.ds.Out.Trace) {
		r.c = nil
		r.fail(-32603, "Upstream unreachable: cannot open a stream")
		return
	}
	r.timer = h.w.TimerAt(h.w.Now().Add(h.s.timeout), r.timeFn)
}

func (r *response) onResponse(c *call, status int) {
	r.c = nil
	if status >= 200 && status < 300 {
		c.finish()
		r.succeed()
		return
	}
	c.abort()
	r.fail(-32603, "Upstream HTTP status "+strconv.Itoa(status))
}

func (r *response) onBody(*call, []byte) {}

func (r *response) onClose(c *call, _ bool) {
	if ownedCall(&r.c, c) {
		r.fail(-32603, "Upstream connection failed")
	}
}

func (r *response) onTimeout() {
	r.timer = 0
	abortCall(&r.c)
	r.fail(-32603, "Upstream timeout")
}

// succeed ends the reply: the upstream took the answer.
func (r *response) succeed() {
	if r.state&rOver != 0 {
		return
	}
	r.over()
	r.ds.doEnd(false)
}

// fail resets the stream with McpResetEx error {code, message} while the
// downstream still sends, and aborts the reply.
func (r *response) fail(code int32, msg string) {
	if r.state&rOver != 0 {
		return
	}
	r.over()
	r.h.w.Logger().Warn("mcp client: client response not delivered", "binding", r.h.cfg.Name,
		"session", r.sid, "id", string(r.id), "code", code, "message", msg)
	r.ds.doReset(&resetInfo{code: code, message: msg})
	r.ds.doAbort()
}

// refuse refuses the stream before its reply began.
func (r *response) refuse(code int32, msg string) {
	r.over()
	r.ds.doReset(&resetInfo{code: code, message: msg})
	r.ds.Forgo()
}

// cancel gives the answer up: the downstream went away.
// violated cancels an answer whose DATA broke flow control or frame
// order, and closes it both ways.
func (r *response) violated() {
	r.cancel()
	r.ds.doClose()
}

func (r *response) cancel() {
	if r.state&rOver != 0 {
		return
	}
	r.over()
	abortCall(&r.c)
}

func (r *response) over() {
	r.state |= rOver
	r.state &^= rWaiting
	r.h.w.Disarm(&r.timer)
}

var _ sink = (*response)(nil)
