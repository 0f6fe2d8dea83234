package client

import (
	"errors"

	"github.com/sluicehq/sluice/binding"
	"github.com/sluicehq/sluice/binding/internal/streams"
	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/binding/mcp/jsonrpc"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/frame"
	"github.com/sluicehq/sluice/idl/flyweight"
)

// downstream is the application side of one MCP stream: its Stream
// receives the initial direction (In) and sends the reply (Out), every
// frame with the trace id and authorization of the BEGIN.
type downstream struct {
	engine.Stream
	h        *handler
	sentData bool
}

func (d *downstream) init(h *handler, b *frame.Begin) {
	*d = downstream{h: h}
	d.Accept(h.w, b.OriginID(), b.RoutedID(), b.StreamID())
	d.Out.Trace, d.Out.Auth = b.TraceID(), b.Authorization()
	d.In.Trace, d.In.Auth = b.TraceID(), b.Authorization()
}

// replied reports whether the reply has begun, or is over without.
func (d *downstream) replied() bool { return d.Out.Opening() || d.Out.Closed() }

// doBegin opens the reply with ex's kind, session id and name or uri; a
// lifecycle's carries caps.
func (d *downstream) doBegin(ex *mcp.McpBeginEx, caps uint16) bool {
	h := d.h
	return d.BeginWith(0, func(b *frame.BeginBuilder) {
		b.ExtensionDone(h.replyBeginEx(h.exB.Begin.WrapSlot(b.ExtensionBuffer()), ex, caps))
	}) == nil
}

// doWindow grants the initial direction max bytes beyond what it sent. A
// refused WINDOW gives the initial direction up, and the reply is aborted
// with it: the request could not go on.
func (d *downstream) doWindow(max int32) {
	if d.In.Closed() || !d.In.Grant(max) {
		return
	}
	if d.Window() != nil {
		d.doAbort()
	}
}

// doData sends what the reply's credit allows of p, in frames of at most
// maxPayload bytes, and returns the rest; ok is false when a frame was
// refused, which closed the reply, and the request is reset.
func (d *downstream) doData(p []byte, last bool) ([]byte, bool) {
	n, err := binding.SendFragments(&d.Stream, p, !d.sentData, last, d.h.maxPayload)
	if n > 0 {
		d.sentData = true
	}
	if err != nil {
		d.doReset(nil) // the ring refused it: the reply is over
		return nil, false
	}
	return p[n:], true
}

// doEnd ends the reply, with McpEndEx{outcome: ERROR} when failed. A
// reply that has not begun is given up instead (see lifecycle.endReply).
// When the ring refuses the END, the request is reset: the downstream
// learns of the end one way or the other.
func (d *downstream) doEnd(failed bool) {
	if !d.Out.Opening() {
		d.Forgo()
		return
	}
	var err error
	if failed {
		h := d.h
		err = d.EndWith(func(b *frame.EndBuilder) {
			b.ExtensionDone(h.exB.End.WrapSlot(b.ExtensionBuffer()).TypeID(h.mcpTypeID).Outcome(mcp.McpOutcomeError).BuildLimit())
		})
	} else {
		err = d.End(nil)
	}
	if err != nil {
		d.doReset(nil)
	}
}

// doAbort aborts the reply if it has begun, and otherwise gives it up: it
// will not open now. When the ring refuses the ABORT, the request is
// reset.
func (d *downstream) doAbort() {
	if streams.AbortReply(&d.Stream) != nil {
		d.doReset(nil)
	}
}

// doClose resets the request and aborts its reply: the stream is over
// both ways, as after a breach of flow control or a refusal.
func (d *downstream) doClose() {
	d.doReset(nil)
	d.doAbort()
}

// resetKind selects the McpResetEx of doReset.
type resetInfo struct {
	code    int32  // McpResetEx.error when non-zero
	message string // its message
	bearer  bool   // McpResetEx.bearer
	realm   []byte
	scope   []byte
	meta    []byte
	bErr    mcp.McpBearerError
}

// doReset resets the initial stream, with ri's extension when given.
// When the ring refuses the RESET, the reply is aborted (see doAbort).
func (d *downstream) doReset(ri *resetInfo) {
	if d.In.Closed() {
		return
	}
	var err error
	if ri == nil {
		err = d.Reset(nil)
	} else {
		err = d.resetWith(ri)
	}
	if err != nil {
		d.doAbort()
	}
}

// resetWith resets the initial stream with ri's McpResetEx, written in
// place.
func (d *downstream) resetWith(ri *resetInfo) error {
	h := d.h
	return d.ResetWith(func(b *frame.ResetBuilder) {
		eb := h.exB.Reset.WrapSlot(b.ExtensionBuffer()).TypeID(h.mcpTypeID)
		if ri.bearer {
			bb := eb.Bearer()
			mcp.SetString(bb.RealmBytes, bb.RealmNull, ri.realm, ri.realm == nil)
			mcp.SetString(bb.ScopesBytes, bb.ScopesNull, ri.scope, ri.scope == nil)
			mcp.SetString(bb.ResourceMetadataBytes, bb.ResourceMetadataNull, ri.meta, ri.meta == nil)
			bb.Error(ri.bErr)
		} else {
			eb.Error().Code(ri.code).Message(ri.message)
		}
		b.ExtensionDone(h.exB.Reset.BuildLimit())
	})
}

// flushKind is what doFlush sends.
type flushKind uint8

const (
	flushToolsListChanged flushKind = iota
	flushPromptsListChanged
	flushResourcesListChanged
	flushResourcesUpdated // a: uri
	flushProgress         // a: token, b: message (nil: none), n1 progress, n2 total
	flushNotification     // a part of a notification (doPart)
	flushClientRequest    // a part of a request the upstream sends its client (doPart)
	flushElicitComplete   // a: the elicitation's id
)

// doFlush sends one FLUSH with McpFlushEx on the reply.
func (d *downstream) doFlush(k flushKind, a, b []byte, n1, n2 int64) bool {
	return d.flush(k, len(a)+len(b), func(eb *mcp.McpFlushExBuilder) {
		switch k {
		case flushToolsListChanged:
			eb.ToolsListChanged().IDNull()
		case flushPromptsListChanged:
			eb.PromptsListChanged().IDNull()
		case flushResourcesListChanged:
			eb.ResourcesListChanged().IDNull()
		case flushResourcesUpdated:
			eb.ResourcesUpdated().IDNull().URIBytes(a)
		case flushElicitComplete:
			eb.ElicitComplete().IDBytes(a)
		case flushProgress:
			pb := eb.Progress().ID("").TokenBytes(a).Progress(n1).Total(n2)
			if b == nil {
				pb.MessageNull()
			} else {
				pb.MessageBytes(b)
			}
		}
	})
}

// doPart sends one FLUSH of a message that carries params, whole (total
// -1) or in parts: McpNotificationFlushEx{method, params, total, start},
// or McpClientRequestFlushEx with the request's id too.
func (d *downstream) doPart(k flushKind, id, method, params []byte, total, start int) bool {
	return d.flush(k, len(id)+len(method)+len(params), func(eb *mcp.McpFlushExBuilder) {
		if k == flushClientRequest {
			rb := eb.ClientRequest().IDBytes(id).MethodBytes(method)
			if params == nil {
				rb.ParamsNull()
			} else {
				rb.ParamsBytes(params)
			}
			rb.Total(int32(total)).Start(int32(start))
			return
		}
		nb := eb.Notification().MethodBytes(method)
		if params == nil {
			nb.ParamsNull()
		} else {
			nb.ParamsBytes(params)
		}
		nb.Total(int32(total)).Start(int32(start))
	})
}

// flush sends one FLUSH on the reply, its McpFlushEx written by fill; n is
// the size of what it carries, for the warning when it does not fit.
func (d *downstream) flush(k flushKind, n int, fill func(*mcp.McpFlushExBuilder)) bool {
	if d.Out.Closed() || !d.Out.Opening() {
		return false
	}
	h := d.h
	err := d.FlushWith(0, func(fb *frame.FlushBuilder) {
		fill(h.exB.Flush.WrapSlot(fb.ExtensionBuffer()).TypeID(h.mcpTypeID))
		fb.ExtensionDone(h.exB.Flush.BuildLimit())
	})
	if errors.Is(err, flyweight.ErrOverflow) {
		// A FLUSH is one frame: what does not fit (a progress message
		// past the worker's frame size, 32 KiB by default; sendParts cuts
		// params into parts) cannot travel. The request goes on; the
		// message is dropped, not silently.
		h.w.Logger().Warn("mcp client: notification dropped: it does not fit a frame", "binding", h.cfg.Name,
			"kind", k, "bytes", n, "max", h.w.MaxFrame(), "err", err)
	} else if d.Out.Closed() {
		d.doReset(nil) // the ring refused it: the reply is over
	}
	return err == nil
}

// partRoom is what a FLUSH's frame and McpFlushEx take besides a
// message's id, method and params, with room to spare.
const partRoom = 256

// notify relays a notification (see sendParts).
func (d *downstream) notify(method, params []byte) bool {
	return d.sendParts(flushNotification, nil, method, params)
}

// sendParts relays a notification or a request the upstream sends its
// client: one FLUSH when it fits a frame, else its params in parts,
// consecutive FLUSHes of up to a frame each, up to mcp.MaxNotification in
// all (total and start of the params bytes each carries). It reports
// whether all of it went.
func (d *downstream) sendParts(k flushKind, id, method, params []byte) bool {
	h := d.h
	part := h.w.MaxFrame() - partRoom - len(method) - len(id)
	if len(params) <= part {
		return d.doPart(k, id, method, params, -1, 0)
	}
	if part < 1024 || len(params) > mcp.MaxNotification {
		h.w.Logger().Warn("mcp client: message dropped: too large", "binding", h.cfg.Name,
			"method", string(method), "bytes", len(params), "max", mcp.MaxNotification)
		return false
	}
	for start := 0; start < len(params); start += part {
		end := min(start+part, len(params))
		if !d.doPart(k, id, method, params[start:end], len(params), start) {
			return false
		}
	}
	return true
}

// replyBeginEx writes the reply's McpBeginEx with b, wrapped where it
// goes: the request's kind, session id and name, uri or method,
// contentLength unknown.
func (h *handler) replyBeginEx(b *mcp.McpBeginExBuilder, ex *mcp.McpBeginEx, caps uint16) (int, error) {
	b.TypeID(h.mcpTypeID)
	mcp.BuildReply(b, ex, caps)
	return b.BuildLimit()
}

// doElicitCreate sends CHALLENGE McpChallengeEx.elicitCreate against the
// request (the initial direction), asking the client to have its user
// visit url; it reports whether it went.
func (d *downstream) doElicitCreate(id, url, message, correlationID []byte) bool {
	h := d.h
	return d.ChallengeWith(func(b *frame.ChallengeBuilder) {
		cb := h.exB.Challenge.WrapSlot(b.ExtensionBuffer()).TypeID(h.mcpTypeID)
		eb := cb.ElicitCreate().IDBytes(id).URLBytes(url)
		mcp.SetString(eb.MessageBytes, eb.MessageNull, message, message == nil)
		mcp.SetString(eb.CorrelationIDBytes, eb.CorrelationIDNull, correlationID, correlationID == nil)
		b.ExtensionDone(cb.BuildLimit())
	}) == nil
}

// valueStream is a downstream stream whose DATA carry one JSON object
// that goes upstream once it is complete: an exchange's params, a
// response's answer.
type valueStream interface {
	fail(code int32, msg string)
	complete()
}

// takeValue feeds p, a DATA payload of the JSON value that *buf collects
// and t tracks, for s: the initial stream gets more credit while the
// value is incomplete, and s completes once it is, *buf cut to its end.
// A value past maxMessage fails s and resets the initial stream; one that
// is not JSON fails s with parseErr.
func takeValue(s valueStream, ds *downstream, buf *[]byte, t *jsonrpc.Tracker, p []byte, parseErr string) {
	if len(*buf)+len(p) > maxMessage {
		s.fail(-32602, "Invalid params: too large")
		ds.doReset(nil)
		return
	}
	start := len(*buf)
	*buf = append(*buf, p...)
	n, done, err := t.Feed((*buf)[start:])
	switch {
	case err != nil:
		s.fail(-32700, parseErr)
	case done:
		*buf = (*buf)[:start+n]
		s.complete()
	default:
		ds.doWindow(paramsWindow)
	}
}
