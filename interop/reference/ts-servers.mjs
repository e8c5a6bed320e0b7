// Reference implementations of the picomcp example servers written with the
// official TypeScript SDK (McpServer).  They exist to check the interop test
// harness itself: `scripts/mcp/interop.sh --reference` runs the same tests
// against these.  Some picomcp-specific expectations (exact validation error
// text) are expected to differ.
//
// usage: node ts-servers.mjs <echo|search_issues|get_price|image|slow> [--http 127.0.0.1:PORT]
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';

const [example, flag, addr] = process.argv.slice(2);
const PNG_1x1 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';

function build() {
  const server = new McpServer({ name: `ts-ref-${example}`, version: '0.0.0' });
  switch (example) {
    case 'echo':
      server.registerTool('echo', { description: 'Echo text', inputSchema: { text: z.string() } },
        async ({ text }) => ({ content: [{ type: 'text', text }] }));
      break;
    case 'search_issues':
      server.registerTool('search_issues', {
        description: 'Search issues',
        inputSchema: { repo: z.string(), query: z.string(), limit: z.number().int().max(50).default(10) },
      }, async ({ repo, query, limit }) => ({
        content: [{ type: 'text', text: `${limit} issues in ${repo} matching ${query}` }],
      }));
      break;
    case 'get_price':
      server.registerTool('get_price', {
        description: 'Price of a SKU',
        inputSchema: { sku: z.string() },
        outputSchema: { sku: z.string(), cents: z.number().int(), currency: z.literal('EUR') },
      }, async ({ sku }) => {
        const sc = { sku, cents: 1299, currency: 'EUR' };
        return { content: [{ type: 'text', text: JSON.stringify(sc) }], structuredContent: sc };
      });
      break;
    case 'image':
      server.registerTool('image', { description: 'A tiny PNG' },
        async () => ({ content: [{ type: 'image', data: PNG_1x1, mimeType: 'image/png' }] }));
      break;
    case 'slow':
      server.registerTool('slow', { description: 'Sleep', inputSchema: { seconds: z.number().min(0) } },
        async ({ seconds }, extra) => {
          const token = extra._meta?.progressToken;
          const steps = Math.max(1, Math.round(seconds * 10));
          for (let i = 1; i <= steps && seconds > 0; i++) {
            await new Promise((resolve, reject) => {
              const t = setTimeout(resolve, 100);
              extra.signal.addEventListener('abort', () => { clearTimeout(t); reject(new Error('cancelled')); }, { once: true });
            });
            if (token !== undefined) {
              await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: i, total: steps } });
            }
          }
          return { content: [{ type: 'text', text: `slept ${seconds}s` }] };
        });
      break;
    default:
      throw new Error(`unknown example ${example}`);
  }
  return server;
}

if (flag !== '--http') {
  await build().connect(new StdioServerTransport());
} else {
  const [host, port] = addr.split(':');
  const sessions = new Map();
  http.createServer(async (req, res) => {
    if (!req.url.startsWith('/mcp')) { res.writeHead(404).end(); return; }
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString()) : undefined;
    const sid = req.headers['mcp-session-id'];
    let transport = sid && sessions.get(sid);
    if (!transport) {
      if (sid || req.method !== 'POST' || !isInitializeRequest(body)) {
        res.writeHead(sid ? 404 : 400, { 'content-type': 'application/json' })
          .end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'no session' }, id: null }));
        return;
      }
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => sessions.set(id, transport),
      });
      transport.onclose = () => { if (transport.sessionId) sessions.delete(transport.sessionId); };
      await build().connect(transport);
    }
    await transport.handleRequest(req, res, body);
  }).listen(Number(port), host);
}
