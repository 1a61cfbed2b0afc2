/**
 * `baton serve`: the HTTP API (docs/api.md) over SQLite or PostgreSQL until SIGINT or SIGTERM.
 * Runs the migrations at start. On a store with no active admin token it creates one and prints it
 * ONCE on stdout (only its digest is stored; `baton tokens create --role admin` makes another).
 * Structured logs (pino, authorization redacted) go to stderr, so stdout carries only the one-time
 * token and the listening line.
 */
import type { AddressInfo } from 'node:net';
import { systemClock } from '../../core/clock.js';
import { BatonError } from '../../core/errors.js';
import { buildServer } from '../../server/app.js';
import { openBaton, type OpenedBaton } from '../../server/open.js';
import { createToken } from '../../server/tokens.js';
import { staticKeys, type KeyResolver } from '../../providers/index.js';
import { hasActiveAdmin } from '../../store/principals.js';
import { untilStopped, wantsHelp, type Command } from '../command.js';
import { EXIT, type CliIo } from '../io.js';
import { parse, reportStoreError } from './store-args.js';
import { STORE_OPTIONS, STORE_USAGE, storeChoice } from './store-choice.js';

const USAGE = `usage: baton serve [--db FILE | --postgres URL [--domain-key FILE]] [--port N] [--host H]
                   [--log-level fatal|error|warn|info|debug|trace|silent]

Serve the HTTP API (docs/api.md) until SIGINT or SIGTERM, then finish in-flight requests and stop.
Defaults: --db ./baton.db, --port 4000 (0 picks a free port), --host 127.0.0.1, --log-level info.
Migrations run at start. If the store has no active admin token, one is created and printed once.
Prints "baton listening on http://HOST:PORT (STORE)" when ready; logs go to stderr as JSON lines.
${STORE_USAGE}
Environment: BATON_HMAC_SECRETS="secretId=BASE64URL[,secretId=BASE64URL…]" gives reconcile the
HMAC secrets that provider profiles pin by id (Ed25519 pins need none).
`;

const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function port(text: string | undefined): number {
  if (text === undefined) return 4000;
  if (!/^[0-9]{1,5}$/.test(text) || Number(text) > 65535)
    throw new BatonError('usage', '--port must be 0..65535');
  return Number(text);
}

/** BATON_HMAC_SECRETS, parsed; the values never appear in an error message. */
export function hmacSecretsFromEnv(text: string | undefined): KeyResolver {
  const secrets: Record<string, Uint8Array> = {};
  for (const item of (text ?? '').split(',').filter((x) => x.trim() !== '')) {
    const m = /^\s*([A-Za-z0-9._:-]{1,128})=([A-Za-z0-9_-]{43,})\s*$/.exec(item);
    if (m === null)
      throw new BatonError('usage', 'BATON_HMAC_SECRETS must be id=base64url pairs of 32+ bytes');
    secrets[m[1] ?? ''] = Buffer.from(m[2] ?? '', 'base64url');
  }
  return staticKeys(secrets);
}

function urlHost(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

async function firstAdmin(opened: OpenedBaton, io: CliIo): Promise<void> {
  if (await hasActiveAdmin(opened.engine)) return;
  const created = await createToken(
    opened.engine,
    { role: 'admin', name: 'initial-admin' },
    { clock: systemClock, actor: 'serve:first-start' },
  );
  io.stdout(`initial admin token (shown once; only its digest is stored): ${created.token}\n`);
}

export async function runServe(argv: string[], io: CliIo, stop?: AbortSignal): Promise<number> {
  if (wantsHelp(argv)) {
    io.stdout(USAGE);
    return EXIT.ok;
  }
  let opened: OpenedBaton | undefined;
  let app: ReturnType<typeof buildServer> | undefined;
  try {
    const { values } = parse({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        ...STORE_OPTIONS,
        port: { type: 'string' },
        host: { type: 'string' },
        'log-level': { type: 'string' },
      },
    });
    const level = values['log-level'] ?? 'info';
    if (!LEVELS.includes(level))
      throw new BatonError('usage', `--log-level must be one of ${LEVELS.join(', ')}`);
    const host = values.host ?? '127.0.0.1';
    const wanted = port(values.port);
    const keys = hmacSecretsFromEnv(process.env['BATON_HMAC_SECRETS']);
    opened = await openBaton(storeChoice(values));
    await firstAdmin(opened, io);
    app = buildServer({
      engine: opened.engine,
      service: opened.service,
      signingKey: opened.domainKey.privateKey,
      keys,
      logger: { level, stream: process.stderr },
    });
    await app.listen({ port: wanted, host }).catch((cause: unknown) => {
      throw new BatonError('usage', `cannot listen on ${host}:${wanted}`, {}, { cause });
    });
    const actual = (app.server.address() as AddressInfo).port;
    io.stdout(`baton listening on http://${urlHost(host)}:${actual} (${opened.description})\n`);
  } catch (error) {
    await app?.close();
    await opened?.close();
    return reportStoreError(error, io);
  }
  await untilStopped(stop);
  await app.close();
  await opened.close();
  io.stderr('baton: stopped\n');
  return EXIT.ok;
}

export const serveCommand: Command = {
  name: 'serve',
  summary: 'Serve the HTTP API over SQLite or PostgreSQL.',
  usage: USAGE,
  run: (argv, io) => runServe(argv, io),
};
