/**
 * `baton domain show|set`, `baton profiles list|show|add|pin`, `baton authorities
 * list|show|create` against a REAL server and a REAL sandbox, with --url/--token and with
 * BATON_URL/BATON_TOKEN; `baton sandbox --print-profile` prints the same pinned profile that
 * `profiles pin --from-sandbox` fetches.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { runSandbox } from '../../src/cli/commands/sandbox.js';
import type { CliIo } from '../../src/cli/io.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { startApi } from '../server/helpers.js';
import { baton, exampleConfig, PROFILE_FILE, startSandbox, tempDir, writeConfig } from './support.js';

test('domain set then show, authorities create/list/show, with --url and --token', async (t) => {
  const api = await startApi(t);
  const dir = tempDir(t);
  const domainFile = writeConfig(dir, exampleConfig('http://127.0.0.1:9')['domain'], 'domain.json');
  const remote = ['--url', api.url, '--token', api.admin];
  const set = await baton(['domain', 'set', domainFile, ...remote]);
  assert.equal(set.code, 0, set.err);
  assert.equal((JSON.parse(set.out) as { id: string }).id, 'first-call');
  const shown = await baton(['domain', 'show', '--url', api.url, '--token', api.operator]);
  assert.equal(shown.code, 0, shown.err);
  assert.equal((JSON.parse(shown.out) as { version: number }).version, 1);
  const asOperator = await baton(['domain', 'set', domainFile, '--url', api.url, '--token', api.operator]);
  assert.equal(asOperator.code, 1);
  assert.match(asOperator.err, /^error: forbidden/m);

  const op = ['--url', api.url, '--token', api.operator];
  const created = await baton([
    'authorities',
    'create',
    '--id',
    'ops',
    '--unit',
    'eur_cents',
    '--total',
    '500',
    ...op,
  ]);
  assert.equal(created.code, 0, created.err);
  assert.equal((JSON.parse(created.out) as { total: number }).total, 500);
  const again = await baton([
    'authorities',
    'create',
    '--id',
    'ops',
    '--unit',
    'usd_cents',
    '--total',
    '500',
    ...op,
  ]);
  assert.equal(again.code, 1);
  assert.match(again.err, /^error: authority_conflict/m);
  const listed = await baton(['authorities', 'list', ...op]);
  assert.equal(listed.out, 'ops  eur_cents  total 500  reserved 0  consumed 0\n');
  const show = await baton(['authorities', 'show', 'ops', ...op]);
  assert.equal((JSON.parse(show.out) as { unit: string }).unit, 'eur_cents');
  const missing = await baton(['authorities', 'show', 'nope', ...op]);
  assert.equal(missing.code, 1);
  assert.match(missing.err, /^error: authority_not_found/m);
  const badTotal = await baton(['authorities', 'create', '--id', 'x', '--unit', 'u', '--total', '0', ...op]);
  assert.equal(badTotal.code, 2);
  assert.equal((await baton(['authorities', 'frobnicate', ...op])).code, 2);
  assert.equal((await baton(['authorities', 'constructor', ...op])).code, 2);
});

test('BATON_URL and BATON_TOKEN stand in for the flags', async (t) => {
  const api = await startApi(t);
  const saved = { url: process.env['BATON_URL'], token: process.env['BATON_TOKEN'] };
  t.after(() => {
    for (const [k, v] of [
      ['BATON_URL', saved.url],
      ['BATON_TOKEN', saved.token],
    ] as const) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });
  process.env['BATON_URL'] = api.url;
  process.env['BATON_TOKEN'] = api.operator;
  const r = await baton(['authorities', 'list']);
  assert.equal(r.code, 0, r.err);
  assert.equal(r.out, '');
  delete process.env['BATON_TOKEN'];
  assert.equal((await baton(['authorities', 'list'])).code, 2, 'no token: usage');
});

test('profiles pin --from-sandbox, add (pinned), list and show; the shipped file is not edited', async (t) => {
  const api = await startApi(t);
  const sandbox = await startSandbox(t);
  const shipped = readFileSync(PROFILE_FILE, 'utf8');
  const pinned = await baton(['profiles', 'pin', '--from-sandbox', sandbox.url]);
  assert.equal(pinned.code, 0, pinned.err);
  const doc = JSON.parse(pinned.out) as {
    version: string;
    statusSources: { url: string; authentication: { publicKey?: string } }[];
  };
  assert.match(doc.version, /^2026-01-01\.[0-9a-f]{8}$/);
  assert.ok(doc.statusSources[0]?.url.startsWith(sandbox.url));
  assert.equal(doc.statusSources[0]?.authentication.publicKey, sandbox.verification.ed25519?.jwk.x);

  const op = ['--url', api.url, '--token', api.operator];
  const added = await baton(['profiles', 'add', PROFILE_FILE, '--pin-to-sandbox', sandbox.url, ...op]);
  assert.equal(added.code, 0, added.err);
  assert.match(
    added.out,
    new RegExp(`^profile sandbox-payments-ed25519@${doc.version.replace('.', '\\.')}: registered sha-256:`),
  );
  const before = await api.snapshot();
  const fromStdin = await baton(['profiles', 'add', '-', ...op], pinned.out);
  assert.equal(fromStdin.code, 0, 'the same document again is no conflict');
  assert.match(
    fromStdin.out,
    new RegExp(`^profile sandbox-payments-ed25519@${doc.version.replace('.', '\\.')}: unchanged sha-256:`),
    'the same document again says unchanged, as apply does',
  );
  assert.equal(await api.snapshot(), before, 'and writes nothing');
  const other = { ...doc, environment: 'sandbox-2' };
  const conflict = await baton(['profiles', 'add', '-', ...op], JSON.stringify(other));
  assert.equal(conflict.code, 1, conflict.err);
  assert.match(conflict.err, /^error: profile_conflict: /m);
  const list = await baton(['profiles', 'list', ...op]);
  assert.match(
    list.out,
    new RegExp(
      `^sandbox-payments-ed25519  ${doc.version.replace('.', '\\.')}  sha-256:\\S+  acct_sandbox  sandbox  `,
      'm',
    ),
  );
  // The help names exactly the columns a line has.
  const help = await baton(['profiles', '--help']);
  const named = /list prints one line per registered version: ([^.]+)\./.exec(
    help.out.replace(/\s+/g, ' '),
  )?.[1];
  const line = list.out.split('\n')[0] ?? '';
  assert.equal(named?.split(', ').length, line.split('  ').length, `${named ?? '?'} against ${line}`);
  assert.match(line, / {2}\d{4}-\d{2}-\d{2}T\S+Z$/, 'the last column is registeredAt, RFC 3339');
  assert.match(named ?? '', /, registeredAt \(RFC 3339\)$/);
  const show = await baton(['profiles', 'show', 'sandbox-payments-ed25519', doc.version, ...op]);
  assert.deepEqual((JSON.parse(show.out) as { document: unknown }).document, doc);
  assert.equal(readFileSync(PROFILE_FILE, 'utf8'), shipped);

  const unreachable = await baton(['profiles', 'pin', '--from-sandbox', 'http://127.0.0.1:9', '--wait', '0']);
  assert.equal(unreachable.code, 1);
  assert.match(unreachable.err, /^error: provider_unreachable/m);
});

test('baton sandbox --print-profile prints the profile pinned to itself, as pin --from-sandbox does', async () => {
  let out = '';
  const io: CliIo = {
    stdout: (s) => void (out += s),
    stderr: () => undefined,
    readStdin: () => Promise.resolve(Buffer.alloc(0)),
  };
  const stop = new AbortController();
  const done = runSandbox(['--port', '0', '--print-profile'], io, stop.signal);
  const deadline = Date.now() + 20_000;
  while (out.split('\n').length < 3) {
    assert.ok(Date.now() < deadline, 'the sandbox did not print its two lines');
    await sleep(50);
  }
  const [info, profile] = out
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  const url = String(info?.['url']);
  const fetched = await baton(['profiles', 'pin', '--from-sandbox', url]);
  stop.abort();
  assert.equal(await done, 0);
  assert.deepEqual(JSON.parse(fetched.out), profile);
});
