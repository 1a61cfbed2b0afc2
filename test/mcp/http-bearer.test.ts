/**
 * The clients' bearer of the Streamable HTTP downstream (docs/mcp.md "Sessions and generations"):
 * with one configured, a request without it — or with another — is refused 401 before anything
 * else and takes nothing over (AOC-REQ-006: a session retires the live agent's generation); a
 * non-loopback address is refused at start without one, by the library and by `baton mcp` (exit
 * 2, naming the flag), before anything is read or opened.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { runMcp } from '../../src/cli/commands/mcp.js';
import type { CliIo } from '../../src/cli/io.js';
import { serveHttp } from '../../src/mcp/index.js';
import { inProcessGateway, LINEAGE, makeWorld, payArgs } from './world.js';

const BEARER = 'mcp-clients-bearer-0123456789';

async function agentOn(url: string, bearer?: string): Promise<Client> {
  const headers = bearer === undefined ? undefined : { authorization: `Bearer ${bearer}` };
  const agent = new Client({ name: 'http-agent', version: '1.0.0' });
  await agent.connect(
    new StreamableHTTPClientTransport(
      new URL(url),
      headers === undefined ? {} : { requestInit: { headers } },
    ),
  );
  return agent;
}

test('a clients’ bearer: no Authorization or another bearer is 401 and takes nothing over; the right one opens a session', async (t) => {
  const w = await makeWorld(t);
  const { gateway } = await inProcessGateway(t, w);
  const http = await serveHttp(gateway, 0, '127.0.0.1', undefined, { bearer: BEARER });
  t.after(() => http.close());
  const generation = async () => (await w.store.service.getLineage(LINEAGE)).generation;
  const before = await generation();
  await assert.rejects(agentOn(http.url), /401|Unauthorized/, 'no bearer');
  await assert.rejects(agentOn(http.url, `${BEARER}x`), /401|Unauthorized/, 'another bearer');
  await assert.rejects(agentOn(http.url, BEARER.slice(0, -1)), /401|Unauthorized/, 'a prefix');
  assert.equal(await generation(), before, 'no takeover');
  const agent = await agentOn(http.url, BEARER);
  t.after(() => agent.close());
  assert.equal(await generation(), before + 1, 'the bearer’s session took over');
  const r = (await agent.callTool({ name: 'pay', arguments: payArgs('inv-bearer') })) as CallToolResult;
  assert.notEqual(r.isError, true, JSON.stringify(r.content));
  assert.equal(w.provider.sandbox.effects().length, 1);
});

test('serveHttp refuses a non-loopback address without a clients’ bearer', async (t) => {
  const w = await makeWorld(t);
  const { gateway } = await inProcessGateway(t, w);
  await assert.rejects(serveHttp(gateway, 0, '0.0.0.0'), /usage: |not a loopback address/);
});

function io(): { io: CliIo; out: () => string; err: () => string } {
  let out = '';
  let err = '';
  return {
    io: {
      stdout: (s) => void (out += s),
      stderr: (s) => void (err += s),
      readStdin: () => Promise.resolve(Buffer.alloc(0)),
    },
    out: () => out,
    err: () => err,
  };
}

test('baton mcp --http --host 0.0.0.0 without --http-token-file, or an unusable bearer: exit 2 naming the flag, nothing taken over', async (t) => {
  const w = await makeWorld(t);
  process.env['BATON_TOKEN'] = w.token;
  t.after(() => delete process.env['BATON_TOKEN']);
  const before = (await w.store.service.getLineage(LINEAGE).catch(() => undefined))?.generation;
  const base = ['--policy', w.policyFile, '--baton', w.batonUrl, '--upstream', w.upstreamUrl];
  const c = io();
  const code = await runMcp([...base, '--http', '0', '--host', '0.0.0.0'], c.io);
  assert.equal(code, 2);
  assert.match(c.err(), /error: usage: --host 0\.0\.0\.0 is not a loopback address: give --http-token-file/);
  const stray = io();
  assert.equal(await runMcp([...base, '--http-token-file', 'x'], stray.io), 2, 'the bearer is for --http');
  for (const [what, text] of [
    ['too short', 'short'],
    ['white space inside', 'two words of a bearer'],
  ]) {
    const file = join(w.dir, 'bad-token');
    writeFileSync(file, `${text}\n`);
    const bad = io();
    assert.equal(await runMcp([...base, '--http', '0', '--http-token-file', file], bad.io), 2, what);
    assert.match(bad.err(), /error: usage: --http-token-file: the clients' bearer must be/, what);
  }
  assert.equal((await w.store.service.getLineage(LINEAGE).catch(() => undefined))?.generation, before);
});

test('baton mcp --http --http-token-file: the agent needs the file’s bearer', async (t) => {
  const w = await makeWorld(t);
  process.env['BATON_TOKEN'] = w.token;
  t.after(() => delete process.env['BATON_TOKEN']);
  const file = join(w.dir, 'http-token');
  writeFileSync(file, `${BEARER}\n`);
  const stop = new AbortController();
  const c = io();
  const running = runMcp(
    ['--policy', w.policyFile, '--baton', w.batonUrl, '--upstream', w.upstreamUrl, '--http', '0'].concat([
      '--http-token-file',
      file,
    ]),
    c.io,
    stop.signal,
  );
  t.after(async () => {
    stop.abort();
    await running;
  });
  for (let i = 0; i < 200 && !c.out().includes('\n'); i++) await new Promise((r) => setTimeout(r, 50));
  const { url } = JSON.parse(c.out()) as { url: string };
  await assert.rejects(agentOn(url), /401|Unauthorized/);
  const agent = await agentOn(url, BEARER);
  t.after(() => agent.close());
  const r = (await agent.callTool({ name: 'echo', arguments: { text: 'hi' } })) as CallToolResult;
  assert.deepEqual(r.content, [{ type: 'text', text: 'hi' }]);
});
