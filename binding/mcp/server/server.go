package server

import (
	"github.com/sluicehq/sluice/binding/mcp"
	"runtime/debug"
	"strconv"

	"github.com/sluicehq/sluice/binding/mcp/jsonrpc"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/frame"
	"github.com/sluicehq/sluice/engine/guard"
	"github.com/sluicehq/sluice/engine/telemetry"
	"github.com/sluicehq/sluice/internal/freelist"
)

// server is the mcp server kind on one worker: Streamable HTTP behind an
// http server binding (MCP.md §1, §3.4; ZILLA.md §6). Each network stream
// is one HTTP request, an http application stream: BEGIN with an
// HttpBeginEx of the request headers, DATA the body, END. The server
// answers on the same stream's reply, and turns each MCP request into an
// application stream to its exit, as doc.go describes.
//
// As Zilla's McpServerFactory keeps one inner stream class per role, each
// request is served by the type of its role, picked by its :method when
// the stream opens: a POST (post.go), whose message may make it an
// application request (exchange, app.go) or a subscriptions/listen
// (listen.go); the session's GET stream (get.go); a DELETE (delete.go).
// They share the request's stream and its response writer (request.go,
// out.go). Each role keeps a free list of its own.
type server struct {
	w          *engine.Worker
	cfg        *engine.BindingConfig
	s          *settings
	table      *sessionTable // the sessions this worker owns
	workers    int
	pool       *engine.BufferPool
	exitID     int64
	httpTypeID int32
	mcpTypeID  int32

	// Flyweights reused for every frame. The relay passes frames through
	// in place (hdr), and builds the ABORT and RESET of its teardown
	// itself: its streams are no engine.Streams of its own.
	hdr     frame.Frame
	begin   frame.Begin
	abortB  frame.AbortBuilder
	resetB  frame.ResetBuilder
	mcpEx   mcp.McpBeginEx
	exB     mcp.ExBuilders
	flushEx mcp.McpFlushEx
	resetEx mcp.McpResetEx
	endEx   mcp.McpEndEx
	// challengeEx reads a CHALLENGE's extension; exB.Flush writes the
	// elicitation FLUSHes (elicit.go).
	challengeEx mcp.McpChallengeEx
	elicitExt   []byte

	// scratch composes local responses and events; name holds a decoded
	// tool name or resource uri while an application BEGIN is built.
	scratch []byte
	name    []byte
	// body tracks a request body, or an application's reply, held whole.
	body jsonrpc.Tracker
	// lists tracks the replies to lists and reads, and last holds the
	// one it tracked last while lastOK: a reply with the same bytes (a
	// list served from the proxy's cache, again and again) reads the
	// same, so it is not tracked again.
	lists  jsonrpc.Tracker
	last   []byte
	lastOK bool
	// msg and aux compose an error's message and data.
	msg []byte
	aux []byte
	// queuedOver is the capacity of the buffers the worker's response
	// queues hold beyond their slots (outQueue.grow), mcp.server.queued;
	// replayHeld that of the buffers its sessions keep events in for
	// replay (replayRing.add), mcp.server.replay.
	queuedOver, replayHeld heldBytes
	// partsDropped holds the id of a client request whose parts were
	// dropped when the next one started (wholeNotification).
	partsDropped []byte
	// droppedEvents is mcp.server.events.dropped, looked up on first use.
	droppedEvents *telemetry.Counter

	// The free lists, one a role.
	posts     []*post
	gets      []*getStream
	deletes   []*deleteRequest
	exchanges []*exchange
	listens   []*listen
	relays    []*relay

	refs []postRef // scratch for notifications/cancelled
	// trackers scan streaming bodies.
	trackers []*jsonrpc.Tracker
	disc     discovery
	// answers sends client answers on their way to the application,
	// clientMsg composes a client request's messages, and cmetrics are
	// the client requests' metrics, looked up on first use (s2c.go).
	answers   mcp.Answers
	clientMsg []byte
	cmetrics  *[len(families)]clientMetrics
	// serverInfo is the "serverInfo" object, and meta the 2026-07-28
	// result _meta member that carries it.
	serverInfo []byte
	// guard checks each request's bearer token (auth.go); nil without
	// options.authorization. unauthorized are the counters of the
	// requests it refused, by error, looked up on first use.
	guard        guard.Handler
	unauthorized [bearerInsufficientScope + 1]*telemetry.Counter
}

// defaultServerName is the serverInfo name the server reports unless the
// mcp.server.name setting names another.
const defaultServerName = "sluice"

func newServer(w *engine.Worker, cfg *engine.BindingConfig, s *settings, ids idSource) *server {
	slot := w.BufferPool().SlotCapacity()
	h := &server{
		w: w, cfg: cfg, s: s, pool: w.BufferPool(), exitID: cfg.ExitID,
		table:      newSessionTable(w.Index(), ids),
		workers:    w.Engine().Workers(),
		httpTypeID: w.Labels().Supply("http"), mcpTypeID: w.Labels().Supply("mcp"),
		scratch: make([]byte, 0, slot+4096),
		name:    make([]byte, 0, maxName),
		msg:     make([]byte, 0, 1024),
		aux:     make([]byte, 0, 1024),
	}
	h.body.SetOptions(jsonOptions)
	h.lists.SetOptions(jsonOptions)
	h.answers.Init(w, cfg.ID, h.mcpTypeID, cfg.Name)
	info := jsonrpc.AppendString([]byte(`{"name":`), s.serverName)
	info = jsonrpc.AppendString(append(info, `,"version":`...), s.serverVersion)
	h.serverInfo = append(info, '}')
	return h
}

// buildVersion is the serverInfo version: the main module's version, or
// "devel" when the binary carries none, as `sluice version` reports it.
func buildVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok || info.Main.Version == "" || info.Main.Version == "(devel)" {
		return "devel"
	}
	return info.Main.Version
}

// NewStream accepts each HTTP request. Its headers, read here, pick the
// role that serves it by its :method.
func (h *server) NewStream(_ frame.FrameType, buf []byte) engine.MessageConsumer {
	if !h.begin.TryWrap(buf, 0, len(buf)) {
		return nil
	}
	var sc headerScan
	h.scanHeaders(h.begin.Extension(), &sc)
	var r *request
	switch sc.method {
	case methodPost:
		p := h.allocPost()
		p.setPostHeaders(&sc)
		r = &p.request
	case methodGet:
		g := h.allocGet()
		g.setLastEventID(sc.lastEventID)
		g.isCB = h.isCallback(sc.path)
		g.isPRM = !g.isCB && h.isWellKnownPRM(sc.path)
		if g.isCB {
			g.setCallback(&sc)
		}
		if g.isCB || g.isPRM {
			sc.flags |= noGuard
		}
		r = &g.request
	default:
		r = &h.allocDelete().request
	}
	r.setHeaders(&sc)
	r.Accept(h.w, h.begin.OriginID(), h.begin.RoutedID(), h.begin.StreamID())
	return r.onNet
}

// allocPost takes a POST from the worker's free list.
func (h *server) allocPost() *post { return popRole(h, &h.posts) }

// allocGet takes a GET stream from the worker's free list.
func (h *server) allocGet() *getStream { return popRole(h, &h.gets) }

// allocDelete takes a DELETE, or a request of a method the endpoint does
// not serve, from the worker's free list.
func (h *server) allocDelete() *deleteRequest { return popRole(h, &h.deletes) }

// putRole puts v, a role whose request is r, back on its free list once
// the request is done.
func putRole[T any](r *request, list *[]*T, v *T) {
	if r.done() {
		r.recycle()
		*list = append(*list, v)
	}
}

// popRole takes a role's struct from its free list, left ready by its
// release, or makes one.
func popRole[T any, P interface {
	*T
	role
	base() *request
	setup(h *server)
}](h *server, list *[]*T) P {
	if v := P(freelist.Pop(list)); v != nil {
		v.base().flags = 0
		return v
	}
	v := P(new(T))
	v.setup(h)
	return v
}

// versionSet is a bit set of versions: those the server speaks.
type versionSet uint8

const allVersions versionSet = 1<<mcp.Version20250326 | 1<<mcp.Version20250618 | 1<<mcp.Version20251125 | 1<<mcp.Version20260728

func (s versionSet) has(v mcp.Version) bool { return v < mcp.VersionUnsupported && s&(1<<v) != 0 }

// appendList appends the versions in s, newest first, as a JSON array's
// items or, with sep ", ", as text.
func (s versionSet) appendList(dst []byte, quoted bool, sep string) []byte {
	first := true
	for v := mcp.Version20260728; v >= mcp.Version20250326; v-- {
		if !s.has(v) {
			continue
		}
		if !first {
			dst = append(dst, sep...)
		}
		first = false
		if quoted {
			dst = jsonrpc.AppendString(dst, v.String())
		} else {
			dst = append(dst, v.String()...)
		}
	}
	return dst
}

// Capability bits, as the lifecycle extensions carry them: capLogging
// the server's, capListChanged the list_changed notifications a lifecycle
// may ask for (McpLifecycleBeginEx.subscriptions).
const (
	capLogging     = uint16(mcp.McpCapabilitiesServerLogging)
	capListChanged = uint16(mcp.ListChangedCapabilities)
)

// clientCapabilities reads the client capability bits of an initialize's
// (or a 2026-07-28 _meta's) capabilities object.
func clientCapabilities(caps []byte) uint16 {
	return uint16(mcp.ParseClientCapabilities(caps))
}

// JSON-RPC and MCP error codes (MCP.md §1.5, §3.3).
const (
	codeParseError      = -32700
	codeInvalidRequest  = -32600
	codeMethodNotFound  = -32601
	codeInvalidParams   = -32602
	codeInternalError   = -32603
	codeTransport       = -32000 // the SDKs' "Bad Request: …", "Not Acceptable: …"
	codeSessionNotFound = -32001
	codeHeaderMismatch  = -32020
	codeMissingCapabil  = -32021
	codeUnsupportedVer  = -32022
)

// statusString is a status code's text, without allocating for the
// statuses the server answers.
func statusString(status int) string {
	switch status {
	case 200:
		return "200"
	case 202:
		return "202"
	case 400:
		return "400"
	case 401:
		return "401"
	case 403:
		return "403"
	case 404:
		return "404"
	case 405:
		return "405"
	case 406:
		return "406"
	case 409:
		return "409"
	case 413:
		return "413"
	case 500:
		return "500"
	case 503:
		return "503"
	}
	return strconv.Itoa(status)
}
