// The TypeScript SDK's Streamable HTTP client with sampling, elicitation
// (form) and roots handlers, through a Sluice gateway whose routes are
// everything (go-sdk's everything-server), node (server-everything) and
// local: each upstream's tools that ask the client something. It prints one
// JSON object; the Go test asserts on it.
//
//   node ts-s2c-client.mjs http://127.0.0.1:PORT/mcp
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";

const url = new URL(process.argv[2]);
const out = { sampling: [], elicitation: [], roots: 0 };
const client = new Client(
  { name: "sluice-ts-s2c-test", version: "1.0.0" },
  { capabilities: { sampling: {}, elicitation: { form: {} }, roots: { listChanged: true } } },
);
client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
  out.sampling.push(req.params.messages[0].content.text);
  return { model: "test-model", role: "assistant", content: { type: "text", text: "sampled answer" } };
});
client.setRequestHandler(ElicitRequestSchema, async (req) => {
  const props = req.params.requestedSchema?.properties ?? {};
  out.elicitation.push({ message: req.params.message, fields: Object.keys(props) });
  // go-sdk's server refuses its own SEP-1330 schema when an accepted
  // answer comes back (it checks titled multi-selects as untitled), so
  // that one is declined: the decline still has to reach it.
  if (req.params.message === "Test enum schemas") return { action: "decline" };
  const content = {};
  for (const [name, schema] of Object.entries(props)) {
    if (schema.default !== undefined) content[name] = schema.default;
    else if (schema.enum) content[name] = schema.enum[0];
    else if (schema.oneOf) content[name] = schema.oneOf[0].const;
    else if (schema.type === "array") {
      const items = schema.items ?? {};
      const first = items.enum?.[0] ?? items.anyOf?.[0]?.const ?? items.oneOf?.[0]?.const;
      content[name] = first === undefined ? [] : [first];
    }
    else if (schema.type === "boolean") content[name] = true;
    else if (schema.type === "number" || schema.type === "integer") content[name] = 1;
    else content[name] = "x";
  }
  return { action: "accept", content };
});
client.setRequestHandler(ListRootsRequestSchema, async () => {
  out.roots++;
  return { roots: [{ uri: "file:///work/project", name: "project" }] };
});
const transport = new StreamableHTTPClientTransport(url);
await client.connect(transport);

const text = (r) => r.content.filter((c) => c.type === "text").map((c) => c.text).join("\n");
out.goSampling = text(await client.callTool({ name: "everything__test_sampling", arguments: { prompt: "hello from go" } }));
out.goElicitation = text(await client.callTool({ name: "everything__test_elicitation", arguments: { message: "who are you?" } }));
out.goDefaults = text(await client.callTool({ name: "everything__test_elicitation_sep1034_defaults", arguments: {} }));
out.goEnums = text(await client.callTool({ name: "everything__test_elicitation_sep1330_enums", arguments: {} }));
out.nodeSampling = text(await client.callTool({ name: "node__trigger-sampling-request", arguments: { prompt: "hello from node", maxTokens: 20 } }));
out.nodeElicitation = text(await client.callTool({ name: "node__trigger-elicitation-request", arguments: {} }));
const tools = await client.listTools();
if (tools.tools.some((t) => t.name === "node__get-roots-list")) {
  out.nodeRoots = text(await client.callTool({ name: "node__get-roots-list", arguments: {} }));
}
await transport.terminateSession();
await client.close();
console.log(JSON.stringify(out));
