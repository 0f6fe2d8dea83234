// The TypeScript SDK's OAuth discovery and a bearer-token client against a
// Sluice gateway whose routes are guarded: an initialize without a token,
// the WWW-Authenticate parameters the SDK reads from its 401, the
// protected resource metadata the SDK discovers from them and from the
// well-known path alone, then a client sending the token it is given,
// which lists the tools and calls the first one named by the caller. It
// prints one JSON object; the Go test asserts on it.
//
//   node ts-oauth-client.mjs http://127.0.0.1:PORT/mcp TOKEN TOOL
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  discoverOAuthProtectedResourceMetadata,
  extractWWWAuthenticateParams,
} from "@modelcontextprotocol/sdk/client/auth.js";

const url = new URL(process.argv[2]);
const token = process.argv[3];
const tool = process.argv[4];
const out = {};

const res = await fetch(url, {
  method: "POST",
  headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
  body: JSON.stringify({
    jsonrpc: "2.0", id: 1, method: "initialize",
    params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } },
  }),
});
out.status = res.status;
const params = extractWWWAuthenticateParams(res);
out.resourceMetadataUrl = params.resourceMetadataUrl?.href;
out.scope = params.scope;
out.error = params.error;
out.hinted = await discoverOAuthProtectedResourceMetadata(url, { resourceMetadataUrl: params.resourceMetadataUrl });
out.wellKnown = await discoverOAuthProtectedResourceMetadata(url);

const client = new Client({ name: "sluice-ts-oauth-test", version: "1.0.0" });
const transport = new StreamableHTTPClientTransport(url, {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
await client.connect(transport);
out.tools = (await client.listTools()).tools.map((t) => t.name);
const called = await client.callTool({ name: tool, arguments: {} });
out.called = called.content[0].text;
await transport.terminateSession();
await client.close();
console.log(JSON.stringify(out));
