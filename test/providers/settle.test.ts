/**
 * acknowledge-and-settle (src/providers/settle.ts): the executor's report of the provider's answer
 * is evidence only the executor has, so it is recorded even when a status source cannot be asked;
 * the pass then ends as missing knowledge (`unavailable`), never as success.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BatonError, isBatonError } from '../../src/core/errors.js';
import type { OccurrenceView, ProviderProfile } from '../../src/occurrences/index.js';
import { acknowledgeAndSettle, StatusSources, type SourceReading } from '../../src/providers/index.js';
import { createOcc, openWorld, type World } from './world.js';

/**
 * The real status-source layer, except that asking `failing` throws. A fake, because the real
 * sandbox cannot make a query throw: every transport or answer failure already comes back as an
 * `unavailable` reading. What throws is the layer's own refusal (here the one for a profile that is
 * not the occurrence's pinned one) or a fault in it.
 */
class Throwing extends StatusSources {
  readonly #failing: string;
  readonly #error: () => Error;
  asked: string[] = [];

  constructor(
    w: World,
    failing: string,
    error: () => Error = () => new BatonError('provider_binding_conflict', 'not the pinned profile'),
  ) {
    super({ keys: w.keys, clock: w.clock });
    this.#failing = failing;
    this.#error = error;
  }

  override query(profile: ProviderProfile, o: OccurrenceView, sourceId: string): Promise<SourceReading> {
    this.asked.push(sourceId);
    if (sourceId !== this.#failing) return super.query(profile, o, sourceId);
    return Promise.reject(this.#error());
  }
}

/** The acknowledgement recorded, and the pass asked for, as the executor. */
const AS_EXECUTOR = { ackActor: 'executor:test', requestedBy: 'executor:test' } as const;

/** create + enter + send once for real; the answer is NOT recorded yet (settle records it). */
async function sent(w: World, invoice: string) {
  const occurrence = await createOcc(w, invoice);
  const ticket = await w.svc.enter({ credential: w.credential, occurrenceId: occurrence.id });
  const { acknowledgement } = await w.adapter.send(ticket);
  return { ticket, ack: { ...acknowledgement, authentication: { verified: false } as const } };
}

async function sourcesRecorded(w: World, id: string): Promise<string[]> {
  const { evidence } = await w.svc.getOccurrence(id);
  return evidence
    .filter((e) => e.type === 'observation_recorded')
    .map((e) => (e.body as { observation: { source: string } }).observation.source);
}

/** acknowledge-and-settle as the executor, collecting what it tells `onError`. */
async function settleTelling(
  w: Awaited<ReturnType<typeof openWorld>>,
  sources: Parameters<typeof acknowledgeAndSettle>[1],
  ack: Parameters<typeof acknowledgeAndSettle>[2],
) {
  const told: unknown[] = [];
  const r = await acknowledgeAndSettle(w.svc, sources, ack, {
    ...AS_EXECUTOR,
    onError: (e) => told.push(e),
  });
  return { r, told };
}

test('the first source cannot be asked: the acknowledgement is recorded alone, the pass is `unavailable`', async (t) => {
  const w = await openWorld(t);
  const { ticket, ack } = await sent(w, 'inv-settle-1');
  const sources = new Throwing(w, 'by-key');
  const { r, told } = await settleTelling(w, sources, ack);
  assert.deepEqual(sources.asked, ['by-key']);
  // The failure is not dropped: its code in the answer, the error itself to onError.
  assert.equal(r.errorCode, 'provider_binding_conflict');
  assert.equal(told.length, 1);
  assert.ok(isBatonError(told[0], 'provider_binding_conflict'));
  assert.equal(r.acknowledgement.missingKnowledge, 'unauthenticated');
  assert.deepEqual(await sourcesRecorded(w, ticket.occurrence.id), ['acknowledgement']);
  assert.equal(r.missingKnowledge, 'unavailable');
  assert.deepEqual(r.report.byReason, { error: 1 });
  assert.deepEqual(
    [r.report.observations, r.report.resolved, r.report.unresolved],
    [0, [], [r.occurrence.id]],
  );
  assert.deepEqual([r.occurrence.phase, r.occurrence.unresolved], ['entered', true]);
  assert.equal(w.sandbox.effects().length, 1, 'sent once, never again');
});

test('a later source cannot be asked: what was recorded stays, the call still answers', async (t) => {
  const w = await openWorld(t);
  const { ticket, ack } = await sent(w, 'inv-settle-2');
  // The real by-key answer arrives unsigned (missing knowledge), so the pass goes on to the listing.
  w.sandbox.addFault('all', 'unsigned');
  const sources = new Throwing(w, 'listing');
  const r = await acknowledgeAndSettle(w.svc, sources, ack, AS_EXECUTOR);
  assert.deepEqual(sources.asked, ['by-key', 'listing']);
  assert.deepEqual(await sourcesRecorded(w, ticket.occurrence.id), ['acknowledgement', 'by-key']);
  assert.equal(r.missingKnowledge, 'unavailable');
  assert.deepEqual(r.report.byReason, { unauthenticated: 1, error: 1 });
  assert.equal(r.occurrence.unresolved, true);
  assert.equal(r.errorCode, 'provider_binding_conflict');
});

test('a source that throws a plain Error (a fault, not an outage): errorCode `internal`, never its message', async (t) => {
  const w = await openWorld(t);
  const { ack } = await sent(w, 'inv-settle-3');
  const secret = 'postgres://baton:hunter2@db/baton';
  const sources = new Throwing(w, 'by-key', () => new TypeError(`cannot read x of undefined (${secret})`));
  const { r, told } = await settleTelling(w, sources, ack);
  assert.equal(r.errorCode, 'internal');
  assert.ok(told.length === 1 && told[0] instanceof TypeError, 'onError gets the error itself');
  assert.equal(r.missingKnowledge, 'unavailable');
  assert.deepEqual(r.report.byReason, { error: 1 });
  assert.ok(!JSON.stringify(r).includes('hunter2'), 'the answer carries the code, not the message');
});

test('a pass where every source answers carries no errorCode and tells onError nothing', async (t) => {
  const w = await openWorld(t);
  const { ack } = await sent(w, 'inv-settle-4');
  const { r, told } = await settleTelling(w, new Throwing(w, 'no-such-source'), ack);
  assert.equal(Object.hasOwn(r, 'errorCode'), false);
  assert.deepEqual(told, []);
  assert.equal(r.report.byReason['error'], undefined);
});
