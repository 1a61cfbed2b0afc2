/**
 * A call the client cannot build is refused before anything is sent: `input_invalid` with
 * `details.sent: false`, and perform reports `refused` (nothing was sent by this call) — never a
 * lost answer (`unavailable`, `entry_unconfirmed`) about a request that never left the process.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  AdminClient,
  HarnessClient,
  HttpBatonClient,
  InProcessBatonClient,
  OccurrencesQuery,
  type Operation,
} from '../../src/client/index.js';
import { isBatonError } from '../../src/core/errors.js';
import { openStore, payments, startSandbox } from './support.js';
import { recording } from './wire.js';

const notSent = (e: unknown): boolean => isBatonError(e, 'input_invalid') && e.details['sent'] === false;

test('a token or credential with a trailing newline is refused at construction, never echoed', () => {
  const baseUrl = 'http://127.0.0.1:1';
  const secret = 'btk.secret-value\n';
  const refused = (make: () => unknown): void =>
    assert.throws(make, (e: unknown) => {
      assert.ok(notSent(e), String(e));
      assert.ok(!(e as Error).message.includes('secret-value'), 'the token is not in the message');
      return true;
    });
  refused(() => new HttpBatonClient({ baseUrl, token: secret }));
  refused(() => new AdminClient({ baseUrl, token: secret }));
  refused(() => new OccurrencesQuery({ baseUrl, token: 'btk.a b' }));
  refused(() => new HarnessClient({ baseUrl, credential: 'bec.é' }));
  const client = new HttpBatonClient({ baseUrl, token: 'btk.ok' });
  refused(() => client.resume({ lineage: 'l', generation: 1, credential: 'bec.secret-value\r\n' }));
});

const operation = (request: Record<string, unknown>): Operation =>
  ({
    creationKey: 'k-unsendable',
    provider: { profileId: 'p', profileVersion: '1' },
    request,
    authority: { id: 'payouts', amount: 1 },
  }) as Operation;

test('a BigInt or a cycle in the request: input_invalid, sent: false; perform refused, nothing sent', async (t) => {
  const server = await recording(t, (res) => res.writeHead(500).end());
  const ex = new HttpBatonClient({ baseUrl: server.url, token: 't' }).resume({
    lineage: 'l',
    generation: 1,
    credential: 'bec.x',
  });
  const cycle: Record<string, unknown> = {};
  cycle['self'] = cycle;
  for (const request of [{ amount: 10n }, { nested: cycle }]) {
    await assert.rejects(ex.createAndEnter(operation(request)), notSent);
    let calls = 0;
    const r = await ex.perform(operation(request), () => Promise.resolve({ calls: ++calls }));
    assert.deepEqual(
      [r.status, r.reason, r.errorCode, r.occurrenceId, r.adapterCalls, calls],
      ['refused', 'input_invalid', 'input_invalid', null, 0, 0],
    );
  }
  assert.deepEqual(server.received, [], 'nothing reached the server');
});

test('a credential Baton handed over that cannot travel is refused at the call, not lost', async (t) => {
  // NOT Baton: a server whose takeover answer carries a credential with a newline.
  const server = await recording(t, (res, req) => {
    const body = req.url?.endsWith('/takeover')
      ? {
          lineage: 'l',
          generation: 2,
          credential: 'bec.x\n',
          held: [],
          heldMore: false,
          reserved: [],
          unresolved: [],
        }
      : {};
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  const ex = await new HttpBatonClient({ baseUrl: server.url, token: 't' }).takeover('l');
  const r = await ex.perform(operation({ amount: 1 }), () => Promise.resolve({}));
  assert.deepEqual([r.status, r.errorCode, r.adapterCalls], ['refused', 'input_invalid', 0]);
  await assert.rejects(ex.harness.get('wi_1'), notSent);
  assert.deepEqual(server.received, ['POST /v1/lineages/l/takeover'], 'only the takeover was sent');
});

test('a bad per-call timeoutMs is input_invalid with sent: false, safeToRetry: true; nothing is sent', async (t) => {
  const server = await recording(t, (res) => res.writeHead(500).end());
  const client = new HttpBatonClient({ baseUrl: server.url, token: 't' });
  const ex = client.resume({ lineage: 'l', generation: 1, credential: 'bec.x' });
  for (const timeoutMs of [0, -1, 1.5, 2 ** 31]) {
    await assert.rejects(client.counts({ timeoutMs }), (e: unknown) => {
      assert.ok(notSent(e), String(e));
      assert.equal((e as { details: Record<string, unknown> }).details['safeToRetry'], true);
      return true;
    });
    await assert.rejects(client.getOccurrence('occ_x', { timeoutMs }), notSent);
    // A chain read (every page under one deadline, src/client/chain-pages.ts) checks it the same way.
    await assert.rejects(
      new HarnessClient({ baseUrl: server.url, credential: 'bec.x' }).get('wi_1', { timeoutMs }),
      notSent,
    );
    await assert.rejects(ex.createAndEnter(operation({ amount: 1 }), undefined, { timeoutMs }), notSent);
    let calls = 0;
    const r = await ex.perform(operation({ amount: 1 }), () => Promise.resolve({ calls: ++calls }), {
      timeoutMs,
    });
    assert.deepEqual(
      [r.status, r.reason, r.errorCode, r.occurrenceId, r.adapterCalls, calls],
      ['refused', 'input_invalid', 'input_invalid', null, 0, 0],
    );
  }
  assert.deepEqual(server.received, [], 'nothing reached the server');
});

test('in process, a BigInt request is a typed refusal too: nothing created, nothing sent', async (t) => {
  const provider = await startSandbox(t);
  const store = await openStore(t, provider);
  const client = new InProcessBatonClient({ service: store.service });
  const ex = await client.takeover('invoice-agent');
  const op = payments(provider)('k-bigint');
  let calls = 0;
  const r = await ex.perform({ ...op, request: { ...op.request, amount: 10n } } as unknown as Operation, () =>
    Promise.resolve({ calls: ++calls }),
  );
  // The in-process twin refuses it while canonicalizing (JCS has no BigInt), before any create.
  assert.deepEqual(
    [r.status, r.errorCode, r.occurrenceId, r.adapterCalls, calls],
    ['refused', 'jcs_unsupported_value', null, 0, 0],
  );
  assert.equal((await client.counts()).total, 0);
});
