/**
 * `baton sandbox`: run the sandbox payments provider (docs/sandbox.md) until SIGINT or SIGTERM.
 * Prints one JSON line with where it listens and its public verification material; the HMAC secret
 * itself only with --print-secret (a profile pins the secret id, never the secret).
 */
import { BatonError } from '../../core/errors.js';
import {
  createSandboxProvider,
  ENVIRONMENT,
  SIGNING_MODES,
  type SandboxOptions,
  type SandboxProvider,
  type SigningMode,
} from '../../providers/sandbox/index.js';
import type { ProviderProfile } from '../../occurrences/index.js';
import { deployProfile, loadProfile, sandboxDeployment } from '../../providers/index.js';
import { createStripeSandbox } from '../../providers/sandbox/stripe/index.js';
import { parseOptions, reportError, untilStopped, wantsHelp, type Command } from '../command.js';
import { EXIT, type CliIo } from '../io.js';
import { listenError } from '../listen.js';

const USAGE = `usage: baton sandbox [--flavor baton|stripe] [--port N] [--host H] [--account ID]...
                     [--signing hmac|ed25519|both] [--webhook URL]... [--admin-token T]
                     [--retention-ms MS] [--settle-delay-ms MS] [--print-secret]
                     [--print-profile]

Run the sandbox payments provider (a synthetic stand-in for a payments API; docs/sandbox.md) until
SIGINT or SIGTERM. Prints one JSON line: url, accounts, admin token and verification material (HMAC
secret id, Ed25519 public JWK and kid). Defaults: port 4010, host 127.0.0.1, account acct_sandbox,
signing both, retention 24 h, settle delay 0.
Environment: BATON_SANDBOX_HMAC_SECRET (base64url, >= 32 bytes), BATON_SANDBOX_ED25519_SEED (base64url,
32 bytes) and BATON_SANDBOX_ADMIN_TOKEN keep keys and token stable across restarts.

--flavor stripe serves the PaymentIntents and Refunds subset of Stripe's API instead, with Stripe's
idempotency semantics, error shapes and Stripe-Signature webhooks (docs/sandbox-stripe.md): a local
compatible server for the official stripe client, not Stripe itself. Its JSON line carries url,
secret_key, webhook_secret and admin_token; BATON_SANDBOX_STRIPE_SECRET_KEY and
BATON_SANDBOX_STRIPE_WEBHOOK_SECRET keep them stable. --account, --signing, --retention-ms,
--settle-delay-ms, --print-secret and --print-profile belong to the baton flavour.

--print-profile prints a second JSON line: the shipped profile (sandbox-payments-ed25519, or
sandbox-payments with --signing hmac) pinned to this sandbox — its URL and keys, under version
<version>.<8 hex> — ready for \`baton profiles add -\` (docs/config.md).
`;

const OPTIONS = {
  flavor: { type: 'string' },
  port: { type: 'string' },
  host: { type: 'string' },
  account: { type: 'string', multiple: true },
  signing: { type: 'string' },
  webhook: { type: 'string', multiple: true },
  'admin-token': { type: 'string' },
  'retention-ms': { type: 'string' },
  'settle-delay-ms': { type: 'string' },
  'print-secret': { type: 'boolean' },
  'print-profile': { type: 'boolean' },
} as const;

function whole(text: string | undefined, name: string, fallback: number, max: number): number {
  if (text === undefined) return fallback;
  if (!/^[0-9]{1,12}$/.test(text) || Number(text) > max) {
    throw new BatonError('usage', `--${name} must be a whole number up to ${max}`);
  }
  return Number(text);
}

function envBytes(name: string): Buffer | undefined {
  const text = process.env[name];
  return text === undefined || text === '' ? undefined : Buffer.from(text, 'base64url');
}

const FLAVORS = ['baton', 'stripe'] as const;
type Flavor = (typeof FLAVORS)[number];
const BATON_ONLY = [
  'account',
  'signing',
  'retention-ms',
  'settle-delay-ms',
  'print-secret',
  'print-profile',
] as const;

interface Parsed {
  flavor: Flavor;
  port: number;
  host: string;
  printSecret: boolean;
  printProfile: boolean;
  options: SandboxOptions;
}

function parse(argv: string[]): Parsed {
  const { values } = parseOptions({ args: argv, options: OPTIONS, strict: true, allowPositionals: false });
  const flavor = (values.flavor ?? 'baton') as Flavor;
  if (!FLAVORS.includes(flavor)) throw new BatonError('usage', '--flavor must be baton or stripe');
  const foreign = BATON_ONLY.find((name) => flavor === 'stripe' && values[name] !== undefined);
  if (foreign !== undefined) throw new BatonError('usage', `--${foreign} belongs to the baton flavour`);
  const signing = (values.signing ?? 'both') as SigningMode;
  if (!SIGNING_MODES.includes(signing))
    throw new BatonError('usage', '--signing must be hmac, ed25519 or both');
  if (values['print-secret'] === true && signing === 'ed25519') {
    throw new BatonError('usage', '--print-secret needs HMAC signing');
  }
  for (const url of values.webhook ?? []) {
    if (!URL.canParse(url)) throw new BatonError('usage', '--webhook must be an absolute URL');
  }
  return {
    flavor,
    port: whole(values.port, 'port', 4010, 65535),
    host: values.host ?? '127.0.0.1',
    printSecret: values['print-secret'] === true,
    printProfile: values['print-profile'] === true,
    options: {
      signing,
      accounts: values.account,
      webhookUrls: values.webhook,
      adminToken: values['admin-token'] ?? process.env['BATON_SANDBOX_ADMIN_TOKEN'],
      retentionMs: whole(values['retention-ms'], 'retention-ms', 24 * 3600 * 1000, 3650 * 24 * 3600 * 1000),
      settleDelayMs: whole(values['settle-delay-ms'], 'settle-delay-ms', 0, 3600 * 1000),
      hmacSecret: envBytes('BATON_SANDBOX_HMAC_SECRET'),
      ed25519Seed: envBytes('BATON_SANDBOX_ED25519_SEED'),
    },
  };
}

/** The shipped profile that matches the signing mode, pinned to this running sandbox. */
function pinnedProfile(provider: SandboxProvider, signing: SigningMode | undefined): ProviderProfile {
  const name = signing === 'hmac' ? 'sandbox-payments' : 'sandbox-payments-ed25519';
  return deployProfile(loadProfile(name), sandboxDeployment(provider));
}

interface Running {
  close(): Promise<void>;
}

async function listenOn(
  parsed: Parsed,
  listen: (port: number, host: string) => Promise<string>,
): Promise<string> {
  return listen(parsed.port, parsed.host).catch((cause: unknown) => {
    throw listenError(cause, parsed.host, parsed.port);
  });
}

async function startBatonFlavor(parsed: Parsed, io: CliIo, started: (r: Running) => void): Promise<void> {
  const provider = createSandboxProvider(parsed.options);
  started(provider);
  const url = await listenOn(parsed, (port, host) => provider.listen(port, host));
  const secret = parsed.printSecret ? provider.pins().find((p) => p.kind === 'hmac') : undefined;
  const info = {
    url,
    environment: ENVIRONMENT,
    accounts: provider.accounts,
    admin_token: provider.adminToken,
    verification: provider.verification,
    ...(secret?.kind === 'hmac' && { hmac_secret: Buffer.from(secret.secret).toString('base64url') }),
  };
  io.stdout(`${JSON.stringify(info)}\n`);
  if (parsed.printProfile) io.stdout(`${JSON.stringify(pinnedProfile(provider, parsed.options.signing))}\n`);
  io.stderr(`sandbox: listening on ${url} (SIGINT or SIGTERM stops it)\n`);
}

async function startStripeFlavor(parsed: Parsed, io: CliIo, started: (r: Running) => void): Promise<void> {
  const env = (name: string): string | undefined => process.env[name] || undefined;
  const sandbox = createStripeSandbox({
    secretKey: env('BATON_SANDBOX_STRIPE_SECRET_KEY'),
    webhookSecret: env('BATON_SANDBOX_STRIPE_WEBHOOK_SECRET'),
    webhookUrls: parsed.options.webhookUrls,
    adminToken: parsed.options.adminToken,
  });
  started(sandbox);
  const url = await listenOn(parsed, (port, host) => sandbox.listen(port, host));
  const info = {
    url,
    flavor: 'stripe',
    label: 'Stripe-compatible local sandbox (not Stripe)',
    secret_key: sandbox.secretKey,
    webhook_secret: sandbox.webhookSecret,
    admin_token: sandbox.adminToken,
  };
  io.stdout(`${JSON.stringify(info)}\n`);
  io.stderr(`sandbox (stripe flavour): listening on ${url} (SIGINT or SIGTERM stops it)\n`);
}

export async function runSandbox(argv: string[], io: CliIo, stop?: AbortSignal): Promise<number> {
  if (wantsHelp(argv)) {
    io.stdout(USAGE);
    return EXIT.ok;
  }
  let running: Running | undefined;
  const started = (r: Running): void => {
    running = r;
  };
  try {
    const parsed = parse(argv);
    const start = parsed.flavor === 'stripe' ? startStripeFlavor : startBatonFlavor;
    await start(parsed, io, started);
  } catch (error) {
    await running?.close();
    return reportError(error, io);
  }
  await untilStopped(stop);
  await running?.close();
  io.stderr('sandbox: stopped\n');
  return EXIT.ok;
}

export const sandboxCommand: Command = {
  name: 'sandbox',
  summary: 'Run the sandbox payments provider (signed answers, faults, effect counter).',
  usage: USAGE,
  run: (argv, io) => runSandbox(argv, io),
};
