/**
 * Verify compares the occurrence and authority rows with what their own evidence chains record
 * (AOC-REQ-004, -012; docs/store.md "What verify catches"): a row edited behind Baton's back — an
 * unknown occurrence turned into a success, a consumed budget handed back — is a problem for
 * `baton log verify`, `GET /v1/evidence/verify` (both `verifyEvidence`) and the occurrence
 * detail's chain mark (`verifySubject`), on both engines, with every event still intact.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/core/clock.js';
import { generateEd25519KeyPair, publicKeyRaw } from '../../src/core/ed25519.js';
import { OccurrencesService } from '../../src/occurrences/index.js';
import { runLog } from '../../src/cli/commands/log.js';
import { migrate, occurrencesUnitOfWork, verifyEvidence } from '../../src/store/index.js';
import { verifySubject } from '../../src/store/evidence-verify.js';
import type { SqlValue } from '../../src/store/engine.js';
import { createInput, domainConfig, observation, paymentsProfile, T0 } from '../occurrences/helpers.js';
import { enginesUnderTest, type StoreUnderTest } from './engines.js';
import { captureIo } from './support.js';

const engines = await enginesUnderTest();
const pair = generateEd25519KeyPair();
const domainKey = { kid: pair.kid, publicKey: publicKeyRaw(pair.publicKey).toString('base64url') };

/** Four occurrences, one per phase, on one budget: reserved 1000, consumed 3000 (entered + resolved 2000). */
async function seeded(store: StoreUnderTest) {
  await migrate(store.engine);
  const a = new OccurrencesService({
    uow: occurrencesUnitOfWork(store.engine),
    domainKey,
    clock: new ManualClock(T0),
  });
  await a.configureDomain(domainConfig() as never);
  await a.registerProfile(paymentsProfile());
  await a.createAuthority({ id: 'payouts', unit: 'EUR-cents', total: 100_000 });
  const g = await a.takeover({ lineage: 'invoice-agent' });
  const released = await a.create(createInput(g.credential, 'r'));
  await a.release({
    credential: g.credential,
    occurrenceId: released.occurrence.id,
    requestDigest: released.occurrence.provider.requestDigest,
  });
  const reserved = await a.create(createInput(g.credential, 'p'));
  const unknown = await a.create(createInput(g.credential, 'u'));
  await a.enter({ credential: g.credential, occurrenceId: unknown.occurrence.id });
  const done = await a.create(createInput(g.credential, 'd', 2_000));
  const ticket = await a.enter({ credential: g.credential, occurrenceId: done.occurrence.id });
  await a.observe(
    observation(ticket, 'succeeded', T0, { response: { id: 'pay_state0001', status: 'succeeded' } }),
  );
  assert.deepEqual(await a.getAuthority('payouts').then((x) => [x.reserved, x.consumed]), [1_000, 3_000]);
  return { unknown: unknown.occurrence.id, reserved: reserved.occurrence.id, done: done.occurrence.id };
}

interface Case {
  readonly name: string;
  readonly subject: (ids: Awaited<ReturnType<typeof seeded>>) => string;
  readonly tamper: string;
  readonly undo: string;
  readonly reason: RegExp;
}

const CASES: readonly Case[] = [
  {
    name: 'an entered, unknown occurrence edited to resolved/success',
    subject: (x) => x.unknown,
    tamper:
      "UPDATE aoc_occurrences SET phase = 'resolved', outcome = 'success', effect = 'occurred' WHERE id = ?",
    undo: "UPDATE aoc_occurrences SET phase = 'entered', outcome = 'unknown', effect = 'unresolved' WHERE id = ?",
    reason: /row's phase, outcome, effect differ from what its evidence chain records/,
  },
  {
    name: 'a resolved occurrence edited back to unknown',
    subject: (x) => x.done,
    tamper: "UPDATE aoc_occurrences SET outcome = 'unknown' WHERE id = ?",
    undo: "UPDATE aoc_occurrences SET outcome = 'success' WHERE id = ?",
    reason: /row's outcome differs/,
  },
  {
    name: 'a conflict flag set',
    subject: (x) => x.unknown,
    tamper: 'UPDATE aoc_occurrences SET conflict = 1 WHERE id = ?',
    undo: 'UPDATE aoc_occurrences SET conflict = 0 WHERE id = ?',
    reason: /row's conflict differs/,
  },
  {
    name: 'a reserved occurrence marked entered (as if entry had been recorded)',
    subject: (x) => x.reserved,
    tamper:
      "UPDATE aoc_occurrences SET phase = 'entered', entered_at = created_at, entered_generation = 1 WHERE id = ?",
    undo: "UPDATE aoc_occurrences SET phase = 'reserved', entered_at = NULL, entered_generation = NULL WHERE id = ?",
    reason: /row's phase, entered_at, entered_generation differ/,
  },
  {
    name: 'the amount an occurrence reserved (a creation fact)',
    subject: (x) => x.reserved,
    tamper: 'UPDATE aoc_occurrences SET authority_amount = 1 WHERE id = ?',
    undo: 'UPDATE aoc_occurrences SET authority_amount = 1000 WHERE id = ?',
    reason: /row's authority_amount differs/,
  },
  {
    name: 'a provider reference bound behind Baton',
    subject: (x) => x.unknown,
    tamper: "UPDATE aoc_occurrences SET provider_reference = 'pay_forged' WHERE id = ?",
    undo: 'UPDATE aoc_occurrences SET provider_reference = NULL WHERE id = ?',
    reason: /row's provider_reference differs/,
  },
];

async function expectProblem(store: StoreUnderTest, subject: string, reason: RegExp): Promise<void> {
  const r = await verifyEvidence(store.engine);
  assert.equal(r.ok, false);
  assert.equal(r.problems, 1);
  assert.equal(r.firstBroken?.subject, subject);
  assert.match(r.firstBroken?.reason ?? '', reason);
}

async function expectOk(store: StoreUnderTest): Promise<void> {
  assert.deepEqual(await verifyEvidence(store.engine).then((r) => [r.ok, r.problems]), [true, 0]);
}

async function tampered(store: StoreUnderTest, sql: string, params: SqlValue[] = []): Promise<void> {
  assert.equal(await store.tamper(sql, params), 1);
}

for (const e of engines) {
  test(`[${e.name}] verify compares every occurrence row with what its chain records`, async (t: TestContext) => {
    const store = await e.open(t);
    const ids = await seeded(store);
    await expectOk(store);
    for (const c of CASES) {
      const id = c.subject(ids);
      await tampered(store, c.tamper, [id]);
      await expectProblem(store, `occurrence:${id}`, c.reason);
      // The detail's mark: not ok, though every event of the chain still verifies.
      const own = await store.engine.read((ex) => verifySubject(ex, `occurrence:${id}`));
      assert.equal(own.ok, false, c.name);
      assert.match(own.firstBroken?.reason ?? '', c.reason);
      assert.equal(own.verified.size, own.events, c.name);
      const other = id === ids.done ? ids.unknown : ids.done;
      assert.equal((await store.engine.read((ex) => verifySubject(ex, `occurrence:${other}`))).ok, true);
      await tampered(store, c.undo, [id]);
      await expectOk(store);
      t.diagnostic(`caught: ${c.name}`);
    }
  });

  test(`[${e.name}] verify compares every authority budget with what the chains of its occurrences record`, async (t) => {
    const store = await e.open(t);
    await seeded(store);
    await tampered(store, "UPDATE aoc_authorities SET consumed = 0, reserved = 0 WHERE id = 'payouts'");
    await expectProblem(store, 'authority:payouts', /row's reserved, consumed differ/);
    await tampered(
      store,
      "UPDATE aoc_authorities SET consumed = 3000, reserved = 1000, total = 1000000 WHERE id = 'payouts'",
    );
    await expectProblem(store, 'authority:payouts', /row's total differs/);
    await tampered(store, "UPDATE aoc_authorities SET total = 100000 WHERE id = 'payouts'");
    await expectOk(store);
    await tampered(
      store,
      "INSERT INTO aoc_authorities (id, unit, total, reserved, consumed, created_at, updated_at, version) VALUES ('forged', 'EUR-cents', 5, 0, 0, 0, 0, 1)",
    );
    await expectProblem(store, 'authority:forged', /no authority_created event/);
  });

  test(`[${e.name}] verify reports its second pass's progress: the occurrence rows compared`, async (t) => {
    const store = await e.open(t);
    await seeded(store);
    const events: number[] = [];
    const rows: number[] = [];
    const r = await verifyEvidence(
      store.engine,
      (p) => events.push(p.events),
      (p) => rows.push(p.occurrences),
    );
    assert.equal(r.ok, true);
    assert.equal(events.at(-1), r.events, 'the walk reports every event');
    assert.deepEqual(rows, [4], 'one page of the four occurrence rows, after the walk');
  });

  test(`[${e.name}] baton log verify exits 1 on a state row its chain does not record`, async (t) => {
    const store = await e.open(t);
    const ids = await seeded(store);
    const where = e.kind === 'sqlite' ? ['--db', store.location] : ['--postgres', store.location];
    assert.equal(await runLog(['verify', ...where], captureIo()), 0);
    await tampered(
      store,
      "UPDATE aoc_occurrences SET phase = 'resolved', outcome = 'success', effect = 'occurred' WHERE id = ?",
      [ids.unknown],
    );
    const io = captureIo();
    assert.equal(await runLog(['verify', ...where], io), 1);
    const out = io.out.join('');
    assert.match(out, /evidence log BROKEN/);
    assert.match(
      out,
      new RegExp(`subject occurrence:${ids.unknown}: the occurrence row's phase, outcome, effect`),
    );
  });
}
