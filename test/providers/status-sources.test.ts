/**
 * Every active status source against the live sandbox, and every fault a lookup can meet, each
 * named by the missing-knowledge reason the service records (AOC-REQ-009; AOC-CASE-008, -009).
 * After every doubtful answer the occurrence is unchanged; only an authentic, exactly bound,
 * fresh, complete and mapped answer moves it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { ManualClock } from '../../src/core/clock.js';
import {
  hmacSecretId,
  sandboxHeaderName,
  sandboxSignedString,
  signSandboxMessage,
} from '../../src/providers/index.js';
import { ask, createOcc, openWorld, pay, settled, type World } from './world.js';
import { listenLoopback } from '../support/loopback.js';

const HOUR = 3_600_000;

async function direct(w: World, key: string, invoice: string): Promise<void> {
  const res = await fetch(`${w.url}/v1/accounts/acct_sandbox/payments`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify({ amount: 100, currency: 'eur', payee: 'someone-else', invoice }),
  });
  assert.equal(res.status, 201);
}

test('lookup by key after a lost answer: authentic, bound, fresh `succeeded` resolves it', async (t) => {
  const w = await openWorld(t);
  const { ticket, key } = await pay(w, 'inv-1', ['drop_response_after_apply']);
  const r = await ask(w, ticket.occurrence.id, 'by-key');
  assert.equal(r.effective, true);
  assert.equal(r.occurrence.outcome, 'success');
  assert.equal(r.occurrence.unresolved, false);
  assert.match(
    r.occurrence.provider.providerReference ?? '',
    /^pay_/,
    'the reference is bound from the lookup',
  );
  assert.equal(w.sandbox.effectCount(key), 1);
});

test('lookup by reference: a pending acknowledgement binds the reference; the settled payment resolves it', async (t) => {
  const w = await openWorld(t, { sandbox: { settleDelayMs: 60_000 } });
  const { ticket, ack } = await pay(w, 'inv-ref');
  assert.equal(ack.interpretation, 'accepted');
  assert.equal(ack.occurrence.unresolved, true, 'accepted is not success');
  assert.notEqual(ack.occurrence.provider.providerReference, null);
  w.clock.advance(61_000);
  const r = await ask(w, ticket.occurrence.id, 'by-reference');
  assert.equal(r.interpretation, 'success');
  assert.equal(r.occurrence.unresolved, false);
});

test('the Ed25519 profile: answers verified against the pinned public key resolve the occurrence', async (t) => {
  const w = await openWorld(t, { profileName: 'sandbox-payments-ed25519' });
  assert.equal(w.profile.document.acknowledgement.authentication.kind, 'ed25519');
  assert.ok(w.profile.document.statusSources.every((s) => s.authentication.kind === 'ed25519'));
  const { ticket, ack } = await pay(w, 'inv-ed', ['drop_response_after_apply']);
  assert.equal(ack.missingKnowledge, 'unavailable');
  const r = await ask(w, ticket.occurrence.id, 'by-key');
  assert.equal(r.effective, true);
  assert.equal(r.occurrence.outcome, 'success');
});

test('listing: found on a later page of a complete walk; cut short it is `incomplete_listing`', async (t) => {
  const w = await openWorld(t, { sources: { pageSize: 2, maxPages: 1 } });
  for (const n of [1, 2, 3]) await direct(w, `direct-${n}`, `other-${n}`);
  const { ticket } = await pay(w, 'inv-listed', ['drop_response_after_apply']);
  const cut = await ask(w, ticket.occurrence.id, 'listing');
  assert.equal(cut.missingKnowledge, 'incomplete_listing');
  assert.equal(cut.occurrence.unresolved, true);
  const full = await openWorld(t, { sources: { pageSize: 2, maxPages: 10 } });
  for (const n of [1, 2, 3]) await direct(full, `direct-${n}`, `other-${n}`);
  const paid = await pay(full, 'inv-listed', ['drop_response_after_apply']);
  const found = await ask(full, paid.ticket.occurrence.id, 'listing');
  assert.equal(found.effective, true);
  assert.equal(found.occurrence.outcome, 'success');
});

test('entered but never sent: exact and complete absence is still only `not_found`', async (t) => {
  const w = await openWorld(t, { sources: { pageSize: 5 } });
  const o = await createOcc(w, 'inv-never-sent');
  await w.svc.enter({ credential: w.credential, occurrenceId: o.id });
  for (const source of ['by-key', 'listing']) {
    const r = await ask(w, o.id, source);
    assert.equal(r.missingKnowledge, 'not_found', source);
    assert.equal(r.occurrence.unresolved, true, 'absence never proves non-entry');
  }
  await assert.rejects(w.svc.enter({ credential: w.credential, occurrenceId: o.id }), {
    code: 'already_entered',
  });
});

test('retention pruning: past the horizon, lookup and listing are `not_found_beyond_retention`', async (t) => {
  const w = await openWorld(t);
  const { ticket, key } = await pay(w, 'inv-old', ['drop_response_after_apply']);
  w.clock.advance(25 * HOUR);
  for (const source of ['by-key', 'listing']) {
    const r = await ask(w, ticket.occurrence.id, source);
    assert.equal(r.missingKnowledge, 'not_found_beyond_retention', source);
    assert.equal(r.occurrence.unresolved, true);
  }
  assert.equal(w.sandbox.effectCount(key), 1, 'pruning hides the record, never the effect');
  assert.equal((await w.svc.getAuthority('payouts')).consumed, 1250, 'no refund');
});

test('stale: an authentic answer older than the freshness horizon is `stale`', async (t) => {
  const sandboxClock = new ManualClock(Date.now());
  const w = await openWorld(t, { sandboxClock });
  const { ticket } = await pay(w, 'inv-stale', ['drop_response_after_apply']);
  w.clock.advance(10 * 60_000); // Baton's clock moves on; the provider answers with its own, older time
  const r = await ask(w, ticket.occurrence.id, 'by-key');
  assert.equal(r.missingKnowledge, 'stale');
  assert.equal(r.occurrence.unresolved, true);
});

test('lookup faults: unsigned, bad_signature, other_account, 5xx, dropped and delayed answers change nothing', async (t) => {
  const w = await openWorld(t, { sources: { timeoutMs: 200 } });
  const { ticket, key } = await pay(w, 'inv-faults', ['drop_response_after_apply']);
  const expected: [string, string][] = [
    ['unsigned', 'unauthenticated'],
    ['bad_signature', 'unauthenticated'],
    ['other_account', 'binding_mismatch'],
    ['error_500_after_apply', 'unavailable'],
    ['drop_response_after_apply', 'unavailable'],
    ['delay:1000', 'unavailable'],
  ];
  for (const [fault, reason] of expected) {
    w.sandbox.addFault({ key }, fault);
    const r = await ask(w, ticket.occurrence.id, 'by-key');
    assert.equal(r.missingKnowledge, reason, fault);
    assert.equal(r.occurrence.outcome, 'unknown', fault);
    assert.equal(r.occurrence.unresolved, true, fault);
    await settled(w, key);
  }
  const clean = await ask(w, ticket.occurrence.id, 'by-key');
  assert.equal(clean.occurrence.outcome, 'success');
  t.diagnostic(`checked ${expected.length} lookup faults`);
});

test('conflicting_status: success, then a contradicting failure is `conflict`; no favourable result is kept', async (t) => {
  const w = await openWorld(t);
  const { ticket } = await pay(w, 'inv-conflict', ['conflicting_status', 'drop_response_after_apply']);
  const first = await ask(w, ticket.occurrence.id, 'by-key');
  assert.equal(first.occurrence.outcome, 'success');
  const second = await ask(w, ticket.occurrence.id, 'by-key');
  assert.equal(second.missingKnowledge, 'conflict');
  assert.equal(second.occurrence.unresolved, true);
  const third = await ask(w, ticket.occurrence.id, 'by-key');
  assert.equal(third.occurrence.conflict, true, 'a conflict is sticky');
  assert.notEqual(third.occurrence.outcome, 'success');
  const { evidence } = await w.svc.getOccurrence(ticket.occurrence.id);
  assert.equal(evidence.filter((e) => e.type === 'observation_recorded').length, 4, 'every answer is kept');
});

test('status_changes_later: failed, then succeeded — the change is `conflict`, not an upgrade', async (t) => {
  const w = await openWorld(t);
  const { ticket, ack } = await pay(w, 'inv-later', ['status_changes_later', 'drop_response_after_apply']);
  assert.equal(ack.missingKnowledge, 'unavailable');
  const first = await ask(w, ticket.occurrence.id, 'by-key');
  assert.equal(first.interpretation, 'final_failure');
  assert.equal(first.occurrence.unresolved, true, 'generic failure leaves the effect unresolved');
  const second = await ask(w, ticket.occurrence.id, 'by-key');
  assert.equal(second.missingKnowledge, 'conflict');
  assert.equal(second.occurrence.unresolved, true);
});

test('unmapped_status: a status the profile does not map is missing knowledge', async (t) => {
  const w = await openWorld(t, {
    edit: (p) => ({
      ...p,
      statuses: Object.fromEntries(Object.entries(p.statuses).filter(([k]) => k !== 'failed')),
    }),
  });
  const { ack } = await pay(w, 'inv-unmapped', ['fail_terminal']);
  assert.equal(ack.missingKnowledge, 'unmapped_status');
  assert.equal(ack.occurrence.unresolved, true);
});

test('a source the profile does not pin is refused before anything is asked', async (t) => {
  const w = await openWorld(t);
  const { ticket } = await pay(w, 'inv-pin', ['drop_response_after_apply']);
  const { occurrence } = await w.svc.getOccurrence(ticket.occurrence.id);
  await assert.rejects(w.sources.query(w.profile.document, occurrence, 'rogue'), {
    code: 'status_source_invalid',
  });
  await assert.rejects(w.sources.query(w.profile.document, occurrence, 'webhook'), {
    code: 'status_source_invalid',
  });
});

test('listing: a signed page whose envelope names another account settles nothing (`binding_mismatch`), even with the payment in it', async (t) => {
  const w = await openWorld(t, { sources: { pageSize: 2, maxPages: 10 } });
  for (const n of [1, 2, 3]) await direct(w, `direct-${n}`, `other-${n}`);
  const { ticket, key } = await pay(w, 'inv-other-listing', ['drop_response_after_apply']);
  // Signed with the sandbox's own key: authentic, but about another account.
  w.sandbox.addFault('all', 'other_account');
  const r = await ask(w, ticket.occurrence.id, 'listing');
  assert.equal(r.effective, false);
  assert.equal(r.missingKnowledge, 'binding_mismatch');
  assert.equal(r.occurrence.unresolved, true);
  assert.equal(r.occurrence.outcome, 'unknown');
  assert.equal(w.sandbox.effectCount(key), 1);
});

test('a replayed signed answer without its own time is dated by its signature, not by when it was fetched', async (t) => {
  // A replaying middlebox in front of the by-key source: it serves the sandbox's real payment
  // object without `observed_at`, signed with the sandbox's own key and signing code at `signedAt`:
  // the answer a provider whose bodies carry no time of their own signed back then (the sandbox's
  // bodies always carry one, so the sandbox alone cannot be replayed this way).
  const hmacSecret = Buffer.alloc(32, 9); // the world's sandbox secret (world.ts)
  let sandboxOrigin = '';
  let signedAt = 0;
  const replay = createServer((req, res) => {
    void (async () => {
      const real = (await (await fetch(`${sandboxOrigin}${req.url ?? ''}`)).json()) as Record<
        string,
        unknown
      >;
      delete real['observed_at'];
      const body = JSON.stringify(real);
      const key = { kind: 'hmac', secretId: hmacSecretId(hmacSecret), secret: hmacSecret } as const;
      const signature = signSandboxMessage(
        key,
        sandboxSignedString({ method: 'GET', path: req.url ?? '', body }),
        signedAt,
      );
      res
        .writeHead(200, { 'content-type': 'application/json', [sandboxHeaderName('hmac')]: signature })
        .end(body);
    })();
  });
  const replayOrigin = await listenLoopback(t, replay);
  const w = await openWorld(t, {
    edit: (p) => ({
      ...p,
      statusSources: p.statusSources.map((s) => {
        if (s.id !== 'by-key') return s;
        sandboxOrigin = new URL(s.url).origin;
        return { ...s, url: s.url.replace(sandboxOrigin, replayOrigin) };
      }),
    }),
  });
  assert.deepEqual(w.hmacSecret, hmacSecret);
  const { ticket } = await pay(w, 'inv-replayed', ['drop_response_after_apply']);
  // Signed just after the entry; replayed ten minutes later (the source's freshness is 5 minutes).
  signedAt = w.clock.wallMs();
  w.clock.advance(10 * 60_000);
  const old = await ask(w, ticket.occurrence.id, 'by-key');
  assert.equal(old.missingKnowledge, 'stale', 'authentic, but ten minutes old: not fresh');
  assert.equal(old.occurrence.unresolved, true);
  const recorded = await observedAtOf(w, ticket.occurrence.id);
  assert.equal(recorded.at(-1), Math.floor(signedAt / 1000) * 1000, "the signature's second");
  // The same answer signed now is fresh: what made it stale was only the signature's time.
  signedAt = w.clock.wallMs();
  const fresh = await ask(w, ticket.occurrence.id, 'by-key');
  assert.deepEqual([fresh.effective, fresh.occurrence.unresolved], [true, false]);
});

async function observedAtOf(w: World, id: string): Promise<number[]> {
  const { evidence } = await w.svc.getOccurrence(id);
  return evidence
    .filter((e) => e.type === 'observation_recorded')
    .map((e) => (e.body as { observation: { observedAt: number } }).observation.observedAt);
}
