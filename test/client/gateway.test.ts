/**
 * The HTTP SDK behind a gateway and under deadlines (issue 10, part 9): a base URL with a path
 * prefix (`https://host/baton/`) reaches every route through a real reverse proxy — the whole
 * client contract runs through one — and every call takes `timeoutMs` and an AbortSignal, cut off
 * with the typed codes `client_timeout` and `client_aborted`. Neither is ever a refusal: perform
 * treats an abort after sending as doubt, like a lost answer, and never sends without a ticket.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { HttpBatonClient } from '../../src/client/index.js';
import { isBatonError } from '../../src/core/errors.js';
import { expectCode, runContract } from './contract.js';
import { startGateway, startSilent, type GatewayOptions } from './gateway.js';
import { batonOn } from './wire.js';
import { CountingAdapter, openStore, payments, startSandbox } from './support.js';

async function behindGateway(t: TestContext, options?: GatewayOptions) {
  const provider = await startSandbox(t);
  const store = await openStore(t, provider);
  const baton = await batonOn(t, store, provider);
  const gateway = await startGateway(t, baton.url, options);
  return { provider, store, baton, gateway, op: payments(provider) };
}

// The same assertions as test/client/http.test.ts, every call through a gateway at /baton/.
runContract('http behind a gateway at /baton/', async (t, store, provider) => {
  const baton = await batonOn(t, store, provider);
  const gateway = await startGateway(t, baton.url);
  return new HttpBatonClient({ baseUrl: gateway.url, token: baton.token });
});

test('a base URL with a path prefix: routes resolve under it, with or without the trailing slash', async (t) => {
  const { baton, gateway } = await behindGateway(t);
  for (const baseUrl of [gateway.url, gateway.url.replace(/\/$/, '')]) {
    const counts = await new HttpBatonClient({ baseUrl, token: baton.token }).counts();
    assert.equal(counts.total, 0);
  }
  assert.deepEqual(gateway.forwarded, ['/v1/counts', '/v1/counts']);
  assert.deepEqual(gateway.refused, [], 'nothing was sent beside the prefix');
  // Without the prefix the gateway has no such route: the prefix is what made it work.
  const root = gateway.url.replace(/\/baton\/$/, '');
  await expectCode(new HttpBatonClient({ baseUrl: root, token: baton.token }).counts(), 'not_found');
  assert.deepEqual(gateway.refused, ['/v1/counts']);
});

test('a base URL that cannot be a prefix is refused input_invalid, without echoing it', () => {
  const bad = [
    'not a url',
    'ftp://host/baton/',
    'http://user:s3cret@host/baton/',
    'http://host/baton/?tenant=a',
    'http://host/baton/#x',
  ];
  for (const baseUrl of bad) {
    assert.throws(
      () => new HttpBatonClient({ baseUrl, token: 't' }),
      (e: unknown) => isBatonError(e, 'input_invalid') && !e.message.includes('s3cret'),
      baseUrl,
    );
  }
  for (const timeoutMs of [0, -1, 1.5, Number.NaN, 2 ** 31]) {
    assert.throws(
      () => new HttpBatonClient({ baseUrl: 'http://127.0.0.1:1/', token: 't', timeoutMs }),
      (e: unknown) => isBatonError(e, 'input_invalid'),
      String(timeoutMs),
    );
  }
});

test('timeoutMs: a server that never answers is cut off client_timeout, per client and per call', async (t) => {
  const silent = await startSilent(t);
  const client = new HttpBatonClient({ baseUrl: silent.url, token: 't', timeoutMs: 200 });
  await assert.rejects(client.takeover('invoice-agent'), (e: unknown) => {
    assert.ok(isBatonError(e, 'client_timeout'), String(e));
    assert.equal(e.details['timeoutMs'], 200);
    assert.equal(e.details['safeToRetry'], false, 'takeover may have applied');
    assert.equal(e.retryable, true);
    return true;
  });
  // A call's own deadline overrides the client's (here a long one).
  const patient = new HttpBatonClient({ baseUrl: silent.url, token: 't', timeoutMs: 600_000 });
  await assert.rejects(patient.counts({ timeoutMs: 200 }), (e: unknown) => {
    assert.ok(isBatonError(e, 'client_timeout'), String(e));
    assert.equal(e.details['safeToRetry'], true);
    return true;
  });
  await expectCode(patient.counts({ timeoutMs: 0 }), 'input_invalid');
  assert.deepEqual(silent.received, ['POST /v1/lineages/invoice-agent/takeover', 'GET /v1/counts']);
});

test('timeoutMs covers the body: headers then a stalled body is client_timeout too', async (t) => {
  const stalled = await startSilent(t, 'stall-body');
  await expectCode(
    new HttpBatonClient({ baseUrl: stalled.url, token: 't' }).counts({ timeoutMs: 200 }),
    'client_timeout',
  );
});

test('signal: aborting a call in flight is client_aborted; an already aborted signal sends nothing', async (t) => {
  const silent = await startSilent(t);
  const client = new HttpBatonClient({ baseUrl: silent.url, token: 't' });
  const controller = new AbortController();
  const pending = client.getOccurrence('occ_1', { signal: controller.signal });
  while (silent.received.length === 0) await new Promise((resolve) => setImmediate(resolve));
  controller.abort();
  await assert.rejects(pending, (e: unknown) => {
    assert.ok(isBatonError(e, 'client_aborted'), String(e));
    assert.notEqual(e.details['sent'], false, 'it was sent: it may have applied');
    return true;
  });
  await assert.rejects(client.counts({ signal: controller.signal }), (e: unknown) => {
    assert.ok(isBatonError(e, 'client_aborted'), String(e));
    assert.equal(e.details['sent'], false);
    assert.equal(e.details['safeToRetry'], true);
    return true;
  });
  assert.deepEqual(silent.received, ['GET /v1/occurrences/occ_1'], 'the pre-aborted call never left');
});

test('perform with a signal aborted while create-and-enter is answered: unresolved, entry_unconfirmed, never sent', async (t) => {
  const controller = new AbortController();
  const { provider, baton, gateway, op } = await behindGateway(t, {
    // Baton applied the entry and answered; the caller aborts before the answer reaches it.
    onAnswer: (path) => {
      if (path.endsWith('/create-and-enter')) controller.abort();
    },
  });
  const client = new HttpBatonClient({ baseUrl: gateway.url, token: baton.token });
  const ex = await client.takeover('invoice-agent');
  const adapter = new CountingAdapter(provider);
  const r = await ex.perform(op('k-abort'), adapter, { signal: controller.signal });
  assert.deepEqual(
    [r.status, r.reason, r.errorCode, r.adapterCalls],
    ['unresolved', 'entry_unconfirmed', 'client_aborted', 0],
  );
  assert.equal(adapter.calls, 0, 'no ticket, no send');
  assert.equal(r.occurrenceId, null, 'the answer naming it was lost');
  assert.equal(
    (await client.listUnresolved('invoice-agent')).length,
    1,
    'the entry applied: the successor sees it in doubt (AOC-REQ-005)',
  );
  // With a signal already aborted nothing is sent: refused, and the same key stays entered once.
  const again = await ex.perform(op('k-abort-2'), adapter, { signal: controller.signal });
  assert.deepEqual([again.status, again.reason, again.occurrenceId], ['refused', 'client_aborted', null]);
  assert.equal(provider.sandbox.effects().length, 0);
});
