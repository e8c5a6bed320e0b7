// Interop: the official MCP TypeScript SDK client against picomcp's examples,
// over stdio and Streamable HTTP.  Run with scripts/mcp/interop.sh (it builds
// the examples first).  Set MCP_INTEROP_TRACE=1 to print every message.
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

import { connect, textOf, withTranscript } from './helpers.mjs';

const TRANSPORTS = (process.env.MCP_INTEROP_TRANSPORTS ?? 'stdio,http').split(',');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Asserts the SDK client reported no protocol errors, except the SDK's own
 * race (typescript-sdk issue #2580): it processes a response synchronously and
 * a notification asynchronously, so a final progress notification that arrived
 * on the wire BEFORE the response is still reported as "unknown token".  Such
 * an error is excused only when the transcript proves that wire order.
 */
function noClientErrors(ctx, t) {
  const real = [];
  for (const e of ctx.clientErrors) {
    const m = /^Received a progress notification for an unknown token: (.*)$/s.exec(e.message);
    if (m) {
      const note = JSON.parse(m[1]);
      const token = note.params.progressToken;
      const idx = (pred) => ctx.transcript.findIndex((x) => x.dir === 'server->client' && pred(x.msg));
      const iNote = idx((msg) => msg.method === 'notifications/progress' &&
        msg.params.progressToken === token && msg.params.progress === note.params.progress);
      const iResp = idx((msg) => msg.id === token && ('result' in msg || 'error' in msg));
      if (iNote >= 0 && iResp >= 0 && iNote < iResp) {
        t.diagnostic(`excused SDK client race (typescript-sdk#2580): progress ${note.params.progress} for ` +
          `token ${token} arrived before its response but was processed after it`);
        continue;
      }
      // A progress notification already in flight when the client cancelled the
      // request (within 250 ms of notifications/cancelled) is an unavoidable race;
      // later ones are a server bug, caught by the cancellation test itself.
      const cancel = ctx.transcript.find((x) => x.dir === 'client->server' &&
        x.msg.method === 'notifications/cancelled' && x.msg.params.requestId === token);
      if (cancel && iNote >= 0 && ctx.transcript[iNote].at - cancel.at <= 250) {
        t.diagnostic(`excused progress ${note.params.progress} for token ${token}: in flight when the ` +
          `request was cancelled (${ctx.transcript[iNote].at - cancel.at} ms after notifications/cancelled)`);
        continue;
      }
    }
    real.push(String(e));
  }
  assert.deepEqual(real, []);
}

/** Opens one connection per describe block, closed in after(). */
function useServer(example, kind) {
  const ctx = {};
  before(async () => { Object.assign(ctx, await connect(example, kind)); });
  after(async () => { await ctx.close?.(); });
  return ctx;
}

function toolByName(tools, name) {
  const t = tools.find((x) => x.name === name);
  assert.ok(t, `tool ${name} not listed; got ${tools.map((x) => x.name).join(', ')}`);
  return t;
}

for (const kind of TRANSPORTS) {
  describe(`[${kind}] echo`, () => {
    const s = useServer('echo', kind);

    test('initialize negotiated and server info present', () => {
      const info = s.client.getServerVersion();
      assert.ok(info?.name, 'serverInfo.name');
      assert.ok(info?.version, 'serverInfo.version');
      assert.ok(s.client.getServerCapabilities()?.tools, 'tools capability advertised');
      if (kind === 'http') assert.ok(s.transport.sessionId, 'Mcp-Session-Id assigned on initialize');
    });

    test('ping', () => withTranscript(s, async () => {
      assert.deepEqual(await s.client.ping(), {});
    }));

    test('tools/list has echo{text}', () => withTranscript(s, async () => {
      const { tools } = await s.client.listTools();
      const t = toolByName(tools, 'echo');
      assert.equal(t.inputSchema.type, 'object');
      assert.ok(t.inputSchema.properties?.text, 'echo.inputSchema.properties.text');
    }));

    test('tools/call echo returns the text', () => withTranscript(s, async () => {
      const text = 'héllo, wörld ✓ "quoted"\nline2';
      const r = await s.client.callTool({ name: 'echo', arguments: { text } });
      assert.notEqual(r.isError, true);
      assert.equal(textOf(r), text);
    }));

    test('concurrent calls are all answered with their own result', () => withTranscript(s, async () => {
      const rs = await Promise.all(Array.from({ length: 20 }, (_, i) =>
        s.client.callTool({ name: 'echo', arguments: { text: `n${i}` } })));
      rs.forEach((r, i) => assert.equal(textOf(r), `n${i}`));
    }));

    test('large payload: 1 MiB of text round-trips intact', () => withTranscript(s, async () => {
      const text = 'ab✓\n"'.repeat(1 << 18).slice(0, 1 << 20);
      const r = await s.client.callTool({ name: 'echo', arguments: { text } });
      assert.notEqual(r.isError, true);
      assert.equal(textOf(r).length, text.length);
      assert.ok(textOf(r) === text, 'echoed text differs');
    }));

    test('unknown tool is reported as an error', () => withTranscript(s, async () => {
      // Either a JSON-RPC error or an isError result is acceptable per spec.
      try {
        const r = await s.client.callTool({ name: 'no_such_tool', arguments: {} });
        assert.equal(r.isError, true, `expected isError for unknown tool, got ${JSON.stringify(r)}`);
      } catch (e) {
        assert.ok(typeof e.code === 'number', `expected McpError, got ${e}`);
      }
    }));

    test('no client-side protocol errors', (t) => noClientErrors(s, t));
  });

  describe(`[${kind}] search_issues`, () => {
    const s = useServer('search_issues', kind);

    test('tools/list has search_issues{repo, query, limit<=50 default 10}', () => withTranscript(s, async () => {
      const { tools } = await s.client.listTools();
      const t = toolByName(tools, 'search_issues');
      const p = t.inputSchema.properties ?? {};
      for (const k of ['repo', 'query', 'limit']) assert.ok(p[k], `inputSchema.properties.${k}`);
      assert.ok(['integer', 'number'].includes(p.limit.type) ||
        (Array.isArray(p.limit.type) && p.limit.type.includes('integer')), `limit type: ${JSON.stringify(p.limit)}`);
      assert.equal(p.limit.maximum, 50, `limit.maximum: ${JSON.stringify(p.limit)}`);
      assert.equal(p.limit.default, 10, `limit.default: ${JSON.stringify(p.limit)}`);
      assert.deepEqual([...(t.inputSchema.required ?? [])].sort(), ['query', 'repo']);
      assert.ok(t.description, 'tool has a description');
    }));

    test('tools/call search_issues succeeds', () => withTranscript(s, async () => {
      const r = await s.client.callTool({
        name: 'search_issues',
        arguments: { repo: 'octo/widgets', query: 'crash', limit: 3 },
      });
      assert.notEqual(r.isError, true, JSON.stringify(r));
      assert.ok(r.content.length >= 1, 'non-empty content');
      assert.ok(textOf(r).length > 0, 'has text');
    }));

    test('tools/call search_issues without limit uses the default', () => withTranscript(s, async () => {
      const r = await s.client.callTool({ name: 'search_issues', arguments: { repo: 'octo/widgets', query: 'crash' } });
      assert.notEqual(r.isError, true, JSON.stringify(r));
    }));

    test('validation failure: limit 500 -> isError with the exact message', () => withTranscript(s, async () => {
      const r = await s.client.callTool({
        name: 'search_issues',
        arguments: { repo: 'octo/widgets', query: 'crash', limit: 500 },
      });
      assert.equal(r.isError, true, JSON.stringify(r));
      assert.equal(textOf(r), 'Invalid arguments for tool "search_issues":\nlimit: Too big: expected number to be <=50');
    }));

    test('validation failure: missing required argument -> isError', () => withTranscript(s, async () => {
      const r = await s.client.callTool({ name: 'search_issues', arguments: { query: 'crash' } });
      assert.equal(r.isError, true, JSON.stringify(r));
      assert.match(textOf(r), /^Invalid arguments for tool "search_issues":\n/);
      assert.match(textOf(r), /repo/);
    }));

    test('no client-side protocol errors', (t) => noClientErrors(s, t));
  });

  describe(`[${kind}] get_price`, () => {
    const s = useServer('get_price', kind);

    test('tools/list has get_price with an outputSchema', () => withTranscript(s, async () => {
      const { tools } = await s.client.listTools();
      const t = toolByName(tools, 'get_price');
      assert.ok(t.outputSchema, 'outputSchema present');
      assert.equal(t.outputSchema.type, 'object');
      for (const k of ['sku', 'cents', 'currency']) assert.ok(t.outputSchema.properties?.[k], `outputSchema.properties.${k}`);
    }));

    test('tools/call get_price returns structuredContent valid for the outputSchema', () => withTranscript(s, async () => {
      // The SDK client itself validates structuredContent against outputSchema
      // and throws if it is missing or invalid.
      const r = await s.client.callTool({ name: 'get_price', arguments: { sku: 'SKU-42' } });
      assert.notEqual(r.isError, true, JSON.stringify(r));
      const sc = r.structuredContent;
      assert.ok(sc, 'structuredContent present');
      assert.equal(sc.sku, 'SKU-42');
      assert.ok(Number.isInteger(sc.cents), `cents integer: ${sc.cents}`);
      assert.equal(sc.currency, 'EUR');
      // Backwards compatibility: the structured result also appears as text.
      const text = textOf(r);
      assert.ok(text.length > 0, 'text content mirrors structuredContent');
      assert.deepEqual(JSON.parse(text), sc);
    }));

    test('no client-side protocol errors', (t) => noClientErrors(s, t));
  });

  describe(`[${kind}] image`, () => {
    const s = useServer('image', kind);
    let toolName;

    test('tools/list lists the image tool', () => withTranscript(s, async () => {
      const { tools } = await s.client.listTools();
      assert.ok(tools.length >= 1);
      toolName = (tools.find((t) => /image|chart|picture|png/i.test(t.name)) ?? tools[0]).name;
    }));

    test('tools/call returns an image content block', () => withTranscript(s, async () => {
      const { tools } = await s.client.listTools();
      const t = tools.find((x) => x.name === toolName);
      // Fill required string/number args with something plausible.
      const args = {};
      for (const k of t.inputSchema.required ?? []) {
        const ty = t.inputSchema.properties?.[k]?.type;
        args[k] = ty === 'integer' || ty === 'number' ? 8 : 'x';
      }
      const r = await s.client.callTool({ name: toolName, arguments: args });
      assert.notEqual(r.isError, true, JSON.stringify(r));
      const img = r.content.find((c) => c.type === 'image');
      assert.ok(img, `image block in ${JSON.stringify(r.content).slice(0, 300)}`);
      assert.match(img.mimeType, /^image\//);
      const bytes = Buffer.from(img.data, 'base64');
      assert.ok(bytes.length > 0, 'non-empty base64 data');
      assert.equal(bytes.toString('base64'), img.data, 'data is canonical base64');
      if (img.mimeType === 'image/png') {
        assert.deepEqual([...bytes.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'PNG signature');
      }
    }));

    test('no client-side protocol errors', (t) => noClientErrors(s, t));
  });

  describe(`[${kind}] slow (progress + cancellation)`, () => {
    const s = useServer('slow', kind);

    test('tools/list has slow{seconds}', () => withTranscript(s, async () => {
      const { tools } = await s.client.listTools();
      const t = toolByName(tools, 'slow');
      assert.ok(t.inputSchema.properties?.seconds, 'slow.inputSchema.properties.seconds');
    }));

    test('progress token: onprogress receives >= 1 notification, increasing', () => withTranscript(s, async () => {
      const seen = [];
      const r = await s.client.callTool({ name: 'slow', arguments: { seconds: 1 } }, undefined, {
        onprogress: (p) => seen.push(p),
      });
      assert.notEqual(r.isError, true, JSON.stringify(r));
      assert.ok(seen.length >= 1, `expected >= 1 progress notification, got ${seen.length}`);
      for (let i = 1; i < seen.length; i++) {
        assert.ok(seen[i].progress > seen[i - 1].progress, `progress must increase: ${JSON.stringify(seen)}`);
      }
      const sent = s.transcript.filter((e) => e.dir === 'server->client' && e.msg.method === 'notifications/progress');
      assert.ok(sent.length >= 1);
      assert.ok(sent.every((e) => e.msg.params.progressToken !== undefined));
    }));

    test('no progress notifications without a progress token', () => withTranscript(s, async () => {
      const before = s.transcript.length;
      const r = await s.client.callTool({ name: 'slow', arguments: { seconds: 1 } });
      assert.notEqual(r.isError, true, JSON.stringify(r));
      const progress = s.transcript.slice(before).filter((e) => e.msg.method === 'notifications/progress');
      assert.equal(progress.length, 0, 'server sent progress without a token');
    }));

    test('cancellation: aborting sends notifications/cancelled, call rejects promptly, server stays healthy', (t) =>
      withTranscript(s, async () => {
        const ac = new AbortController();
        const t0 = Date.now();
        const p = s.client.callTool({ name: 'slow', arguments: { seconds: 30 } }, undefined, {
          signal: ac.signal, onprogress: () => {},
        });
        await sleep(400);
        ac.abort(new Error('user cancelled'));
        await assert.rejects(p);
        const elapsed = Date.now() - t0;
        assert.ok(elapsed < 2000, `call rejected after ${elapsed} ms`);
        const cancelled = s.transcript.filter((e) => e.dir === 'client->server' && e.msg.method === 'notifications/cancelled');
        assert.equal(cancelled.length, 1, 'client sent notifications/cancelled');
        const cancelledId = cancelled[0].msg.params.requestId;

        // Server stays healthy: ping and a fresh call both work promptly.
        const t1 = Date.now();
        assert.deepEqual(await s.client.ping(), {});
        const r = await s.client.callTool({ name: 'slow', arguments: { seconds: 0 } });
        assert.notEqual(r.isError, true, JSON.stringify(r));
        assert.ok(Date.now() - t1 < 2000, 'next call answered promptly');

        // Give a misbehaving server time to (wrongly) answer the cancelled request
        // or to keep sending progress for it.
        await sleep(1500);
        const late = s.transcript.filter((e) => e.dir === 'server->client' && e.at > t0 &&
          (e.msg.id === cancelledId ||
           (e.msg.method === 'notifications/progress' && e.at > cancelled[0].at + 500 &&
            String(e.msg.params?.progressToken) === String(cancelled[0].msg.params.requestId))));
        assert.deepEqual(late.map((e) => e.msg), [], 'server should not answer/progress a cancelled request');
        if (kind === 'http') {
          const post = s.httpLog.find((h) => h.body && h.body.includes('"tools/call"') &&
            JSON.parse(h.body).id === cancelledId);
          t.diagnostic(`cancelled POST: status ${post?.status} ${post?.contentType}, ` +
            `body ended ${post?.endAt ? post.endAt - t0 + ' ms after start' : 'never (still open)'}`);
        }
      }));

    test('no client-side protocol errors', (t) => noClientErrors(s, t));
  });
}

describe('[http] transport details', () => {
  const s = useServer('echo', 'http');

  test('JSON-RPC over POST: tools/call answered, session header echoed', () => withTranscript(s, async () => {
    const r = await s.client.callTool({ name: 'echo', arguments: { text: 'x' } });
    assert.equal(textOf(r), 'x');
    const posts = s.httpLog.filter((h) => h.method === 'POST');
    assert.ok(posts.length >= 3, 'initialize, initialized, tools/call');
    for (const p of posts) assert.ok(p.status >= 200 && p.status < 300, `POST status ${p.status}`);
    const init = JSON.parse(posts[0].body);
    assert.equal(init.method, 'initialize');
    const notif = posts.find((p) => JSON.parse(p.body).method === 'notifications/initialized');
    assert.equal(notif.status, 202, 'notification POST answered 202 Accepted');
  }));

  test('10 SDK clients in parallel, each with its own session, get only their own results', async () => {
    const url = new URL(`http://127.0.0.1:${s.transport.port}/mcp`);
    const clients = await Promise.all(Array.from({ length: 10 }, async (_, i) => {
      const c = new Client({ name: `parallel-${i}`, version: '0.0.0' });
      const tr = new StreamableHTTPClientTransport(url);
      await c.connect(tr);
      return { c, tr };
    }));
    try {
      const ids = new Set(clients.map(({ tr }) => tr.sessionId));
      assert.equal(ids.size, 10, 'distinct session ids');
      assert.ok(!ids.has(s.transport.sessionId), 'not the suite client\'s session');
      await Promise.all(clients.map(async ({ c }, i) => {
        for (let k = 0; k < 10; k++) {
          const r = await c.callTool({ name: 'echo', arguments: { text: `c${i}-${k}` } });
          assert.equal(textOf(r), `c${i}-${k}`);
        }
      }));
    } finally {
      await Promise.all(clients.map(async ({ c, tr }) => {
        await tr.terminateSession().catch(() => {});
        await c.close();
      }));
    }
  });

  test('terminateSession (DELETE) ends the session', () => withTranscript(s, async () => {
    const sid = s.transport.sessionId;
    assert.ok(sid);
    await s.transport.terminateSession();
    const res = await fetch(`http://127.0.0.1:${s.transport.port}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': sid,
        'mcp-protocol-version': '2025-11-25',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 99, method: 'ping' }),
    });
    assert.equal(res.status, 404, 'request on a terminated session must get 404');
  }));
});

describe('[http] oversized request body', () => {
  // Its own server: a connection the server drops after its 413 must not be
  // reused by the other suites (undici pools connections per origin).
  const s = useServer('echo', 'http');

  test('5 MiB POST (> 4 MiB default limit) fails cleanly with 413, session stays usable', (t) =>
    withTranscript(s, async () => {
      const text = 'x'.repeat(5 << 20);
      await assert.rejects(s.client.callTool({ name: 'echo', arguments: { text } }, undefined, { timeout: 10000 }));
      const post = s.httpLog.filter((h) => h.method === 'POST').at(-1);
      assert.equal(post.status, 413, `oversized POST answered ${post.status}`);
      let r;
      try {
        r = await s.client.callTool({ name: 'echo', arguments: { text: 'still here' } });
      } catch (e) {
        assert.fail(`the first call after the 413 failed: ${e.cause?.code ?? e.message}`);
      }
      assert.equal(textOf(r), 'still here');
    }));

  // RFC 9112 §9.6: a server that closes after its 413 must say so, or keep-alive clients
  // (undici/fetch in the TS SDK) send the next request on a dead socket.
  test('a 413 after which the server closes the connection says "Connection: close"',
    async () => {
      const port = s.transport.port;
      const sid = s.transport.sessionId;
      const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call',
        params: { name: 'echo', arguments: { text: 'x'.repeat(5 << 20) } } });
      const { head, closed } = await new Promise((resolve, reject) => {
        const sock = net.connect(port, '127.0.0.1');
        let buf = '';
        let headDone = null;
        sock.setTimeout(5000, () => { sock.destroy(); resolve({ head: headDone ?? buf, closed: false }); });
        sock.on('data', (d) => {
          buf += d.toString('latin1');
          const i = buf.indexOf('\r\n\r\n');
          if (i >= 0 && headDone === null) headDone = buf.slice(0, i);
        });
        sock.on('error', () => {}); // EPIPE/ECONNRESET while still writing: the server stopped reading
        sock.on('close', () => resolve({ head: headDone ?? buf, closed: true }));
        sock.on('connect', () => {
          sock.write(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\n` +
            `Accept: application/json, text/event-stream\r\nMcp-Session-Id: ${sid}\r\n` +
            `Mcp-Protocol-Version: 2025-11-25\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`);
          sock.write(body);
        });
        setTimeout(() => reject(new Error('no answer')), 8000).unref();
      });
      assert.match(head, /^HTTP\/1\.1 413 /, head);
      if (closed) assert.match(head, /\r\nconnection: close\r\n/i, `server closed the connection after:\n${head}`);
    });
});

