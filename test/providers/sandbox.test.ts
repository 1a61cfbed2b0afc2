import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/core/clock.js';
import { digestJcs } from '../../src/core/digest.js';
import { sandboxSignedString, verifySandboxSignature } from '../../src/providers/sandbox/index.js';
import {
  ACCOUNT,
  admin,
  checked,
  createPayment,
  get,
  paymentBody,
  startSandbox,
  readJson,
  type ListDoc,
} from './sandbox-support.js';

const HOUR = 3600 * 1000;

test('the same key and request replays the original response; the effect is applied once', async (t) => {
  const { sandbox, url, close } = await startSandbox();
  t.after(close);
  const body = paymentBody('inv-1');
  const first = await checked(sandbox, await createPayment(url, 'key-1', body), 'POST');
  assert.equal(first.status, 201);
  assert.equal(first.hmac.ok && first.ed25519.ok, true);
  assert.equal(first.json['status'], 'succeeded');
  assert.match(String(first.json['reference']), /^pay_/);
  assert.equal(first.json['request_digest'], digestJcs(body));
  for (const member of ['account', 'environment', 'idempotency_key', 'amount', 'observed_at']) {
    assert.ok(Object.hasOwn(first.json, member), member);
  }
  // Member order differs, JCS does not: still the same request.
  const reordered = { invoice: 'inv-1', payee: 'acme-supplies', currency: 'eur', amount: 1250 };
  for (const again of [body, reordered, body]) {
    const replay = await checked(sandbox, await createPayment(url, 'key-1', again), 'POST');
    assert.equal(replay.status, 201);
    assert.equal(replay.text, first.text, 'the original response, byte for byte');
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    assert.equal(replay.hmac.ok, true);
  }
  assert.equal(sandbox.effectCount('key-1'), 1);
  const oracle = await readJson<{ count: number; effects: { reference: string }[] }>(
    admin(url, 'GET', '/admin/effects/key-1'),
  );
  assert.equal(oracle.count, 1);
  assert.equal(oracle.effects[0]!.reference, first.json['reference']);
});

test('the same key with a different request is refused and applies nothing', async (t) => {
  const { sandbox, url, close } = await startSandbox();
  t.after(close);
  await createPayment(url, 'key-2', paymentBody('inv-2'));
  const variants = [
    paymentBody('inv-2', 9999),
    paymentBody('inv-other'),
    { ...paymentBody('inv-2'), memo: 'x' },
  ];
  for (const body of variants) {
    const res = await checked(sandbox, await createPayment(url, 'key-2', body), 'POST');
    assert.equal(res.status, 422);
    assert.equal(res.json['error'], 'idempotency_key_reused');
    assert.equal(res.hmac.ok, true);
  }
  assert.equal(sandbox.effectCount('key-2'), 1);
  t.diagnostic(`checked ${variants.length} conflicting requests`);
});

test('malformed requests are refused without an effect', async (t) => {
  const { sandbox, url, close } = await startSandbox();
  t.after(close);
  const cases: [string | undefined, unknown, number, string][] = [
    [undefined, paymentBody('inv'), 400, 'idempotency_key_missing'],
    ['has space', paymentBody('inv'), 400, 'invalid_request'],
    ['k', { ...paymentBody('inv'), amount: -1 }, 400, 'invalid_request'],
    ['k', { ...paymentBody('inv'), amount: 1.5 }, 400, 'invalid_request'],
    ['k', { ...paymentBody('inv'), currency: 'EURO' }, 400, 'invalid_request'],
    ['k', { amount: 1, currency: 'eur', payee: 'p' }, 400, 'invalid_request'],
    ['k', [1, 2], 400, 'invalid_request'],
    ['k', '{"amount":1,"amount":2,"currency":"eur","payee":"p","invoice":"i"}', 400, 'invalid_request'],
    ['k', '{"amount":', 400, 'invalid_request'],
  ];
  for (const [key, body, status, error] of cases) {
    const res = await checked(sandbox, await createPayment(url, key, body), 'POST');
    assert.equal(res.status, status, JSON.stringify(body));
    assert.equal(res.json['error'], error);
    assert.equal(res.hmac.ok, true, 'errors are signed too');
  }
  const other = await fetch(`${url}/v1/accounts/acct_nobody/payments`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': 'k' },
    body: JSON.stringify(paymentBody('inv')),
  });
  assert.equal(other.status, 404);
  assert.equal(((await other.json()) as { error: string }).error, 'account_not_found');
  assert.equal(sandbox.effects().length, 0);
  t.diagnostic(`checked ${cases.length + 1} refused requests`);
});

test('lookup by key and by reference: signed, bound to the path, honest not-found', async (t) => {
  const { sandbox, url, close } = await startSandbox();
  t.after(close);
  const created = await readJson(createPayment(url, 'key-3', paymentBody('inv-3')));
  const byKey = await checked(sandbox, await get(url, `/v1/accounts/${ACCOUNT}/payments/by-key/key-3`));
  const byRef = await checked(
    sandbox,
    await get(url, `/v1/accounts/${ACCOUNT}/payments/${created.reference}`),
  );
  for (const res of [byKey, byRef]) {
    assert.equal(res.status, 200);
    assert.equal(res.hmac.ok && res.ed25519.ok, true);
    assert.equal(res.json['reference'], created.reference);
    assert.equal(res.json['idempotency_key'], 'key-3');
    assert.equal(res.json['status'], 'succeeded');
  }
  // The signature binds the path: the same body presented as another lookup's answer fails.
  for (const path of [
    `/v1/accounts/${ACCOUNT}/payments/by-key/key-4`,
    `/v1/accounts/acct_b/payments/by-key/key-3`,
  ]) {
    const moved = verifySandboxSignature({
      header: byKey.headers.get('sandbox-signature'),
      signedString: sandboxSignedString({ method: 'GET', path, body: byKey.text }),
      pin: sandbox.pins(),
      nowMs: Date.now(),
    });
    assert.deepEqual(moved, { ok: false, reason: 'bad_signature' }, path);
  }
  const missing = await checked(
    sandbox,
    await get(url, `/v1/accounts/${ACCOUNT}/payments/by-key/never-sent`),
  );
  assert.equal(missing.status, 404);
  assert.equal(missing.json['error'], 'not_found');
  assert.equal(missing.json['idempotency_key'], 'never-sent');
  assert.equal(typeof missing.json['retention_horizon'], 'string');
  assert.equal(Object.hasOwn(missing.json, 'pruned'), false, 'absence is not a claim either way');
  assert.equal(missing.hmac.ok, true);
  const noRef = await get(url, `/v1/accounts/${ACCOUNT}/payments/pay_unknown`);
  assert.equal(noRef.status, 404);
  const elsewhere = await get(url, `/v1/accounts/acct_nobody/payments/${created.reference}`);
  assert.equal(elsewhere.status, 404);
});

test('listing pages with has_more and is complete only as a whole listing', async (t) => {
  const { sandbox, url, close } = await startSandbox();
  t.after(close);
  const refs: string[] = [];
  for (let i = 0; i < 5; i++)
    refs.push((await readJson(createPayment(url, `list-${i}`, paymentBody(`inv-${i}`)))).reference);
  const seen: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  for (;;) {
    const query = `?limit=2${cursor ? `&starting_after=${cursor}` : ''}`;
    const page = await checked(sandbox, await get(url, `/v1/accounts/${ACCOUNT}/payments${query}`));
    assert.equal(page.hmac.ok, true);
    pages += 1;
    const data = page.json['data'] as { reference: string }[];
    seen.push(...data.map((p) => p.reference));
    assert.equal(typeof page.json['retention_horizon'], 'string');
    assert.equal(page.json['complete'], false, 'a page of a longer listing is never complete');
    if (page.json['has_more'] !== true) break;
    assert.equal(data.length, 2);
    cursor = data.at(-1)!.reference;
  }
  assert.deepEqual(seen, refs);
  assert.equal(pages, 3);
  const whole = await readJson<ListDoc>(get(url, `/v1/accounts/${ACCOUNT}/payments?limit=100`));
  assert.equal(whole.has_more, false);
  assert.equal(whole.complete, true);
  for (const bad of ['limit=0', 'limit=101', 'limit=x', 'starting_after=pay_nope']) {
    assert.equal((await get(url, `/v1/accounts/${ACCOUNT}/payments?${bad}`)).status, 400, bad);
  }
});

test('retention: old records are pruned from the API, never from the effect ledger', async (t) => {
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const { sandbox, url, close } = await startSandbox({ clock, retentionMs: 24 * HOUR });
  t.after(close);
  const old = await readJson(createPayment(url, 'old-key', paymentBody('inv-old')));
  clock.advance(23 * HOUR);
  await createPayment(url, 'young-key', paymentBody('inv-young'));
  clock.advance(2 * HOUR);
  const gone = await checked(sandbox, await get(url, `/v1/accounts/${ACCOUNT}/payments/by-key/old-key`));
  assert.equal(gone.status, 404);
  assert.equal(gone.json['pruned'], true);
  assert.ok(Date.parse(String(gone.json['retention_horizon'])) > Date.parse(String(old.created_at)));
  const goneRef = await readJson(get(url, `/v1/accounts/${ACCOUNT}/payments/${old.reference}`));
  assert.equal(goneRef.pruned, true);
  const list = await readJson<ListDoc>(get(url, `/v1/accounts/${ACCOUNT}/payments`));
  assert.deepEqual(
    list.data.map((p) => p.idempotency_key),
    ['young-key'],
  );
  assert.equal(sandbox.effectCount('old-key'), 1, 'the effect happened; pruning does not undo it');
  // Beyond retention the provider no longer remembers the key: a retry is a second payment.
  const again = await createPayment(url, 'old-key', paymentBody('inv-old'));
  assert.equal(again.status, 201);
  assert.equal(sandbox.effectCount('old-key'), 2);
  // The admin clock hook and explicit prune behave the same way.
  await admin(url, 'POST', '/admin/clock', { advance_ms: 25 * HOUR });
  const pruned = await readJson<{ pruned: number }>(admin(url, 'POST', '/admin/prune'));
  assert.equal(pruned.pruned, 0, 'the clock move already pruned on its own tick');
  assert.equal((await get(url, `/v1/accounts/${ACCOUNT}/payments/by-key/young-key`)).status, 404);
});

test('a settle delay reports pending, then the terminal status', async (t) => {
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const { sandbox, url, close } = await startSandbox({ clock, settleDelayMs: 5_000 });
  t.after(close);
  const created = await readJson(createPayment(url, 'slow', paymentBody('inv-slow')));
  assert.equal(created.status, 'pending');
  assert.equal(sandbox.effectCount('slow'), 1, 'accepted for processing: the effect is applied');
  const before = await readJson(get(url, `/v1/accounts/${ACCOUNT}/payments/by-key/slow`));
  assert.equal(before.status, 'pending');
  clock.advance(5_000);
  const after = await readJson(get(url, `/v1/accounts/${ACCOUNT}/payments/by-key/slow`));
  assert.equal(after.status, 'succeeded');
  const replay = await readJson(createPayment(url, 'slow', paymentBody('inv-slow')));
  assert.equal(replay.status, 'pending', 'a replay is the original response, not a fresh lookup');
});

test('admin endpoints need the admin token', async (t) => {
  const { url, close } = await startSandbox();
  t.after(close);
  const paths: [string, string][] = [
    ['GET', '/admin/effects'],
    ['GET', '/admin/effects/k'],
    ['POST', '/admin/faults'],
    ['POST', '/admin/clock'],
    ['POST', '/admin/prune'],
    ['GET', '/admin/webhooks'],
    ['POST', '/admin/webhooks/replay'],
  ];
  for (const [method, path] of paths) {
    const none = await fetch(`${url}${path}`, { method });
    assert.equal(none.status, 401, `${method} ${path}`);
    const wrong = await fetch(`${url}${path}`, { method, headers: { authorization: 'Bearer nope' } });
    assert.equal(wrong.status, 401, `${method} ${path} with a wrong token`);
  }
  assert.equal((await admin(url, 'GET', '/admin/effects')).status, 200);
  t.diagnostic(`checked ${paths.length * 2} unauthorized calls`);
});
