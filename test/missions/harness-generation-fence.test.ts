/**
 * AOC-REQ-006 (A7#21) for every executor command of the harness, on both engines: a takeover
 * that commits after the executor's credential was authenticated but before its command's
 * transaction must still refuse the command. The service is called as the routes call it once
 * authentication passed — with the executor's (now retired) generation — so the race is
 * deterministic: `409 generation_retired`, and nothing written (docs/api.md "Authentication":
 * "every executor command is checked again inside the command's transaction"). The successor's
 * generation then does what the predecessor could not.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { enginesUnderTest } from '../store/engines.js';
import { binding, code, T0, verifiedStatus } from './fixtures.js';
import { world, type World } from './world.js';

const engines = await enginesUnderTest();
const LINEAGE = 'invoice-agent';

const item = (over: Record<string, unknown> = {}) => ({
  kind: 'queue_item',
  action_class: 'consequential_write',
  lineage: LINEAGE,
  mission_binding: binding,
  ...over,
});

/** Everything the commands below could write: items, the session, their chains. */
async function state(w: World, sessionId: string) {
  const items = await w.harness.listItems();
  const chains = await Promise.all(items.map(async (i) => (await w.harness.events(`work:${i.id}`)).length));
  const session = await w.harness.getSessionRecord(sessionId);
  const sessionChain = (await w.harness.events(`session:${sessionId}`)).length;
  return JSON.stringify({ items, chains, session, sessionChain });
}

for (const e of engines) {
  test(`[${e.name}] AOC-REQ-006 a generation retired after authentication cannot complete, retry, enqueue, spawn, open or taint a session: generation_retired, nothing written`, async (t) => {
    const w = await world(t, e);
    await w.harness.applyVerifiedStatus(verifiedStatus('active', T0));
    const g = await w.occurrences.takeover({ lineage: LINEAGE });
    const gen = g.generation;
    const session = await w.harness.createSession(
      { mission_binding: binding, session_id: 'sess-1' },
      'executor',
      LINEAGE,
      gen,
    );
    const running = await w.harness.createItem(
      item({ queue_item_id: 'wrk-running', session_id: session.id, idempotency_key: 'pay-1' }),
      'executor',
      LINEAGE,
      gen,
    );
    await w.harness.dispatch(running.id, 'executor', gen);
    const done = await w.harness.createItem(
      item({ queue_item_id: 'wrk-done', idempotency_key: 'pay-2' }),
      'executor',
      LINEAGE,
      gen,
    );
    await w.harness.dispatch(done.id, 'executor', gen);
    await w.harness.complete(done.id, 'executor', gen);

    // The credential of `gen` was authenticated; now a takeover commits before the command runs.
    const successor = await w.occurrences.takeover({ lineage: LINEAGE });
    const before = await state(w, session.id);
    const refused = {
      complete: () => w.harness.complete(running.id, 'executor', gen),
      retry: () => w.harness.retry(done.id, 'executor', gen),
      enqueue: () => w.harness.createItem(item({ queue_item_id: 'wrk-late' }), 'executor', LINEAGE, gen),
      spawn: () =>
        w.harness.createItem(
          item({
            kind: 'subagent_handle',
            queue_item_id: 'wrk-child',
            parent_item: running.id,
            handle: {
              actor: { client_id: 'agent_c' },
              parent_mission: { id: binding.mission_id, origin: binding.mission_origin },
              governed_by: { kind: 'parent_mission' },
            },
          }),
          'executor',
          LINEAGE,
          gen,
        ),
      session: () =>
        w.harness.createSession(
          { mission_binding: binding, session_id: 'sess-late' },
          'executor',
          LINEAGE,
          gen,
        ),
      taint: () => w.harness.taintSession(session.id, { source: 'web_page' }, 'executor', gen),
    };
    // One after another: each is its own command, as separate requests would be.
    for (const [command, run] of Object.entries(refused))
      assert.equal(await code(run()), 'generation_retired', command);
    assert.equal(await state(w, session.id), before, 'no refused command wrote anything');
    assert.equal(await code(w.harness.getItem('wrk-late')), 'work_item_not_found');
    assert.equal(await code(w.harness.getItem('wrk-child')), 'work_item_not_found');
    assert.equal(await code(w.harness.getSessionRecord('sess-late')), 'session_not_found');

    // The successor's generation is the lineage's: the same commands go through.
    const next = successor.generation;
    assert.equal((await w.harness.complete(running.id, 'executor', next)).state, 'done');
    assert.equal((await w.harness.retry(done.id, 'executor', next)).retryOf, done.id);
    await w.harness.createItem(item({ queue_item_id: 'wrk-late' }), 'executor', LINEAGE, next);
    await w.harness.createSession(
      { mission_binding: binding, session_id: 'sess-late' },
      'executor',
      LINEAGE,
      next,
    );
    assert.equal(
      (await w.harness.taintSession(session.id, { source: 'web_page' }, 'executor', next)).tainted,
      true,
    );
  });
}

/**
 * The same fence when the takeover has not committed yet (PostgreSQL, read committed): its
 * transaction holds the lineage row and has raised the generation when the retired executor's
 * `complete` runs. The fence must wait for that lock and see the committed successor — a plain
 * read would see the old generation and let the retired command commit beside the takeover.
 * Whether `complete` waits is read from PostgreSQL itself (a backend waiting on a lock), not timed.
 */
for (const e of engines.filter((x) => x.kind === 'postgres')) {
  test(`[${e.name}] AOC-REQ-006 the harness fence waits for a takeover in flight on the lineage and refuses the retired generation`, async (t) => {
    const w = await world(t, e);
    await w.harness.applyVerifiedStatus(verifiedStatus('active', T0));
    const gen = (await w.occurrences.takeover({ lineage: LINEAGE })).generation;
    const running = await w.harness.createItem(
      item({ queue_item_id: 'wrk-running', idempotency_key: 'pay-1' }),
      'executor',
      LINEAGE,
      gen,
    );
    await w.harness.dispatch(running.id, 'executor', gen);

    const takeover = w.store.another();
    const watcher = w.store.another();
    let completion: Promise<string> | undefined;
    await takeover.transaction(async (tx) => {
      const me = await tx.get<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      await tx.get(`SELECT generation FROM aoc_lineages WHERE id = ?${tx.forUpdate}`, [LINEAGE]);
      await tx.run(
        'UPDATE aoc_lineages SET generation = generation + 1, version = version + 1 WHERE id = ?',
        [LINEAGE],
      );
      const settled = w.harness.complete(running.id, 'executor', gen).then(
        (r) => `completed ${r.state}`,
        (err: unknown) => `refused ${(err as { code?: string }).code}`,
      );
      completion = settled;
      // Until complete is seen waiting on this transaction's lock, or has settled without waiting.
      for (;;) {
        const waiting = await watcher.read((ex) =>
          ex.get<{ n: number }>(
            'SELECT count(*)::int AS n FROM pg_stat_activity WHERE ? = ANY(pg_blocking_pids(pid))',
            [me?.pid ?? -1],
          ),
        );
        if ((waiting?.n ?? 0) > 0) break;
        const early = await Promise.race([
          settled,
          new Promise<undefined>((r) => setTimeout(() => r(undefined), 20)),
        ]);
        if (early !== undefined) assert.fail(`complete did not wait for the takeover's lock: ${early}`);
      }
    });
    assert.equal(await completion, 'refused generation_retired');
    assert.equal((await w.harness.getItem(running.id)).state, 'running', 'nothing written');
  });
}
