// Package proxy is the mcp binding's proxy kind (type mcp, kind proxy):
// it takes the MCP application streams of an mcp server kind and routes
// them by toolkit to its routes' exits (toolkit bindings, mcp clients),
// so that one MCP endpoint serves several MCP servers. It is on both
// sides of the application stream contract of binding/toolkit: a server
// to the mcp server in front, a client to every route behind.
//
//	bindings:
//	  mcp0: {type: mcp, kind: server, exit: mcp1}
//	  mcp1:
//	    type: mcp
//	    kind: proxy
//	    options:
//	      prefix: conditional          # always | conditional | never
//	    routes:
//	      - exit: toolkit0
//	        when:
//	          - toolkit: local         # required, unique: the prefix
//	            tool: ["echo", "add*"] # globs (path.Match); absent: all
//	      - exit: client0
//	        when:
//	          - toolkit: everything
//	  toolkit0: {type: toolkit, kind: server}
//
// # Options and routes
//
// The options are prefix: always, never, or conditional (the default),
// which prefixes names only when there is more than one route, cache,
// timeout and tools (below). The other kinds' options are refused. Every route has exactly one when condition
// with a toolkit name (letters, digits, _ and -), unique across the
// routes, and optional tool, prompt and resource allow-sets, each a glob
// or a list of globs matched as path.Match does against the route's own
// names (tool and prompt names, resource uris and uri templates). An
// absent allow-set admits every name, as Zilla's matcher did; since
// Zilla's #2047 its matcher serves only the capabilities a condition
// gives an allow-set for, when it gives any, which the client kind's
// routes follow and the proxy's do not yet.
// Configuration errors name the file, line and route, e.g.
// "proxy.yaml:9: mcp mcp1: routes[1]: toolkit "local" is already the
// toolkit of routes[0]".
//
// # Guarded routes (guarded.go)
//
// A route with guarded: {<guard>: [<role>, …]} is reached only by a
// stream whose authorization (the guard session the mcp server's
// options.authorization opened for the request's bearer token) every
// guard it names verifies with its roles, as Zilla's route authorization
// does; an anonymous stream reaches no guarded route. For the rest the
// route is not there: lists leave it out, a call to one of its names is
// an unknown name, logging/setLevel skips it, and a session's lifecycle
// does not open it (a later request its caller may make of it opens it,
// as for a route out of the session). When a caller may reach no route at
// all, the lifecycle is refused with McpResetEx.bearer (INVALID_TOKEN for
// an anonymous caller, INSUFFICIENT_SCOPE for one whose roles fall short)
// whose scopes are the roles the routes ask for, so that the mcp server
// answers the initialize 401 or 403 with a Bearer challenge. With
// options.cache, a cached list holds what the hydrate session's
// authorization (cache.authorization) reaches: it serves a caller who
// reaches exactly those routes, and any other caller's list is fanned out
// to the routes it reaches.
//
// # Naming
//
// With prefixes, tools and prompts appear as <toolkit>__<name> and
// resources and resource templates as <toolkit>+<uri> (ZILLA.md §6), but
// for the views of MCP Apps (SEP-1865): a host renders a view only when
// its uri begins ui://, so a ui:// uri takes the prefix inside its
// authority, ui://<toolkit>+<rest>, as agentgateway federates them (Zilla
// prefixes every uri in front). The uri a tool's _meta names its view by
// (ui.resourceUri, the flat ui/resourceUri, and the OpenAI Apps SDK's
// openai/outputTemplate) gets it too, in tools/list
// and in a tools/call result, so that a host's resources/read of the view
// comes back to the route. A call (tools/call, prompts/get,
// resources/read, resources/subscribe, resources/unsubscribe) goes to the
// route whose prefix its name or uri carries, the longest when several
// do; the prefix is stripped from the BEGIN's name or uri and from the
// params' "name" or "uri" member (the params wait in a buffer slot for
// that, and their contentLength upstream is then -1). A params member
// that does not spell the prefix out (it escapes one of its characters)
// is refused as naming no route: the route would read the prefix as part
// of the name. The prefix is put back on the way down: on the uri of a
// resourcesUpdated FLUSH, on each contents[].uri of a resources/read
// result, and on the uri of each resource link and embedded resource a
// tools/call or prompts/get result carries (result.content[].uri and
// .resource.uri, result.messages[].content likewise), so that a client
// can read back what a tool hands it. The last is Sluice's: Zilla passes
// a result's uris through, and a client's resources/read of one then
// finds no route. These results still stream, of any size: a
// jsonrpc.PathScanner on the kind's uri paths (resultURIs) reads each
// DATA as it comes, one that holds no uri goes on as it came,
// and the bytes of one that does wait, prefixes put in, for the
// downstream's credit; the route is offered the downstream's credit less
// what waits (uris.go). A DATA that ends within a uri's first bytes,
// before they tell whether it is a ui:// one, leaves them waiting for the
// next. A FLUSH the route sends while bytes wait goes ahead of them (a
// result's DATA is its last word, so none should). A uri in text,
// structuredContent or other _meta is left as it is.
// Without prefixes (prefix never, or one route and conditional) a call
// goes to the first route, in order, whose allow-set has the name. A name
// no route serves, or one its route's globs do not allow, gets the ERROR
// outcome with the toolkit's own error: -32602 "Unknown tool: <name>",
// -32602 "Unknown prompt: <name>", or -32002 "Resource not found" with
// data {"uri": <uri>}. Params larger than the slot go on into a buffer of
// the request's own (the downstream gets credit again as it fills), up to
// 16 MiB; larger ones get -32602 "Invalid params: too large".
//
// completion/complete (the generic request kind) is routed by
// params.ref.name (ref/prompt) or params.ref.uri (ref/resource) in the
// same way, and the prefix stripped there. logging/setLevel goes to every
// route whose lifecycle for the session declared SERVER_LOGGING (every
// route when the session is not known), and is answered {} once all have
// answered. Other generic requests get -32601 "Method not found".
//
// # Calls
//
// With one route and without prefixes, a call whose BEGIN names it and
// whose name the route allows is handed through (engine.Worker.Forward),
// and so is a clientResponse (below): the route's exit
// takes the downstream's stream as it is, since the stream the proxy
// would open for it would carry the same McpBeginEx and the same params,
// and its reply the same frames. The proxy then sees none of the call,
// which saves a stream, a buffer slot and a copy of the params per call.
// The exit's own bounds then apply to the params, and a refusal of the
// exit's reaches the mcp server as it is (it answers a RESET with
// McpResetEx as the proxy would). With several routes every call is the
// proxy's, prefixes or not: a request the route's server sends its client
// while the call is under way comes on the call's reply, and its id must
// name the route (below). What follows describes the calls the proxy
// serves itself: with prefixes, with several routes, or named only in the
// params.
//
// A call whose BEGIN names it opens its route's stream at once, and lets
// the params in only when the route grants its window, so that a route
// that refuses before reading (RESET with McpResetEx, such as a bearer
// challenge) finds the downstream's request still open: the refusal
// passes through as it is. A refusal after the downstream ended its
// request becomes the ERROR outcome with the McpResetEx error's code and
// message. The reply is relayed frame by frame with only its ids changed:
// progress FLUSHes with their tokens, DATA with their flags and credit,
// and END with its McpEndEx, each with its own trace id and authorization;
// the downstream's WINDOWs go to the route, and the route's DATA is
// checked against them on the way through.
// Cancellation runs both ways: the downstream's ABORT aborts the route's
// request, its RESET of the reply resets the route's reply, and the
// route's ABORT aborts the downstream reply. A CHALLENGE of the route's
// (elicitation) goes to the downstream, and a FLUSH of the downstream's
// request to the route. When the proxy prefixes names, a URL
// elicitation's state carries the route's prefix on the way down
// (state=<toolkit>__<state>), and a FLUSH elicitCallback whose URL's
// state starts with a route's prefix goes to that route alone, on a call
// or the session's lifecycle, with the prefix taken off. A routed
// tools/call allocates nothing.
//
// # Lists
//
// tools/list, prompts/list, resources/list and resources/templates/list
// go to every route at once. Each route's bare result is collected (at
// most 4 MiB for one list, all routes together) and its items filtered by
// the route's allow-set, prefixed, and copied byte for byte otherwise into
// one result, in route order:
//
//	{"tools":[{"name":"local__echo",…},{"name":"everything__test_simple_text",…}]}
//
// What the proxy reads of a route's result has one reading or is not
// read: an item that names its name (or uri) twice is left out, as one
// without a name is, and a result that names its list, nextCursor,
// ttlMs or cacheScope twice is treated as no list from that route. A
// first-match reader and a last-match one would otherwise see different
// names, one of them without the route's prefix. A page names each item
// once: an item whose name (as merged) an earlier one has, a later
// route's when unprefixed or a repeat within a route, is left out and
// logged, since a call reaches the first. Pages a client follows are
// not compared with each other; the cache's entry, built from all of
// them, names each item once. With prefixes, two toolkits whose
// prefixed names could meet (a and a_, or a and a__b) are refused at
// configuration.
//
// The caching hints of 2026-07-28 (SEP-2549) are merged too: when any
// route's result has "ttlMs", the merged one gets the smallest, and when
// any has "cacheScope", it gets "private" if one route said private, else
// "public". A hint no route gave is left out, for the server kind to add
// its default.
//
// A route that fails (RESET, ABORT, the ERROR outcome, a result that is
// not a list, no answer within its timeout, or out of the session) is
// left out, logged ("route left out", with the route, code and message)
// and counted (mcp.proxy.partial{route}), and the merged result says so
// in its _meta:
//
//	"_meta":{"sluice/missingRoutes":[{"route":"everything","code":-32001,
//	  "message":"Request timed out: route everything did not answer tools/list within 30s"}]}
//
// so that a client, a policy or an audit can tell a partial list from a
// whole one. Only when every route fails does the list fail, with the
// first one's error.
//
// The proxy owns its cursors: when any route returned a nextCursor, the
// merged result carries one of the proxy's own, the base64url (no
// padding) encoding of a version, the list kind, a fingerprint of the
// routes and, for each route with more, its index and its own cursor. A
// request with such a cursor asks only those routes, each with its own
// cursor. A cursor that does not decode, or was issued for another list or
// another configuration, gets -32602 "Invalid cursor". Cursors decode
// strictly: a text whose last character has unused bits set is not a
// second spelling of a cursor but an invalid one.
//
// # Timeouts
//
// options.timeout, and a route's with.timeout, which wins for its route,
// bound how long a request waits for the route: a duration for every
// method, or a mapping of method names (tools/call, tools/list,
// prompts/get, prompts/list, resources/read, resources/list,
// resources/templates/list, resources/subscribe, resources/unsubscribe,
// completion/complete, logging/setLevel) to durations, the methods it
// leaves out keeping the timeout they had:
//
//	routes:
//	  - exit: client0
//	    when: [{toolkit: everything}]
//	    with:
//	      timeout: {tools/call: PT120S, tools/list: PT5S}
//
// Without them a list or logging/setLevel waits 30 s for each route and a
// call 60 s. A fan-out leaves out a route whose time has run out (above).
// A call's timeout starts when the route's stream opens and starts again
// at every frame of the route's reply (progress, DATA), so a long call
// that keeps reporting is not cut off; it stops while a request to the
// client that the reply carried (elicitation, sampling, roots, a URL
// elicitation's CHALLENGE) is out, since a person or a model answers that
// in their own time under the server kind's elicitation.timeout and
// sampling.timeout, and starts again at the route's next frame. A call
// whose time runs out gets -32001 "Request timed out: route <toolkit> did
// not answer tools/call within 1m0s" (the route is its toolkit, or its
// exit without one), or, when part of its result has already gone down,
// an ABORT of the reply; the route's request is aborted and its reply
// reset, the timeout logged and counted (mcp.proxy.timeouts{route}). With
// one route and no timeout option a call is handed through (below) and
// timed by its exit (the mcp client's options.timeout); a timeout option
// makes the proxy serve every call of the routes it applies to. Zilla's
// proxy has no such option: timeout and with.timeout are Sluice's.
//
// # Lifecycle
//
// A downstream lifecycle BEGIN{sessionId S, client capabilities,
// subscriptions} opens a lifecycle stream to every route with the same S,
// capabilities and subscriptions (each route maps S to its own session;
// only the list_changed bits a route advertised matter to it). S may be
// null: the server kind's lifecycle for a 2026-07-28 server/discover
// (subscriptions 0) or subscriptions/listen (the bits asked for), which
// stays open, relaying FLUSHes, for as long as the downstream keeps it. Once every route has replied or
// refused (within 10 s; a route that does not is left out), the proxy
// replies BEGIN{S, the OR of the accepting routes' server capability
// bits}; when none accepts, the downstream's lifecycle is reset. A
// route's lifecycle FLUSH becomes one downstream FLUSH of the same kind:
// toolsListChanged, promptsListChanged and resourcesListChanged as they
// are, resourcesUpdated with the route's prefix on its uri, notification
// and the rest passed through. The downstream's END or ABORT ends or
// aborts every route's lifecycle; a route's END alone ends only that
// route's part. The state shared between workers (requests may arrive on
// another worker than their session's lifecycle) is, for each session,
// which routes declared SERVER_LOGGING, for logging/setLevel, and which
// routes are out of it.
//
// A route is out of a session when it refused the session's lifecycle
// (its McpResetEx message is why: for an mcp client, "Upstream
// unreachable at host:port" and the like), did not reply within 10 s, or
// ended or dropped its part while the session goes on. The session's next
// request for the route (a call routed to it, or a list, which asks every
// route) has the session's lifecycle, on its own worker, open the route's
// lifecycle again and waits for it (10 s at most): once the route
// replies, the request goes on and the route is back in the session, its
// list changes relayed again; the capabilities the session declared at
// its start do not change. When it cannot, a call gets -32603 "Route
// <toolkit> is unavailable: <why>" and a list leaves the route out with
// that error, counted as mcp.proxy.unavailable{route}. The first attempt
// is made at once; after a failed one the next waits 1 s, doubling up to
// 30 s, and requests meanwhile get why with "(next attempt in <d>)".
// Zilla leaves such a route out for the session's life.
//
// # Cache
//
// options.cache keeps the proxy's lists in a store (engine/store, by its
// SPI only: memory, test, or one shared by several instances), as Zilla's
// proxy cache option does:
//
//	options:
//	  cache:
//	    store: store0          # required: a configured store
//	    ttl: PT5M              # or {tools: PT1M, resources: PT5M, prompts: PT5M}
//	    authorization:         # at most one guard
//	      guard0:
//	        credentials: "…"
//
// Without ttl every kind is cached and none refreshed; a duration caches
// every kind and refreshes each after it; a mapping caches only the kinds
// it names (Sluice's addition to Zilla's single ttl). Resources bring
// resource templates with them. A store or guard that is not configured,
// or a bad duration, is refused at start with the file and line, e.g.
// "proxy.yaml:11: bindings.mcp1.options.cache.store: mcp mcp1: store
// "nope" is not configured".
//
// cache.tools (Zilla's search and eager) rewrites the tools lists the
// proxy answers, cached or fanned out: eager.policy all defers every
// tool, explicit every tool its match globs do not name, marking it
// "defer_loading":true after its name, or leaving it out when search is
// set; search adds <toolkit>__search_tools, __describe_tool and
// __execute_tool after the last item. The first two are answered from
// the worker's copy of the cached tools entry (a BM25 index built on the
// first search after the entry changed, on a goroutine past 1,000 tools
// while the searches wait), finding only tools the caller may call; execute_tool becomes the tools/call of the tool it names,
// routed and relayed as the caller's own. Sluice differs from Zilla in
// four ways: a tool named like a search tool is left out of the list
// (Zilla lists both); search.toolkit may not be a route's toolkit;
// camelCase splits after a digit too (getHTTP2Status: get, http2,
// status); and a tool whose securitySchemes ask for scopes the caller
// lacks is listed, found and described all the same, its securitySchemes
// telling the client what to step up to (its call is refused with 403
// insufficient_scope by the client kind's route), where Zilla's proxy
// hides it and its server strips securitySchemes. A route the caller may
// not reach hides its tools from the search tools as from tools/list.
//
// options.tools (Zilla's json model with strategy tool) checks each
// tools/call's arguments, and execute_tool's, against the tool's
// inputSchema in the worker's copy of the cached tools list, compiled on
// first use with santhosh-tekuri/jsonschema and a loader that reads
// nothing: a failing call is answered -32602 with the first failure and
// never reaches the route. Such a call waits for its params before its
// route is opened, where an unchecked one is opened at its BEGIN. Zilla
// answers "Invalid params" alone; Sluice says where and why, for the
// agent to mend the call.
//
// Keys are prefixed with the binding's name, so that two proxies may
// share a store: <binding>.tools, <binding>.prompts, <binding>.resources
// and <binding>.resourceTemplates hold each list as one JSON result
// ({"tools":[…]}, merged, filtered and prefixed, every page in it),
// <binding>.lifecycle.lock and <binding>.<key>.lock are the leases, and
// <binding>.hydrated marks that a holder has had a hydrate session.
//
// Hydrate. The worker that takes lifecycle.lock (a lease of 30 s, the
// engine setting mcp.lease.ttl, renewed at a third of it while held) opens the hydrate session: a lifecycle the
// proxy opens to itself, with session id hydrate-<binding>, no client
// capabilities and the list_changed subscriptions of the cached kinds,
// so that the proxy's own lifecycle fan-out carries it to every route.
// On it, each kind without an entry is listed at once, in parallel, by a
// list request the proxy opens to itself, so that the proxy's own fan-out,
// merge, prefixes and cursors make what is stored; the hydrater follows
// every nextCursor and stores the items of all pages as one list. Each
// list call is issued under the kind's lock; only the worker that listed
// a kind arms its refresh. With authorization, the guard's session for
// the credentials (Reauthorize, once per worker) is the authorization of
// every frame of the hydrate session and its lists, and so of what the
// proxy sends the routes for them; a route's with.cache.credentials, given
// to the same guard, are the authorization of those frames on that route
// instead, so that one hydrate session reaches routes guarded for
// different roles. A cached list then serves a caller who reaches the
// routes the hydrate session reaches, each by its own credentials. The other workers and instances try
// lifecycle.lock again every 100 ms (mcp.lease.retry) while their lists
// have not settled,
// then every second, so that when a holder dies another takes over
// within a second of its lease running out. A holder that finds
// <binding>.hydrated already set takes over from an earlier one (that
// died, or stopped, or lost its lease): it lists every kind at once
// rather than serving the entries until their ttl, since a list_changed
// may have come while no one held the lease. Entries seeded before any
// holder (a test store's options.entries) are hits. The session, refused
// or ended by the routes, is opened again after 5 s. Its client is the
// proxy itself: a route's ping on it is answered with an empty result
// (an upstream that pings to keep its session alive keeps it), any other
// request with -32601, as for a client without the capability
// (scenario cache.hydrate.ping).
//
// Gate. A downstream lifecycle waits, before it goes to the routes, until
// every cached kind has settled on its worker (an entry loaded, stored,
// or its list failed), so that the first list of the session is served
// from the cache; after 5 s, or at once when the store is unavailable,
// it goes on regardless and the kinds not settled are served through
// until their entry comes.
//
// Serve. Each worker keeps a copy of every entry, read once with Get and
// kept current by a Watch of its key, checked (a JSON object with the
// kind's array, at most 16 MiB) and rendered into its answer once: a
// cached tools/list, prompts/list, resources/list or
// resources/templates/list is a write of those bytes, with no route
// asked and nothing allocated. An entry larger than 256 KiB is served in
// pages, each with a cursor of the proxy's own (base64url of a version, the
// list kind, the entry's hash and the page); a cursor of an entry since
// replaced gets -32602 "Invalid cursor: the list has changed, list again
// without one", one the proxy did not make -32602 "Invalid cursor". A
// miss, an unusable entry (logged once), or an entry the store no longer
// has (deleted, expired, or out of sight: a redis store tells its
// watchers so when it loses Redis) goes to the routes as without a
// cache; so does a fan-out's cursor. With the store down at start, the
// gate opens as soon as a lease request fails and the store tells that it
// has lost its server (the redis store does), and lists are served
// through; when the store returns, the lease is taken and the cache
// fills.
//
// Refresh. A kind with a ttl is listed again that long after it was last
// listed, on the same hydrate session; resource templates with
// resources. A list that fails (the routes' RESET, ABORT or ERROR, a
// result that is not a list) keeps the entry there is; a kind without a
// ttl whose list failed tries again after 5 s. A list that left some
// routes out (prefixed) replaces the part of the entry of the routes
// that answered and keeps that of the routes left out, each route's
// items in route order, as Zilla keeps a stale toolkit; unprefixed, the
// items cannot be told apart and the entry is kept. Such a kind is listed
// again after 5 s rather than its ttl. A route that leaves the hydrate
// session (it ends, aborts or refuses its lifecycle) has every kind
// listed again within 5 s, which opens its part of the session again, so
// that its list_changed reaches the cache again (Zilla reopens the whole
// hydrate session). A list equal to the entry
// is not stored again. A list_changed that a route sends the hydrate
// session has its kind listed at once (again after the list under way,
// if one is); Zilla defers this. A route's list_changed for a cached kind
// on a downstream session is not passed on as it comes: once the new list
// is stored, each worker, told by its Watch, sends the list_changed to
// its sessions (and to listen lifecycles that asked for it), so that the
// list a client then asks for is the new one, on every worker and
// instance. A list that did not change sends none.
//
// Sluice differs from Zilla on purpose in the per-kind ttl, the
// list_changed refresh, the pages of large lists, the per-worker copies
// and the keys prefixed with the binding's name.
//
// # Server-to-client requests
//
// A request a route's server sends its client (elicitation/create,
// sampling/createMessage, roots/list, ping) reaches the proxy as a FLUSH
// with McpFlushEx clientRequest on the reply of the route's stream it
// relates to: a call's, a list's, or the session's lifecycle. It goes down
// on the reply of the downstream stream that stream serves, and only
// there: the session that reached the route, never another. Its id is
// rewritten so that the answer finds its way back without a table: with
// several routes it becomes the JSON string "<route index>:<the route's
// id as JSON text>" (id 7 of routes[1] is "1:7", id "a" of routes[0] is
// "0:\"a\""); with one route it stays as it is. Zilla's proxy marks the
// correlation id of a URL elicitation the same way, with the route's
// toolkit prefix rather than its index; the index keeps the id short and
// free of the toolkit's name. Nothing else changes:
// the method and the params, which go on in parts as they came (total and
// start), a part that the longer id no longer lets fit a frame cut in two
// or more. A list's reply opens early for one; a lifecycle's that has not
// opened yet (another route has not replied) holds up to 16 of them (1
// MiB) until it does. One the proxy cannot pass on (past those 16, an id
// and method too long for a frame, or once the downstream stream is over)
// it answers itself with -32603 on a clientResponse stream of its own to
// the route, as the server kind answers for a client it cannot reach
// (mcp.Answers), so that the route's upstream hears at once; each is
// counted as mcp.proxy.client.refused{route}, and the first of a worker
// logged as a warning.
//
// The client's answer is a stream of its own, BEGIN with McpBeginEx
// clientResponse{sessionId, id, error, contentLength}, DATA the result or
// error object. The proxy opens it to the route its id names, with the
// route's id and the same session id (every route knows the session by
// the downstream's id), and relays the rest as it relays a call: the
// object unchanged (roots and sampling results included), the reply with
// the downstream's id again. An id the proxy did not make (not of that
// form, a route it does not have, a route id that is neither a JSON
// number nor a JSON string) is refused with RESET and McpResetEx error
// -32600 "Invalid request: unknown response id", and reaches no route. A
// notifications/cancelled from a route (whole, on a call's reply or the
// lifecycle) has its requestId rewritten the same way, so that the server
// kind finds the request it cancels.
package proxy
