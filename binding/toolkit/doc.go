// Package toolkit is the built-in MCP toolkit binding (type toolkit, kind
// server): a small MCP server that answers the application streams of the
// mcp server kind, for the embedded default's demo and as a test upstream.
//
//	bindings:
//	  app0:
//	    type: toolkit
//	    kind: server
//
// It serves three tools (echo, add, long_running_operation), one prompt
// (greeting), one resource (sluice://toolkit/readme) and one resource
// template (sluice://toolkit/echo/{text}), with the names and shapes MCP
// clients list and call. Each worker's [Handler] reuses one set of
// flyweights, builders and one fastjson parser for every stream; a
// request's params wait in a slot of the worker's buffer pool, and its
// answer is written by appending bytes, so answering allocates nothing
// once the buffers have grown.
//
// # The application stream contract
//
// This is Zilla's mcp application stream (ZILLA.md §6) as the toolkit
// implements it; the mcp server kind is its other side. Every extension is
// typed with the label id of "mcp" (zilla:id("mcp") in scripts).
//
// Lifecycle, one stream per session:
//
//   - The server opens it with BEGIN McpBeginEx.lifecycle{sessionId,
//     capabilities = the client's capability bits, subscriptions = the
//     list_changed notifications wanted}: a session's asks for all three,
//     a 2026-07-28 subscriptions/listen's (null sessionId) for those its
//     client asked for, server/discover's for none.
//   - The toolkit replies BEGIN McpBeginEx.lifecycle{the same sessionId,
//     capabilities = SERVER_TOOLS | SERVER_PROMPTS | SERVER_RESOURCES |
//     SERVER_TOOLS_LIST_CHANGED | SERVER_RESOURCES_SUBSCRIBE (2063)}, then
//     grants the initial stream a WINDOW of 8192.
//   - The stream stays open for the session. The server's END (session
//     over) is answered with END, its ABORT with ABORT; a RESET of the
//     reply is answered with RESET of the initial stream. DATA and FLUSH
//     from the server are acknowledged and ignored, CHALLENGE (resume) is
//     ignored: the toolkit's lists never change, so it sends no
//     notification FLUSH on the lifecycle reply.
//
// Requests, one stream per request:
//
//  1. The server opens it with BEGIN McpBeginEx.<kind>{sessionId (null for
//     a stateless 2026-07-28 request), name or uri where the kind has one,
//     contentLength = the params' byte length or -1, timeout}. The toolkit
//     serves every request kind of the union: toolsList, toolsCall,
//     promptsList, promptsGet, resourcesList, resourcesRead,
//     resourcesTemplatesList, resourcesSubscribe, resourcesUnsubscribe.
//     The timeout is the server's to enforce; the toolkit ignores it.
//  2. The toolkit replies at once with BEGIN McpBeginEx of the request's
//     kind {the same sessionId and name or uri, contentLength -1}, and
//     then grants the initial stream a WINDOW (the buffer slot's room,
//     32 KiB by default). The reply opening first means the server's reply
//     credit is usually there when the answer is ready.
//  3. The server's DATA carry exactly the JSON-RPC params object, split
//     across frames as credit allows ({} when the request had none; no
//     DATA at all reads as {}). For tools/call and prompts/get that is
//     {name, arguments, _meta}; the BEGIN's name or uri wins over the one
//     in params, which is used only when the BEGIN's is null.
//  4. The params are complete when the object's closing brace arrives
//     (the toolkit tracks the nesting of braces and brackets outside
//     strings), when contentLength bytes have arrived, or at the
//     server's END, whichever comes first. The server need not END its
//     initial stream before it reads the answer, and may END it after.
//  5. The answer: DATA carrying the bare JSON result object, split to the
//     reply's credit (INIT on the first fragment, FIN on the last), then
//     END with no extension. Examples: {"tools":[…]},
//     {"content":[{"type":"text","text":"Echo: hi"}]}.
//
// Errors after the params (unknown tool, prompt or resource; bad
// arguments; an invalid cursor) use the ERROR outcome:
//
//	reply: BEGIN McpBeginEx.<kind>  (already sent, step 2)
//	       DATA  {"code":-32602,"message":"Unknown tool: x"}   the JSON-RPC error object
//	       END   McpEndEx{outcome: ERROR}
//
// The DATA of an ERROR outcome is the JSON-RPC error object, {code,
// message[, data]}, which the server relays as the response's "error"; a
// result's END carries no McpEndEx, which reads as outcome OK. The outcome is known
// only at END, so a server that writes the JSON-RPC envelope before the
// body (…"result": or …"error":) holds the reply's DATA until its END;
// the answers are small. The codes: -32602 for bad params, arguments,
// cursors and unknown tools or prompts; -32002 "Resource not found" with
// data {"uri": …} for an unknown resource.
//
// Refusals before reading use RESET of the initial stream with
// McpResetEx.error{code, message}; the reply never opens:
//
//   - -32600 "Invalid request: not an MCP application stream": no
//     McpBeginEx, or one of another type id;
//   - -32601 "Method not found": a McpBeginEx kind the toolkit does not
//     serve (the generic request kind, or a newer server's);
//   - -32603 "Server busy": no buffer slot for the params.
//
// The server then resets the reply it will never read, as any initiator
// whose initial stream was reset does; that releases the toolkit's
// registration of the reply. Params that outgrow the slot are the one
// case of both: the still-open initial stream is reset with
// McpResetEx.error -32602 "Invalid params: too large", and the reply gets
// the same error with the ERROR outcome.
//
// Progress: when params._meta.progressToken is a string or an integer, a
// long-running tool sends, on its reply and before its result, one FLUSH
// per step with McpFlushEx.progress{id: "", token: the token's JSON text
// ("tok-1" with its quotes, or 7), progress: the step (1…steps), total:
// steps, message: "Step i of n"}. FLUSH reserves no credit. The steps are
// SIGNALs from the worker's timer wheel, never a sleep.
//
// Cancellation: the server sends ABORT on the initial stream if it is
// still open, and RESET on the reply. Either one stops the request: its
// timer is cancelled, its slot released, and nothing more is sent on the
// reply; an ABORT is answered with nothing. A RESET of the reply while the
// initial stream is still open is answered with a plain RESET of the
// initial stream.
//
// Protocol violations (DATA beyond the window, a sequence going back) and
// a ring that refuses a frame reset the initial stream and abort the
// reply.
package toolkit
