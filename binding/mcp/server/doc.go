// Package server is the mcp binding's server kind (type mcp, kind server):
// MCP Streamable HTTP, protocol versions 2025-03-26 through 2026-07-28,
// behind an http server binding.
//
// Each HTTP request the http server routes to it arrives as a stream whose
// BEGIN carries the request's headers; the server validates the request
// (Origin, Host, Accept, protocol version, session), reads the JSON-RPC
// body with the jsonrpc tracker, and opens one application stream per MCP
// request toward its exit with the request's kind in an [mcp.McpBeginEx].
// The application's reply comes back as JSON or as an SSE stream. Sessions
// (lifecycle streams), the GET stream, subscriptions/listen and DELETE are
// kept in a session table shared by the binding's workers.
package server
