import { test } from 'node:test';
import assert from 'node:assert/strict';
import { digestJcs } from '../../src/core/digest.js';
import {
  sandboxSignedString,
  verifySandboxSignature,
  type SandboxProvider,
  type SandboxVerification,
} from '../../src/providers/sandbox/index.js';
import {
  ACCOUNT,
  admin,
  createPayment,
  get,
  paymentBody,
  startReceiver,
  startSandbox,
  type Received,
  readJson,
} from './sandbox-support.js';

function verifyHook(sandbox: SandboxProvider, hook: Received, body = hook.body): SandboxVerification[] {
  const signedString = sandboxSignedString({ method: 'POST', path: hook.path, body });
  return (['sandbox-signature', 'sandbox-signature-ed25519'] as const).map((name) =>
    verifySandboxSignature({
      header: hook.headers[name] as string | undefined,
      signedString,
      pin: sandbox.pins(),
      nowMs: Date.now(),
    }),
  );
}

interface Delivery {
  result: string;
  status?: number;
  error?: string;
}
interface WebhookLog {
  events: { deliveries: Delivery[] }[];
}

const events = (hooks: Received[]) =>
  hooks.map((h) => JSON.parse(h.body) as { type: string; data: Record<string, unknown> });

test('a payment status event reaches a real receiver, signed and bound to the payment', async (t) => {
  const receiver = await startReceiver();
  const { sandbox, url, close } = await startSandbox({
    webhookUrls: [`${receiver.url}/hooks/sandbox?src=1`],
  });
  t.after(async () => {
    await close();
    await receiver.close();
  });
  const body = paymentBody('inv-hook');
  const created = await readJson(createPayment(url, 'hook-1', body));
  await sandbox.webhooksIdle();
  assert.equal(receiver.received.length, 1);
  const hook = receiver.received[0]!;
  assert.equal(hook.path, '/hooks/sandbox?src=1');
  assert.deepEqual(
    verifyHook(sandbox, hook).map((v) => v.ok),
    [true, true],
  );
  const [event] = events(receiver.received);
  assert.equal(event!.type, 'payment.succeeded');
  const data = event!.data;
  assert.equal(data['account'], ACCOUNT);
  assert.equal(data['environment'], 'sandbox');
  assert.equal(data['idempotency_key'], 'hook-1');
  assert.equal(data['reference'], created.reference);
  assert.equal(data['status'], 'succeeded');
  assert.equal(data['amount'], body['amount']);
  assert.equal(data['request_digest'], digestJcs(body));
  assert.equal(typeof data['observed_at'], 'string');
  // Tampering with the body, or presenting it at another path, breaks both signatures.
  const tampered = hook.body.replace('"succeeded"', '"failed"');
  assert.notEqual(tampered, hook.body);
  assert.deepEqual(
    verifyHook(sandbox, hook, tampered).map((v) => (v.ok ? 'ok' : v.reason)),
    ['bad_signature', 'bad_signature'],
  );
  const moved = { ...hook, path: '/hooks/other' };
  assert.deepEqual(
    verifyHook(sandbox, moved).map((v) => (v.ok ? 'ok' : v.reason)),
    ['bad_signature', 'bad_signature'],
  );
  // An idempotent replay is not a new status: no second event.
  await createPayment(url, 'hook-1', body);
  await sandbox.webhooksIdle();
  assert.equal(receiver.received.length, 1);
});

test('failure, cancellation and conflicting statuses each announce what the wire reports', async (t) => {
  const receiver = await startReceiver();
  const { sandbox, url, close } = await startSandbox({ webhookUrls: [receiver.url] });
  t.after(async () => {
    await close();
    await receiver.close();
  });
  await createPayment(url, 'h-fail', paymentBody('a'), { 'sandbox-fault': 'fail_terminal' });
  await createPayment(url, 'h-cancel', paymentBody('b'), { 'sandbox-fault': 'canceled_before_processing' });
  await createPayment(url, 'h-flip', paymentBody('c'), { 'sandbox-fault': 'conflicting_status' });
  await get(url, `/v1/accounts/${ACCOUNT}/payments/by-key/h-flip`);
  await sandbox.webhooksIdle();
  const byKey = (key: string) =>
    events(receiver.received)
      .filter((e) => e.data['idempotency_key'] === key)
      .map((e) => e.type);
  assert.deepEqual(byKey('h-fail'), ['payment.failed']);
  assert.deepEqual(byKey('h-cancel'), ['payment.canceled']);
  assert.deepEqual(byKey('h-flip'), ['payment.succeeded', 'payment.failed']);
  for (const hook of receiver.received)
    assert.deepEqual(
      verifyHook(sandbox, hook).map((v) => v.ok),
      [true, true],
    );
  t.diagnostic(`checked ${receiver.received.length} webhook deliveries`);
});

test('drop_webhook loses the event until an operator replays it; delivery is never retried', async (t) => {
  const receiver = await startReceiver();
  const refusing = await startReceiver(500);
  const { sandbox, url, close } = await startSandbox({ webhookUrls: [receiver.url] });
  t.after(async () => {
    await close();
    await receiver.close();
    await refusing.close();
  });
  await createPayment(url, 'h-drop', paymentBody('d'), { 'sandbox-fault': 'drop_webhook' });
  await sandbox.webhooksIdle();
  assert.equal(receiver.received.length, 0);
  const log = await readJson<WebhookLog>(admin(url, 'GET', '/admin/webhooks'));
  assert.equal(log.events.length, 1);
  assert.equal(log.events[0]?.deliveries[0]?.result, 'dropped');
  const replay = await readJson<{ deliveries: Delivery[] }>(
    admin(url, 'POST', '/admin/webhooks/replay', { key: 'h-drop' }),
  );
  assert.equal(replay.deliveries.length, 1);
  assert.equal(replay.deliveries[0]?.result, 'delivered');
  assert.equal(receiver.received.length, 1);
  assert.deepEqual(
    verifyHook(sandbox, receiver.received[0]!).map((v) => v.ok),
    [true, true],
  );
  // A receiver that answers 500 gets exactly one attempt.
  await admin(url, 'PUT', '/admin/webhooks', { urls: [refusing.url] });
  await createPayment(url, 'h-refused', paymentBody('e'));
  await sandbox.webhooksIdle();
  assert.equal(refusing.received.length, 1);
  const after = await readJson<WebhookLog>(admin(url, 'GET', '/admin/webhooks'));
  const last = after.events.at(-1)!;
  assert.deepEqual(
    last.deliveries.map((d) => [d.result, d.status]),
    [['rejected', 500]],
  );
  // Nobody listening: the failure is recorded with its cause, and still not retried.
  const gone = await startReceiver();
  await gone.close();
  await admin(url, 'PUT', '/admin/webhooks', { urls: [gone.url] });
  await createPayment(url, 'h-unreachable', paymentBody('f'));
  await sandbox.webhooksIdle();
  const final = await readJson<WebhookLog>(admin(url, 'GET', '/admin/webhooks'));
  const unreachable = final.events.at(-1)!.deliveries;
  assert.equal(unreachable.length, 1);
  assert.equal(unreachable[0]?.result, 'failed');
  assert.equal(typeof unreachable[0]?.error, 'string');
});
