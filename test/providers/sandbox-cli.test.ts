import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runSandbox } from '../../src/cli/commands/sandbox.js';
import type { CliIo } from '../../src/cli/io.js';
import Stripe from 'stripe';
import { sandboxSignedString, verifySandboxSignature } from '../../src/providers/sandbox/index.js';

function capture(): { io: CliIo; out: string[]; err: string[]; firstLine: Promise<string> } {
  const out: string[] = [];
  const err: string[] = [];
  let resolveLine: (line: string) => void = () => undefined;
  const firstLine = new Promise<string>((resolve) => (resolveLine = resolve));
  const io: CliIo = {
    stdout: (s) => {
      out.push(s);
      resolveLine(s);
    },
    stderr: (s) => void err.push(s),
    readStdin: () => Promise.resolve(Buffer.alloc(0)),
  };
  return { io, out, err, firstLine };
}

interface Info {
  url: string;
  accounts: string[];
  admin_token: string;
  hmac_secret?: string;
  verification: { hmac?: { secret_id: string }; ed25519?: { kid: string; jwk: { x: string } } };
}

test('baton sandbox prints its verification material, not its secret, and stops on SIGTERM', async () => {
  const { io, err, firstLine } = capture();
  const running = runSandbox(['--port', '0', '--account', 'acct_cli'], io);
  const info = JSON.parse(await firstLine) as Info;
  assert.match(info.url, /^http:\/\/127\.0\.0\.1:\d+$/);
  assert.deepEqual(info.accounts, ['acct_cli']);
  assert.match(info.verification.hmac!.secret_id, /^hsk_/);
  assert.match(info.verification.ed25519!.kid, /^sha256:[0-9a-f]{64}$/);
  assert.equal(info.hmac_secret, undefined, 'the HMAC secret is not printed by default');
  const res = await fetch(`${info.url}/v1/accounts/acct_cli/payments`);
  assert.equal(res.status, 200);
  process.emit('SIGTERM');
  assert.equal(await running, 0);
  assert.ok(err.join('').includes('stopped'));
  await assert.rejects(fetch(`${info.url}/v1/accounts/acct_cli/payments`), 'the port is closed');
});

test('--print-secret prints the HMAC secret, which verifies the answers', async () => {
  const { io, firstLine } = capture();
  const stop = new AbortController();
  const running = runSandbox(['--port', '0', '--signing', 'hmac', '--print-secret'], io, stop.signal);
  const info = JSON.parse(await firstLine) as Info;
  assert.equal(info.verification.ed25519, undefined);
  const path = '/v1/accounts/acct_sandbox/payments/by-key/nothing';
  const res = await fetch(`${info.url}${path}`);
  const body = await res.text();
  const pin = {
    kind: 'hmac' as const,
    secretId: info.verification.hmac!.secret_id,
    secret: Buffer.from(info.hmac_secret!, 'base64url'),
  };
  const header = res.headers.get('sandbox-signature');
  const verdict = verifySandboxSignature({
    header,
    signedString: sandboxSignedString({ method: 'GET', path, body }),
    pin,
    nowMs: Date.now(),
  });
  assert.equal(verdict.ok, true);
  assert.equal(res.headers.get('sandbox-signature-ed25519'), null);
  stop.abort();
  assert.equal(await running, 0);
});

test('bad options exit 2 without starting anything', async (t) => {
  const cases = [
    ['--signing', 'rsa'],
    ['--port', 'x'],
    ['--port', '70000'],
    ['--nope'],
    ['--webhook', 'not a url'],
    ['--signing', 'ed25519', '--print-secret'],
    ['--flavor', 'paypal'],
    ['--flavor', 'stripe', '--signing', 'hmac'],
    ['--flavor', 'stripe', '--account', 'acct_x'],
  ];
  for (const argv of cases) {
    const { io, out, err } = capture();
    assert.equal(await runSandbox(argv, io), 2, argv.join(' '));
    assert.equal(out.length, 0);
    assert.match(err.join(''), /^error: usage: /);
  }
  t.diagnostic(`checked ${cases.length} bad invocations`);
});

test('baton sandbox --flavor stripe serves the official stripe client and labels itself as not Stripe', async () => {
  const { io, firstLine } = capture();
  const stop = new AbortController();
  const running = runSandbox(['--flavor', 'stripe', '--port', '0'], io, stop.signal);
  const info = JSON.parse(await firstLine) as {
    url: string;
    flavor: string;
    label: string;
    secret_key: string;
    webhook_secret: string;
  };
  assert.equal(info.flavor, 'stripe');
  assert.match(info.label, /not Stripe/);
  assert.match(info.secret_key, /^sk_test_/);
  assert.match(info.webhook_secret, /^whsec_/);
  const url = new URL(info.url);
  const stripe = new Stripe(info.secret_key, {
    host: url.hostname,
    port: Number(url.port),
    protocol: 'http',
    maxNetworkRetries: 0,
  });
  const paid = await stripe.paymentIntents.create(
    { amount: 500, currency: 'usd', confirm: true, payment_method: 'pm_card_visa' },
    { idempotencyKey: 'cli-key' },
  );
  assert.equal(paid.status, 'succeeded');
  stop.abort();
  assert.equal(await running, 0);
});
