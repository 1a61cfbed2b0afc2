/**
 * Answers perform must not act on: a create-and-enter answer whose ticket is malformed never
 * reaches the adapter (AOC-REQ-010: never send without a ticket), and after the provider was called
 * a malformed acknowledge-and-settle answer, or an adapter answer that is not an acknowledgement,
 * ends `unresolved` with what perform holds — never a TypeError that loses the provider's answer
 * (AOC-REQ-004).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { HttpBatonClient, type ProviderAdapter } from '../../src/client/index.js';
import { isBatonError } from '../../src/core/errors.js';
import { CountingAdapter } from './support.js';
import { misbehavingGateway, recording, serveBaton } from './wire.js';

const view = { id: 'occ_forged', phase: 'entered', effect: 'unresolved', conflict: false, unresolved: true };
const goodTicket = {
  occurrence: view,
  request: { amount: 1 },
  requestDigest: 'sha256:x',
  nativeKey: 'nk',
  nativeKeyHeader: 'Idempotency-Key',
  profile: { id: 'p', version: '1', digest: 'sha256:y' },
};
const op = {
  creationKey: 'k',
  provider: { profileId: 'p', profileVersion: '1' },
  request: {},
  authority: { id: 'payouts', amount: 1 },
};

const malformed: readonly (readonly [string, Record<string, unknown>])[] = [
  ['a ticket with only a request', { occurrence: view, created: true, ticket: { request: { amount: 1 } } }],
  [
    'a ticket without its native key',
    { occurrence: view, created: true, ticket: { ...goodTicket, nativeKey: undefined } },
  ],
  [
    'a ticket whose request is not an object',
    { occurrence: view, created: true, ticket: { ...goodTicket, request: 'x' } },
  ],
  [
    'a ticket for another occurrence',
    { occurrence: { ...view, id: 'occ_other' }, created: true, ticket: goodTicket },
  ],
  ['an occurrence without a phase', { occurrence: { id: 'occ_forged' }, created: true, ticket: goodTicket }],
  ['an occurrence that is null', { occurrence: null, created: true, ticket: null }],
];

for (const [name, body] of malformed) {
  test(`create-and-enter answering ${name} is baton_response_invalid; the adapter is never called`, async (t) => {
    const server = await recording(t, (res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body)),
    );
    const ex = new HttpBatonClient({ baseUrl: server.url, token: 't' }).resume({
      lineage: 'l',
      generation: 1,
      credential: 'bec.x',
    });
    await assert.rejects(ex.createAndEnter(op), (e: unknown) => isBatonError(e, 'baton_response_invalid'));
    let calls = 0;
    const r = await ex.perform(op, () => Promise.resolve({ calls: ++calls }));
    assert.deepEqual(
      [r.status, r.reason, r.errorCode, r.occurrenceId, r.adapterCalls, calls],
      ['unresolved', 'entry_unconfirmed', 'baton_response_invalid', null, 0, 0],
    );
  });
}

test('the same well-formed forged ticket does reach the adapter (the check above is what stops it)', async (t) => {
  const body = { occurrence: view, created: true, ticket: goodTicket };
  const server = await recording(t, (res, req) => {
    const ok = req.url?.endsWith('/create-and-enter') === true;
    res.writeHead(ok ? 200 : 503, { 'content-type': 'application/json' }).end(JSON.stringify(ok ? body : {}));
  });
  const ex = new HttpBatonClient({ baseUrl: server.url, token: 't' }).resume({
    lineage: 'l',
    generation: 1,
    credential: 'bec.x',
  });
  let key: unknown;
  const r = await ex.perform(op, (ticket) => Promise.resolve((key = ticket.nativeKey)));
  assert.deepEqual(
    [r.status, r.reason, r.adapterCalls, key],
    ['unresolved', 'acknowledgement_not_recorded', 1, 'nk'],
  );
});

test('a 200 acknowledge-and-settle answer with occurrence null keeps the acknowledgement, unresolved', async (t) => {
  const { provider, op: payment, baseUrl, token } = await serveBaton(t);
  const body = JSON.stringify({ occurrence: null, report: {}, missingKnowledge: null, acknowledgement: {} });
  const gateway = await misbehavingGateway(t, baseUrl, (path) =>
    path.endsWith('/acknowledge-and-settle') ? { status: 200, type: 'application/json', body } : undefined,
  );
  const ex = await new HttpBatonClient({ baseUrl: gateway.url, token }).takeover('invoice-agent');
  const adapter = new CountingAdapter(provider);
  const r = await ex.perform(payment('k-settle-null'), adapter);
  assert.deepEqual(
    [r.status, r.reason, r.errorCode, r.adapterCalls, adapter.calls],
    ['unresolved', 'acknowledgement_not_recorded', 'baton_response_invalid', 1, 1],
  );
  assert.equal(r.acknowledgement?.occurrenceId, r.occurrenceId);
  assert.equal(r.occurrence?.phase, 'entered');
});

for (const [name, answer] of [
  ['{}', {}],
  ['null', null],
  [
    'an acknowledgement without observedAt',
    { acknowledgement: { occurrenceId: 'x', result: 'unavailable', carried: {} } },
  ],
] as const) {
  test(`an adapter answering ${name} is a typed adapter failure, entered and in doubt`, async (t) => {
    const { op: payment, baseUrl, token } = await serveBaton(t);
    const client = new HttpBatonClient({ baseUrl, token });
    const ex = await client.takeover('invoice-agent');
    let calls = 0;
    const adapter: ProviderAdapter = {
      send: () => {
        calls += 1;
        return Promise.resolve(answer as never);
      },
    };
    const r = await ex.perform(payment(`k-ack-${calls}-${name.length}`), adapter);
    assert.deepEqual(
      [r.status, r.reason, r.errorCode, r.adapterCalls, calls],
      ['unresolved', 'adapter_failed', 'provider_response_invalid', 1, 1],
    );
    assert.ok(r.occurrenceId !== null);
    assert.equal((await client.getOccurrence(r.occurrenceId)).occurrence.phase, 'entered');
  });
}
