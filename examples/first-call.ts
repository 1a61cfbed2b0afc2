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
 *
 * Environment: BATON_URL (default http://127.0.0.1:4001) and SANDBOX_URL (default
 * http://127.0.0.1:4010) name other servers; it prints on stderr which ones it uses, so a
 * BATON_URL exported for a real server is never used unnoticed.
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

/** The running sandbox's public Ed25519 key (its `/.well-known/baton-sandbox`, no secret). */
async function sandboxKey(): Promise<{ kid: string; x: string }> {
  const r = await fetch(new URL('/.well-known/baton-sandbox', SANDBOX_URL)).catch(() => undefined);
  if (r === undefined || !r.ok)
    throw new Error(`no Baton sandbox answers at ${SANDBOX_URL}: start \`baton sandbox\` first`);
  const body = (await r.json()) as { verification?: { ed25519?: { kid: string; jwk: { x: string } } } };
  const key = body.verification?.ed25519;
  if (key === undefined) throw new Error(`the sandbox at ${SANDBOX_URL} serves no Ed25519 key`);
  return { kid: key.kid, x: key.jwk.x };
}

interface Pinned {
  acknowledgement: { authentication: { kind: string; kid?: string; publicKey?: string } };
  statusSources: {
    kind: string;
    url: string;
    authentication: { kind: string; kid?: string; publicKey?: string };
  }[];
}

/**
 * Whether a profile's every pin is the sandbox's key and the status sources Baton asks are on the
 * sandbox (a webhook source's URL is Baton's own receiver).
 */
function pinnedTo(doc: Pinned, key: { kid: string; x: string }): boolean {
  const pins = [doc.acknowledgement.authentication, ...doc.statusSources.map((s) => s.authentication)];
  const origin = new URL(SANDBOX_URL).origin;
  return (
    pins.every((p) => p.kind === 'ed25519' && p.kid === key.kid && p.publicKey === key.x) &&
    doc.statusSources.every((s) => s.kind === 'webhook' || new URL(s.url).origin === origin)
  );
}

async function main(): Promise<void> {
  const from = (name: string): string => (process.env[name] === undefined ? '' : ` (from ${name})`);
  console.error(
    `first-call.ts: Baton at ${BATON_URL}${from('BATON_URL')}, sandbox at ${SANDBOX_URL}${from('SANDBOX_URL')}`,
  );
  await untilReady();
  const token = await operatorToken();
  // The profile version pinned to the sandbox now running: its key and URL (`serve --config`
  // pinned one when it started; a sandbox restarted since has new keys, and a version pinned to
  // the old ones, or the shipped unpinned one, would send a payment Baton can never confirm).
  // None: refuse before anything is sent.
  const key = await sandboxKey();
  const admin = new AdminClient({ baseUrl: BATON_URL, token });
  const versions = (await admin.listProfiles()).profiles.filter((p) => p.id === PROFILE_ID);
  let pinned: { version: string; document: unknown } | undefined;
  for (const v of versions.sort((a, b) => b.registeredAt - a.registeredAt)) {
    const registered = await admin.getProfile(PROFILE_ID, v.version);
    if (pinnedTo(registered.document as unknown as Pinned, key)) {
      pinned = { version: v.version, document: registered.document };
      break;
    }
  }
  if (pinned === undefined) {
    throw new Error(
      `no ${PROFILE_ID} version registered at ${BATON_URL} is pinned to the sandbox running at ${SANDBOX_URL} (key ${key.kid}); ` +
        'nothing was sent. Restart `baton serve --config examples/baton.config.json` (it pins the profile to the running sandbox), ' +
        `or run \`baton profiles pin --from-sandbox ${SANDBOX_URL}\` and register what it prints.`,
    );
  }
  const profile = pinned.document as ConstructorParameters<typeof HttpProviderAdapter>[0];

  const client = new HttpBatonClient({ baseUrl: BATON_URL, token });
  const executor = await client.takeover('first-call-worker');
  // Ed25519 pins need no secret: the profile carries the sandbox's public key.
  const adapter = new HttpProviderAdapter(profile, { entryUrl: sandboxEntryUrl(SANDBOX_URL), keys: NO_KEYS });
  const invoice = process.argv[2] ?? `inv-${Date.now()}`;
  const result = await executor.perform(
    {
      creationKey: invoice,
      provider: { profileId: PROFILE_ID, profileVersion: pinned.version },
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
    // What Baton still needs to know before it can decide (AOC missing knowledge), when unresolved.
    ...(result.missingKnowledge !== undefined && { missingKnowledge: result.missingKnowledge }),
  };
  process.stdout.write(`${JSON.stringify(summary)}\n`);
  process.exitCode = result.status === 'succeeded' ? 0 : 1;
}

main().catch((error: unknown) => {
  process.stderr.write(`first-call: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
