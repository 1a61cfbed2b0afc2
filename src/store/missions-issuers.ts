/**
 * The pinned issuer registry (migration 008, docs/missions.md "Issuer registry") and the stored
 * key archive over `msn_keys` (MST-06: every key that verified something is kept by origin and
 * kid, so archived Status answers re-verify after rotation). One portable SQL text per query.
 * A pin is immutable: registering the same issuer again with the same pin and bearer is
 * `unchanged`, with anything else `mission_issuer_conflict` — a re-pin is a decision for an
 * operator, never a side effect of a request. Only the SSF stream credential (the push bearer's
 * digest, the poll bearer's reference) is replaced in place (`replaceBearer`), so a leaked or
 * scheduled-out bearer is rotated without a new database.
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
            'the issuer is pinned with another pin or stream bearer (pins are immutable; a stream bearer is replaced with PUT /v1/missions/issuers/{issuer}/bearer)',
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

function sameRegistration(row: IssuerRow, reg: IssuerRegistration): boolean {
  return (
    row.pin_digest === reg.pinDigest &&
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
