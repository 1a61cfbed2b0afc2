/** Applies the ledger writes a transition decided, one statement each, inside the caller's transaction. */
import type Database from 'better-sqlite3';
import { BatonError } from '../core/errors.js';
import { canonicalize } from '../core/jcs.js';
import type { Write } from '../leases/index.js';

export class LedgerWriter {
  readonly #s: Record<string, Database.Statement>;

  constructor(db: Database.Database) {
    const p = (sql: string) => db.prepare(sql);
    this.#s = {
      cas: p(
        'UPDATE resources SET epoch = ?, state = ?, digest = ?, updated_at = ? WHERE target = ? AND epoch = ?',
      ),
      leaseInsert: p(
        'INSERT INTO leases (lease_id, target, mode, status, lease, operation, inverse_payload, accepted_at, window_ends_at, committed_epoch) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      ),
      leaseUpdate: p('UPDATE leases SET status = ?, committed_epoch = ? WHERE lease_id = ?'),
      snapshot: p('INSERT INTO snapshots (lease_id, target, epoch, state, digest) VALUES (?, ?, ?, ?, ?)'),
      shadow: p(
        'INSERT INTO shadow (lease_id, target, base_epoch, epoch, state, digest) VALUES (?, ?, ?, ?, ?, ?)',
      ),
      shadowDelete: p('DELETE FROM shadow WHERE lease_id = ?'),
      escrow: p('INSERT INTO escrow (lease_id, target, held_at, approve_by) VALUES (?, ?, ?, ?)'),
      escrowDelete: p('DELETE FROM escrow WHERE lease_id = ?'),
    };
  }

  write(w: Write): void {
    const s = this.#s;
    switch (w.kind) {
      case 'resource': {
        const r = w.record;
        const { changes } = s['cas']!.run(
          r.epoch,
          canonicalize(r.state),
          r.digest,
          r.updatedAtMs,
          r.target,
          w.priorEpoch,
        );
        // Unreachable while the transaction holds the write lock; if it ever happens, roll back.
        if (changes !== 1) throw new BatonError('conflict', 'resource epoch moved during the transaction');
        return;
      }
      case 'lease': {
        const r = w.record;
        if (!w.insert) {
          s['leaseUpdate']!.run(r.status, r.committedEpoch, r.leaseId);
          return;
        }
        s['leaseInsert']!.run(
          r.leaseId,
          r.target,
          r.mode,
          r.status,
          canonicalize(r.lease),
          canonicalize(r.operation),
          canonicalize(r.inversePayload),
          r.acceptedAtMs,
          r.windowEndsAtMs,
          r.committedEpoch,
        );
        return;
      }
      case 'snapshot':
        s['snapshot']!.run(
          w.record.leaseId,
          w.record.target,
          w.record.epoch,
          canonicalize(w.record.state),
          w.record.digest,
        );
        return;
      case 'shadow': {
        const r = w.record;
        s['shadow']!.run(r.leaseId, r.target, r.baseEpoch, r.epoch, canonicalize(r.state), r.digest);
        return;
      }
      case 'shadow_delete':
        s['shadowDelete']!.run(w.leaseId);
        return;
      case 'escrow':
        s['escrow']!.run(w.record.leaseId, w.record.target, w.record.heldAtMs, w.record.approveByMs);
        return;
      case 'escrow_delete':
        s['escrowDelete']!.run(w.leaseId);
        return;
    }
  }
}
