/**
 * The reference system of record's ledger on SQLite (better-sqlite3). Every `transact` is one
 * BEGIN IMMEDIATE transaction: it takes SQLite's single write lock before its first read, so the
 * fence check and the write it guards are serialized against every other connection and process.
 * The resource UPDATE is itself a compare-and-set on the prior epoch, and a trigger refuses any
 * epoch that does not grow. WAL with `synchronous = FULL` (as Baton's own store, src/store/sqlite.ts):
 * under NORMAL a power loss may roll back the last commits — receipts already handed out, a consumed
 * lease_id (a replay would then pass, draft §5), an epoch step (a fence would move backwards, draft
 * §4 rule 2). FULL syncs the WAL at every COMMIT.
 */
import Database from 'better-sqlite3';
import { sha256HexTagJcs, type Sha256HexTag } from '../core/digest.js';
import { BatonError } from '../core/errors.js';
import { canonicalize } from '../core/jcs.js';
import type { JsonValue } from '../core/json.js';
import type {
  AuditEntry,
  EscrowRecord,
  LeaseLedger,
  LeaseRecord,
  LedgerTx,
  Receipt,
  ResourceRecord,
  ShadowRecord,
  SnapshotRecord,
} from '../leases/index.js';
import { isBusyDriverError, mapDriverError } from '../store/errors.js';
import { LedgerWriter } from './ledger-writer.js';
import { SOR_SCHEMA, UNAUTHENTICATED_KEPT } from './schema.js';

type Row = Record<string, string | number | null>;

const json = (text: unknown): JsonValue => JSON.parse(String(text)) as JsonValue;
const num = (value: unknown): number => Number(value);

function toResource(r: Row): ResourceRecord {
  return {
    target: String(r['target']),
    epoch: num(r['epoch']),
    state: json(r['state']),
    digest: r['digest'] as Sha256HexTag,
    updatedAtMs: num(r['updated_at']),
  };
}

function toLease(r: Row): LeaseRecord {
  return {
    leaseId: String(r['lease_id']),
    target: String(r['target']),
    mode: r['mode'] as LeaseRecord['mode'],
    status: r['status'] as LeaseRecord['status'],
    lease: json(r['lease']) as unknown as LeaseRecord['lease'],
    operation: json(r['operation']),
    inversePayload: json(r['inverse_payload']),
    acceptedAtMs: num(r['accepted_at']),
    windowEndsAtMs: num(r['window_ends_at']),
    committedEpoch: r['committed_epoch'] === null ? null : num(r['committed_epoch']),
  };
}

function toEscrow(r: Row): EscrowRecord {
  return {
    leaseId: String(r['lease_id']),
    target: String(r['target']),
    heldAtMs: num(r['held_at']),
    approveByMs: num(r['approve_by']),
  };
}

export class SqliteLeaseLedger implements LeaseLedger {
  readonly #db: Database.Database;
  readonly #tx: LedgerTx;

  /**
   * `busyTimeoutMs`: how long a transaction waits for another connection's write lock before it
   * fails with `store_busy` (default 10 s, SQLite's busy handler).
   */
  constructor(path: string, options: { busyTimeoutMs?: number } = {}) {
    this.#db = new Database(path, { timeout: options.busyTimeoutMs ?? 10_000 });
    this.#db.pragma('journal_mode = WAL');
    this.#db.pragma('synchronous = FULL');
    this.#db.exec(SOR_SCHEMA);
    this.#tx = this.#makeTx();
  }

  /**
   * Lock contention past the busy timeout is `store_busy` (retryable), by the store's own mapping
   * (src/store/errors.ts), never the driver's SQLITE_BUSY: LeaseService answers it with a typed 503.
   */
  transact<T>(fn: (tx: LedgerTx) => T): T {
    return busyMapped(() => this.#db.transaction(() => fn(this.#tx)).immediate());
  }

  /** Create a resource unless it exists (seeding); never moves an existing one. */
  seed(target: string, state: JsonValue, epoch: number, nowMs: number): void {
    this.#db
      .prepare(
        'INSERT INTO resources (target, epoch, state, digest, updated_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (target) DO NOTHING',
      )
      .run(target, epoch, canonicalize(state), sha256HexTagJcs(state), nowMs);
  }

  /**
   * The origin this database's target URIs were minted under, pinned by the first start: `origin`
   * for a new database. A database from before the pin (no `sor_meta` row) is pinned to the one
   * origin its resource and lease targets name (`originOf` extracts it; undefined = not ours), and
   * refused (`conflict`) when they name several — an earlier restart on another origin split its
   * state, which only a person can merge. The caller compares the answer with its own origin.
   */
  pinOrigin(origin: string, originOf: (target: string) => string | undefined): string {
    return busyMapped(() =>
      this.#db
        .transaction((): string => {
          const pinned = this.#db.prepare("SELECT value FROM sor_meta WHERE key = 'origin'").get() as
            Row | undefined;
          if (pinned !== undefined) return String(pinned['value']);
          const seen = new Set<string>();
          for (const r of this.#db
            .prepare('SELECT target FROM resources UNION SELECT target FROM leases')
            .iterate() as Iterable<Row>) {
            const o = originOf(String(r['target']));
            if (o !== undefined) seen.add(o);
          }
          if (seen.size > 1) {
            throw new BatonError(
              'conflict',
              'this system of record database holds resources under several origins (an earlier restart on another origin split its state); it cannot be pinned to one',
              { member: 'publicOrigin', origins: [...seen].sort() },
            );
          }
          const chosen = [...seen][0] ?? origin;
          this.#db.prepare("INSERT INTO sor_meta (key, value) VALUES ('origin', ?)").run(chosen);
          return chosen;
        })
        .immediate(),
    );
  }

  audit(afterSeq: number, limit: number): AuditEntry[] {
    return busyMapped(() => this.#audit(afterSeq, limit));
  }

  #audit(afterSeq: number, limit: number): AuditEntry[] {
    const rows = this.#db
      .prepare('SELECT seq, receipt FROM audit WHERE seq > ? ORDER BY seq LIMIT ?')
      .all(afterSeq, limit) as Row[];
    return rows.map((r) => ({ seq: num(r['seq']), receipt: json(r['receipt']) as unknown as Receipt }));
  }

  /**
   * The kept refusals of unauthenticated requests, oldest first, and how many there were in all
   * (`total`: the newest one's sequence number; the ring keeps the last UNAUTHENTICATED_KEPT).
   */
  unauthenticatedRefusals(): { total: number; entries: AuditEntry[] } {
    return busyMapped(() => {
      const rows = this.#db
        .prepare('SELECT seq, receipt FROM unauthenticated_refusals ORDER BY seq')
        .all() as Row[];
      const entries = rows.map((r) => ({
        seq: num(r['seq']),
        receipt: json(r['receipt']) as unknown as Receipt,
      }));
      return { total: entries.at(-1)?.seq ?? 0, entries };
    });
  }

  /** Re-walk the audit hash chain; the first broken sequence number, or undefined when intact. */
  verifyAuditChain(): number | undefined {
    let prev: string | null = null;
    for (const r of this.#db
      .prepare('SELECT seq, receipt, prev_hash, hash FROM audit ORDER BY seq')
      .iterate() as Iterable<Row>) {
      const hash = sha256HexTagJcs({ prev, receipt: json(r['receipt']) });
      if (r['prev_hash'] !== prev || r['hash'] !== hash) return num(r['seq']);
      prev = hash;
    }
    return undefined;
  }

  pendingEscrows(): EscrowRecord[] {
    return busyMapped(() =>
      (this.#db.prepare('SELECT * FROM escrow ORDER BY approve_by').all() as Row[]).map(toEscrow),
    );
  }

  /** The durability settings of this ledger's connection, as SQLite reports them. */
  durability(): { journalMode: string; synchronous: string } {
    const journalMode = String(this.#db.pragma('journal_mode', { simple: true }));
    const level = Number(this.#db.pragma('synchronous', { simple: true }));
    return { journalMode, synchronous: ['off', 'normal', 'full', 'extra'][level] ?? String(level) };
  }

  close(): void {
    this.#db.close();
  }

  #makeTx(): LedgerTx {
    const db = this.#db;
    const one = (sql: string) => {
      const stmt = db.prepare(sql);
      return (key: string | number) => stmt.get(key) as Row | undefined;
    };
    const resource = one('SELECT * FROM resources WHERE target = ?');
    const lease = one('SELECT * FROM leases WHERE lease_id = ?');
    const snapshot = one('SELECT * FROM snapshots WHERE lease_id = ?');
    const shadow = one('SELECT * FROM shadow WHERE lease_id = ?');
    const due = db.prepare('SELECT * FROM escrow WHERE approve_by < ? ORDER BY approve_by');
    const lastHash = db.prepare('SELECT hash FROM audit ORDER BY seq DESC LIMIT 1');
    const append = db.prepare(
      'INSERT INTO audit (receipt_type, lease_id, code, receipt, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?)',
    );
    const lastUnauthenticated = db.prepare(
      'SELECT COALESCE(MAX(seq), 0) AS seq FROM unauthenticated_refusals',
    );
    const ring = db.prepare(
      'INSERT OR REPLACE INTO unauthenticated_refusals (slot, seq, code, receipt) VALUES (?, ?, ?, ?)',
    );
    const writer = new LedgerWriter(db);
    return {
      resource: (t) => mapRow(resource(t), toResource),
      lease: (id) => mapRow(lease(id), toLease),
      snapshot: (id) =>
        mapRow(snapshot(id), (r): SnapshotRecord => ({
          leaseId: id,
          target: String(r['target']),
          epoch: num(r['epoch']),
          state: json(r['state']),
          digest: r['digest'] as Sha256HexTag,
        })),
      shadow: (id) =>
        mapRow(shadow(id), (r): ShadowRecord => ({
          leaseId: id,
          target: String(r['target']),
          baseEpoch: num(r['base_epoch']),
          epoch: num(r['epoch']),
          state: json(r['state']),
          digest: r['digest'] as Sha256HexTag,
        })),
      dueEscrows: (nowMs) => (due.all(nowMs) as Row[]).map(toEscrow),
      write: (change) => writer.write(change),
      appendAudit: (receipt) => {
        const prev = ((lastHash.get() as Row | undefined)?.['hash'] as string | undefined) ?? null;
        const hash = sha256HexTagJcs({ prev, receipt });
        const code = receipt.receipt_type === 'rejection' ? receipt.code : null;
        append.run(receipt.receipt_type, receipt.lease_id, code, canonicalize(receipt), prev, hash);
      },
      noteUnauthenticated: (receipt) => {
        const seq = num((lastUnauthenticated.get() as Row)['seq']) + 1;
        const code = receipt.receipt_type === 'rejection' ? receipt.code : null;
        ring.run(seq % UNAUTHENTICATED_KEPT, seq, code, canonicalize(receipt));
      },
    };
  }
}

/** Run `fn`; a lock-contention driver error becomes the store's `store_busy`, anything else passes. */
function busyMapped<T>(fn: () => T): T {
  try {
    return fn();
  } catch (error) {
    throw isBusyDriverError(error) ? mapDriverError(error) : error;
  }
}

function mapRow<T>(row: Row | undefined, map: (r: Row) => T): T | undefined {
  return row === undefined ? undefined : map(row);
}
