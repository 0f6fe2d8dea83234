// The TypeScript SDK's Streamable HTTP client through a Sluice gateway whose
// routes are everything (go-sdk's everything-server), node
// (server-everything) and local (the built-in toolkit): the merged tool
// list, a call on each route, progress, a resource and a prompt, a cancelled
// call and one after it. It prints one JSON object; the Go test asserts on it.
//
//   node ts-gateway-client.mjs http://127.0.0.1:PORT/mcp
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const url = new URL(process.argv[2]);
const out = {};
const client = new Client({ name: "sluice-ts-gateway-test", version: "1.0.0" });
const transport = new StreamableHTTPClientTransport(url);
await client.connect(transport);
out.protocolVersion = transport.protocolVersion;

const tools = await client.listTools();
out.tools = tools.tools.map((t) => t.name);

const simple = await client.callTool({ name: "everything__test_simple_text", arguments: {} });
out.simple = simple.content[0].text;
const echo = await client.callTool({ name: "node__echo", arguments: { message: "hi" } });
out.echo = echo.content[0].text;
const add = await client.callTool({ name: "local__add", arguments: { a: 2, b: 3 } });
out.add = add.content[0].text;

const progress = [];
await client.callTool(
  { name: "everything__test_tool_with_progress", arguments: {} },
  undefined,
  { onprogress: (p) => progress.push(p.progress) },
);
out.progress = progress;

const read = await client.readResource({ uri: "everything+test://static-text" });
out.resource = read.contents[0].text;
out.resourceUri = read.contents[0].uri;

const prompt = await client.getPrompt({
  name: "everything__test_prompt_with_arguments",
  arguments: { arg1: "alpha", arg2: "beta" },
});
out.prompt = prompt.messages[0].content.text;

const controller = new AbortController();
setTimeout(() => controller.abort("test cancel"), 500);
try {
  await client.callTool(
    { name: "node__trigger-long-running-operation", arguments: { duration: 10, steps: 10 } },
    undefined,
    { signal: controller.signal },
  );
  out.cancelled = "completed";
} catch (e) {
  out.cancelled = String(e && e.message ? e.message : e);
}
const after = await client.callTool({ name: "node__echo", arguments: { message: "after" } });
out.after = after.content[0].text;

await transport.terminateSession();
await client.close();
console.log(JSON.stringify(out));
