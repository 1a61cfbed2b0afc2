/**
 * `baton issuer [--port N] [--host HOST]`: run the reference Mission issuer (src/issuer) until
 * SIGINT/SIGTERM. For development and tests only; it says so in its output and its metadata.
 */
import { readFile } from 'node:fs/promises';
import { BatonError } from '../../core/errors.js';
import { REFERENCE_LABEL, startIssuer } from '../../issuer/server.js';
import { parseOptions, reportError, untilStopped, wantsHelp, type Command } from '../command.js';
import { EXIT, type CliIo } from '../io.js';
import { startError } from '../listen.js';

const USAGE = `usage: baton issuer [--port N] [--host HOST] [--alg ES256|EdDSA] [--admin-token-file FILE]
                    [--public-url URL] [--max-stale-seconds N] [--reliance-seconds N]

Runs the reference Mission issuer — FOR DEVELOPMENT AND TESTS ONLY, not an authorization server for
production; all state is in memory. It serves AS metadata (/.well-known/oauth-authorization-server),
its JWKS, Mission Status (private_key_jwt), Mission Lifecycle, lifecycle SETs (push RFC 8935 or poll
RFC 8936), a token endpoint issuing Mission-bound at+jwt, and an admin API (bearer token) to register
clients and receivers, create missions, drive the lifecycle, rotate keys and arm faults.
  --port N                listen port (default 8788; 0 picks a free one)
  --host HOST             listen address (default 127.0.0.1)
  --alg ES256|EdDSA       signing algorithm (default ES256)
  --admin-token-file F    admin bearer token (default: $BATON_ISSUER_ADMIN_TOKEN, else a fresh one printed once)
  --public-url URL        issuer identifier (default http://HOST:PORT)
  --max-stale-seconds N   mission_max_stale_seconds advertised (default 60)
  --reliance-seconds N    how far mission.expires_at is set ahead of each answer (default 60)
`;

function options(argv: string[]) {
  return parseOptions({
    args: argv,
    strict: true,
    options: {
      port: { type: 'string', default: '8788' },
      host: { type: 'string', default: '127.0.0.1' },
      alg: { type: 'string', default: 'ES256' },
      'admin-token-file': { type: 'string' },
      'public-url': { type: 'string' },
      'max-stale-seconds': { type: 'string', default: '60' },
      'reliance-seconds': { type: 'string', default: '60' },
    },
  }).values;
}

function integer(text: string, name: string, max: number): number {
  if (!/^[0-9]{1,9}$/.test(text) || Number(text) > max)
    throw new BatonError('usage', `--${name} must be 0-${max}`);
  return Number(text);
}

async function adminToken(file: string | undefined): Promise<{ token: string | undefined; shown: boolean }> {
  if (file !== undefined) {
    try {
      return { token: (await readFile(file, 'utf8')).trim(), shown: false };
    } catch (cause) {
      throw new BatonError('usage', `cannot read ${file}`, { file }, { cause });
    }
  }
  const env = process.env['BATON_ISSUER_ADMIN_TOKEN'];
  return { token: env, shown: env === undefined };
}

export async function runIssuer(argv: string[], io: CliIo, stop?: AbortSignal): Promise<number> {
  if (wantsHelp(argv)) {
    io.stdout(USAGE);
    return EXIT.ok;
  }
  try {
    const v = options(argv);
    if (v.alg !== 'ES256' && v.alg !== 'EdDSA') throw new BatonError('usage', '--alg must be ES256 or EdDSA');
    const publicOrigin = v['public-url'];
    if (publicOrigin !== undefined && !URL.canParse(publicOrigin))
      throw new BatonError('usage', '--public-url must be a URL');
    const admin = await adminToken(v['admin-token-file']);
    if (admin.token !== undefined && admin.token.length < 16)
      throw new BatonError('usage', 'the admin token must be at least 16 characters');
    const port = integer(v.port, 'port', 65535);
    const issuer = await startIssuer({
      port,
      host: v.host,
      alg: v.alg,
      maxStaleSeconds: integer(v['max-stale-seconds'], 'max-stale-seconds', 86_400),
      relianceSec: integer(v['reliance-seconds'], 'reliance-seconds', 86_400),
      ...(admin.token !== undefined && { adminToken: admin.token }),
      ...(publicOrigin !== undefined && { publicOrigin }),
    }).catch((cause: unknown) => {
      throw startError(cause, v.host, port);
    });
    io.stdout(
      `${REFERENCE_LABEL}\nissuer ${issuer.origin} listening on ${issuer.url}\nmetadata ${issuer.url}/.well-known/oauth-authorization-server\nsigning key ${issuer.state.keys.current.kid} (${v.alg}, fresh for this run)\n`,
    );
    if (admin.shown) io.stdout(`admin token (shown once): ${issuer.adminToken}\n`);
    await untilStopped(stop);
    await issuer.close();
    return EXIT.ok;
  } catch (error) {
    return reportError(error, io);
  }
}

export const issuerCommand: Command = {
  name: 'issuer',
  summary: 'Run the reference Mission issuer (development and tests only).',
  usage: USAGE,
  run: (argv, io) => runIssuer(argv, io),
};
