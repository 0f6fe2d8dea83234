// An MCP Apps server (SEP-1865) on the TypeScript SDK and ext-apps'
// server helpers, stateless Streamable HTTP on 127.0.0.1:<port>/mcp: tool
// weather names its view ui://weather/view.html (registerAppTool writes
// _meta.ui.resourceUri and the flat _meta["ui/resourceUri"]), the view is a
// resource of ext-apps' mime type, and a call answers with a link to it.
// <label> goes into every answer, so that a test can tell two apart.
// Usage: node ts-apps-server.mjs <port> <label>
import http from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { registerAppTool, registerAppResource, RESOURCE_MIME_TYPE } from '@modelcontextprotocol/ext-apps/server';
import { z } from 'zod';

const [port, label] = process.argv.slice(2);
const view = 'ui://weather/view.html';

function build() {
  const server = new McpServer({ name: `apps-${label}`, version: '1.0.0' });
  registerAppTool(server, 'weather', {
    description: 'The weather, with a view',
    inputSchema: { city: z.string() },
    _meta: { ui: { resourceUri: view } },
  }, async ({ city }) => ({
    content: [
      { type: 'text', text: `${label}: sunny in ${city}` },
      { type: 'resource_link', uri: view, name: 'view', mimeType: RESOURCE_MIME_TYPE },
    ],
  }));
  registerAppResource(server, 'Weather View', view, { description: 'The weather view' }, async (uri) => ({
    contents: [{ uri: uri.href, mimeType: RESOURCE_MIME_TYPE, text: `<html><body>${label}</body></html>` }],
  }));
  return server;
}

http.createServer(async (req, res) => {
  if (!req.url.startsWith('/mcp')) {
    res.writeHead(404).end();
    return;
  }
  if (req.method !== 'POST') {
    res.writeHead(405, { Allow: 'POST' }).end();
    return;
  }
  const chunks = [];
  for await (const c of req) chunks.push(c);
  let body;
  try {
    body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    res.writeHead(400).end();
    return;
  }
  const server = build();
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  res.on('close', () => {
    transport.close();
    server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, body);
}).listen(Number(port), '127.0.0.1');
