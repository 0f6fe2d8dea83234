package client

import (
	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/frame"
)

// downstream is the application side of one MCP stream: its initial
// direction is received, its reply sent.
type downstream struct {
	h                  *handler
	originID, routedID int64
	initialID, replyID int64
	traceID, auth      int64
	in                 engine.Flow // initial, received
	out                engine.Flow // reply, sent
	state              uint8
	sentData           bool
}

// downstream states.
const (
	dsInitialClosed uint8 = 1 << iota // END or ABORT received, or RESET sent
	dsReplyOpened                     // reply BEGIN sent
	dsReplyClosed                     // END or ABORT sent, or RESET received
)

func (d *downstream) init(h *handler, b *frame.Begin) {
	*d = downstream{h: h, originID: b.OriginID(), routedID: b.RoutedID(),
		initialID: b.StreamID(), replyID: engine.ReplyID(b.StreamID()),
		traceID: b.TraceID(), auth: b.Authorization()}
	d.in.Seq, d.in.Ack = b.Sequence(), b.Acknowledge()
}

func (d *downstream) closed() bool {
	return d.state&(dsInitialClosed|dsReplyClosed) == dsInitialClosed|dsReplyClosed
}

// doBegin opens the reply with ex's kind, session id and name or uri; a
// lifecycle's carries caps.
func (d *downstream) doBegin(ex *mcp.McpBeginEx, caps uint16) bool {
	h := d.h
	buf := h.w.WriteBuffer()
	b := h.beginB.Wrap(buf, 0, len(buf)).
		OriginID(d.originID).RoutedID(d.routedID).StreamID(d.replyID).
		Sequence(d.out.Seq).Acknowledge(d.out.Ack).Maximum(d.out.Max).
		TraceID(d.traceID).Authorization(d.auth).Affinity(0)
	if off, maxLimit, ok := b.ExtensionSlot(); ok {
		if limit, err := h.replyBeginEx(buf, off, maxLimit, ex, caps); err != nil {
			b.Fail(err)
		} else {
			b.ExtensionEnd(limit)
		}
	}
	n, err := b.BuildLimit()
	if err == nil {
		err = h.w.Send(frame.FrameBegin, buf[:n])
	}
	if err != nil {
		return false
	}
	d.state |= dsReplyOpened
	return true
}

// doWindow grants the initial direction max bytes beyond what it sent.
func (d *downstream) doWindow(max int32) {
	if d.state&dsInitialClosed != 0 || !d.in.Grant(max) {
		return
	}
	h := d.h
	buf := h.w.WriteBuffer()
	n, err := h.windowB.Wrap(buf, 0, len(buf)).
		OriginID(d.originID).RoutedID(d.routedID).StreamID(d.initialID).
		Sequence(d.in.Seq).Acknowledge(d.in.Ack).Maximum(d.in.Max).
		TraceID(d.traceID).Authorization(d.auth).
		BudgetID(0).Padding(0).Minimum(0).Capabilities(0).
		BuildLimit()
	if err == nil {
		_ = h.w.Send(frame.FrameWindow, buf[:n])
	}
}

// doData sends what the reply's credit allows of p, in frames of at most
// maxPayload bytes, and returns the rest; ok is false when a frame was
// refused.
func (d *downstream) doData(p []byte, last bool) ([]byte, bool) {
	h := d.h
	for len(p) > 0 && d.state&dsReplyClosed == 0 {
		n := int(min(int64(len(p)), d.out.Available()-int64(d.out.Pad), int64(h.maxPayload)))
		if n <= 0 {
			break
		}
		var flags frame.Flags
		if !d.sentData {
			flags |= frame.FlagDataInit
		}
		if n == len(p) && last {
			flags |= frame.FlagDataFin
		}
		buf := h.w.WriteBuffer()
		nb, err := h.dataB.Wrap(buf, 0, len(buf)).
			OriginID(d.originID).RoutedID(d.routedID).StreamID(d.replyID).
			Sequence(d.out.Seq).Acknowledge(d.out.Ack).Maximum(d.out.Max).
			TraceID(d.traceID).Authorization(d.auth).
			Flags(uint8(flags)).BudgetID(d.out.Budget).Reserved(d.out.Reserved(n)).
			Payload(p[:n]).
			BuildLimit()
		if err == nil {
			err = h.w.Send(frame.FrameData, buf[:nb])
		}
		if err != nil {
			return nil, false
		}
		d.out.Send(n)
		d.sentData = true
		p = p[n:]
	}
	return p, true
}

// doEnd ends the reply, with McpEndEx{outcome: ERROR} when failed.
func (d *downstream) doEnd(failed bool) {
	if d.state&dsReplyClosed != 0 {
		return
	}
	d.state |= dsReplyClosed
	h := d.h
	buf := h.w.WriteBuffer()
	b := h.endB.Wrap(buf, 0, len(buf)).
		OriginID(d.originID).RoutedID(d.routedID).StreamID(d.replyID).
		Sequence(d.out.Seq).Acknowledge(d.out.Ack).Maximum(d.out.Max).
		TraceID(d.traceID).Authorization(d.auth).
		BudgetID(d.out.Budget).Reserved(0)
	if failed {
		if off, maxLimit, ok := b.ExtensionSlot(); ok {
			if limit, err := h.endExB.Wrap(buf, off, maxLimit).TypeID(h.mcpTypeID).Outcome(mcp.McpOutcomeError).BuildLimit(); err != nil {
				b.Fail(err)
			} else {
				b.ExtensionEnd(limit)
			}
		}
	}
	if n, err := b.BuildLimit(); err == nil {
		_ = h.w.Send(frame.FrameEnd, buf[:n])
	}
}

// doAbort aborts the reply if it is open.
func (d *downstream) doAbort() {
	if d.state&dsReplyClosed != 0 {
		return
	}
	d.state |= dsReplyClosed
	if d.state&dsReplyOpened == 0 {
		return
	}
	h := d.h
	buf := h.w.WriteBuffer()
	n, err := h.abortB.Wrap(buf, 0, len(buf)).
		OriginID(d.originID).RoutedID(d.routedID).StreamID(d.replyID).
		Sequence(d.out.Seq).Acknowledge(d.out.Ack).Maximum(d.out.Max).
		TraceID(d.traceID).Authorization(d.auth).
		BuildLimit()
	if err == nil {
		_ = h.w.Send(frame.FrameAbort, buf[:n])
	}
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
func (d *downstream) doReset(ri *resetInfo) {
	if d.state&dsInitialClosed != 0 {
		return
	}
	d.state |= dsInitialClosed
	h := d.h
	buf := h.w.WriteBuffer()
	b := h.resetB.Wrap(buf, 0, len(buf)).
		OriginID(d.originID).RoutedID(d.routedID).StreamID(d.initialID).
		Sequence(d.in.Seq).Acknowledge(d.in.Ack).Maximum(d.in.Max).
		TraceID(d.traceID).Authorization(d.auth)
	if ri != nil {
		if off, maxLimit, ok := b.ExtensionSlot(); ok {
			eb := h.resetExB.Wrap(buf, off, maxLimit).TypeID(h.mcpTypeID)
			if ri.bearer {
				bb := eb.Bearer()
				bb = optBytes(bb, ri.realm, (*mcp.McpBearerResetExBuilder).RealmBytes, (*mcp.McpBearerResetExBuilder).RealmNull)
				bb = optBytes(bb, ri.scope, (*mcp.McpBearerResetExBuilder).ScopesBytes, (*mcp.McpBearerResetExBuilder).ScopesNull)
				bb = optBytes(bb, ri.meta, (*mcp.McpBearerResetExBuilder).ResourceMetadataBytes, (*mcp.McpBearerResetExBuilder).ResourceMetadataNull)
				bb.Error(ri.bErr)
			} else {
				eb.Error().Code(ri.code).Message(ri.message)
			}
			if limit, err := h.resetExB.BuildLimit(); err != nil {
				b.Fail(err)
			} else {
				b.ExtensionEnd(limit)
			}
		}
	}
	if n, err := b.BuildLimit(); err == nil {
		_ = h.w.Send(frame.FrameReset, buf[:n])
	}
}

func optBytes[B any](b B, v []byte, set func(B, []byte) B, null func(B) B) B {
	if v == nil {
		return null(b)
	}
	return set(b, v)
}

// flushKind is what doFlush sends.
type flushKind uint8

const (
	flushToolsListChanged flushKind = iota
	flushPromptsListChanged
	flushResourcesListChanged
	flushResourcesUpdated // a: uri
	flushNotification     // a: method, b: params (nil: none), n1 total (-1: whole), n2 start
	flushProgress         // a: token, b: message (nil: none), n1 progress, n2 total
)

// doFlush sends one FLUSH with McpFlushEx on the reply.
func (d *downstream) doFlush(k flushKind, a, b []byte, n1, n2 int64) bool {
	if d.state&dsReplyClosed != 0 || d.state&dsReplyOpened == 0 {
		return false
	}
	h := d.h
	buf := h.w.WriteBuffer()
	fb := h.flushB.Wrap(buf, 0, len(buf)).
		OriginID(d.originID).RoutedID(d.routedID).StreamID(d.replyID).
		Sequence(d.out.Seq).Acknowledge(d.out.Ack).Maximum(d.out.Max).
		TraceID(d.traceID).Authorization(d.auth).
		BudgetID(d.out.Budget).Reserved(0)
	if off, maxLimit, ok := fb.ExtensionSlot(); ok {
		eb := h.flushExB.Wrap(buf, off, maxLimit).TypeID(h.mcpTypeID)
		switch k {
		case flushToolsListChanged:
			eb.ToolsListChanged().IDNull()
		case flushPromptsListChanged:
			eb.PromptsListChanged().IDNull()
		case flushResourcesListChanged:
			eb.ResourcesListChanged().IDNull()
		case flushResourcesUpdated:
			eb.ResourcesUpdated().IDNull().URIBytes(a)
		case flushNotification:
			nb := eb.Notification().MethodBytes(a)
			if b == nil {
				nb.ParamsNull()
			} else {
				nb.ParamsBytes(b)
			}
			nb.Total(int32(n1)).Start(int32(n2))
		case flushProgress:
			pb := eb.Progress().ID("").TokenBytes(a).Progress(n1).Total(n2)
			if b == nil {
				pb.MessageNull()
			} else {
				pb.MessageBytes(b)
			}
		}
		if limit, err := h.flushExB.BuildLimit(); err != nil {
			fb.Fail(err)
		} else {
			fb.ExtensionEnd(limit)
		}
	}
	n, err := fb.BuildLimit()
	if err != nil {
		// A FLUSH is one frame: what does not fit (a progress message
		// past the worker's frame size, 32 KiB by default; notify cuts
		// other notifications into parts) cannot travel. The request
		// goes on; the notification is dropped, not silently.
		h.w.Logger().Warn("mcp client: notification dropped: it does not fit a frame", "binding", h.cfg.Name,
			"kind", k, "bytes", len(a)+len(b), "max", h.w.MaxFrame(), "err", err)
		return false
	}
	return h.w.Send(frame.FrameFlush, buf[:n]) == nil
}

// partRoom is what a FLUSH's frame and McpFlushEx take besides a
// notification's method and params, with room to spare.
const partRoom = 256

// notify relays a notification: one FLUSH when it fits a frame, else its
// params in parts, consecutive FLUSHes of up to a frame each, up to
// mcp.MaxNotification in all (McpNotificationFlushEx total and start).
func (d *downstream) notify(method, params []byte) bool {
	h := d.h
	part := h.w.MaxFrame() - partRoom - len(method)
	if len(params) <= part {
		return d.doFlush(flushNotification, method, params, -1, 0)
	}
	if part < 1024 || len(params) > mcp.MaxNotification {
		h.w.Logger().Warn("mcp client: notification dropped: too large", "binding", h.cfg.Name,
			"method", string(method), "bytes", len(params), "max", mcp.MaxNotification)
		return false
	}
	for start := 0; start < len(params); start += part {
		end := min(start+part, len(params))
		if !d.doFlush(flushNotification, method, params[start:end], int64(len(params)), int64(start)) {
			return false
		}
	}
	return true
}

// replyBeginEx writes the reply's McpBeginEx at buf[off:]: the request's
// kind, session id and name, uri or method, contentLength unknown.
func (h *handler) replyBeginEx(buf []byte, off, maxLimit int, ex *mcp.McpBeginEx, caps uint16) (int, error) {
	b := h.mcpExB.Wrap(buf, off, maxLimit).TypeID(h.mcpTypeID)
	switch ex.Kind() {
	case mcp.McpBeginExKindLifecycle:
		v := ex.Lifecycle()
		mcp.SetSessionID(b.Lifecycle(), v.SessionID(), !v.HasSessionID()).Capabilities(caps)
	case mcp.McpBeginExKindToolsList:
		v := ex.ToolsList()
		mcp.SetSessionID(b.ToolsList(), v.SessionID(), !v.HasSessionID())
	case mcp.McpBeginExKindToolsCall:
		v := ex.ToolsCall()
		c := mcp.SetSessionID(b.ToolsCall(), v.SessionID(), !v.HasSessionID())
		optBytes(c, nilIf(v.Name(), v.HasName()), (*mcp.McpToolsCallBeginExBuilder).NameBytes, (*mcp.McpToolsCallBeginExBuilder).NameNull)
	case mcp.McpBeginExKindPromptsList:
		v := ex.PromptsList()
		mcp.SetSessionID(b.PromptsList(), v.SessionID(), !v.HasSessionID())
	case mcp.McpBeginExKindPromptsGet:
		v := ex.PromptsGet()
		c := mcp.SetSessionID(b.PromptsGet(), v.SessionID(), !v.HasSessionID())
		optBytes(c, nilIf(v.Name(), v.HasName()), (*mcp.McpPromptsGetBeginExBuilder).NameBytes, (*mcp.McpPromptsGetBeginExBuilder).NameNull)
	case mcp.McpBeginExKindResourcesList:
		v := ex.ResourcesList()
		mcp.SetSessionID(b.ResourcesList(), v.SessionID(), !v.HasSessionID())
	case mcp.McpBeginExKindResourcesRead:
		v := ex.ResourcesRead()
		c := mcp.SetSessionID(b.ResourcesRead(), v.SessionID(), !v.HasSessionID())
		optBytes(c, nilIf(v.URI(), v.HasURI()), (*mcp.McpResourcesReadBeginExBuilder).URIBytes, (*mcp.McpResourcesReadBeginExBuilder).URINull)
	case mcp.McpBeginExKindResourcesTemplatesList:
		v := ex.ResourcesTemplatesList()
		mcp.SetSessionID(b.ResourcesTemplatesList(), v.SessionID(), !v.HasSessionID())
	case mcp.McpBeginExKindResourcesSubscribe:
		v := ex.ResourcesSubscribe()
		c := mcp.SetSessionID(b.ResourcesSubscribe(), v.SessionID(), !v.HasSessionID())
		optBytes(c, nilIf(v.URI(), v.HasURI()), (*mcp.McpResourcesSubscribeBeginExBuilder).URIBytes, (*mcp.McpResourcesSubscribeBeginExBuilder).URINull)
	case mcp.McpBeginExKindResourcesUnsubscribe:
		v := ex.ResourcesUnsubscribe()
		c := mcp.SetSessionID(b.ResourcesUnsubscribe(), v.SessionID(), !v.HasSessionID())
		optBytes(c, nilIf(v.URI(), v.HasURI()), (*mcp.McpResourcesUnsubscribeBeginExBuilder).URIBytes, (*mcp.McpResourcesUnsubscribeBeginExBuilder).URINull)
	case mcp.McpBeginExKindRequest:
		v := ex.Request()
		c := mcp.SetSessionID(b.Request(), v.SessionID(), !v.HasSessionID())
		optBytes(c, nilIf(v.Method(), v.HasMethod()), (*mcp.McpRequestBeginExBuilder).MethodBytes, (*mcp.McpRequestBeginExBuilder).MethodNull)
	}
	return b.BuildLimit()
}

func nilIf(v []byte, has bool) []byte {
	if !has {
		return nil
	}
	if v == nil {
		return []byte{}
	}
	return v
}
