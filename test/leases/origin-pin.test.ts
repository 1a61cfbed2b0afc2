/**
 * The reference system of record pins the origin its target URIs were minted under (docs/leases.md,
 * "Origin pin"): a restart over the same database on another origin is refused, typed, instead of
 * seeding every allocation afresh under the new origin (its epoch moving backwards, draft §4 rule 2;
 * consumed lease_ids and receipts no longer applying, draft §5).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { createPublicKey } from 'node:crypto';
import Database from 'better-sqlite3';
import { isBatonError } from '../../src/core/errors.js';
import { SqliteLeaseLedger } from '../../src/sor/sqlite-ledger.js';
import { startSor, type SorOptions } from '../../src/sor/server.js';
import {
  OPERATOR,
  assertAccepted,
  draftLease,
  harness,
  mutate,
  readResource,
  sign,
  type Harness,
} from './helpers.js';

const ID = '99281';
const PATH = '/api/v2/inventory/allocations/';

function restartOptions(h: Harness, publicOrigin?: string): SorOptions {
  return {
    dbPath: h.dbPath,
    signer: h.sorKey,
    trusted: h.gateways.map((g) => createPublicKey(g.privateKey)),
    operatorToken: OPERATOR,
    clock: h.clock,
    sweepIntervalMs: 0,
    ...(publicOrigin !== undefined ? { publicOrigin } : {}),
  };
}

/** startSor must refuse; one that starts anyway is closed (so the failing test ends) and fails. */
async function refusedStart(o: SorOptions, check: (error: unknown) => boolean): Promise<void> {
  let sor: Awaited<ReturnType<typeof startSor>> | undefined;
  await assert.rejects(async () => {
    sor = await startSor(o);
  }, check);
  await sor?.close();
}

function conflictWith(details: Record<string, unknown>): (error: unknown) => boolean {
  return (error) => {
    assert.ok(isBatonError(error, 'conflict'), `expected conflict, got ${String(error)}`);
    for (const [k, v] of Object.entries(details)) assert.deepEqual(error.details[k], v, k);
    return true;
  };
}

test('a restart on another origin is refused; on the pinned origin the committed epoch survives', async (t) => {
  const h = await harness();
  t.after(() => rmSync(dirname(h.dbPath), { recursive: true, force: true }));
  const lease = sign(h, await draftLease(h, ID, 'SNAPSHOT_RESTORE'));
  await assertAccepted(h, await mutate(h, ID, lease));
  const committed = await readResource(h, ID);
  const pinned = h.sor.origin;
  await h.sor.close();

  const elsewhere = 'http://sor.example:9';
  await refusedStart(
    restartOptions(h, elsewhere),
    conflictWith({ member: 'publicOrigin', pinned, origin: elsewhere }),
  );
  // The refusal wrote nothing: no resources row under the other origin.
  const db = new Database(h.dbPath, { readonly: true });
  const targets = (db.prepare('SELECT target FROM resources').all() as Array<{ target: string }>).map(
    (r) => r.target,
  );
  db.close();
  assert.ok(
    targets.every((target) => target.startsWith(`${pinned}/`)),
    `rows only under ${pinned}: ${targets.join(', ')}`,
  );

  const again = await startSor(restartOptions(h, pinned));
  t.after(() => again.close());
  const now: Harness = { ...h, sor: again };
  assert.deepEqual(await readResource(now, ID), committed, 'same epoch and state, not the seed');
});

test('a database from before the pin is pinned to the one origin its rows name, or refused when they name several', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'baton-sor-pin-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const h = await harness();
  await h.close();
  const seed = (file: string, origins: string[]): string => {
    const path = join(dir, file);
    const ledger = new SqliteLeaseLedger(path);
    for (const o of origins) ledger.seed(`${o}${PATH}${ID}`, { allocated: 1 }, 5_000_000, 0);
    ledger.close();
    return path;
  };
  const one = seed('one.db', ['http://old.example:1']);
  await refusedStart(
    { ...restartOptions(h, 'http://new.example:2'), dbPath: one },
    conflictWith({ pinned: 'http://old.example:1', origin: 'http://new.example:2' }),
  );
  const sor = await startSor({ ...restartOptions(h, 'http://old.example:1'), dbPath: one });
  t.after(() => sor.close());
  assert.equal(sor.ledger.transact((tx) => tx.resource(sor.targetUri(ID)))?.epoch, 5_000_000);

  const split = seed('split.db', ['http://a.example:1', 'http://b.example:2']);
  await refusedStart(
    { ...restartOptions(h, 'http://a.example:1'), dbPath: split },
    conflictWith({ origins: ['http://a.example:1', 'http://b.example:2'] }),
  );
});
