package client

import (
	"bytes"
	"strconv"

	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/binding/mcp/jsonrpc"
)

// A tools/call of a tool never listed through the binding goes to a
// stateless upstream without Mcp-Param headers, and an upstream that
// declares some for the tool answers 400 -32020. The client kind then
// lists the upstream's tools once, to learn their declarations, and makes
// the call again with the headers. See doc.go, "Requests".

// maxParamPages bounds the tools/list pages a fetch reads.
const maxParamPages = 32

// paramFetch is the one tools/list walk of a binding's upstream in
// progress; the calls that wait on it are its waiters. It runs on the
// worker of the call that started it.
type paramFetch struct {
	h       *handler
	caps    uint16
	version string
	bearer  []byte
	rd      bodyReader
	c       *call
	id      int64
	status  int
	pages   int
	tools   int
	next    []byte // the page's nextCursor, JSON text; nil: the last page
	timer   int64
	over    bool
	waiters []paramWaiter // under sh.mu
}

// paramWaiter is a call waiting for the fetch.
type paramWaiter struct {
	x   *exchange
	gen uint32
}

// toolName returns the name of x's tool, unquoted.
func (x *exchange) toolName() []byte {
	if x.hasName {
		return x.name
	}
	v := jsonrpc.Lookup(x.params, "name")
	if len(v) < 2 || v[0] != '"' {
		return nil
	}
	name, err := jsonrpc.Unquote(nil, v)
	if err != nil {
		return nil
	}
	return name
}

// wantsParams reports whether x's answer, an HTTP error, is the -32020
// of a stateless upstream to a tools/call that went without Mcp-Param
// headers, the first time.
func (x *exchange) wantsParams() bool {
	if x.status != 400 || x.kind != mcp.McpBeginExKindToolsCall || !x.snap.stateless || x.sentParams || x.state&xParamsFetched != 0 {
		return false
	}
	return string(jsonrpc.Lookup(x.errBody, "code")) == "-32020" && x.toolName() != nil
}

// awaitParams makes x's call again at once when its tool's declarations
// arrived since it went (another call's fetch learned them), else holds
// x until the binding's fetch of the upstream's tools is over, starting
// one when none is running.
func (x *exchange) awaitParams() {
	h := x.h
	x.state |= xParamsFetched
	x.state &^= xSent
	if len(h.sh.params.Lookup(x.toolName())) > 0 {
		x.errBody = x.errBody[:0]
		x.send()
		return
	}
	x.state |= xWaiting
	sh := h.sh
	sh.mu.Lock()
	f := sh.fetch
	start := f == nil
	if start {
		caps, _ := x.u.metaOf()
		f = &paramFetch{h: h, caps: caps, version: x.snap.version, bearer: append([]byte(nil), x.credential...)}
		sh.fetch = f
	}
	f.waiters = append(f.waiters, paramWaiter{x, x.gen})
	sh.mu.Unlock()
	if start {
		f.timer = h.w.TimerAt(h.w.Now().Add(h.s.timeout), f.timedOut)
		f.page(nil)
	}
}

// page POSTs tools/list for the page at cursor (JSON text; nil: the
// first).
func (f *paramFetch) page(cursor []byte) {
	h := f.h
	f.pages++
	f.status, f.next = 0, nil
	f.id = h.sh.ids.Add(1)
	f.rd.reset(false)
	c := h.newCall(f)
	b := append(c.body[:0], `{"jsonrpc":"2.0","id":`...)
	b = strconv.AppendInt(b, f.id, 10)
	b = append(b, `,"method":"tools/list","params":{"_meta":`...)
	b = appendMeta(b, f.caps)
	if cursor != nil {
		b = append(b, `,"cursor":`...)
		b = append(b, cursor...)
	}
	c.body = append(b, `}}`...)
	rh := reqHead{method: "POST", version: f.version, mcpMethod: []byte("tools/list")}
	if len(f.bearer) > 0 {
		rh.bearer = f.bearer
	}
	f.c = c
	if !c.open(&rh, h.w.SupplyTraceID()) {
		f.c = nil
		f.finish()
	}
}

func (f *paramFetch) onResponse(c *call, status int) {
	f.status = status
	f.rd.reset(f.h.resp.sse)
}

func (f *paramFetch) onBody(c *call, p []byte) {
	h := f.h
	for (len(p) > 0 || f.rd.held()) && f.c == c {
		n, msg, err := f.rd.next(p, c.bodyOver())
		p = p[n:]
		if err != nil {
			abortCall(&f.c)
			f.finish()
			return
		}
		if msg == nil {
			return
		}
		var m message
		if f.rd.decode(&h.tracker, msg, &m) != nil || !m.isResponse() || !bytes.Equal(m.id, strconv.AppendInt(h.idBuf[:0], f.id, 10)) {
			continue
		}
		abortCall(&f.c) // an event stream may stay open: the answer is in
		if f.status != 200 || m.result == nil {
			f.finish()
			return
		}
		h.sh.params.Learn(m.result)
		if tools := jsonrpc.Lookup(m.result, "tools"); len(tools) > 0 && tools[0] == '[' {
			f.tools += len(arrayElems(tools))
		}
		next := jsonrpc.Lookup(m.result, "nextCursor")
		if len(next) >= 2 && next[0] == '"' && f.pages < maxParamPages && f.tools < mcp.MaxParamTools && !f.over {
			f.page(append([]byte(nil), next...))
			return
		}
		f.finish()
		return
	}
}

func (f *paramFetch) onClose(c *call, _ bool) {
	if ownedCall(&f.c, c) {
		f.finish()
	}
}

// timedOut ends a fetch that took longer than the binding's timeout.
func (f *paramFetch) timedOut() {
	f.timer = 0
	abortCall(&f.c)
	f.finish()
}

// finish ends the fetch and wakes its waiters, each on its own worker.
func (f *paramFetch) finish() {
	if f.over {
		return
	}
	f.over = true
	h := f.h
	h.w.Disarm(&f.timer)
	h.sh.mu.Lock()
	if h.sh.fetch == f {
		h.sh.fetch = nil
	}
	ws := f.waiters
	f.waiters = nil
	h.sh.mu.Unlock()
	for _, wt := range ws {
		x, gen := wt.x, wt.gen
		x.h.w.Dispatch(func() { x.paramsFetched(gen) })
	}
}

// paramsFetched makes x's call again with the headers the fetch learned
// for its tool, or answers the upstream's error when it learned none.
func (x *exchange) paramsFetched(gen uint32) {
	if x.gen != gen || x.state&xWaiting == 0 || x.state&(xOver|xAnswered) != 0 {
		return
	}
	x.state &^= xWaiting
	if name := x.toolName(); name != nil && len(x.h.sh.params.Lookup(name)) > 0 {
		x.errBody = x.errBody[:0]
		x.send()
	} else {
		x.answerWith(x.errBody, true)
	}
	x.release()
}

var _ sink = (*paramFetch)(nil)
