/**
 * The pinned issuer registry (migration 008, docs/missions.md "Issuer registry") and the stored
 * key archive over `msn_keys` (MST-06: every key that verified something is kept by origin and
 * kid, so archived Status answers re-verify after rotation). One portable SQL text per query.
 * A pin is immutable: registering the same issuer again with the same pin and bearer is
 * `unchanged`, with anything else `mission_issuer_conflict` — a re-pin is a decision for an
 * operator, never a side effect of a request: the operator unpins (`unpin`, `DELETE
 * /v1/missions/issuers/{issuer}`, migration 033) and pins again. Only the SSF stream credential
 * (the push bearer's digest, the poll bearer's reference) is replaced in place (`replaceBearer`),
 * so a leaked or scheduled-out bearer is rotated without a new database.
 */
import type { JWK } from 'jose';
import { BatonError } from '../core/errors.js';
import { canonicalize } from '../core/jcs.js';
import { parseStrictJson } from '../core/json.js';
import {
  parseIssuerPin,
  publicJwk,
  type ArchivedKey,
  type IssuerPin,
  type IssuerRegistration,
  type MissionKeyArchive,
  type StreamCredential,
  PUSH_DELIVERY,
  POLL_DELIVERY,
} from '../missions/index.js';
import type { StoreEngine, Transaction } from './engine.js';
import { appendEvidenceRun } from './evidence-log.js';
import { recordSetSeen } from './missions-sets-seen.js';
import { num } from './occurrences-rows.js';

export interface RegisteredIssuer {
  readonly issuer: string;
  readonly pin: IssuerPin;
  readonly pinDigest: string;
  /** sha-256 of the RFC 8935 push bearer; never shown by a route. */
  readonly bearerDigest: string | null;
  readonly pollBearerRef: string | null;
  readonly registeredAt: number;
  readonly registeredBy: string;
  /** When the last verified SET (lifecycle or stream event) from this issuer arrived (A3.5). */
  readonly lastSetAt: number | null;
  readonly lastPollAt: number | null;
  readonly lastPollError: string | null;
}

interface IssuerRow {
  issuer: string;
  pin: string;
  pin_digest: string;
  bearer_digest: string | null;
  poll_bearer_ref: string | null;
  registered_at: number | string;
  registered_by: string;
  last_set_at: number | string | null;
  last_poll_at: number | string | null;
  last_poll_error: string | null;
}

/** A pin that was unpinned (`msn_issuer_unpins`). */
export interface UnpinnedIssuer {
  readonly issuer: string;
  readonly pinDigest: string;
  readonly registeredAt: number;
  readonly registeredBy: string;
  readonly unpinnedAt: number;
  readonly unpinnedBy: string;
}

interface UnpinRow {
  issuer: string;
  pin_digest: string;
  registered_at: number | string;
  registered_by: string;
  unpinned_at: number | string;
  unpinned_by: string;
}

const COLS =
  'issuer, pin, pin_digest, bearer_digest, poll_bearer_ref, registered_at, registered_by, last_set_at, last_poll_at, last_poll_error';

const optNum = (v: number | string | null): number | null => (v === null ? null : num(v));

function fromRow(r: IssuerRow): RegisteredIssuer {
  return {
    issuer: r.issuer,
    pin: parseIssuerPin(parseStrictJson(r.pin), { allowLoopbackHttp: true }),
    pinDigest: r.pin_digest,
    bearerDigest: r.bearer_digest,
    pollBearerRef: r.poll_bearer_ref,
    registeredAt: num(r.registered_at),
    registeredBy: r.registered_by,
    lastSetAt: optNum(r.last_set_at),
    lastPollAt: optNum(r.last_poll_at),
    lastPollError: r.last_poll_error,
  };
}

/** The evidence subject of an issuer pin. */
export const issuerSubject = (issuer: string): string => `issuer:${issuer}`;

export type RegisterAction = 'created' | 'unchanged';
export type ReplaceBearerAction = 'updated' | 'unchanged';
/** The answer of an unpin, in the vocabulary of a producer's unpin (observations-producers.ts). */
export type IssuerUnpinStatus = 'removed' | 'absent';

/**
 * The digest of the pin `issuer` is pinned with NOW, read in the transaction that applies a Status
 * answer or a lifecycle SET verified under a pin (undefined: not pinned). The row is held with a
 * key-share lock on PostgreSQL (SQLite has one writer): an unpin waits for the applying
 * transaction to commit, and an applying transaction that waited for an unpin sees the row gone,
 * so nothing verified under a pin is applied once that pin is no longer trusted (docs/missions.md
 * "Unpinning an issuer"). A key-share lock, not `FOR UPDATE`: the applying transactions of one
 * issuer do not queue behind one another, nor behind the liveness update (`touchStream`).
 */
export async function lockedIssuerPinDigest(tx: Transaction, issuer: string): Promise<string | undefined> {
  const lock = tx.forUpdate === '' ? '' : ' FOR KEY SHARE';
  const r = await tx.get<{ pin_digest: string }>(
    `SELECT pin_digest FROM msn_issuers WHERE issuer = ?${lock}`,
    [issuer],
  );
  return r?.pin_digest;
}

/**
 * Make every view of `origin` that still reads `active` stale from `now` on (its `fresh_until` one
 * millisecond before it; terminal and other non-active views are final or already stop work and
 * stay as they are): the next dispatch or provider entry under it must refresh first, and that
 * refresh fails closed for an unpinned origin (A3.5, A3.6). The number of views changed.
 */
async function staleViewsOf(tx: Transaction, origin: string, now: number): Promise<number> {
  const { changes } = await tx.run(
    `UPDATE msn_views SET fresh_until = ?, updated_at = ?, version = version + 1
     WHERE origin = ? AND state = 'active' AND (fresh_until IS NULL OR fresh_until >= ?)`,
    [now - 1, now, origin, now],
  );
  return changes;
}

export class IssuerRegistry {
  readonly #engine: StoreEngine;

  constructor(engine: StoreEngine) {
    this.#engine = engine;
  }

  async get(issuer: string): Promise<RegisteredIssuer | undefined> {
    const r = await this.#engine.read((ex) =>
      ex.get<IssuerRow>(`SELECT ${COLS} FROM msn_issuers WHERE issuer = ?`, [issuer]),
    );
    return r === undefined ? undefined : fromRow(r);
  }

  async require(issuer: string): Promise<RegisteredIssuer> {
    const found = await this.get(issuer);
    if (found === undefined) throw notFound();
    return found;
  }

  async list(): Promise<RegisteredIssuer[]> {
    const rs = await this.#engine.read((ex) =>
      ex.all<IssuerRow>(`SELECT ${COLS} FROM msn_issuers ORDER BY issuer`),
    );
    return rs.map(fromRow);
  }

  /** `created`, `unchanged` (same pin and bearer), or `mission_issuer_conflict`; one transaction. */
  async register(
    reg: IssuerRegistration,
    actor: string,
    now: number,
  ): Promise<{ action: RegisterAction; issuer: RegisteredIssuer }> {
    const action = await this.#engine.transaction(async (tx) => {
      const known = await tx.get<IssuerRow>(
        `SELECT ${COLS} FROM msn_issuers WHERE issuer = ?${tx.forUpdate}`,
        [reg.pin.issuer],
      );
      if (known !== undefined) {
        if (!sameRegistration(known, reg))
          throw new BatonError(
            'mission_issuer_conflict',
            'the issuer is pinned with another pin or stream bearer (pins are immutable; a stream bearer is replaced with PUT /v1/missions/issuers/{issuer}/bearer; another pin is trusted only after DELETE /v1/missions/issuers/{issuer} unpins this one)',
            { issuer: reg.pin.issuer },
          );
        return 'unchanged' as const;
      }
      await tx.run(`INSERT INTO msn_issuers (${COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, NULL, NULL, NULL)`, [
        reg.pin.issuer,
        canonicalize(reg.pin),
        reg.pinDigest,
        reg.bearerDigest,
        reg.pollBearerRef,
        now,
        actor,
      ]);
      await appendEvidenceRun(tx, [
        {
          subject: issuerSubject(reg.pin.issuer),
          type: 'mission_issuer_pinned',
          body: {
            pin_digest: reg.pinDigest,
            delivery: reg.pin.stream?.delivery ?? null,
            push_bearer: reg.bearerDigest !== null,
            poll_bearer_ref: reg.pollBearerRef,
          },
          at: now,
          actor,
        },
      ]);
      return 'created' as const;
    });
    return { action, issuer: await this.require(reg.pin.issuer) };
  }

  /**
   * Replace the SSF stream credential of a pinned issuer, the pin untouched, in one transaction:
   * `updated` (and a `mission_issuer_bearer_replaced` evidence event naming the delivery and the
   * poll reference, never a bearer or its digest), or `unchanged` when it is the same credential
   * (nothing written). The credential must be of the kind the pin's stream needs (fail closed:
   * `input_invalid`); an issuer not pinned is `mission_issuer_not_found`. The push receiver reads
   * the digest per request, so the old bearer is refused from the COMMIT on.
   */
  async replaceBearer(
    issuer: string,
    credential: StreamCredential,
    actor: string,
    now: number,
  ): Promise<{ action: ReplaceBearerAction; issuer: RegisteredIssuer }> {
    const action = await this.#engine.transaction(async (tx) => {
      const known = await tx.get<IssuerRow>(
        `SELECT ${COLS} FROM msn_issuers WHERE issuer = ?${tx.forUpdate}`,
        [issuer],
      );
      if (known === undefined) throw notFound();
      const delivery = fromRow(known).pin.stream?.delivery ?? null;
      refuseOtherKind(delivery, credential);
      if (
        known.bearer_digest === credential.bearerDigest &&
        known.poll_bearer_ref === credential.pollBearerRef
      )
        return 'unchanged' as const;
      await tx.run('UPDATE msn_issuers SET bearer_digest = ?, poll_bearer_ref = ? WHERE issuer = ?', [
        credential.bearerDigest,
        credential.pollBearerRef,
        issuer,
      ]);
      await appendEvidenceRun(tx, [
        {
          subject: issuerSubject(issuer),
          type: 'mission_issuer_bearer_replaced',
          body: {
            delivery,
            push_bearer: credential.bearerDigest !== null,
            poll_bearer_ref: credential.pollBearerRef,
          },
          at: now,
          actor,
        },
      ]);
      return 'updated' as const;
    });
    return { action, issuer: await this.require(issuer) };
  }

  /**
   * Stop trusting a pinned issuer, in one transaction (docs/missions.md "Unpinning an issuer"):
   * its row leaves `msn_issuers` for the history `msn_issuer_unpins`, every view of its origin
   * that reads `active` is made stale (so no work dispatches or enters under its Missions until
   * the issuer is pinned again and a fresh Status answer is verified; final views stay), and the
   * evidence event `mission_issuer_unpinned` names the pin's digest, the views made stale and the
   * actor. `absent` (nothing written) when the issuer is not pinned. The key archive stays (MST-06).
   */
  async unpin(issuer: string, actor: string, now: number): Promise<IssuerUnpinStatus> {
    return this.#engine.transaction(async (tx): Promise<IssuerUnpinStatus> => {
      const known = await tx.get<IssuerRow>(
        `SELECT ${COLS} FROM msn_issuers WHERE issuer = ?${tx.forUpdate}`,
        [issuer],
      );
      if (known === undefined) return 'absent';
      await tx.run(
        `INSERT INTO msn_issuer_unpins (issuer, pin, pin_digest, registered_at, registered_by, unpinned_at, unpinned_by)
         VALUES (?, ?, ?, ?, ?, ?, ?)`,
        [issuer, known.pin, known.pin_digest, num(known.registered_at), known.registered_by, now, actor],
      );
      await tx.run('DELETE FROM msn_issuers WHERE issuer = ?', [issuer]);
      const staled = await staleViewsOf(tx, issuer, now);
      await appendEvidenceRun(tx, [
        {
          subject: issuerSubject(issuer),
          type: 'mission_issuer_unpinned',
          body: { pin_digest: known.pin_digest, views_made_stale: staled },
          at: now,
          actor,
        },
      ]);
      return 'removed';
    });
  }

  /** The unpinned pins of `issuer`, oldest first (migration 033). */
  async unpinned(issuer: string): Promise<UnpinnedIssuer[]> {
    const rs = await this.#engine.read((ex) =>
      ex.all<UnpinRow>(
        'SELECT issuer, pin_digest, registered_at, registered_by, unpinned_at, unpinned_by FROM msn_issuer_unpins WHERE issuer = ? ORDER BY unpinned_at',
        [issuer],
      ),
    );
    return rs.map((r) => ({
      issuer: r.issuer,
      pinDigest: r.pin_digest,
      registeredAt: num(r.registered_at),
      registeredBy: r.registered_by,
      unpinnedAt: num(r.unpinned_at),
      unpinnedBy: r.unpinned_by,
    }));
  }

  /**
   * A verified SSF stream event (verification, stream updates): replay-checked in `msn_sets_seen`
   * like lifecycle SETs (C-A18; kept until `expiresAtMs`, the SET's `exp`, and then pruned) and
   * proof of stream liveness. Returns the replay verdict.
   */
  async recordStreamSet(
    issuer: string,
    jti: string,
    digest: string,
    at: number,
    expiresAtMs: number,
  ): Promise<'new' | 'same' | 'different'> {
    return this.#engine.transaction(async (tx) => {
      const seen = await recordSetSeen(tx, issuer, jti, digest, at, expiresAtMs);
      if (seen === 'new') await touch(tx, issuer, at);
      return seen;
    });
  }

  /** Any verified SET from the issuer proves its stream alive at `at` (A3.5). */
  async touchStream(issuer: string, at: number): Promise<void> {
    await this.#engine.transaction((tx) => touch(tx, issuer, at));
  }

  async recordPoll(issuer: string, at: number, error: string | null): Promise<void> {
    await this.#engine.transaction(async (tx) => {
      await tx.run('UPDATE msn_issuers SET last_poll_at = ?, last_poll_error = ? WHERE issuer = ?', [
        at,
        error,
        issuer,
      ]);
    });
  }
}

async function touch(tx: Transaction, issuer: string, at: number): Promise<void> {
  // Never moves backwards: two servers on one PostgreSQL may record out of order.
  await tx.run(
    'UPDATE msn_issuers SET last_set_at = ? WHERE issuer = ? AND (last_set_at IS NULL OR last_set_at < ?)',
    [at, issuer, at],
  );
}

function notFound(): BatonError {
  return new BatonError('mission_issuer_not_found', 'no issuer is pinned under that identifier');
}

/** A push pin takes a bearer digest only, a poll pin a reference only, a pin without a stream neither. */
function refuseOtherKind(delivery: string | null, c: StreamCredential): void {
  const fits =
    (delivery === PUSH_DELIVERY && c.bearerDigest !== null && c.pollBearerRef === null) ||
    (delivery === POLL_DELIVERY && c.bearerDigest === null && c.pollBearerRef !== null);
  if (!fits)
    throw new BatonError(
      'input_invalid',
      `the stream credential is not the kind the pin's stream needs (delivery ${delivery ?? 'none'})`,
    );
}

/**
 * The pin itself is compared (its JCS text), not its digest: a pin migration 035 rewrote keeps the
 * digest it was registered under, so the same pin presented now has another digest.
 */
function sameRegistration(row: IssuerRow, reg: IssuerRegistration): boolean {
  return (
    row.pin === canonicalize(reg.pin) &&
    row.bearer_digest === reg.bearerDigest &&
    row.poll_bearer_ref === reg.pollBearerRef
  );
}

interface KeyRow {
  thumbprint: string;
  jwk: string | null;
}

/** MissionKeyArchive over `msn_keys` (both engines): a kid reused for another key is refused. */
export class StoredKeyArchive implements MissionKeyArchive {
  readonly #engine: StoreEngine;
  readonly #now: () => number;

  constructor(engine: StoreEngine, now: () => number) {
    this.#engine = engine;
    this.#now = now;
  }

  async saveKey(origin: string, kid: string, jwk: JWK, thumbprint: string): Promise<void> {
    const text = canonicalize(publicJwk(jwk));
    await this.#engine.transaction(async (tx) => {
      const rows = await tx.all<KeyRow>(
        `SELECT thumbprint, jwk FROM msn_keys WHERE origin = ? AND kid = ?${tx.forUpdate}`,
        [origin, kid],
      );
      if (rows.some((r) => r.thumbprint !== thumbprint))
        throw new BatonError('key_invalid', 'the issuer reused a kid for another key');
      if (rows.length === 0) {
        await tx.run(
          'INSERT INTO msn_keys (origin, kid, thumbprint, jwk, first_seen_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING',
          [origin, kid, thumbprint, text, this.#now()],
        );
      } else if (rows[0]?.jwk === null) {
        // archiveStatus wrote the thumbprint first; the key itself arrives here.
        await tx.run('UPDATE msn_keys SET jwk = ? WHERE origin = ? AND kid = ? AND thumbprint = ?', [
          text,
          origin,
          kid,
          thumbprint,
        ]);
      }
    });
  }

  async getKey(origin: string, kid: string): Promise<ArchivedKey | undefined> {
    const rows = await this.#engine.read((ex) =>
      ex.all<KeyRow>('SELECT thumbprint, jwk FROM msn_keys WHERE origin = ? AND kid = ?', [origin, kid]),
    );
    // Two thumbprints under one kid make an archived answer ambiguous: no key (fail closed).
    if (rows.length !== 1 || rows[0]?.jwk === null || rows[0] === undefined) return undefined;
    return { jwk: parseStrictJson(rows[0].jwk ?? '') as JWK, thumbprint: rows[0].thumbprint };
  }
}
