/**
 * Pinned producer keys (migration 029, docs/observations.md "Pinned producer keys"; OBS-12 ¶25):
 * the Ed25519 public keys a signed continuity record under a producer other than Baton's own must
 * verify under. A pin is set as a whole — the same keys again are `unchanged`, other keys replace
 * them (`updated`: a rotation pins old and new together, then new alone) — or removed. Each change
 * appends its evidence event in the same transaction (chain `producer:<producer>`), naming the keys
 * before and after and the actor, so "which key did Baton trust when" is answered by the log.
 * `ContinuityStore.submit` reads the row when it verifies, so a change made by any server of a
 * deployment applies to every server's next submission, without a restart, and reads it again
 * under lock when it stores the record (`lockedPinDigest`).
 */
import type { Ed25519PublicJwk } from '../core/ed25519.js';
import { BatonError } from '../core/errors.js';
import { canonicalize } from '../core/jcs.js';
import { parseStrictJson } from '../core/json.js';
import { producerKeysDigest, type ProducerPin } from '../observations/index.js';
import type { SqlExecutor, StoreEngine, Transaction } from './engine.js';
import { appendEvidenceRun } from './evidence-log.js';
import { num } from './occurrences-rows.js';

export interface PinnedProducer {
  readonly producer: string;
  readonly keys: readonly Ed25519PublicJwk[];
  /** `producerKeysDigest(keys)`: equal for the same key set. */
  readonly keysDigest: string;
  readonly pinnedAt: number;
  readonly pinnedBy: string;
}

interface ProducerRow {
  producer: string;
  keys: string;
  keys_digest: string;
  pinned_at: number | string;
  pinned_by: string;
}

const COLS = 'producer, keys, keys_digest, pinned_at, pinned_by';

function fromRow(r: ProducerRow): PinnedProducer {
  return {
    producer: r.producer,
    keys: parseStrictJson(r.keys) as unknown as Ed25519PublicJwk[],
    keysDigest: r.keys_digest,
    pinnedAt: num(r.pinned_at),
    pinnedBy: r.pinned_by,
  };
}

/** The evidence subject of a producer's pin. */
export const producerSubject = (producer: string): string => `producer:${producer}`;

export type PinStatus = 'created' | 'updated' | 'unchanged';
export type UnpinStatus = 'removed' | 'absent';

/** The pin of `producer` as the verifier reads it (undefined: no pin). */
export async function pinnedKeys(
  ex: SqlExecutor,
  producer: string,
): Promise<{ readonly keys: Ed25519PublicJwk[]; readonly keysDigest: string } | undefined> {
  const r = await ex.get<ProducerRow>(`SELECT ${COLS} FROM cop_producers WHERE producer = ?`, [producer]);
  return r === undefined ? undefined : { keys: [...fromRow(r).keys], keysDigest: r.keys_digest };
}

/**
 * The digest of `producer`'s pinned keys read under the pin row's lock, inside the transaction
 * that stores a record verified under them (undefined: no pin). A pin changed between the
 * verification and this read is seen here, and a change after it waits for the storing
 * transaction to commit (PostgreSQL `FOR UPDATE`; SQLite has one writer), so no record is stored
 * under keys no longer pinned when it commits (OBS-12 ¶25).
 */
export async function lockedPinDigest(tx: Transaction, producer: string): Promise<string | undefined> {
  return (await locked(tx, producer))?.keys_digest;
}

async function locked(tx: Transaction, producer: string): Promise<ProducerRow | undefined> {
  return tx.get<ProducerRow>(`SELECT ${COLS} FROM cop_producers WHERE producer = ?${tx.forUpdate}`, [
    producer,
  ]);
}

const kids = (r: ProducerRow | undefined): string[] | null =>
  r === undefined ? null : fromRow(r).keys.map((k) => k.kid);

export class ProducerKeys {
  readonly #engine: StoreEngine;

  constructor(engine: StoreEngine) {
    this.#engine = engine;
  }

  async get(producer: string): Promise<PinnedProducer | undefined> {
    const r = await this.#engine.read((ex) =>
      ex.get<ProducerRow>(`SELECT ${COLS} FROM cop_producers WHERE producer = ?`, [producer]),
    );
    return r === undefined ? undefined : fromRow(r);
  }

  async list(): Promise<PinnedProducer[]> {
    const rs = await this.#engine.read((ex) =>
      ex.all<ProducerRow>(`SELECT ${COLS} FROM cop_producers ORDER BY producer`),
    );
    return rs.map(fromRow);
  }

  /** Pin `pin.keys` for `pin.producer` (checked by `readProducerPin`), replacing any earlier keys. */
  async pin(
    pin: ProducerPin,
    actor: string,
    now: number,
  ): Promise<{ status: PinStatus; pinned: PinnedProducer }> {
    const digest = producerKeysDigest(pin.keys);
    const text = canonicalize(pin.keys);
    const written: PinnedProducer = {
      producer: pin.producer,
      keys: pin.keys,
      keysDigest: digest,
      pinnedAt: now,
      pinnedBy: actor,
    };
    return this.#engine.transaction(async (tx) => {
      let before = await locked(tx, pin.producer);
      if (before === undefined) {
        const { changes } = await tx.run(
          `INSERT INTO cop_producers (${COLS}) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
          [pin.producer, text, digest, now, actor],
        );
        // Another server pinned it first (its row is committed now): compare with that one.
        if (changes === 0) before = await this.#racedRow(tx, pin.producer);
      }
      if (before?.keys_digest === digest) return { status: 'unchanged' as const, pinned: fromRow(before) };
      if (before !== undefined)
        await tx.run(
          'UPDATE cop_producers SET keys = ?, keys_digest = ?, pinned_at = ?, pinned_by = ? WHERE producer = ?',
          [text, digest, now, actor, pin.producer],
        );
      await appendEvidenceRun(tx, [
        {
          subject: producerSubject(pin.producer),
          type: 'observation_producer_pinned',
          body: { keys: pin.keys.map((k) => ({ ...k })), keys_digest: digest, previous_kids: kids(before) },
          at: now,
          actor,
        },
      ]);
      return { status: before === undefined ? ('created' as const) : ('updated' as const), pinned: written };
    });
  }

  /** Remove the producer's pin: its signed records are refused from then on (records stored stay). */
  async unpin(producer: string, actor: string, now: number): Promise<UnpinStatus> {
    return this.#engine.transaction(async (tx): Promise<UnpinStatus> => {
      const before = await locked(tx, producer);
      if (before === undefined) return 'absent';
      await tx.run('DELETE FROM cop_producers WHERE producer = ?', [producer]);
      await appendEvidenceRun(tx, [
        {
          subject: producerSubject(producer),
          type: 'observation_producer_unpinned',
          body: { previous_kids: kids(before) },
          at: now,
          actor,
        },
      ]);
      return 'removed';
    });
  }

  async #racedRow(tx: Transaction, producer: string): Promise<ProducerRow> {
    const row = await locked(tx, producer);
    // Pinned and removed again between our read and our insert: the caller may simply retry.
    if (row === undefined) throw new BatonError('store_busy', 'the pin changed while it was written');
    return row;
  }
}
