package server

import (
	"github.com/sluicehq/sluice/binding/mcp"
	"runtime/debug"
	"strconv"

	httpb "github.com/sluicehq/sluice/binding/http"
	"github.com/sluicehq/sluice/binding/mcp/jsonrpc"
	"github.com/sluicehq/sluice/engine"
	"github.com/sluicehq/sluice/engine/frame"
	"github.com/sluicehq/sluice/internal/freelist"
)

// server is the mcp server kind on one worker: Streamable HTTP behind an
// http server binding (MCP.md §1, §3.4; ZILLA.md §6). Each network stream
// is one HTTP request, an http application stream: BEGIN with an
// HttpBeginEx of the request headers, DATA the body, END. The server
// answers on the same stream's reply, and turns each MCP request into an
// application stream to its exit, as doc.go describes.
type server struct {
	w          *engine.Worker
	cfg        *engine.BindingConfig
	s          *settings
	table      *sessionTable
	pool       *engine.BufferPool
	exitID     int64
	httpTypeID int32
	mcpTypeID  int32

	// Flyweights reused for every frame.
	begin   frame.Begin
	data    frame.Data
	end     frame.End
	abort   frame.Abort
	flush   frame.Flush
	window  frame.Window
	reset   frame.Reset
	beginB  frame.BeginBuilder
	dataB   frame.DataBuilder
	endB    frame.EndBuilder
	abortB  frame.AbortBuilder
	windowB frame.WindowBuilder
	resetB  frame.ResetBuilder
	httpExB httpb.HttpBeginExBuilder
	mcpEx   mcp.McpBeginEx
	mcpExB  mcp.McpBeginExBuilder
	flushEx mcp.McpFlushEx
	resetEx mcp.McpResetEx
	endEx   mcp.McpEndEx

	// scratch composes local responses and events; name holds a decoded
	// tool name or resource uri while an application BEGIN is built.
	scratch []byte
	name    []byte
	// body tracks a request body, or an application's reply, held whole.
	body jsonrpc.Tracker
	// msg and aux compose an error's message and data.
	msg  []byte
	aux  []byte
	free []*request
	refs []streamRef // scratch for notifications/cancelled
	// trackers scan streaming bodies.
	trackers []*jsonrpc.Tracker
	disc     discovery
	// serverInfo is the "serverInfo" object, and meta the 2026-07-28
	// result _meta member that carries it.
	serverInfo []byte
}

// serverName is the serverInfo name the server reports.
const serverName = "sluice"

func newServer(w *engine.Worker, cfg *engine.BindingConfig, s *settings, t *sessionTable) *server {
	slot := w.BufferPool().SlotCapacity()
	h := &server{
		w: w, cfg: cfg, s: s, table: t, pool: w.BufferPool(), exitID: cfg.ExitID,
		httpTypeID: w.Labels().Supply("http"), mcpTypeID: w.Labels().Supply("mcp"),
		scratch: make([]byte, 0, slot+4096),
		name:    make([]byte, 0, maxName),
		msg:     make([]byte, 0, 1024),
		aux:     make([]byte, 0, 1024),
	}
	h.body.SetOptions(jsonOptions)
	info := jsonrpc.AppendString([]byte(`{"name":`), serverName)
	info = jsonrpc.AppendString(append(info, `,"version":`...), buildVersion())
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

// Detach releases the worker's hold on the session table.
func (h *server) Detach() {
	if h.table.release != nil {
		h.table.release()
	}
}

// NewStream accepts each HTTP request.
func (h *server) NewStream(_ frame.FrameType, buf []byte) engine.MessageConsumer {
	if !h.begin.TryWrap(buf, 0, len(buf)) {
		return nil
	}
	r := h.alloc()
	r.originID, r.routedID = h.begin.OriginID(), h.begin.RoutedID()
	r.initialID = h.begin.StreamID()
	r.replyID = engine.ReplyID(r.initialID)
	return r.onNet
}

// alloc takes a request from the worker's free list.
func (h *server) alloc() *request {
	r := freelist.Pop(&h.free)
	if r == nil {
		r = &request{h: h}
		r.onNet = r.onNetFrame
		r.onApp = r.onAppFrame
	}
	r.reset()
	return r
}

// Versions. The era decides the transport rules: the three 2025
// revisions have sessions (MCP.md §1), 2026-07-28 has none (§3.4).
type version uint8

const (
	verAbsent version = iota // no MCP-Protocol-Version header
	ver20250326
	ver20250618
	ver20251125
	ver20260728
	verUnsupported
)

var versionNames = [...]string{ver20250326: "2025-03-26", ver20250618: "2025-06-18", ver20251125: "2025-11-25", ver20260728: "2026-07-28"}

// versionSet is a bit set of versions.
type versionSet uint8

const allVersions versionSet = 1<<ver20250326 | 1<<ver20250618 | 1<<ver20251125 | 1<<ver20260728

func (s versionSet) has(v version) bool { return v < verUnsupported && s&(1<<v) != 0 }

func parseVersion(v []byte) version {
	for i := ver20250326; i <= ver20260728; i++ {
		if string(v) == versionNames[i] {
			return i
		}
	}
	return verUnsupported
}

// appendVersions appends the supported versions, newest first, as a JSON
// array's items or, with sep ", ", as text.
func (s versionSet) appendList(dst []byte, quoted bool, sep string) []byte {
	first := true
	for v := ver20260728; v >= ver20250326; v-- {
		if !s.has(v) {
			continue
		}
		if !first {
			dst = append(dst, sep...)
		}
		first = false
		if quoted {
			dst = jsonrpc.AppendString(dst, versionNames[v])
		} else {
			dst = append(dst, versionNames[v]...)
		}
	}
	return dst
}

// Methods that open an application stream, with what their params must
// carry (MCP schema; ZILLA.md §6).
type methodInfo struct {
	name  string
	kind  uint8
	param uint8  // paramNone, paramName or paramURI
	list  bool   // takes a cursor
	v2026 bool   // still a method in 2026-07-28
	need  uint16 // the application's capability bit the method needs, or 0
}

const (
	paramNone uint8 = iota
	paramName
	paramURI
)

var methods = [...]methodInfo{
	{"tools/list", mcp.McpBeginExKindToolsList, paramNone, true, true, 0},
	{"tools/call", mcp.McpBeginExKindToolsCall, paramName, false, true, 0},
	{"prompts/list", mcp.McpBeginExKindPromptsList, paramNone, true, true, 0},
	{"prompts/get", mcp.McpBeginExKindPromptsGet, paramName, false, true, 0},
	{"resources/list", mcp.McpBeginExKindResourcesList, paramNone, true, true, 0},
	{"resources/templates/list", mcp.McpBeginExKindResourcesTemplatesList, paramNone, true, true, 0},
	{"resources/read", mcp.McpBeginExKindResourcesRead, paramURI, false, true, 0},
	// 2026-07-28 removed resources/subscribe (MCP.md §3.4).
	{"resources/subscribe", mcp.McpBeginExKindResourcesSubscribe, paramURI, false, false, 0},
	{"resources/unsubscribe", mcp.McpBeginExKindResourcesUnsubscribe, paramURI, false, false, 0},
	// The generic kind, McpBeginEx.request{method}: forwarded only to an
	// application that advertised the capability (a proxy in front of
	// upstream servers); otherwise completion/complete is -32601 and
	// logging/setLevel is answered here.
	{"completion/complete", mcp.McpBeginExKindRequest, paramNone, false, true, capCompletions},
	{"logging/setLevel", mcp.McpBeginExKindRequest, paramNone, false, false, capLogging},
}

func lookupMethod(name []byte) *methodInfo {
	for i := range methods {
		if string(name) == methods[i].name {
			return &methods[i]
		}
	}
	return nil
}

// Capability bits.
const (
	capTools                = uint16(mcp.McpCapabilitiesServerTools)
	capPrompts              = uint16(mcp.McpCapabilitiesServerPrompts)
	capResources            = uint16(mcp.McpCapabilitiesServerResources)
	capToolsListChanged     = uint16(mcp.McpCapabilitiesServerToolsListChanged)
	capPromptsListChanged   = uint16(mcp.McpCapabilitiesServerPromptsListChanged)
	capResourcesListChanged = uint16(mcp.McpCapabilitiesServerResourcesListChanged)
	capResourcesSubscribe   = uint16(mcp.McpCapabilitiesServerResourcesSubscribe)
	capLogging              = uint16(mcp.McpCapabilitiesServerLogging)
	capCompletions          = uint16(mcp.McpCapabilitiesServerCompletions)
	capRoots                = uint16(mcp.McpCapabilitiesClientRoots)
	capSampling             = uint16(mcp.McpCapabilitiesClientSampling)
	capElicitation          = uint16(mcp.McpCapabilitiesClientElicitation)
	capElicitationForm      = uint16(mcp.McpCapabilitiesClientElicitationForm)
	capElicitationURL       = uint16(mcp.McpCapabilitiesClientElicitationUrl)

	// capListChanged is the list_changed notifications a lifecycle may
	// ask for (McpLifecycleBeginEx.subscriptions).
	capListChanged = capToolsListChanged | capPromptsListChanged | capResourcesListChanged
)

// clientCapabilities reads the client capability bits of an initialize's
// (or a 2026-07-28 _meta's) capabilities object. MCP.md §2.2: an empty
// elicitation object means form mode.
func clientCapabilities(caps []byte) uint16 {
	var bits uint16
	if !isObject(caps) {
		return 0
	}
	if jsonrpc.Lookup(caps, "roots") != nil {
		bits |= capRoots
	}
	if jsonrpc.Lookup(caps, "sampling") != nil {
		bits |= capSampling
	}
	if e := jsonrpc.Lookup(caps, "elicitation"); e != nil {
		bits |= capElicitation
		form := jsonrpc.Lookup(e, "form") != nil
		url := jsonrpc.Lookup(e, "url") != nil
		if form || !url {
			bits |= capElicitationForm
		}
		if url {
			bits |= capElicitationURL
		}
	}
	return bits
}

// appendServerCapabilities appends the capabilities object of server bits.
func appendServerCapabilities(dst []byte, bits uint16, subscribe bool) []byte {
	dst = append(dst, '{')
	n := 0
	add := func(name string, has bool, listChanged bool, sub bool) {
		if !has {
			return
		}
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		dst = append(dst, '"')
		dst = append(dst, name...)
		dst = append(dst, `":{`...)
		if sub {
			dst = append(dst, `"subscribe":true`...)
			if listChanged {
				dst = append(dst, ',')
			}
		}
		if listChanged {
			dst = append(dst, `"listChanged":true`...)
		}
		dst = append(dst, '}')
	}
	add("tools", bits&(capTools|capToolsListChanged) != 0, bits&capToolsListChanged != 0, false)
	add("prompts", bits&(capPrompts|capPromptsListChanged) != 0, bits&capPromptsListChanged != 0, false)
	add("resources", bits&(capResources|capResourcesListChanged|capResourcesSubscribe) != 0,
		bits&capResourcesListChanged != 0, subscribe && bits&capResourcesSubscribe != 0)
	add("logging", bits&capLogging != 0, false, false)
	add("completions", bits&capCompletions != 0, false, false)
	return append(dst, '}')
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
