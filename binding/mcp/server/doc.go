// Package server is the mcp binding's server kind (type mcp, kind server):
// MCP Streamable HTTP, protocol versions 2025-03-26 through 2026-07-28,
// behind an http server binding.
//
// Each HTTP request the http server routes to it arrives as a stream whose
// BEGIN carries the request's headers; the server validates the request
// (Origin, Host, Accept, protocol version, session), reads the JSON-RPC
// body with the jsonrpc tracker, and opens one application stream per MCP
// request toward its exit with the request's kind in an [mcp.McpBeginEx].
// The application's reply comes back as JSON or as an SSE stream.
//
// # Sessions and their workers
//
// A session (2025-era; lifecycle stream, GET stream, subscriptions,
// DELETE) is owned by the worker that took its initialize, and lives in
// that worker's session table only. Its id names the owner: the last byte
// of a random id, or, for the test-only sequential ids, a per-engine table
// of owners. A request stream lands on the worker of its TCP connection,
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
