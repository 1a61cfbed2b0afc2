/**
 * What only the HTTP client has: lost answers, foreign error pages, unreadable answers. A lost
 * answer to `enter` is the dangerous one: the entry applied, the ticket is gone, and perform must
 * neither call the adapter nor retry.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import {
  HttpBatonClient,
  type ExecutorAcknowledgement,
  type ProviderAdapter,
} from '../../src/client/index.js';
import { evidenceOnly } from '../../src/client/adapter.js';
import { isBatonError } from '../../src/core/errors.js';
import { expectCode } from './contract.js';
import { CountingAdapter } from './support.js';
import { recording, serveBaton } from './wire.js';

/** A fetch that forwards the request, lets Baton apply it, then loses the answer for matching paths. */
function losingAnswers(pattern: RegExp): typeof fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    const url = input instanceof Request ? input.url : input instanceof URL ? input.href : input;
    if (pattern.test(url)) {
      await response.arrayBuffer();
      throw new TypeError('fetch failed: socket closed');
    }
    return response;
  };
}

test('a lost answer to create-and-enter: entered, adapter never called, perform reports unresolved', async (t) => {
  const { provider, op, baseUrl, token } = await serveBaton(t);
  const client = new HttpBatonClient({ baseUrl, token, fetch: losingAnswers(/\/create-and-enter$/) });
  const ex = await client.takeover('invoice-agent');
  const adapter = new CountingAdapter(provider);
  const r = await ex.perform(op('k-lost'), adapter);
  assert.deepEqual(
    [r.status, r.reason, r.errorCode, r.occurrenceId, r.adapterCalls],
    ['unresolved', 'entry_unconfirmed', 'unavailable', null, 0],
  );
  const open = await client.listUnresolved('invoice-agent');
  assert.equal(open.length, 1, 'the lost call did enter');
  const again = await new HttpBatonClient({ baseUrl, token })
    .resume(ex.binding())
    .perform(op('k-lost'), adapter);
  assert.deepEqual(
    [again.status, again.reason, again.occurrenceId, again.adapterCalls],
    ['unresolved', 'existing_entered', open[0]?.id, 0],
  );
  assert.equal(adapter.calls, 0);
  assert.equal(provider.sandbox.effects().length, 0);
});

test('a lost answer to create is safe: repeating create finds the same occurrence', async (t) => {
  const { op, baseUrl, token } = await serveBaton(t);
  const lossy = new HttpBatonClient({ baseUrl, token, fetch: losingAnswers(/\/v1\/occurrences$/) });
  const lost = (await lossy.takeover('invoice-agent')).create(op('k-create'));
  await assert.rejects(
    lost,
    (e: unknown) => isBatonError(e, 'unavailable') && e.details['safeToRetry'] === true,
  );
  const client = new HttpBatonClient({ baseUrl, token });
  const ex = await client.takeover('invoice-agent');
  const open = await client.listOpen('invoice-agent');
  assert.equal(open.reserved.length, 1, 'the lost create did apply');
  const replay = await ex.create(op('k-create'));
  assert.deepEqual([replay.created, replay.occurrence.id], [false, open.reserved[0]?.id]);
});

test('a lost answer to acknowledge-and-settle: it applied; the repeat finds it settled and never resends', async (t) => {
  const { provider, op, baseUrl, token } = await serveBaton(t);
  const lossy = new HttpBatonClient({ baseUrl, token, fetch: losingAnswers(/\/acknowledge-and-settle$/) });
  const ex = await lossy.takeover('invoice-agent');
  const adapter = new CountingAdapter(provider);
  const r = await ex.perform(op('k-settle'), adapter);
  assert.deepEqual(
    [r.status, r.reason, r.errorCode, r.adapterCalls],
    ['unresolved', 'acknowledgement_not_recorded', 'unavailable', 1],
  );
  // It applied: the acknowledgement and the status source's signed answer are both in the evidence.
  const sources = (await lossy.getOccurrence(r.occurrenceId ?? '')).evidence
    .filter((e) => e.type === 'observation_recorded')
    .map((e) => (e.body as { observation: { source: string } }).observation.source);
  assert.deepEqual(sources, ['acknowledgement', 'by-key']);
  const again = await ex.perform(op('k-settle'), adapter);
  assert.deepEqual([again.status, again.reason, again.adapterCalls], ['succeeded', 'existing_resolved', 0]);
  assert.equal(adapter.calls, 1);
  assert.equal(provider.sandbox.effects().length, 1);
});

/** A fetch that counts the calls it carries, by method and path. */
function counting(calls: string[]): typeof fetch {
  return (input, init) => {
    const url = new URL(input instanceof Request ? input.url : input instanceof URL ? input.href : input);
    calls.push(`${init?.method ?? 'GET'} ${url.pathname}`);
    return fetch(input, init);
  };
}

test('perform makes two calls to Baton per lifecycle: create-and-enter, acknowledge-and-settle', async (t) => {
  const { provider, op, baseUrl, token } = await serveBaton(t);
  const calls: string[] = [];
  const client = new HttpBatonClient({ baseUrl, token, fetch: counting(calls) });
  const ex = await client.takeover('invoice-agent');
  calls.length = 0;
  const adapter = new CountingAdapter(provider);
  const r = await ex.perform(op('k-two'), adapter);
  assert.deepEqual([r.status, r.adapterCalls], ['succeeded', 1]);
  assert.deepEqual(calls, [
    'POST /v1/occurrences/create-and-enter',
    `POST /v1/occurrences/${r.occurrenceId ?? ''}/acknowledge-and-settle`,
  ]);
  // A replay is one call: the creation binding answers with the resolved original, no ticket.
  calls.length = 0;
  const again = await ex.perform(op('k-two'), adapter);
  assert.deepEqual([again.status, again.reason, calls.length], ['succeeded', 'existing_resolved', 1]);
  assert.equal(provider.sandbox.effects().length, 1);
});

test('errors keep their code; a non-problem page and an unreachable server map by status', async (t) => {
  const { baseUrl, token } = await serveBaton(t);
  await expectCode(new HttpBatonClient({ baseUrl, token: 'btk.nope' }).counts(), 'unauthenticated');
  await assert.rejects(new HttpBatonClient({ baseUrl, token }).getOccurrence('occ_nope'), (e: unknown) => {
    assert.ok(isBatonError(e, 'occurrence_not_found'));
    assert.deepEqual([e.status, e.details['status'], e.details['safeToRetry']], [404, 404, true]);
    return true;
  });
  const proxy = createServer((_req, res) =>
    res.writeHead(502, { 'content-type': 'text/html' }).end('<h1>bad gateway'),
  );
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => proxy.close(() => resolve())));
  const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  await expectCode(new HttpBatonClient({ baseUrl: proxyUrl, token }).counts(), 'unavailable');
  const closed = await new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
  await assert.rejects(
    new HttpBatonClient({ baseUrl: `http://127.0.0.1:${closed}`, token }).takeover('x'),
    (e: unknown) => {
      assert.ok(isBatonError(e, 'unavailable'));
      assert.equal(e.details['safeToRetry'], false, 'takeover is not safe to retry');
      return true;
    },
  );
});

test('an answer that is not what the route promises is baton_response_invalid', async (t) => {
  const odd = createServer((req, res) => {
    const body = req.url === '/v1/counts' ? '{"total":1,"total":2}' : '{"unexpected":true}';
    res.writeHead(200, { 'content-type': 'application/json' }).end(body);
  });
  await new Promise<void>((resolve) => odd.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => odd.close(() => resolve())));
  const client = new HttpBatonClient({
    baseUrl: `http://127.0.0.1:${(odd.address() as AddressInfo).port}`,
    token: 't',
  });
  await expectCode(client.counts(), 'baton_response_invalid'); // duplicate member: strict parse refuses it
  await expectCode(client.listOpen('l'), 'baton_response_invalid'); // missing members
  t.diagnostic('checked 2 malformed answers');
});

test('a redirect from the Baton base URL is never followed: no ticket, no adapter call, nothing re-posted', async (t) => {
  // What a forged create-and-enter answer looks like: enough for perform to reach the adapter if it
  // were trusted. The second origin answers it; the redirect's own body carries it too.
  const forged = JSON.stringify({
    occurrence: { id: 'occ_forged', phase: 'entered' },
    created: true,
    ticket: { occurrence: { id: 'occ_forged' }, request: { amount: 1 }, nativeKey: 'k' },
  });
  const json = { 'content-type': 'application/json' };
  const elsewhere = await recording(t, (res) => res.writeHead(200, json).end(forged));
  const baton = await recording(t, (res) =>
    res.writeHead(307, { ...json, location: `${elsewhere.url}/v1/occurrences/create-and-enter` }).end(forged),
  );
  const binding = { lineage: 'invoice-agent', generation: 1, credential: 'bec.x' };
  // The caller's own fetch (globalThis.fetch follows redirects by default) and the default pool.
  for (const fetch of [globalThis.fetch, undefined]) {
    const client = new HttpBatonClient({ baseUrl: baton.url, token: 't', ...(fetch && { fetch }) });
    let calls = 0;
    const r = await client.resume(binding).perform(
      {
        creationKey: 'k-redirect',
        provider: { profileId: 'p', profileVersion: '1' },
        request: {},
        authority: { id: 'payouts', amount: 1 },
      },
      () => Promise.resolve({ status: 'succeeded', calls: ++calls }),
    );
    assert.deepEqual(
      [r.status, r.reason, r.errorCode, r.occurrenceId, r.adapterCalls, calls],
      ['unresolved', 'entry_unconfirmed', 'baton_response_invalid', null, 0, 0],
    );
  }
  assert.deepEqual(baton.received, Array(2).fill('POST /v1/occurrences/create-and-enter'));
  assert.deepEqual(elsewhere.received, [], 'the command was never re-posted to the Location');
});

test('an abort during the provider call does not lose its answer: acknowledge-and-settle is still sent', async (t) => {
  const { provider, op, baseUrl, token } = await serveBaton(t);
  const calls: string[] = [];
  const client = new HttpBatonClient({ baseUrl, token, fetch: counting(calls) });
  const ex = await client.takeover('invoice-agent');
  const controller = new AbortController();
  const inner = new CountingAdapter(provider);
  // The provider applies the payment and answers; the caller gives up just as the answer arrives.
  const adapter: ProviderAdapter = {
    async send(ticket) {
      const sent = await inner.send(ticket);
      controller.abort();
      return sent;
    },
  };
  calls.length = 0;
  const r = await ex.perform(op('k-abort-send'), adapter, { signal: controller.signal });
  assert.deepEqual([r.status, r.reason, r.errorCode, r.adapterCalls], ['succeeded', undefined, undefined, 1]);
  assert.equal(calls.at(-1), `POST /v1/occurrences/${r.occurrenceId ?? ''}/acknowledge-and-settle`);
  const sources = (await client.getOccurrence(r.occurrenceId ?? '')).evidence
    .filter((e) => e.type === 'observation_recorded')
    .map((e) => (e.body as { observation: { source: string } }).observation.source);
  assert.deepEqual(sources, ['acknowledgement', 'by-key'], 'the answer was recorded with the status pass');
  assert.equal(provider.sandbox.effects().length, 1);
});

/** A fetch that fails matching calls before they leave: Baton never sees them. */
function dropping(pattern: RegExp): typeof fetch {
  return (input, init) => {
    const url = input instanceof Request ? input.url : input instanceof URL ? input.href : input;
    if (pattern.test(url)) return Promise.reject(new TypeError('fetch failed: connection reset'));
    return fetch(input, init);
  };
}

test('an acknowledgement Baton may not hold comes back in the result, for the caller to record', async (t) => {
  const { provider, op, baseUrl, token } = await serveBaton(t);
  const client = new HttpBatonClient({ baseUrl, token, fetch: dropping(/\/acknowledge-and-settle$/) });
  const ex = await client.takeover('invoice-agent');
  const reported: ExecutorAcknowledgement[] = [];
  const inner = new CountingAdapter(provider);
  const adapter: ProviderAdapter = {
    async send(ticket) {
      const sent = await inner.send(ticket);
      reported.push(sent.acknowledgement);
      return sent;
    },
  };
  const r = await ex.perform(op('k-unrecorded'), adapter);
  assert.deepEqual(
    [r.status, r.reason, r.errorCode, r.adapterCalls],
    ['unresolved', 'acknowledgement_not_recorded', 'unavailable', 1],
  );
  const [ack] = reported;
  assert.ok(ack !== undefined && r.acknowledgement !== undefined);
  assert.deepEqual(r.acknowledgement, evidenceOnly(ack), 'the answer, without any verdict of the adapter');
  const evidence = async () =>
    (await client.getOccurrence(r.occurrenceId ?? '')).evidence.filter(
      (e) => e.type === 'observation_recorded',
    ).length;
  assert.equal(await evidence(), 0, 'Baton never received it');
  const recorded = await ex.acknowledge(r.acknowledgement);
  assert.equal(recorded.missingKnowledge, 'unauthenticated');
  assert.equal(await evidence(), 1);
  assert.equal(provider.sandbox.effects().length, 1);
});
