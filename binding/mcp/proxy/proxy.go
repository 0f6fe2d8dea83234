package proxy

import (
	"log/slog"
	"unsafe"

	"github.com/sluicehq/sluice/binding"
	"github.com/sluicehq/sluice/binding/mcp"
	"github.com/sluicehq/sluice/binding/mcp/jsonrpc"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/frame"
	"github.com/sluicehq/sluice/engine/telemetry"
)

func init() { mcp.RegisterKind("proxy", Binding{}) }

// Binding is the mcp proxy kind's process-wide factory.
type Binding struct{}

// instance is a configured proxy on one engine, shared by its workers:
// the compiled routes, which they only read, and the session table.
type instance struct {
	s        *settings
	sessions *sessionTable
}

// Provision compiles the configuration once per engine and makes its
// session table.
func (Binding) Provision(e *engine.Engine, cfg *engine.BindingConfig) (any, error) {
	s, err := compile(e, cfg)
	if err != nil {
		return nil, err
	}
	return &instance{s: s, sessions: newSessionTable()}, nil
}

// Attach makes the proxy's handler for one worker.
func (Binding) Attach(w *engine.Worker, cfg *engine.BindingConfig) (engine.Handler, error) {
	in, err := binding.Provisioned[*instance](cfg)
	if err != nil {
		return nil, err
	}
	h := attach(w, cfg, in)
	if h.guards, err = mcp.AttachRoutes(w, cfg.Name, len(in.s.routes), func(i int) mcp.Guarded { return in.s.routes[i].guarded }); err != nil {
		return nil, err
	}
	if in.s.cache != nil {
		if h.cache, err = newCache(h, in.s.cache); err != nil {
			return nil, err
		}
	}
	return h, nil
}

// Detach stops the cache's watches, timers and leases.
func (h *Handler) Detach() {
	if h.cache != nil {
		h.cache.detach()
	}
}

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

// attach makes the handler of the provisioned proxy in for worker w.
func attach(w *engine.Worker, cfg *engine.BindingConfig, in *instance) *Handler {
	h := &Handler{
		w:          w,
		id:         cfg.ID,
		name:       cfg.Name,
		namespace:  cfg.Namespace,
		typeID:     w.Labels().Supply("mcp"),
		pool:       w.BufferPool(),
		s:          in.s,
		log:        w.Logger().With("binding", cfg.Name),
		sessions:   in.sessions,
		maxPayload: w.MaxFrame() - frame.DataPayloadOffset,
		extBuf:     make([]byte, w.MaxFrame()),
	}
	h.ignoreFn = h.ignore
	h.answers.Init(w, cfg.ID, h.typeID, cfg.Name)
	return h
}

// Handler is the proxy attached to one worker. Its flyweights, builders
// and scratch buffers are reused for every frame of every stream, and
// finished requests go back to a free list, so a routed call allocates
// nothing once the worker has warmed up.
type Handler struct {
	w         *engine.Worker
	id        int64
	name      string
	namespace string
	typeID    int32
	pool      *engine.BufferPool
	s         *settings
	log       *slog.Logger
	sessions  *sessionTable
	cache     *cache // options.cache, nil without one
	metrics   []routeMetrics
	// guards are the checks of each route's guarded clause, by route.
	guards []mcp.GuardChecks
	// shadowLogged is set once a merged list has left out an item whose
	// name an earlier one had: the routes' lists keep doing so, and one
	// warning a worker says it.
	shadowLogged bool
	maxPayload   int
	ignoreFn     engine.MessageConsumer

	freeRequests []*request
	freeLegs     []*leg

	extBuf  []byte // an extension being built, before a frame copies it
	scratch []byte
	cursors []cursorEntry
	matches []match // a search's ranked tools

	invalidArgs *telemetry.Counter // options.tools' refusals, once looked up

	begin frame.Begin

	beginEx mcp.McpBeginEx
	flushEx mcp.McpFlushEx
	endEx   mcp.McpEndEx
	resetEx mcp.McpResetEx

	challengeEx mcp.McpChallengeEx
	elicitExt   []byte // a rewritten elicitation extension

	exB mcp.ExBuilders
	// answers answers the route's client requests the proxy cannot pass
	// on (refuseClientRequest).
	answers mcp.Answers
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
		h.refuse(b, buf, jsonrpc.CodeInvalidRequest, "Invalid request: not an MCP application stream")
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
// copy of the params, is never made. That is, with one route, a call
// without prefixes (the BEGIN the proxy would open for the route is then
// the same: the same kind, session, name or uri, contentLength and
// timeout) whose BEGIN names it and whose name the route allows, and a
// clientResponse (whose id is then the route's own). With several routes
// the proxy relays every call itself: a clientRequest on a call's reply
// needs its id rewritten to name the route. Every other request, and a
// stream whose exit refuses the hand-over, is the proxy's (nil).
func (h *Handler) passThrough(ex *mcp.McpBeginEx, buf []byte) engine.MessageConsumer {
	kind := ex.Kind()
	if len(h.s.routes) != 1 {
		return nil
	}
	if kind == mcp.McpBeginExKindClientResponse {
		// With one route a clientResponse's id is the route's own.
		if v := ex.ClientResponse(); v.HasID() && validID(v.ID()) {
			return h.w.Forward(h.s.routes[0].exitID, buf)
		}
		return nil
	}
	if h.s.prefixed {
		return nil
	}
	var rb mcp.RequestBegin
	if kind == mcp.McpBeginExKindRequest || !rb.Read(ex) || rb.IdentNull {
		return nil
	}
	if h.holdsCall(kind, rb.Ident) {
		return nil
	}
	route, _, ok := h.resolve(isURIKind(kind), kind, rb.Ident, h.begin.Authorization(), &h.scratch)
	if !ok || h.s.routes[route].timed {
		return nil
	}
	return h.w.Forward(h.s.routes[route].exitID, buf)
}

// ignore consumes the frames of a refused stream.
func (h *Handler) ignore(frame.FrameType, []byte) {}

// refuse answers a BEGIN with RESET carrying McpResetEx.error. The stream
// is not kept: the RESET closes both of its directions.
func (h *Handler) refuse(b *frame.Begin, buf []byte, code int32, msg string) {
	var s engine.Stream
	s.Accept(h.w, b.OriginID(), h.id, b.StreamID())
	if _, err := s.OnBegin(buf); err != nil {
		return
	}
	s.In.Trace, s.In.Auth = b.TraceID(), b.Authorization()
	// A refused RESET leaves nothing to close: the helper has retired the
	// stream's registration.
	_ = s.Reset(h.errorResetEx(code, msg))
}

// unsafeString views b as a string for the length of a call that does
// not keep it (path.Match, map lookups).
func unsafeString(b []byte) string {
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// resolve finds the route of a call's name (or uri) and the name the
// route knows it by: with prefixes, the route whose prefix the name
// carries (the longest, should toolkits share a beginning); without, the
// first route whose allow-set has the name. Either way the route's globs
// must allow the name. A ui:// uri's name upstream is built in *scratch.
func (h *Handler) resolve(uri bool, kind uint8, name []byte, auth int64, scratch *[]byte) (int, []byte, bool) {
	routes := h.s.routes
	if !h.s.prefixed {
		for i := range routes {
			if h.allowed(i, auth) && mcp.GlobsAllow(routeGlobs(&routes[i], kind), unsafeString(name)) {
				return i, name, true
			}
		}
		return -1, nil, false
	}
	best, at, n := -1, 0, 0
	for i := range routes {
		if a, m, ok := routes[i].carries(uri, name); ok && (best < 0 || m > n) {
			best, at, n = i, a, m
		}
	}
	if best < 0 {
		return -1, nil, false
	}
	rest := name[at+n:]
	if len(rest) == 0 {
		return -1, nil, false
	}
	if at > 0 {
		*scratch = append(append((*scratch)[:0], name[:at]...), rest...)
		rest = *scratch
	}
	if !h.allowed(best, auth) || !mcp.GlobsAllow(routeGlobs(&routes[best], kind), unsafeString(rest)) {
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

// errorResetEx builds McpResetEx.error{code, msg} into extBuf.
func (h *Handler) errorResetEx(code int32, msg string) []byte {
	n, err := h.exB.Reset.Wrap(h.extBuf, 0, len(h.extBuf)).TypeID(h.typeID).Error().Code(code).Message(msg).BuildLimit()
	if err != nil {
		return nil
	}
	return h.extBuf[:n]
}

// errorEndEx builds McpEndEx{outcome: ERROR} into extBuf.
func (h *Handler) errorEndEx() []byte {
	n, err := h.exB.End.Wrap(h.extBuf, 0, len(h.extBuf)).TypeID(h.typeID).Outcome(mcp.McpOutcomeError).BuildLimit()
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
	_ engine.Binding     = Binding{}
	_ engine.Provisioner = Binding{}
	_ engine.Handler     = (*Handler)(nil)
	_ engine.Detacher    = (*Handler)(nil)
)
