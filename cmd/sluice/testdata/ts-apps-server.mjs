// An MCP Apps server (SEP-1865) on the TypeScript SDK and ext-apps'
// server helpers, Streamable HTTP with sessions on 127.0.0.1:<port>/mcp.
// It declares the MCP Apps extension and, as ext-apps documents, serves
// tool weather with its view ui://weather/view.html only to a client that
// declares it renders views (registerAppTool writes _meta.ui.resourceUri
// and the flat _meta["ui/resourceUri"]); any other gets a text-only
// weather. Tool time has no view. The view is a resource of ext-apps' mime type, and a call
// answers with a link to it. <label> goes into every answer, so that a
// test can tell two servers apart.
// Usage: node ts-apps-server.mjs <port> <label>
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import {
  registerAppTool, registerAppResource, getUiCapability, EXTENSION_ID, RESOURCE_MIME_TYPE,
} from '@modelcontextprotocol/ext-apps/server';
import { z } from 'zod';

const [port, label] = process.argv.slice(2);
const view = 'ui://weather/view.html';

function build() {
  const server = new McpServer({ name: `apps-${label}`, version: '1.0.0' },
    { capabilities: { extensions: { [EXTENSION_ID]: {} } } });
  const answer = ({ city }) => ({ content: [{ type: 'text', text: `${label}: sunny in ${city}` }] });
  // A tool from the start, so that initialize declares tools.
  server.registerTool('time', { description: 'The time' }, () => ({ content: [{ type: 'text', text: 'noon' }] }));
  server.server.oninitialized = () => {
    if (!getUiCapability(server.server.getClientCapabilities())?.mimeTypes?.includes(RESOURCE_MIME_TYPE)) {
      server.registerTool('weather', { description: 'The weather', inputSchema: { city: z.string() } }, answer);
      return;
    }
    registerAppTool(server, 'weather', {
      description: 'The weather, with a view',
      inputSchema: { city: z.string() },
      _meta: { ui: { resourceUri: view } },
    }, async (args) => {
      const r = answer(args);
      r.content.push({ type: 'resource_link', uri: view, name: 'view', mimeType: RESOURCE_MIME_TYPE });
      return r;
    });
  };
  registerAppResource(server, 'Weather View', view, { description: 'The weather view' }, async (uri) => ({
    contents: [{ uri: uri.href, mimeType: RESOURCE_MIME_TYPE, text: `<html><body>${label}</body></html>` }],
  }));
  return server;
}

const sessions = new Map();

http.createServer(async (req, res) => {
  if (!req.url.startsWith('/mcp')) {
    res.writeHead(404).end();
    return;
  }
  let body;
  if (req.method === 'POST') {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      res.writeHead(400).end();
      return;
    }
  }
  const sid = req.headers['mcp-session-id'];
  let transport = sid === undefined ? undefined : sessions.get(sid);
  if (transport === undefined) {
    if (sid !== undefined || req.method !== 'POST' || !isInitializeRequest(body)) {
      res.writeHead(sid === undefined ? 400 : 404).end();
      return;
    }
    transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => sessions.set(id, transport),
    });
    transport.onclose = () => sessions.delete(transport.sessionId);
    await build().connect(transport);
  }
  await transport.handleRequest(req, res, body);
}).listen(Number(port), '127.0.0.1');
