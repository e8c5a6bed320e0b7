// A reference MCP server written with the official TypeScript SDK 2.x
// (@modelcontextprotocol/server), serving both eras on one endpoint: the
// 2026-07-28 ("modern": server/discover, per-request _meta, input_required)
// and the 2025-11-25 ("legacy": initialize) era.  mm's client is tested
// against it (crates/mm/tests/suite/mcp.rs, crates/mm-core/tests/suite/mcp.rs).
//
// usage: node ts2-server.mjs [--http 127.0.0.1:PORT]   (default: stdio)
//
// Tools:
//   echo(text)          -> the text
//   add(a:int, b:int)   -> structuredContent {sum}, text "a + b = sum"
//   era()               -> "era=<modern|legacy> version=<the request's _meta protocol version|none>"
//                          (the SDK's own verdict on the era it serves the request in)
//   confirm(action)     -> asks the client to confirm (an elicitation: input_required in
//                          the modern era, a real elicitation/create request in the legacy
//                          era through the SDK's shim); "confirmed <action> by <who>" or
//                          "declined <action>"
import http from 'node:http';
import { z } from 'zod';
import { McpServer, acceptedContent, createMcpHandler, inputRequired } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';

const [flag, addr] = process.argv.slice(2);

/** One server instance; `era` is what the SDK decided this instance serves. */
function factory({ era }) {
  const server = new McpServer({ name: 'ts2-reference', version: '2.3.1' }, { capabilities: { tools: {} } });
  server.registerTool('echo', {
    description: 'Echo text',
    inputSchema: z.object({ text: z.string() }),
  }, async ({ text }) => ({ content: [{ type: 'text', text }] }));
  server.registerTool('add', {
    description: 'Add two integers',
    inputSchema: z.object({ a: z.number().int(), b: z.number().int() }),
    outputSchema: z.object({ sum: z.number().int() }),
  }, async ({ a, b }) => ({
    content: [{ type: 'text', text: `${a} + ${b} = ${a + b}` }],
    structuredContent: { sum: a + b },
  }));
  server.registerTool('era', { description: 'Which protocol era this request is served in' },
    async (ctx) => {
      const version = ctx.mcpReq.envelope?.['io.modelcontextprotocol/protocolVersion'] ?? 'none';
      return { content: [{ type: 'text', text: `era=${era} version=${version}` }] };
    });
  const confirmation = z.object({ who: z.string() });
  server.registerTool('confirm', {
    description: 'Asks the user to confirm an action',
    inputSchema: z.object({ action: z.string() }),
  }, async ({ action }, ctx) => {
    const responses = ctx.mcpReq.inputResponses;
    if (!responses || !('confirm' in responses)) {
      return inputRequired({
        inputRequests: {
          confirm: inputRequired.elicit({
            message: `Confirm ${action}?`,
            requestedSchema: {
              type: 'object',
              properties: { who: { type: 'string', description: 'Your name', default: 'nobody' } },
              required: ['who'],
            },
          }),
        },
      });
    }
    const content = acceptedContent(responses, 'confirm');
    const parsed = content && confirmation.safeParse(content);
    if (!parsed?.success) return { content: [{ type: 'text', text: `declined ${action}` }] };
    return { content: [{ type: 'text', text: `confirmed ${action} by ${parsed.data.who}` }] };
  });
  return server;
}

if (flag !== '--http') {
  serveStdio(factory, { onerror: (e) => console.error('ts2-server:', e?.message ?? e) });
} else {
  const [host, port] = addr.split(':');
  const handler = createMcpHandler(factory, {
    onerror: (e) => console.error('ts2-server:', e?.message ?? e),
  });
  // node:http <-> the handler's web-standard fetch face.
  http.createServer(async (req, res) => {
    try {
      if (!req.url.startsWith('/mcp')) { res.writeHead(404).end(); return; }
      const chunks = [];
      for await (const c of req) chunks.push(c);
      const abort = new AbortController();
      res.once('close', () => abort.abort());
      const headers = new Headers();
      for (const [k, v] of Object.entries(req.headers)) {
        if (Array.isArray(v)) v.forEach((x) => headers.append(k, x)); else if (v !== undefined) headers.set(k, v);
      }
      const hasBody = chunks.length > 0 && req.method !== 'GET' && req.method !== 'HEAD';
      const request = new Request(`http://${req.headers.host ?? addr}${req.url}`, {
        method: req.method,
        headers,
        body: hasBody ? Buffer.concat(chunks) : undefined,
        signal: abort.signal,
      });
      const response = await handler.fetch(request);
      res.writeHead(response.status, Object.fromEntries(response.headers));
      if (response.body) {
        for await (const chunk of response.body) res.write(chunk);
      }
      res.end();
    } catch (e) {
      console.error('ts2-server: http:', e?.message ?? e);
      if (!res.headersSent) res.writeHead(500);
      res.end();
    }
  }).listen(Number(port), host);
}
