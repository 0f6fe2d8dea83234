// Package server is the mcp binding's server kind (type mcp, kind server):
// MCP Streamable HTTP (the design notes' MCP.md §1 and §3), protocol
// versions 2025-03-26 through 2026-07-28, behind an http server binding.
// It turns each MCP request into an application stream to its exit, the
// application: a toolkit binding, or the proxy kind
// ([github.com/sluicehq/sluice/binding/mcp/proxy]) in front of several.
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
//	      inactivity: {timeout: PT60S, stream: PT1H}
//	      sse: {keepalive: {interval: PT15S}, replay: 64}
//	      get: true                          # false: GET gets 405
//	      versions: [2025-03-26, 2025-06-18, 2025-11-25, 2026-07-28]
//	      limits: {body: 1048576, sessions: 10000, sessionsPerAddress: 1000, inflight: 128}
//	      elicitation: {timeout: PT10M}      # the client's time to answer an elicitation
//	      sampling: {timeout: PT60S}         # … sampling/createMessage, roots/list, ping
//	  app0: {type: toolkit, kind: server}
//
// Its network side is one http application stream per HTTP request:
// BEGIN with an HttpBeginEx of the request headers (:scheme, :method,
// :path, :authority and lower-case fields, in any order), DATA the body,
// END. It answers
// on the same stream's reply: BEGIN with :status and headers, DATA, END.
// JSON responses carry a content-length; an event stream has none, and the
// http server writes it chunked, event by event.
//
// One endpoint serves every version. A request whose MCP-Protocol-Version
// is 2026-07-28 is stateless (MCP.md §3.4); any other is of a session,
// with an absent header read as 2025-03-26 (§1.3).
//
// # Sessions (2025-03-26, 2025-06-18, 2025-11-25)
//
//   - initialize creates a session. Its id (mcp-session-id) is 32 hex
//     digits: 120 random bits and the owner worker's index. The server
//     opens the session's lifecycle stream, BEGIN
//     McpBeginEx.lifecycle{sessionId, capabilities = the client's bits,
//     subscriptions = every list_changed bit, since the session's GET
//     stream may want them}, and answers when the application's lifecycle
//     BEGIN comes back: the initialize result is the server's own, with
//     the negotiated version (the client's if supported, else the latest),
//     the capabilities of the application's bits and serverInfo
//     {"name":"sluice","version":…} (the mcp.server.name and
//     mcp.server.version engine settings change it). A sessionId in the
//     application's reply is the one its request streams then carry. An
//     application that has not answered within inactivity.timeout has
//     its lifecycle reset and ended, and the client gets -32603 "Internal
//     error: the application did not answer initialize in time". An
//     application that refuses the lifecycle with McpResetEx.bearer gets
//     the initialize answered with that challenge, as a request's bearer
//     RESET is (see "Request streams"); with any other RESET, -32603.
//   - The lifecycle stays open. Its FLUSHes toolsListChanged,
//     promptsListChanged, resourcesListChanged, resourcesUpdated{uri} and
//     notification{method, params} become notifications on the session's
//     GET stream. DELETE, an inactivity.timeout without requests (a
//     session with requests in flight is in use; one whose GET stream
//     ended is idle from then), an inactivity.stream (default PT1H)
//     without requests for a session whose only use is its GET stream,
//     however its keep-alives go, or the application ending it end the
//     session: the lifecycle ENDs, the GET stream ends, and the
//     session's requests get 404. DELETE also cancels the session's
//     requests in flight, as notifications/cancelled cancels one (their
//     responses end without an answer and their application replies are
//     RESET): the client that ended the session waits for none of them.
//   - limits.sessions (default 10000; 0 for none) bounds the binding's
//     live sessions, on all its workers: an initialize beyond it gets 503
//     -32000 "Service Unavailable: too many sessions" (initializes in
//     flight are not counted, so it may be passed by as many). And
//     limits.inflight (default 128; 0 for none) bounds one session's
//     requests in flight: one more gets -32000 "Too many requests in
//     flight: the session's limit is N" at once. inactivity.stream and
//     both limits are Sluice's: Zilla has no such options. So is
//     limits.sessionsPerAddress (default 1000; 0 for none), which bounds
//     the live sessions of one client address, the :remote-address the
//     http server names, on all the binding's workers: an initialize
//     beyond it gets 503 -32000 "Service Unavailable: too many sessions
//     from this address". A session counts from its initialize (so
//     initializes in flight count too) until it ends; a request with no
//     :remote-address counts against no address. Behind a load balancer
//     every client has its address: raise the limit or set it to 0.
//   - notifications/initialized and any other notification get 202, as
//     does a client response to a request the session's client was sent
//     (below); ping is answered {}. logging/setLevel is answered
//     {} too, unless the application's lifecycle BEGIN declared
//     SERVER_LOGGING; then it goes to the application like
//     completion/complete (which needs SERVER_COMPLETIONS, else -32601), as
//     the generic kind McpBeginEx.request{sessionId, method}. The proxy
//     kind declares both; the toolkit neither. notifications/cancelled
//     ABORTs the named request's application stream (if its request side
//     is still open) and RESETs its reply, and ends its HTTP response with
//     no JSON-RPC answer.
//   - GET opens the session's event stream (one per session; another gets
//     409). At 2025-11-25 a priming event (id, empty data) comes first.
//     Event ids are Zilla's "<requestId>:<n>": a POST that turned into an
//     event stream names it by its request's JSON-RPC id (a number's text
//     as it is; a string's content with each byte outside A-Z a-z 0-9
//     . _ ~ - encoded as %XX, so the id holds no ':' and stays one SSE
//     line), and the GET stream by the empty text, so its ids are ":<n>".
//     n counts the stream's events, the priming event 0. A request whose
//     id makes an empty text ("") or one over 64 bytes gets events without
//     ids, which cannot be resumed. The session keeps its last sse.replay
//     events of up to 16 KiB each, and a worker's sessions 64 MiB in all
//     (past which an event is sent but not kept); a GET with Last-Event-ID "<requestId>:<n>" replays the kept
//     events after n of the newest stream of the session with that
//     requestId (MCP asks ids to be unique in a session; a client that
//     reuses one resumes its latest request) and then carries the rest of
//     that stream, for a POST whose client went away (a disconnect is not a
//     cancellation: its request goes on); ":<n>" replays the GET stream's.
//     A Last-Event-ID of another form, or naming no stream of the session,
//     opens the GET stream as if it had none. An idle GET stream gets
//     ":\n\n" every sse.keepalive.interval.
//
// Sluice's event ids differ from Zilla's on purpose: Zilla's n is an id
// the application gives its resumable and progress FLUSHes, and only
// those events carry one, where Sluice numbers every event itself, the
// response too; Zilla writes a string id's text raw, where Sluice encodes
// it; and Zilla answers 400 to a Last-Event-ID whose requestId names no
// request, where Sluice opens the stream without replay, as it does for
// an id it did not write (Zilla's lifecycle.events.resume opens one for
// "event-99").
//
// # Server-to-client requests (s2c.go)
//
// The upstream server may ask its client something (elicitation/create,
// sampling/createMessage, roots/list, ping). Such a request arrives as a
// FLUSH McpFlushEx.clientRequest{id, method, params} (params in parts
// like a notification's when large) on the reply of the request stream
// whose answer it belongs to, or on the session's lifecycle reply. The
// server gives it an id of its own, "s2c-<n>" (a JSON string, counted per
// session), and sends {"jsonrpc":"2.0","id":"s2c-<n>","method":…,"params":…}
// on that request's response, which becomes an event stream as it does for
// progress, or, from the lifecycle, on the session's GET stream. One from
// the lifecycle before the session's first GET stream is held for it, up
// to 10 s, and goes out as the stream opens: an upstream may ask as soon
// as its own session starts, which behind a gateway is before the client
// has its initialize answer. The application's id stays with the server, which never trusts the client's
// ids: a POSTed response (id and result or error, no method) names an
// outstanding request of this session, or it is refused, 400 -32600, and
// goes nowhere. A known one is answered 202 and opens a stream of its own
// to the exit: BEGIN McpBeginEx.clientResponse{sessionId, id (the
// application's), error (1: an error object), contentLength}, DATA the
// result or error object, END; the reply ENDs once the upstream took it,
// or is RESET.
//
// The server answers the application itself, with a clientResponse whose
// error is
//
//   - -32601 "Method not found" when the client did not declare what the
//     method needs (fail closed): elicitation (form; a "url" mode needs
//     elicitation.url), sampling or roots; ping needs nothing, and any
//     other method is refused; also for a 2026-07-28 request, which has no
//     session to reach its client by;
//   - -32602 "Invalid params" when the params are not an object, or name
//     an elicitation's mode twice, in another case ("MODE", which
//     encoding/json reads as the mode) or as neither "form" nor "url": the
//     client could read another need than the one checked;
//   - -32603 when no stream is open to carry it (a lifecycle request and
//     no GET stream, once one has been or after the 10 s, or a response
//     already over or streaming JSON), or
//     when the session has 64 outstanding already;
//   - -32001 "Request timed out" when the client does not answer within
//     elicitation.timeout (default PT10M) or sampling.timeout (PT60S, for
//     sampling, roots/list and ping); the client then gets
//     notifications/cancelled {requestId, reason "timeout"} on the same
//     stream;
//   - -32800 "Request cancelled" when the client sends
//     notifications/cancelled for it;
//   - -32603 "Client session closed" for each one outstanding when the
//     session ends.
//
// The upstream's notifications/cancelled whose requestId is the
// application's id of an outstanding one reaches the client with the
// server's id instead, and the request is forgotten; any other is relayed
// as it came. (Behind the proxy kind, the proxy maps the requestId to its
// own id, as it maps the request's.)
//
// When the request whose response carries one ends first (its result, an
// error, a cancellation), the client gets notifications/cancelled for it
// ahead of the result, and it is forgotten: the application ended its side
// already. A subscriptions/listen's lifecycle takes no client requests.
//
// Metrics (per binding): <family>.requests, .completed{action}, .timeout
// and .duration (a histogram recorded in milliseconds, exported to
// Prometheus in seconds: elicitation_duration_seconds), for the families
// elicitation (action accept, decline or cancel; an error counts as
// cancel), sampling and roots (action ok or error); ping has none. Each
// step of a request's life (created, delivered, completed, timeout,
// cancelled, error) is one "mcp client request" log record with the
// session, the ids and the method.
//
// # The legacy shim (shim.go)
//
// A 2025-era client cannot use an input_required result (MCP.md §3), so
// the server fulfils one itself, as the TypeScript SDK's legacy shim
// does (seed 004). When the application answers a session's tools/call,
// prompts/get or resources/read with a result whose resultType is
// "input_required", the result goes no further:
//
//   - each of its inputRequests (elicitation/create,
//     sampling/createMessage, roots/list) is sent to the client as a
//     request of the server's ("s2c-<n>", as above) on the call's
//     response, an event stream from then on; a URL-mode elicitation
//     without an elicitationId gets a random one, and each request's
//     _meta.progressToken is its own id (replacing one the upstream
//     wrote), as the TypeScript SDK's legs carry one. The whole round is
//     checked against the client's capabilities first: one it lacks sends
//     nothing and ends the call, except a URL-mode elicitation toward a
//     client that does not take that mode, which ends it the 2025-era
//     way, -32042 with the elicitation in its data (seed 001);
//   - the client's answers, by key, stay with the server (no
//     clientResponse stream); a decline or a cancel is an answer. Once
//     all are in, the call is made again on a new application stream of
//     the same kind and name, its params the client's (without any
//     inputResponses or requestState of their own) plus
//     "inputResponses" {key: the client's result} and the upstream's
//     "requestState", its JSON text byte for byte (absent when the
//     upstream sent none). A result with requestState alone is retried at
//     once;
//   - the retry's reply is read the same way, round after round; the
//     final result reaches the client under the call's own id.
//
// options.inputRequired bounds it: maxRounds (default 8) input_required
// results per call, and roundTimeout (default PT600S) for each request
// the shim sends the client, after which the client gets
// notifications/cancelled for it; the client's notifications/progress
// naming the request's progressToken restarts its roundTimeout (seed
// 004's resetTimeoutOnProgress). Past the cap, on a timeout, on a
// capability the client lacks, or when the client answers with an error,
// the call ends: a tools/call with a tool result {"content":[{"type":
// "text","text":<why>}],"isError":true}, prompts/get and resources/read
// with a JSON-RPC error (-32001 for a timeout, else -32603). A malformed
// input_required result is a JSON-RPC error for every kind; malformed
// includes inputRequests or requestState named twice, a key of
// inputRequests given twice (as keys decode), and params that are not an
// object or name no one elicitation mode, which the client could read
// otherwise than the shim checked them. The client's
// notifications/cancelled for the call cancels the shim's requests and
// ends the response without an answer. The requests count in the
// elicitation, sampling and roots metrics.
//
// # Rounds of a 2026-07-28 call (rounds.go)
//
// Toward a 2026-07-28 client, input_required results, inputResponses and
// requestState pass through unchanged, requestState byte for byte. The
// server counts the rounds of one logical call all the same: it keeps
// each input_required result's requestState (a seeded hash of it) with
// its round, for roundTimeout, in a table the workers share (at most
// 65536 states); a retry that brings one back continues its count. The
// input_required result past maxRounds is replaced by the JSON-RPC error
// -32603 "input_required rounds exceeded: …". A requestState the table
// does not know (expired, or issued through another instance, as the
// table is per process) starts a count afresh, and a result without one
// starts no chain. An input_required result that names inputRequests or
// requestState twice, and any result that names resultType twice, has two
// readings and ends the call with -32603 instead (a result too big to
// hold, whose head is already out, has its response cut short). Bodies
// and results too big to hold (larger than a slot) are counted as they
// stream: a second Tracker follows a retry's params for its requestState,
// whose text a seeded hash sums as it passes, and the Tracker that
// follows a result to its closing brace sums its requestState the same
// way (and notes an inputRequests named twice); a result past maxRounds,
// whose head is out, is cut short.
//
// A call the shim may serve keeps its body's buffer slot until its reply
// ends, for the retry; the result's resultType is found by the scan that
// validates the result, so a complete result costs nothing more. A call
// whose body streamed (larger than a slot) is not retried: its
// input_required result passes as it came.
//
// # URL-mode elicitation (elicit.go)
//
// As Zilla's server kind: the application asks with a CHALLENGE
// McpChallengeEx.elicitCreate{id, url, message, correlationId} on a
// request's stream, before the END that follows its params, or on the
// lifecycle. (Zilla's server holds a request's END until the reply ends,
// so its application may also ask once it has read the END-less params,
// as its tools.call.elicit.deferred does; Sluice's ends the request with
// its params, and a CHALLENGE after that END is not read.) The
// client gets {"method":"elicitation/create","params":{"mode":"url",
// "elicitationId","url","message"}} on that request's response (an event
// stream from then on) or on the GET stream; with a correlationId it is a
// request under the server's id "s2c-<n>", answered as above but reaching
// the application as FLUSH elicitResponse{correlationId, action ACCEPT,
// DECLINE or CANCEL} on the stream that asked (CANCEL too when the client
// cancels it or elicitation.timeout passes); without one it is sent as a
// notification, as Zilla sends it. A client that did not declare
// elicitation.url gets instead -32042 "URL elicitation required" with the
// URL in the error's data, and the request ends. The data is MCP's
// {"elicitations":[{"mode":"url","elicitationId","url","message"}]},
// which clients (the Go SDK's among them) parse; Zilla writes the bare
// array, which they cannot.
//
// The server brokers the elicitation when the URL's redirect_uri
// (decoded) is its own callback: <:scheme>://<:authority><:path without
// query>/<options.elicitation.callback> (default auth/callback) of the
// request that asked (of the initialize, for the lifecycle). It then
// prefixes the URL's state with "<sessionId>.<elicitationId>." and keeps
// the elicitation in its session until GET …/<callback>?…&state=… names
// it: that session, that id and the state the upstream made (each dot is
// tried as the session id's end, since ids may hold one). The callback is
// sent to the application verbatim, its state as the upstream made it, as
// FLUSH elicitCallback{url, correlationId}, and answered 200 text/plain;
// an elicitation completes once, and any callback that names no pending
// one of that session (unknown, completed, expired, another session's) is
// answered 410 text/plain "Authorization session expired or unknown.",
// the same for every cause. A GET of the callback on another worker than
// the session's is relayed to its owner by the session id in its state.
//
// The request's END toward the application waits while its elicitation
// awaits the callback or the client's answer, so that the application
// sees BEGIN, the params, the FLUSHes, END. The application's FLUSH
// elicitComplete{id} becomes notifications/elicitation/complete
// {elicitationId} and ends the wait. Sluice differs from Zilla on
// purpose in one place: an application that ABORTs a call after the
// client declined ends it with -32000 "Authorization declined", after a
// cancel or timeout with -32000 "Authorization timed out" (Zilla aborts
// the response), as Zilla's elicitation design states it for its
// DECLINED and CANCELLED outcomes. Events carry the ids of every other
// event on the request's stream (<requestId>:<n>, as Zilla's "id: 2:1"
// for the elicitation/create of request 2) and resume with Last-Event-ID.
// Metrics: the elicitation family with mode="url".
//
// # Stateless requests (2026-07-28)
//
// No session, no GET (405, allow: POST), no DELETE. Every request carries
// Mcp-Method, and tools/call, prompts/get and resources/read carry
// Mcp-Name (plain, or =?base64?…?=), which must match the body (400,
// -32020). A request's params carry
// _meta["io.modelcontextprotocol/protocolVersion"], equal to the header
// (-32020), and _meta["io.modelcontextprotocol/clientCapabilities"] (400,
// -32602 when missing), server/discover and subscriptions/listen
// included. Mcp-Method and Mcp-Name, like Mcp-Session-Id,
// MCP-Protocol-Version, Last-Event-ID and Origin in either era, are each
// read as one value: one given twice is 400 -32000, since an
// intermediary that reads the first or both joined would read another
// request.
// server/discover is answered with the supported versions and the
// capabilities a transient lifecycle stream (null session id,
// subscriptions 0) got from the application, cached per worker (an
// application silent for inactivity.timeout has it reset, and the
// requests waiting for it get -32603). Every
// result gets "resultType":"complete" (unless the application set a
// resultType, such as input_required) and
// _meta["io.modelcontextprotocol/serverInfo"], spliced in after the
// result's opening brace; the results of the lists and of resources/read,
// and the DiscoverResult, also get SEP-2549's caching hints "ttlMs":0
// (stale at once) and "cacheScope":"public" where the application set
// none. An unknown method is 404 (-32601); an application error -32020,
// -32021 or -32022 is 400, and an application's -32002 "Resource not
// found" (the code up to 2025-11-25) reaches the client as -32602
// (SEP-2164), so one application serves both eras.
//
// The other way, a 2026-07-28 application's result toward a 2025-era
// client (a session) loses those members: resultType, ttlMs, cacheScope
// and _meta's serverInfo (the _meta with it when nothing else is in it).
// Only a complete result (an input_required one is the shim's) and the
// results of the lists and of resources/read are looked at, so a 2025
// application's tools/call results pass without a scan; a result with
// none of them, and one too large for a slot, pass as they are.
//
// Custom parameter headers (SEP-2243): the server learns, per binding
// (shared by its workers, up to mcp.MaxParamTools tools), the
// x-mcp-header declarations of the tools in every tools/list result it
// sends, by the names its clients see; a relisting replaces a tool's, and
// a tool whose declarations clients must refuse is not learned. A result
// too large for its buffer slot streams through unread, and its tools
// are not learned. A 2026-07-28 tools/call of a learned tool is then
// checked against its Mcp-Param-<Name> headers (names without regard to
// case, values with their optional white space trimmed), each declared
// argument in turn, before the application sees it; 400 -32020 with
// go-sdk's messages after "Header mismatch: " when a present, non-null
// argument's header is missing ("missing Mcp-Param-Region header for
// parameter \"region\""), is not valid =?base64?…?= ("… header contains
// invalid Base64 encoding"), or differs ("… header value '<v>' does not
// match body value"; integers compare by value, 7.0 matching 7), when a
// header names an absent or null argument ("unexpected … header for
// absent or null parameter …") or an argument that is not a string,
// integer or boolean, and, Sluice's addition so that the header has one
// reading, when a declared header comes twice ("… header appears more
// than once"). Headers for undeclared names are not checked, as go-sdk
// does not. A tool not learned is not checked; a call of a learned tool
// whose body streams (larger than a slot) cannot be and gets 413. The
// 2025-era path has no such headers and does no such check.
//
// subscriptions/listen (SEP-2575) takes params.notifications
// {toolsListChanged, promptsListChanged, resourcesListChanged} (missing:
// 400 -32602) and opens a lifecycle stream of its own, with a null session
// id, the client's bits from _meta clientCapabilities and the
// list_changed bits asked for as its subscriptions. The application's
// reply BEGIN decides what is agreed: the bits asked for that its
// capabilities have. With nothing agreed, the answer is at once the
// SubscriptionsListenResult and the lifecycle ENDs. Otherwise the
// response is an event stream (no event ids) that opens with
// notifications/subscriptions/acknowledged; each lifecycle FLUSH of an
// agreed kind becomes notifications/<kind>/list_changed, and any other
// FLUSH is dropped. The HTTP client leaving ENDs the lifecycle; the
// application ENDing it ends the stream with the SubscriptionsListenResult
// as its last event. A member of notifications given twice is 400 -32602.
//
// Resource-URI subscriptions (notifications.resourceSubscriptions, an
// array of uri strings: at most 256, each at most 2048 bytes, each taken
// once; anything else 400 -32602) give the listen's lifecycle a session id
// of its own, minted as a session's is but never one of the server's
// sessions. When the application's reply has SERVER_RESOURCES_SUBSCRIBE,
// the server opens a resourcesSubscribe request stream per uri with that
// id (or the one the reply names), params {"uri":…}; the uris it answers
// without the ERROR outcome within inactivity.timeout are agreed, the
// others are given up (their reply RESET). The acknowledgement waits for
// them and names the agreed uris as resourceSubscriptions, and a FLUSH
// resourcesUpdated{uri} for one of them becomes
// notifications/resources/updated {uri, _meta subscriptionId}. What the
// application sends before the acknowledgement (it may overtake the
// subscriptions' answers) follows it, for what is agreed. A request the
// application sends the listen's client (an upstream's, on the session the
// mcp client keeps for the listen) is answered by the server, since
// 2026-07-28 asks nothing on a listen: a ping with an empty result
// (go-sdk's KeepAlive closes a session whose ping fails), anything else
// -32601. Behind the
// proxy and the mcp client, a 2026-07-28 upstream gets the uris in the
// client kind's own subscriptions/listen, and a 2025 one as
// resources/subscribe in an upstream session of the listen's own, whose
// GET stream brings the updates; the listen's END ends it.
//
// # Request streams
//
// Each request with a kind ([mcp.LookupMethod]) opens one application
// stream:
//
//   - BEGIN McpBeginEx.<kind>{sessionId (null when stateless), name or uri,
//     contentLength = the params' length, timeout}; DATA exactly the
//     params object ({} when absent), once the application grants credit;
//     END. timeout is elicitation.timeout in ms when the session's client
//     declared URL elicitation (how long a person may take), otherwise 0,
//     as Zilla's server sets it. The session's lifecycle BEGIN carries
//     authCallback, the elicitation callback's URL made from the
//     initialize request, for a guard's redirect_uri downstream.
//   - The reply: BEGIN; FLUSH McpFlushEx.progress{token (the
//     progressToken's JSON text), progress, total (-1: none), message} and
//     FLUSH McpFlushEx.notification{method, params} (any other
//     notification, relayed as it came); DATA the bare result; END. A
//     notification whose params outgrow a frame comes in parts, which the
//     server puts back together up to [mcp.MaxNotification]. With
//     McpEndEx{outcome: ERROR} the DATA was a JSON-RPC error object,
//     relayed as the response's "error".
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
//   - FLUSHes carry no credit, so a response queues what its client has
//     not yet read, up to 8 MiB, and a worker's responses at most 64 MiB
//     beyond their buffer slots. Past that, notifications are dropped
//     (the first of a response logged, each counted in
//     mcp.server.events.dropped); the answer and requests to the client are not, as
//     the room kept for them allows, and an answer that still finds none
//     cuts the response short rather than end it as if complete.
//
// # Bearer tokens (auth.go)
//
// With options.authorization {<guard>: {credentials: "Bearer {credentials}"}}
// (the default pattern; {credentials} must stand in it once), each request
// on the worker that serves it hands the token from its Authorization
// header to the guard, as Zilla's McpServerFactory does. An accepted token
// gives a guard session that the request's application streams carry as
// their authorization, and that the request releases when it ends. A
// request without the header stays anonymous (authorization 0): a guarded
// route further on decides. A header outside the pattern is answered 400
// with WWW-Authenticate: Bearer error="invalid_request" (Zilla answers 401;
// RFC 6750 §3.1 asks 400), and a token the guard refuses 401 with
// error="invalid_token"; both with a JSON-RPC error body naming the error,
// and both before the body is read. The elicitation callback takes no
// token: a browser reaches it. The header given twice is a 400. A
// session whose initialize carried a token belongs to its guard identity
// (a JWT's sub): a request for it with another identity's token, or
// none, finds no such session (404), so that a session id that leaks
// serves no one else; an anonymous session takes any caller. Zilla does
// not bind sessions so. A standing event stream (GET, subscriptions/listen)
// opened with a token that expires ends at its first keep-alive from the
// expiry; the client opens it again with a fresh token.
//
// With options.protectedResource {resource, authorizationServers, scopes}
// (Sluice's own: Zilla has none), a GET of a path that begins
// /.well-known/oauth-protected-resource is answered with the resource's
// OAuth protected resource metadata (RFC 9728: resource,
// authorization_servers, scopes_supported, bearer_methods_supported),
// without a token, and every Bearer challenge the server answers with
// names it as resource_metadata, at the well-known path followed by the
// resource's path, unless the application's challenge names its own. The
// http server's routes must bring that path to the binding; MCP clients
// read resource_metadata to find the authorization server.
//
// # What the server answers itself
//
// A POST whose Accept lacks application/json or text/event-stream (*/*
// counts as both) 406; a body that is not JSON 400 -32700; a batch or
// anything but a JSON-RPC object 400 -32600; a missing session id 400, an
// unknown or ended session 404 -32001; an unsupported
// MCP-Protocol-Version 400 (with a session) or 400 -32022 with data
// {supported, requested} (without); a Host not in hosts (when set) 403,
// and an Origin neither listed in origins nor naming the request's own
// :authority 403, where that authority counts only when hosts is set or it
// is a loopback name (DNS rebinding protection: a rebound name sends Host
// and Origin alike; requests without Origin pass); an unknown method
// -32601 and bad params or cursor -32602 (200 before 2026-07-28); another
// HTTP method 405 with allow; a body over limits.body 413, with
// Connection: close, so that the rest is not read; a POST whose
// Content-Type is not application/json (parameters such as charset
// aside; none, or two, count as not) 415, after a 406 for its Accept, as
// the SDKs answer.
//
// # One reading of every message
//
// Parsers disagree on a member given twice (encoding/json and
// JavaScript take the last, a first-match lookup the first), so a
// message that holds one the gateway reads could route, authorize or
// log one tool while another runs. The server refuses it: a JSON-RPC
// member (jsonrpc, id, method, params, result, error; keys compared as
// they decode) 400 -32600 without the id, in a body held whole or in the
// head of one that streams; and -32602 (200, 400 at 2026-07-28) a
// second name, uri, cursor, _meta, ref, arguments, requestState or
// inputResponses in params, progressToken or the protocol version or
// client capabilities in _meta, type, name or uri in a completion's
// ref, protocolVersion or capabilities in initialize's params, or a
// member on the path of an argument a Mcp-Param header declares; and
// 400 -32600 an elicitation answer's second action or content, which
// leaves the elicitation outstanding for a proper answer. Of a
// streaming body only the members in its first slot are seen. Zilla
// does not check this; Sluice does on purpose. (A key that an
// inputResponses object names twice is not read by the client kind:
// the request it would answer is asked again.)
//
// The server reads strings as encoding/json does, a lone UTF-16
// surrogate escape (\ud800 alone) as U+FFFD, and rewrites such escapes
// in params to \ufffd before the application reads them
// (jsonrpc.ReplaceLoneSurrogates; params that stream are rewritten as
// they pass, an escape cut by what arrived waiting for the next bytes),
// so that a reader that keeps lone surrogates (JavaScript's) sees what
// the server saw. The id is echoed as it was spelled, and a requestState
// string in the params goes back byte for byte: the upstream that issued
// it may check it, and the server reads it only as text, for the round
// count.
//
// # Bodies
//
// Bodies are held in one buffer slot (32 KiB by default) and scanned there
// without allocating. A larger one streams (up to limits.body): its params
// go to the application as they arrive, with contentLength -1, which needs
// the method before the params (else 400 -32600), and the tool name or
// uri, and for 2026-07-28 the _meta, within the first slot (else 413),
// since they are checked before the params pass; the name in the BEGIN is
// null when the first slot does not show it (the application takes the
// one in the params). What follows the params drains as the Tracker reads
// it, unless the id or jsonrpc member is still to come: the tail is then
// held for it, and one that fills the slot gets 413. A result held in its
// slot is answered with its length; a larger one streams through,
// followed by a Tracker to its closing brace, where the 2026-07-28
// members it lacks go in (the serverInfo only when it has no _meta,
// which has passed by then).
//
// Test-only: options.sessions.ids: sequential makes session ids
// session-1, session-2, … so that engine-driven scripts know them, and the
// mcp.session.id engine setting does the same for every mcp server of the
// engine, or fixes the ids, as Zilla's tests do (sequential, or id[,id…]
// handed out in turn). Such ids are guessable: never use them in
// production. The mcp.inactivity.timeout and mcp.sse.keepalive.interval
// settings change the defaults of the options of those names, which win.
//
// # Sessions and their workers
//
// A session (2025-era; lifecycle stream, GET stream, subscriptions,
// DELETE) is owned by the worker that took its initialize, and lives in
// that worker's session table only. Its id names the owner: the last byte
// of a random id, or, for the test-only sequential and fixed ids, a
// per-engine table of owners; a fixed id belongs to the worker that minted
// it last, so fixed ids suit scripts and single-session scenarios, where
// no two live sessions share one. A request stream lands on the worker of its TCP connection,
// and a client may open several connections, so a request can name a
// session another worker owns. That worker then relays it to the owner:
// it opens a stream of its own to this binding on the owner
// (Worker.SupplyInitialIDOn sets the stream id's target bits), starting
// with the request's BEGIN, and passes every frame of either stream on
// to the other with only its ids rewritten (relay.go). The owner serves
// the request as if it had arrived there.
//
// Why a relay, and not a shared table or an engine hand-over: with every
// request of a session on its owner, the session's state (GET stream,
// requests in flight for notifications/cancelled, replay buffer, timer)
// is touched by one thread, with no mutex, no atomics and no
// Worker.Dispatch to reach the owner; the common case, a request that
// arrives on its owner, pays one comparison per request and one per
// frame. A relayed request pays a ring hop per frame each way, which is
// what the shared table's cross-worker notifications and DELETE paid
// already. Handing the stream itself to the owner in the engine would
// save the reply's hop, but the worker that received the BEGIN would keep
// registrations for a stream whose end it never sees; the relay's two
// streams end through the engine's usual rules. A session id that names
// no worker of the engine is answered 404 where it arrives, like one
// that names no session.
//
// The configured options are compiled once per engine by the binding's
// Provision and shared read-only by the workers.
package server
