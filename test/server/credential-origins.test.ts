/**
 * A host secret goes only to an origin its credentials entry lists (docs/providers.md
 * "Credentials", SECURITY.md "Secrets on the host"). The security review's exfiltration, end to
 * end: a real `baton serve` child holding `stripe-secret-key` through `--credentials`, an OPERATOR
 * token (which may register profiles), a real listener on loopback standing in for the attacker,
 * and the shipped Stripe profile with its origin replaced by the listener's. Registering it is
 * refused at once; a copy registered through a server that held no credential is reconciled by
 * the one that does — and the listener never receives a request. The same server still settles a
 * payment from the Stripe-compatible sandbox (`baton sandbox --flavor stripe`, in-process) whose
 * origin the entry lists. A compatible local server, not Stripe's.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import Stripe from 'stripe';
import type { JsonObject } from '../../src/core/json.js';
import { deployProfile, loadProfile } from '../../src/providers/index.js';
import { createStripeSandbox } from '../../src/providers/sandbox/stripe/index.js';
import { domainConfig } from '../occurrences/helpers.js';
import { spawnNode, type WatchedChild } from '../support/child.js';
import { repoRoot } from '../support/paths.js';
import { assertProblem, request } from './helpers.js';

const fromTs = import.meta.url.endsWith('.ts');
const mainScript = fileURLToPath(new URL(`../../src/cli/main.${fromTs ? 'ts' : 'js'}`, import.meta.url));
const SECRET = 'sk_test_VICTIM_SECRET_do_not_leak';

interface Seen {
  readonly method: string | undefined;
  readonly url: string | undefined;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/** The attacker's server: records every request it receives, answers 404. */
async function listener(t: TestContext): Promise<{ origin: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({
        method: req.method,
        url: req.url,
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
      });
      res.writeHead(404, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

async function serve(
  t: TestContext,
  db: string,
  credentials: string | undefined,
): Promise<{ child: WatchedChild; url: string; admin: string | null }> {
  const argv = [
    ...(fromTs ? ['--import', 'tsx'] : []),
    mainScript,
    'serve',
    '--db',
    db,
    '--port',
    '0',
    '--log-level',
    'silent',
    '--no-console',
    '--json',
    ...(credentials === undefined ? [] : ['--credentials', credentials]),
  ];
  const env = { ...process.env, VICTIM_STRIPE_KEY: SECRET };
  const child = spawnNode('baton serve', argv, { cwd: repoRoot, env });
  t.after(() => child.kill());
  const m = await child.waitForLine(/^\{.*"url".*\}$/, 'the --json ready line');
  const ready = JSON.parse(m[0]) as { url: string; adminToken: string | null };
  return { child, url: ready.url, admin: ready.adminToken };
}

async function ok(url: string, token: string, method: string, path: string, body?: unknown) {
  const r = await request(url, method, path, { token, ...(body !== undefined && { body }) });
  assert.ok(r.status >= 200 && r.status < 300, `${method} ${path}: ${r.status} ${r.text}`);
  return r.body;
}

/** The reviewer's edit: the shipped Stripe profile with https://api.stripe.com replaced by `origin`. */
function evilProfile(id: string, origin: string): JsonObject {
  const text = JSON.stringify(loadProfile('stripe-payment-intents')).replaceAll(
    'https://api.stripe.com',
    origin,
  );
  return { ...(JSON.parse(text) as JsonObject), id };
}

/** create → enter under the lineage's credential; the occurrence id and its native key. */
async function enterPayment(url: string, executor: string, profile: JsonObject, creationKey: string) {
  const body = {
    creationKey,
    provider: { profileId: profile['id'], profileVersion: profile['version'] },
    request: { amount: 100, currency: 'usd' },
    authority: { id: 'usd', amount: 100 },
  };
  const created = await request(url, 'POST', '/v1/occurrences', { token: executor, body });
  assert.equal(created.status, 201, created.text);
  const id = (created.body['occurrence'] as JsonObject)['id'] as string;
  const entered = await ok(url, executor, 'POST', `/v1/occurrences/${id}/enter`, {});
  return { id, nativeKey: entered['nativeKey'] as string };
}

test('an operator cannot make serve send a provider secret to an address of its choosing; the declared origin still works', async (t) => {
  const attacker = await listener(t);
  const sandbox = createStripeSandbox({ secretKey: SECRET });
  const sandboxUrl = await sandbox.listen(0, '127.0.0.1');
  t.after(() => sandbox.close());
  const dir = mkdtempSync(join(tmpdir(), 'baton-credential-origins-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const db = join(dir, 'baton.db');
  const credentials = join(dir, 'credentials.json');
  writeFileSync(
    credentials,
    JSON.stringify({
      format: 'baton.credentials/1',
      credentials: {
        'stripe-secret-key': {
          env: 'VICTIM_STRIPE_KEY',
          origins: ['https://api.stripe.com', new URL(sandboxUrl).origin],
        },
      },
    }),
  );

  // A server that holds no credential cannot judge where one may go: it registers what an operator gives.
  const bare = await serve(t, db, undefined);
  const admin = bare.admin ?? assert.fail('a fresh store prints its admin token');
  await ok(bare.url, admin, 'PUT', '/v1/domain', domainConfig());
  const operator = (await ok(bare.url, admin, 'POST', '/v1/tokens', { role: 'operator' }))['token'] as string;
  await ok(bare.url, operator, 'POST', '/v1/authorities', { id: 'usd', unit: 'USD-cents', total: 100_000 });
  const planted = evilProfile('evil-profile', attacker.origin);
  await ok(bare.url, operator, 'POST', '/v1/profiles', planted);
  bare.child.kill('SIGTERM');
  await bare.child.waitForExit();

  const s = await serve(t, db, credentials);
  // 1. Registering the reviewer's profile on the server that holds the secret: refused at once.
  const evil = evilProfile('evil-profile-2', attacker.origin);
  const refused = await request(s.url, 'POST', '/v1/profiles', { token: operator, body: evil });
  assertProblem(refused, 400, 'input_invalid');
  assert.equal((refused.body['details'] as JsonObject)['path'], '$.entry.url');
  assert.match(refused.text, /credential stripe-secret-key may not be sent to http:\/\/127\.0\.0\.1:\d+/);
  const remote = evilProfile('evil-remote', 'https://attacker.example');
  assertProblem(
    await request(s.url, 'POST', '/v1/profiles', { token: operator, body: remote }),
    400,
    'input_invalid',
  );
  for (const p of [evil, remote]) {
    const [id, version] = [p['id'] as string, p['version'] as string];
    const r = await request(s.url, 'GET', `/v1/profiles/${id}/${version}`, { token: operator });
    assert.equal(r.status, 404, `${id} was not registered: ${r.text}`);
  }

  // 2. The planted profile, reconciled by the server that holds the secret: the call is not made.
  const executor = (await ok(s.url, operator, 'POST', '/v1/lineages/evil/takeover', {}))[
    'credential'
  ] as string;
  const { id } = await enterPayment(s.url, executor, planted, 'k1');
  const reconciled = await ok(s.url, operator, 'POST', `/v1/occurrences/${id}/reconcile`, {});
  assert.equal((reconciled['occurrence'] as JsonObject)['unresolved'], true);
  assert.equal(reconciled['missingKnowledge'], 'unavailable');
  // Recorded as "could not ask": missing knowledge that settles nothing (the refusal's code is the
  // reading's detail, test/providers/credential-origins.test.ts).
  const evidence = await ok(s.url, operator, 'GET', `/v1/evidence?subject=occurrence:${id}`);
  const observed = (evidence['events'] as JsonObject[])
    .filter((e) => e['type'] === 'observation_recorded')
    .map((e) => (e['body'] as JsonObject)['observation'] as JsonObject);
  assert.deepEqual(
    observed.map((o) => [o['result'], (o['authentication'] as JsonObject)['verified']]),
    [['unavailable', false]],
  );
  assert.deepEqual(attacker.seen, [], 'the listener received no request at all');

  // 3. The origin the credentials entry lists still works: a payment settles from the sandbox.
  const stripeProfile = deployProfile(loadProfile('stripe-payment-intents'), { origin: sandboxUrl });
  await ok(s.url, operator, 'POST', '/v1/profiles', stripeProfile);
  const pay = await enterPayment(s.url, executor, stripeProfile as unknown as JsonObject, 'k2');
  const { port } = new URL(sandboxUrl);
  const stripe = new Stripe(SECRET, { host: '127.0.0.1', port: Number(port), protocol: 'http' });
  const params = { amount: 100, currency: 'usd', confirm: true, payment_method: 'pm_card_visa' };
  await stripe.paymentIntents.create(params, { idempotencyKey: pay.nativeKey });
  const settled = await ok(s.url, operator, 'POST', `/v1/occurrences/${pay.id}/reconcile`, {});
  const o = settled['occurrence'] as JsonObject;
  assert.deepEqual([o['unresolved'], o['outcome'], o['effect']], [false, 'success', 'occurred']);

  assert.deepEqual(attacker.seen, [], 'still nothing reached the listener');
  assert.ok(!s.child.stderr().includes(SECRET));
});
