/**
 * Run pay.ts from the shell (examples/stripe-client/README.md): one invoice paid through your own
 * `stripe` client under a Baton occurrence, then one JSON line like examples/first-call.ts prints.
 *
 * It expects what the README's commands start: `baton sandbox --flavor stripe` on 127.0.0.1:4160
 * and `baton serve --port 4161 --credentials … --config examples/stripe-client/baton.config.json`,
 * which pinned the shipped `stripe-payment-intents` profile to that sandbox, created the
 * `stripe-usd` budget and wrote an operator token to examples/stripe-client/stripe-client.tokens.json.
 * STRIPE_SECRET_KEY is the key your client uses (the one the sandbox was started with).
 * Usage: npx tsx examples/stripe-client/run.ts [INVOICE]
 *
 * Label: a Stripe-compatible LOCAL server, not Stripe's servers.
 */
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { AdminClient } from 'baton-aoc/client';
import { payInvoice } from './pay.js';

const BATON_URL = process.env['BATON_URL'] ?? 'http://127.0.0.1:4161';
const STRIPE_URL = new URL(process.env['STRIPE_URL'] ?? 'http://127.0.0.1:4160');
const TOKENS_FILE = new URL('./stripe-client.tokens.json', import.meta.url);
const PROFILE_ID = 'stripe-payment-intents';

/** The servers were started in the background a moment ago: wait (at most 30 s) until Baton answers. */
async function untilReady(): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const ok = await fetch(new URL('/readyz', BATON_URL)).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`Baton did not answer at ${BATON_URL} within 30 s`);
    await sleep(250);
  }
}

async function operatorToken(): Promise<string> {
  const file = JSON.parse(await readFile(TOKENS_FILE, 'utf8')) as {
    tokens: { name: string; token: string }[];
  };
  const entry = file.tokens.find((t) => t.name === 'stripe-client-operator');
  if (entry === undefined) throw new Error('no stripe-client-operator token in stripe-client.tokens.json');
  return entry.token;
}

async function main(): Promise<void> {
  const secretKey = process.env['STRIPE_SECRET_KEY'];
  if (secretKey === undefined || secretKey === '') throw new Error('STRIPE_SECRET_KEY is not set');
  await untilReady();
  const token = await operatorToken();
  // The version the config registered: pinned to this sandbox's origin (its own version tag).
  const versions = (await new AdminClient({ baseUrl: BATON_URL, token }).listProfiles()).profiles;
  const newest = versions
    .filter((p) => p.id === PROFILE_ID)
    .sort((a, b) => b.registeredAt - a.registeredAt)[0];
  if (newest === undefined)
    throw new Error(`no ${PROFILE_ID} profile registered: start serve with the config`);
  const invoice = process.argv[2] ?? `inv-${Date.now()}`;
  const result = await payInvoice(
    {
      batonUrl: BATON_URL,
      token,
      stripe: {
        secretKey,
        host: STRIPE_URL.hostname,
        port: Number(STRIPE_URL.port),
        protocol: STRIPE_URL.protocol === 'https:' ? 'https' : 'http',
      },
      profile: { profileId: PROFILE_ID, profileVersion: newest.version },
      authorityId: 'stripe-usd',
    },
    { invoice, amount: 2000 },
  );
  const o = result.occurrence;
  const summary = {
    invoice,
    status: result.status,
    occurrenceId: result.occurrenceId,
    nativeKey: o?.provider.nativeKey ?? null,
    phase: o?.phase ?? null,
    outcome: o?.outcome ?? null,
    effect: o?.effect ?? null,
    adapterCalls: result.adapterCalls,
    ...(result.reason !== undefined && { reason: result.reason }),
  };
  process.stdout.write(`${JSON.stringify(summary)}\n`);
  process.exitCode = result.status === 'succeeded' ? 0 : 1;
}

main().catch((error: unknown) => {
  process.stderr.write(`stripe-client: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
