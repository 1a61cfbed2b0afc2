/**
 * The floor of the store benchmarks: the guarded lifecycle's three transactions written as plain
 * SQL, statement for statement what the OccurrencesService sends through the store (the same reads
 * and locks, the same rows, the same stripe and evidence-head writes, evidence hashed the same
 * way), without Baton's validation, machine, port or engine. One script per transaction, written
 * once as a generator of statements and run by two drivers: better-sqlite3 (synchronous, one
 * COMMIT per transaction — the unbatched floor — or several per COMMIT — the batched floor) and
 * pg (BEGIN … COMMIT on a pooled connection).
 */
import Database from 'better-sqlite3';
import pg from 'pg';
import { canonicalize } from '../src/core/jcs.js';
import { digestBytes, digestJcs } from '../src/core/digest.js';
import { migrate, openPostgresEngine, openSqliteEngine } from '../src/store/index.js';
import { DEFAULT_IDLE_TIMEOUT_MS } from '../src/store/postgres.js';
import { toPostgresPlaceholders } from '../src/store/postgres-sql.js';
import { OPEN_STRIPES, preferredStripe, stripeCap } from '../src/store/occurrences-limits.js';
import { ACCOUNT, benchProfile, request } from './occurrences-fixtures.js';
import type { Lifecycle } from './support.js';

type Value = string | number | null;
interface Stmt {
  readonly sql: string;
  readonly params: readonly Value[];
  readonly kind: 'get' | 'run';
}
type Row = Record<string, unknown> | undefined;
/** A transaction: yields statements, gets back the first row (get) or the changed-row count (run). */
type Script<T> = Generator<Stmt, T, Row | number>;

const LIMIT = 1000; // the bench domain's limits (occurrences-fixtures.ts)
const PROFILE_DIGEST = digestJcs(benchProfile());
const OCC_COLUMNS =
  'id, lineage, creation_scope, creation_key, creation_digest, linked_ids, profile_id, profile_version, profile_digest, account, environment, request_digest, native_key_rule, native_key, provider_reference, captured_generation, entry_deadline, authority_id, authority_amount, authority_unit, phase, outcome, effect, conflict, entered_at, entered_generation, released_at, resolved_at, remedy_of, remedy_kind, reissue_of, created_at, updated_at, version, open_stripe';

export interface FloorExecutor {
  readonly lineage: string;
  readonly credential: string;
  readonly authority: string;
}

const get = (sql: string, params: readonly Value[] = []): Stmt => ({ sql, params, kind: 'get' });
const run = (sql: string, params: readonly Value[] = []): Stmt => ({ sql, params, kind: 'run' });

/** One evidence append: a run of one, as evidence-log.ts appends it. */
function* append(
  fu: string,
  subject: string,
  type: string,
  body: unknown,
  at: number,
  head: { hash: string | null; count: number } | undefined,
): Script<void> {
  yield* appendRun(fu, subject, at, [[type, body]], head);
}

/**
 * Events of one chain as evidence-log.ts appends them: the head (looked up unless the caller knows
 * it, as for a chain it just created), one multi-row INSERT, one head write; the body encoded once
 * and the hash over the assembled JCS.
 */
function* appendRun(
  fu: string,
  subject: string,
  at: number,
  events: readonly (readonly [string, unknown])[],
  known?: { hash: string | null; count: number },
): Script<void> {
  let head = known;
  if (head === undefined) {
    const row = (yield get(`SELECT head, count FROM evidence_heads WHERE subject = ?${fu}`, [
      subject,
    ])) as Row;
    head =
      row === undefined
        ? { hash: null, count: 0 }
        : { hash: String(row['head']), count: Number(row['count']) };
  }
  const first = head.hash;
  let prev = first;
  let idx = head.count;
  const params: Value[] = [];
  for (const [type, body] of events) {
    const text = canonicalize(body);
    const hash = digestBytes(
      `{"actor":"floor","at":${at},"body":${text},"prev":${prev === null ? 'null' : JSON.stringify(prev)},"subject":${JSON.stringify(subject)},"type":${JSON.stringify(type)}}`,
    );
    idx += 1;
    params.push(subject, idx, type, text, at, 'floor', prev, hash);
    prev = hash;
  }
  const rows = Array(events.length).fill('(?, ?, ?, ?, ?, ?, ?, ?)').join(', ');
  const last = (yield get(
    `INSERT INTO evidence_events (subject, idx, type, body, at, actor, prev, hash) VALUES ${rows} ON CONFLICT DO NOTHING RETURNING seq, idx`,
    params,
  )) as Row;
  const seq = Number(last?.['seq']);
  if (first === null)
    yield run('INSERT INTO evidence_heads (subject, head, count, last_seq) VALUES (?, ?, ?, ?)', [
      subject,
      prev,
      idx,
      seq,
    ]);
  else
    yield run('UPDATE evidence_heads SET head = ?, count = ?, last_seq = ? WHERE subject = ? AND head = ?', [
      prev,
      idx,
      seq,
      subject,
      first,
    ]);
}

/** What every executor command reads first: the domain, the credential, the lineage (locked). */
function* executorReads(fu: string, x: FloorExecutor): Script<void> {
  yield get(
    'SELECT id, kid, public_key, limits, bypass_paths, created_at, updated_at, version FROM aoc_domain WHERE singleton = 1',
  );
  yield get(
    'SELECT secret_digest, lineage, generation, issued_at, retired_at FROM aoc_credentials WHERE secret_digest = ?',
    [x.credential],
  );
  yield get(`SELECT id, generation, created_at, updated_at, version FROM aoc_lineages WHERE id = ?${fu}`, [
    x.lineage,
  ]);
}

function* countOpen(lineage: string): Script<void> {
  yield get(
    `SELECT (SELECT COUNT(*) FROM aoc_occurrences WHERE phase = 'reserved' AND lineage = ?) AS lp,
       (SELECT COUNT(*) FROM aoc_occurrences WHERE phase = 'entered' AND lineage = ?) AS lf,
       (SELECT SUM(pending) FROM aoc_open_stripes) AS dp, (SELECT SUM(in_flight) FROM aoc_open_stripes) AS df`,
    [lineage, lineage],
  );
}

function* create(fu: string, x: FloorExecutor, id: string, key: string, i: number): Script<void> {
  const now = Date.now();
  const req = request(i);
  const nativeKey = `baton:floor-domain:${id}`;
  const linked = [{ type: 'provider_key', value: nativeKey }];
  const creationDigest = digestJcs({ req, key });
  const requestDigest = digestJcs(req);
  yield* executorReads(fu, x);
  yield get(`SELECT ${OCC_COLUMNS} FROM aoc_occurrences WHERE creation_scope = ? AND creation_key = ?${fu}`, [
    x.lineage,
    key,
  ]);
  const a = (yield get(
    `SELECT id, unit, total, reserved, consumed, created_at, updated_at, version FROM aoc_authorities WHERE id = ?${fu}`,
    [x.authority],
  )) as Row;
  yield* countOpen(x.lineage);
  const stripe = preferredStripe(id);
  yield run('UPDATE aoc_open_stripes SET pending = pending + 1 WHERE stripe = ? AND pending < ?', [
    stripe,
    stripeCap(LIMIT, stripe),
  ]);
  yield run(
    `INSERT INTO aoc_occurrences (${OCC_COLUMNS}, request) VALUES (?, ?, ?, ?, ?, ?, 'bench-payments', '1', ?, ?, 'bench', ?, 'template', ?, NULL, 1, ?, ?, 100, 'EUR-cents',
     'reserved', 'unknown', 'unresolved', 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, ?, ?, 1, ?, ?) ON CONFLICT DO NOTHING`,
    [
      id,
      x.lineage,
      x.lineage,
      key,
      creationDigest,
      canonicalize(linked),
      PROFILE_DIGEST,
      ACCOUNT,
      requestDigest,
      nativeKey,
      now + 300_000,
      x.authority,
      now,
      now,
      stripe,
      canonicalize(req),
    ],
  );
  yield run(
    'INSERT INTO aoc_linked_ids (occurrence_id, type, value, exclusive_key) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING',
    [id, 'provider_key', nativeKey, canonicalize(['bench-payments', ACCOUNT, 'bench', nativeKey])],
  );
  const reserved = Number(a?.['reserved']) + 100;
  const version = Number(a?.['version']);
  yield run(
    'UPDATE aoc_authorities SET reserved = ?, consumed = ?, updated_at = ?, version = ? WHERE id = ? AND version = ? AND consumed <= ?',
    [reserved, Number(a?.['consumed']), now, version + 1, x.authority, version, Number(a?.['consumed'])],
  );
  // The same facts the guarded service records (machine/create.ts); a new chain: no head to read.
  yield* append(
    fu,
    `occurrence:${id}`,
    'occurrence_created',
    {
      occurrence: id,
      lineage: x.lineage,
      creationBinding: { scope: x.lineage, key, requestDigest: creationDigest },
      linkedIds: linked,
      provider: {
        profileId: 'bench-payments',
        profileVersion: '1',
        profileDigest: PROFILE_DIGEST,
        account: ACCOUNT,
        environment: 'bench',
        requestDigest,
        nativeKeyRule: 'template',
        nativeKey,
        providerReference: null,
      },
      capturedGeneration: 1,
      entryDeadline: now + 300_000,
      authority: {
        id: x.authority,
        amount: 100,
        unit: 'EUR-cents',
        reservedAfter: reserved,
        consumedAfter: 0,
      },
      remedyOf: null,
      remedyKind: null,
      reissueOf: null,
    },
    now,
    { hash: null, count: 0 },
  );
}

function* enter(fu: string, x: FloorExecutor, id: string): Script<void> {
  const now = Date.now();
  yield* executorReads(fu, x);
  const o = (yield get(`SELECT ${OCC_COLUMNS}, request FROM aoc_occurrences WHERE id = ?${fu}`, [id])) as Row;
  const a = (yield get(
    `SELECT id, unit, total, reserved, consumed, created_at, updated_at, version FROM aoc_authorities WHERE id = ?${fu}`,
    [x.authority],
  )) as Row;
  yield* countOpen(x.lineage);
  const stripe = Number(o?.['open_stripe']);
  yield run(
    'UPDATE aoc_open_stripes SET pending = pending - 1, in_flight = in_flight + 1 WHERE stripe = ? AND in_flight < ?',
    [stripe, stripeCap(LIMIT, stripe)],
  );
  yield run(
    `UPDATE aoc_occurrences SET phase = 'entered', outcome = 'unknown', effect = 'unresolved', conflict = 0, entered_at = ?,
       entered_generation = 1, released_at = NULL, resolved_at = NULL, linked_ids = ?, provider_reference = NULL,
       updated_at = ?, version = ?, open_stripe = ?
     WHERE id = ? AND version = ? AND (provider_reference IS NULL OR provider_reference = ?)`,
    [
      now,
      String(o?.['linked_ids']),
      now,
      Number(o?.['version']) + 1,
      stripe,
      id,
      Number(o?.['version']),
      null,
    ],
  );
  const version = Number(a?.['version']);
  const consumed = Number(a?.['consumed']) + 100;
  yield run(
    'UPDATE aoc_authorities SET reserved = ?, consumed = ?, updated_at = ?, version = ? WHERE id = ? AND version = ? AND consumed <= ?',
    [Number(a?.['reserved']) - 100, consumed, now, version + 1, x.authority, version, consumed],
  );
  yield* append(
    fu,
    `occurrence:${id}`,
    'provider_entered',
    {
      generation: 1,
      attempt: 1,
      requestDigest: String(o?.['request_digest']),
      nativeKey: `baton:floor-domain:${id}`,
      authority: {
        id: x.authority,
        consumed: 100,
        reservedAfter: Number(a?.['reserved']) - 100,
        consumedAfter: consumed,
      },
    },
    now,
    undefined,
  );
}

function* observe(fu: string, id: string, reference: string): Script<void> {
  const now = Date.now();
  const o = (yield get(`SELECT ${OCC_COLUMNS}, request FROM aoc_occurrences WHERE id = ?${fu}`, [id])) as Row;
  yield run(
    'INSERT INTO aoc_linked_ids (occurrence_id, type, value, exclusive_key) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING',
    [id, 'provider_reference', reference, canonicalize(['bench-payments', ACCOUNT, 'bench', reference])],
  );
  const stripe = Number(o?.['open_stripe']);
  yield run('UPDATE aoc_open_stripes SET in_flight = in_flight - 1 WHERE stripe = ?', [stripe]);
  yield run(
    `UPDATE aoc_occurrences SET phase = 'resolved', outcome = 'success', effect = 'occurred', conflict = 0, entered_at = ?,
       entered_generation = 1, released_at = NULL, resolved_at = ?, linked_ids = ?, provider_reference = ?,
       updated_at = ?, version = ?, open_stripe = ?
     WHERE id = ? AND version = ? AND (provider_reference IS NULL OR provider_reference = ?)`,
    [
      Number(o?.['entered_at']),
      now,
      String(o?.['linked_ids']),
      reference,
      now,
      Number(o?.['version']) + 1,
      stripe,
      id,
      Number(o?.['version']),
      reference,
    ],
  );
  const carried = {
    account: ACCOUNT,
    environment: 'bench',
    requestDigest: String(o?.['request_digest']),
    nativeKey: `baton:floor-domain:${id}`,
    providerReference: null,
  };
  const observation = {
    source: 'by-key',
    observedAt: now,
    result: 'found',
    nativeStatus: 'succeeded',
    authentication: { verified: true, pin: 'bench-2026' },
    carried,
    complete: true,
    response: { id: reference, status: 'succeeded', amount: 100 },
  };
  const interpretation = {
    interpretation: 'success',
    establishesNoEffect: false,
    effective: true,
    missingKnowledge: null,
    profile: { id: 'bench-payments', version: '1' },
  };
  const from = { phase: 'entered', outcome: 'unknown', effect: 'unresolved', conflict: false };
  const to = { phase: 'resolved', outcome: 'success', effect: 'occurred', conflict: false };
  // Three events of one chain in one run, as evidence-log.ts appendEvidenceRun writes them.
  yield* appendRun(fu, `occurrence:${id}`, now, [
    ['observation_recorded', { observation, interpretation }],
    ['provider_reference_bound', { providerReference: reference }],
    ['state_changed', { from, to }],
  ]);
}

/** The rows the floor's transactions read: a domain, a profile, `executors` lineages with credentials and budgets. */
function* seed(executors: number): Script<FloorExecutor[]> {
  const profile = benchProfile();
  yield run(
    "INSERT INTO aoc_domain (singleton, id, kid, public_key, limits, bypass_paths, created_at, updated_at, version) VALUES (1, 'floor-domain', 'kid', 'pk', ?, '[]', 0, 0, 1)",
    [canonicalize({ maxPendingPerDomain: LIMIT, maxInFlightPerDomain: LIMIT })],
  );
  yield run(
    "INSERT INTO aoc_profiles (id, version, digest, document, registered_at) VALUES ('bench-payments', '1', ?, ?, 0)",
    [PROFILE_DIGEST, canonicalize(profile)],
  );
  const list: FloorExecutor[] = [];
  for (let e = 0; e < executors; e++) {
    const x = {
      lineage: `floor-agent-${e}`,
      credential: digestBytes(`floor-credential-${e}`),
      authority: `floor-pay-${e}`,
    };
    yield run(
      'INSERT INTO aoc_lineages (id, generation, created_at, updated_at, version) VALUES (?, 1, 0, 0, 1)',
      [x.lineage],
    );
    yield run(
      'INSERT INTO aoc_credentials (secret_digest, lineage, generation, issued_at, retired_at) VALUES (?, ?, 1, 0, NULL)',
      [x.credential, x.lineage],
    );
    yield run(
      "INSERT INTO aoc_authorities (id, unit, total, reserved, consumed, created_at, updated_at, version) VALUES (?, 'EUR-cents', 1000000000000, 0, 0, 0, 0, 1)",
      [x.authority],
    );
    list.push(x);
  }
  return list;
}

/** The three transactions of one lifecycle, by name. */
export const floorScripts = {
  create: (fu: string, x: FloorExecutor, id: string, key: string, i: number) => create(fu, x, id, key, i),
  enter: (fu: string, x: FloorExecutor, id: string) => enter(fu, x, id),
  observe: (fu: string, id: string, reference: string) => observe(fu, id, reference),
  seed: (executors: number) => seed(executors),
};

// --- drivers ----------------------------------------------------------------------------------

type Db = Database.Database;
type SqliteStmt = Database.Statement<unknown[], unknown>;
const prepared = new WeakMap<Db, Map<string, SqliteStmt>>();

function sqliteStep(db: Db, s: Stmt): Row | number {
  let cache = prepared.get(db);
  if (cache === undefined) prepared.set(db, (cache = new Map<string, SqliteStmt>()));
  let stmt = cache.get(s.sql);
  if (stmt === undefined) cache.set(s.sql, (stmt = db.prepare(s.sql)));
  return s.kind === 'get' ? (stmt.get(...s.params) as Row) : stmt.run(...s.params).changes;
}

/** Run a script to its end on better-sqlite3, inside whatever transaction is open. */
export function runOnSqlite<T>(db: Db, script: Script<T>): T {
  let step = script.next();
  while (step.done !== true) step = script.next(sqliteStep(db, step.value));
  return step.value;
}

/** One script in its own BEGIN IMMEDIATE … COMMIT: the unbatched floor. */
export function transactOnSqlite<T>(db: Db, script: Script<T>): T {
  return db.transaction(() => runOnSqlite(db, script)).immediate();
}

/**
 * The batched floor: scripts queued in one turn of the event loop run in one BEGIN IMMEDIATE …
 * COMMIT, each in a savepoint — what group commit does, with nothing else around it.
 */
export class SqliteBatchFloor {
  readonly #db: Db;
  #queue: { script: Script<unknown>; done: (error?: Error) => void }[] = [];
  commits = 0;

  constructor(db: Db) {
    this.#db = db;
  }

  run(script: Script<unknown>): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ script, done: (e) => (e === undefined ? resolve() : reject(e)) });
      if (this.#queue.length === 1) setImmediate(() => this.#flush());
    });
  }

  #flush(): void {
    const batch = this.#queue;
    this.#queue = [];
    const outcomes: (Error | undefined)[] = [];
    this.#db
      .transaction(() => {
        for (const b of batch) {
          try {
            this.#db.transaction(() => runOnSqlite(this.#db, b.script))(); // a savepoint
            outcomes.push(undefined);
          } catch (error) {
            outcomes.push(error instanceof Error ? error : new Error(String(error)));
          }
        }
      })
      .immediate();
    this.commits += 1;
    batch.forEach((b, i) => b.done(outcomes[i]));
  }
}

const statementNames = new Map<string, string>();

/** Prepared once per connection under a name, as the PostgreSQL engine does for DML. */
function named(sql: string): { name: string; text: string } {
  let name = statementNames.get(sql);
  if (name === undefined) statementNames.set(sql, (name = `floor_${statementNames.size + 1}`));
  return { name, text: toPostgresPlaceholders(sql).text };
}

/** Told of each statement a script runs, with its values (bench/postgres-ceiling.bench.ts). */
export type StatementRecorder = (sql: string, params: readonly Value[]) => void;

/** One script in BEGIN … COMMIT on a pooled pg connection (the PostgreSQL floor). */
export async function transactOnPostgres<T>(
  pool: pg.Pool,
  script: Script<T>,
  record?: StatementRecorder,
): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN ISOLATION LEVEL READ COMMITTED');
    let step = script.next();
    while (step.done !== true) {
      record?.(step.value.sql, step.value.params);
      const r = await client.query({ ...named(step.value.sql), values: [...step.value.params] });
      step = script.next(step.value.kind === 'get' ? (r.rows[0] as Row) : (r.rowCount ?? 0));
    }
    await client.query('COMMIT');
    return step.value;
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  } finally {
    client.release();
  }
}

// --- ready-made floors: a migrated, seeded database and its lifecycles -------------------------

/**
 * One floor lifecycle on worker `w`: the three transactions (create, enter, observe), each timed;
 * `fu` is ' FOR UPDATE' on PostgreSQL and '' on SQLite (its writer lock is the whole file).
 */
export function floorLifecycle(
  executor: (w: number) => FloorExecutor,
  fu: string,
  transact: (script: Script<void>) => unknown,
): Lifecycle {
  return async (w, n) => {
    const x = executor(w);
    const id = `occ_floor_${n}`;
    const t0 = performance.now();
    await transact(floorScripts.create(fu, x, id, `k-${n}`, n));
    const t1 = performance.now();
    await transact(floorScripts.enter(fu, x, id));
    const t2 = performance.now();
    await transact(floorScripts.observe(fu, id, `pay_${String(n).padStart(8, '0')}`));
    return [t1 - t0, t2 - t1, performance.now() - t2];
  };
}

function pick(executors: readonly FloorExecutor[]): (w: number) => FloorExecutor {
  return (w) => {
    const x = executors[w];
    if (x === undefined) throw new RangeError(`the floor has no executor ${w}`);
    return x;
  };
}

export interface SqliteFloor {
  readonly db: Db;
  /** One COMMIT per transaction. */
  readonly unbatched: Lifecycle;
  /** The transactions queued in one turn of the event loop share a COMMIT (see SqliteBatchFloor). */
  readonly batched: Lifecycle;
  readonly batch: SqliteBatchFloor;
  /** The seeded executor of worker `w` (bench/peers/http-ceiling-server.ts runs the scripts itself). */
  readonly executor: (w: number) => FloorExecutor;
  close(): void;
}

/**
 * A floor file at `path`: the same tables and indexes as a guarded file (the same migrations, run
 * by the engine), opened as the engine opens its writer — WAL, synchronous=FULL (fsync at every
 * COMMIT), foreign keys on, savepoint sub-journals in memory — and seeded with `executors`.
 */
export async function openSqliteFloor(path: string, executors: number): Promise<SqliteFloor> {
  const engine = openSqliteEngine(path);
  await migrate(engine);
  await engine.close();
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('fullfsync = ON');
  db.pragma('foreign_keys = ON');
  db.pragma('temp_store = MEMORY');
  const x = pick(transactOnSqlite(db, floorScripts.seed(executors)));
  const batch = new SqliteBatchFloor(db);
  return {
    db,
    batch,
    executor: x,
    unbatched: floorLifecycle(x, '', (s) => transactOnSqlite(db, s)),
    batched: floorLifecycle(x, '', (s) => batch.run(s)),
    close: () => db.close(),
  };
}

export interface PostgresFloor {
  readonly lifecycle: Lifecycle;
  close(): Promise<void>;
}

/** A floor on the (empty) database at `url`: migrated by the engine, seeded, one pooled connection per executor (+2). */
export async function openPostgresFloor(url: string, executors: number): Promise<PostgresFloor> {
  const engine = openPostgresEngine(url);
  try {
    await migrate(engine);
  } finally {
    await engine.close();
  }
  // Idle connections kept as long as Baton's engine keeps them (src/store/postgres.ts).
  const pool = new pg.Pool({
    connectionString: url,
    max: executors + 2,
    idleTimeoutMillis: DEFAULT_IDLE_TIMEOUT_MS,
  });
  pool.on('error', () => undefined); // an idle client dropped by the server: the next query says so
  const x = pick(await transactOnPostgres(pool, floorScripts.seed(executors)));
  return {
    lifecycle: floorLifecycle(x, ' FOR UPDATE', (s) => transactOnPostgres(pool, s)),
    close: () => pool.end(),
  };
}

export { OPEN_STRIPES };
