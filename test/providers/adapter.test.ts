/**
 * The HTTP provider adapter against the live sandbox: exactly one send of exactly the bound request,
 * no retry, and every doubtful answer recorded as missing knowledge with the occurrence unresolved
 * (AOC-REQ-009, -010, -012; AOC-CASE-001, -003, -010). The sandbox's effect counter is the oracle.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HttpProviderAdapter, loadProfile, recordSend, sandboxEntryUrl } from '../../src/providers/index.js';
import { createOcc, entries, openWorld, pay, settled } from './world.js';

/**
 * A provider that drops every connection (ECONNRESET: it may have applied the request) and counts
 * the requests that reached it, with an adapter whose entries go there.
 */
async function droppingProvider(
  t: TestContext,
  w: Awaited<ReturnType<typeof openWorld>>,
  options: { rememberSent?: number } = {},
): Promise<{ adapter: HttpProviderAdapter; requests: () => number }> {
  let requests = 0;
  const server = createServer((req) => {
    requests += 1;
    req.socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const adapter = new HttpProviderAdapter(w.profile.document, {
    entryUrl: sandboxEntryUrl(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
    keys: w.keys,
    clock: w.clock,
    ...options,
  });
  return { adapter, requests: () => requests };
}

test('a signed 201 resolves the occurrence: one send, one effect, reference bound, authority consumed once', async (t) => {
  const w = await openWorld(t);
  const { ticket, sent, ack, key } = await pay(w, 'inv-ok');
  assert.equal(sent.acknowledged, true);
  assert.equal(sent.detail, 'http 201');
  assert.equal(ack.effective, true);
  assert.equal(ack.interpretation, 'success');
  assert.equal(ack.occurrence.phase, 'resolved');
  assert.equal(ack.occurrence.effect, 'occurred');
  assert.match(ack.occurrence.provider.providerReference ?? '', /^pay_/);
  assert.equal(w.sandbox.effectCount(key), 1);
  assert.equal(await entries(w, ticket.occurrence.id), 1);
  const a = await w.svc.getAuthority('payouts');
  assert.deepEqual([a.reserved, a.consumed], [0, 1250]);
});

test('the request sent is exactly the bound one: the provider’s request digest equals the binding’s', async (t) => {
  const w = await openWorld(t);
  const { ticket, ack } = await pay(w, 'inv-digest');
  const res = await fetch(
    `${w.url}/v1/accounts/acct_sandbox/payments/by-key/${encodeURIComponent(ticket.nativeKey!)}`,
  );
  const body = (await res.json()) as { request_digest: string; idempotency_key: string };
  assert.equal(body.request_digest, ticket.requestDigest);
  assert.equal(body.idempotency_key, ack.occurrence.provider.nativeKey);
});

test('no retry: a server that drops the connection sees exactly one request; the occurrence stays unresolved', async (t) => {
  const w = await openWorld(t);
  const { adapter, requests } = await droppingProvider(t, w);
  const o = await createOcc(w, 'inv-dropper');
  const ticket = await w.svc.enter({ credential: w.credential, occurrenceId: o.id });
  const sent = await adapter.send(ticket);
  const ack = await recordSend(w.svc, sent);
  assert.equal(requests(), 1, 'exactly one request reached the server');
  assert.equal(sent.acknowledged, false);
  assert.match(sent.detail, /^transport /);
  assert.equal(ack.missingKnowledge, 'unavailable');
  assert.equal(ack.occurrence.unresolved, true);
  await assert.rejects(w.svc.enter({ credential: w.credential, occurrenceId: o.id }), {
    code: 'already_entered',
  });
});

test('drop_response_after_apply: the effect applied, no answer, missing knowledge `unavailable`, unresolved', async (t) => {
  const w = await openWorld(t);
  const { sent, ack, key } = await pay(w, 'inv-drop', ['drop_response_after_apply']);
  assert.equal(sent.acknowledged, false);
  assert.equal(sent.sent, true, 'the request had been written');
  assert.equal(ack.missingKnowledge, 'unavailable');
  assert.equal(ack.occurrence.unresolved, true);
  assert.equal(ack.occurrence.outcome, 'unknown');
  assert.equal(w.sandbox.effectCount(key), 1);
});

test('error_500_after_apply: a signed 500 is not an acknowledgement — `unavailable`, unresolved, one effect', async (t) => {
  const w = await openWorld(t);
  const { sent, ack, key } = await pay(w, 'inv-500', ['error_500_after_apply']);
  assert.equal(sent.httpStatus, 500);
  assert.equal(ack.missingKnowledge, 'unavailable');
  assert.equal(ack.occurrence.unresolved, true);
  assert.equal(w.sandbox.effectCount(key), 1);
});

test('delay past the adapter timeout: `unavailable`, unresolved; the provider still applies once, nothing is re-sent', async (t) => {
  const w = await openWorld(t, { timeoutMs: 200 });
  const { sent, ack, key } = await pay(w, 'inv-slow', ['delay:1500']);
  assert.equal(sent.detail, 'timeout');
  assert.equal(ack.missingKnowledge, 'unavailable');
  assert.equal(ack.occurrence.unresolved, true);
  await settled(w, key);
  assert.equal(w.sandbox.effectCount(key), 1);
});

for (const fault of ['unsigned', 'bad_signature']) {
  test(`${fault}: an answer that does not verify is \`unauthenticated\`; the occurrence stays unresolved`, async (t) => {
    const w = await openWorld(t);
    const { sent, ack, key } = await pay(w, `inv-${fault}`, [fault]);
    assert.equal(sent.acknowledged, false);
    assert.match(sent.detail, new RegExp(fault));
    assert.equal(ack.missingKnowledge, 'unauthenticated');
    assert.equal(ack.occurrence.unresolved, true);
    assert.equal(
      ack.occurrence.provider.providerReference,
      null,
      'an unauthenticated answer binds no reference',
    );
    assert.equal(w.sandbox.effectCount(key), 1);
  });
}

test('other_account: an authentic answer about another account is `binding_mismatch`', async (t) => {
  const w = await openWorld(t);
  const { sent, ack } = await pay(w, 'inv-other', ['other_account']);
  assert.equal(sent.acknowledged, true, 'the signature is valid');
  assert.equal(ack.missingKnowledge, 'binding_mismatch');
  assert.equal(ack.occurrence.unresolved, true);
});

test('fail_terminal: final_failure without no-effect leaves the effect unresolved (it WAS captured)', async (t) => {
  const w = await openWorld(t);
  const { ack, key } = await pay(w, 'inv-fail', ['fail_terminal']);
  assert.equal(ack.missingKnowledge, null);
  assert.equal(ack.interpretation, 'final_failure');
  assert.equal(ack.occurrence.effect, 'unresolved');
  assert.equal(ack.occurrence.unresolved, true);
  assert.equal(w.sandbox.effectCount(key), 1);
});

test('canceled_before_processing: not_accepted with no effect closes the outcome; authority stays consumed', async (t) => {
  const w = await openWorld(t);
  const { ack, key } = await pay(w, 'inv-cancel', ['canceled_before_processing']);
  assert.equal(ack.missingKnowledge, null);
  assert.equal(ack.interpretation, 'not_accepted');
  assert.equal(ack.occurrence.effect, 'none_confirmed');
  assert.equal(ack.occurrence.unresolved, false);
  assert.equal(w.sandbox.effectCount(key), 0);
  assert.equal((await w.svc.getAuthority('payouts')).consumed, 1250, 'no refund of entered authority');
});

test('nothing is sent for a ticket bound to another profile, and an unreachable provider is `unavailable`', async (t) => {
  const w = await openWorld(t);
  const o = await createOcc(w, 'inv-wrong');
  const ticket = await w.svc.enter({ credential: w.credential, occurrenceId: o.id });
  const other = new HttpProviderAdapter(loadProfile('sandbox-payments'), {
    entryUrl: sandboxEntryUrl(w.url),
    keys: w.keys,
  });
  await assert.rejects(other.send(ticket), { code: 'provider_binding_conflict' });
  assert.equal(w.sandbox.effectCount(ticket.nativeKey!), 0);
  const closed = new HttpProviderAdapter(w.profile.document, {
    entryUrl: sandboxEntryUrl('http://127.0.0.1:9'),
    keys: w.keys,
    clock: w.clock,
  });
  const ack = await recordSend(w.svc, await closed.send(ticket));
  assert.equal(ack.missingKnowledge, 'unavailable');
  assert.equal(ack.occurrence.unresolved, true, 'no answer never proves non-entry');
});

test('a ticket is sent at most once per adapter: after an in-doubt send, again, a copy or at once, it is refused already_entered and nothing leaves (AOC-REQ-010)', async (t) => {
  const w = await openWorld(t);
  const { adapter, requests } = await droppingProvider(t, w);
  const o = await createOcc(w, 'inv-resend');
  const ticket = await w.svc.enter({ credential: w.credential, occurrenceId: o.id });
  const first = await adapter.send(ticket);
  assert.equal(first.acknowledged, false);
  assert.equal(requests(), 1);
  const refusal = { code: 'already_entered', details: { occurrenceId: o.id, sent: false } };
  // A native idempotency key is not permission to enter the provider again.
  await assert.rejects(adapter.send(ticket), refusal);
  await assert.rejects(adapter.send(structuredClone(ticket)), refusal);
  assert.equal(requests(), 1, 'the provider was entered once');

  // Two sends of one fresh ticket at once: one goes, the other is refused before any byte leaves.
  const o2 = await createOcc(w, 'inv-resend-2');
  const ticket2 = await w.svc.enter({ credential: w.credential, occurrenceId: o2.id });
  const both = await Promise.allSettled([adapter.send(ticket2), adapter.send(ticket2)]);
  assert.deepEqual(
    both.map((r) => r.status),
    ['fulfilled', 'rejected'],
  );
  assert.equal(requests(), 2);
  // The recorded acknowledgement of the one send still lands; the occurrence stays unresolved.
  const ack = await recordSend(w.svc, first);
  assert.equal(ack.occurrence.unresolved, true);
});

test('the ids an adapter remembers are bounded (rememberSent): the oldest is forgotten first', async (t) => {
  const w = await openWorld(t);
  const { adapter, requests } = await droppingProvider(t, w, { rememberSent: 1 });
  const enter = async (invoice: string) => {
    const o = await createOcc(w, invoice);
    return w.svc.enter({ credential: w.credential, occurrenceId: o.id });
  };
  const a = await enter('inv-bound-a');
  const b = await enter('inv-bound-b');
  await adapter.send(a);
  await adapter.send(b);
  await assert.rejects(adapter.send(b), { code: 'already_entered' }, 'the latest is remembered');
  assert.equal(requests(), 2);
  // Past the bound the adapter no longer knows `a`; the service's one ticket per occurrence
  // remains the durable guard (docs/providers.md).
  await adapter.send(a);
  assert.equal(requests(), 3);
});
