/**
 * `baton log verify|export` (DESIGN.md §2): re-walk every evidence chain, or write the log as JSON
 * Lines closed by a checkpoint signed with the domain key.
 */
import { existsSync } from 'node:fs';
import type { KeyObject } from 'node:crypto';
import { BatonError } from '../../core/errors.js';
import { ed25519Sign, importEd25519PrivateKey } from '../../core/ed25519.js';
import { requireStoreDomainKey } from '../../store/occurrences.js';
import type { StoreEngine } from '../../store/engine.js';
import { appliedMigrations, migrationsTable } from '../../store/migrations.js';
import { verifyEvidence, type EvidenceProgress, type RowProgress } from '../../store/evidence-verify.js';
import { exportEvidence, type Checkpoint, type CheckpointSigner } from '../../store/evidence-export.js';
import { printJson, reportError, runStoppable, wantsHelp, type Command } from '../command.js';
import { EXIT, type CliIo } from '../io.js';
import { checkOutputFile, readNamedFile, writeThroughPartial } from '../output-files.js';
import { postgresAddress, type StoreChoice } from '../../server/open.js';
import { DEFAULT_DB, openForReading, parse, withEngine } from './store-args.js';
import { openStoreEngine, STORE_OPTIONS, STORE_USAGE, storeChoice } from './store-choice.js';

const USAGE = `usage: baton log verify [--db FILE | --postgres URL] [--json]
       baton log export [--db FILE | --postgres URL [--domain-key FILE]] [--out FILE] [--key PEM]

verify  Re-walk every evidence chain in seq order: recompute each hash, check each prev link and
        each chain's positions 1, 2, 3..., that every seq is a safe integer of at least 1, and
        each chain against the heads table; then compare each occurrence and authority budget
        row with what its chains record. Which seq an event holds across chains is not checked
        (seq may have gaps, and it is not hashed). On stderr, a progress line every 10,000 events walked and every 10,000
        occurrence rows compared. Prints a summary; on a problem prints the first one (seq,
        subject, reason) and exits 1. --json prints one JSON document instead:
        {"ok":B,"events":N,"subjects":N,"problems":N,"firstBroken":{"seq","subject","reason"}|null}
export  Write the log as JSON Lines (stdout, or --out FILE) closed by a checkpoint signed with the
        domain's Ed25519 key: --key PEM, else FILE.domain-key.pem beside the SQLite database, or
        the --domain-key file of a PostgreSQL store (exit 2 if none exists). A key that is not
        the domain key the store records is refused as serve refuses it (domain_conflict, exit
        1) before anything is written. A log that does not verify gets no checkpoint (exit 1).
        Its output is already JSON Lines (no --json).
        --out FILE is checked before the export (its folder must exist; exit 2 if it cannot be
        written), written to FILE.partial and renamed over FILE only when complete (an existing
        FILE is replaced).
The SQLite database defaults to ${DEFAULT_DB} and is never created; a PostgreSQL one must exist.
Both only read the store, never write to it (a read-only SQLite file is enough; a database
without Baton's tables is refused as no Baton store, unchanged).
${STORE_USAGE}
`;

const PROGRESS_EVERY = 10_000;

/** A stderr progress line every PROGRESS_EVERY items, so a long pass shows it is alive. */
function every<P>(io: CliIo, count: (p: P) => number, line: (p: P) => string): (p: P) => void {
  let next = PROGRESS_EVERY;
  return (p) => {
    const n = count(p);
    if (n < next) return;
    next = n - (n % PROGRESS_EVERY) + PROGRESS_EVERY;
    io.stderr(`${line(p)}…\n`);
  };
}

/** The chain walk's progress (verify, export). */
const progress = (io: CliIo, verb: string) =>
  every<EvidenceProgress>(
    io,
    (p) => p.events,
    (p) => `${verb} ${p.events} events in ${p.subjects} subjects`,
  );

/** Verify's second pass: occurrence rows compared with what their chains record. */
const rowProgress = (io: CliIo) =>
  every<RowProgress>(
    io,
    (p) => p.occurrences,
    (p) => `compared ${p.occurrences} occurrence rows with their chains`,
  );

/**
 * The store holds Baton's evidence log: read only, nothing created (a database without Baton's
 * migration table is not a Baton store and stays as it was).
 */
async function requireEvidenceLog(engine: StoreEngine, where: string): Promise<void> {
  if ((await migrationsTable(engine)) === 'missing') {
    throw new BatonError(
      'usage',
      `no Baton store in ${where} (it has no schema_migrations table; \`baton migrate\` creates one)`,
    );
  }
  if (!(await appliedMigrations(engine)).includes(1)) {
    throw new BatonError('usage', 'the database has no evidence log: run `baton migrate` first');
  }
}

async function verify(engine: StoreEngine, io: CliIo, json: boolean, where: string): Promise<number> {
  await requireEvidenceLog(engine, where);
  const r = await verifyEvidence(engine, progress(io, 'verified'), rowProgress(io));
  if (json) {
    const b = r.firstBroken;
    printJson(io, {
      ok: r.ok,
      events: r.events,
      subjects: r.subjects,
      problems: r.problems,
      firstBroken:
        b === undefined ? null : { seq: b.seq ?? null, subject: b.subject ?? null, reason: b.reason },
    });
    return r.ok ? EXIT.ok : EXIT.negative;
  }
  const summary = `${r.events} events in ${r.subjects} subjects`;
  if (r.ok) {
    io.stdout(`evidence log OK: ${summary}\n`);
    return EXIT.ok;
  }
  const b = r.firstBroken;
  io.stdout(`evidence log BROKEN: ${summary}, ${r.problems} problem(s)\n`);
  io.stdout(`first broken link: seq ${b?.seq}, subject ${b?.subject ?? '(unknown)'}: ${b?.reason}\n`);
  return EXIT.negative;
}

/** The store's own domain key file: beside a SQLite database, or the PostgreSQL --domain-key. */
function domainKeyOf(choice: StoreChoice): string {
  return choice.kind === 'sqlite' ? `${choice.path}.domain-key.pem` : choice.domainKeyFile;
}

/** A domain key file read, not yet compared with the store's (exportLog does, before any output). */
interface KeyFile {
  readonly path: string;
  readonly privateKey: KeyObject;
  /** How the user names the file, for a refusal (`--key PEM`); undefined: the file beside a SQLite database. */
  readonly hint: string | undefined;
}

/** The domain key: --key, else the store's domain key file (owned by the occurrences context); never created. */
function loadKeyFile(choice: StoreChoice, keyFile: string | undefined): KeyFile {
  const path = keyFile ?? domainKeyOf(choice);
  if (!existsSync(path)) {
    throw new BatonError(
      'usage',
      keyFile === undefined
        ? `no domain key: pass --key PEM or place it at ${path} (none is created)`
        : `no key file at ${path}`,
      { path },
    );
  }
  const privateKey = importEd25519PrivateKey({ pem: readNamedFile(path, 'the key file') });
  const hint =
    keyFile !== undefined
      ? '--key PEM'
      : choice.kind === 'postgres'
        ? '--domain-key FILE (or --key PEM)'
        : undefined;
  return { path, privateKey, hint };
}

/**
 * The checkpoint signer, once the key is known to be the store's domain key: a checkpoint is the
 * proof against rollback only when signed by the key the domain publishes (docs/store.md), so
 * another key is refused `domain_conflict`, as `baton serve` refuses it (the same check).
 */
async function signerFor(engine: StoreEngine, key: KeyFile): Promise<CheckpointSigner> {
  const { kid, privateKey } = await requireStoreDomainKey(engine, key.privateKey, key.path, key.hint);
  return (bytes) => ({ kid, sig: ed25519Sign(privateKey, bytes).toString('base64url') });
}

async function exportLog(
  engine: StoreEngine,
  io: CliIo,
  key: KeyFile,
  where: string,
  out?: string,
): Promise<number> {
  await requireEvidenceLog(engine, where);
  // Before any output is written (stdout or FILE.partial).
  const sign = await signerFor(engine, key);
  const run = (write: (line: string) => void, drained?: () => Promise<void>) =>
    exportEvidence(engine, write, sign, { onProgress: progress(io, 'exported'), drained });
  const summary = (c: Checkpoint): number => {
    const subjects = Object.keys(c.heads).length;
    io.stderr(
      `exported ${c.events} events in ${subjects} subjects; checkpoint signed by ${c.signature.kid}\n`,
    );
    return EXIT.ok;
  };
  if (out === undefined) {
    // A slow reader holds the walk back a page at a time: the log never piles up in memory.
    const c = await run((line) => io.stdout(line), io.drained?.bind(io));
    // The summary only once every line is written (a closed pipe ends the process first).
    await io.flush?.();
    return summary(c);
  }
  // To a file: through FILE.partial, fsynced, then renamed (a failed export never leaves a
  // plausible file); the summary only once FILE is in place. A SIGINT or SIGTERM stops the walk
  // at its next page and writeThroughPartial removes FILE.partial, so a stopped export leaves
  // nothing a later run would refuse; the yield lets the signal's handler run between pages (a
  // SQLite walk never waits on I/O).
  return runStoppable(io, `removing ${out}.partial`, async (stop) => {
    const stopped = async (): Promise<void> => {
      await new Promise((resolve) => setImmediate(resolve));
      if (stop.aborted) throw stop.reason;
    };
    return summary(await writeThroughPartial(out, (write) => run(write, stopped), 0o600));
  });
}

/** The verbs `runLog` accepts (and `verbs` declares). */
const LOG_VERBS: readonly string[] = ['verify', 'export'];

export async function runLog(argv: string[], io: CliIo): Promise<number> {
  if (wantsHelp(argv)) {
    io.stdout(USAGE);
    return EXIT.ok;
  }
  try {
    const { values, positionals } = parse({
      args: argv,
      strict: true,
      allowPositionals: true,
      options: {
        ...STORE_OPTIONS,
        out: { type: 'string' },
        key: { type: 'string' },
        json: { type: 'boolean' },
      },
    });
    const [action, ...extra] = positionals;
    if (extra.length > 0 || action === undefined || !LOG_VERBS.includes(action)) {
      throw new BatonError('usage', 'expected `baton log verify` or `baton log export` (see --help)');
    }
    const choice = storeChoice(values);
    // Read-only: an inspection writes nothing to the store it looks at (PostgreSQL: reads only).
    const open = (): StoreEngine | Promise<StoreEngine> =>
      choice.kind === 'sqlite' ? openForReading(choice.path) : openStoreEngine(choice, { create: false });
    const where = choice.kind === 'sqlite' ? choice.path : `the database at ${postgresAddress(choice.url)}`;
    if (action === 'verify') {
      if (values.out !== undefined || values.key !== undefined) {
        throw new BatonError('usage', '--out and --key belong to `baton log export`');
      }
      return await withEngine(open, (engine) => verify(engine, io, values.json === true, where));
    }
    if (values.json === true) throw new BatonError('usage', '`baton log export` already writes JSON Lines');
    // Before any work: an --out that cannot be written is refused now, not after the export.
    if (values.out !== undefined) checkOutputFile(values.out);
    const key = loadKeyFile(choice, values.key);
    return await withEngine(open, (engine) => exportLog(engine, io, key, where, values.out));
  } catch (error) {
    return reportError(error, io);
  }
}

export const logCommand: Command = {
  name: 'log',
  verbs: LOG_VERBS,
  summary: 'Verify the evidence log, or export it with a signed checkpoint.',
  usage: USAGE,
  run: runLog,
};
