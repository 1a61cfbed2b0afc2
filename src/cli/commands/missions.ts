/**
 * `baton missions anchor|verify-status|verify-set` (docs/missions.md): compute an integrity anchor
 * (MCO-03), and verify a Mission Status answer (A3.2) or a lifecycle SET (A3.4) offline against a
 * JWKS file. verify-* exit 0 when valid, 1 when refused (the code and failed check are printed),
 * 2 on bad usage or input.
 */
import { readFile } from 'node:fs/promises';
import type { ParseArgsConfig } from 'node:util';
import type { JSONWebKeySet } from 'jose';
import { BatonError } from '../../core/errors.js';
import type { JsonObject } from '../../core/json.js';
import { formatRfc3339, parseRfc3339 } from '../../core/time.js';
import {
  localMissionKeys,
  missionAnchor,
  setRefusal,
  statusRefusal,
  statusReliance,
  verifyMissionSet,
  verifyStatusJws,
  type MissionKeySource,
} from '../../missions/index.js';
import { onlyFlags, parseOptions, readInput, reportError, wantsHelp, type Command } from '../command.js';
import { EXIT, type CliIo } from '../io.js';
import { parseJsonFile, readJsonInput } from '../json-file.js';
import type { AdminClient } from '../../client/index.js';
import { adminClient, REMOTE_USAGE } from './remote.js';

const USAGE = `usage: baton missions anchor intent|authority FILE|- --iss URL [--json]
       baton missions verify-status FILE|- --jwks JWKS.json --iss URL --aud AUDIENCE --sub CLIENT_ID
                                    --nonce NONCE [--mission ID] [--now RFC3339|SECONDS] [--json]
       baton missions verify-set FILE|- --jwks JWKS.json --iss URL --aud AUDIENCE [--now RFC3339|SECONDS] [--json]
       baton missions check ISSUER MISSION_ID [--url URL] [--token TOKEN] [--json]
       baton missions bearer ISSUER (--push-bearer-file FILE | --poll-bearer-ref REF)
                             [--url URL] [--token TOKEN] [--json]
       baton missions unpin ISSUER [--url URL] [--token TOKEN] [--json]

anchor         prints intent_hash (intent: the approved Mission Intent object) or authority_hash
               (authority: the Authority Set array): sha-256: + base64url of SHA-256 over the JCS of
               {typ, iss, value}. Duplicate members are refused. --json: {"kind","anchor"}.
verify-status  checks a Mission Status answer (compact JWS) in the fixed order of the build spec A3.2:
               typ, alg (ES256, EdDSA), kid, signature against JWKS.json, iss, aud, sub, nonce, iat/exp
               (30 s skew), mission.id (--mission; without it the answer's own id is reported, not
               checked), mission.origin = iss, state, expires_at; then says whether it may be relied on
               (only 'active' before expires_at + 30 s). A nonce is base64url and may start with '-':
               give it as --nonce=VALUE.
verify-set     checks a lifecycle SET: typ secevent+jwt, alg, signature, iss, aud, exp required, iat,
               jti, and the lifecycle event's members; prints the RFC 8935 error code when refused.
check          asks a running server (operator token) to fetch the Mission's Status from its pinned
               issuer now (A3.2: nonce, private_key_jwt, the fixed verification order) and apply it;
               a non-active answer stops the Mission's governed work. Prints the state; exit 0 only
               for 'active', 1 for any other state, a refused answer (mission_status_invalid: the
               view became unknown) or no answer (mission_status_unavailable).
bearer         replaces a pinned issuer's SSF stream bearer on a running server (admin token;
               PUT /v1/missions/issuers/{issuer}/bearer; the pin itself stays as it is): a push
               stream's bearer read from FILE (never given on the command line), or a poll
               stream's env:BATON_SECRET_*|file:PATH reference, which the server resolves. The same
               bearer again changes nothing. Prints the issuer's stream and liveness.
unpin          stops trusting a pinned issuer on a running server (admin token; DELETE
               /v1/missions/issuers/{issuer}): its pin moves to the unpin history, its Missions'
               active views become stale at once (their work stops at the next dispatch or entry),
               its pushes are refused and it is polled no more; pin it again to trust it again.
               Prints removed, or absent when nothing was pinned under ISSUER (exit 0 for both).
               --json: {"issuer","status"}.
Exit 0 valid, 1 refused (code and check printed), 2 usage or unreadable input.
${REMOTE_USAGE}
`;

type Values = Record<string, string | boolean | undefined>;

const OPTIONS: NonNullable<ParseArgsConfig['options']> = {
  iss: { type: 'string' },
  aud: { type: 'string' },
  sub: { type: 'string' },
  nonce: { type: 'string' },
  mission: { type: 'string' },
  jwks: { type: 'string' },
  now: { type: 'string' },
  json: { type: 'boolean', default: false },
  url: { type: 'string' },
  token: { type: 'string' },
  'push-bearer-file': { type: 'string' },
  'poll-bearer-ref': { type: 'string' },
};

/**
 * The sub-commands' flags, parsed as one set; `verb` reads only `flags` of them, and any other given
 * is refused, not ignored (`--jwks` on anchor, `--nonce` on verify-set).
 */
function parse(
  argv: string[],
  verb: string,
  flags: readonly string[],
): { values: Values; positionals: string[] } {
  const { values, positionals } = parseOptions({
    args: argv,
    options: OPTIONS,
    allowPositionals: true,
    strict: true,
  });
  onlyFlags(values, [...flags, 'json'], `missions ${verb}`);
  return { values: values as Values, positionals };
}

function required(values: Values, name: string): string {
  const value = values[name];
  if (typeof value !== 'string' || value === '') throw new BatonError('usage', `--${name} is required`);
  return value;
}

function nowFrom(values: Values): number {
  const now = values['now'];
  if (typeof now !== 'string') return Date.now();
  if (/^[0-9]{1,12}$/.test(now)) return Number(now) * 1000;
  try {
    return parseRfc3339(now);
  } catch (cause) {
    throw new BatonError('usage', '--now is an RFC 3339 date-time or seconds since the epoch', {}, { cause });
  }
}

async function keysFrom(values: Values): Promise<MissionKeySource> {
  const file = required(values, 'jwks');
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (cause) {
    throw new BatonError('usage', `cannot read ${file}`, { file }, { cause });
  }
  return localMissionKeys(parseJsonFile(Buffer.from(text), file) as unknown as JSONWebKeySet);
}

async function compactFrom(file: string | undefined, io: CliIo): Promise<string> {
  return (await readInput(file, io)).toString('utf8').trim();
}

function unverifiedMissionId(jws: string): string {
  try {
    const payload = JSON.parse(Buffer.from(jws.split('.')[1] ?? '', 'base64url').toString('utf8')) as {
      mission?: { id?: unknown };
    };
    return typeof payload.mission?.id === 'string' ? payload.mission.id : '';
  } catch {
    return '';
  }
}

function refused(io: CliIo, asJson: boolean, code: string, detail: Record<string, unknown>): number {
  if (asJson) io.stdout(`${JSON.stringify({ valid: false, code, ...detail })}\n`);
  else
    io.stdout(
      `refused: ${code} ${Object.entries(detail)
        .map(([k, v]) => `${k}=${String(v)}`)
        .join(' ')}\n`,
    );
  return EXIT.negative;
}

async function verifyStatusCommand(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(argv, 'verify-status', [
    'jwks',
    'iss',
    'aud',
    'sub',
    'nonce',
    'mission',
    'now',
  ]);
  if (positionals.length > 1) throw new BatonError('usage', 'expected at most one FILE');
  const jws = await compactFrom(positionals[0], io);
  const keys = await keysFrom(values);
  const pinned = typeof values['mission'] === 'string';
  const missionId = pinned ? (values['mission'] as string) : unverifiedMissionId(jws);
  const nowMs = nowFrom(values);
  const expect = {
    issuer: required(values, 'iss'),
    audience: required(values, 'aud'),
    clientId: required(values, 'sub'),
    nonce: required(values, 'nonce'),
    missionId,
  };
  try {
    const status = await verifyStatusJws(jws, keys, expect, nowMs);
    const reliance = statusReliance(status, nowMs);
    const { jws: _jws, ...shown } = status;
    if (values['json'] === true)
      io.stdout(`${JSON.stringify({ valid: true, missionIdPinned: pinned, status: shown, reliance })}\n`);
    else {
      io.stdout(
        `valid: mission ${status.missionId} state ${JSON.stringify(status.state)} (kid ${status.kid}, checked ${formatRfc3339(nowMs)})\n`,
      );
      io.stdout(
        `reliance: ${reliance.relied ? 'yes' : 'no'} (${reliance.reason}) until ${reliance.freshUntil}\n`,
      );
      if (!pinned) io.stdout('note: --mission not given: mission.id was reported, not checked\n');
    }
    return EXIT.ok;
  } catch (error) {
    const refusal = statusRefusal(error);
    if (refusal === undefined) throw error;
    return refused(io, values['json'] === true, 'mission_status_invalid', {
      check: refusal.check,
      step: refusal.step,
    });
  }
}

async function verifySetCommand(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(argv, 'verify-set', ['jwks', 'iss', 'aud', 'now']);
  if (positionals.length > 1) throw new BatonError('usage', 'expected at most one FILE');
  const set = await compactFrom(positionals[0], io);
  const keys = await keysFrom(values);
  try {
    const verified = await verifyMissionSet(
      set,
      keys,
      { issuer: required(values, 'iss'), audience: required(values, 'aud') },
      nowFrom(values),
    );
    if (values['json'] === true) io.stdout(`${JSON.stringify({ valid: true, set: verified })}\n`);
    else if (verified.kind === 'lifecycle') {
      const s = verified.signal;
      io.stdout(
        `valid: mission ${s.missionId} ${s.priorState ?? '(approval)'} -> ${s.state} version ${s.version} (jti ${s.jti})\n`,
      );
    } else io.stdout(`valid: stream event ${verified.eventTypes.join(', ')} (jti ${verified.jti})\n`);
    return EXIT.ok;
  } catch (error) {
    const refusal = setRefusal(error);
    if (refusal === undefined) throw error;
    return refused(io, values['json'] === true, 'mission_signal_invalid', {
      check: refusal.check,
      err: refusal.err,
    });
  }
}

async function anchorCommand(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(argv, 'anchor', ['iss']);
  const [kind, file, ...extra] = positionals;
  if ((kind !== 'intent' && kind !== 'authority') || extra.length > 0) {
    throw new BatonError('usage', 'expected: anchor intent|authority FILE|- --iss URL');
  }
  const anchor = missionAnchor(kind, required(values, 'iss'), await readJsonInput(file, io));
  io.stdout(values['json'] === true ? `${JSON.stringify({ kind, anchor })}\n` : `${anchor}\n`);
  return EXIT.ok;
}

/** The running server the remote sub-commands talk to: --url and --token, else the environment. */
function serverClient(values: Values): AdminClient {
  const str = (name: string): string | undefined =>
    typeof values[name] === 'string' ? values[name] : undefined;
  return adminClient({ url: str('url'), token: str('token') });
}

async function checkCommand(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(argv, 'check', ['url', 'token']);
  const [issuer, mission, extra] = positionals;
  if (issuer === undefined || mission === undefined || extra !== undefined)
    throw new BatonError('usage', 'expected: check ISSUER MISSION_ID');
  const client = serverClient(values);
  try {
    const answer = await client.checkMission(issuer, mission);
    if (values['json'] === true) io.stdout(`${JSON.stringify(answer)}\n`);
    else
      io.stdout(
        `${answer.state} (${answer.active ? 'active' : 'not active'}); ${answer.applied ? 'applied' : 'not applied'}; work stopped: ${answer.stopped}\n`,
      );
    return answer.active ? EXIT.ok : EXIT.negative;
  } catch (error) {
    return reportError(error, io);
  }
}

/** The bearer to send: read from its file (a secret is never a flag value), or the reference. */
async function bearerBody(values: Values): Promise<JsonObject> {
  const file = values['push-bearer-file'];
  const ref = values['poll-bearer-ref'];
  if ((typeof file === 'string') === (typeof ref === 'string'))
    throw new BatonError(
      'usage',
      'bearer takes exactly one of --push-bearer-file FILE and --poll-bearer-ref REF',
    );
  if (typeof ref === 'string') return { pollBearerRef: ref };
  let text: string;
  try {
    text = await readFile(file as string, 'utf8');
  } catch (cause) {
    throw new BatonError('usage', `cannot read the push bearer file ${String(file)}`, {}, { cause });
  }
  return { pushBearer: text.trim() };
}

async function bearerCommand(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(argv, 'bearer', [
    'url',
    'token',
    'push-bearer-file',
    'poll-bearer-ref',
  ]);
  const [issuer, extra] = positionals;
  if (issuer === undefined || extra !== undefined) throw new BatonError('usage', 'expected: bearer ISSUER');
  const body = await bearerBody(values);
  const client = serverClient(values);
  try {
    const answer = await client.replaceMissionIssuerBearer(issuer, body);
    if (values['json'] === true) io.stdout(`${JSON.stringify(answer)}\n`);
    else
      io.stdout(
        `stream bearer of ${answer.issuer} set (${answer.delivery ?? 'no stream'}); stream ${answer.streamLive ? 'live' : 'not live'}\n`,
      );
    return EXIT.ok;
  } catch (error) {
    return reportError(error, io);
  }
}

async function unpinCommand(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(argv, 'unpin', ['url', 'token']);
  const [issuer, extra] = positionals;
  if (issuer === undefined || extra !== undefined) throw new BatonError('usage', 'expected: unpin ISSUER');
  const client = serverClient(values);
  try {
    const answer = await client.unpinMissionIssuer(issuer);
    io.stdout(
      values['json'] === true ? `${JSON.stringify(answer)}\n` : `${answer.issuer}: ${answer.status}\n`,
    );
    return EXIT.ok;
  } catch (error) {
    return reportError(error, io);
  }
}

/** The sub-commands, by name: the one list `runMissions` dispatches on and `verbs` declares. */
const SUB: Readonly<Record<string, (argv: string[], io: CliIo) => Promise<number>>> = {
  anchor: anchorCommand,
  'verify-status': verifyStatusCommand,
  'verify-set': verifySetCommand,
  check: checkCommand,
  bearer: bearerCommand,
  unpin: unpinCommand,
};

export async function runMissions(argv: string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === undefined || wantsHelp(argv)) {
    io.stdout(USAGE);
    return sub === undefined ? EXIT.usage : EXIT.ok;
  }
  try {
    const run = SUB[sub];
    if (run === undefined)
      throw new BatonError('usage', `unknown missions sub-command '${sub.slice(0, 40)}'`);
    return await run(rest, io);
  } catch (error) {
    return reportError(error, io);
  }
}

export const missionsCommand: Command = {
  name: 'missions',
  verbs: Object.keys(SUB),
  summary:
    'Mission anchors, offline verification of Status answers and SETs, a Status check now, stream bearer rotation and unpinning an issuer.',
  usage: USAGE,
  run: runMissions,
};
