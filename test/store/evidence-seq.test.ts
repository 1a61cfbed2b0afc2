/**
 * A `seq` Baton never assigns is a problem `baton log verify` reports, never a row it skips or a
 * walk that never ends (docs/store.md, "What verify catches"; AOC-REQ-004, -012): one above 2^53
 * (JavaScript cannot page past it exactly), or one below 1 (every chain reader still sees it).
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { exportPrivatePem, generateEd25519KeyPair } from '../../src/core/ed25519.js';
import { runLog } from '../../src/cli/commands/log.js';
import { migrate } from '../../src/store/migrations.js';
import { appendEvidence } from '../../src/store/evidence-log.js';
import { verifyEvidence } from '../../src/store/evidence-verify.js';
import { exportEvidence } from '../../src/store/evidence-export.js';
import { BatonError } from '../../src/core/errors.js';
import { captureIo, tempDir } from './support.js';
import { enginesUnderTest, type EngineUnderTest, type StoreUnderTest } from './engines.js';

const engines = await enginesUnderTest();
const BIN = join(import.meta.dirname, '../../src/cli/main.js');

async function seeded(e: EngineUnderTest, t: TestContext): Promise<StoreUnderTest> {
  const store = await e.open(t);
  await migrate(store.engine);
  for (const [i, subject] of ['A', 'B', 'A'].entries()) {
    await store.engine.transaction((tx) =>
      appendEvidence(tx, { subject, type: 'step', body: { i }, at: 1_000 + i, actor: 'tester' }),
    );
  }
  return store;
}

/** `baton log verify` as a real process, bounded: a walk that never ends fails the test, not the run. */
function verifyCli(e: EngineUnderTest, store: StoreUnderTest): { code: number | null; out: string } {
  const where = e.kind === 'sqlite' ? ['--db', store.location] : ['--postgres', store.location];
  const r = spawnSync(process.execPath, [BIN, 'log', 'verify', ...where], {
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}

const forged = (seq: string): string =>
  `INSERT INTO evidence_events (seq, subject, idx, type, body, at, actor, prev, hash) VALUES (${seq}, 'Z', 1, 't', '{}', 1, 'x', NULL, 'sha-256:x')`;

const signer = () => ({ kid: 'k', sig: 'x' });

for (const e of engines) {
  test(`[${e.name}] a seq above 2^53 is reported, and verify and export end`, async (t) => {
    const store = await seeded(e, t);
    await store.tamper(forged('9007199254740993'));
    const cli = verifyCli(e, store);
    assert.equal(cli.code, 1, cli.out);
    assert.match(cli.out, /evidence log BROKEN/);
    assert.match(cli.out, /not a safe integer/);
    const report = await verifyEvidence(store.engine);
    assert.equal(report.ok, false);
    await assert.rejects(
      exportEvidence(store.engine, () => undefined, signer),
      (err) => err instanceof BatonError && err.code === 'store_corrupt',
    );
  });

  for (const seq of ['0', '-5']) {
    test(`[${e.name}] an event at seq ${seq} is walked and reported, not skipped`, async (t) => {
      const store = await seeded(e, t);
      await store.tamper(forged(seq));
      const cli = verifyCli(e, store);
      assert.equal(cli.code, 1, cli.out);
      assert.ok(cli.out.includes(`first broken link: seq ${seq}, subject Z: `), cli.out);
      assert.match(cli.out, /below 1/);
      const report = await verifyEvidence(store.engine);
      assert.equal(report.ok, false);
      assert.equal(report.events, 3, 'the three real events are still walked');
      assert.equal(report.firstBroken?.seq, Number(seq));
      await assert.rejects(
        exportEvidence(store.engine, () => undefined, signer),
        (err) => err instanceof BatonError && err.code === 'store_corrupt',
      );
    });
  }
}

for (const e of engines) {
  test(`[${e.name}] export refuses to sign a store whose rows disagree with their chains, as verify reports it`, async (t) => {
    const store = await seeded(e, t);
    await store.tamper(
      "INSERT INTO aoc_authorities (id, unit, total, reserved, consumed, created_at, updated_at, version) VALUES ('forged', 'EUR-cents', 5, 0, 0, 0, 0, 1)",
    );
    const report = await verifyEvidence(store.engine);
    assert.equal(report.ok, false);
    const lines: string[] = [];
    await assert.rejects(
      exportEvidence(store.engine, (l) => lines.push(l), signer),
      (err) =>
        err instanceof BatonError &&
        err.code === 'store_corrupt' &&
        err.message.includes('authority:forged') &&
        err.message.includes('no checkpoint was signed'),
    );
    assert.ok(!lines.some((l) => l.includes('"checkpoint"')), 'no checkpoint line');
  });
}

test('[sqlite] log export to stdout waits for a slow reader after each page (backpressure)', async (t) => {
  const store = await engines[0]!.open(t);
  await migrate(store.engine);
  const N = 2_500;
  await store.engine.transaction(async (tx) => {
    for (let i = 0; i < N; i++)
      await appendEvidence(tx, { subject: `s${i % 7}`, type: 'step', body: { i }, at: 1, actor: 'x' });
  });
  const key = generateEd25519KeyPair();
  writeFileSync(`${store.location}.domain-key.pem`, exportPrivatePem(key.privateKey), { mode: 0o600 });
  let pending = 0; // lines written since the reader last caught up
  let most = 0;
  let waits = 0;
  const io = {
    ...captureIo(),
    stdout: () => {
      pending++;
      most = Math.max(most, pending);
    },
    // A reader that catches up only on a later turn of the event loop.
    drained: () =>
      new Promise<void>((resolve) =>
        setImmediate(() => {
          waits++;
          pending = 0;
          resolve();
        }),
      ),
  };
  assert.equal(await runLog(['export', '--db', store.location], io), 0);
  assert.ok(waits >= 2, `waited ${waits} times`);
  assert.ok(most <= 1_000 + 1, `${most} lines written without waiting for the reader`);
});

test('[sqlite] a SIGINT during log export --out FILE leaves neither FILE nor FILE.partial', async (t) => {
  const store = await engines[0]!.open(t);
  await migrate(store.engine);
  await store.engine.transaction(async (tx) => {
    for (let i = 0; i < 40_000; i++)
      await appendEvidence(tx, { subject: `s${i % 7}`, type: 'step', body: { i }, at: 1, actor: 'x' });
  });
  const key = generateEd25519KeyPair();
  writeFileSync(`${store.location}.domain-key.pem`, exportPrivatePem(key.privateKey), { mode: 0o600 });
  const dir = tempDir(t);
  const out = join(dir, 'log.jsonl');
  const child = spawn(process.execPath, [BIN, 'log', 'export', '--db', store.location, '--out', out]);
  let err = '';
  let sent = false;
  child.stderr.on('data', (d: Buffer) => {
    err += d.toString();
    // Once the walk is under way (its first progress line), as one Ctrl-C would stop it.
    if (!sent && err.includes('exported 10000 events')) sent = child.kill('SIGINT');
  });
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  assert.equal(code, 130, err);
  assert.match(err, /stopped by SIGINT/);
  assert.deepEqual(readdirSync(dir), [], 'nothing left behind');
});
