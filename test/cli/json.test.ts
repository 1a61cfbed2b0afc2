/**
 * `--json` on every data-printing command (docs/cli.md): each prints exactly one JSON document on
 * stdout (one line), carrying the same facts as its text form; `baton --version` and
 * `baton help COMMAND`. In-process, over real SQLite files and real keys.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { main } from '../../src/cli/baton.js';
import { runSor } from '../../src/cli/commands/sor.js';
import type { CliIo } from '../../src/cli/io.js';
import { digestJcs } from '../../src/core/digest.js';
import type { JsonObject } from '../../src/core/json.js';
import { migrations } from '../../src/store/migrations/index.js';
import { sha256HexTag, sha256HexTagJcs } from '../../src/core/digest.js';
import { DRAFT_LEASE_MEMBERS } from '../leases/example.js';
import { repoRoot } from '../support/paths.js';

interface Ran {
  readonly code: number;
  readonly out: string;
  readonly err: string;
}

function sink(stdin = ''): CliIo & { out: string; err: string } {
  const s = {
    out: '',
    err: '',
    stdout: (x: string) => void (s.out += x),
    stderr: (x: string) => void (s.err += x),
    readStdin: () => Promise.resolve(Buffer.from(stdin)),
  };
  return s;
}

async function run(argv: string[], stdin = ''): Promise<Ran> {
  const io = sink(stdin);
  const code = await main(argv, io);
  return { code, out: io.out, err: io.err };
}

/** The one JSON document of a --json answer: a single line that parses. */
function one(r: Ran): JsonObject {
  assert.ok(r.out.endsWith('\n'), 'newline-terminated');
  assert.equal(r.out.trimEnd().split('\n').length, 1, `one line: ${r.out}`);
  return JSON.parse(r.out) as JsonObject;
}

function tempDir(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'baton-json-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test('baton --version and baton help COMMAND', async () => {
  const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
    name: string;
    version: string;
  };
  const v = await run(['--version']);
  assert.deepEqual([v.code, v.out], [0, `baton ${pkg.version}\n`]);
  // The command and the npm package that ships it, each in a field of its own (baton-aoc ≠ baton).
  assert.deepEqual(one(await run(['--version', '--json'])), {
    program: 'baton',
    package: pkg.name,
    version: pkg.version,
  });
  assert.equal(pkg.name, 'baton-aoc');
  assert.equal((await run(['--version', '--frob'])).code, 2);
  const help = await run(['help', 'migrate']);
  assert.equal(help.code, 0);
  assert.equal(help.out, (await run(['migrate', '--help'])).out, 'help COMMAND is COMMAND --help');
  assert.equal((await run(['help', 'nonesuch'])).code, 2);
  assert.match((await run(['help'])).out, /baton help COMMAND/);
});

test('migrate --json, tokens --json, log verify --json on one SQLite store', async (t) => {
  const db = join(tempDir(t), 'baton.db');
  const migrated = one(await run(['migrate', '--db', db, '--json']));
  assert.deepEqual(migrated, {
    applied: migrations.map((m) => ({ id: m.id, name: m.name })),
    version: Math.max(...migrations.map((m) => m.id)),
  });
  assert.deepEqual(one(await run(['migrate', '--db', db, '--json']))['applied'], [], 'current: none');

  const created = await run(['tokens', 'create', '--role', 'operator', '--name', 'ci', '--db', db, '--json']);
  assert.equal(created.code, 0, created.err);
  const c = one(created);
  assert.match(c['token'] as string, /^btk\.tok_[a-f0-9]{32}\./);
  assert.deepEqual([c['role'], c['name']], ['operator', 'ci']);
  const listed = one(await run(['tokens', 'list', '--db', db, '--json']));
  const tokens = listed['tokens'] as JsonObject[];
  assert.equal(tokens.length, 1);
  assert.deepEqual(Object.keys(tokens[0] ?? {}).sort(), ['createdAt', 'id', 'name', 'revokedAt', 'role']);
  assert.equal(tokens[0]?.['id'], c['id']);
  assert.equal(tokens[0]?.['revokedAt'], null);
  assert.ok(
    !JSON.stringify(listed).includes((c['token'] as string).split('.')[2] ?? '-'),
    'no secret in list',
  );
  const revoked = one(await run(['tokens', 'revoke', c['id'] as string, '--db', db, '--json']));
  assert.equal(revoked['id'], c['id']);
  assert.match(revoked['revokedAt'] as string, /^\d{4}-\d\d-\d\dT/);

  const verified = await run(['log', 'verify', '--db', db, '--json']);
  assert.equal(verified.code, 0, verified.err);
  const report = one(verified);
  assert.equal(report['ok'], true);
  assert.equal(report['events'], 2, 'token created and revoked');
  assert.equal(report['firstBroken'], null);
  assert.equal((await run(['log', 'export', '--db', db, '--json'])).code, 2, 'export is JSON Lines already');
});

test('lease keygen|verify --json and digest --json', async (t) => {
  const dir = tempDir(t);
  const keys = join(dir, 'keys');
  const gen = one(await run(['lease', 'keygen', '--out', keys, '--json']));
  assert.match(gen['kid'] as string, /^sha256:[0-9a-f]{64}$/);
  assert.equal(gen['public'], join(keys, 'public.pem'));
  const issuedAt = '2026-11-29T18:00:00.000Z';
  const draft = {
    ...DRAFT_LEASE_MEMBERS,
    pre_image_state_hash: sha256HexTagJcs({ a: 1 }),
    inverse_payload_jcs_hash: sha256HexTagJcs({ b: 2 }),
    trace_anchor_ref: sha256HexTag('trace'),
    issued_at: issuedAt,
    expires_at: '2026-11-29T18:00:30.000Z',
  };
  const signed = await run(['lease', 'sign', '--key', join(keys, 'private.pem'), '-'], JSON.stringify(draft));
  assert.equal(signed.code, 0, signed.err);
  const file = join(dir, 'lease.json');
  writeFileSync(file, signed.out);
  const pub = join(keys, 'public.pem');
  const ok = await run(['lease', 'verify', '--key', pub, '--now', '2026-11-29T18:00:10Z', '--json', file]);
  assert.deepEqual(
    [ok.code, one(ok)],
    [
      0,
      {
        valid: true,
        checked: ['signature', 'recovery_mode', 'recovery_window', 'clock_skew', 'expiry'],
        notChecked: ['target', 'inverse_payload', 'replay', 'fence_epoch', 'pre_image'],
      },
    ],
  );
  const late = await run(['lease', 'verify', '--key', pub, '--now', '2026-11-29T18:01:00Z', '--json', file]);
  assert.equal(late.code, 1);
  const refusal = one(late);
  assert.deepEqual([refusal['valid'], refusal['code']], [false, 'ERR_LEASE_EXPIRED']);
  assert.equal(typeof refusal['rule'], 'string');

  const doc = { b: [1, 2], a: 'x' };
  const d = await run(['digest', '--json', '-'], JSON.stringify(doc));
  assert.deepEqual(one(d), { digest: digestJcs(doc) });
  assert.equal((await run(['jcs', '--json', '-'], '{}')).code, 2, 'jcs prints JSON already: no --json');
});

test('sor --json prints one line with its address, key and one-time operator token', async (t) => {
  const dir = tempDir(t);
  const io = sink();
  let stop: () => void = () => undefined;
  const stopped = new Promise<void>((resolve) => (stop = resolve));
  const running = runSor(['--port', '0', '--db', join(dir, 'sor.db'), '--json'], io, stopped);
  t.after(() => stop());
  const deadline = Date.now() + 30_000;
  while (!io.out.includes('\n') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  const info = one({ code: 0, out: io.out, err: io.err });
  assert.match(info['url'] as string, /^http:\/\/127\.0\.0\.1:\d+$/);
  assert.match(info['receiptKid'] as string, /^sha256:[0-9a-f]{64}$/);
  assert.equal(info['freshKey'], true);
  assert.equal(typeof info['operatorToken'], 'string');
  stop();
  assert.equal(await running, 0);
});

test('conformance --json prints the report as one document, the progress on stderr', async (t) => {
  const out = tempDir(t);
  const r = await run(['conformance', '--case', 'AOC-CASE-001', '--out', out, '--json']);
  assert.equal(r.code, 0, r.err);
  const doc = one(r);
  const report = doc['report'] as JsonObject;
  assert.deepEqual((report['summary'] as JsonObject)['total'], 1);
  assert.deepEqual(report, JSON.parse(readFileSync(join(out, 'report.json'), 'utf8')), 'the same report');
  assert.match(r.err, /AOC conformance/);
});
