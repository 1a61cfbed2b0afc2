/**
 * The Stripe-client example (examples/stripe-client/, issue 13 §5) run for real, and the
 * credential rule checked on everything the run wrote (issue 13 §1): `baton sandbox --flavor
 * stripe` and `baton serve --credentials FILE` as child processes, the profile pinned to that
 * sandbox with `baton profiles add --pin-to-sandbox`, the official `stripe` client
 * pointed at the sandbox (host, port, protocol), `perform` with a plain async function, Baton's
 * lookups with the secret key it resolved from a reference, a refused answer, an error body, a
 * /metrics scrape and `baton log export`. Then the secret key and the webhook secret are searched
 * for in serve's stdout and stderr, the exported evidence, the metrics, the error bodies and the
 * SQLite file itself: none may contain either. A compatible local server, not Stripe's servers.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AdminClient } from '../../src/client/index.js';
import type { JsonObject } from '../../src/core/json.js';
import { deployProfile, loadProfile } from '../../src/providers/index.js';
import { payInvoice, type StripeClientOptions } from '../../examples/stripe-client/pay.js';
import { domainConfig } from '../occurrences/helpers.js';
import { repoRoot } from '../support/paths.js';

const fromTs = import.meta.url.endsWith('.ts');
const mainScript = fileURLToPath(new URL(`../../src/cli/main.${fromTs ? 'ts' : 'js'}`, import.meta.url));
const DEADLINE_MS = 60_000;

interface Proc {
  readonly proc: ChildProcess;
  readonly out: () => string;
  readonly err: () => string;
  readonly exited: Promise<number | null>;
  firstLine(): Promise<string>;
}

function run(t: TestContext, args: string[], env: NodeJS.ProcessEnv = {}): Proc {
  const argv = fromTs ? ['--import', 'tsx', mainScript, ...args] : [mainScript, ...args];
  const proc = spawn(process.execPath, argv, {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  t.after(() => proc.kill('SIGKILL'));
  let out = '';
  let err = '';
  proc.stdout?.on('data', (c: Buffer) => (out += c.toString()));
  proc.stderr?.on('data', (c: Buffer) => (err += c.toString()));
  const exited = new Promise<number | null>((resolve) => proc.once('close', (code) => resolve(code)));
  const firstLine = async (): Promise<string> => {
    const deadline = Date.now() + DEADLINE_MS;
    while (!out.includes('\n')) {
      if (Date.now() > deadline)
        throw new Error(`${args[0]}: no first line within ${DEADLINE_MS} ms: ${err}`);
      const done = await Promise.race([
        exited.then(() => true),
        new Promise((r) => setTimeout(() => r(false), 50)),
      ]);
      if (done === true && !out.includes('\n')) throw new Error(`${args[0]} exited: ${err}`);
    }
    return out.slice(0, out.indexOf('\n'));
  };
  return { proc, out: () => out, err: () => err, exited, firstLine };
}

async function within<T>(what: string, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>(
    (_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: too late`)), DEADLINE_MS)),
  );
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

test(
  'your own stripe client under Baton: one effect, succeeded; no credential in any output',
  { timeout: 180_000 },
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'baton-stripe-example-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const sandbox = run(t, ['sandbox', '--flavor', 'stripe', '--port', '0']);
    const s = JSON.parse(await sandbox.firstLine()) as {
      url: string;
      secret_key: string;
      webhook_secret: string;
      admin_token: string;
    };
    const secrets = [s.secret_key, s.webhook_secret];

    // References only: the key from the environment, the webhook secret from a file.
    writeFileSync(join(dir, 'whsec'), `${s.webhook_secret}\n`, { mode: 0o600 });
    const credentialsFile = join(dir, 'credentials.json');
    writeFileSync(
      credentialsFile,
      JSON.stringify({
        format: 'baton.credentials/1',
        credentials: {
          'stripe-secret-key': { env: 'EXAMPLE_STRIPE_KEY', origins: [new URL(s.url).origin] },
          'stripe-webhook-secret': { file: join(dir, 'whsec'), origins: [] },
        },
      }),
    );
    const db = join(dir, 'baton.db');
    const missing = run(t, [
      'serve',
      '--db',
      join(dir, 'other.db'),
      '--port',
      '0',
      '--credentials',
      credentialsFile,
    ]);
    assert.equal(await within('missing credential', missing.exited), 1);
    assert.match(
      missing.err(),
      /credential_unresolved: credential stripe-secret-key: the environment variable EXAMPLE_STRIPE_KEY/,
    );

    const serve = run(
      t,
      [
        'serve',
        '--db',
        db,
        '--port',
        '0',
        '--json',
        '--log-level',
        'debug',
        '--credentials',
        credentialsFile,
      ],
      {
        EXAMPLE_STRIPE_KEY: s.secret_key,
      },
    );
    const started = JSON.parse(await serve.firstLine()) as { url: string; adminToken: string };
    const admin = new AdminClient({ baseUrl: started.url, token: started.adminToken });
    await admin.configureDomain(domainConfig() as never);
    // The profile pinned to the running Stripe sandbox from the shell, as the example's README
    // does: the same document the library's deployProfile gives for that origin.
    const server = ['--url', started.url, '--token', started.adminToken];
    const shipped = join(repoRoot, 'profiles', 'stripe-payment-intents.json');
    const notSandbox = run(t, ['profiles', 'add', shipped, '--pin-to-sandbox', started.url, ...server]);
    assert.equal(await within('pin to a Baton server', notSandbox.exited), 1);
    assert.equal(
      notSandbox.err(),
      `error: provider_response_invalid: ${started.url} is not a Baton sandbox: GET /.well-known/baton-sandbox answered 404\n`,
    );
    const added = run(t, ['profiles', 'add', shipped, '--pin-to-sandbox', s.url, ...server]);
    assert.equal(await within('profiles add', added.exited), 0, added.err());
    const version = /^profile stripe-payment-intents@(\S+): /.exec(added.out())?.[1];
    const expected = deployProfile(loadProfile('stripe-payment-intents'), { origin: s.url });
    assert.equal(version, expected.version, added.out());
    const profile = await admin.getProfile('stripe-payment-intents', expected.version);
    assert.deepEqual(profile.document, JSON.parse(JSON.stringify(expected)) as JsonObject);
    await admin.createAuthority({ id: 'stripe-usd', unit: 'USD-cents', total: 100_000 });
    const operator = await admin.createToken({ role: 'operator', name: 'stripe-example' });
    const { port, hostname } = new URL(s.url);
    const options: StripeClientOptions = {
      batonUrl: started.url,
      token: operator.token,
      stripe: { secretKey: s.secret_key, host: hostname, port: Number(port), protocol: 'http' },
      profile: { profileId: 'stripe-payment-intents', profileVersion: expected.version },
      authorityId: 'stripe-usd',
    };

    const result = await payInvoice(options, { invoice: 'inv-2001', amount: 2000 });
    assert.equal(result.status, 'succeeded', JSON.stringify(result));
    assert.equal(result.adapterCalls, 1);
    const again = await payInvoice(options, { invoice: 'inv-2001', amount: 2000 });
    assert.equal(again.adapterCalls, 0, 'the creation key returns the original: nothing is sent again');
    const effects = (await (
      await fetch(`${s.url}/admin/effects`, { headers: { authorization: `Bearer ${s.admin_token}` } })
    ).json()) as {
      effects: { idempotency_key: string }[];
    };
    assert.equal(effects.effects.length, 1, 'one effect at the provider');

    // A refused answer: the client sends another amount under the occurrence's key.
    const refused = await payInvoice(options, {
      invoice: 'inv-2002',
      amount: 1000,
      send: { amount: 1500, currency: 'usd', confirm: true, payment_method: 'pm_card_visa' },
    });
    assert.equal(refused.status, 'unresolved');
    assert.equal(refused.missingKnowledge, 'binding_mismatch');

    // An error body, and the metrics.
    const bad = await fetch(`${started.url}/v1/profiles`, {
      method: 'POST',
      headers: { authorization: `Bearer ${started.adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ...loadProfile('stripe-payment-intents'), statuses: {} }),
    });
    const badBody = await bad.text();
    assert.equal(bad.status, 400);
    const metrics = await (await fetch(`${started.url}/metrics`)).text();
    assert.match(metrics, /baton_/);

    serve.proc.kill('SIGTERM');
    assert.equal(await within('serve exit', serve.exited), 0);
    const out = join(dir, 'evidence.jsonl');
    const exported = run(t, ['log', 'export', '--db', db, '--out', out]);
    assert.equal(await within('log export', exported.exited), 0, exported.err());
    const evidence = readFileSync(out, 'utf8');
    assert.match(evidence, /stripe-payment-intents/);

    const outputs: [string, string][] = [
      ['serve stdout', serve.out()],
      ['serve stderr', serve.err()],
      ['failed serve stderr', missing.err()],
      ['evidence export', evidence],
      ['/metrics', metrics],
      ['error body', badBody],
      ['export stdout+stderr', exported.out() + exported.err()],
      ...readdirSync(dir)
        .filter((f) => f.startsWith('baton.db'))
        .map((f): [string, string] => [f, readFileSync(join(dir, f)).toString('latin1')]),
    ];
    assert.ok(serve.err().length > 0, 'serve logged (debug level)');
    for (const [name, text] of outputs) {
      for (const secret of secrets)
        assert.ok(!text.includes(secret), `${name} must not contain a credential`);
    }
  },
);
