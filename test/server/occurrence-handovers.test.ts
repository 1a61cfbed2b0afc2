/**
 * `GET /v1/occurrences/{id}`: the handovers (the takeovers that delivered the occurrence to a
 * successor, AOC-REQ-005) are found through the handover index and checked at the handovers —
 * each one's content, its links to the events on either side, the lineage chain's end against its
 * recorded head — not by reading and walking the lineage's whole chain, which grows with every
 * takeover. A broken handover is never shown as verified (`chains.lineage.ok` false, the event
 * not in `verified`); the whole-chain verdict stays `GET /v1/evidence/verify`'s. Both engines,
 * real server on 127.0.0.1, real takeovers and authenticated observations; the log is changed
 * behind Baton's back as someone with database access could.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { ManualClock } from '../../src/core/clock.js';
import { generateEd25519KeyPair, publicKeyRaw } from '../../src/core/ed25519.js';
import { canonicalize } from '../../src/core/jcs.js';
import type { JsonObject } from '../../src/core/json.js';
import { deliversOccurrence, OccurrencesService } from '../../src/occurrences/index.js';
import { buildServer } from '../../src/server/index.js';
import { createToken } from '../../src/server/tokens.js';
import type { SqlExecutor, StoreEngine } from '../../src/store/engine.js';
import { evidenceHash, listEvidence, type EvidenceEvent } from '../../src/store/evidence-log.js';
import { migrate, occurrencesUnitOfWork } from '../../src/store/index.js';
import { enginesUnderTest, type EngineUnderTest } from '../store/engines.js';
import { createInput, domainConfig, observation, paymentsProfile, T0 } from '../occurrences/helpers.js';
import { request } from './helpers.js';

const engines = await enginesUnderTest();
const LINEAGE = 'refund-agent';
const SUBJECT = `lineage:${LINEAGE}`;

/** A method read off `target`, bound to it (so a proxy passes it on unchanged). */
function bound(v: unknown, target: object): unknown {
  return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
}

/** The engine, counting the rows of the lineage's chain its reads return (writes pass through). */
function counting(engine: StoreEngine, seen: { rows: number }): StoreEngine {
  const count = (rows: unknown): void => {
    for (const r of Array.isArray(rows) ? rows : [rows])
      if ((r as { subject?: unknown } | undefined)?.subject === SUBJECT) seen.rows++;
  };
  const wrap = (ex: SqlExecutor): SqlExecutor =>
    new Proxy(ex, {
      get(target, prop) {
        const v: unknown = Reflect.get(target, prop, target);
        if (prop !== 'all' && prop !== 'get') return bound(v, target);
        return async (...args: unknown[]) => {
          const out: unknown = await (v as (...a: unknown[]) => Promise<unknown>).apply(target, args);
          count(out);
          return out;
        };
      },
    });
  return new Proxy(engine, {
    get(target, prop) {
      if (prop === 'read')
        return <T>(fn: (ex: SqlExecutor) => Promise<T>) => target.read((ex) => fn(wrap(ex)));
      return bound(Reflect.get(target, prop, target), target);
    },
  });
}

/**
 * Generation 1 creates and enters the occurrence; takeovers 2 and 3 deliver it; an authenticated
 * `succeeded` resolves it, so `between` takeovers do not; a contradicting `failed` reopens it
 * (conflict, phase entered), so the last two takeovers deliver it again: its handovers are
 * generations 2, 3, between + 4 and between + 5 — not one contiguous run.
 */
async function scenario(t: TestContext, e: EngineUnderTest, between: number) {
  const store = await e.open(t);
  await migrate(store.engine);
  const clock = new ManualClock(T0);
  const pair = generateEd25519KeyPair();
  const domainKey = { kid: pair.kid, publicKey: publicKeyRaw(pair.publicKey).toString('base64url') };
  const seen = { rows: 0 };
  const engine = counting(store.engine, seen);
  const svc = new OccurrencesService({ uow: occurrencesUnitOfWork(engine), domainKey, clock });
  await svc.configureDomain(domainConfig() as never);
  await svc.registerProfile(paymentsProfile());
  await svc.createAuthority({ id: 'payouts', unit: 'EUR-cents', total: 1_000_000 });
  const g1 = await svc.takeover({ lineage: LINEAGE });
  const made = await svc.create(createInput(g1.credential, 'refund-1'));
  const ticket = await svc.enter({ credential: g1.credential, occurrenceId: made.occurrence.id });
  const takeovers = async (n: number) => {
    for (let i = 0; i < n; i++) await svc.takeover({ lineage: LINEAGE });
  };
  await takeovers(2);
  await svc.observe(observation(ticket, 'succeeded', clock.wallMs()));
  await takeovers(between);
  const reopened = await svc.observe(observation(ticket, 'failed', clock.wallMs()));
  assert.equal(reopened.occurrence.phase, 'entered', 'a contradiction reopens it');
  await takeovers(2);
  const app = buildServer({ engine, service: svc, clock, console: false });
  t.after(() => app.close());
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  const token = (await createToken(store.engine, { role: 'operator' }, { clock, actor: 'test' })).token;
  const id = made.occurrence.id;
  const detail = async () => {
    const a = await request(url, 'GET', `/v1/occurrences/${id}`, { token });
    assert.equal(a.status, 200, a.text);
    return a.body as unknown as { handovers: EvidenceEvent[]; chains: { lineage: JsonObject } };
  };
  const chain = () => store.engine.read((ex) => listEvidence(ex, SUBJECT));
  const verify = async () => (await request(url, 'GET', '/v1/evidence/verify', { token })).body['ok'];
  return { store, seen, id, detail, chain, verify, expected: [2, 3, between + 4, between + 5] };
}

const generationsOf = (events: readonly EvidenceEvent[]): unknown[] =>
  events.map((e) => (e.body as { generation?: unknown }).generation);
const seqAt = (chain: readonly EvidenceEvent[], generation: number): number =>
  chain[generation - 1]?.seq ?? -1;

/** Rewrite the event at `generation` with `change`, its own hash recomputed (only its links betray it). */
async function rewrite(
  s: Awaited<ReturnType<typeof scenario>>,
  generation: number,
  change: (e: EvidenceEvent) => Pick<EvidenceEvent, 'actor' | 'body'>,
): Promise<number> {
  const event = (await s.chain())[generation - 1];
  assert.ok(event !== undefined);
  const next = { ...event, ...change(event) };
  const hash = evidenceHash(next);
  const changed = await s.store.tamper(
    'UPDATE evidence_events SET actor = ?, body = ?, hash = ? WHERE seq = ?',
    [next.actor, canonicalize(next.body), hash, event.seq],
  );
  assert.equal(changed, 1);
  return event.seq;
}

for (const e of engines) {
  test(`[${e.name}] an occurrence's handovers come from the index, verified, without reading its lineage's whole chain`, async (t) => {
    const s = await scenario(t, e, 100);
    const chain = await s.chain();
    assert.equal(chain.length, 105);
    s.seen.rows = 0;
    const d = await s.detail();
    // What the whole chain says, filtered as before: the same events, in order.
    const whole = chain.filter((ev) => deliversOccurrence(ev, s.id));
    assert.deepEqual(generationsOf(d.handovers), s.expected);
    assert.deepEqual(
      d.handovers.map((h) => h.hash),
      whole.map((h) => h.hash),
    );
    assert.equal(d.chains.lineage['ok'], true);
    assert.equal(d.chains.lineage['scope'], 'handovers');
    assert.deepEqual(
      d.chains.lineage['verified'],
      d.handovers.map((h) => h.seq),
    );
    // At most each handover and its two neighbours, position 1, the head and the one after it.
    assert.ok(s.seen.rows >= s.expected.length, 'the handovers themselves are read (the count counts)');
    assert.ok(s.seen.rows <= 3 * s.expected.length + 3, `read ${s.seen.rows} rows of a 105-event chain`);
  });

  test(`[${e.name}] a changed handover event is broken: not verified, ok false, first broken at its seq`, async (t) => {
    const s = await scenario(t, e, 10);
    const chain = await s.chain();
    const seq = seqAt(chain, 3);
    assert.equal(
      await s.store.tamper("UPDATE evidence_events SET actor = 'operator:forged' WHERE seq = ?", [seq]),
      1,
    );
    const d = await s.detail();
    assert.deepEqual(generationsOf(d.handovers), s.expected, 'still shown, as what the row now says');
    assert.equal(d.chains.lineage['ok'], false);
    assert.equal((d.chains.lineage['verified'] as number[]).includes(seq), false);
    assert.equal((d.chains.lineage['verified'] as number[]).length, 3, 'the others still verify');
    assert.equal((d.chains.lineage['firstBroken'] as JsonObject)['seq'], seq);
    assert.equal(await s.verify(), false);
  });

  test(`[${e.name}] a handover rewritten with its own hash recomputed is caught by the next event's link`, async (t) => {
    const s = await scenario(t, e, 10);
    const seq = await rewrite(s, 2, (ev) => ({ actor: 'operator:forged', body: ev.body }));
    const d = await s.detail();
    assert.equal(d.chains.lineage['ok'], false);
    assert.equal((d.chains.lineage['verified'] as number[]).includes(seq), false);
    const first = d.chains.lineage['firstBroken'] as { reason: string };
    assert.match(first.reason, /does not link to it/);
  });

  test(`[${e.name}] a takeover rewritten to drop the occurrence from what it delivered is reported, not silently left out`, async (t) => {
    const s = await scenario(t, e, 10);
    await rewrite(s, 3, (ev) => {
      const body = ev.body as { delivered: { reserved: string[]; unresolved: string[] } };
      const unresolved = body.delivered.unresolved.filter((x) => x !== s.id);
      return { actor: ev.actor, body: { ...body, delivered: { ...body.delivered, unresolved } } };
    });
    const d = await s.detail();
    assert.deepEqual(
      generationsOf(d.handovers),
      [2, 14, 15],
      'it no longer says it delivered the occurrence',
    );
    assert.equal(d.chains.lineage['ok'], false, 'but the index does: the check fails');
    assert.ok(Number(d.chains.lineage['problems']) >= 1);
  });

  test(`[${e.name}] the lineage chain cut at its end is broken even where the last takeover is a handover`, async (t) => {
    const s = await scenario(t, e, 10);
    const chain = await s.chain();
    const last = seqAt(chain, chain.length);
    assert.equal(await s.store.tamper('DELETE FROM evidence_events WHERE seq = ?', [last]), 1);
    const d = await s.detail();
    assert.equal(d.chains.lineage['ok'], false);
    assert.deepEqual(generationsOf(d.handovers), [2, 3, 14]);
    assert.equal(
      (d.chains.lineage['verified'] as number[]).includes(seqAt(chain, 14)),
      false,
      'its link to #15',
    );
  });

  test(`[${e.name}] the check is scoped to the handovers and says so; a change elsewhere in the chain is the whole walk's to find`, async (t) => {
    const s = await scenario(t, e, 10);
    const chain = await s.chain();
    const far = seqAt(chain, 8);
    assert.equal(
      await s.store.tamper("UPDATE evidence_events SET actor = 'operator:forged' WHERE seq = ?", [far]),
      1,
    );
    const d = await s.detail();
    assert.equal(d.chains.lineage['scope'], 'handovers');
    assert.equal(d.chains.lineage['ok'], true, 'no handover, and no link of one, was changed');
    assert.equal(await s.verify(), false, 'GET /v1/evidence/verify walks every chain and finds it');
  });
}
