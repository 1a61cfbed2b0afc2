/**
 * `baton observe validate|sign|verify|export|metrics` (B6): continuity observation records on the
 * command line. validate/sign/verify work on one record file; export/metrics on a store, after the
 * idempotent handoff projector has run over its evidence log.
 */
import { createPublicKey, createPrivateKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { BatonError, isBatonError } from '../../core/errors.js';
import { canonicalize } from '../../core/jcs.js';
import { digestJcs } from '../../core/digest.js';
import { parseRfc3339 } from '../../core/time.js';
import { readRecord, signRecord, verifyRecord } from '../../observations/index.js';
import { openBaton } from '../../server/open.js';
import { ContinuityStore } from '../../store/index.js';
import { readInput, redactSecrets, reportError, wantsHelp, type Command } from '../command.js';
import { EXIT, type CliIo } from '../io.js';
import { inputName, locateWrappedJsonError } from '../json-file.js';
import { parse } from './store-args.js';
import { STORE_OPTIONS, STORE_USAGE, storeChoice } from './store-choice.js';

const USAGE = `usage: baton observe validate [FILE|-]
       baton observe sign [FILE|-] --key PEM
       baton observe verify [FILE|-] --key PEM --producer URI --audience URI [--now RFC3339]
       baton observe export [store] [--record-id ID]
       baton observe metrics [store] [--lineage L] [--from T] [--to T] [--sample N --seed S]

validate  Read one continuity observation record strictly (urn:baton:continuity-observation:1):
          prints its sha-256 JCS digest, uninterpreted extensions and unapproved locators (never
          fetched). It checks no signature: a signed record is "valid" by its shape alone (use
          verify). Exit 0 valid, 1 refused (code, rule and JSON path on stderr), 2 unreadable.
sign      Sign a record with an Ed25519 private key (jws-compact envelope); prints the signed record.
verify    Verify a signed record: producer, audience, profile, freshness, signature. --key is the
          public (or private) Ed25519 PEM of the producer named by --producer: a record naming
          another producer is refused, whatever key signed it (OBS-12). Exit 0 accepted, 1 refused.
export    Project Baton's handoff records, then print the stored records as JSON Lines.
metrics   Project, then print FIC_obs and CIF as JSON: both over --from/--to (entries for FIC_obs,
          records' observed_at for CIF) and --lineage; --sample N --seed S samples FIC_obs only.
export and metrics need an existing store with its domain key (neither is created here); once it is
open they say on stderr that the projection runs (a large evidence log takes a while).
${STORE_USAGE}
`;

const refusal = (error: unknown, io: CliIo): number => {
  if (isBatonError(error) && error.code !== 'usage') {
    const rule =
      typeof error.details['rule'] === 'string'
        ? ` [${error.details['rule']} at ${String(error.details['path'])}]`
        : '';
    io.stderr(`refused: ${error.code}${rule}: ${redactSecrets(error.message)}\n`);
    return EXIT.negative;
  }
  return reportError(error, io);
};

function keyFile(path: string | undefined, kind: 'public' | 'private'): KeyObject {
  if (path === undefined) throw new BatonError('usage', '--key PEM is required');
  let pem: Buffer;
  try {
    pem = readFileSync(path);
  } catch (cause) {
    throw new BatonError('usage', `cannot read ${path}`, { path }, { cause });
  }
  try {
    const key = kind === 'public' ? createPublicKey(pem) : createPrivateKey(pem);
    if (key.asymmetricKeyType !== 'ed25519')
      throw new BatonError('key_unsupported', 'the key is not Ed25519');
    return key;
  } catch (cause) {
    if (isBatonError(cause)) throw cause;
    throw new BatonError('usage', `${path} is not a PEM key`, { path }, { cause });
  }
}

async function readFileArg(argv: string[], io: CliIo, options: Record<string, { type: 'string' }>) {
  const { values, positionals } = parse({ args: argv, allowPositionals: true, strict: true, options });
  if (positionals.length > 1) throw new BatonError('usage', 'expected at most one FILE');
  const file = positionals[0];
  const bytes = await readInput(file, io);
  return { values: values as Record<string, string | undefined>, bytes, name: inputName(file) };
}

/** readRecord; a record that is not strict JSON (rule `bytes`) is refused naming file and position. */
function readRecordIn(bytes: Uint8Array, name: string): ReturnType<typeof readRecord> {
  try {
    return readRecord(bytes);
  } catch (error) {
    if (!isBatonError(error, 'observation_record_invalid') || error.details['rule'] !== 'bytes') throw error;
    throw locateWrappedJsonError(error, bytes, name);
  }
}

async function validate(argv: string[], io: CliIo): Promise<number> {
  const { bytes, name } = await readFileArg(argv, io, {});
  try {
    const r = readRecordIn(bytes, name);
    io.stdout(`valid ${digestJcs(r.record)}\n`);
    // The reader checks the envelope's format, never its signature (OBS-12 ¶25): say so.
    if (r.record.evidence_envelope !== undefined)
      io.stdout('signature not checked: validate reads the record only; use `baton observe verify`\n');
    for (const u of r.uninterpreted) io.stdout(`uninterpreted extension: ${u}\n`);
    for (const l of r.unapprovedLocators) io.stdout(`unapproved locator (not fetched): ${l}\n`);
    return EXIT.ok;
  } catch (error) {
    return refusal(error, io);
  }
}

async function sign(argv: string[], io: CliIo): Promise<number> {
  const { values, bytes, name } = await readFileArg(argv, io, { key: { type: 'string' } });
  const key = keyFile(values['key'], 'private');
  try {
    const signed = await signRecord(readRecordIn(bytes, name).record, key);
    io.stdout(`${canonicalize(signed)}\n`);
    return EXIT.ok;
  } catch (error) {
    return refusal(error, io);
  }
}

async function verify(argv: string[], io: CliIo): Promise<number> {
  const { values, bytes, name } = await readFileArg(argv, io, {
    key: { type: 'string' },
    producer: { type: 'string' },
    audience: { type: 'string' },
    now: { type: 'string' },
  });
  const key = keyFile(values['key'], 'public');
  const audience = values['audience'];
  if (audience === undefined) throw new BatonError('usage', '--audience URI is required');
  // OBS-12 ¶25: verifiers check the namespace. The key is pinned to one producer; a record signed
  // by it but claiming any other producer is refused.
  const producer = values['producer'];
  if (producer === undefined) {
    throw new BatonError('usage', '--producer URI is required: the producer whose key --key is');
  }
  const now = values['now'] === undefined ? Date.now() : parseRfc3339(values['now']);
  try {
    const { record } = readRecordIn(bytes, name);
    await verifyRecord(record, { key, audience, producers: [producer], now });
    io.stdout(`verified ${record.record_id} from ${producer} ${digestJcs(record)}\n`);
    return EXIT.ok;
  } catch (error) {
    return refusal(error, io);
  }
}

/**
 * Open the chosen store (never creating a domain key) with its continuity store. Every caller
 * first projects the whole evidence log into handoff records, which takes a while on a large log:
 * one progress line on stderr says so once the store is open.
 */
export async function withContinuity(
  values: Record<string, string | boolean | undefined>,
  io: CliIo,
  body: (c: ContinuityStore) => Promise<number>,
): Promise<number> {
  const choice = storeChoice(values);
  const opened = await openBaton(choice, { createDomainKey: false });
  try {
    io.stderr(`projecting the evidence log of ${opened.description} into handoff records…\n`);
    return await body(
      new ContinuityStore({ engine: opened.engine, signingKey: opened.domainKey.privateKey }),
    );
  } finally {
    await opened.close();
  }
}

function instant(text: string | undefined, name: string): number | undefined {
  if (text === undefined) return undefined;
  try {
    return parseRfc3339(text);
  } catch (cause) {
    throw new BatonError('usage', `--${name} must be an RFC 3339 date-time`, {}, { cause });
  }
}

export function ficQuery(values: Record<string, string | undefined>) {
  const sample = values['sample'];
  if ((sample === undefined) !== (values['seed'] === undefined)) {
    throw new BatonError('usage', '--sample N and --seed S go together');
  }
  if (sample !== undefined && !/^[0-9]{1,9}$/.test(sample))
    throw new BatonError('usage', '--sample must be a whole number');
  return {
    ...(values['lineage'] !== undefined && { lineage: values['lineage'] }),
    ...(values['from'] !== undefined && { from: instant(values['from'], 'from') }),
    ...(values['to'] !== undefined && { to: instant(values['to'], 'to') }),
    ...(sample !== undefined && { sample: { size: Number(sample), seed: values['seed'] ?? '' } }),
  };
}

const METRIC_OPTIONS = {
  ...STORE_OPTIONS,
  lineage: { type: 'string' },
  from: { type: 'string' },
  to: { type: 'string' },
  sample: { type: 'string' },
  seed: { type: 'string' },
} as const;

async function exportRecords(argv: string[], io: CliIo): Promise<number> {
  const { values } = parse({
    args: argv,
    strict: true,
    options: { ...STORE_OPTIONS, 'record-id': { type: 'string' } },
  });
  return withContinuity(values, io, async (c) => {
    await c.project();
    const id = values['record-id'];
    const records = (await c.list()).filter((r) => id === undefined || r.record_id === id);
    if (id !== undefined && records.length === 0)
      throw new BatonError('observation_record_not_found', 'no record with this id');
    for (const r of records) io.stdout(`${canonicalize(r.record)}\n`);
    return EXIT.ok;
  });
}

async function metrics(argv: string[], io: CliIo): Promise<number> {
  const { values } = parse({ args: argv, strict: true, options: METRIC_OPTIONS });
  return withContinuity(values, io, async (c) => {
    const projection = await c.project();
    const q = ficQuery(values);
    // B3.6: CIF over the records of the same window and lineage as FIC_obs (the sample is FIC's
    // only). B3.2: a record the full re-derivation contradicts counts UNKNOWN conflicting_evidence.
    const { sample: _ficOnly, ...scope } = q;
    const cifResult = await c.cif({ ...scope, conflicts: projection.conflicts });
    const body = { projection, fic_obs: await c.fic(q), cif: cifResult };
    io.stdout(`${JSON.stringify(body, null, 2)}\n`);
    return EXIT.ok;
  });
}

const SUB: Readonly<Record<string, (argv: string[], io: CliIo) => Promise<number>>> = {
  validate,
  sign,
  verify,
  export: exportRecords,
  metrics,
};

export const observeCommand: Command = {
  name: 'observe',
  verbs: Object.keys(SUB),
  summary: 'Continuity observation records: validate, sign, verify, export, metrics.',
  usage: USAGE,
  async run(argv, io) {
    const [sub, ...rest] = argv;
    if (sub === undefined || wantsHelp(argv)) {
      io.stdout(USAGE);
      return sub === undefined && !wantsHelp(argv) ? EXIT.usage : EXIT.ok;
    }
    const fn = SUB[sub];
    if (fn === undefined) {
      io.stderr(`error: usage: unknown sub-command ${sub}\n${USAGE}`);
      return EXIT.usage;
    }
    try {
      return await fn(rest, io);
    } catch (error) {
      return reportError(error, io);
    }
  },
};
