import { test } from 'node:test';
import assert from 'node:assert/strict';
import { waitUntil } from '../support/wait.js';
import {
  ACCOUNT,
  admin,
  checked,
  createPayment,
  get,
  paymentBody,
  startSandbox,
  readJson,
} from './sandbox-support.js';

const FAULT = 'sandbox-fault';
const byKey = (key: string): string => `/v1/accounts/${ACCOUNT}/payments/by-key/${key}`;

test('drop_response_after_apply: the socket closes unanswered, the effect is applied once', async (t) => {
  const { sandbox, url, close } = await startSandbox();
  t.after(close);
  await assert.rejects(
    createPayment(url, 'drop-1', paymentBody('inv'), { [FAULT]: 'drop_response_after_apply' }),
    (error) => {
      assert.ok(error instanceof TypeError, 'fetch fails: no HTTP response at all');
      return true;
    },
  );
  assert.equal(sandbox.effectCount('drop-1'), 1);
  const retry = await checked(sandbox, await createPayment(url, 'drop-1', paymentBody('inv')), 'POST');
  assert.equal(retry.status, 201);
  assert.equal(
    retry.headers.get('idempotent-replayed'),
    'true',
    'the retry learns the outcome, it does not redo it',
  );
  assert.equal(sandbox.effectCount('drop-1'), 1);
});

test('error_500_after_apply: a signed 500, and the effect really applied once', async (t) => {
  const { sandbox, url, close } = await startSandbox();
  t.after(close);
  const res = await checked(
    sandbox,
    await createPayment(url, 'e500', paymentBody('inv'), { [FAULT]: 'error_500_after_apply' }),
    'POST',
  );
  assert.equal(res.status, 500);
  assert.equal(res.json['error'], 'internal_error');
  assert.equal(res.hmac.ok, true);
  assert.equal(sandbox.effectCount('e500'), 1);
  const status = await readJson(get(url, byKey('e500')));
  assert.equal(status.status, 'succeeded');
  await createPayment(url, 'e500', paymentBody('inv'));
  assert.equal(sandbox.effectCount('e500'), 1);
});

test('delay: the key is in flight — lookups find nothing yet, a concurrent retry is refused', async (t) => {
  const { sandbox, url, close } = await startSandbox();
  t.after(close);
  const slow = createPayment(url, 'slow-1', paymentBody('inv'), { [FAULT]: 'delay:1000' });
  // Wait (without timing anything) until the sandbox holds the key in flight.
  await waitUntil(
    'the sandbox to hold slow-1 in flight',
    async () =>
      (await readJson<{ in_flight: boolean }>(admin(url, 'GET', '/admin/effects/slow-1'))).in_flight,
    { running: slow, pollMs: 1 },
  );
  const early = await get(url, byKey('slow-1'));
  assert.equal(early.status, 404, 'not found while in flight: absence does not prove non-entry');
  const racer = await createPayment(url, 'slow-1', paymentBody('inv'));
  assert.equal(racer.status, 409);
  assert.equal(((await racer.json()) as { error: string }).error, 'idempotency_key_in_use');
  assert.equal(sandbox.effectCount('slow-1'), 0, 'nothing applied yet');
  assert.equal((await slow).status, 201);
  assert.equal(sandbox.effectCount('slow-1'), 1);
});

test('unsigned and bad_signature answers fail verification; other_account verifies but claims another account', async (t) => {
  const { sandbox, url, close } = await startSandbox({ otherAccount: 'acct_mallory' });
  t.after(close);
  await createPayment(url, 'sig-1', paymentBody('inv'));
  const unsigned = await checked(sandbox, await get(url, byKey('sig-1'), { [FAULT]: 'unsigned' }));
  assert.equal(unsigned.status, 200);
  assert.equal(unsigned.headers.get('sandbox-signature'), null);
  assert.equal(unsigned.headers.get('sandbox-signature-ed25519'), null);
  assert.deepEqual(
    [unsigned.hmac, unsigned.ed25519],
    [
      { ok: false, reason: 'unsigned' },
      { ok: false, reason: 'unsigned' },
    ],
  );
  const bad = await checked(sandbox, await get(url, byKey('sig-1'), { [FAULT]: 'bad_signature' }));
  assert.ok(bad.headers.get('sandbox-signature'));
  assert.deepEqual(
    [bad.hmac, bad.ed25519],
    [
      { ok: false, reason: 'bad_signature' },
      { ok: false, reason: 'bad_signature' },
    ],
  );
  const other = await checked(sandbox, await get(url, byKey('sig-1'), { [FAULT]: 'other_account' }));
  assert.equal(other.json['account'], 'acct_mallory');
  assert.equal(
    other.hmac.ok && other.ed25519.ok,
    true,
    'authentic, yet about another account: binding must catch it',
  );
  const created = await checked(
    sandbox,
    await createPayment(url, 'sig-2', paymentBody('i'), { [FAULT]: 'other_account' }),
    'POST',
  );
  assert.equal(created.json['account'], 'acct_mallory');
  assert.equal(sandbox.effectCount('sig-2', ACCOUNT), 1);
});

test('conflicting_status: lookups alternate between two terminal statuses', async (t) => {
  const { sandbox, url, close } = await startSandbox();
  t.after(close);
  const created = await readJson(
    createPayment(url, 'flip', paymentBody('inv'), { [FAULT]: 'conflicting_status' }),
  );
  const seen: string[] = [];
  for (let i = 0; i < 3; i++) {
    seen.push((await readJson(get(url, byKey('flip')))).status);
    seen.push((await readJson(get(url, `/v1/accounts/${ACCOUNT}/payments/${created.reference}`))).status);
  }
  assert.deepEqual(seen, ['succeeded', 'failed', 'succeeded', 'failed', 'succeeded', 'failed']);
  assert.equal(sandbox.effectCount('flip'), 1);
});

test('status_changes_later: failed then succeeded, or pending then succeeded, after N lookups', async (t) => {
  const { sandbox, url, close } = await startSandbox();
  t.after(close);
  const cases: [string, string[]][] = [
    ['status_changes_later:2', ['failed', 'failed', 'succeeded', 'succeeded']],
    ['status_changes_later:pending:3', ['pending', 'pending', 'pending', 'succeeded']],
    ['status_changes_later', ['failed', 'succeeded', 'succeeded', 'succeeded']],
  ];
  for (const [i, [fault, expected]] of cases.entries()) {
    const key = `later-${i}`;
    const created = await readJson(createPayment(url, key, paymentBody('inv'), { [FAULT]: fault }));
    assert.equal(created.status, expected[0]);
    const seen: string[] = [];
    for (let n = 0; n < expected.length; n++) seen.push((await readJson(get(url, byKey(key)))).status);
    assert.deepEqual(seen, expected, fault);
    assert.equal(sandbox.effectCount(key), 1);
  }
  t.diagnostic(`checked ${cases.length} status sequences`);
});

test('fail_terminal applied the effect; canceled_before_processing applied none', async (t) => {
  const { sandbox, url, close } = await startSandbox();
  t.after(close);
  const failed = await readJson(
    createPayment(url, 'fail-1', paymentBody('inv'), { [FAULT]: 'fail_terminal' }),
  );
  assert.equal(failed.status, 'failed');
  assert.equal(failed.failure_code, 'processing_error');
  assert.equal(sandbox.effectCount('fail-1'), 1, 'a generic failure is not proof of no effect');
  const canceled = await readJson(
    createPayment(url, 'cancel-1', paymentBody('inv'), { [FAULT]: 'canceled_before_processing' }),
  );
  assert.equal(canceled.status, 'canceled');
  assert.equal(canceled.cancellation_reason, 'canceled_before_processing');
  assert.equal(sandbox.effectCount('cancel-1'), 0);
  const looked = await readJson(get(url, byKey('cancel-1')));
  assert.equal(looked.status, 'canceled');
  const conflicting = await createPayment(url, 'both', paymentBody('inv'), {
    [FAULT]: 'fail_terminal, conflicting_status',
  });
  assert.equal(conflicting.status, 400, 'two status faults at once are refused');
  assert.equal(sandbox.effectCount('both'), 0);
});

test('admin fault rules: by key, next and all, consumed only by requests they apply to', async (t) => {
  const { sandbox, url, close } = await startSandbox();
  t.after(close);
  assert.equal(
    (await admin(url, 'POST', '/admin/faults', { key: 'ak-1', fault: 'fail_terminal' })).status,
    201,
  );
  assert.equal(
    (await admin(url, 'POST', '/admin/faults', { target: 'next', fault: 'unsigned', count: 2 })).status,
    201,
  );
  // A lookup does not consume a payment fault, but does consume a transport fault.
  const l1 = await get(url, byKey('ak-1'));
  assert.equal(l1.headers.get('sandbox-signature'), null);
  const p1 = await createPayment(url, 'ak-1', paymentBody('inv'));
  assert.equal(p1.headers.get('sandbox-signature'), null, 'second use of the next:2 rule');
  assert.equal(((await p1.json()) as { status: string }).status, 'failed', 'the key rule hit its payment');
  const p2 = await createPayment(url, 'ak-2', paymentBody('inv'));
  assert.ok(p2.headers.get('sandbox-signature'), 'rules are used up');
  assert.equal(((await p2.json()) as { status: string }).status, 'succeeded');
  await admin(url, 'POST', '/admin/faults', { target: 'all', fault: 'other_account' });
  for (const key of ['ak-3', 'ak-4']) {
    const res = await createPayment(url, key, paymentBody('inv'));
    assert.equal(((await res.json()) as { account: string }).account, 'acct_other');
  }
  const rules = await readJson<{ rules: { remaining: number | null }[] }>(admin(url, 'GET', '/admin/faults'));
  assert.equal(rules.rules.length, 1);
  assert.equal(rules.rules[0]?.remaining, null);
  assert.equal((await readJson<{ cleared: number }>(admin(url, 'DELETE', '/admin/faults'))).cleared, 1);
  const clean = await checked(sandbox, await get(url, byKey('ak-4')));
  assert.equal(clean.json['account'], ACCOUNT);
  sandbox.addFault({ key: 'ak-5' }, 'drop_response_after_apply');
  await assert.rejects(createPayment(url, 'ak-5', paymentBody('inv')));
  assert.equal(sandbox.effectCount('ak-5'), 1);
  const refused: unknown[] = [
    { target: 'sometimes', fault: 'unsigned' },
    { key: 'k', target: 'next', fault: 'unsigned' },
    { target: 'next', fault: 'explode' },
    { target: 'next', fault: 'delay:abc' },
    { target: 'next', fault: 'unsigned', count: 0 },
  ];
  for (const body of refused)
    assert.equal((await admin(url, 'POST', '/admin/faults', body)).status, 400, JSON.stringify(body));
  t.diagnostic(`checked ${refused.length} refused fault rules`);
});

test('fault headers: unknown faults, and payment faults on a lookup, are refused', async (t) => {
  const { url, close } = await startSandbox();
  t.after(close);
  for (const fault of ['explode', 'delay', 'delay:999999', 'unsigned:1', 'status_changes_later:x']) {
    const res = await createPayment(url, 'hdr', paymentBody('inv'), { [FAULT]: fault });
    assert.equal(res.status, 400, fault);
  }
  assert.equal((await get(url, byKey('hdr'), { [FAULT]: 'fail_terminal' })).status, 400);
  assert.equal(
    (await get(url, byKey('hdr'), { [FAULT]: 'delay;10' })).status,
    404,
    "';' also separates a parameter",
  );
});
