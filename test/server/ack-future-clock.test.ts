/**
 * A worker whose clock runs fast: its acknowledgement is dated beyond the 60 s skew Baton allows.
 * The executor's time is an unauthenticated claim (AOC-REQ-009), so it must not stop the
 * acknowledgement's recording, nor the status pass of the same acknowledge-and-settle: the
 * acknowledgement is recorded at the server's time with the claimed time kept in its evidence
 * body (`claimedObservedAt`), and Baton's own status source still settles the payment. On SQLite
 * and PostgreSQL alike (the PostgreSQL acknowledge-and-settle path is its own).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import {
  HttpBatonClient,
  type ExecutorAcknowledgement,
  type ProviderAdapter,
} from '../../src/client/index.js';
import type { JsonObject } from '../../src/core/json.js';
import type { StoreEngine } from '../../src/store/engine.js';
import { openPostgresEngine } from '../../src/store/postgres.js';
import { openSqliteEngine } from '../../src/store/sqlite.js';
import { CountingAdapter, payments } from '../client/support.js';
import { postgresForTests } from '../support/postgres.js';
import { servePayments } from './served-payments.js';

const db = await postgresForTests();
const HOUR = 3_600_000;

async function fastClockLifecycle(t: TestContext, engine: StoreEngine, dir: string): Promise<void> {
  const { opened, p, url, admin } = await servePayments(t, engine, dir);
  const executor = await new HttpBatonClient({ baseUrl: url, token: admin }).takeover('fast-clock');
  const real = new CountingAdapter(p);
  let claimed = 0;
  let sent: ExecutorAcknowledgement | undefined;
  // The worker's clock is an hour fast: every acknowledgement it reports is dated an hour ahead.
  const fast: ProviderAdapter = {
    async send(ticket) {
      const { acknowledgement } = await real.send(ticket);
      claimed = Date.now() + HOUR;
      sent = { ...acknowledgement, observedAt: claimed };
      return { acknowledgement: sent };
    },
  };
  const before = Date.now();
  const r = await executor.perform(payments(p)('fast-1'), fast);
  assert.deepEqual(
    [r.status, r.reason, r.adapterCalls, real.calls],
    ['succeeded', undefined, 1, 1],
    JSON.stringify(r),
  );
  const { evidence } = await opened.service.getOccurrence(r.occurrenceId!);
  const acks = evidence
    .map((e) => (e.body as JsonObject)['observation'] as JsonObject | undefined)
    .filter((o) => o?.['source'] === 'acknowledgement');
  assert.equal(acks.length, 1, 'the acknowledgement is recorded');
  const body = acks[0]!;
  assert.equal(body['claimedObservedAt'], claimed, "the executor's claimed time is kept as a claim");
  const at = body['observedAt'] as number;
  assert.ok(at >= before && at <= Date.now(), `recorded at the server's time, not the claim (${at})`);
  // The same report again, claimed at another future time: a repeat, not appended (ack-bound.ts).
  assert.ok(sent !== undefined);
  const repeat = await executor.acknowledge({ ...sent, observedAt: claimed + 1_000 });
  assert.equal(repeat.notRecorded, 'repeat', 'only the claimed time differed');
}

test('[sqlite] an acknowledgement dated past the skew is recorded at server time; the status pass settles', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'baton-fast-clock-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  await fastClockLifecycle(t, openSqliteEngine(join(dir, 'baton.db')), dir);
});

if (db !== undefined) {
  test('[postgres] an acknowledgement dated past the skew is recorded at server time; the status pass settles', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'baton-fast-clock-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    await fastClockLifecycle(t, openPostgresEngine(await db.schema()), dir);
  });
}
