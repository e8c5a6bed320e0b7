// Interop in the 2026-07-28 ("modern") era: the official TypeScript SDK 2.x
// client (@modelcontextprotocol/client, pinned in interop/package.json)
// against picomcp's examples, over stdio and Streamable HTTP.  The client is
// pinned to 2026-07-28 (`versionNegotiation: { mode: { pin } }`: server/discover
// must offer it, no fallback to initialize) except where a test says `auto`.
// Run with scripts/mcp/interop.sh; MCP_INTEROP_TRACE=1 prints every message.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

import {
  EXAMPLES_DIR, REPO_ROOT, exampleBin, freePort, recordTranscript, textOf, withTranscript,
} from './helpers.mjs';

const MODERN = '2026-07-28';
const META_VERSION = 'io.modelcontextprotocol/protocolVersion';
const META_CAPS = 'io.modelcontextprotocol/clientCapabilities';
const TRANSPORTS = (process.env.MCP_INTEROP_TRANSPORTS ?? 'stdio,http').split(',');
const TRACE = !!process.env.MCP_INTEROP_TRACE;
// `interop.sh --reference` points the examples at the 1.x SDK servers, which are legacy only.
const REFERENCE = path.basename(EXAMPLES_DIR) === 'ts-reference-bin';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * A StdioClientTransport subclass: the 2.x client then probes on this very
 * connection (the base class probes on a throw-away sibling process), so the
 * transcript holds the whole exchange, server/discover included.
 */
class InPlaceStdioTransport extends StdioClientTransport {}

async function listen(bin, args, env) {
  const port = await freePort();
  const child = spawn(bin, args(port), { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env(port) } });
  let log = '';
  child.stdout.on('data', (d) => { log += d; });
  child.stderr.on('data', (d) => { log += d; });
  const deadline = Date.now() + 15000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${bin} exited early: ${log}`);
    try {
      await fetch(`http://127.0.0.1:${port}/`, { method: 'HEAD' });
      break;
    } catch {
      if (Date.now() > deadline) { child.kill('SIGKILL'); throw new Error(`${bin} did not listen: ${log}`); }
      await sleep(50);
    }
  }
  return { child, port, log: () => log };
}

/**
 * Start `example` and connect a 2.x Client. opts: { mode ('pin' | 'auto'),
 * inPlace (stdio: probe on the session's own process), bin, url, clientOptions,
 * elicit (handler) }. Returns { client, transport, transcript, httpLog, errors, close, dump }.
 */
async function connect2(example, kind, opts = {}) {
  const transcript = [];
  const httpLog = [];
  const errors = [];
  let child = null;
  let serverLog = () => '';
  let transport;
  if (kind === 'stdio') {
    const Cls = opts.inPlace === false ? StdioClientTransport : InPlaceStdioTransport;
    transport = new Cls({ command: exampleBin(example), args: [], stderr: 'pipe' });
    let buf = '';
    transport.stderr?.on('data', (d) => { buf += d; });
    serverLog = () => buf;
  } else {
    let url = opts.url;
    if (!url) {
      const s = await listen(exampleBin(example), (port) => ['--http', `127.0.0.1:${port}`], () => ({}));
      child = s.child;
      serverLog = s.log;
      url = `http://127.0.0.1:${s.port}/mcp`;
    }
    // Log each exchange: method, request headers, body, status.
    const loggingFetch = async (u, init = {}) => {
      const headers = new Headers(init.headers);
      const entry = {
        method: init.method ?? 'GET',
        headers: Object.fromEntries(headers),
        body: typeof init.body === 'string' ? init.body : undefined,
        start: Date.now(),
      };
      httpLog.push(entry);
      const res = await fetch(u, init);
      entry.status = res.status;
      entry.sessionId = res.headers.get('mcp-session-id');
      if (TRACE) console.error(`HTTP ${entry.method} ${entry.headers['mcp-method'] ?? ''} -> ${res.status}`);
      return res;
    };
    transport = new StreamableHTTPClientTransport(new URL(url), { fetch: loggingFetch });
  }
  recordTranscript(transport, transcript);
  const mode = opts.mode === 'auto' ? 'auto' : { pin: MODERN };
  const client = new Client({ name: 'mm-interop-ts2', version: '0.0.0' }, {
    versionNegotiation: { mode },
    ...(opts.elicit ? { capabilities: { elicitation: { form: {} } } } : {}),
  });
  if (opts.elicit) client.setRequestHandler('elicitation/create', opts.elicit);
  client.onerror = (e) => { errors.push(e); };
  try {
    await client.connect(transport);
  } catch (e) {
    child?.kill('SIGKILL');
    throw new Error(`connect(${example}, ${kind}) failed: ${e?.message}\nserver: ${serverLog()}\n` +
      `transcript: ${JSON.stringify(transcript)}`);
  }
  return {
    client, transport, kind, transcript, httpLog, errors,
    dump(n = 12) {
      return transcript.slice(-n).map((t) => `${t.dir}: ${JSON.stringify(t.msg)}`).join('\n') +
        `\n--- server output ---\n${serverLog().slice(-2000)}`;
    },
    async close() {
      try {
        await client.close();
      } finally {
        if (child && child.exitCode === null) {
          child.kill('SIGTERM');
          const t = setTimeout(() => child.kill('SIGKILL'), 3000);
          await new Promise((r) => child.once('exit', r));
          clearTimeout(t);
        }
      }
    },
  };
}

function useServer(example, kind, opts) {
  const ctx = {};
  before(async () => { Object.assign(ctx, await connect2(example, kind, opts)); });
  after(async () => { await ctx.close?.(); });
  return ctx;
}

/** The era checks every connection must pass: no initialize, server/discover first, _meta on every request. */
function assertModernWire(s) {
  assert.equal(s.client.getProtocolEra(), 'modern');
  assert.equal(s.client.getNegotiatedProtocolVersion(), MODERN);
  const sent = s.transcript.filter((e) => e.dir === 'client->server').map((e) => e.msg);
  assert.ok(sent.length >= 1, 'something was sent');
  assert.equal(sent[0].method, 'server/discover', `first message: ${JSON.stringify(sent[0])}`);
  assert.ok(!sent.some((m) => m.method === 'initialize' || m.method === 'notifications/initialized'),
    'no initialize handshake in the modern era');
  for (const m of sent.filter((x) => x.method && x.id !== undefined)) {
    assert.equal(m.params?._meta?.[META_VERSION], MODERN, `${m.method} carries _meta protocolVersion`);
    assert.ok(m.params._meta[META_CAPS] && typeof m.params._meta[META_CAPS] === 'object',
      `${m.method} carries _meta clientCapabilities`);
  }
  // The discover answer: picomcp offers 2026-07-28 (and the legacy version), a resultType.
  const discover = s.client.getDiscoverResult();
  assert.ok(discover?.supportedVersions?.includes(MODERN), JSON.stringify(discover));
  assert.ok(discover.capabilities?.tools, 'tools capability in server/discover');
}

/** Every result picomcp sent in this exchange says `resultType: complete` (a modern result). */
function assertResultTypes(s, since = 0) {
  const results = s.transcript.slice(since).filter((e) => e.dir === 'server->client' && e.msg.result);
  assert.ok(results.length >= 1);
  for (const r of results) assert.equal(r.msg.result.resultType, 'complete', JSON.stringify(r.msg).slice(0, 300));
}

function toolByName(tools, name) {
  const t = tools.find((x) => x.name === name);
  assert.ok(t, `tool ${name} not listed; got ${tools.map((x) => x.name).join(', ')}`);
  return t;
}

describe('TS SDK 2.x client, 2026-07-28 era', { skip: REFERENCE && 'the --reference servers (SDK 1.x) are legacy only' }, () => {
  for (const kind of TRANSPORTS) {
    describe(`[${kind}] echo`, () => {
      const s = useServer('echo', kind);

      test('era negotiated: 2026-07-28 via server/discover, no initialize, _meta on every request', () =>
        withTranscript(s, async () => {
          await s.client.listTools();
          assertModernWire(s);
          const info = s.client.getServerVersion();
          assert.ok(info?.name, `serverInfo from the discover result's _meta: ${JSON.stringify(info)}`);
        }));

      test('tools/list and tools/call echo (text round-trips, resultType complete)', () => withTranscript(s, async () => {
        const before = s.transcript.length;
        const { tools } = await s.client.listTools({}, { cacheMode: 'bypass' });
        const t = toolByName(tools, 'echo');
        assert.ok(t.inputSchema.properties?.text);
        const text = 'héllo, wörld ✓ "quoted"\nline2';
        const r = await s.client.callTool({ name: 'echo', arguments: { text } });
        assert.notEqual(r.isError, true);
        assert.equal(textOf(r), text);
        assertResultTypes(s, before);
      }));

      test('concurrent calls each get their own result', () => withTranscript(s, async () => {
        const rs = await Promise.all(Array.from({ length: 20 }, (_, i) =>
          s.client.callTool({ name: 'echo', arguments: { text: `n${i}` } })));
        rs.forEach((r, i) => assert.equal(textOf(r), `n${i}`));
      }));

      if (kind === 'http') {
        test('HTTP: MCP-Protocol-Version, Mcp-Method and Mcp-Name headers match each body', () =>
          withTranscript(s, async () => {
            await s.client.callTool({ name: 'echo', arguments: { text: 'h' } });
            const posts = s.httpLog.filter((h) => h.method === 'POST' && h.body);
            assert.ok(posts.length >= 3, `discover, tools/list, tools/call: ${posts.length}`);
            for (const p of posts) {
              const body = JSON.parse(p.body);
              assert.equal(p.headers['mcp-protocol-version'], MODERN, `${body.method}: ${JSON.stringify(p.headers)}`);
              assert.equal(p.headers['mcp-method'], body.method, JSON.stringify(p.headers));
              if (body.method === 'tools/call') assert.equal(p.headers['mcp-name'], body.params.name);
              assert.ok(p.status >= 200 && p.status < 300, `${body.method} answered ${p.status}`);
            }
            assert.ok(!posts.some((p) => p.sessionId), 'no Mcp-Session-Id in the modern era');
          }));
      }

      test('no client-side errors', () => assert.deepEqual(s.errors.map(String), []));
    });

    describe(`[${kind}] search_issues (validation)`, () => {
      const s = useServer('search_issues', kind);

      test('tools/list: schema with limit<=50 default 10, repo+query required', () => withTranscript(s, async () => {
        const { tools } = await s.client.listTools();
        const p = toolByName(tools, 'search_issues').inputSchema;
        assert.equal(p.properties.limit.maximum, 50);
        assert.equal(p.properties.limit.default, 10);
        assert.deepEqual([...p.required].sort(), ['query', 'repo']);
      }));

      test('valid call succeeds', () => withTranscript(s, async () => {
        const r = await s.client.callTool({ name: 'search_issues', arguments: { repo: 'octo/widgets', query: 'crash', limit: 3 } });
        assert.notEqual(r.isError, true, JSON.stringify(r));
        assert.ok(textOf(r).length > 0);
      }));

      test('limit 500: an isError result naming the field', () => withTranscript(s, async () => {
        const r = await s.client.callTool({ name: 'search_issues', arguments: { repo: 'octo/widgets', query: 'crash', limit: 500 } });
        assert.equal(r.isError, true, JSON.stringify(r));
        assert.equal(textOf(r), 'Invalid arguments for tool "search_issues":\nlimit: Too big: expected number to be <=50');
        const wire = s.transcript.findLast((e) => e.dir === 'server->client' && e.msg.result);
        assert.equal(wire.msg.result.resultType, 'complete', 'a tool error is still a complete result');
      }));

      test('missing repo: an isError result naming the field', () => withTranscript(s, async () => {
        const r = await s.client.callTool({ name: 'search_issues', arguments: { query: 'crash' } });
        assert.equal(r.isError, true, JSON.stringify(r));
        assert.match(textOf(r), /^Invalid arguments for tool "search_issues":\n.*repo/s);
      }));

      test('unknown tool: a JSON-RPC error or an isError result', () => withTranscript(s, async () => {
        try {
          const r = await s.client.callTool({ name: 'no_such_tool', arguments: {} });
          assert.equal(r.isError, true, JSON.stringify(r));
        } catch (e) {
          assert.equal(typeof e.code, 'number', `expected a protocol error, got ${e}`);
        }
      }));
    });

    describe(`[${kind}] get_price (structuredContent)`, () => {
      const s = useServer('get_price', kind);

      test('outputSchema listed; structuredContent valid (the client validates it) and mirrored as text', () =>
        withTranscript(s, async () => {
          const { tools } = await s.client.listTools();
          const t = toolByName(tools, 'get_price');
          for (const k of ['sku', 'cents', 'currency']) assert.ok(t.outputSchema?.properties?.[k], k);
          const r = await s.client.callTool({ name: 'get_price', arguments: { sku: 'SKU-42' } });
          assert.notEqual(r.isError, true, JSON.stringify(r));
          assert.equal(r.structuredContent.sku, 'SKU-42');
          assert.ok(Number.isInteger(r.structuredContent.cents));
          assert.equal(r.structuredContent.currency, 'EUR');
          assert.deepEqual(JSON.parse(textOf(r)), r.structuredContent);
        }));
    });

    describe(`[${kind}] image`, () => {
      const s = useServer('image', kind);

      test('an image content block with canonical base64 PNG', () => withTranscript(s, async () => {
        const { tools } = await s.client.listTools();
        const t = tools.find((x) => /image|chart|picture|png/i.test(x.name)) ?? tools[0];
        const args = {};
        for (const k of t.inputSchema.required ?? []) {
          const ty = t.inputSchema.properties?.[k]?.type;
          args[k] = ty === 'integer' || ty === 'number' ? 8 : 'x';
        }
        const r = await s.client.callTool({ name: t.name, arguments: args });
        const img = r.content.find((c) => c.type === 'image');
        assert.ok(img, JSON.stringify(r).slice(0, 300));
        const bytes = Buffer.from(img.data, 'base64');
        assert.equal(bytes.toString('base64'), img.data);
        if (img.mimeType === 'image/png') assert.deepEqual([...bytes.subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47]);
      }));
    });

    describe(`[${kind}] slow (progress, cancellation, timeout)`, () => {
      const s = useServer('slow', kind);

      test('progress: onprogress receives increasing notifications', () => withTranscript(s, async () => {
        const seen = [];
        const r = await s.client.callTool({ name: 'slow', arguments: { seconds: 1 } }, { onprogress: (p) => seen.push(p) });
        assert.notEqual(r.isError, true, JSON.stringify(r));
        assert.ok(seen.length >= 1, `progress notifications: ${seen.length}`);
        for (let i = 1; i < seen.length; i++) assert.ok(seen[i].progress > seen[i - 1].progress, JSON.stringify(seen));
      }));

      test('cancellation: abort rejects promptly, the server stops, the next call works', () =>
        withTranscript(s, async () => {
          const ac = new AbortController();
          const t0 = Date.now();
          const p = s.client.callTool({ name: 'slow', arguments: { seconds: 30 } }, { signal: ac.signal, onprogress: () => {} });
          await sleep(400);
          ac.abort(new Error('user cancelled'));
          await assert.rejects(p);
          assert.ok(Date.now() - t0 < 2000, `rejected after ${Date.now() - t0} ms`);
          const call = s.transcript.findLast((e) => e.dir === 'client->server' && e.msg.method === 'tools/call');
          if (kind === 'stdio') {
            // stdio: the client tells the server with notifications/cancelled.
            const cancelled = s.transcript.filter((e) => e.dir === 'client->server' &&
              e.msg.method === 'notifications/cancelled' && e.msg.params.requestId === call.msg.id);
            assert.equal(cancelled.length, 1, 'notifications/cancelled sent');
          }
          const r = await s.client.callTool({ name: 'slow', arguments: { seconds: 0 } });
          assert.notEqual(r.isError, true, JSON.stringify(r));
          await sleep(1500);
          const late = s.transcript.filter((e) => e.dir === 'server->client' && e.msg.id === call.msg.id);
          assert.deepEqual(late.map((e) => e.msg), [], 'no answer to the cancelled request');
        }));

      test('a request timeout rejects with a timeout error and the server stays usable', () =>
        withTranscript(s, async () => {
          const t0 = Date.now();
          await assert.rejects(s.client.callTool({ name: 'slow', arguments: { seconds: 30 } }, { timeout: 300 }),
            (e) => /timed? ?out/i.test(String(e?.message ?? e)));
          assert.ok(Date.now() - t0 < 2000, `timed out after ${Date.now() - t0} ms`);
          const r = await s.client.callTool({ name: 'slow', arguments: { seconds: 0 } });
          assert.notEqual(r.isError, true, JSON.stringify(r));
        }));
    });
  }

  if (TRANSPORTS.includes('stdio')) {
    describe('[stdio] auto negotiation (the SDK probes on a sibling process)', () => {
      const s = useServer('echo', 'stdio', { mode: 'auto', inPlace: false });

      test('auto picks 2026-07-28 and the call carries its _meta', () => withTranscript(s, async () => {
        assert.equal(s.client.getProtocolEra(), 'modern');
        assert.equal(s.client.getNegotiatedProtocolVersion(), MODERN);
        const r = await s.client.callTool({ name: 'echo', arguments: { text: 'auto' } });
        assert.equal(textOf(r), 'auto');
        const sent = s.transcript.filter((e) => e.dir === 'client->server').map((e) => e.msg);
        assert.ok(!sent.some((m) => m.method === 'initialize'), JSON.stringify(sent));
        assert.equal(sent.find((m) => m.method === 'tools/call').params._meta[META_VERSION], MODERN);
      }));
    });
  }

  if (TRANSPORTS.includes('http')) {
    // MRTR: picomcp's conformance fixture (HTTP only) has tools that elicit,
    // with ctx.elicit and with an explicit input_required.  Built here when
    // scripts/mcp/conformance.sh has not built it already.
    describe('[http] input_required round (picomcp-conformance)', () => {
      const ctx = {};
      const asked = [];
      before(async () => {
        const bin = path.join(EXAMPLES_DIR, 'picomcp-conformance');
        if (!existsSync(bin)) {
          const target = path.resolve(EXAMPLES_DIR, '..', '..');
          const r = spawnSync('cargo', ['build', '--locked', '-q', '-p', 'picomcp', '--example', 'picomcp-conformance'],
            { cwd: REPO_ROOT, env: { ...process.env, CARGO_TARGET_DIR: target }, stdio: 'inherit' });
          assert.equal(r.status, 0, 'building picomcp-conformance');
        }
        const srv = await listen(bin, () => [], (port) => ({ PORT: String(port) }));
        ctx.srv = srv;
        Object.assign(ctx, await connect2('picomcp-conformance', 'http', {
          url: `http://127.0.0.1:${srv.port}/mcp`,
          elicit: async (req) => {
            asked.push(req.params);
            return { action: 'accept', content: { name: 'Ada' } };
          },
        }));
      });
      after(async () => {
        await ctx.close?.();
        ctx.srv?.child.kill('SIGTERM');
      });

      for (const [tool, expected] of [
        ['test_input_required_result_elicitation', 'Hello, Ada!'],
        ['test_streaming_elicitation', 'action=accept'],
      ]) {
        test(`${tool}: input_required answered by the elicitation handler, call retried, result ${JSON.stringify(expected)}`, () =>
          withTranscript(ctx, async () => {
            assertModernWire(ctx);
            const before = ctx.transcript.length;
            const n = asked.length;
            const r = await ctx.client.callTool({ name: tool, arguments: {} });
            assert.notEqual(r.isError, true, JSON.stringify(r));
            assert.equal(textOf(r), expected);
            assert.equal(asked.length, n + 1, 'the handler was asked once');
            assert.equal(asked.at(-1).message, 'What is your name?');
            const exchange = ctx.transcript.slice(before);
            const calls = exchange.filter((e) => e.dir === 'client->server' && e.msg.method === 'tools/call');
            assert.equal(calls.length, 2, 'the call and its retry');
            assert.equal(calls[0].msg.params.inputResponses, undefined);
            const [key] = Object.keys(calls[1].msg.params.inputResponses ?? {});
            assert.ok(key, `retry carries inputResponses: ${JSON.stringify(calls[1].msg.params)}`);
            assert.deepEqual(calls[1].msg.params.inputResponses[key], { action: 'accept', content: { name: 'Ada' } });
            const kinds = exchange.filter((e) => e.dir === 'server->client' && e.msg.result).map((e) => e.msg.result.resultType);
            assert.deepEqual(kinds, ['input_required', 'complete']);
            const first = exchange.find((e) => e.dir === 'server->client' && e.msg.result);
            if (first.msg.result.requestState !== undefined) {
              assert.equal(calls[1].msg.params.requestState, first.msg.result.requestState, 'requestState echoed byte-exact');
            }
            assert.ok(!exchange.some((e) => e.dir === 'server->client' && e.msg.method), 'no server->client request in the modern era');
          }));
      }
    });
  }
});
