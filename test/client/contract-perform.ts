/**
 * The perform part of the contract: against the REAL sandbox provider through src/providers'
 * HttpProviderAdapter, perform calls the adapter at most once per occurrence (counted) and the
 * sandbox's effect ledger shows at most one effect.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { BatonClient, ProviderCall } from '../../src/client/index.js';
import { digestJcs } from '../../src/core/digest.js';
import { sandboxEntryUrl, type SandboxProvider } from '../../src/providers/index.js';
import {
  CountingAdapter,
  HangingAdapter,
  reconcileByKey,
  ThrowingAfterSend,
  type MakeEnv,
} from './support.js';

async function nativeKeyOf(client: BatonClient, occurrenceId: string | null): Promise<string> {
  assert.ok(occurrenceId !== null);
  const key = (await client.getOccurrence(occurrenceId)).occurrence.provider.nativeKey;
  assert.ok(key !== null);
  return key;
}

/** A user's own client as a plain function: it sends the ticket's request under its native key. */
function ownClient(
  sandbox: SandboxProvider,
  calls: { n: number; last?: unknown },
  fail = false,
): ProviderCall {
  return async (ticket) => {
    calls.n += 1;
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (ticket.nativeKeyHeader !== null && ticket.nativeKey !== null)
      headers[ticket.nativeKeyHeader] = ticket.nativeKey;
    const res = await fetch(sandboxEntryUrl(sandbox.url).replace('{account}', ticket.account), {
      method: 'POST',
      headers,
      body: JSON.stringify(ticket.request),
    });
    const answer: unknown = await res.json();
    calls.last = answer;
    if (fail) throw new Error('the client crashed after the provider answered');
    return answer;
  };
}

interface Ack {
  source: string;
  nativeStatus: string | null;
  response?: unknown;
  responseDigest?: string;
}

export function performCases(label: string, env: MakeEnv): void {
  test(`${label}: perform takes a plain async function (the user's own client) and calls it once`, async (t) => {
    const { client, sandbox, op } = await env(t);
    const ex = await client.takeover('invoice-agent');
    const calls: { n: number; last?: unknown } = { n: 0 };
    const first = await ex.perform(op('k-own-client'), ownClient(sandbox, calls));
    assert.deepEqual([first.status, first.adapterCalls, calls.n], ['succeeded', 1, 1]);
    const again = await ex.perform(op('k-own-client'), ownClient(sandbox, calls));
    assert.deepEqual(
      [again.status, again.reason, again.adapterCalls, calls.n],
      ['succeeded', 'existing_resolved', 0, 1],
    );
    const key = await nativeKeyOf(client, first.occurrenceId);
    assert.equal(sandbox.effectCount(key), 1);
    // What the function returned is kept as the acknowledgement's (unauthenticated) response.
    const acks = (await client.getOccurrence(first.occurrenceId ?? '')).evidence
      .filter((e) => e.type === 'observation_recorded')
      .map((e) => (e.body as unknown as { observation: Ack }).observation)
      .filter((o) => o.source === 'acknowledgement');
    assert.equal(acks.length, 1);
    assert.equal(acks[0]?.nativeStatus, 'succeeded');
    // Kept whole, or only digested when the profile marks requests private.
    const kept = acks[0]?.response === undefined ? acks[0]?.responseDigest : acks[0].response;
    assert.deepEqual(kept, acks[0]?.response === undefined ? digestJcs(calls.last) : calls.last);
  });

  test(`${label}: a plain function that throws after sending leaves it unresolved, never called again`, async (t) => {
    const { client, sandbox, op } = await env(t);
    const ex = await client.takeover('invoice-agent');
    const calls = { n: 0 };
    const r = await ex.perform(op('k-own-throw'), ownClient(sandbox, calls, true));
    assert.deepEqual([r.status, r.reason, r.adapterCalls], ['unresolved', 'adapter_failed', 1]);
    const again = await ex.perform(op('k-own-throw'), ownClient(sandbox, calls));
    assert.deepEqual([again.status, again.reason, calls.n], ['unresolved', 'existing_entered', 1]);
    assert.equal(sandbox.effectCount(await nativeKeyOf(client, r.occurrenceId)), 1);
  });

  test(`${label}: perform sends once, Baton's status source confirms it in the same call, then replays at no cost`, async (t) => {
    const { client, sandbox, provider, op } = await env(t);
    const ex = await client.takeover('invoice-agent');
    const adapter = new CountingAdapter(provider);
    const first = await ex.perform(op('k-perform'), adapter);
    assert.deepEqual(
      [first.status, first.reason, first.missingKnowledge, first.adapterCalls],
      ['succeeded', undefined, undefined, 1],
    );
    assert.ok(first.occurrenceId !== null);
    assert.equal(first.occurrence?.phase, 'resolved');
    // The executor's report stays unauthenticated evidence; the status source's answer resolved it.
    const observed = (await client.getOccurrence(first.occurrenceId)).evidence
      .filter((e) => e.type === 'observation_recorded')
      .map((e) => e.body as { interpretation: { effective: boolean; missingKnowledge: string | null } })
      .map(({ interpretation: i }) => [i.effective, i.missingKnowledge]);
    assert.deepEqual(observed, [
      [false, 'unauthenticated'],
      [true, null],
    ]);
    const again = await ex.perform(op('k-perform'), adapter);
    assert.deepEqual([again.status, again.reason, again.adapterCalls], ['succeeded', 'existing_resolved', 0]);
    assert.equal(again.occurrenceId, first.occurrenceId);
    const successor = await client.takeover('invoice-agent');
    const third = await successor.perform(op('k-perform'), adapter);
    assert.deepEqual([third.status, third.adapterCalls], ['succeeded', 0]);
    assert.equal(adapter.calls, 1);
    assert.equal(sandbox.effectCount(await nativeKeyOf(client, first.occurrenceId)), 1);
    t.diagnostic(`checked 3 performs, 1 adapter call, 1 effect`);
  });

  test(`${label}: the answer is lost after the provider applied it, and so is the status answer → unresolved, never resent`, async (t) => {
    const { client, sandbox, provider, op } = await env(t);
    // The payment's answer is lost, and so is every status source's answer to perform's reconcile.
    sandbox.addFault('all', 'drop_response_after_apply');
    const ex = await client.takeover('invoice-agent');
    const adapter = new CountingAdapter(provider);
    const r = await ex.perform(op('k-drop'), adapter);
    assert.deepEqual([r.status, r.missingKnowledge, r.adapterCalls], ['unresolved', 'unavailable', 1]);
    const again = await ex.perform(op('k-drop'), adapter);
    assert.deepEqual([again.status, again.reason, again.adapterCalls], ['unresolved', 'existing_entered', 0]);
    const successor = await client.takeover('invoice-agent');
    assert.deepEqual(
      successor.handover.unresolved.map((o) => o.id),
      [r.occurrenceId],
    );
    assert.equal((await successor.perform(op('k-drop'), adapter)).status, 'unresolved');
    assert.equal(adapter.calls, 1);
    assert.equal(sandbox.effectCount(await nativeKeyOf(client, r.occurrenceId)), 1);
  });

  test(`${label}: the answer is lost after the provider applied it → the status source finds the payment, never resent`, async (t) => {
    const { client, sandbox, provider, op } = await env(t);
    sandbox.addFault('next', 'drop_response_after_apply');
    const ex = await client.takeover('invoice-agent');
    const adapter = new CountingAdapter(provider);
    const r = await ex.perform(op('k-found'), adapter);
    assert.deepEqual([r.status, r.adapterCalls], ['succeeded', 1]);
    assert.equal(adapter.calls, 1);
    assert.equal(sandbox.effectCount(await nativeKeyOf(client, r.occurrenceId)), 1);
    assert.deepEqual(await client.listUnresolved('invoice-agent'), []);
  });

  test(`${label}: the adapter throws after sending → unresolved, never called again`, async (t) => {
    const { client, sandbox, provider, op } = await env(t);
    const ex = await client.takeover('invoice-agent');
    const adapter = new ThrowingAfterSend(provider);
    const r = await ex.perform(op('k-throw'), adapter);
    assert.deepEqual([r.status, r.reason, r.adapterCalls], ['unresolved', 'adapter_failed', 1]);
    assert.equal(r.occurrence?.phase, 'entered');
    const again = await ex.perform(op('k-throw'), adapter);
    assert.deepEqual([again.status, again.reason, again.adapterCalls], ['unresolved', 'existing_entered', 0]);
    assert.equal(adapter.calls, 1);
    assert.equal(sandbox.effectCount(await nativeKeyOf(client, r.occurrenceId)), 1);
  });

  test(`${label}: a crash between enter and record leaves it unresolved for the successor`, async (t) => {
    const { client, sandbox, provider, op } = await env(t);
    const ex = await client.takeover('invoice-agent');
    const hanging = new HangingAdapter(provider);
    void ex.perform(op('k-crash'), hanging); // abandoned: this worker never hears back
    const occurrenceId = await hanging.sent;
    const successor = await client.takeover('invoice-agent');
    assert.deepEqual(
      successor.handover.unresolved.map((o) => o.id),
      [occurrenceId],
    );
    assert.deepEqual(
      (await client.listUnresolved('invoice-agent')).map((o) => o.id),
      [occurrenceId],
    );
    const adapter = new CountingAdapter(provider);
    const r = await successor.perform(op('k-crash'), adapter);
    assert.deepEqual([r.status, r.reason, r.occurrenceId], ['unresolved', 'existing_entered', occurrenceId]);
    assert.deepEqual([hanging.calls, adapter.calls], [1, 0], 'one send, made by the crashed worker');
    assert.equal(sandbox.effectCount(await nativeKeyOf(client, occurrenceId)), 1);
    const late = await ex.perform(op('k-late'), adapter);
    assert.deepEqual([late.status, late.reason, late.adapterCalls], ['refused', 'generation_retired', 0]);
  });

  test(`${label}: a crash right after the send: the successor settles it from the status source, never resends`, async (t) => {
    const { client, sandbox, provider, op } = await env(t);
    const ex = await client.takeover('invoice-agent');
    const hanging = new HangingAdapter(provider);
    void ex.perform(op('k-crash-settle'), hanging); // sent, then this worker is gone
    const occurrenceId = await hanging.sent;
    const successor = await client.takeover('invoice-agent');
    assert.deepEqual(
      successor.handover.unresolved.map((o) => o.id),
      [occurrenceId],
    );
    const settled = await successor.reconcile(occurrenceId);
    assert.deepEqual(
      [settled.occurrence.phase, settled.occurrence.effect, settled.occurrence.unresolved],
      ['resolved', 'occurred', false],
    );
    const adapter = new CountingAdapter(provider);
    const r = await successor.perform(op('k-crash-settle'), adapter);
    assert.deepEqual([r.status, r.reason, r.adapterCalls], ['succeeded', 'existing_resolved', 0]);
    assert.deepEqual([hanging.calls, adapter.calls], [1, 0], 'one send, made by the crashed worker');
    assert.equal(sandbox.effectCount(await nativeKeyOf(client, occurrenceId)), 1);
  });

  test(`${label}: perform refuses without calling the adapter`, async (t) => {
    const { client, sandbox, provider, op } = await env(t, { total: 5_000 });
    const adapter = new CountingAdapter(provider);
    const ex = await client.takeover('invoice-agent');
    const tooBig = await ex.perform(op('k-big', 50_000), adapter);
    assert.deepEqual(
      [tooBig.status, tooBig.reason, tooBig.occurrenceId],
      ['refused', 'authority_insufficient', null],
    );
    const held = (await ex.create(op('k-held'))).occurrence;
    await ex.release(held.id, held.provider.requestDigest);
    const released = await ex.perform(op('k-held'), adapter);
    assert.deepEqual([released.status, released.reason], ['refused', 'existing_released']);
    await ex.create(op('k-pred'));
    const successor = await client.takeover('invoice-agent');
    const mismatch = await successor.perform(op('k-pred'), adapter);
    assert.deepEqual([mismatch.status, mismatch.reason], ['refused', 'generation_mismatch']);
    assert.equal(adapter.calls, 0);
    assert.equal(sandbox.effects().length, 0);
  });

  test(`${label}: an unsigned status answer cannot resolve it; perform stays unresolved`, async (t) => {
    const { client, sandbox, provider, store, op } = await env(t);
    const ex = await client.takeover('invoice-agent');
    const adapter = new CountingAdapter(provider);
    // The payment's answer and every status source's answer to perform's reconcile come unsigned.
    sandbox.addFault('all', 'unsigned');
    const r = await ex.perform(op('k-unsigned'), adapter);
    assert.deepEqual(
      [r.status, r.reason, r.missingKnowledge, r.adapterCalls],
      ['unresolved', 'awaiting_status', 'unauthenticated', 1],
    );
    assert.ok(r.occurrenceId !== null);
    const observed = await reconcileByKey(store, r.occurrenceId, provider);
    assert.equal(observed.missingKnowledge, 'unauthenticated');
    const again = await ex.perform(op('k-unsigned'), adapter);
    assert.deepEqual([again.status, again.reason, again.adapterCalls], ['unresolved', 'existing_entered', 0]);
    assert.equal(adapter.calls, 1);
    assert.equal(sandbox.effectCount(await nativeKeyOf(client, r.occurrenceId)), 1);
  });

  test(`${label}: a confirmed no-effect answer makes perform report failed, with no effect`, async (t) => {
    const { client, sandbox, provider, op } = await env(t);
    sandbox.addFault('next', 'canceled_before_processing');
    const ex = await client.takeover('invoice-agent');
    const adapter = new CountingAdapter(provider);
    const r = await ex.perform(op('k-cancel'), adapter);
    assert.deepEqual([r.status, r.adapterCalls], ['failed', 1]);
    assert.equal(r.occurrence?.effect, 'none_confirmed');
    const again = await ex.perform(op('k-cancel'), adapter);
    assert.deepEqual([again.status, again.reason, again.adapterCalls], ['failed', 'existing_resolved', 0]);
    assert.equal(sandbox.effectCount(await nativeKeyOf(client, r.occurrenceId)), 0);
    assert.equal(adapter.calls, 1);
  });
}
