/**
 * `baton lease keygen|sign|verify` (DESIGN.md §8; PTCL rules in src/leases, formats in docs/leases.md).
 * verify prints `valid` and exits 0, or prints the refusal code and exits 1; bad usage exits 2.
 */
import { Buffer } from 'node:buffer';
import { existsSync, statSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { ParseArgsConfig } from 'node:util';
import { BatonError, isBatonError } from '../../core/errors.js';
import type { JsonValue } from '../../core/json.js';
import {
  exportPrivatePem,
  exportPublicPem,
  generateEd25519KeyPair,
  importEd25519PrivateKey,
  importEd25519PublicKey,
} from '../../core/ed25519.js';
import { isSha256HexTag } from '../../core/digest.js';
import { parseRfc3339 } from '../../core/time.js';
import {
  keyRing,
  LEASE_CHECKS,
  parseLeaseJson,
  signLease,
  signingKeyFrom,
  unsignedLeaseFromJson,
  verifyLeaseText,
  type LeaseCheckName,
  type LeaseChecks,
  type LeaseVerdict,
} from '../../leases/index.js';
import { parseOptions, printJson, readInput, reportError, wantsHelp, type Command } from '../command.js';
import { inputName, jsonStop, locateWrappedJsonError, parseJsonFile } from '../json-file.js';
import { EXIT, type CliIo } from '../io.js';
import { checkOutputFolder, makeFolder, writeNewOutputFile } from '../output-files.js';

const USAGE = `usage: baton lease keygen --out DIR [--json]
       baton lease sign --key PRIVATE.pem [FILE|-]
       baton lease verify --key PUBLIC.pem [--now RFC3339] [--epoch N] [--state-digest sha256:HEX]
                          [--inverse-payload FILE] [--target URI] [--json] [FILE|-]

keygen  writes DIR/private.pem (PKCS#8, mode 0600) and DIR/public.pem (SPKI) and prints the kid.
        DIR is created if missing; a DIR that is a file, or that holds either key, is refused
        (exit 2): existing keys are never overwritten. Each file is written whole (FILE.partial,
        then linked into place), so a failed run leaves no truncated key.
sign    prints the lease signed with Ed25519 over the JCS of the lease without its signature member.
        A lease any verifier would refuse on its face is not signed (exit 2): malformed, an unknown
        recovery mode, t_req_ms > t_granted_ms, or a window that, accepted at issued_at, would end
        after 9999-12-31T23:59:59.999Z.
verify  checks every rule it has the facts for: shape, signature, recovery mode, t_req_ms <= t_granted_ms,
        target (--target), clock skew and expiry (against --now, default the system clock), fence epoch
        (--epoch: the resource's current epoch), pre-image (--state-digest) and inverse payload
        (--inverse-payload). Prints 'valid' and exits 0 (naming on stderr the rules it had no
        fact for: replay always, as only the system of record knows its consumed leases), or the
        refusal code and exits 1.
--json  one JSON document: keygen {"kid","private","public"} (the files' paths); verify
        {"valid":true,"checked":[RULE…],"notChecked":[RULE…]} or
        {"valid":false,"code","rule","message"}. sign always prints JSON.
`;

type Values = Record<string, string | boolean | undefined>;

function parse(
  argv: string[],
  options: NonNullable<ParseArgsConfig['options']>,
): { values: Values; positionals: string[] } {
  const { values, positionals } = parseOptions({ args: argv, options, allowPositionals: true, strict: true });
  return { values: values as Values, positionals };
}

async function readText(file: string, what: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (cause) {
    throw new BatonError('usage', `cannot read ${what} ${file}`, { file }, { cause });
  }
}

/** The lease text as JSON; not strict JSON stays `ERR_LEASE_MALFORMED`, named by file and position. */
function leaseJson(bytes: Uint8Array, file: string): JsonValue {
  try {
    return parseLeaseJson(bytes);
  } catch (error) {
    if (!isBatonError(error, 'ERR_LEASE_MALFORMED')) throw error;
    throw locateWrappedJsonError(error, bytes, file);
  }
}

/** A lease that is not strict JSON is still `ERR_LEASE_MALFORMED`, its message naming file and position. */
function locatedVerdict(verdict: LeaseVerdict, bytes: Uint8Array, file: string): LeaseVerdict {
  if (verdict.ok || verdict.rejection.code !== 'ERR_LEASE_MALFORMED') return verdict;
  // A verdict carries no error to read the position from: the refused bytes are parsed again
  // (on this refusal only), by the same reader.
  let stop: ReturnType<typeof jsonStop>;
  try {
    parseLeaseJson(bytes);
  } catch (error) {
    stop = jsonStop(error, bytes);
  }
  if (stop === undefined) return verdict;
  const at = stop.at === '' ? '' : ` ${stop.at}`;
  const message = `${file}${at}: ${verdict.rejection.message}: ${stop.message}`;
  return { ok: false, rejection: { ...verdict.rejection, message } };
}

function one(positionals: string[]): string | undefined {
  if (positionals.length > 1) throw new BatonError('usage', 'expected at most one FILE');
  return positionals[0];
}

/**
 * Refuse, before a key is made, an --out that is not a folder (or cannot become one), or that
 * already holds either key: existing keys are never overwritten.
 */
function checkKeyFolder(out: string): readonly [string, string] {
  const files = [join(out, 'private.pem'), join(out, 'public.pem')] as const;
  if (existsSync(out) && !statSync(out).isDirectory()) {
    throw new BatonError(
      'usage',
      `cannot write keys into ${out}: it is a file, not a folder (existing keys are never overwritten)`,
      { path: out },
    );
  }
  checkOutputFolder(out);
  for (const file of files) {
    if (existsSync(file)) {
      throw new BatonError(
        'usage',
        `cannot write keys into ${out}: ${file} exists already (existing keys are never overwritten)`,
        { path: file },
      );
    }
  }
  return files;
}

async function keygen(argv: string[], io: CliIo): Promise<number> {
  const { values } = parse(argv, { out: { type: 'string' }, json: { type: 'boolean' } });
  if (typeof values.out !== 'string') throw new BatonError('usage', '--out DIR is required');
  const [priv, pub] = checkKeyFolder(values.out);
  const pair = generateEd25519KeyPair();
  makeFolder(values.out); // made by the check already; again in case it went since
  // Each key is written whole under a temporary name, then linked into place: a crash or a full
  // disk never leaves a truncated private.pem (which a rerun would refuse as existing), and should
  // a key appear since the check, it is still never overwritten. The private key is born 0600.
  writeNewOutputFile(priv, exportPrivatePem(pair.privateKey), 0o600);
  try {
    writeNewOutputFile(pub, exportPublicPem(pair.publicKey));
  } catch (error) {
    // The private key just written has no public half: it is removed, not left half a pair.
    await rm(priv, { force: true });
    throw error;
  }
  if (values['json'] === true) printJson(io, { kid: pair.kid, private: priv, public: pub });
  else io.stdout(`${pair.kid}\n`);
  return EXIT.ok;
}

async function sign(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(argv, { key: { type: 'string' } });
  if (typeof values.key !== 'string') throw new BatonError('usage', '--key PRIVATE.pem is required');
  const key = signingKeyFrom(importEd25519PrivateKey({ pem: await readText(values.key, 'key') }));
  const file = one(positionals);
  const bytes = await readInput(file, io);
  const draft = unsignedLeaseFromJson(leaseJson(bytes, inputName(file)));
  let signed;
  try {
    signed = signLease(draft, key);
  } catch (error) {
    // A lease the verifier refuses on its face (docs/leases.md §2) is the caller's input: exit 2,
    // as a malformed one, whatever HTTP status its code has at a system of record.
    if (!isBatonError(error, 'ERR_UNKNOWN_RECOVERY_MODE') && !isBatonError(error, 'ERR_RECOVERY_WINDOW'))
      throw error;
    io.stderr(`error: ${error.code}: ${error.message}\n`);
    return EXIT.usage;
  }
  io.stdout(`${JSON.stringify(signed, null, 2)}\n`);
  return EXIT.ok;
}

async function verifyChecks(values: Values): Promise<LeaseChecks> {
  const key = importEd25519PublicKey({ pem: await readText(String(values['key']), 'key') });
  const checks: LeaseChecks = { nowMs: Date.now(), keys: keyRing([key]) };
  const { now, epoch, target } = values;
  const digest = values['state-digest'];
  const inverse = values['inverse-payload'];
  if (typeof now === 'string') checks.nowMs = parseRfc3339(now, '--now');
  if (typeof epoch === 'string') {
    if (!/^(0|[1-9][0-9]*)$/.test(epoch) || !Number.isSafeInteger(Number(epoch))) {
      throw new BatonError('usage', '--epoch must be a non-negative integer');
    }
    checks.epoch = Number(epoch);
  }
  if (typeof digest === 'string') {
    if (!isSha256HexTag(digest))
      throw new BatonError('usage', '--state-digest must be sha256: + 64 lowercase hex');
    checks.stateDigest = digest;
  }
  if (typeof inverse === 'string')
    checks.inverse = {
      staged: parseJsonFile(Buffer.from(await readText(inverse, 'inverse payload')), inverse),
    };
  if (typeof target === 'string') checks.target = target;
  return checks;
}

/** What a rule the verifier did not run needed: its flag, or the system of record's own record. */
const UNCHECKED_BECAUSE: Readonly<Record<LeaseCheckName, string>> = {
  signature: 'no --key',
  recovery_mode: 'no lease',
  recovery_window: 'no --now',
  target: 'no --target',
  clock_skew: 'no --now',
  expiry: 'no --now',
  inverse_payload: 'no --inverse-payload',
  replay: "the system of record's consumed leases",
  fence_epoch: 'no --epoch',
  pre_image: 'no --state-digest',
};

/** The verifier's rules a verdict did not run, in their order. */
function notChecked(checked: readonly LeaseCheckName[]): LeaseCheckName[] {
  return (Object.keys(LEASE_CHECKS) as LeaseCheckName[]).filter((c) => !checked.includes(c));
}

async function verify(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(argv, {
    key: { type: 'string' },
    now: { type: 'string' },
    epoch: { type: 'string' },
    'state-digest': { type: 'string' },
    'inverse-payload': { type: 'string' },
    target: { type: 'string' },
    json: { type: 'boolean' },
  });
  if (typeof values.key !== 'string') throw new BatonError('usage', '--key PUBLIC.pem is required');
  const checks = await verifyChecks(values);
  const file = one(positionals);
  const bytes = await readInput(file, io);
  const verdict = locatedVerdict(verifyLeaseText(bytes, checks), bytes, inputName(file));
  if (values['json'] === true) {
    if (verdict.ok) {
      printJson(io, { valid: true, checked: verdict.checked, notChecked: notChecked(verdict.checked) });
      return EXIT.ok;
    }
    const r = verdict.rejection;
    printJson(io, { valid: false, code: r.code, rule: r.rule, message: r.message });
    return EXIT.negative;
  }
  if (verdict.ok) {
    io.stdout('valid\n');
    // `valid` means valid against the facts given: say which rules had none (docs/leases.md §3).
    const skipped = notChecked(verdict.checked).map((c) => `${c} (${UNCHECKED_BECAUSE[c]})`);
    if (skipped.length > 0) io.stderr(`not checked: ${skipped.join(', ')}\n`);
    return EXIT.ok;
  }
  io.stdout(`${verdict.rejection.code}\n`);
  io.stderr(`refused (${verdict.rejection.rule}): ${verdict.rejection.message}\n`);
  return EXIT.negative;
}

const SUB: Record<string, (argv: string[], io: CliIo) => Promise<number>> = { keygen, sign, verify };

export async function runLease(argv: string[], io: CliIo): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || wantsHelp(argv)) {
    io.stdout(USAGE);
    return name === undefined ? EXIT.usage : EXIT.ok;
  }
  const sub = SUB[name];
  if (sub === undefined) {
    io.stderr(`error: usage: unknown lease command '${name}'\n\n${USAGE}`);
    return EXIT.usage;
  }
  try {
    return await sub(rest, io);
  } catch (error) {
    return reportError(error, io);
  }
}

export const leaseCommand: Command = {
  name: 'lease',
  verbs: Object.keys(SUB),
  summary: 'Generate keys for, sign and verify PTCL compensation leases.',
  usage: USAGE,
  run: runLease,
};
