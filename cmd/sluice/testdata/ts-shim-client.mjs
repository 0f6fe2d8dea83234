// The TypeScript SDK's Streamable HTTP client, a 2025-era client with
// elicitation, sampling and roots handlers, through a Sluice gateway to
// go-sdk's everything-server run stateless (2026-07-28 only): it calls the
// tools and the prompt that answer input_required, which the gateway's
// legacy shim turns into requests to this client. It prints one JSON
// object; the Go test asserts on it.
//
//   node ts-shim-client.mjs http://127.0.0.1:PORT/mcp
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";

const url = new URL(process.argv[2]);
const out = { asked: [], results: {}, inputRequiredSeen: false };
const client = new Client(
  { name: "sluice-ts-shim-test", version: "1.0.0" },
  { capabilities: { sampling: {}, elicitation: { form: {} }, roots: { listChanged: true } } },
);
const answers = {
  "Please confirm": { ok: true },
  "Step 2: What is your favorite color?": { color: "teal" },
  "Please provide context for the prompt": { context: "gateway tests" },
};
client.setRequestHandler(ElicitRequestSchema, async (req) => {
  out.asked.push("elicitation: " + req.params.message);
  return { action: "accept", content: answers[req.params.message] ?? { name: "Ada" } };
});
client.setRequestHandler(CreateMessageRequestSchema, async () => {
  out.asked.push("sampling");
  return { model: "test-model", role: "assistant", content: { type: "text", text: "Paris" } };
});
client.setRequestHandler(ListRootsRequestSchema, async () => {
  out.asked.push("roots");
  return { roots: [{ uri: "file:///work/project", name: "project" }] };
});
const transport = new StreamableHTTPClientTransport(url);
await client.connect(transport);

const text = (r) => {
  if (r.resultType === "input_required" || r.inputRequests) out.inputRequiredSeen = true;
  return (r.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
};
for (const name of [
  "test_input_required_result_elicitation",
  "test_input_required_result_sampling",
  "test_input_required_result_list_roots",
  "test_input_required_result_request_state",
  "test_input_required_result_multiple_inputs",
  "test_input_required_result_multi_round",
]) {
  out.results[name] = text(await client.callTool({ name, arguments: {} }));
}
const prompt = await client.getPrompt({ name: "test_input_required_result_prompt" });
out.results.prompt = prompt.messages.map((m) => m.content.text).join("\n");
await transport.terminateSession();
await client.close();
console.log(JSON.stringify(out));
