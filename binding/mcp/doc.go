// Package mcp is the home of the mcp binding (server, proxy and client
// kinds). For now it holds the MCP frame extensions, generated from
// idl/mcp.idl with Zilla's type, case and field names:
//
//   - [McpBeginEx] names the stream: a session's lifecycle, or one request kind.
//   - [McpFlushEx] carries notifications, progress and elicitation steps.
//   - [McpChallengeEx] asks for resume, suspension or elicitation.
//   - [McpResetEx] carries a bearer challenge or a JSON-RPC error.
//   - [McpAbortEx] and [McpEndEx] carry a reason and an outcome.
//   - [McpCapabilities] are the capability bits of a lifecycle stream.
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
package mcp
