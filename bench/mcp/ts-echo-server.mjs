// Benchmark peer: trivial `echo` tool on the official MCP TypeScript SDK
// (McpServer.registerTool).  Dependencies come from interop/ (pinned);
// bench/mcp/run.sh links bench/mcp/node_modules -> ../../interop/node_modules.
//
//   node ts-echo-server.mjs                       # stdio
//   node ts-echo-server.mjs --http 127.0.0.1:PORT # Streamable HTTP /mcp,
//                                                 # stateful sessions, JSON responses
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';

function build() {
  const server = new McpServer({ name: 'ts-echo', version: '0.0.0' });
  server.registerTool('echo', {
    description: 'Echo the text back',
    inputSchema: { text: z.string() },
  }, async ({ text }) => ({ content: [{ type: 'text', text }] }));
  return server;
}

const [flag, addr] = process.argv.slice(2);
if (flag !== '--http') {
  await build().connect(new StdioServerTransport());
} else {
  const [host, port] = addr.split(':');
  const sessions = new Map();
  http.createServer(async (req, res) => {
    try {
      const chunks = [];
      for await (const c of req) chunks.push(c);
      const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString()) : undefined;
      const sid = req.headers['mcp-session-id'];
      let transport = sid && sessions.get(sid);
      if (!transport) {
        if (sid || req.method !== 'POST' || !isInitializeRequest(body)) {
          res.writeHead(sid ? 404 : 400, { 'content-type': 'application/json' }).end(
            JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'bad session' }, id: null }));
          return;
        }
        transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          enableJsonResponse: true,
          onsessioninitialized: (id) => sessions.set(id, transport),
        });
        transport.onclose = () => { if (transport.sessionId) sessions.delete(transport.sessionId); };
        await build().connect(transport);
      }
      await transport.handleRequest(req, res, body);
    } catch (e) {
      if (!res.headersSent) res.writeHead(500).end(String(e));
    }
  }).listen(Number(port), host);
}
