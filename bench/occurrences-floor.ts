/**
 * The floor for bench/occurrences.bench.ts: the same three transactions as plain SQL on
 * better-sqlite3, reading and writing the same rows the guarded service does (locks are implicit
 * in SQLite's BEGIN IMMEDIATE), with evidence events hash-chained exactly as the evidence log does.
 */
import type Database from 'better-sqlite3';
import { digestBytes, digestJcs } from '../src/core/digest.js';
import { canonicalize } from '../src/core/jcs.js';
import { ACCOUNT, benchProfile, request } from './occurrences-fixtures.js';

type Db = Database.Database;
type Stmt = Database.Statement<unknown[], unknown>;
const caches = new WeakMap<Db, Map<string, Stmt>>();
/** Prepared once per connection, like the engine's statement cache. */
function q(db: Db, sql: string): Stmt {
  let cache = caches.get(db);
  if (cache === undefined) caches.set(db, (cache = new Map<string, Stmt>()));
  let stmt = cache.get(sql);
  if (stmt === undefined) cache.set(sql, (stmt = db.prepare(sql)));
  return stmt;
}
const LINEAGE = 'bench-agent';
const CREDENTIAL = digestBytes('floor-credential');
const PROFILE_DIGEST = digestJcs(benchProfile());
let now = Date.now();

function append(db: Db, subject: string, type: string, body: unknown): void {
  const seq = (
    q(db, 'UPDATE evidence_counter SET last_seq = last_seq + 1 WHERE id = 1 RETURNING last_seq').get() as {
      last_seq: number;
    }
  ).last_seq;
  const head = q(db, 'SELECT head FROM evidence_heads WHERE subject = ?').get(subject) as
    { head: string } | undefined;
  const text = canonicalize(body);
  const prev = head?.head ?? null;
  const hash = digestJcs({ prev, subject, type, body: JSON.parse(text) as unknown, at: now, actor: 'floor' });
  q(
    db,
    'INSERT INTO evidence_events (seq, subject, type, body, at, actor, prev, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
  ).run(seq, subject, type, text, now, 'floor', prev, hash);
  if (head === undefined)
    q(db, 'INSERT INTO evidence_heads (subject, head, count, last_seq) VALUES (?, ?, 1, ?)').run(
      subject,
      hash,
      seq,
    );
  else
    q(
      db,
      'UPDATE evidence_heads SET head = ?, count = count + 1, last_seq = ? WHERE subject = ? AND head = ?',
    ).run(hash, seq, subject, prev);
}

export function seed(db: Db): void {
  const profile = benchProfile();
  q(db, "INSERT INTO aoc_domain VALUES (1, 'floor-domain', 'kid', 'pk', '{}', '[]', 0, 0, 1)").run();
  q(db, "INSERT INTO aoc_profiles VALUES ('bench-payments', '1', ?, ?, 0)").run(
    digestJcs(profile),
    canonicalize(profile),
  );
  q(db, 'INSERT INTO aoc_lineages VALUES (?, 1, 0, 0, 1)').run(LINEAGE);
  q(db, 'INSERT INTO aoc_credentials VALUES (?, ?, 1, 0, NULL)').run(CREDENTIAL, LINEAGE);
  q(db, "INSERT INTO aoc_authorities VALUES ('payouts', 'EUR-cents', 1000000000000, 0, 0, 0, 0, 1)").run();
}

function reads(db: Db): void {
  q(db, 'SELECT * FROM aoc_domain WHERE singleton = 1').get();
  q(db, 'SELECT * FROM aoc_credentials WHERE secret_digest = ?').get(CREDENTIAL);
  q(db, 'SELECT * FROM aoc_lineages WHERE id = ?').get(LINEAGE);
}

function countOpen(db: Db): void {
  q(
    db,
    "SELECT phase, SUM(CASE WHEN lineage = ? THEN 1 ELSE 0 END) AS mine, COUNT(*) AS total FROM aoc_occurrences WHERE phase IN ('reserved', 'entered') GROUP BY phase",
  ).all(LINEAGE);
}

function create(db: Db, i: number, keep: boolean): string {
  now = Date.now();
  const id = `occ_floor_${keep ? 'm' : 'w'}_${i}`;
  const key = `baton:floor-domain:${id}`;
  db.transaction(() => {
    reads(db);
    q(db, "SELECT * FROM aoc_profiles WHERE id = 'bench-payments' AND version = '1'").get();
    q(db, 'SELECT * FROM aoc_occurrences WHERE creation_scope = ? AND creation_key = ?').get(
      LINEAGE,
      `k-${i}`,
    );
    q(db, "SELECT * FROM aoc_authorities WHERE id = 'payouts'").get();
    countOpen(db);
    const req = request(i);
    const linked = [{ type: 'provider_key', value: key }];
    q(
      db,
      `INSERT INTO aoc_occurrences VALUES (?, ?, ?, ?, ?, ?, 'bench-payments', '1', ?, ?, 'bench', ?, 'template', ?, NULL, ?, 1, ?, 'payouts', 100, 'EUR-cents',
       'reserved', 'unknown', 'unresolved', 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, ?, ?, 1)`,
    ).run(
      id,
      LINEAGE,
      LINEAGE,
      `k-${keep ? 'm' : 'w'}-${i}`,
      digestJcs({ req, i }),
      canonicalize(linked),
      PROFILE_DIGEST,
      ACCOUNT,
      digestJcs(req),
      key,
      canonicalize(req),
      now + 300_000,
      now,
      now,
    );
    q(db, 'INSERT INTO aoc_linked_ids VALUES (?, ?, ?, ?)').run(
      id,
      'provider_key',
      key,
      JSON.stringify(['bench-payments', ACCOUNT, 'bench', key]),
    );
    q(
      db,
      "UPDATE aoc_authorities SET reserved = reserved + 100, updated_at = ?, version = version + 1 WHERE id = 'payouts'",
    ).run(now);
    // The same facts the guarded service records (machine/create.ts).
    append(db, `occurrence:${id}`, 'occurrence_created', {
      occurrence: id,
      lineage: LINEAGE,
      creationBinding: { scope: LINEAGE, key: `k-${i}`, requestDigest: digestJcs({ req, i }) },
      linkedIds: linked,
      provider: {
        profileId: 'bench-payments',
        profileVersion: '1',
        profileDigest: PROFILE_DIGEST,
        account: ACCOUNT,
        environment: 'bench',
        requestDigest: digestJcs(req),
        nativeKeyRule: 'template',
        nativeKey: key,
        providerReference: null,
      },
      capturedGeneration: 1,
      entryDeadline: now + 300_000,
      authority: { id: 'payouts', amount: 100, unit: 'EUR-cents', reservedAfter: 100, consumedAfter: 0 },
      remedyOf: null,
      remedyKind: null,
      reissueOf: null,
    });
  }).immediate();
  return id;
}

function enter(db: Db, id: string): void {
  now = Date.now();
  db.transaction(() => {
    reads(db);
    q(db, 'SELECT * FROM aoc_occurrences WHERE id = ?').get(id);
    q(db, "SELECT * FROM aoc_authorities WHERE id = 'payouts'").get();
    countOpen(db);
    q(db, 'SELECT request FROM aoc_occurrences WHERE id = ?').get(id);
    q(db, "SELECT * FROM aoc_profiles WHERE id = 'bench-payments' AND version = '1'").get();
    q(
      db,
      "UPDATE aoc_occurrences SET phase = 'entered', entered_at = ?, entered_generation = 1, updated_at = ?, version = version + 1 WHERE id = ? AND phase = 'reserved'",
    ).run(now, now, id);
    q(
      db,
      "UPDATE aoc_authorities SET reserved = reserved - 100, consumed = consumed + 100, updated_at = ?, version = version + 1 WHERE id = 'payouts'",
    ).run(now);
    append(db, `occurrence:${id}`, 'provider_entered', {
      generation: 1,
      attempt: 1,
      requestDigest: PROFILE_DIGEST,
      nativeKey: `baton:floor-domain:${id}`,
      authority: { id: 'payouts', consumed: 100, reservedAfter: 0, consumedAfter: 100 },
    });
  }).immediate();
}

function observe(db: Db, id: string, i: number, keep: boolean): void {
  now = Date.now();
  const reference = `pay_${String(i).padStart(8, '0')}${keep ? 'm' : 'w'}`;
  db.transaction(() => {
    q(db, 'SELECT * FROM aoc_occurrences WHERE id = ?').get(id);
    q(db, "SELECT * FROM aoc_profiles WHERE id = 'bench-payments' AND version = '1'").get();
    q(db, 'INSERT INTO aoc_linked_ids VALUES (?, ?, ?, ?)').run(
      id,
      'provider_reference',
      reference,
      JSON.stringify(['bench-payments', ACCOUNT, 'bench', reference]),
    );
    q(
      db,
      "UPDATE aoc_occurrences SET phase = 'resolved', outcome = 'success', effect = 'occurred', resolved_at = ?, provider_reference = ?, updated_at = ?, version = version + 1 WHERE id = ?",
    ).run(now, reference, now, id);
    const observation = {
      source: 'by-key',
      observedAt: now,
      result: 'found',
      nativeStatus: 'succeeded',
      authentication: { verified: true, pin: 'bench-2026' },
      carried: {
        account: ACCOUNT,
        environment: 'bench',
        requestDigest: PROFILE_DIGEST,
        nativeKey: `baton:floor-domain:${id}`,
        providerReference: null,
      },
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
    append(db, `occurrence:${id}`, 'observation_recorded', { observation, interpretation });
    append(db, `occurrence:${id}`, 'provider_reference_bound', { providerReference: reference });
    const from = { phase: 'entered', outcome: 'unknown', effect: 'unresolved', conflict: false };
    append(db, `occurrence:${id}`, 'state_changed', {
      from,
      to: { phase: 'resolved', outcome: 'success', effect: 'occurred', conflict: false },
    });
  }).immediate();
}

export const steps = { create, enter, observe };
