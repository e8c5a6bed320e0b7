// `mm serve` checked by the official TypeScript SDK client, over stdio and Streamable HTTP:
// the agent file's declared tools are listed with their schemas, a call runs the script with
// exactly the expected argv, an injection string stays one argument, and an invalid call is a
// tool error that runs nothing.
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

import { REPO_ROOT, freePort } from './helpers.mjs';

// mm is built in the workspace's target dir (scripts/test.sh), not in picomcp's own.
const MM = process.env.MM_BIN ?? path.join(REPO_ROOT, 'target', 'debug', 'mm');

const AGENT = `---
name: ops
tools:
  release:
    description: Publish a release.
    parameters:
      version: {type: string, description: "The version, like 1.4.2."}
      channel: {type: string, enum: [stable, beta]}
    command: [./rec, "{{version}}", "--channel={{channel}}"]
---
Served.
`;

// Records its argv, NUL-separated, one call a line.
const REC = `#!/bin/sh
here="$(dirname "$0")"
{ for a in "$@"; do printf '%s\\0' "$a"; done; printf '\\n'; } >> "$here/argv.log"
echo "recorded $# args"
`;

function project() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'mm-serve-'));
  writeFileSync(path.join(dir, 'mm.md'), AGENT);
  writeFileSync(path.join(dir, 'rec'), REC);
  chmodSync(path.join(dir, 'rec'), 0o755);
  return dir;
}

function calls(dir) {
  const log = path.join(dir, 'argv.log');
  if (!existsSync(log)) return [];
  return readFileSync(log, 'utf8').split('\n').filter((l) => l !== '')
    .map((l) => l.split('\0').slice(0, -1));
}

async function check(client, dir) {
  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((t) => t.name), ['release']);
  assert.equal(tools[0].description, 'Publish a release.');
  assert.deepEqual(tools[0].inputSchema.required, ['version', 'channel']);
  assert.deepEqual(tools[0].inputSchema.properties.channel.enum, ['stable', 'beta']);
  assert.equal(tools[0].inputSchema.properties.version.description, 'The version, like 1.4.2.');

  const hostile = '1.4.2; touch PWNED $(id) `id`';
  const ran = await client.callTool({ name: 'release', arguments: { version: hostile, channel: 'beta' } });
  assert.ok(!ran.isError, JSON.stringify(ran));
  assert.equal(ran.content[0].text, 'recorded 2 args\n');

  const invalid = await client.callTool({ name: 'release', arguments: { version: '2.0', channel: 'alpha' } });
  assert.equal(invalid.isError, true);
  assert.match(invalid.content[0].text, /channel: "alpha" is not one of: stable, beta/);

  assert.deepEqual(calls(dir), [[hostile, '--channel=beta']]);
  assert.ok(!existsSync(path.join(dir, 'PWNED')));
}

test('mm serve over stdio, with the TypeScript SDK client', async () => {
  const dir = project();
  const transport = new StdioClientTransport({ command: MM, args: ['serve'], cwd: dir, stderr: 'inherit' });
  const client = new Client({ name: 'mm-serve-interop', version: '1.0.0' });
  await client.connect(transport);
  try {
    await check(client, dir);
  } finally {
    await client.close();
  }
});

test('mm serve over Streamable HTTP, with the TypeScript SDK client', async () => {
  const dir = project();
  const port = await freePort();
  const child = spawn(MM, ['serve', '--http', `127.0.0.1:${port}`], { cwd: dir, stdio: ['ignore', 'inherit', 'pipe'] });
  let stderr = '';
  try {
    // Wait for "serving MCP at …".
    await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`mm serve did not start: ${stderr}`)), 20000);
      child.stderr.on('data', (d) => {
        stderr += d;
        if (stderr.includes('serving MCP at')) { clearTimeout(timer); resolve(); }
      });
      child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`mm serve exited ${code}: ${stderr}`)); });
    });
    const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`));
    const client = new Client({ name: 'mm-serve-interop', version: '1.0.0' });
    await client.connect(transport);
    try {
      await check(client, dir);
    } finally {
      await client.close();
    }
  } finally {
    child.kill('SIGTERM');
  }
});

// The Inspector's CLI mode (`@modelcontextprotocol/inspector --cli`, pinned in package.json)
// spawns `mm serve` itself, lists the tools and calls one.
test('mm serve with the MCP Inspector CLI', async () => {
  const { execFile } = await import('node:child_process');
  const { promisify } = await import('node:util');
  const run = promisify(execFile);
  const inspector = path.join(REPO_ROOT, 'interop', 'node_modules', '.bin', 'mcp-inspector');
  const dir = project();
  const inspect = async (...args) => {
    const { stdout } = await run(inspector, ['--cli', MM, 'serve', ...args], { cwd: dir, timeout: 60000 });
    return JSON.parse(stdout);
  };
  const listed = await inspect('--method', 'tools/list');
  assert.deepEqual(listed.tools.map((t) => t.name), ['release']);
  assert.deepEqual(listed.tools[0].inputSchema.required, ['version', 'channel']);
  const hostile = '1.4.2; touch PWNED $(id)';
  const called = await inspect('--method', 'tools/call', '--tool-name', 'release',
    '--tool-arg', `version=${hostile}`, '--tool-arg', 'channel=beta');
  assert.equal(called.content[0].text, 'recorded 2 args\n');
  assert.deepEqual(calls(dir), [[hostile, '--channel=beta']]);
  assert.ok(!existsSync(path.join(dir, 'PWNED')));
});
