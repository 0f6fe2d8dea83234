// Package mcp is the mcp binding (type mcp; kinds server, proxy and
// client) and the MCP frame extensions it speaks, generated from
// idl/mcp.idl with Zilla's type, case and field names:
//
//   - [McpBeginEx] names the stream: a session's lifecycle, or one request kind.
//   - [McpFlushEx] carries notifications, progress and elicitation steps.
//   - [McpChallengeEx] asks for resume, suspension or elicitation.
//   - [McpResetEx] carries a bearer challenge or a JSON-RPC error.
//   - [McpAbortEx] and [McpEndEx] carry a reason and an outcome.
//   - [McpCapabilities] are the capability bits of a lifecycle stream, and
//     of the list_changed notifications it asks for
//     ([McpLifecycleBeginEx.Subscriptions]).
//
// The request kinds are toolsList, toolsCall, promptsList, promptsGet,
// resourcesList, resourcesRead, resourcesTemplatesList, resourcesSubscribe
// and resourcesUnsubscribe.
//
// Building a tools/call BEGIN extension and reading it back:
//
//	var b mcp.McpBeginExBuilder
//	b.Wrap(buf, 0, len(buf)).TypeID(mcpTypeID).
//		ToolsCall().SessionID(session).Name("get_weather").ContentLength(int32(len(params)))
//	ex, err := b.Build()
//	call := ex.ToolsCall() // when ex.Kind() == mcp.McpBeginExKindToolsCall
//
// # The server kind
//
// The server speaks MCP Streamable HTTP (the design notes' MCP.md §1 and
// §3) behind an http server binding, and turns it into MCP application
// streams to its exit, the application (the toolkit binding, or the proxy
// kind once it exists):
//
//	bindings:
//	  http0: {type: http, kind: server, exit: mcp0}
//	  mcp0:
//	    type: mcp
//	    kind: server
//	    exit: app0
//	    options:
//	      hosts: ["mcp.example:443"]         # Host values answered; none: any
//	      origins: ["https://app.example"]  # besides the request's own host
//	      inactivity: {timeout: PT60S}
//	      sse: {keepalive: {interval: PT15S}, replay: 64}
//	      get: true                          # false: GET gets 405
//	      versions: [2025-03-26, 2025-06-18, 2025-11-25, 2026-07-28]
//	      limits: {body: 1048576}
//	  app0: {type: toolkit, kind: server}
//
// Its network side is one http application stream per HTTP request:
// BEGIN with an HttpBeginEx of the request headers (:method, :scheme,
// :authority, :path and lower-case fields), DATA the body, END. It answers
// on the same stream's reply: BEGIN with :status and headers, DATA, END.
// JSON responses carry a content-length; an event stream has none, and the
// http server writes it chunked, event by event.
//
// One endpoint serves every version. A request whose MCP-Protocol-Version
// is 2026-07-28 is stateless (§3.4); any other is of a session, with an
// absent header read as 2025-03-26 (§1.3).
//
// Sessions (2025-03-26, 2025-06-18, 2025-11-25):
//
//   - initialize creates a session. Its id (mcp-session-id) is 32 hex
//     digits: 120 random bits and the owner worker's index. The server
//     opens the session's lifecycle stream, BEGIN
//     McpBeginEx.lifecycle{sessionId, capabilities = the client's bits
//     (CLIENT_ROOTS, CLIENT_SAMPLING, CLIENT_ELICITATION and its FORM and
//     URL modes), subscriptions = every list_changed bit
//     (SERVER_TOOLS_LIST_CHANGED | SERVER_PROMPTS_LIST_CHANGED |
//     SERVER_RESOURCES_LIST_CHANGED, 56: the session's GET stream may want
//     them)}, and answers when the application's lifecycle BEGIN
//     comes back: the initialize result is the server's own, with the
//     negotiated version (the client's if supported, else the latest),
//     the capabilities of the application's bits and serverInfo
//     {"name":"sluice","version":…}. A sessionId in the application's
//     reply is the one its request streams then carry.
//   - The lifecycle stays open. Its FLUSHes toolsListChanged,
//     promptsListChanged, resourcesListChanged, resourcesUpdated{uri} and
//     notification{method, params} become notifications on the session's
//     GET stream. DELETE, an
//     inactivity.timeout without requests (a session with a GET stream or
//     requests in flight is in use) or the application ending it end the
//     session: the lifecycle ENDs, the GET stream ends, and the session's
//     requests get 404.
//   - notifications/initialized, any other notification and any client
//     response get 202; ping is answered {}. logging/setLevel is answered
//     {} too, unless the application's lifecycle BEGIN advertised
//     SERVER_LOGGING; then it goes to the application like
//     completion/complete (which needs SERVER_COMPLETIONS, else -32601),
//     as the generic kind McpBeginEx.request{sessionId, method}. A proxy
//     in front of upstream servers advertises both; the toolkit neither. notifications/cancelled ABORTs
//     the named request's application stream (if its request side is
//     still open) and RESETs its reply, and ends its HTTP response with no
//     JSON-RPC answer.
//   - GET opens the session's event stream (one per session; another gets
//     409). At 2025-11-25 a priming event (id, empty data) comes first.
//     Event ids are "<stream>-<seq>": stream 0 is the GET stream, each POST
//     that turned into an event stream has its own number. The session keeps
//     its last sse.replay events; a GET with Last-Event-ID replays those of
//     the stream named after that id and then carries the rest of that
//     stream, for a POST whose client went away (a disconnect is not a
//     cancellation: its request goes on). An idle GET stream gets ":\n\n"
//     every sse.keepalive.interval.
//
// Stateless requests (2026-07-28): no session, no GET (405, allow: POST),
// no DELETE. Every request carries Mcp-Method, and tools/call, prompts/get
// and resources/read carry Mcp-Name (plain, or =?base64?…?=), which must
// match the body (400, -32020); its params carry
// _meta["io.modelcontextprotocol/protocolVersion"], equal to the header
// (-32020), and _meta["io.modelcontextprotocol/clientCapabilities"] (400,
// -32602 when missing), server/discover and subscriptions/listen included.
// server/discover is answered with the supported versions and the
// capabilities a transient lifecycle stream (null session id,
// subscriptions 0) got from the application, cached per worker. Every
// result gets "resultType":"complete" (unless the application set a
// resultType, such as input_required) and
// _meta["io.modelcontextprotocol/serverInfo"], spliced in after the
// result's opening brace; the results of tools/list, prompts/list,
// resources/list, resources/templates/list and resources/read, and the
// DiscoverResult, also get SEP-2549's caching hints "ttlMs":0 (stale at
// once) and "cacheScope":"public" where the application set none (one scan
// of the result's top level finds its own). An unknown method is 404
// (-32601); an application error -32020, -32021 or -32022 is 400, and an
// application's -32002 "Resource not found" (the code up to 2025-11-25)
// reaches the client as -32602 (SEP-2164), so one application serves both
// eras.
//
// subscriptions/listen (2026-07-28 only; SEP-2575, after go-sdk v1.8.0)
// takes params.notifications {toolsListChanged, promptsListChanged,
// resourcesListChanged} (missing: 400 -32602) and opens a lifecycle stream
// of its own: BEGIN McpBeginEx.lifecycle{sessionId null, capabilities = the
// client's bits from _meta clientCapabilities, subscriptions = the
// list_changed bits asked for}. The application's reply BEGIN decides what
// is agreed: the bits asked for that its capabilities have.
//
//   - Nothing agreed: the answer is at once the SubscriptionsListenResult,
//     {"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":
//     <the request's id>, serverInfo}}, and the lifecycle ENDs.
//   - Otherwise the response is an event stream (no event ids). Its first
//     event is notifications/subscriptions/acknowledged with params
//     {"notifications":{the agreed flags},"_meta":{subscriptionId}}; each
//     lifecycle FLUSH toolsListChanged, promptsListChanged or
//     resourcesListChanged of an agreed kind becomes
//     notifications/<kind>/list_changed with params {"_meta":
//     {subscriptionId}}, and any other FLUSH is dropped; an idle stream
//     gets ":\n\n" every sse.keepalive.interval.
//   - The HTTP client leaving (ABORT of the request, RESET of the
//     response) ENDs the lifecycle. The application ENDing it ends the
//     stream with the SubscriptionsListenResult as its last event; an
//     ABORT aborts the response; a refusal before the reply BEGIN is
//     -32603.
//
// Resource-URI subscriptions (notifications.resourceSubscriptions, which
// replace resources/subscribe) are not taken: the member is ignored, and
// no notifications/resources/updated is sent on a listen stream.
//
// Each request (tools/list, tools/call, prompts/list, prompts/get,
// resources/list, resources/templates/list, resources/read and, before
// 2026-07-28, resources/subscribe and resources/unsubscribe) opens one
// application stream:
//
//   - BEGIN McpBeginEx.<kind>{sessionId (null when stateless), name or uri,
//     contentLength = the params' length, timeout 0}; DATA exactly the
//     params object ({} when absent), once the application grants credit;
//     END.
//   - The reply: BEGIN; FLUSH McpFlushEx.progress{token (the progressToken's
//     JSON text), progress, total (-1: none), message} and FLUSH
//     McpFlushEx.notification{method, params} (any other notification,
//     such as notifications/message, relayed as it came) as notifications;
//     DATA the bare result; END. A notification whose params outgrow a
//     frame comes in parts (total ≥ 0: each FLUSH carries the params bytes
//     from start on); the server puts them back together, on a request's
//     reply as on a lifecycle, and drops with a warning parts that do not
//     follow on or add up past MaxNotification (1 MiB). With McpEndEx{outcome: ERROR} the DATA was
//     a JSON-RPC error object, relayed as the response's "error".
//   - The response is application/json with {"jsonrpc":"2.0","id":<the id
//     as sent>,"result":…}, or, once a progress FLUSH came first, an event
//     stream: the notifications/progress events, then the response.
//   - A RESET of the request with McpResetEx.error{code, message} is a
//     JSON-RPC error; with McpResetEx.bearer a 401 (invalid_token), 403
//     (insufficient_scope) or 400 (invalid_request) with WWW-Authenticate:
//     Bearer realm=…, error=…, scope=…, resource_metadata=…. The engine
//     delivers no RESET after the request's END: an application refuses
//     before it has read the params, or answers with the ERROR outcome.
//     An ABORT of the reply is -32603.
//
// The server answers by itself: a POST whose Accept lacks
// application/json or text/event-stream (*/* counts as both) 406; a body
// that is not JSON 400 -32700; a batch (2025-03-26 allowed them;
// 2025-06-18 removed them; the server takes none) or anything but a
// JSON-RPC object 400 -32600; a missing session id 400, an unknown or
// ended session 404 -32001; an unsupported MCP-Protocol-Version 400 (with
// a session) or 400 -32022 with data {supported, requested} (without);
// a Host not in hosts (when set) 403, and an Origin neither listed in
// origins nor naming the request's own :authority 403, where that
// authority counts only when hosts is set or it is a loopback name
// (DNS rebinding protection: a rebound name sends Host and Origin alike;
// requests without Origin pass); an unknown method -32601 and bad params or cursor -32602 (200
// before 2026-07-28); another HTTP method 405 with allow; a body over
// limits.body 413.
//
// Bodies are held in one buffer slot (32 KiB by default) and scanned
// there without allocating. A larger one streams (up to limits.body): its
// params go to the application as they arrive, with contentLength -1,
// which needs the method before the params (else 400 -32600), and the
// tool name or uri, and for 2026-07-28 the _meta, within the first slot
// (else 413), since they are checked before the params pass; the name in
// the BEGIN is null when the first slot does not show it (the application
// takes the one in the params). A result held in its slot is answered with
// its length; a larger one streams through, with its members spliced
// blindly (2026-07-28).
//
// # Workers and sessions
//
// An HTTP client's connections land on any worker. A session belongs to
// the worker that took its initialize, its owner, whose id it carries:
// the owner alone holds the session, its lifecycle stream, notifications,
// timer, GET stream and requests. A request naming a session on another
// worker is relayed to the owner over a stream of the server's own
// (binding/mcp/server, relay.go), so no session state is shared between
// workers and none of it is locked.
//
// Test-only: options.sessions.ids: sequential makes session ids
// session-1, session-2, … so that engine-driven scripts know them. Such
// ids are guessable: never use it in production.
package mcp
