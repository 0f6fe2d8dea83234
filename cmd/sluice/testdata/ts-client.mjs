// The TypeScript SDK's Streamable HTTP client against a Sluice endpoint:
// initialize → tools/list → tools/call with progress → resources/read →
// prompts/get → cancel a long call → a call after it → close. It prints one
// JSON object with what it saw; the Go test asserts on it.
//
//   node ts-client.mjs http://127.0.0.1:7114/mcp
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const url = new URL(process.argv[2]);
const out = {};
const client = new Client({ name: "sluice-ts-test", version: "1.0.0" });
const transport = new StreamableHTTPClientTransport(url);
await client.connect(transport);
out.protocolVersion = transport.protocolVersion;
out.sessionId = transport.sessionId;
out.serverInfo = client.getServerVersion();

const tools = await client.listTools();
out.tools = tools.tools.map((t) => t.name);

const echo = await client.callTool({ name: "echo", arguments: { message: "hi" } });
out.echo = echo.content[0].text;

const progress = [];
const long = await client.callTool(
  { name: "long_running_operation", arguments: { duration: 0.3, steps: 3 } },
  undefined,
  { onprogress: (p) => progress.push(p.progress) },
);
out.progress = progress;
out.long = long.content[0].text;

const read = await client.readResource({ uri: "sluice://toolkit/readme" });
out.resource = read.contents[0].text;

const prompt = await client.getPrompt({ name: "greeting", arguments: { name: "Ada" } });
out.prompt = prompt.messages[0].content.text;

const controller = new AbortController();
setTimeout(() => controller.abort("test cancel"), 300);
try {
  await client.callTool(
    { name: "long_running_operation", arguments: { duration: 10, steps: 10 } },
    undefined,
    { signal: controller.signal },
  );
  out.cancelled = "completed";
} catch (e) {
  out.cancelled = String(e && e.message ? e.message : e);
}

const add = await client.callTool({ name: "add", arguments: { a: 2, b: 3 } });
out.add = add.content[0].text;

await transport.terminateSession();
await client.close();
console.log(JSON.stringify(out));
