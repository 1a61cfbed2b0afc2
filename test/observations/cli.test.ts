/**
 * `baton observe …` and `baton report` (B6), and the "done when": a takeover in
 * `baton demo` leaves a signed handoff record that `baton observe verify` accepts and
 * `baton report` counts. The demo runs for real (worker processes, the sandbox over HTTP).
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';
import { generateEd25519KeyPair, exportPrivatePem, exportPublicPem } from '../../src/core/ed25519.js';
import { observeCommand } from '../../src/cli/commands/observe.js';
import { reportCommand } from '../../src/cli/commands/report.js';
import { runDemo } from '../../src/cli/demo/story.js';
import { ManualClock } from '../../src/core/clock.js';
import { OBSERVATION_PROFILE } from '../../src/observations/index.js';
import { openBaton } from '../../src/server/open.js';
import { ContinuityStore } from '../../src/store/index.js';
import { domainConfig, T0 } from '../occurrences/helpers.js';
import { captureIo, tempDir } from '../store/support.js';
import { EXAMPLE_DIGEST, EXAMPLE_PATH, decidedRecord, example } from './support.js';

async function run(cmd: typeof observeCommand, argv: string[]) {
  const io = captureIo();
  const code = await cmd.run(argv, io);
  return { code, out: io.out.join(''), err: io.err.join('') };
}

test('B7-1 CLI: observe validate accepts the draft example (exit 0) and prints its digest; refusals exit 1', async (t) => {
  const ok = await run(observeCommand, ['validate', EXAMPLE_PATH]);
  assert.equal(ok.code, 0, ok.err);
  assert.match(ok.out, new RegExp(`^valid ${EXAMPLE_DIGEST}$`, 'm'));
  assert.match(ok.out, /unapproved locator \(not fetched\): \$\.evidence\[0\]\.locator/);
  const dir = tempDir(t);
  const bad = join(dir, 'bad.json');
  writeFileSync(bad, JSON.stringify({ ...example(), version: '2' }));
  const refused = await run(observeCommand, ['validate', bad]);
  assert.equal(refused.code, 1);
  assert.match(refused.err, /observation_profile_unsupported \[version at \$\.version\]/);
  assert.equal((await run(observeCommand, ['validate', join(dir, 'missing.json')])).code, 2);
  assert.equal((await run(observeCommand, ['nonsense'])).code, 2);
});

test('B7-13 CLI: observe sign, then verify with the public key and audience; wrong audience exits 1', async (t) => {
  const dir = tempDir(t);
  const key = generateEd25519KeyPair();
  writeFileSync(join(dir, 'k.pem'), exportPrivatePem(key.privateKey));
  writeFileSync(join(dir, 'pub.pem'), exportPublicPem(key.publicKey));
  const rec = decidedRecord({
    profile: OBSERVATION_PROFILE,
    producer: 'urn:example:p',
    audience: 'urn:example:v',
    issued_at: '2026-10-12T04:05:00Z',
    expires_at: '2026-10-12T05:05:00Z',
  });
  writeFileSync(join(dir, 'r.json'), JSON.stringify(rec));
  const signed = await run(observeCommand, ['sign', join(dir, 'r.json'), '--key', join(dir, 'k.pem')]);
  assert.equal(signed.code, 0, signed.err);
  writeFileSync(join(dir, 's.json'), signed.out);
  const args = [
    'verify',
    join(dir, 's.json'),
    '--key',
    join(dir, 'pub.pem'),
    '--producer',
    'urn:example:p',
    '--now',
    '2026-10-12T04:10:00Z',
  ];
  const ok = await run(observeCommand, [...args, '--audience', 'urn:example:v']);
  assert.equal(ok.code, 0, ok.err);
  assert.match(ok.out, /^verified urn:example:record:handoff-42 from urn:example:p /);
  const wrong = await run(observeCommand, [...args, '--audience', 'urn:example:other']);
  assert.equal(wrong.code, 1);
  const late = await run(observeCommand, [
    'verify',
    join(dir, 's.json'),
    '--key',
    join(dir, 'pub.pem'),
    '--producer',
    'urn:example:p',
    '--audience',
    'urn:example:v',
    '--now',
    '2026-10-12T06:00:00Z',
  ]);
  assert.equal(late.code, 1);
  assert.match(late.err, /expires_at/);
});

test('B3.6 CLI: observe metrics --lineage and --from scope CIF as they scope FIC_obs', async (t) => {
  const dir = tempDir(t);
  const db = join(dir, 'baton.db');
  const clock = new ManualClock(T0);
  const opened = await openBaton({ kind: 'sqlite', path: db }, { clock });
  try {
    await opened.service.configureDomain(domainConfig() as never);
    await opened.service.takeover({ lineage: 'A' });
    clock.advance(60_000);
    await opened.service.takeover({ lineage: 'B' });
    const continuity = new ContinuityStore({
      engine: opened.engine,
      signingKey: opened.domainKey.privateKey,
      clock,
    });
    await continuity.submit(
      decidedRecord({
        record_id: 'b-1',
        event_type: 'action',
        scope_id: 'urn:baton:test-domain:lineage:B',
        observed_at: new Date(clock.wallMs()).toISOString(),
        invariants: [{ dimension: 'authority', status: 'MISMATCH', reference: 'urn:baton:r', reason: 'x' }],
      }),
      'operator',
    );
  } finally {
    await opened.close();
  }
  const authority = async (...args: string[]) => {
    const r = await run(observeCommand, ['metrics', '--db', db, ...args]);
    assert.equal(r.code, 0, r.err);
    const m = JSON.parse(r.out) as {
      cif: { per_dimension: Record<string, { match: number; mismatch: number }> };
    };
    const a = m.cif.per_dimension['authority'];
    return [a?.match, a?.mismatch];
  };
  assert.deepEqual(await authority(), [2, 1]);
  assert.deepEqual(await authority('--lineage', 'A'), [1, 0]);
  assert.deepEqual(await authority('--lineage', 'B'), [1, 1]);
  assert.deepEqual(await authority('--from', new Date(T0 + 60_000).toISOString()), [1, 1]);
  assert.deepEqual(await authority('--to', new Date(T0 + 59_999).toISOString()), [1, 0]);
});

test('OBS-12 CLI: observe verify checks the namespace: a record signed by the pinned key but claiming another producer exits 1; --producer is required', async (t) => {
  const dir = tempDir(t);
  const key = generateEd25519KeyPair();
  writeFileSync(join(dir, 'k.pem'), exportPrivatePem(key.privateKey));
  writeFileSync(join(dir, 'pub.pem'), exportPublicPem(key.publicKey));
  // The holder of acme's key signs a record claiming to come from globex.
  const claim = decidedRecord({
    profile: OBSERVATION_PROFILE,
    producer: 'urn:example:globex',
    audience: 'urn:example:v',
    issued_at: '2026-10-12T04:05:00Z',
    expires_at: '2026-10-12T05:05:00Z',
  });
  writeFileSync(join(dir, 'r.json'), JSON.stringify(claim));
  const signed = await run(observeCommand, ['sign', join(dir, 'r.json'), '--key', join(dir, 'k.pem')]);
  assert.equal(signed.code, 0, signed.err);
  writeFileSync(join(dir, 's.json'), signed.out);
  const base = ['verify', join(dir, 's.json'), '--key', join(dir, 'pub.pem'), '--audience', 'urn:example:v'];
  const now = ['--now', '2026-10-12T04:10:00Z'];
  const refused = await run(observeCommand, [...base, '--producer', 'urn:example:acme', ...now]);
  assert.equal(refused.code, 1, refused.out);
  assert.match(refused.err, /observation_record_invalid \[envelope at \$\.producer\]/);
  const missing = await run(observeCommand, [...base, ...now]);
  assert.equal(missing.code, 2);
  assert.match(missing.err, /--producer URI is required/);
  const help = await run(observeCommand, ['--help']);
  assert.match(help.out, /--producer URI/);
});

test(
  'done-when: a takeover in baton demo leaves a verifiable handoff record that report counts',
  { timeout: 120_000 },
  async (t) => {
    const dir = tempDir(t);
    const db = join(dir, 'demo.db');
    const lines: string[] = [];
    assert.equal(await runDemo({ db, print: (l) => lines.push(l) }), true, lines.join('\n'));
    assert.ok(
      lines.some((l) => /^continuity: 4 signed handoff record\(s\)/.test(l)),
      lines.join('\n'),
    );
    const id = 'urn:baton:demo-domain:record:handoff:invoice-agent:2';
    const exported = await run(observeCommand, ['export', '--db', db, '--record-id', id]);
    assert.equal(exported.code, 0, exported.err);
    writeFileSync(join(dir, 'h.json'), exported.out);
    const verified = await run(observeCommand, [
      'verify',
      join(dir, 'h.json'),
      '--key',
      `${db}.domain-key.pem`,
      '--producer',
      'urn:baton:demo-domain',
      '--audience',
      'urn:baton:demo-domain',
    ]);
    assert.equal(verified.code, 0, verified.err);
    assert.match(verified.out, new RegExp(`^verified ${id} from urn:baton:demo-domain`));
    const report = await run(reportCommand, ['--db', db]);
    assert.equal(report.code, 0, report.err);
    const r = JSON.parse(report.out) as {
      records: { handoff: number; signed: number };
      projection: { created: number };
    };
    assert.deepEqual([r.records.handoff, r.records.signed, r.projection.created], [4, 4, 0]);
    const html = await run(reportCommand, ['--db', db, '--format', 'html', '--out', join(dir, 'r.html')]);
    assert.equal(html.code, 0, html.err);
    const page = readFileSync(join(dir, 'r.html'), 'utf8');
    assert.equal((page.match(/<svg /g) ?? []).length, 2, 'FIC_obs and CIF charts');
    assert.doesNotMatch(
      page,
      /<script|https?:\/\/(?!www\.w3\.org)/,
      'self-contained: no script, no external asset',
    );
    const md = await run(reportCommand, ['--db', db, '--format', 'md']);
    // total, handoff, revocation barrier, signed, corrections, producer key unpinned: the demo
    // revokes nothing.
    assert.match(
      md.out,
      /\| total \| handoff \| revocation barrier \| signed \| corrections \| producer key unpinned \|\n\|---\|---\|---\|---\|---\|---\|\n\| 4 \| 4 \| 0 \| 4 \| 0 \| 0 \|/,
    );
    assert.match(md.out, /bypass path direct: present/);
    const metrics = await run(observeCommand, ['metrics', '--db', db, '--sample', '2', '--seed', 'x']);
    assert.equal(metrics.code, 0, metrics.err);
    const m = JSON.parse(metrics.out) as { fic_obs: { n: number; sample: unknown } };
    assert.deepEqual([m.fic_obs.n, m.fic_obs.sample], [2, { size: 2, seed: 'x' }]);
  },
);
