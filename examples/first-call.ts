/**
 * Your first guarded call (README "First guarded call"): pay one invoice through the sandbox
 * provider under a Baton occurrence, with the SDK.
 *
 * It expects what the README's first two commands start: `baton sandbox` on 127.0.0.1:4010 and
 * `baton serve --config examples/baton.config.json` on 127.0.0.1:4001, which created the domain,
 * pinned the sandbox profile to that sandbox, created the authority budget and wrote an operator
 * token to examples/first-call.tokens.json. Run it with `npx tsx examples/first-call.ts [INVOICE]`.
 *
 * What happens: a takeover of the lineage `first-call-worker` gives this process an executor
 * credential; `perform` creates the occurrence (the invoice number is its creation key), enters it
 * (authority consumed at entry), sends the exact request once with its native idempotency key, and
 * asks Baton's pinned status sources, which resolve it from the sandbox's signed answer. Run it
 * again with the same INVOICE and nothing is sent again: the creation key returns the original.
 */
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
// The package's own names, as a project that installed it writes them; inside this repository
// they resolve to the build (dist/, which `npm install` makes) through package.json "exports".
import { AdminClient, HttpBatonClient } from 'baton-aoc/client';
import { HttpProviderAdapter, NO_KEYS, sandboxEntryUrl } from 'baton-aoc/providers';

const BATON_URL = process.env['BATON_URL'] ?? 'http://127.0.0.1:4001';
const SANDBOX_URL = process.env['SANDBOX_URL'] ?? 'http://127.0.0.1:4010';
const TOKENS_FILE = new URL('./first-call.tokens.json', import.meta.url);
const PROFILE_ID = 'sandbox-payments-ed25519';

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

/** The operator token `serve --config` wrote (mode 0600); it is never printed. */
async function operatorToken(): Promise<string> {
  const file = JSON.parse(await readFile(TOKENS_FILE, 'utf8')) as {
    tokens: { name: string; token: string }[];
  };
  const entry = file.tokens.find((t) => t.name === 'first-call-operator');
  if (entry === undefined) throw new Error('no first-call-operator token in examples/first-call.tokens.json');
  return entry.token;
}

async function main(): Promise<void> {
  await untilReady();
  const token = await operatorToken();
  // The profile version the config registered: pinned to your sandbox's URL and key, so its version
  // ends in a tag of that deployment. The newest registered one is the sandbox now running.
  const admin = new AdminClient({ baseUrl: BATON_URL, token });
  const versions = (await admin.listProfiles()).profiles.filter((p) => p.id === PROFILE_ID);
  const newest = versions.sort((a, b) => b.registeredAt - a.registeredAt)[0];
  if (newest === undefined) throw new Error(`no ${PROFILE_ID} profile registered: apply the config first`);
  const profile = (await admin.getProfile(PROFILE_ID, newest.version)).document;

  const client = new HttpBatonClient({ baseUrl: BATON_URL, token });
  const executor = await client.takeover('first-call-worker');
  // Ed25519 pins need no secret: the profile carries the sandbox's public key.
  const adapter = new HttpProviderAdapter(profile, { entryUrl: sandboxEntryUrl(SANDBOX_URL), keys: NO_KEYS });
  const invoice = process.argv[2] ?? `inv-${Date.now()}`;
  const result = await executor.perform(
    {
      creationKey: invoice,
      provider: { profileId: PROFILE_ID, profileVersion: newest.version },
      request: { amount: 1250, currency: 'eur', payee: 'acme-supplies', invoice },
      authority: { id: 'first-call-payments', amount: 1250 },
    },
    adapter,
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
  process.stderr.write(`first-call: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
