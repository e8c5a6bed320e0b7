// Helpers for the picomcp interop tests: spawn a picomcp example binary and
// connect the official TypeScript SDK client to it over stdio or Streamable HTTP.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const here = path.dirname(fileURLToPath(import.meta.url));
export const REPO_ROOT = path.resolve(here, '..', '..');
export const EXAMPLES_DIR =
  process.env.PICOMCP_EXAMPLES_DIR ?? path.join(REPO_ROOT, 'target-picomcp', 'debug', 'examples');
const TRACE = !!process.env.MCP_INTEROP_TRACE;

/** Absolute path of a built picomcp example (accepts `a_b` or `a-b` spellings). */
export function exampleBin(name) {
  for (const n of [name, name.replaceAll('_', '-'), name.replaceAll('-', '_')]) {
    const p = path.join(EXAMPLES_DIR, n);
    if (existsSync(p)) return p;
  }
  throw new Error(`picomcp example "${name}" not built in ${EXAMPLES_DIR} (run scripts/mcp/interop.sh)`);
}

export async function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

function tcpReady(port) {
  return new Promise((resolve) => {
    const s = net.connect({ port, host: '127.0.0.1' });
    s.once('connect', () => { s.destroy(); resolve(true); });
    s.once('error', () => { s.destroy(); resolve(false); });
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Records every JSON-RPC message crossing `transport` (both directions), so a
 * failing test can show the exact exchange.
 */
export function recordTranscript(transport, transcript) {
  const send = transport.send.bind(transport);
  transport.send = async (msg, opts) => {
    transcript.push({ dir: 'client->server', at: Date.now(), msg });
    if (TRACE) console.error('>>', JSON.stringify(msg));
    return send(msg, opts);
  };
  let handler;
  Object.defineProperty(transport, 'onmessage', {
    configurable: true,
    get: () => handler && ((m, extra) => handler(m, extra)),
    set: (fn) => {
      handler = fn && ((m, extra) => {
        transcript.push({ dir: 'server->client', at: Date.now(), msg: m });
        if (TRACE) console.error('<<', JSON.stringify(m));
        return fn(m, extra);
      });
    },
  });
}

/**
 * Start `example` and connect an SDK Client to it.
 * kind: 'stdio' | 'http'. Returns { client, transport, kind, transcript,
 * clientErrors, stderr(), httpLog, child, close() }.
 */
export async function connect(example, kind) {
  const bin = exampleBin(example);
  const transcript = [];
  const clientErrors = [];
  const httpLog = [];
  let stderrBuf = '';
  let child = null;
  let transport;

  if (kind === 'stdio') {
    transport = new StdioClientTransport({ command: bin, args: [], stderr: 'pipe' });
    transport.stderr?.on('data', (d) => { stderrBuf += d.toString(); });
  } else if (kind === 'http') {
    const port = await freePort();
    child = spawn(bin, ['--http', `127.0.0.1:${port}`], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', (d) => { stderrBuf += d.toString(); });
    child.stderr.on('data', (d) => { stderrBuf += d.toString(); });
    let exited = null;
    child.once('exit', (code, sig) => { exited = { code, sig }; });
    const deadline = Date.now() + 15000;
    for (;;) {
      if (exited) throw new Error(`${example} --http exited early (${JSON.stringify(exited)}): ${stderrBuf}`);
      if (await tcpReady(port)) break;
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`${example} --http did not listen on 127.0.0.1:${port} within 15 s: ${stderrBuf}`);
      }
      await sleep(50);
    }
    // Wrap fetch so each HTTP exchange (method, status, content-type, when it
    // finished) is visible to the tests.
    const loggingFetch = async (url, init = {}) => {
      const entry = {
        method: init.method ?? 'GET',
        body: typeof init.body === 'string' ? init.body : undefined,
        start: Date.now(),
      };
      httpLog.push(entry);
      const res = await fetch(url, init);
      entry.status = res.status;
      entry.contentType = res.headers.get('content-type');
      entry.headersAt = Date.now();
      if (TRACE) console.error(`HTTP ${entry.method} -> ${res.status} ${entry.contentType}`);
      // Observe when the body ends without consuming it for the SDK.
      if (res.body) {
        const [a, b] = res.body.tee();
        (async () => {
          const reader = b.getReader();
          try { for (;;) { const { done } = await reader.read(); if (done) break; } } catch { /* aborted */ }
          entry.endAt = Date.now();
        })();
        return new Response(a, { status: res.status, statusText: res.statusText, headers: res.headers });
      }
      entry.endAt = Date.now();
      return res;
    };
    transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), {
      fetch: loggingFetch,
    });
    transport.port = port;
  } else {
    throw new Error(`unknown transport kind ${kind}`);
  }

  recordTranscript(transport, transcript);
  const client = new Client({ name: 'mm-interop-tests', version: '0.0.0' });
  client.onerror = (e) => { clientErrors.push(e); };
  try {
    await client.connect(transport);
  } catch (e) {
    child?.kill('SIGKILL');
    throw new Error(`connect(${example}, ${kind}) failed: ${e?.message}\nstderr: ${stderrBuf}\n` +
      `transcript: ${JSON.stringify(transcript)}`);
  }

  return {
    client, transport, kind, transcript, clientErrors, httpLog, child,
    stderr: () => stderrBuf,
    /** Last n transcript entries, for assertion messages. */
    dump(n = 12) {
      return transcript.slice(-n).map((t) => `${t.dir}: ${JSON.stringify(t.msg)}`).join('\n') +
        (stderrBuf ? `\n--- server stderr ---\n${stderrBuf.slice(-2000)}` : '');
    },
    async close() {
      try {
        if (kind === 'http') await transport.terminateSession().catch(() => {});
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

/** Concatenated text of a CallToolResult's text blocks. */
export function textOf(result) {
  return (result.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('');
}

/** Runs fn; on failure appends the recent JSON-RPC exchange (`ctx.dump()`) to the error. */
export async function withTranscript(ctx, fn) {
  try {
    return await fn();
  } catch (e) {
    e.message += `\n--- recent exchange (${ctx.kind}) ---\n${ctx.dump()}`;
    throw e;
  }
}
