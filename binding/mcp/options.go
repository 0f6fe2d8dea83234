package mcp

import (
	_ "embed"
	"encoding/json"
)

// optionsSchema is the JSON Schema of an mcp binding's options, for all
// three kinds; each kind rejects the options that are not its own when it
// compiles them. prefix is the proxy's; server the client's; timeout the
// client's (a duration) and the proxy's (a duration or one per method, as
// is a proxy route's with.timeout);
// versions and inputRequired the server's and the client's (the server's
// legacy shim takes maxRounds and roundTimeout, the client's reverse
// bridge key or store, roundTimeout and maxPending); the rest the
// server's.
//
// authorization (server, client, and the proxy's cache), elicitation
// (server) and cache and tools (proxy) have Zilla's shape, so that Zilla's
// configs load; cache.ttl also takes a duration per kind ({tools,
// resources, prompts}), which Sluice adds. The server serves
// authorization (a guard for each request's bearer token), Sluice's
// protectedResource, elicitation.timeout and sampling.timeout (how long a request the
// upstream sends the client waits for its answer), elicitation.callback
// (the path of its URL-mode elicitation callback) and inputRequired (the
// legacy shim's round cap and per-leg timeout); the proxy serves cache,
// with cache.tools (the search tools and the eager policy). options.tools
// (models) is refused at load as not supported.
//
//go:embed options.schema.json
var optionsSchema json.RawMessage

// whenSchema is one item of a route's when: for a proxy, the toolkit the
// route serves (its prefix, which proxyWhenSchema requires) and which of
// that toolkit's tools, prompts and resources it exposes, each a glob or
// a list of globs (an empty list exposes none); a client's routes name
// tools, prompts and resources without a toolkit.
//
//go:embed when.schema.json
var whenSchema json.RawMessage

// kindSchemas are what each kind requires or refuses of the shared
// options and conditions, after Zilla's mcp schema: a server has no
// routes (its exit is the application) and its authorization credentials
// place {credentials}; a client needs its server; a proxy's conditions
// name a toolkit. The options of the other kinds that Sluice has always
// had are refused when a kind compiles them, with a message naming the
// kind they belong to.
var kindSchemas = map[string]json.RawMessage{
	"server": serverKindSchema,
	"client": clientKindSchema,
	"proxy":  proxyKindSchema,
}

//go:embed kind-server.schema.json
var serverKindSchema json.RawMessage

//go:embed kind-client.schema.json
var clientKindSchema json.RawMessage

//go:embed kind-proxy.schema.json
var proxyKindSchema json.RawMessage

// withSchema is a proxy route's with: the credentials the cache's
// hydrate session presents on the route (Zilla's with.cache.credentials)
// and the route's request timeout (Sluice's).
//
//go:embed with.schema.json
var withSchema json.RawMessage
