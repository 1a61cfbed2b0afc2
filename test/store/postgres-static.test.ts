/**
 * Migration 022 (docs/store.md "Static writes in the one call"): the hot deferred statements go to
 * `baton_batch` by the key of their static SQL, every other one as 016's text; a static branch
 * changes the same rows and answers the same row count as the text it stands for, and a failed
 * guard in one still raises BTN10 (the transaction runs again statement by statement). The
 * lifecycle's deferred statements are all static: a repository text that drifts from the
 * registry fails here instead of silently going the slow way.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/core/clock.js';
import { generateEd25519KeyPair, publicKeyRaw } from '../../src/core/ed25519.js';
import { OccurrencesService } from '../../src/occurrences/index.js';
import type { DeferOptions, SqlValue, StoreEngine, Transaction } from '../../src/store/engine.js';
import { migrate, occurrencesUnitOfWork, verifyEvidence } from '../../src/store/index.js';
import { STATIC_STATEMENTS } from '../../src/store/migrations/022_static_transition_writes.js';
import {
  CLAIM_PENDING_TO_IN_FLIGHT,
  STATIC_STATEMENTS_024,
} from '../../src/store/migrations/024_one_stripe_write.js';
import { OccurrencesRepositorySql } from '../../src/store/occurrences-repository.js';
import { encodeBatch } from '../../src/store/postgres-batch.js';
import { createInput, domainConfig, observation, paymentsProfile, T0 } from '../occurrences/helpers.js';
import { postgresForTests } from '../support/postgres.js';
import { postgresUnderTest } from './engines.js';

const CLAIM = 'UPDATE aoc_open_stripes SET pending = pending + 1 WHERE stripe = ? AND pending < ?';
const APPEND = 'SELECT out_seq, out_idx, out_prev, out_hash FROM baton_append_evidence(?, ?)';
/** The `code` of an error and of each of its causes. */
function codes(error: unknown): string[] {
  const out: string[] = [];
  for (let e = error as { code?: unknown; cause?: unknown } | undefined; e !== undefined;) {
    if (typeof e.code === 'string') out.push(e.code);
    e = e.cause as typeof e;
  }
  return out;
}
const items = (text: string): Record<string, unknown>[] => JSON.parse(text) as Record<string, unknown>[];

test('a registered statement goes by its key only where the schema has 022 and it answers what is asked', () => {
  const check = (): void => undefined;
  const deferred = [
    { sql: CLAIM, params: [3, 10], options: { expect: 1 } },
    { sql: APPEND, params: ['s', '[]'], options: { rows: check } },
    { sql: APPEND, params: ['s', '[]'], options: {} }, // a row count asked of a rows branch: text
    { sql: 'UPDATE t SET n = 1 WHERE id = ?', params: [1], options: {} },
  ];
  assert.deepEqual(
    items(encodeBatch(deferred, { sql: CLAIM, params: [1, 2], rows: true }, STATIC_STATEMENTS)),
    [
      { k: 'claim_pending', p: ['3', '10'], e: 1 },
      { k: 'append_evidence', p: ['s', '[]'], q: 1 },
      { s: 'SELECT out_seq, out_idx, out_prev, out_hash FROM baton_append_evidence(%L, %L)', p: ['s', '[]'] },
      { s: 'UPDATE t SET n = 1 WHERE id = %L', p: ['1'] },
      {
        s: 'UPDATE aoc_open_stripes SET pending = pending + 1 WHERE stripe = %L AND pending < %L',
        p: ['1', '2'],
        q: 1,
      },
    ],
  );
  assert.ok(items(encodeBatch(deferred, undefined, undefined)).every((i) => typeof i['s'] === 'string'));
  assert.throws(
    () => encodeBatch([{ sql: CLAIM, params: [3], options: {} }], undefined, STATIC_STATEMENTS),
    /2 placeholder\(s\) but 1 parameter/,
  );
});

/** An evidence run as deferKnown serializes it: bodies are JCS texts, so the run escapes them once. */
const RUN = JSON.stringify([
  [
    'provider_entered',
    '{"note":"a \\"quoted\\" é \u2028 line","n":1}',
    1767225600000,
    'executor:x',
    null,
    'sha-256:h',
  ],
]);

test('a JSON parameter travels as its JSON value, not escaped again inside a string', () => {
  const check = (): void => undefined;
  const arg = encodeBatch(
    [
      { sql: APPEND, params: ['s', RUN], options: { rows: check, jsonParams: [1] } },
      { sql: CLAIM, params: [3, 10], options: { expect: 1, jsonParams: [0] } }, // a number stays a string
    ],
    undefined,
    STATIC_STATEMENTS,
  );
  assert.ok(arg.includes(RUN), 'the run text is in the argument as is');
  assert.deepEqual(items(arg), [
    { k: 'append_evidence', p: ['s', JSON.parse(RUN) as unknown], q: 1 },
    { k: 'claim_pending', p: ['3', '10'], e: 1 },
  ]);
  // Without the option the same item is the string form it always was.
  assert.deepEqual(
    items(
      encodeBatch(
        [{ sql: APPEND, params: ['s', RUN], options: { rows: check } }],
        undefined,
        STATIC_STATEMENTS,
      ),
    ),
    [{ k: 'append_evidence', p: ['s', RUN], q: 1 }],
  );
});

const db = await postgresForTests();

if (db !== undefined) {
  const e = postgresUnderTest(db, 'postgres');

  /** `engine`, recording the text of every statement its write transactions defer. */
  function recording(engine: StoreEngine, texts: Set<string>, sent?: string[]): StoreEngine {
    const wrap = (tx: Transaction): Transaction => {
      const defer = tx.defer?.bind(tx);
      return Object.assign(Object.create(tx) as Transaction, {
        all: tx.all.bind(tx),
        get: tx.get.bind(tx),
        run: tx.run.bind(tx),
        ...(tx.sendsStatic !== undefined && { sendsStatic: tx.sendsStatic.bind(tx) }),
        ...(defer !== undefined && {
          defer: (sql: string, params: readonly SqlValue[], options: DeferOptions) => {
            texts.add(sql);
            sent?.push(sql);
            const write = defer(sql, params, options);
            // An amended text is what leaves: recorded in place of the one it replaces.
            return {
              amend: (next: readonly SqlValue[], text?: string) => {
                const done = write.amend(next, text);
                if (done && text !== undefined) {
                  texts.add(text);
                  const at = sent?.lastIndexOf(sql) ?? -1;
                  if (sent !== undefined && at >= 0) sent[at] = text;
                }
                return done;
              },
            };
          },
        }),
      });
    };
    return Object.assign(Object.create(engine) as StoreEngine, {
      transaction: <T>(fn: (tx: Transaction) => Promise<T>) => engine.transaction((tx) => fn(wrap(tx))),
      read: engine.read.bind(engine),
      close: engine.close.bind(engine),
    });
  }

  async function service(
    t: TestContext,
    texts: Set<string>,
    sent?: string[],
    opened?: (engine: StoreEngine) => void,
  ): Promise<OccurrencesService> {
    const store = await e.open(t);
    await migrate(store.engine);
    opened?.(store.engine);
    const pair = generateEd25519KeyPair();
    const domainKey = { kid: pair.kid, publicKey: publicKeyRaw(pair.publicKey).toString('base64url') };
    const uow = occurrencesUnitOfWork(recording(store.engine, texts, sent));
    const svc = new OccurrencesService({ uow, domainKey, clock: new ManualClock(T0) });
    await svc.configureDomain(domainConfig() as never);
    await svc.registerProfile(paymentsProfile());
    await svc.createAuthority({ id: 'payouts', unit: 'EUR-cents', total: 100_000 });
    return svc;
  }

  test('[postgres] every statement a lifecycle defers is one of the static ones (migrations 022, 024)', async (t) => {
    const texts = new Set<string>();
    const svc = await service(t, texts);
    // Create + reserve (+ linked id), release, create + enter, takeover, observe-and-settle.
    const { credential } = await svc.takeover({ lineage: 'invoice-agent' });
    const linked = { linkedIds: [{ type: 'bcr_operation_id' as const, value: 'op-1' }] };
    const [first, second] = [
      await svc.create({ ...createInput(credential, 'released'), ...linked }),
      await svc.create(createInput(credential, 'entered')),
    ];
    const { requestDigest } = first.occurrence.provider;
    await svc.release({ credential, occurrenceId: first.occurrence.id, requestDigest });
    const ticket = await svc.enter({ credential, occurrenceId: second.occurrence.id });
    await svc.takeover({ lineage: 'invoice-agent' });
    const answer = { response: { id: 'pay_static01', status: 'succeeded' } };
    const settled = await svc.observe(observation(ticket, 'succeeded', T0, answer));
    assert.equal(settled.occurrence.outcome, 'success');
    assert.ok(texts.size >= 8, `only ${texts.size} deferred statement texts seen`);
    const dynamic = [...texts].filter((sql) => !STATIC_STATEMENTS_024.has(sql));
    assert.deepEqual(dynamic, [], 'deferred statements without a static branch (migrations 022, 024)');
  });

  test('[postgres] a lifecycle writes each transition once: an entry joins the waiting INSERT and UPDATE, a run the waiting append', async (t) => {
    const texts = new Set<string>();
    const sent: string[] = [];
    let engine: StoreEngine | undefined;
    const svc = await service(t, texts, sent, (e) => (engine = e));
    const { credential } = await svc.takeover({ lineage: 'invoice-agent' });
    const deferredNow = (): string[] => sent.splice(0).map((sql) => sql.slice(0, 40));
    deferredNow();
    const created = await svc.createAndEnter(createInput(credential, 'k-fold'));
    assert.equal(created.occurrence.phase, 'entered');
    assert.ok(created.ticket !== null);
    const first = deferredNow();
    // One INSERT of the occurrence (no UPDATE of it) and one append to its chain (two runs).
    assert.equal(first.filter((sql) => sql.startsWith('UPDATE aoc_occurrences')).length, 0, first.join('\n'));
    assert.equal(first.filter((sql) => sql.startsWith('INSERT INTO aoc_occurrences')).length, 1);
    assert.equal(
      first.filter((sql) => sql.startsWith('SELECT baton_append_known')).length,
      1,
      first.join('\n'),
    );
    // One UPDATE of the authority: the entry's consumption written into the reservation's.
    assert.equal(first.filter((sql) => sql.startsWith('UPDATE aoc_authorities')).length, 1, first.join('\n'));
    const budget = await svc.getAuthority('payouts');
    assert.deepEqual([budget.reserved, budget.consumed, budget.version], [0, 1_000, 3]);
    // One UPDATE of the domain stripe: the pending claim and the move to in flight as one (024).
    const stripes = first.filter((sql) => sql.startsWith('UPDATE aoc_open_stripes'));
    assert.deepEqual(stripes, [CLAIM_PENDING_TO_IN_FLIGHT.slice(0, 40)], first.join('\n'));
    assert.ok(engine !== undefined);
    const counts = await engine.read((r) =>
      r.get<{ p: string; f: string }>('SELECT SUM(pending) AS p, SUM(in_flight) AS f FROM aoc_open_stripes'),
    );
    assert.deepEqual([Number(counts?.p), Number(counts?.f)], [0, 1]);
    // What was stored is the entered occurrence, as the service answered it.
    const stored = await svc.getOccurrence(created.occurrence.id);
    assert.deepEqual(stored.occurrence, created.occurrence);
    // Both runs (the creation's, the entry's) as one chain: each event links to the one before.
    assert.ok(stored.evidence.length >= 2);
    assert.deepEqual(
      stored.evidence.map((ev) => ev.prev),
      [null, ...stored.evidence.slice(0, -1).map((ev) => ev.hash)],
    );
    const answer = { response: { id: 'pay_fold01', status: 'succeeded' } };
    const settled = await svc.observe(observation(created.ticket, 'succeeded', T0, answer));
    assert.equal(settled.occurrence.outcome, 'success');
    const second = deferredNow();
    // One append to the occurrence's chain (known head or not), one occurrence UPDATE.
    const appends = second.filter((sql) => /^SELECT (baton_append_known|out_seq)/.test(sql));
    assert.equal(appends.length, 1, second.join('\n'));
    assert.equal(second.filter((sql) => sql.startsWith('UPDATE aoc_occurrences')).length, 1);
    assert.ok(engine !== undefined);
    const report = await verifyEvidence(engine);
    assert.equal(report.ok, true, JSON.stringify(report));
  });

  test('[postgres] a JSON parameter reaches the batch functions as the same JSON value as its string form', async (t) => {
    const store = await e.open(t);
    const options = (json: boolean) => ({ rows: () => undefined, ...(json && { jsonParams: [1] }) });
    const [asValue, asString] = [true, false].map((json) =>
      encodeBatch(
        [{ sql: APPEND, params: ['s', RUN], options: options(json) }],
        undefined,
        STATIC_STATEMENTS,
      ),
    );
    // What 016's baton_batch reads (json: the element's own text) and 022's (jsonb: parsed once).
    const read = (text: string) =>
      store.engine.read((r) =>
        r.get<{ t: string; u: string; b: string }>(
          "SELECT (?::json)->0->'p'->>1 AS t, (SELECT x FROM json_array_elements_text((?::json)->0->'p') WITH ORDINALITY AS e(x, n) WHERE n = 2) AS u, (?::jsonb)->0->'p'->>1 AS b",
          [text, text, text],
        ),
      );
    const value = await read(asValue as string);
    const string = await read(asString as string);
    assert.deepEqual([value?.t, value?.u, string?.t, string?.u, string?.b], [RUN, RUN, RUN, RUN, RUN]);
    // jsonb writes the value in its own layout; baton_append_known parses it, so the value is what counts.
    assert.deepEqual(JSON.parse(value?.b ?? 'null'), JSON.parse(RUN));
  });

  /** The stripe claim as 016's text and as 022's key, each call in a transaction of its own. */
  test('[postgres] a static branch changes the same rows as its text and fails its guard the same way', async (t) => {
    const store = await e.open(t);
    await migrate(store.engine);
    const engine = store.engine;
    await engine.transaction((tx) =>
      tx.run(
        'INSERT INTO aoc_open_stripes (stripe, pending, in_flight) VALUES (?, 0, 0) ON CONFLICT DO NOTHING',
        [7],
      ),
    );
    const batch = async (statics: boolean, params: readonly SqlValue[], expect?: number) =>
      engine.transaction(async (tx) => {
        const arg = encodeBatch(
          [{ sql: CLAIM, params, options: expect === undefined ? {} : { expect } }],
          undefined,
          statics ? STATIC_STATEMENTS : undefined,
        );
        assert.equal(items(arg)[0]?.['k'] !== undefined, statics);
        const out = await tx.get<{ out: string }>('SELECT baton_batch_static(?) AS out', [arg]);
        const row = await tx.get<{ pending: number }>(
          'SELECT pending FROM aoc_open_stripes WHERE stripe = ?',
          [7],
        );
        return { out: out?.out, pending: row?.pending };
      });
    for (const statics of [false, true]) {
      // Room below the cap: one row; at the cap: none, and with `e` the guard raises BTN10.
      const before =
        (
          await engine.read((r) =>
            r.get<{ pending: number }>('SELECT pending FROM aoc_open_stripes WHERE stripe = 7'),
          )
        )?.pending ?? 0;
      assert.deepEqual(await batch(statics, [7, before + 1]), { out: '[1]', pending: before + 1 });
      assert.deepEqual(await batch(statics, [7, before + 1]), { out: '[0]', pending: before + 1 });
      await assert.rejects(batch(statics, [7, before + 1], 1), (error: unknown) => {
        assert.ok(codes(error).includes('BTN10'), codes(error).join(' '));
        return true;
      });
    }
  });

  test('[postgres] the pending claim and the move to in flight as one statement: both guards, by key as by text', async (t) => {
    const store = await e.open(t);
    await migrate(store.engine);
    const engine = store.engine;
    const set = (pending: number, inFlight: number) =>
      engine.transaction((tx) =>
        tx.run('UPDATE aoc_open_stripes SET pending = ?, in_flight = ? WHERE stripe = 5', [
          pending,
          inFlight,
        ]),
      );
    const once = (statics: boolean, caps: [number, number], expect?: number) =>
      engine.transaction(async (tx) => {
        const arg = encodeBatch(
          [
            {
              sql: CLAIM_PENDING_TO_IN_FLIGHT,
              params: [5, ...caps],
              options: expect === undefined ? {} : { expect },
            },
          ],
          undefined,
          statics ? STATIC_STATEMENTS_024 : undefined,
        );
        assert.equal(items(arg)[0]?.['k'] === 'claim_pending_to_in_flight', statics);
        const out = await tx.get<{ out: string }>('SELECT baton_batch_static(?) AS out', [arg]);
        const row = await tx.get<{ pending: string; in_flight: string }>(
          'SELECT pending, in_flight FROM aoc_open_stripes WHERE stripe = 5',
        );
        return [out?.out, Number(row?.pending), Number(row?.in_flight)];
      });
    for (const statics of [false, true]) {
      await set(2, 3);
      // Both below their shares: in flight + 1, pending unchanged (the claim and the move cancel).
      assert.deepEqual(await once(statics, [3, 4]), ['[1]', 2, 4]);
      // Pending at its share (the claim's guard), or in flight at its own (the move's): no row.
      assert.deepEqual(await once(statics, [2, 9]), ['[0]', 2, 4]);
      assert.deepEqual(await once(statics, [9, 4]), ['[0]', 2, 4]);
      await assert.rejects(once(statics, [2, 9], 1), (error: unknown) => codes(error).includes('BTN10'));
    }
  });

  /** Authority `id` as stored: reserved, consumed, version. */
  const budgetOf = async (engine: StoreEngine, id: string) => {
    const r = await engine.read((q) =>
      q.get<{ reserved: string; consumed: string; version: string }>(
        'SELECT reserved, consumed, version FROM aoc_authorities WHERE id = ?',
        [id],
      ),
    );
    return [Number(r?.reserved), Number(r?.consumed), Number(r?.version)];
  };

  test('[postgres] a second authority UPDATE joins the waiting one only where its guard and the CHECKs would hold', async (t) => {
    const store = await e.open(t);
    await migrate(store.engine);
    const engine = store.engine;
    const row = {
      id: 'budget',
      unit: 'EUR-cents',
      total: 100,
      reserved: 0,
      consumed: 0,
      createdAt: T0,
      updatedAt: T0,
      version: 1,
    };
    await engine.transaction((tx) => new OccurrencesRepositorySql(tx).insertAuthority(row));
    /** Two updates of the budget in one transaction, as the repository makes them. */
    const twice = (first: typeof row, second: typeof row) =>
      engine.transaction(async (tx) => {
        const repo = new OccurrencesRepositorySql(tx);
        await repo.updateAuthority(first, first.version - 1);
        await repo.updateAuthority(second, second.version - 1);
      });
    // Reserve, then consume: one row version with the final values (the service-level test above
    // shows the one UPDATE sent).
    await twice({ ...row, reserved: 40, version: 2 }, { ...row, consumed: 40, version: 3 });
    assert.deepEqual(await budgetOf(engine, 'budget'), [0, 40, 3]);
    // Where the second's guard would not hold, or the row between would break a CHECK, each UPDATE
    // goes as its own statement and fails as it always did: nothing of the transaction commits.
    const refused: [typeof row, typeof row, string][] = [
      [
        { ...row, reserved: 10, consumed: 40, version: 4 },
        { ...row, consumed: 50, version: 6 },
        'another version',
      ],
      [
        { ...row, reserved: 10, consumed: 50, version: 4 },
        { ...row, consumed: 45, version: 5 },
        'consumed going down',
      ],
      [
        { ...row, reserved: 70, consumed: 40, version: 4 },
        { ...row, consumed: 100, version: 5 },
        'past the total between',
      ],
    ];
    for (const [first, second, why] of refused) {
      await assert.rejects(twice(first, second), (error: unknown) => codes(error).length > 0, why);
      assert.deepEqual(await budgetOf(engine, 'budget'), [0, 40, 3], why);
    }
  });
}
