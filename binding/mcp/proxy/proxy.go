package proxy

import (
	"bytes"
	"github.com/sluicehq/sluice/binding"
	"log/slog"
	"unsafe"

	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/binding/mcp/jsonrpc"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/frame"
)

func init() {
	binding.RegisterKind(binding.Kind{Type: "mcp", Kind: "proxy", New: func() engine.Binding { return Binding{} }})
}

// Binding is the mcp proxy kind's process-wide factory.
type Binding struct{}

// Attach compiles the configuration for one worker.
func (Binding) Attach(w *engine.Worker, cfg *engine.BindingConfig) (engine.Handler, error) {
	return attach(w, cfg)
}

// JSON-RPC error codes the proxy answers with.
const (
	codeResourceNotFound int32 = -32002
	codeInvalidRequest   int32 = -32600
	codeMethodNotFound   int32 = -32601
	codeInvalidParams    int32 = -32602
	codeInternalError    int32 = -32603
)

// Bounds.
const (
	// maxList bounds the bytes one list request collects from its routes
	// together, and the merged result.
	maxList = 4 << 20
	// lifecycleWindow is the credit granted a lifecycle stream.
	lifecycleWindow = 8192
	// legWindow is the credit granted a route's reply that the proxy
	// collects (lists, resources/read), renewed as bytes arrive.
	legWindow = 65536
)

// attach compiles cfg for worker w.
func attach(w *engine.Worker, cfg *engine.BindingConfig) (engine.Handler, error) {
	s, err := compile(w, cfg)
	if err != nil {
		return nil, err
	}
	h := &Handler{
		w:          w,
		id:         cfg.ID,
		name:       cfg.Name,
		typeID:     w.Labels().Supply("mcp"),
		pool:       w.BufferPool(),
		s:          s,
		log:        w.Logger().With("binding", cfg.Name),
		sessions:   sharedSessions(w.Engine(), cfg.ID),
		maxPayload: w.MaxFrame() - frame.DataPayloadOffset,
		extBuf:     make([]byte, w.MaxFrame()),
	}
	h.ignoreFn = h.ignore
	return h, nil
}

// Handler is the proxy attached to one worker. Its flyweights, builders
// and scratch buffers are reused for every frame of every stream, and
// finished requests go back to a free list, so a routed call allocates
// nothing once the worker has warmed up.
type Handler struct {
	w          *engine.Worker
	id         int64
	name       string
	typeID     int32
	pool       *engine.BufferPool
	s          *settings
	log        *slog.Logger
	sessions   *sessionTable
	maxPayload int
	ignoreFn   engine.MessageConsumer

	freeRequests []*request
	freeLegs     []*leg

	extBuf  []byte // an extension being built, before a frame copies it
	scratch []byte
	cursors []cursorEntry

	header frame.Frame
	begin  frame.Begin
	data   frame.Data
	end    frame.End
	flush  frame.Flush
	window frame.Window
	reset  frame.Reset

	beginEx mcp.McpBeginEx
	flushEx mcp.McpFlushEx
	endEx   mcp.McpEndEx
	resetEx mcp.McpResetEx

	beginB  frame.BeginBuilder
	dataB   frame.DataBuilder
	endB    frame.EndBuilder
	abortB  frame.AbortBuilder
	flushB  frame.FlushBuilder
	windowB frame.WindowBuilder
	resetB  frame.ResetBuilder

	beginExB mcp.McpBeginExBuilder
	flushExB mcp.McpFlushExBuilder
	resetExB mcp.McpResetExBuilder
	endExB   mcp.McpEndExBuilder
}

// NewStream takes every MCP application stream: a lifecycle, a list, a
// call or a generic request. Anything else is refused with RESET and
// McpResetEx.error, as the toolkit does.
func (h *Handler) NewStream(t frame.FrameType, buf []byte) engine.MessageConsumer {
	if !h.begin.TryWrap(buf, 0, len(buf)) {
		return nil
	}
	b := &h.begin
	ext := b.Extension()
	ex := &h.beginEx
	if !ex.TryWrap(ext, 0, len(ext)) || ex.TypeID() != h.typeID {
		h.refuse(b, codeInvalidRequest, "Invalid request: not an MCP application stream")
		return h.ignoreFn
	}
	switch ex.Kind() {
	case mcp.McpBeginExKindLifecycle:
		return newLifecycle(h, b)
	default:
		if fn := h.passThrough(ex, buf); fn != nil {
			return fn
		}
		return h.newRequest(b)
	}
}

// passThrough hands a call the proxy would only relay to its route's
// exit (engine.Worker.Forward), so that the exit serves the downstream's
// stream itself and the proxy's second stream, with its frames and its
// copy of the params, is never made. That is a call without prefixes
// (the BEGIN the proxy would open for the route is then the same: the
// same kind, session, name or uri, contentLength and timeout) whose
// BEGIN names it and whose name a route allows. Every other request, and
// a call whose exit refuses the hand-over, is the proxy's (nil).
func (h *Handler) passThrough(ex *mcp.McpBeginEx, buf []byte) engine.MessageConsumer {
	if h.s.prefixed {
		return nil
	}
	kind := ex.Kind()
	var has bool
	var name []byte
	switch kind {
	case mcp.McpBeginExKindToolsCall:
		v := ex.ToolsCall()
		has, name = v.HasName(), v.Name()
	case mcp.McpBeginExKindPromptsGet:
		v := ex.PromptsGet()
		has, name = v.HasName(), v.Name()
	case mcp.McpBeginExKindResourcesRead:
		v := ex.ResourcesRead()
		has, name = v.HasURI(), v.URI()
	case mcp.McpBeginExKindResourcesSubscribe:
		v := ex.ResourcesSubscribe()
		has, name = v.HasURI(), v.URI()
	case mcp.McpBeginExKindResourcesUnsubscribe:
		v := ex.ResourcesUnsubscribe()
		has, name = v.HasURI(), v.URI()
	}
	if !has {
		return nil
	}
	route, _, ok := h.resolve(isURIKind(kind), kind, name)
	if !ok {
		return nil
	}
	return h.w.Forward(h.s.routes[route].exitID, buf)
}

// ignore consumes the frames of a refused stream.
func (h *Handler) ignore(frame.FrameType, []byte) {}

// refuse answers a BEGIN with RESET carrying McpResetEx.error.
func (h *Handler) refuse(b *frame.Begin, code int32, msg string) {
	var f engine.Flow
	f.Seq, f.Ack = b.Sequence(), b.Acknowledge()
	h.doReset(b.OriginID(), h.id, b.StreamID(), b.TraceID(), b.Authorization(), &f, h.errorResetEx(code, msg))
}

// Detach releases the worker's hold on the shared session table.
func (h *Handler) Detach() { h.sessions.release() }

// unsafeString views b as a string for the length of a call that does
// not keep it (path.Match, map lookups).
func unsafeString(b []byte) string {
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// resolve finds the route of a call's name (or uri) and the name the
// route knows it by: with prefixes, the route whose prefix the name
// carries (the longest, should toolkits share a beginning); without, the
// first route whose allow-set has the name. Either way the route's globs
// must allow the name.
func (h *Handler) resolve(uri bool, kind uint8, name []byte) (int, []byte, bool) {
	routes := h.s.routes
	if !h.s.prefixed {
		for i := range routes {
			if allowed(routeGlobs(&routes[i], kind), unsafeString(name)) {
				return i, name, true
			}
		}
		return -1, nil, false
	}
	best := -1
	for i := range routes {
		p := routes[i].name
		if uri {
			p = routes[i].uri
		}
		if bytes.HasPrefix(name, p) && (best < 0 || len(p) > len(routes[best].name)) {
			best = i
		}
	}
	if best < 0 {
		return -1, nil, false
	}
	p := routes[best].name
	if uri {
		p = routes[best].uri
	}
	rest := name[len(p):]
	if len(rest) == 0 || !allowed(routeGlobs(&routes[best], kind), unsafeString(rest)) {
		return -1, nil, false
	}
	return best, rest, true
}

// routeGlobs returns the allow-set of a call kind.
func routeGlobs(r *route, kind uint8) []string {
	switch kind {
	case mcp.McpBeginExKindToolsCall:
		return r.tools
	case mcp.McpBeginExKindPromptsGet:
		return r.prompts
	}
	return r.resources
}

// Frame writers. Each builds into the worker's write buffer and sends;
// f is the direction's flow, for sequence, acknowledge and maximum.

func (h *Handler) doWindow(origin, routed, id, trace, auth int64, f *engine.Flow) error {
	buf := h.w.WriteBuffer()
	n, err := h.windowB.Wrap(buf, 0, len(buf)).
		OriginID(origin).RoutedID(routed).StreamID(id).
		Sequence(f.Seq).Acknowledge(f.Ack).Maximum(f.Max).
		TraceID(trace).Authorization(auth).
		BudgetID(0).Padding(0).Minimum(0).Capabilities(0).
		BuildLimit()
	if err == nil {
		err = h.w.Send(frame.FrameWindow, buf[:n])
	}
	return err
}

func (h *Handler) doData(origin, routed, id, trace, auth int64, f *engine.Flow, flags frame.Flags, p []byte) error {
	buf := h.w.WriteBuffer()
	reserved := f.Reserved(len(p))
	n, err := h.dataB.Wrap(buf, 0, len(buf)).
		OriginID(origin).RoutedID(routed).StreamID(id).
		Sequence(f.Seq).Acknowledge(f.Ack).Maximum(f.Max).
		TraceID(trace).Authorization(auth).
		Flags(uint8(flags)).BudgetID(f.Budget).Reserved(reserved).
		Payload(p).
		BuildLimit()
	if err == nil {
		err = h.w.Send(frame.FrameData, buf[:n])
	}
	if err == nil {
		f.Send(len(p))
	}
	return err
}

func (h *Handler) doEnd(origin, routed, id, trace, auth int64, f *engine.Flow, ext []byte) error {
	buf := h.w.WriteBuffer()
	b := h.endB.Wrap(buf, 0, len(buf)).
		OriginID(origin).RoutedID(routed).StreamID(id).
		Sequence(f.Seq).Acknowledge(f.Ack).Maximum(f.Max).
		TraceID(trace).Authorization(auth).
		BudgetID(f.Budget).Reserved(0)
	if len(ext) > 0 {
		b.Extension(ext)
	}
	n, err := b.BuildLimit()
	if err == nil {
		err = h.w.Send(frame.FrameEnd, buf[:n])
	}
	return err
}

func (h *Handler) doAbort(origin, routed, id, trace, auth int64, f *engine.Flow) error {
	buf := h.w.WriteBuffer()
	n, err := h.abortB.Wrap(buf, 0, len(buf)).
		OriginID(origin).RoutedID(routed).StreamID(id).
		Sequence(f.Seq).Acknowledge(f.Ack).Maximum(f.Max).
		TraceID(trace).Authorization(auth).
		BuildLimit()
	if err == nil {
		err = h.w.Send(frame.FrameAbort, buf[:n])
	}
	return err
}

func (h *Handler) doReset(origin, routed, id, trace, auth int64, f *engine.Flow, ext []byte) error {
	buf := h.w.WriteBuffer()
	b := h.resetB.Wrap(buf, 0, len(buf)).
		OriginID(origin).RoutedID(routed).StreamID(id).
		Sequence(f.Seq).Acknowledge(f.Ack).Maximum(f.Max).
		TraceID(trace).Authorization(auth)
	if len(ext) > 0 {
		b.Extension(ext)
	}
	n, err := b.BuildLimit()
	if err == nil {
		err = h.w.Send(frame.FrameReset, buf[:n])
	}
	return err
}

func (h *Handler) doFlush(origin, routed, id, trace, auth int64, f *engine.Flow, ext []byte) error {
	buf := h.w.WriteBuffer()
	b := h.flushB.Wrap(buf, 0, len(buf)).
		OriginID(origin).RoutedID(routed).StreamID(id).
		Sequence(f.Seq).Acknowledge(f.Ack).Maximum(f.Max).
		TraceID(trace).Authorization(auth).
		BudgetID(f.Budget).Reserved(0)
	if len(ext) > 0 {
		b.Extension(ext)
	}
	n, err := b.BuildLimit()
	if err == nil {
		err = h.w.Send(frame.FrameFlush, buf[:n])
	}
	return err
}

// forward copies the frame in buf to the worker's write buffer with new
// ids, and with the sequence, acknowledge and maximum of f when f is not
// nil; everything else (flags, reserved, extension) stays as written.
func (h *Handler) forward(t frame.FrameType, buf []byte, origin, routed, id int64, f *engine.Flow) error {
	out := h.w.WriteBuffer()
	if len(buf) > len(out) {
		return errTooLarge
	}
	n := copy(out, buf)
	out = out[:n]
	if !h.header.TryWrap(out, 0, n) {
		return errMalformed
	}
	h.header.SetOriginID(origin)
	h.header.SetRoutedID(routed)
	h.header.SetStreamID(id)
	if f != nil {
		h.header.SetSequence(f.Seq)
		h.header.SetAcknowledge(f.Ack)
		h.header.SetMaximum(f.Max)
	}
	if t == frame.FrameBegin {
		if !h.begin.TryWrap(out, 0, n) {
			return errMalformed
		}
		h.begin.SetRedirectedID(0)
	}
	return h.w.Send(t, out)
}

// errorResetEx builds McpResetEx.error{code, msg} into extBuf.
func (h *Handler) errorResetEx(code int32, msg string) []byte {
	n, err := h.resetExB.Wrap(h.extBuf, 0, len(h.extBuf)).TypeID(h.typeID).Error().Code(code).Message(msg).BuildLimit()
	if err != nil {
		return nil
	}
	return h.extBuf[:n]
}

// errorEndEx builds McpEndEx{outcome: ERROR} into extBuf.
func (h *Handler) errorEndEx() []byte {
	n, err := h.endExB.Wrap(h.extBuf, 0, len(h.extBuf)).TypeID(h.typeID).Outcome(mcp.McpOutcomeError).BuildLimit()
	if err != nil {
		return nil
	}
	return h.extBuf[:n]
}

// appendError appends a JSON-RPC error object.
func appendError(dst []byte, code int32, msg, dataKey, dataValue []byte) []byte {
	dst = append(dst, `{"code":`...)
	dst = appendInt(dst, int64(code))
	dst = append(dst, `,"message":`...)
	dst = jsonrpc.AppendString(dst, msg)
	if dataKey != nil {
		dst = append(dst, `,"data":{`...)
		dst = jsonrpc.AppendString(dst, dataKey)
		dst = append(dst, ':')
		dst = jsonrpc.AppendString(dst, dataValue)
		dst = append(dst, '}')
	}
	return append(dst, '}')
}

func appendInt(dst []byte, v int64) []byte {
	if v < 0 {
		dst = append(dst, '-')
		v = -v
	}
	var tmp [20]byte
	i := len(tmp)
	for {
		i--
		tmp[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			break
		}
	}
	return append(dst, tmp[i:]...)
}

var (
	_ engine.Handler  = (*Handler)(nil)
	_ engine.Detacher = (*Handler)(nil)
)
