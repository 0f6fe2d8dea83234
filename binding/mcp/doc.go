// Package mcp is the mcp binding's vocabulary: the MCP frame extensions,
// the protocol tables its kinds share, and the registration of type mcp
// with its kinds server, proxy and client. The kinds themselves are
// packages of their own.
//
// The extensions are generated from idl/mcp.idl with Zilla's type, case
// and field names:
//
//   - [McpBeginEx] names the stream: a session's lifecycle, or one request.
//   - [McpFlushEx] carries notifications, progress and elicitation steps.
//   - [McpChallengeEx] asks for resume, suspension or elicitation.
//   - [McpResetEx] carries a bearer challenge or a JSON-RPC error.
//   - [McpAbortEx] and [McpEndEx] carry a reason and an outcome.
//   - [McpCapabilities] are the capability bits of a lifecycle stream, and
//     of the list_changed notifications it subscribes to
//     ([McpLifecycleBeginEx.Subscriptions]).
//
// # Streams
//
// Every MCP request that reaches an application is a stream of its own,
// its BEGIN's McpBeginEx naming the request kind: toolsList, toolsCall,
// promptsList, promptsGet, resourcesList, resourcesRead,
// resourcesTemplatesList, resourcesSubscribe, resourcesUnsubscribe, or
// the generic request{method} (completion/complete, logging/setLevel).
// The params are its DATA, the result the reply's DATA; progress and
// other notifications come as FLUSHes on the reply. A session's lifecycle
// is a stream too, open as long as the session: its BEGIN carries the
// client's capability bits, its reply's BEGIN the server's, and its
// FLUSHes the session's notifications.
//
// A request the upstream server sends its client (form elicitation,
// sampling, roots, ping) travels back as a FLUSH clientRequest on the reply
// of the request it belongs to, or of the session's lifecycle, and the
// client's answer comes forward as a stream of its own, BEGIN
// clientResponse, as the client POSTs it. This differs from Zilla, which
// carries only URL elicitation (CHALLENGE elicitCreate, FLUSH
// elicitCallback, elicitResponse and elicitComplete on the request
// stream, which Sluice carries too): a request's initial direction is
// ended with its params in Sluice, so an answer cannot follow on it, and a
// stream of its own is what the wire does. Each hop maps the request's id
// to its own and answers for it; no hop trusts an id from downstream.
//
// The kinds share the tables that map those streams to MCP:
//
//   - [LookupMethod] and [KindMethod] map JSON-RPC methods and request
//     kinds, and [Method] says what a kind's params name.
//   - [ParseServerCapabilities], [AppendServerCapabilities] and their
//     client twins code capabilities objects as McpCapabilities bits,
//     the MCP Apps extension ([ExtensionUI]) among them.
//   - [ListChanges] names each list_changed notification as a bit, a
//     FLUSH kind, a method and a subscriptions/listen member.
//   - [Version] and [ParseVersion] are the protocol revisions.
//   - [RequestBegin] reads and writes the fields every request kind's
//     BEGIN shares; [SetSessionID] and [SetString] set a nullable string
//     from a value and a null flag.
//
// # Kinds
//
// Each kind registers itself with [RegisterKind] (over
// [binding.RegisterKind]) from its own package; binding/bindings.cfg links
// all three into sluice.
//
//   - [github.com/sluicehq/sluice/binding/mcp/server] speaks MCP
//     Streamable HTTP behind an http server binding and opens a stream
//     per request to its exit.
//   - [github.com/sluicehq/sluice/binding/mcp/proxy] routes those streams
//     by toolkit to several exits, merging lists and prefixing names.
//   - [github.com/sluicehq/sluice/binding/mcp/client] turns them back into
//     MCP Streamable HTTP to one upstream server, over an http client.
//
// [github.com/sluicehq/sluice/binding/mcp/jsonrpc] is the JSON scanner
// they share. A gateway chains them: tcp → http server → mcp server → mcp
// proxy → toolkit, or mcp client → http client → tcp.
//
// Building a tools/call BEGIN extension and reading it back:
//
//	var b mcp.McpBeginExBuilder
//	b.Wrap(buf, 0, len(buf)).TypeID(mcpTypeID).
//		ToolsCall().SessionID(session).Name("get_weather").ContentLength(int32(len(params)))
//	ex, err := b.Build()
//	call := ex.ToolsCall() // when ex.Kind() == mcp.McpBeginExKindToolsCall
package mcp
