/**
 * `baton mcp` in-process: --help documents every flag it parses; bad usage and a bad policy are
 * refused at start with a stable code and exit 2, a policy tool missing upstream (what the upstream
 * offers, not the caller's input: mcp_upstream_invalid, as when it cannot be reached) with exit 1,
 * before serving (docs/cli.md "Exit codes").
 */
import assert from 'node:assert/strict';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { main } from '../../src/cli/baton.js';
import { MCP_OPTIONS } from '../../src/cli/commands/mcp.js';
import type { CliIo } from '../../src/cli/io.js';
import { isBatonError } from '../../src/core/errors.js';
import { parsePolicy, startGateway } from '../../src/mcp/index.js';
import { makeWorld, policyFor } from './world.js';

async function run(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const io: CliIo = {
    stdout: (s) => void (out += s),
    stderr: (s) => void (err += s),
    readStdin: () => Promise.resolve(Buffer.alloc(0)),
  };
  return { code: await main(argv, io), out, err };
}

test('baton mcp --help documents every flag', async () => {
  const { code, out } = await run(['mcp', '--help']);
  assert.equal(code, 0);
  for (const flag of Object.keys(MCP_OPTIONS))
    assert.match(out, new RegExp(`^\\s+--${flag}\\b`, 'm'), `--${flag}`);
});

test('baton mcp refuses bad usage and a bad policy (exit 2), a policy tool missing upstream (exit 1)', async (t) => {
  assert.match((await run(['mcp'])).err, /error: usage: --policy FILE is required/);
  const w = await makeWorld(t);
  const base = ['mcp', '--policy', w.policyFile, '--baton', w.batonUrl];
  assert.match(
    (await run([...base, '--upstream', 'ftp://x'])).err,
    /error: usage: --upstream must be an http\(s\) URL/,
  );
  const bad = join(w.dir, 'bad.json');
  writeFileSync(bad, '{"format":"baton.mcp-policy/1","format":"x"}');
  const dup = await run(['mcp', '--policy', bad, '--baton', w.batonUrl, '--upstream', w.upstreamUrl]);
  assert.equal(dup.code, 2);
  assert.match(dup.err, /error: mcp_policy_invalid/);
  const missing = policyFor(w.provider.profile);
  (missing['tools'] as Record<string, unknown>)['refund'] = (missing['tools'] as Record<string, unknown>)[
    'pay'
  ];
  const file = join(w.dir, 'missing.json');
  writeFileSync(file, JSON.stringify(missing));
  process.env['BATON_TOKEN'] = w.token;
  t.after(() => delete process.env['BATON_TOKEN']);
  const r = await run(['mcp', '--policy', file, '--baton', w.batonUrl, '--upstream', w.upstreamUrl]);
  assert.equal(r.code, 1);
  assert.match(r.err, /error: mcp_upstream_invalid: policy tool refund is not offered upstream/);
  assert.equal((await w.store.service.counts()).total, 0);
});

test('baton mcp --db refuses --baton beside it, --token-file, and a policy that binds a Mission (exit 2, nothing written)', async (t) => {
  const w = await makeWorld(t);
  const up = ['--upstream', w.upstreamUrl];
  const both = await run([
    'mcp',
    '--policy',
    w.policyFile,
    '--baton',
    w.batonUrl,
    '--db',
    w.store.path,
    ...up,
  ]);
  assert.equal(both.code, 2);
  assert.match(both.err, /error: usage: give --baton URL or a store \(--db \/ --postgres\), not both/);
  const token = await run([
    'mcp',
    '--policy',
    w.policyFile,
    '--db',
    w.store.path,
    '--token-file',
    'x',
    ...up,
  ]);
  assert.equal(token.code, 2);
  assert.match(token.err, /error: usage: --token-file is for --baton/);
  const creds = await run([
    'mcp',
    '--policy',
    w.policyFile,
    '--baton',
    w.batonUrl,
    '--credentials',
    'x',
    ...up,
  ]);
  assert.equal(creds.code, 2);
  assert.match(creds.err, /error: usage: --credentials and --domain-key are for a store/);
  // In this process the Mission gate would have nothing to check against: refused, never unchecked.
  const bound = join(w.dir, 'mission.json');
  const rule = { mission: { required: true, actionClass: 'consequential_write' } };
  writeFileSync(bound, JSON.stringify(policyFor(w.provider.profile, rule)));
  const mission = await run(['mcp', '--policy', bound, '--db', w.store.path, ...up]);
  assert.equal(mission.code, 2);
  assert.match(mission.err, /error: usage: tool pay binds a Mission: .* use --baton URL/);
  assert.equal((await w.store.service.counts()).total, 0);
  assert.equal((await w.store.service.listOpen('payments-agent')).reserved.length, 0);
});

test('baton mcp --db on a missing file is refused (exit 2) and leaves no database behind', async (t) => {
  const w = await makeWorld(t);
  const fresh = join(w.dir, 'new.db');
  const unregistered = join(w.dir, 'unregistered.json');
  writeFileSync(
    unregistered,
    JSON.stringify(policyFor({ id: w.provider.profile.id, version: '2030-01-01' })),
  );
  for (const policy of [w.policyFile, unregistered]) {
    const r = await run(['mcp', '--policy', policy, '--db', fresh, '--upstream', w.upstreamUrl]);
    assert.equal(r.code, 2, r.err);
    assert.match(r.err, /error: usage: no database at .*new\.db \(baton migrate or baton serve creates one/);
    assert.deepEqual(
      readdirSync(w.dir).filter((f) => f.startsWith('new.db')),
      [],
      'no database file, journal or domain key was created',
    );
  }
});

test('baton mcp refuses an --upstream-timeout-ms below 100 ms at start (exit 2, usage), before anything is taken over; startGateway refuses it too', async (t) => {
  const w = await makeWorld(t);
  const base = ['mcp', '--policy', w.policyFile, '--baton', w.batonUrl, '--upstream', w.upstreamUrl];
  process.env['BATON_TOKEN'] = w.token;
  t.after(() => delete process.env['BATON_TOKEN']);
  for (const ms of ['0', '1', '99']) {
    const r = await run([...base, '--upstream-timeout-ms', ms]);
    assert.equal(r.code, 2, `${ms}: ${r.err}`);
    assert.match(r.err, /error: usage: --upstream-timeout-ms must be a whole number from 100 to 3600000/);
  }
  await assert.rejects(w.store.service.getLineage('payments-agent'), 'no takeover');
  await assert.rejects(
    startGateway({
      baton: w.baton(),
      policy: parsePolicy(JSON.stringify(w.policy)),
      upstreams: [{ name: 'payments', url: w.upstreamUrl }],
      upstreamTimeoutMs: 0,
    }),
    (e: unknown) =>
      isBatonError(e, 'usage') && /upstreamTimeoutMs must be a whole number from 100/.test(e.message),
  );
  await assert.rejects(w.store.service.getLineage('payments-agent'), 'no takeover');
});
