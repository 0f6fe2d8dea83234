// An MCP Apps host's reads through a gateway, on the TypeScript SDK's
// client and ext-apps' app-bridge. With "ui" it declares the MCP Apps
// extension, rendering views of ext-apps' mime type; without, nothing.
// For each tool that names a view (getToolUiResourceUri, which refuses
// any uri but ui://), it reads the view, calls the tool and reads the view
// its result links to; it lists the tools without one, the resources, and
// whether the server declared the extension. Prints one JSON object.
// Usage: node ts-apps-host.mjs <endpoint> [ui]
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { getToolUiResourceUri, RESOURCE_MIME_TYPE } from '@modelcontextprotocol/ext-apps/app-bridge';

const [endpoint, ui] = process.argv.slice(2);
const extension = 'io.modelcontextprotocol/ui';
const capabilities = ui === 'ui' ? { extensions: { [extension]: { mimeTypes: [RESOURCE_MIME_TYPE] } } } : {};
const client = new Client({ name: 'sluice-apps-host', version: '1.0.0' }, { capabilities });
await client.connect(new StreamableHTTPClientTransport(new URL(endpoint)));

const out = { extension: client.getServerCapabilities()?.extensions?.[extension] !== undefined, tools: {}, plain: [], resources: [] };
for (const tool of (await client.listTools()).tools) {
  const uri = getToolUiResourceUri(tool);
  if (uri === undefined) {
    out.plain.push(tool.name);
    continue;
  }
  const read = await client.readResource({ uri });
  const call = await client.callTool({ name: tool.name, arguments: { city: 'Oslo' } });
  const link = call.content.find((c) => c.type === 'resource_link');
  const linked = await client.readResource({ uri: link.uri });
  out.tools[tool.name] = {
    uri,
    flat: tool._meta['ui/resourceUri'],
    mimeType: read.contents[0].mimeType,
    html: read.contents[0].text,
    readUri: read.contents[0].uri,
    text: call.content.find((c) => c.type === 'text').text,
    link: link.uri,
    linkedHtml: linked.contents[0].text,
    view: read.contents[0].mimeType === RESOURCE_MIME_TYPE,
  };
}
for (const r of (await client.listResources()).resources) out.resources.push(r.uri);
out.resources.sort();
out.plain.sort();
console.log(JSON.stringify(out));
await client.close();
