import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { KeyObject } from 'node:crypto';
import Database from 'better-sqlite3';
import { canonicalize } from '../../src/core/jcs.js';
import {
  ed25519Sign,
  ed25519Verify,
  exportPrivatePem,
  generateEd25519KeyPair,
  type Ed25519KeyPair,
} from '../../src/core/ed25519.js';
import { openSqliteEngine } from '../../src/store/sqlite.js';
import { migrate } from '../../src/store/migrations.js';
import { appendEvidence, evidenceHash, type EvidenceEvent } from '../../src/store/evidence-log.js';
import {
  exportEvidence,
  verifyCheckpoint,
  type CheckpointSigner,
  type CheckpointVerifier,
} from '../../src/store/evidence-export.js';
import { verifyEvidence } from '../../src/store/evidence-verify.js';
import { runLog } from '../../src/cli/commands/log.js';
import { captureIo, DROP_EVIDENCE_GUARD, tempDir } from './support.js';

const SUBJECTS = ['occurrence:1', 'lineage:invoice-agent', 'occurrence:2', '__proto__'];
const N = 14;

async function seeded(t: TestContext): Promise<{ path: string; key: Ed25519KeyPair }> {
  const path = join(tempDir(t), 'baton.db');
  const engine = openSqliteEngine(path);
  await migrate(engine);
  for (let i = 0; i < N; i++) {
    const subject = SUBJECTS[i % SUBJECTS.length] ?? 'x';
    await engine.transaction((tx) =>
      appendEvidence(tx, {
        subject,
        type: 'state.changed',
        body: { i, to: `s${i}` },
        at: 1_000 + i,
        actor: 'svc',
      }),
    );
  }
  await engine.close();
  const key = generateEd25519KeyPair();
  writeFileSync(`${path}.domain-key.pem`, exportPrivatePem(key.privateKey), { mode: 0o600 });
  return { path, key };
}

function verifierFor(publicKey: KeyObject, kid: string): CheckpointVerifier {
  return (bytes, signature) =>
    signature.kid === kid && ed25519Verify(publicKey, bytes, Buffer.from(signature.sig, 'base64url'));
}

function signerFor(key: Ed25519KeyPair): CheckpointSigner {
  return (bytes) => ({ kid: key.kid, sig: ed25519Sign(key.privateKey, bytes).toString('base64url') });
}

async function exportLines(
  t: TestContext,
): Promise<{ lines: string[]; verify: CheckpointVerifier; path: string }> {
  const { path, key } = await seeded(t);
  const out = join(tempDir(t), 'log.jsonl');
  const io = captureIo();
  assert.equal(await runLog(['export', '--db', path, '--out', out], io), 0, io.err.join(''));
  assert.match(
    io.err.join(''),
    new RegExp(`exported ${N} events in ${SUBJECTS.length} subjects; checkpoint signed by ${key.kid}`),
  );
  const lines = readFileSync(out, 'utf8')
    .split('\n')
    .filter((l) => l.length > 0);
  return { lines, verify: verifierFor(key.publicKey, key.kid), path };
}

void test('baton log export writes one JCS event per line and a signed checkpoint that verifies', async (t) => {
  const { lines, verify } = await exportLines(t);
  assert.equal(lines.length, N + 1);
  const events = lines.slice(0, -1).map((l) => JSON.parse(l) as EvidenceEvent);
  events.forEach((e, i) => {
    assert.equal(e.seq, i + 1);
    assert.equal(canonicalize(e), lines[i]);
    const { seq: _s, hash, ...input } = e;
    assert.equal(hash, evidenceHash(input));
  });
  const checkpoint = JSON.parse(lines.at(-1) ?? '') as Record<string, unknown>;
  assert.equal(checkpoint['type'], 'checkpoint');
  assert.equal(checkpoint['events'], N);
  assert.deepEqual(Object.keys(checkpoint['heads'] as object).sort(), [...SUBJECTS].sort());
  const report = verifyCheckpoint(lines, verify);
  assert.equal(report.ok, true, report.firstBroken?.reason);
  assert.equal(report.signature, 'valid');
  assert.equal(report.events, N);
  assert.equal(report.subjects, SUBJECTS.length);
});

void test('export to stdout matches the file export, checkpoint aside', async (t) => {
  const { lines, path } = await exportLines(t);
  const io = captureIo();
  assert.equal(await runLog(['export', '--db', path], io), 0);
  const stdoutLines = io.out
    .join('')
    .split('\n')
    .filter((l) => l.length > 0);
  assert.deepEqual(stdoutLines.slice(0, -1), lines.slice(0, -1));
});

interface LineTamper {
  name: string;
  edit: (lines: string[]) => string[];
  reason: RegExp;
}

function editEvent(lines: string[], index: number, change: (e: EvidenceEvent) => EvidenceEvent): string[] {
  const copy = [...lines];
  copy[index] = canonicalize(change(JSON.parse(copy[index] ?? '') as EvidenceEvent));
  return copy;
}

function editCheckpoint(lines: string[], change: (c: Record<string, unknown>) => void): string[] {
  const c = JSON.parse(lines.at(-1) ?? '') as Record<string, unknown>;
  change(c);
  return [...lines.slice(0, -1), canonicalize(c)];
}

const TAMPERS: LineTamper[] = [
  {
    name: 'an edited body',
    edit: (l) => editEvent(l, 4, (e) => ({ ...e, body: { i: 999 } })),
    reason: /hash/,
  },
  {
    name: 'an edited actor',
    edit: (l) => editEvent(l, 0, (e) => ({ ...e, actor: 'mallory' })),
    reason: /hash/,
  },
  {
    name: 'an edited body with its hash recomputed',
    edit: (l) =>
      editEvent(l, N - 1, (e) => {
        const body = { i: 999 };
        return { ...e, body, hash: evidenceHash({ ...e, body }) };
      }),
    reason: /recorded/,
  },
  { name: 'a dropped event line', edit: (l) => [...l.slice(0, 6), ...l.slice(7)], reason: /missing/ },
  {
    name: 'a dropped last event line',
    edit: (l) => [...l.slice(0, N - 1), ...l.slice(N)],
    reason: /missing/,
  },
  {
    name: 'a line that is not canonical',
    edit: (l) => l.map((x, i) => (i === 2 ? x.replace(':', ': ') : x)),
    reason: /canonical/,
  },
  { name: 'a removed checkpoint', edit: (l) => l.slice(0, -1), reason: /checkpoint/ },
  {
    name: 'checkpoint heads rewritten',
    edit: (l) =>
      editCheckpoint(l, (c) => {
        (c['heads'] as Record<string, { count: number }>)['occurrence:1']!.count += 1;
      }),
    reason: /./,
  },
  {
    name: 'checkpoint event count rewritten',
    edit: (l) => editCheckpoint(l, (c) => void (c['events'] = N - 1)),
    reason: /./,
  },
  {
    name: 'checkpoint signature from another key',
    edit: (l) =>
      editCheckpoint(l, (c) => {
        const other = generateEd25519KeyPair();
        const { signature: _s, ...unsigned } = c;
        const sig = signerFor(other)(Buffer.from(canonicalize(unsigned)));
        c['signature'] = { alg: 'Ed25519', kid: (c['signature'] as { kid: string }).kid, sig: sig.sig };
      }),
    reason: /signature/,
  },
];

void test('a tampered export fails checkpoint verification', async (t) => {
  const { lines, verify } = await exportLines(t);
  for (const c of TAMPERS) {
    const report = verifyCheckpoint(c.edit(lines), verify);
    assert.equal(report.ok, false, c.name);
    assert.match(report.firstBroken?.reason ?? '', c.reason, c.name);
  }
  t.diagnostic(`checked ${TAMPERS.length} tampered exports`);
});

void test('export refuses to sign a broken log and leaves no output file', async (t) => {
  const { path } = await seeded(t);
  const raw = new Database(path);
  raw.exec(DROP_EVIDENCE_GUARD.sqlite.join(';'));
  raw.prepare('DELETE FROM evidence_events WHERE seq = 5').run();
  raw.close();
  const out = join(tempDir(t), 'log.jsonl');
  const io = captureIo();
  assert.equal(await runLog(['export', '--db', path, '--out', out], io), 1);
  assert.match(io.err.join(''), /store_corrupt.*seq 5/);
  assert.equal(existsSync(out), false);
  assert.equal(existsSync(`${out}.partial`), false);
});

void test('export without a domain key says where it looked and exits 2; --key overrides', async (t) => {
  const { path, key } = await seeded(t);
  const moved = join(tempDir(t), 'elsewhere.pem');
  writeFileSync(moved, readFileSync(`${path}.domain-key.pem`));
  rmSync(`${path}.domain-key.pem`);
  const none = captureIo();
  assert.equal(await runLog(['export', '--db', path], none), 2);
  assert.ok(none.err.join('').includes(`${path}.domain-key.pem`));
  assert.deepEqual(none.out, []);
  const withKey = captureIo();
  assert.equal(await runLog(['export', '--db', path, '--key', moved], withKey), 0);
  const lines = withKey.out.join('').split('\n');
  assert.equal(verifyCheckpoint(lines, verifierFor(key.publicKey, key.kid)).ok, true);
  const garbage = join(tempDir(t), 'garbage.pem');
  writeFileSync(garbage, 'not a key');
  assert.equal(await runLog(['export', '--db', path, '--key', garbage], captureIo()), 2);
});

void test('exportEvidence through the API with an injected clock', async (t) => {
  const { path, key } = await seeded(t);
  const engine = openSqliteEngine(path);
  t.after(() => engine.close());
  const lines: string[] = [];
  const checkpoint = await exportEvidence(engine, (l) => lines.push(l), signerFor(key), { now: () => 42 });
  assert.equal(checkpoint.at, 42);
  assert.equal(checkpoint.events, N);
  assert.equal(lines.length, N + 1);
  assert.equal(verifyCheckpoint(lines, verifierFor(key.publicKey, key.kid)).signature, 'valid');
  // The same checkpoint under a key the verifier does not trust is refused.
  const stranger = generateEd25519KeyPair();
  const report = verifyCheckpoint(lines, verifierFor(stranger.publicKey, stranger.kid));
  assert.equal(report.ok, false);
  assert.equal(report.signature, 'invalid');
});

/** Rewrite one chain consistently (new body, every later hash recomputed, head updated), as an attacker with the file could. */
function rewriteChain(path: string, subject: string): void {
  const raw = new Database(path);
  try {
    raw.exec(DROP_EVIDENCE_GUARD.sqlite.join(';'));
    const rows = raw
      .prepare('SELECT seq, type, body, at, actor FROM evidence_events WHERE subject = ? ORDER BY seq')
      .all(subject) as { seq: number; type: string; body: string; at: number; actor: string }[];
    let prev: string | null = null;
    for (const [i, r] of rows.entries()) {
      const body = i === 0 ? { rewritten: true } : (JSON.parse(r.body) as EvidenceEvent['body']);
      const hash = evidenceHash({ subject, type: r.type, body, at: r.at, actor: r.actor, prev });
      raw
        .prepare('UPDATE evidence_events SET body = ?, prev = ?, hash = ? WHERE seq = ?')
        .run(canonicalize(body), prev, hash, r.seq);
      prev = hash;
    }
    raw.prepare('UPDATE evidence_heads SET head = ? WHERE subject = ?').run(prev, subject);
  } finally {
    raw.close();
  }
}

void test('a consistent rewrite passes verify but not an earlier checkpoint kept elsewhere', async (t) => {
  const { path, key } = await seeded(t);
  const engine = openSqliteEngine(path);
  t.after(() => engine.close());
  const verify = verifierFor(key.publicKey, key.kid);
  const first: string[] = [];
  const kept = await exportEvidence(engine, (l) => first.push(l), signerFor(key));
  await engine.transaction((tx) =>
    appendEvidence(tx, { subject: 'occurrence:9', type: 'new', body: {}, at: 9, actor: 'svc' }),
  );

  const honest: string[] = [];
  await exportEvidence(engine, (l) => honest.push(l), signerFor(key));
  assert.equal(
    verifyCheckpoint(honest, verify, { previous: kept }).ok,
    true,
    'a later export extends the earlier one',
  );

  rewriteChain(path, 'occurrence:1');
  assert.equal(
    (await verifyEvidence(engine)).ok,
    true,
    'the documented limit: a consistent rewrite verifies',
  );
  const rewritten: string[] = [];
  await exportEvidence(engine, (l) => rewritten.push(l), signerFor(key));
  assert.equal(verifyCheckpoint(rewritten, verify).ok, true, 'and even exports with a valid signature');
  const report = verifyCheckpoint(rewritten, verify, { previous: kept });
  assert.equal(report.ok, false);
  assert.match(report.firstBroken?.reason ?? '', /earlier checkpoint/);
});
