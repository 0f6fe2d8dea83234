// Package client is the mcp binding's client kind (type mcp, kind
// client): the mirror of the server kind. MCP application streams come in
// (from the mcp server kind or the proxy kind), and HTTP application
// streams go out to its exit, the http client (sys:http_client by
// default), speaking MCP Streamable HTTP (the design notes' MCP.md §1 and
// §3.4) to one upstream MCP server.
//
//	bindings:
//	  client0:
//	    type: mcp
//	    kind: client
//	    options:
//	      server: http://127.0.0.1:3001/mcp   # required
//	      versions: [2025-11-25]              # offered upstream, the default
//	      timeout: PT60S                      # per request, the default
//	      inputRequired:                      # see "Input required rounds"
//	        key: <base64, 32 bytes or more>   # default: random per process
//	        store: <store>                    # or: a key shared through a store
//	        roundTimeout: PT600S              # the default
//	        maxPending: 1024                  # per worker, the default
//
// As Zilla's client does, it speaks 2025-11-25 unless told otherwise:
// initialize, then the session. Listing 2026-07-28 (for example
// versions: [2026-07-28, 2025-11-25]) makes it discover the upstream
// first and use it statelessly when the upstream serves that revision.
// Zilla has no option for this; versions is Sluice's, shared with the
// server kind.
//
// options.authorization ({<guard>: {}}) names a guard whose credentials
// the upstream requests carry (see "Guarded requests"). The exit may be given as the binding's
// exit or, as Zilla's configs may, as the exit of its routes; routes with
// other exits than the first's are refused as not supported yet.
//
// Routes with when ({tool, prompt, resource} globs) and guarded decide,
// as Zilla's client routes do, whether a request goes upstream for its
// caller (routes.go): the first route that takes the request (a
// condition serves the capabilities whose allow-set it gives, all when it
// gives none; a named request needs a name its globs admit) and whose
// guards verify the stream's authorization with their roles lets it
// through. A request that a route takes but whose caller lacks its roles
// is refused with McpResetEx.bearer (invalid_token when anonymous,
// insufficient_scope otherwise, the roles as scope), so that the mcp
// server answers 401 or 403 with the scope to step up to; Zilla aborts
// it. One that no route takes gets -32602 (an unknown tool or prompt),
// -32002 (a resource) or -32601. Lists pass unfiltered, as in Zilla, and
// when a route's guards name roles, each tool of a tools/list result gets
// the scopes its route asks for, as Zilla's McpSchemeInjector writes them:
// "securitySchemes":[{"type":"oauth2","scopes":[…]}], one per guard, in
// place of any the upstream gave.
//
// The timeout runs from the request's POST and starts again at every
// notification the upstream sends on the request's stream (progress,
// log messages): a long job that keeps reporting is not cut off, one that
// falls silent for a whole timeout is. Each step of an upstream session's
// start (server/discover, initialize, notifications/initialized) has the
// same timeout, after which the requests waiting for the session fail and
// the next one starts it again; so do the messages whose answer nobody
// waits for (DELETE, notifications/cancelled, answers to the upstream's
// requests), which are dropped, with their connection, when it runs out.
//
// At start the client tries a TCP connection to the server's host and
// port, off the workers' threads, and logs a warning when it fails, so
// that an operator learns of an unreachable upstream before the first
// session does (sessions started meanwhile are refused; a proxy in front
// opens their part again on their next use of the route).
//
// The server is an http:// endpoint. An https:// one is refused when the
// configuration loads: Sluice has no TLS binding yet, and an https
// upstream's requests (and whatever credentials they carry) must not go
// out in cleartext; a TLS-terminating proxy on the gateway's host, reached
// over http://, stands in until then.
//
// Options of the other kinds (origins, hosts, inactivity, sse, get,
// limits, sessions, prefix) are refused with an error naming the kind
// they belong to.
//
// # Upstream sessions
//
// A downstream session's lifecycle stream (BEGIN
// McpBeginEx.lifecycle{sessionId S, capabilities}) starts an upstream
// session, kept in a table shared by the engine's workers under S (a
// request of S may arrive on any worker):
//
//   - When 2026-07-28 is offered and the upstream is not yet known, the
//     client first POSTs server/discover (MCP-Protocol-Version
//     2026-07-28, Mcp-Method server/discover). An upstream that lists
//     2026-07-28 is used statelessly: no initialize, no session, no GET
//     stream, no DELETE. Anything else (400, 404, -32601, -32022, or the
//     version not listed) falls back to initialize. The answer is cached
//     per binding. A downstream session (a 2025-era client's lifecycle,
//     with a session id) still gets an upstream session of its own,
//     initialized with the offered 2025 version, when discovery listed
//     that version too: its session-scoped methods (logging/setLevel,
//     resources/subscribe and unsubscribe, requests to the client on the
//     GET stream) have no 2026-07-28 equivalent the gateway could
//     translate them to without losing one; requests without a session
//     id use the upstream statelessly. An upstream that answers that
//     initialize without a session id keeps no 2025 session (go-sdk's
//     stateless servers): it could never ask the client anything, so the
//     session uses it at 2026-07-28 after all, where its input_required
//     results reach the server kind's shim, and the binding's later
//     sessions do so without initializing. Toward an upstream of
//     2026-07-28 alone (or used so), a session's logging/setLevel is
//     answered by the client kind, which keeps the level and sends it as
//     every later request's _meta logLevel; a 2026-07-28 downstream's own logLevel goes through. Its
//     resources/subscribe and unsubscribe are answered too: the session
//     keeps the uris (at most 256) and opens its subscriptions/listen
//     stream again with them as resourceSubscriptions.
//   - Otherwise it POSTs initialize with the first offered version
//     before 2026-07-28, clientInfo {"name":"sluice"}, and the client
//     capabilities of the lifecycle's CLIENT_* bits (what the gateway
//     declares changes what upstreams list, MCP.md §1.6). A JSON or an
//     event-stream reply is read; mcp-session-id and the negotiated
//     protocolVersion are kept, notifications/initialized is POSTed, and
//     the session's GET event stream opened.
//   - The lifecycle's reply BEGIN carries the result's capabilities as
//     McpCapabilities bits: tools, prompts and resources with their
//     listChanged bits, resources.subscribe, logging (SERVER_LOGGING),
//     completions (SERVER_COMPLETIONS) and the MCP Apps extension
//     (SERVER_EXTENSION_UI; no other extension is declared downstream,
//     since the gateway carries no other end to end). A failed initialize RESETs the
//     lifecycle with McpResetEx.error -32603 "Upstream …", or, when the
//     upstream refused it 401 or 403 with a Bearer challenge, with
//     McpResetEx.bearer carrying the challenge's realm, scope,
//     resource_metadata and error, as a request's refusal does (Zilla's
//     lifecycle.initialize.reject.bearer), so that the server kind in
//     front answers the client's initialize with it. A lifecycle
//     that ends before its reply began gets BEGIN (no capabilities) and
//     END, since END may not come before BEGIN.
//   - GET stream events: notifications/{tools,prompts,resources}/list_changed
//     become FLUSH toolsListChanged, promptsListChanged and
//     resourcesListChanged on the lifecycle's reply;
//     notifications/resources/updated FLUSH resourcesUpdated{uri}; any
//     other notification FLUSH McpFlushEx.notification{method, params}.
//     A request to the client (roots/list, sampling, elicitation, ping)
//     is relayed as described under "Requests to the client". A GET
//     stream that
//     ends or fails is reopened with Last-Event-ID, up to 5 times with a
//     doubling backoff from 100ms on the worker's timers; 405 means the
//     upstream has none, and 404 or 400 that the session is gone.
//   - With a stateless upstream there is no GET stream: a lifecycle whose
//     subscriptions (McpLifecycleBeginEx.subscriptions, the list_changed
//     bits) meet the list_changed bits the upstream advertised POSTs
//     subscriptions/listen (Mcp-Method, MCP-Protocol-Version 2026-07-28)
//     with params {"notifications":{"toolsListChanged":true,…}, "_meta":
//     {protocolVersion, the lifecycle's clientCapabilities, clientInfo}}
//     and reads its event stream as the GET stream's:
//     notifications/subscriptions/acknowledged is the stream opening and
//     is not relayed; the list_changed notifications become the same
//     FLUSHes. A listen that ends, fails or gets a 5xx is reopened on the
//     same backoff (5 attempts in a row without a message); a 4xx or a
//     JSON-RPC error means the upstream will not listen, and is not
//     retried.
//   - The lifecycle's END or ABORT (or a RESET of its reply) ends the GET
//     or listen stream and DELETEs the upstream session.
//   - A lifecycle without a session id (the server kind's for a 2026-07-28
//     server/discover, subscriptions 0, or subscriptions/listen) is
//     answered with the upstream's capabilities, cached from any session,
//     else learned by discovering or initializing the worker's own
//     session. With subscriptions it stays open and relays those list
//     changes: from its own listen on a stateless upstream, else from the
//     GET stream of the worker's session, filtered to the bits asked for.
//     That GET stream is one per worker, shared by every such lifecycle,
//     since an upstream allows one per session (go-sdk answers a second
//     409, which is retried on the backoff). It opens with the session:
//     the session is ready once the stream's response has come (or failed,
//     or the timeout passed), and the stream stays open while the session
//     lives. An upstream sends there the requests to its client that
//     belong to no call (the TypeScript SDK does, for one made without a
//     related request, as server-everything's roots sync is); no one client
//     of the session is the one asked, so each is answered at once, a ping
//     with an empty result and anything else with -32603. With no GET
//     stream open, the TypeScript SDK would drop the request and wait out
//     its 60 s timeout for the answer, and so would the call that made it.
//
// Requests without a session id (stateless 2026-07-28 downstreams) use a
// per-worker upstream session, created on first use, or none when the
// upstream is stateless too. That session's initialize declares every
// client capability (roots, sampling, elicitation form and url): its
// clients declare theirs with each request, in the
// io.modelcontextprotocol/clientCapabilities member of params._meta,
// which goes upstream with the request (the other
// io.modelcontextprotocol/ members do not), and each request the upstream
// sends its client is checked against them (see "Input required rounds").
//
// # Requests
//
// A request stream (McpBeginEx toolsList, toolsCall, promptsList,
// promptsGet, resourcesList, resourcesRead, resourcesTemplatesList,
// resourcesSubscribe, resourcesUnsubscribe, or request{sessionId,
// method}) gets its reply BEGIN at once, as the toolkit's does, and a
// window for its params. When the params object closes (the
// jsonrpc.Tracker sees its last brace; no DATA reads as {}), without
// waiting for the downstream's END, the client POSTs
//
//	{"jsonrpc":"2.0","id":<unique per binding>,"method":"<method>","params":<params>}
//
// with content-length, mcp-session-id and mcp-protocol-version. A
// 2026-07-28 downstream's io.modelcontextprotocol/ members of params._meta
// are dropped for a session's upstream, which would read them as a
// version mismatch. For a stateless upstream the request carries
// Mcp-Method and, for tools/call, prompts/get and resources/read, Mcp-Name
// (=?base64?…?= when not printable ASCII), and the client's own
// protocolVersion and clientInfo in params._meta, with the downstream's
// clientCapabilities when it sent them (what an input_required result may
// ask of the client depends on them, SEP-2322), else those of the
// session's CLIENT_* bits.
//
// Custom parameter headers (SEP-2243): the client learns, per binding
// (shared by its workers, up to mcp.MaxParamTools tools of
// mcp.MaxParamHeaders declarations each), the x-mcp-header declarations
// of the tools in every tools/list result it relays, by the upstream's
// names; a relisting replaces a tool's, and a tool whose declarations a
// client must refuse (a type other than string, integer or boolean, a
// name that is not an HTTP token, a name declared twice) is not learned.
// A tools/call to a stateless upstream then carries Mcp-Param-<Name> for
// each declared argument present and not null: a string as is when it is
// visible ASCII without leading or trailing space or tab, else
// =?base64?…?=; an integer in decimal; a boolean as true or false. A
// tool never listed through the binding goes without them. When the
// upstream answers such a call (sent without Mcp-Param headers) HTTP 400
// with -32020, the client kind lists the upstream's tools itself,
// following nextCursor for up to 32 pages or mcp.MaxParamTools tools,
// learns their declarations, and makes the call again, once, with the
// headers; a tool that still declares none gets the upstream's error as
// it came. One listing runs per binding at a time: the calls that need
// one meanwhile wait for it, and the listing itself is cut off after the
// binding's timeout; a call learns of declarations that arrived while it
// was out and calls again at once. A session's (2025-era) upstream needs
// none and gets none.
//
// The HTTP request stream's END waits for the response head, since the
// http client reports a failed connection as RESET only until then; the
// body itself is complete (content-length) as soon as the params close.
//
// The answer:
//
//   - application/json: the result becomes the reply's DATA, the bare
//     result, then END; an error object becomes the DATA with END
//     McpEndEx{outcome: ERROR}. The tracker's member ranges find them
//     without parsing.
//   - text/event-stream, read incrementally: notifications/progress
//     becomes FLUSH McpFlushEx.progress{token: the progressToken's JSON
//     text, progress, total (-1: none), message}; other notifications
//     FLUSH notification; the response with the request's id is answered
//     as above, and the stream aborted. A FLUSH is one frame (the buffer
//     slot, 32 KiB by default): a notification whose params do not fit
//     one goes in parts, consecutive FLUSHes with the same method and
//     {total, start} of the params bytes each carries, up to
//     mcp.MaxNotification (1 MiB); a larger one, or a progress message
//     past a frame, is dropped with a warning, and the request goes on.
//   - A request the upstream sends its client on the stream is relayed
//     (see "Requests to the client").
//   - The reply's DATA respect its credit and padding, split to it.
//
// Failures:
//
//   - 404, or 400 while using a session (server-everything's answer for an
//     unknown session, MCP.md §1.6): the session is re-initialized (a new
//     upstream session replaces the table's entry) and the request retried
//     once.
//   - 401 or 403 with WWW-Authenticate: Bearer: RESET with
//     McpResetEx.bearer{realm, scopes, resourceMetadata, error} while the
//     downstream request is still open, else the error -32001 with the
//     ERROR outcome.
//   - An event stream cut before its response, with event ids (at
//     2025-11-25 and later): resumed with GET and Last-Event-ID, twice at
//     most.
//   - Any other HTTP error (its JSON-RPC error relayed when it has one),
//     a refused, reset or aborted connection, or the timeout: the DATA
//     {"code":-32603,"message":"Upstream …"} and the ERROR outcome; never
//     a hang.
//   - A message that is not a JSON-RPC object, or that names one of its
//     members (jsonrpc, id, method, params, result, error; keys compared
//     as they decode) twice: "Upstream sent an invalid response". Readers
//     disagree on which of two results counts, so the client refuses the
//     message, as the server kind refuses such a request. So too a
//     response to the request with both result and error, or whose result
//     or error is not an object (every MCP result is one), and a response
//     that gives Content-Type or Mcp-Session-Id twice, and a JSON body
//     with more than whitespace after its value (JSON.parse and
//     encoding/json refuse it): a JSON body's message is held until the
//     body is over, at its Content-Length or the response's END. An event
//     whose type is neither empty nor message is skipped, as the SDKs
//     skip it.
//
// Cancellation: an ABORT of the request or a RESET of its reply POSTs
// notifications/cancelled {requestId, reason} upstream and aborts the HTTP
// stream; nothing is answered afterwards. A timeout does the same and
// answers -32603 "Upstream timeout".
//
// # Requests to the client
//
// A request the upstream sends its client (elicitation/create,
// sampling/createMessage, roots/list, ping) goes down as FLUSH
// McpFlushEx.clientRequest{id: the upstream's id as JSON text (7 or
// "a"), method, params (null when it has none)} on the reply of the
// stream it relates to: the request whose POST's event stream carried it,
// or the session's lifecycle when it came on the GET stream. Its params
// go in parts as a notification's do (total and start, up to
// mcp.MaxNotification). The client kind keeps no table of them: the ids
// are the upstream's, and the hops in front map their own. What it
// declares upstream in initialize are the client capabilities of the
// lifecycle's CLIENT_* bits (roots, sampling, elicitation form and url,
// and the MCP Apps extension's views), no more, so the upstream asks only
// what the downstream client takes.
// A request on the stream of a downstream request without a session (a
// 2026-07-28 client's, other than those its rounds carry; see "Input
// required rounds") has no client to answer it: the upstream gets -32601
// at once.
//
// An elicitation/create with mode url on a request's event stream (an
// upstream that runs its own authorization, Zilla's proxied flow) goes
// down instead as CHALLENGE McpChallengeEx.elicitCreate{id: its
// elicitationId, url, message, correlationId: the upstream's id as JSON
// text, absent when it sent none} against the request, as Zilla's client
// does, while the downstream's request is still open (the POST went up
// when the params closed, so the upstream can ask before the downstream's
// END). Its notifications/elicitation/complete becomes FLUSH
// elicitComplete{id}, and the client's FLUSH elicitResponse{action} is
// POSTed as the request's result {"action": "accept" | "decline" |
// "cancel"}. Once the downstream ended its request, a CHALLENGE can no
// longer reach it, and the URL elicitation is relayed as FLUSH
// clientRequest as any other (Sluice's server kind ends its requests with
// their body).
//
// On the session's GET stream, an elicitation/create with mode url sent
// as a notification (no id, as Zilla's upstreams send it on lifecycle
// events) goes down as CHALLENGE elicitCreate on the lifecycle, without a
// correlationId, and notifications/elicitation/complete as FLUSH
// elicitComplete; one with an id is a request like any other.
//
// A request that cannot reach the client is answered upstream at once
// with the JSON-RPC error -32603, rather than left waiting: its stream's
// reply is gone, its params are past mcp.MaxNotification, or it came on
// the GET stream of a worker's own session (a lifecycle without a session
// id), which no one client owns. A ping there is answered instead with an
// empty result: it asks only whether the client is there, and an upstream
// that pings to keep its session (go-sdk's KeepAlive) closes it at the
// first ping that fails. 2026-07-28 asks the client through
// input_required results instead: such a request from a stateless
// upstream is refused with -32601 on a request's stream, and ignored on a
// listen stream; one from a 2025 upstream on the stream of a request
// without a session id ends the round with input_required (next
// section).
//
// A request whose upstream asked its client something waits at least 10
// minutes (the server kind's longest default, an elicitation's) from then
// for its answer, rather than its timeout: a person may be answering. The
// server kind answers the upstream itself when its own timeout runs out,
// and the upstream's next message restarts the timeout as usual.
//
// The client's answer comes as a stream of its own, BEGIN
// McpBeginEx.clientResponse{sessionId, id, error}, whose DATA are the
// result object (or, with error 1, the error object), up to the kind's
// message bound (16 MiB). The client kind POSTs
//
//	{"jsonrpc":"2.0","id":<id>,"result":<DATA>}   ("error" with error 1)
//
// on the upstream session, with its mcp-session-id and
// mcp-protocol-version. The stream's reply begins at once (the same
// clientResponse extension) and ends once the upstream took the answer
// (2xx). Otherwise (an unknown session, an id that is not one JSON number
// or string, DATA that are not one object, an HTTP error, a failed
// connection, the timeout) the stream is reset with McpResetEx.error while
// the downstream still sends, and the reply aborted. A 2026-07-28
// stateless upstream sends no such requests: an answer to one is refused.
//
// # Input required rounds
//
// A 2026-07-28 client (a tools/call, prompts/get or resources/read
// without a session id) of an upstream that speaks 2025 only goes
// through the worker's own upstream session. When the upstream sends its
// client elicitation/create, sampling/createMessage or roots/list on the
// call's event stream, no client can be asked on the stream; instead:
//
//   - A request the call's client did not declare the capability for
//     (its _meta clientCapabilities; elicitation form mode needs form,
//     url mode elicitation.url) is answered upstream with -32601, fail
//     closed. One whose params are not an object, or name the mode twice,
//     in another case ("MODE", which encoding/json reads as the mode) or
//     as neither "form" nor "url" (so that the client could read another
//     need than the gateway checked), gets -32602 "Invalid params"; one
//     with the id of a request of the call still waiting gets -32600
//     "Invalid Request: id already in use"; past 64 waiting, -32603.
//   - Otherwise the call becomes pending: the HTTP stream and its reader
//     move to an entry in a table shared by the engine's workers, by a
//     handle. Requests that come within 20ms of the first (an upstream
//     may ask several things at once) join the round; the round then
//     ends with the result
//     {"resultType":"input_required","inputRequests":{<key>:{method,
//     params}, …},"requestState":<state>}, the key being the upstream's
//     request id (a string id decoded, a number's text), with "#<n>"
//     added when another request of the call has that key already (ids
//     7 and "7"), so that the client reads each key once. The upstream
//     call stays open; what it sends meanwhile is queued.
//   - The client's retry (a new request, same method and params plus
//     inputResponses and requestState) may arrive on any worker. Its
//     state is verified before anything else, even before the retry takes
//     a session; the pending entry is found by its handle and attached to
//     the retry, each inputResponses[key] is POSTed upstream as the
//     result of the request with that id, on the entry's session, and
//     the queued and later messages of the same upstream call are relayed
//     to the retry: notifications and progress, the final answer, or more
//     requests, which end this round too. A request the retry did not
//     answer is asked again in the next round. The entry's owner (the
//     worker of the HTTP stream) only reads the stream and queues; the
//     attached request's worker does the rest.
//   - A round the client does not retry within
//     options.inputRequired.roundTimeout (PT600S by default) drops the
//     entry: each request still waiting upstream is answered -32001
//     ("Request cancelled: …") and the call gets notifications/cancelled.
//     A retry's own timeout, cancel or failure drops it the same way. A
//     worker holds at most options.inputRequired.maxPending (1024) entries;
//     past it, the request is answered -32603 "Server busy: too many calls
//     awaiting input" and the upstream's request -32603. What the upstream
//     sends on an entry's call waits in the entry for the next round up to
//     256 KiB, past which the call offers the upstream no more credit until
//     a retry drains it: the upstream waits rather than the gateway holding
//     what it sends for a whole round timeout.
//   - A -32042 (URL elicitation required) answer becomes input_required
//     with one elicitation/create per elicitations[] element (keyed by
//     its elicitationId, else url-elicitation-<n>), when the client takes
//     url elicitations; its retry goes upstream as a new call, without
//     inputResponses and requestState (the 2025 way: the user visited the
//     URL, the call is made again).
//   - An input_required result the upstream sends itself (go-sdk's legacy
//     shim re-runs a handler once and may send its next input_required
//     result on a 2025 session, without resultType) is marked
//     input_required, and its requestState wrapped in one the gateway
//     issues; the retry carries the upstream's own state upstream again,
//     byte-exact, in a new call. A result that names resultType,
//     inputRequests or requestState twice is -32603: which one the client
//     would read is its parser's choice.
//
// The requestState is base64url of: a version byte, the kind (pending,
// -32042 replay, wrapped upstream state), the issuing instance's id (8
// random bytes drawn when the configuration loads), the handle, the
// upstream call's JSON-RPC id, the round, the expiry (Unix ms), a wrapped
// state, and an HMAC-SHA256 over all of these and the principal. The
// principal is the identity options.authorization's guard gives the
// request's authorization, else none: the state is then bound to the
// call, its round and its expiry only. The key is
// options.inputRequired.key (base64, at least 32 bytes), or the one
// shared through options.inputRequired.store (the name of a configured
// store; key and store together are refused), else a random one drawn
// when the configuration loads.
//
// With a store, each worker, when it attaches, puts 32 random bytes
// under "<binding>.inputRequired.key" unless a value is there
// (PutIfAbsent) and uses the value that won, so every worker of every
// instance on the store issues and verifies with one key. Until the
// store answers, the worker holds the requests that may carry or earn a
// state (a tools/call, prompts/get or resources/read without a session
// id; at most 1024, past which they get -32603 "Server busy"), without
// blocking; the others go on. A store that fails, holds a value shorter
// than 32 bytes, or does not answer within 5 s leaves the worker on the
// process's random key, with a logged warning: its states then verify
// only on this instance. The worker asks the store again every 30 s and
// adopts its key when it answers; the states issued meanwhile still
// verify, with the process key.
//
// A replayed -32042 or a wrapped upstream state goes upstream as a new
// call and so continues on any instance that shares the key. A pending
// state continues an upstream call held open in the memory of the
// instance that issued it (Sluice does not share pending calls): another
// instance refuses it with the reason "issued by another instance of the
// gateway, which holds the upstream call it continues: send the retry to
// that instance", so several instances need session affinity for these
// retries. A pending state is good for one retry: the entry's round moves
// on when a retry attaches. A state that does not verify (forged,
// altered, cut, issued to another principal or with another key), has
// expired, was used already or names no pending call gets the error
// {"code":-32602,"message":"Invalid requestState","data":{"reason":…}}
// and nothing goes upstream.
// A -32042 replay state is not single use: the client could repeat the
// call without it anyway.
//
// # Guarded requests
//
// With options.authorization, every request asks the guard first, as
// Zilla's client does: a stream whose authorization is a session of the
// guard with credentials uses them; otherwise the guard is asked with no
// credentials. A session it opens gives the credentials, which the POST
// carries as authorization: Bearer <credentials>, or as the
// authorization's own credentials value with the guard's in place of its
// {credentials} placeholder ("Token {credentials}" gives Token <c>). A
// credentials value without the placeholder (a key of the gateway's own)
// is the authorization header of every upstream request, the session's
// initialize, GET stream and DELETE included, as Zilla injects it
// (lifecycle.initialize.credentials). When it answers "needs
// pre-authorization" (the test guard's preauthorize option), the request
// is held, its reply already begun, its params not yet granted a window:
//
//   - the guard's Preauthorize gives the URL the user must visit, given
//     the lifecycle's McpLifecycleBeginEx.authCallback as the callback
//     (the test guard puts it into a replace.me redirect_uri);
//   - CHALLENGE McpChallengeEx.elicitCreate{id, url, message, correlationId}
//     goes down against the request, then the params' window; the ids
//     come from the mcp.elicitation.id and mcp.elicit.correlation.id
//     settings (random 8 hex digits by default);
//   - FLUSH McpFlushEx.elicitCallback{url} from the client re-authorizes
//     with that URL: a session sends FLUSH elicitComplete{id} on the reply
//     and the held request goes upstream with its credentials once its
//     params are whole; a refusal sends elicitComplete and aborts the
//     reply;
//   - FLUSH elicitResponse with DECLINE or CANCEL, or the request's own
//     timeout (McpBeginEx's, in ms) running out, send elicitComplete and
//     abort the reply; a request without a timeout cannot wait for a
//     person and is reset and its reply aborted right after the challenge;
//   - an END of the request while the elicitation is pending is a
//     protocol error: the request is reset and the reply aborted.
//
// A guard that refuses outright resets the request and aborts its reply,
// unless the authorization gives credentials of its own (without the
// {credentials} placeholder), when the request goes on with those.
//
// # Costs
//
// Every stream's frames go through engine.Stream, whose builders are the
// worker's; each worker reuses its extension builders, its request and
// call objects with their buffers, and one tracker; response headers are
// read without the generated iterator, and timeouts are served by one
// sweep timer per worker rather than one timer per request. A tools/call
// through the client allocates nothing once the buffers have grown
// (TestToolsCallAllocs, BenchmarkToolsCall).
package client
