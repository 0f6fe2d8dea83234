// A differential client: the TypeScript SDK's client, connected once
// directly to an upstream MCP server and once to a Sluice gateway that has
// it as the route named prefix, does the same things on both and reports
// where the answers differ: every tool called with arguments made from its
// input schema, the lists, each listed resource read, each prompt got and
// completed, logging/setLevel, a resource subscription, and what the server
// asked the client (elicitation, sampling) on the way.
//
//   node ts-diff-client.mjs <2025|2026> <direct URL> <gateway URL> <prefix> [tool,tool,… to skip]
//
// 2025 runs the 1.x SDK at 2025-11-25; 2026 runs @modelcontextprotocol/client
// (2.x) pinned to 2026-07-28. Before comparing, an answer through the
// gateway has the route's prefix taken off its names and URIs; both sides
// lose _meta's serverInfo (the gateway is the server its clients see) and
// the random ids (UUIDs) servers write into their answers, and,
// at 2025-11-25, the 2026-07-28 members resultType, ttlMs and cacheScope,
// which go-sdk sends a 2025 client and the gateway does not; keys are
// compared in sorted order. It prints one JSON object, {checked, diffs}.
const [era, directURL, gatewayURL, prefix, skipList] = process.argv.slice(2);
const skip = new Set((skipList ?? "").split(",").filter(Boolean));
const P = prefix + "__";
const R = prefix + "+";

let Client, Transport, handlers;
if (era === "2026") {
  const v2 = await import("@modelcontextprotocol/client");
  Client = v2.Client;
  Transport = v2.StreamableHTTPClientTransport;
  handlers = (c, log) => {
    c.setRequestHandler("elicitation/create", async (r) => answerElicit(r, log));
    c.setRequestHandler("sampling/createMessage", async (r) => answerSampling(r, log));
    c.setRequestHandler("roots/list", async () => ({ roots: [{ uri: "file:///srv/project", name: "project" }] }));
  };
} else {
  ({ Client } = await import("@modelcontextprotocol/sdk/client/index.js"));
  ({ StreamableHTTPClientTransport: Transport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js"));
  const t = await import("@modelcontextprotocol/sdk/types.js");
  handlers = (c, log) => {
    c.setRequestHandler(t.ElicitRequestSchema, async (r) => answerElicit(r, log));
    c.setRequestHandler(t.CreateMessageRequestSchema, async (r) => answerSampling(r, log));
    c.setRequestHandler(t.ListRootsRequestSchema, async () => ({ roots: [{ uri: "file:///srv/project", name: "project" }] }));
  };
}

function answerElicit(r, log) {
  log.push("elicitation/create " + (r.params.mode ?? "form") + " " + (r.params.message ?? ""));
  if (r.params.mode === "url") return { action: "decline" };
  const content = {};
  for (const [k, s] of Object.entries(r.params.requestedSchema?.properties ?? {})) content[k] = sample(s);
  return { action: "accept", content };
}

function answerSampling(r, log) {
  log.push("sampling/createMessage");
  return { model: "test-model", role: "assistant", content: { type: "text", text: "sampled" } };
}

// sample makes a value a JSON schema accepts: the first of an enum, the
// default, or one of the type.
function sample(s) {
  if (!s || typeof s !== "object") return "x";
  if (Array.isArray(s.enum) && s.enum.length) return s.enum[0];
  if (Array.isArray(s.oneOf) && s.oneOf.length && s.oneOf[0].const !== undefined) return s.oneOf[0].const;
  if (s.default !== undefined) return s.default;
  switch (Array.isArray(s.type) ? s.type[0] : s.type) {
    case "number":
    case "integer":
      return s.minimum ?? 1;
    case "boolean":
      return true;
    case "array":
      return s.items?.enum ? [s.items.enum[0]] : [];
    case "object":
      return {};
    default:
      if (s.format === "email") return "ada@example.com";
      if (s.format === "uri") return "https://example.com";
      if (s.format === "date") return "2026-01-01";
      return "x";
  }
}

// args fills a tool's required arguments; overrides keep slow tools short.
const overrides = {
  "trigger-long-running-operation": { duration: 1, steps: 2 },
};
function args(tool) {
  if (overrides[tool.name]) return overrides[tool.name];
  const a = {};
  const props = tool.inputSchema?.properties ?? {};
  for (const k of tool.inputSchema?.required ?? []) a[k] = sample(props[k]);
  return a;
}

async function connect(url, log) {
  const opts = { capabilities: { sampling: {}, elicitation: { form: {}, url: {} }, roots: { listChanged: true } } };
  if (era === "2026") opts.versionNegotiation = { mode: { pin: "2026-07-28" } };
  const c = new Client({ name: "sluice-diff", version: "1.0.0" }, opts);
  handlers(c, log);
  await c.connect(new Transport(new URL(url)));
  return c;
}

function canonical(v) {
  if (Array.isArray(v)) return v.map(canonical);
  if (v && typeof v === "object") {
    const o = {};
    for (const k of Object.keys(v).sort()) o[k] = canonical(v[k]);
    return o;
  }
  return v;
}

// uuid matches the random ids (sessions, elicitations) a server writes
// into its answers.
const uuid = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

function normalize(v, unprefix) {
  let s = JSON.stringify(v ?? null).replace(uuid, "<uuid>");
  if (unprefix) s = s.replaceAll(P, "").replaceAll(R, "");
  const o = JSON.parse(s);
  if (o && typeof o === "object" && !Array.isArray(o)) {
    if (o._meta) {
      delete o._meta["io.modelcontextprotocol/serverInfo"];
      if (Object.keys(o._meta).length === 0) delete o._meta;
    }
    if (era !== "2026") {
      delete o.resultType;
      delete o.ttlMs;
      delete o.cacheScope;
    }
  }
  return JSON.stringify(canonical(o));
}

const directLog = [];
const gatewayLog = [];
const direct = await connect(directURL, directLog);
const gateway = await connect(gatewayURL, gatewayLog);
const diffs = [];
let checked = 0;

async function both(what, onDirect, onGateway) {
  const run = async (f) => {
    try {
      return await f();
    } catch (e) {
      return { error: String(e?.message ?? e) };
    }
  };
  const d = await run(onDirect);
  const g = await run(onGateway);
  const nd = normalize(d, false);
  const ng = normalize(g, true);
  checked++;
  if (nd !== ng) diffs.push({ what, direct: nd.slice(0, 2000), gateway: ng.slice(0, 2000) });
  return d;
}

const mine = (items, key) => items.filter((x) => String(x[key]).startsWith(key === "name" ? P : R));

const tools = await both("tools/list", () => direct.listTools(), async () => {
  const r = await gateway.listTools();
  return { ...r, tools: mine(r.tools, "name") };
});
const resources = await both("resources/list", () => direct.listResources(), async () => {
  const r = await gateway.listResources();
  return { ...r, resources: mine(r.resources, "uri") };
});
await both("resources/templates/list", () => direct.listResourceTemplates(), async () => {
  const r = await gateway.listResourceTemplates();
  return { ...r, resourceTemplates: r.resourceTemplates.filter((x) => x.uriTemplate.startsWith(R)) };
});
const prompts = await both("prompts/list", () => direct.listPrompts(), async () => {
  const r = await gateway.listPrompts();
  return { ...r, prompts: mine(r.prompts, "name") };
});

for (const r of (resources.resources ?? []).slice(0, 5)) {
  await both("resources/read " + r.uri, () => direct.readResource({ uri: r.uri }), () => gateway.readResource({ uri: R + r.uri }));
}
for (const p of prompts.prompts ?? []) {
  const a = {};
  for (const x of p.arguments ?? []) a[x.name] = x.name === "resourceId" ? "1" : x.name === "resourceType" ? "Text" : "x";
  await both("prompts/get " + p.name, () => direct.getPrompt({ name: p.name, arguments: a }), () => gateway.getPrompt({ name: P + p.name, arguments: a }));
  if (p.arguments?.length) {
    const argument = { name: p.arguments[0].name, value: "" };
    await both("completion/complete " + p.name,
      () => direct.complete({ ref: { type: "ref/prompt", name: p.name }, argument }),
      () => gateway.complete({ ref: { type: "ref/prompt", name: P + p.name }, argument }));
  }
}
for (const t of tools.tools ?? []) {
  if (skip.has(t.name)) continue;
  const a = args(t);
  directLog.push("call " + t.name);
  gatewayLog.push("call " + t.name);
  await both("tools/call " + t.name, () => direct.callTool({ name: t.name, arguments: a }), () => gateway.callTool({ name: P + t.name, arguments: a }));
}
if (era !== "2026") {
  await both("logging/setLevel", () => direct.setLoggingLevel("error"), () => gateway.setLoggingLevel("error"));
  const uri = resources.resources?.[0]?.uri;
  if (uri) {
    await both("resources/subscribe", () => direct.subscribeResource({ uri }), () => gateway.subscribeResource({ uri: R + uri }));
  }
}
// What each call asked the client, in any order (a server may ask several
// things at once).
const asked = (log) => {
  const groups = [[]];
  for (const e of log) {
    if (e.startsWith("call ")) groups.push([e]);
    else groups[groups.length - 1].push(e);
  }
  return JSON.stringify(groups.map((g) => [g[0], ...g.slice(1).sort()]));
};
checked++;
if (asked(directLog) !== asked(gatewayLog)) {
  diffs.push({ what: "requests to the client", direct: asked(directLog), gateway: asked(gatewayLog) });
}
await direct.close();
await gateway.close();
console.log(JSON.stringify({ checked, diffs }));
process.exit(0);
